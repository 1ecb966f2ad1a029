// What Pi's file tools (read, write, edit, ls, grep, find) share: Node's error texts and the
// messages and limits of their refusals (node_errors.cpp), and the per-file lock of the writers
// (file_lock.cpp), and how writes reach the disk (file_content.cpp).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "mf/tools/pack.hpp"

namespace mf::tools {

inline constexpr std::string_view kAborted = "Operation aborted";
// grep, find and ls hand truncate_head JavaScript's Number.MAX_SAFE_INTEGER as the line limit,
// and Pi reports that number back in details.truncation.maxLines.
inline constexpr std::size_t kMaxSafeInteger = 9007199254740991ULL;

// "Path escapes the workspace: <path>", for a path that leads out of the root.
std::string escape_message(std::string_view user_path);
// A Node fs error message: "ENOENT: no such file or directory, access '/abs/path'". An empty
// `path` leaves out the quoted part.
std::string node_error(int err, std::string_view syscall, std::string_view path = {});
// Files above this are refused by read and edit, with too_large_message's text:
// "File too large to read: big.bin (67108865 bytes, the limit is 67108864)".
inline constexpr std::size_t kMaxToolFileBytes = 64u << 20;
std::string too_large_message(std::string_view verb, std::string_view path, std::string_view size);

// Pi's file mutation queue: edits and writes of one file run one at a time within the process.
// The key is the file's canonical path when it exists (so links to one file share a lock), else
// its absolute path. Defined in file_lock.cpp.
class FileLock {
 public:
  explicit FileLock(std::string key);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  struct Entry;  // one mutex and its users, private to file_lock.cpp

 private:
  std::string key_;
  Entry* entry_;
};
// The lock key for `relative` beneath the workspace (see FileLock).
std::string file_lock_key(const Workspace& ws, const std::string& relative);

// The absolute path a descriptor was opened as (links resolved), from /proc/self/fd.
std::optional<std::string> descriptor_path(int fd);

// Puts `content` in the regular file open for writing as `fd`: in place when it has one link (its
// inode, owner and mode stay); when it has others, a new file with its mode and owner is renamed
// over the name it was opened as, so no other name of it changes. Defined in file_content.cpp.
// That rename's syncs are left to `deferred` when it is set (CallContext::deferred_sync). nullopt,
// or the error text.
std::optional<std::string> store_content(const Workspace& ws, int fd, std::string_view content,
                                         io::SyncSet* deferred);

// A path that ends in "/" (or "/.") names a directory, as POSIX reads it: write refuses it with
// EISDIR, read and edit with ENOTDIR when it names a file.
inline bool names_directory(std::string_view user_path) {
  return user_path.size() > 1 &&
         (user_path.back() == '/' || user_path.substr(user_path.size() - 2) == "/.");
}

}  // namespace mf::tools
