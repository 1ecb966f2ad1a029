// Pi's write tool over a confined workspace: the file is reached through Workspace::open_at, so
// the kernel keeps the call beneath the root; one writer per file (FileLock, shared with edit);
// the bytes reach the disk through store_content, which never changes another name of the file.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "args.hpp"
#include "file_tools.hpp"
#include "mf/io/file.hpp"
#include "mf/tools/pack.hpp"

namespace mf::tools {
using io::Fd;

ToolResult run_write(const json::Value& args, const CallContext& ctx) {
  if (ctx.cancelled()) return ToolResult::refusal(std::string(kAborted));
  const std::string* path = string_arg(args, "path");
  const std::string* content = string_arg(args, "content");
  if (path == nullptr || content == nullptr || !ctx.workspace) {
    return ToolResult::refusal("write needs a string path and a string content");
  }
  auto resolved = ctx.workspace->resolve(*path);
  if (!resolved) return ToolResult::refusal(resolved.diagnostics().front().message);
  const Workspace& ws = *ctx.workspace;
  const std::string& relative = *resolved;
  const std::string absolute = ws.absolute(relative);
  // "dir/" names a directory, which a file cannot be written as (open(2) says EISDIR).
  if (relative.empty() || names_directory(*path)) {
    return ToolResult::refusal(node_error(EISDIR, "open", absolute));
  }
  FileLock lock(file_lock_key(ws, relative));  // one writer per file, shared with edit

  // Until a directory is made or a byte written, a failure leaves the workspace as it was.
  bool changed = false;
  auto failed = [&](std::string message) {
    return changed ? ToolResult::error(std::move(message))
                   : ToolResult::refusal(std::move(message));
  };
  if (const auto slash = relative.rfind('/'); slash != std::string::npos) {
    const std::string parent = relative.substr(0, slash);
    const int made = ws.make_directories(parent);
    if (made == -EXDEV) return ToolResult::refusal(escape_message(*path));
    if (made < 0) return ToolResult::error(node_error(-made, "mkdir", ws.absolute(parent)));
    changed = made > 0;
  }
  if (ctx.cancelled()) return failed(std::string(kAborted));

  // An existing file (or a link to one inside the root) is opened without O_TRUNC: store_content
  // decides how its bytes are replaced. A new one is created without following a link at its last
  // component. O_NONBLOCK keeps a FIFO with no reader from hanging the call.
  constexpr int kFlags = O_WRONLY | O_NONBLOCK | O_NOCTTY;
  int opened = ws.open_at(relative, kFlags);
  if (opened == -ENOENT) opened = ws.open_at(relative, kFlags | O_CREAT, 0666);
  Fd fd(opened);
  if (fd.get() < 0) {
    if (fd.get() == -EXDEV) return failed(escape_message(*path));
    return failed(node_error(-fd.get(), "open", absolute));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return failed("Not a regular file: " + *path);
  }
  if (auto error = store_content(ws, fd.get(), *content, ctx.deferred_sync))
    return ToolResult::error(*error);
  if (ctx.cancelled()) return ToolResult::error(std::string(kAborted));
  return {false,
          "Successfully wrote " + std::to_string(utf16_length(*content)) + " bytes to " + *path,
          {}};
}

}  // namespace mf::tools
