// Pi's write tool over a confined workspace: the file is reached through Workspace::open_at, so
// the kernel keeps the call beneath the root; one writer per file (FileLock, shared with edit).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <string_view>

#include "args.hpp"
#include "file_tools.hpp"
#include "mf/io/file.hpp"
#include "mf/tools/pack.hpp"

namespace mf::tools {
using io::Fd;

namespace {

// Retries EINTR and short writes; a FIFO without room fails (EAGAIN) rather than blocking the call.
bool write_all(int fd, std::string_view bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

ToolResult run_write(const json::Value& args, const CallContext& ctx) {
  if (ctx.cancelled()) return ToolResult::error(std::string(kAborted));
  const std::string* path = string_arg(args, "path");
  const std::string* content = string_arg(args, "content");
  if (path == nullptr || content == nullptr || !ctx.workspace) {
    return ToolResult::error("write needs a string path and a string content");
  }
  auto resolved = ctx.workspace->resolve(*path);
  if (!resolved) return ToolResult::error(resolved.diagnostics().front().message);
  const Workspace& ws = *ctx.workspace;
  const std::string& relative = *resolved;
  const std::string absolute = ws.absolute(relative);
  FileLock lock(file_lock_key(ws, relative));  // one writer per file, shared with edit

  const auto slash = relative.rfind('/');
  if (slash != std::string::npos) {
    const std::string parent = relative.substr(0, slash);
    const int made = ws.make_directories(parent);
    if (made == -EXDEV) return ToolResult::error(escape_message(*path));
    if (made < 0) return ToolResult::error(node_error(-made, "mkdir", ws.absolute(parent)));
  }
  if (ctx.cancelled()) return ToolResult::error(std::string(kAborted));

  // An existing file (or a link to one inside the root) is truncated in place, as Pi does; a new
  // one is created without following a link at its last component. O_NONBLOCK keeps a FIFO with
  // no reader from hanging the call.
  constexpr int kFlags = O_WRONLY | O_TRUNC | O_NONBLOCK | O_NOCTTY;
  int opened = relative.empty() ? -EISDIR : ws.open_at(relative, kFlags);
  if (opened == -ENOENT) opened = ws.open_at(relative, kFlags | O_CREAT, 0666);
  Fd fd(opened);
  if (fd.get() < 0) {
    if (fd.get() == -EXDEV) return ToolResult::error(escape_message(*path));
    return ToolResult::error(node_error(-fd.get(), "open", absolute));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return ToolResult::error("Not a regular file: " + *path);
  }
  if (!write_all(fd.get(), *content)) return ToolResult::error(node_error(errno, "write"));
  if (ctx.cancelled()) return ToolResult::error(std::string(kAborted));
  return {false,
          "Successfully wrote " + std::to_string(utf16_length(*content)) + " bytes to " + *path,
          {}};
}

}  // namespace mf::tools
