// How write and edit put a file's new bytes on disk without changing any other name of the file: a
// file with one link is rewritten in place, one with other links (a hard link from outside the
// workspace, say) is replaced by a new file renamed over its name. Decisions: docs/tools.md.
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <string>
#include <string_view>

#include "file_tools.hpp"
#include "mf/diag/codes.hpp"
#include "mf/io/file.hpp"

namespace mf::tools {
using io::Fd;

namespace {

// In place, as Pi's writeFile does: the file keeps its inode, owner, mode and open descriptors.
std::optional<std::string> rewrite_in_place(int fd, std::string_view content) {
  if (::ftruncate(fd, 0) != 0 || ::lseek(fd, 0, SEEK_SET) != 0) return node_error(errno, "write");
  if (Status s = io::write_all(fd, content); !s) return s.diagnostics().front().message;
  return std::nullopt;
}

// The new bytes go to a temporary file beside the name the file was opened as, with the file's
// mode (and owner and group, where the caller may set them), which is then renamed over that
// name. The inode the other links name is never opened for writing, so they keep the old bytes.
std::optional<std::string> replace_by_rename(const Workspace& ws, int fd, const struct stat& st,
                                             std::string_view content, io::SyncSet* deferred) {
  const std::optional<std::string> absolute = descriptor_path(fd);
  const std::string prefix = ws.root() == "/" ? "/" : ws.root() + "/";
  if (!absolute || absolute->rfind(prefix, 0) != 0) {
    return "Cannot replace a file with other links: its name in the workspace is unknown";
  }
  const std::string relative = absolute->substr(prefix.size());
  const auto slash = relative.rfind('/');
  const std::string parent = slash == std::string::npos ? "" : relative.substr(0, slash);
  const std::string name = slash == std::string::npos ? relative : relative.substr(slash + 1);
  Fd dir(ws.open_at(parent, O_RDONLY | O_DIRECTORY));
  if (dir.get() < 0) return node_error(-dir.get(), "open", ws.absolute(parent));
  const io::Writer fill = [&](int out) -> Status {
    if (st.st_uid != ::geteuid() || st.st_gid != ::getegid()) {
      (void)::fchown(out, st.st_uid, st.st_gid);  // only root may give a file away: best effort
    }
    if (::fchmod(out, st.st_mode & 07777) != 0) {
      return diag::error(diag::codes::kWriteFailed, node_error(errno, "fchmod"));
    }
    return io::write_all(out, content);
  };
  if (Status s =
          io::publish_atomic_at(dir.get(), name, *absolute, fill, io::Clobber::Replace, deferred);
      !s) {
    return s.diagnostics().front().message;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> descriptor_path(int fd) {
  char target[PATH_MAX];
  const std::string link = "/proc/self/fd/" + std::to_string(fd);
  const ssize_t n = ::readlink(link.c_str(), target, sizeof target);
  if (n <= 0 || static_cast<std::size_t>(n) >= sizeof target) return std::nullopt;
  return std::string(target, static_cast<std::size_t>(n));
}

std::optional<std::string> store_content(const Workspace& ws, int fd, std::string_view content,
                                         io::SyncSet* deferred) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return node_error(errno, "fstat");
  if (st.st_nlink <= 1) return rewrite_in_place(fd, content);
  return replace_by_rename(ws, fd, st, content, deferred);
}

}  // namespace mf::tools
