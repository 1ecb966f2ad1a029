// Millforge's workspace writers: apply_patch (every file of a unified diff checked and computed
// before any is written) and write_file (a whole file, optionally against its expected SHA-256),
// both through one planned-file writer under the lock that write and edit take.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "file_tools.hpp"
#include "mf/diag/codes.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/io/file.hpp"
#include "millforge_builtins.hpp"
#include "millforge_support.hpp"

namespace mf::tools {

using namespace millforge;

namespace {

using io::Fd;
using json::Value;

constexpr std::size_t kMaxPatchedFileBytes = 8u << 20;

enum class Change : std::uint8_t { Modify, Create, Delete };

// One file of a patch, checked and computed, waiting to be written.
struct PlannedFile {
  std::string relative;  // beneath the workspace root
  std::string parent;    // its directory ("" = the root)
  std::string name;      // its last component
  Change change = Change::Modify;
  std::string content;
  Fd dir;  // the parent directory, when it exists
  mode_t mode = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  std::size_t hunks = 0;
};

// Resolves the file a change names and opens its directory (which may be missing when
// `may_create`). When the file exists it must be a regular file, never a link (even one inside the
// workspace: a change names the file it changes); its mode and owner are kept in `p`, and with
// `read` its bytes go to `original`. `who` starts the refusals ("A patch cannot change ...");
// `if_exists`, when set, is the refusal of any existing name (a creation).
// The refusal text otherwise; nothing is written here.
std::optional<std::string> open_target(const Workspace& ws, const std::string& path,
                                       std::string_view who, bool may_create, bool read,
                                       const std::optional<std::string>& if_exists, PlannedFile& p,
                                       bool& exists, std::string& original) {
  if (names_directory(path)) return std::string(who) + " cannot change a directory: " + path;
  auto resolved = ws.resolve(path);
  if (!resolved) return resolved.diagnostics().front().message;
  if (resolved->empty()) return std::string(who) + " cannot change the workspace root: " + path;
  p.relative = *resolved;
  const auto slash = p.relative.rfind('/');
  p.parent = slash == std::string::npos ? "" : p.relative.substr(0, slash);
  p.name = slash == std::string::npos ? p.relative : p.relative.substr(slash + 1);

  const int dir = ws.open_at(p.parent, O_RDONLY | O_DIRECTORY);
  if (dir == -EXDEV) return escape_message(path);
  if (dir < 0 && !(dir == -ENOENT && may_create)) {
    return node_error(-dir, "open", ws.absolute(p.parent));
  }
  p.dir = Fd(dir < 0 ? -1 : dir);
  struct stat st {};
  exists = p.dir.valid() && ::fstatat(p.dir.get(), p.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
  if (p.dir.valid() && !exists && errno != ENOENT) {
    return node_error(errno, "stat", ws.absolute(p.relative));
  }
  if (!exists) return std::nullopt;
  if (if_exists) return if_exists;
  if (S_ISLNK(st.st_mode)) return path + " is a symbolic link; name the file it points to";
  if (!S_ISREG(st.st_mode)) return "Not a regular file: " + path;
  p.mode = st.st_mode & 07777;
  p.uid = st.st_uid;
  p.gid = st.st_gid;
  if (!read) return std::nullopt;
  if (static_cast<std::uint64_t>(st.st_size) > kMaxPatchedFileBytes) {
    return "File too large to patch: " + path + " (" + std::to_string(st.st_size) +
           " bytes, the limit is " + std::to_string(kMaxPatchedFileBytes) + ")";
  }
  Fd fd(::openat(p.dir.get(), p.name.c_str(),
                 O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (!fd.valid()) return node_error(errno, "open", ws.absolute(p.relative));
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return "Not a regular file: " + path;
  if (const int err = io::read_all(fd.get(), original, kMaxPatchedFileBytes); err != 0) {
    return node_error(-err, "read", ws.absolute(p.relative));
  }
  if (original.size() > kMaxPatchedFileBytes) return "File too large to patch: " + path;
  p.mode = st.st_mode & 07777;
  p.uid = st.st_uid;
  p.gid = st.st_gid;
  return std::nullopt;
}

// Checks one file section against the workspace and computes its new bytes; the refusal text
// otherwise. Nothing is written here.
std::optional<std::string> plan_file(const Workspace& ws, const FilePatch& fp, PlannedFile& p) {
  const std::string& path = fp.new_path.empty() ? fp.old_path : fp.new_path;
  p.change = fp.old_path.empty()   ? Change::Create
             : fp.new_path.empty() ? Change::Delete
                                   : Change::Modify;
  if (path.front() == '/') return "Absolute paths are not allowed in a patch: " + path;
  p.hunks = fp.hunks.size();
  bool exists = false;
  std::string original;
  const bool create = p.change == Change::Create;
  const auto if_exists =
      create ? std::optional<std::string>("The patch creates " + path + ", which already exists")
             : std::nullopt;
  if (auto refused =
          open_target(ws, path, "A patch", create, !create, if_exists, p, exists, original)) {
    return refused;
  }
  if (!create && !exists) return node_error(ENOENT, "open", ws.absolute(p.relative));
  PatchOutcome applied = apply_hunks(original, fp.hunks, path);
  if (!applied.error.empty()) return applied.error;
  if (p.change == Change::Delete && !applied.content.empty()) {
    return "The patch deletes " + path + " but its hunks leave " +
           std::to_string(applied.content.size()) + " bytes of it";
  }
  p.content = std::move(applied.content);
  return std::nullopt;
}

// Writes one planned file: a new file (never over one that appeared meanwhile), a replacement
// renamed over the old name with its mode, or the name removed. The error text otherwise.
std::optional<std::string> commit_file(const Workspace& ws, PlannedFile& p, io::SyncSet* deferred) {
  const std::string absolute = ws.absolute(p.relative);
  if (!p.dir.valid()) {
    const int made = ws.make_directories(p.parent);
    if (made == -EXDEV) return escape_message(p.relative);
    if (made < 0) return node_error(-made, "mkdir", ws.absolute(p.parent));
    p.dir = Fd(ws.open_at(p.parent, O_RDONLY | O_DIRECTORY));
    if (!p.dir.valid()) return node_error(-p.dir.get(), "open", ws.absolute(p.parent));
  }
  if (p.change == Change::Delete) {
    struct stat st {};
    if (::fstatat(p.dir.get(), p.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(st.st_mode)) {
      return "Not a regular file any more: " + p.relative;
    }
    if (::unlinkat(p.dir.get(), p.name.c_str(), 0) != 0)
      return node_error(errno, "unlink", absolute);
    return std::nullopt;
  }
  const io::Writer fill = [&](int out) -> Status {
    if (p.change == Change::Modify) {
      if (p.uid != ::geteuid() || p.gid != ::getegid()) {
        (void)::fchown(out, p.uid, p.gid);  // only root may give a file away: best effort
      }
      if (::fchmod(out, p.mode) != 0) {
        return diag::error(diag::codes::kWriteFailed, node_error(errno, "fchmod", absolute));
      }
    }
    return io::write_all(out, p.content);
  };
  const auto clobber = p.change == Change::Create ? io::Clobber::Refuse : io::Clobber::Replace;
  if (Status s = io::publish_atomic_at(p.dir.get(), p.name, absolute, fill, clobber, deferred);
      !s) {
    return s.diagnostics().front().message;
  }
  return std::nullopt;
}

}  // namespace

// --- workspace.apply_patch ----------------------------------------------------------------------

ToolResult run_workspace_apply_patch(const Invocation& call) {
  const CallContext& ctx = call.ctx;
  if (!ctx.workspace) return failure("No workspace is configured for this run");
  if (ctx.cancelled()) return failure(std::string(kAborted));
  const Workspace& ws = *ctx.workspace;
  ParsedPatch parsed = parse_patch(call.args.find("patch")->as_string());
  if (!parsed.error.empty()) return failure(parsed.error);

  // One writer per file, as write and edit; taken in one order so two patches cannot deadlock.
  std::vector<std::string> keys;
  for (const auto& fp : parsed.files) {
    const std::string& path = fp.new_path.empty() ? fp.old_path : fp.new_path;
    auto resolved = ws.resolve(path);
    if (resolved && !resolved->empty()) keys.push_back(file_lock_key(ws, *resolved));
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  std::vector<std::unique_ptr<FileLock>> locks;
  for (auto& k : keys) locks.push_back(std::make_unique<FileLock>(k));

  // Every file is checked and computed before any is written: a hunk that does not apply, or a
  // path that is refused, leaves the workspace as it was.
  std::vector<PlannedFile> planned(parsed.files.size());
  std::size_t hunks = 0;
  for (std::size_t i = 0; i < parsed.files.size(); ++i) {
    if (auto refused = plan_file(ws, parsed.files[i], planned[i])) return failure(*refused);
    for (std::size_t j = 0; j < i; ++j) {
      if (planned[j].relative == planned[i].relative) {
        return failure("The patch changes " + planned[i].relative + " twice");
      }
    }
    hunks += planned[i].hunks;
  }
  if (ctx.cancelled()) return failure(std::string(kAborted));

  json::Array changed;
  std::vector<std::string> done;
  std::string listing;
  for (auto& p : planned) {
    if (auto error = commit_file(ws, p, ctx.deferred_sync)) {
      std::string message = "Could not write " + p.relative + ": " + *error;
      if (!done.empty()) message += " (already written: " + join(done) + ")";
      return failure(message, done.empty());
    }
    done.push_back(p.relative);
    changed.emplace_back(p.relative);
    const char* tag = p.change == Change::Create ? "A " : p.change == Change::Delete ? "D " : "M ";
    listing += "\n" + std::string(tag) + p.relative;
  }
  std::string summary = "Applied " + std::to_string(hunks) + " hunk" + (hunks == 1 ? "" : "s") +
                        " to " + std::to_string(planned.size()) + " file" +
                        (planned.size() == 1 ? "" : "s");
  return success(summary + listing, summary,
                 {{"changed_paths", std::move(changed)}, {"hunks", std::uint64_t(hunks)}});
}

// --- workspace.write_file -----------------------------------------------------------------------

namespace {

// The SHA-256 of the regular file `name` in `dir`, read without following a link; nullopt when it
// cannot be read.
std::optional<std::string> file_sha256(int dir, const std::string& name) {
  const Fd fd(
      ::openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (!fd.valid()) return std::nullopt;
  hash::Sha256 h;
  const int err = io::read_chunks(fd.get(), std::size_t{1} << 16, [&](std::string_view chunk) {
    h.update(chunk);
    return true;
  });
  if (err != 0) return std::nullopt;
  return hash::to_hex(h.finish());
}

}  // namespace

// The whole file through the patch applier's writer: checked first (escapes, links, non-files, a
// changed expected_sha256), then written atomically with the old file's mode, under the lock that
// write, edit and apply_patch take.
ToolResult run_workspace_write_file(const Invocation& call) {
  const CallContext& ctx = call.ctx;
  if (!ctx.workspace) return failure("No workspace is configured for this run");
  if (ctx.cancelled()) return failure(std::string(kAborted));
  const Workspace& ws = *ctx.workspace;
  const std::string& path = call.args.find("path")->as_string();
  const std::string& content = call.args.find("content")->as_string();
  const Value* expected = call.args.find("expected_sha256");

  std::unique_ptr<FileLock> lock;
  if (auto resolved = ws.resolve(path); resolved && !resolved->empty()) {
    lock = std::make_unique<FileLock>(file_lock_key(ws, *resolved));
  }
  PlannedFile p;
  bool exists = false;
  std::string unused;
  if (auto refused = open_target(ws, path, "write_workspace_file", true, false, std::nullopt, p,
                                 exists, unused)) {
    return failure(*refused);
  }
  p.change = exists ? Change::Modify : Change::Create;
  // As Millforge: the expectation is about the file that is there; a new file has none.
  if (expected != nullptr && exists) {
    const auto actual = file_sha256(p.dir.get(), p.name);
    if (!actual) return failure("Could not read " + p.relative + " to check its expected_sha256");
    if (*actual != expected->as_string()) {
      return failure("The file " + p.relative + " has changed: its SHA-256 is " + *actual +
                     ", not the expected " + expected->as_string() + "; nothing was written");
    }
  }
  p.content = content;
  if (ctx.cancelled()) return failure(std::string(kAborted));
  if (auto error = commit_file(ws, p, ctx.deferred_sync)) {
    return failure("Could not write " + p.relative + ": " + *error);
  }
  std::string summary = (exists ? "Replaced " : "Created ") + p.relative + " (" +
                        plural(content.size(), "byte", "bytes") + ")";
  return success(summary, summary,
                 {{"path", p.relative}, {"content_sha256", hash::sha256_hex(content)}});
}

}  // namespace mf::tools
