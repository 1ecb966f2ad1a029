// The pure core of the edit tool (Pi's edit-diff.ts), kept apart from the file handling so tests
// can drive it without a workspace, plus the few helpers the file tools share.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"
#include "mf/tools/pack.hpp"

namespace mf::tools {

struct Edit {
  std::string old_text;
  std::string new_text;
};

struct EditOutcome {
  std::string content;  // what goes back to disk: BOM and the file's line endings restored
  std::string diff;     // numbered display diff, 4 lines of context
  std::string patch;    // unified patch of the LF-normalized texts
  std::optional<std::size_t> first_changed_line;  // 1-based, in the new text
};

// Applies every edit to `original` (the whole file, decoded) all-or-nothing. A refusal carries
// Pi's message verbatim, naming `display_path`.
Result<EditOutcome> apply_edits(std::string_view original, const std::vector<Edit>& edits,
                                std::string_view display_path);

// Pi's prepareArguments for edit, run before schema validation: a stringified `edits` array is
// parsed, and top-level legacy oldText/newText strings become one more entry of `edits`.
json::Value prepare_edit_arguments(const json::Value& args);

// --- Pieces of the pipeline, exposed for tests ---

// NFKC, trailing whitespace trimmed per line, typographic quotes, dashes and spaces folded.
std::string normalize_for_fuzzy_match(std::string_view text);
// jsdiff's diffLines + Pi's generateDiffString (context lines around each change).
struct DisplayDiff {
  std::string diff;
  std::optional<std::size_t> first_changed_line;
};
DisplayDiff generate_diff_string(std::string_view old_text, std::string_view new_text,
                                 std::size_t context = 4);
// jsdiff's createTwoFilesPatch(path, path, old, new) with file headers only.
std::string generate_unified_patch(std::string_view path, std::string_view old_text,
                                   std::string_view new_text, std::size_t context = 4);

// --- Shared by the file tools (defined in read_write_ls.cpp) ---

// A Node fs error message: "ENOENT: no such file or directory, access '/abs/path'". An empty
// `path` leaves out the quoted part.
std::string node_error(int err, std::string_view syscall, std::string_view path = {});
// Files above this are refused by read and edit, with too_large_message's text:
// "File too large to read: big.bin (67108865 bytes, the limit is 67108864)".
inline constexpr std::size_t kMaxToolFileBytes = 64u << 20;
std::string too_large_message(std::string_view verb, std::string_view path, std::string_view size);

// Pi's file mutation queue: edits and writes of one file run one at a time within the process.
// The key is the file's canonical path when it exists (so links to one file share a lock), else
// its absolute path. Defined in edit.cpp.
class FileLock {
 public:
  explicit FileLock(std::string key);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  struct Entry;  // one mutex and its users, private to edit.cpp

 private:
  std::string key_;
  Entry* entry_;
};
// The lock key for `relative` beneath the workspace (see FileLock).
std::string file_lock_key(const Workspace& ws, const std::string& relative);

}  // namespace mf::tools
