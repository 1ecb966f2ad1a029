// Millforge's read_workspace_diff: `git diff` of the workspace, run only where git cannot be made
// to run a command the workspace names (no sandbox, no filter driver in the repository's config).
#include <fcntl.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "file_tools.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/io/file.hpp"
#include "mf/process/process.hpp"
#include "mf/text/utf8.hpp"
#include "millforge_builtins.hpp"
#include "millforge_support.hpp"
#include "walk.hpp"

namespace mf::tools {

namespace millforge {

using io::Fd;

std::optional<ToolResult> workspace_diff(const Invocation& call,
                                         const std::vector<std::string>& paths,
                                         std::size_t max_bytes, std::string& diff, bool& truncated,
                                         std::size_t& total) {
  const CallContext& ctx = call.ctx;
  if (!ctx.workspace) return failure("No workspace is configured for this run");
  // git reads the repository's configuration, which can name programs to run (filter drivers);
  // the sandbox would not hold them.
  if (ctx.sandbox) {
    return failure(
        "The workspace diff is not read inside the bwrap sandbox: git would run outside it");
  }
  const Workspace& ws = *ctx.workspace;
  std::vector<std::string> pathspecs;
  for (const std::string& path : paths) {
    auto resolved = ws.resolve(path);
    if (!resolved) return failure(resolved.diagnostics().front().message);
    // A link on the way out is refused; a name that is missing (a deleted file) is fine.
    if (Fd probe(ws.open_at(*resolved, O_PATH)); probe.get() == -EXDEV) {
      return failure(escape_message(path));
    }
    pathspecs.push_back(resolved->empty() ? "." : *resolved);
  }
  if (!walk::inside_git_repository(ws, "")) {
    return failure(
        "The workspace is not a git repository (its root holds no .git), so it has no "
        "diff to read");
  }
  if (ctx.cancelled()) return failure(std::string(kAborted));
  // A filter driver is a command git diff runs on work-tree files. The repository's own
  // configuration is workspace content a write tool may have written, so one named there refuses
  // the read (the user's global and system configuration are trusted; attributes files outside the
  // repository are ignored).
  process::ShellCommand probe;
  // Every repository-level file (its config, a worktree's, what they include), none of the user's.
  probe.argv = {"git", "config", "--name-only", "--get-regexp", "^filter\\."};
  probe.env = {{"GIT_CONFIG_NOSYSTEM", "1"}, {"GIT_CONFIG_GLOBAL", "/dev/null"}};
  probe.cwd = ws.root();
  probe.deadline = ctx.deadline;
  probe.cancel = ctx.cancel;
  std::string filters;
  probe.on_output = [&](std::string_view chunk) {
    if (filters.size() < 4096) filters.append(chunk.substr(0, 4096 - filters.size()));
  };
  auto probed = process::run_shell(probe);
  if (!probed || probed->cancelled || probed->timed_out || !probed->exit_code ||
      (*probed->exit_code != 0 && *probed->exit_code != 1)) {  // 1: no such key
    return failure("git could not read the repository's configuration", true, "hard_failure");
  }
  if (!filters.empty()) {
    return failure(
        "The repository's configuration names a filter driver (" +
        as_text(filters.substr(0, filters.find('\n'))) +
        "), a command git diff would run on the work tree; the workspace diff is not read");
  }

  process::ShellCommand command;
  command.argv = {"git",
                  "-c",
                  "core.fsmonitor=false",
                  "-c",
                  "core.attributesFile=/dev/null",
                  "-c",
                  "core.safecrlf=false",
                  "--no-pager",
                  "--literal-pathspecs",
                  "diff",
                  "--no-color",
                  "--no-ext-diff",
                  "--no-textconv",
                  "--"};
  command.argv.insert(command.argv.end(), pathspecs.begin(), pathspecs.end());
  command.cwd = ws.root();
  command.env = {{"GIT_OPTIONAL_LOCKS", "0"}};  // a read: git must not refresh the index
  command.deadline = ctx.deadline;
  command.cancel = ctx.cancel;
  std::string captured;
  total = 0;
  command.on_output = [&](std::string_view chunk) {
    total += chunk.size();
    if (captured.size() <= max_bytes) {
      captured.append(chunk.substr(0, max_bytes + 1 - captured.size()));
    }
  };
  auto outcome = process::run_shell(command);
  if (!outcome) {
    return failure("git could not start: " + outcome.diagnostics().front().message, true,
                   "hard_failure");
  }
  if (outcome->cancelled || outcome->timed_out) {
    return failure(outcome->cancelled ? std::string(kAborted) : "git diff timed out", true,
                   "hard_failure");
  }
  if (!outcome->exit_code || *outcome->exit_code != 0) {
    const std::string said = as_text(captured.substr(0, text::utf8_floor(captured, 2048)));
    return failure("git diff failed (" +
                   (outcome->exit_code ? "exit code " + std::to_string(*outcome->exit_code)
                                       : std::string("ended by a signal")) +
                   ")" + (said.empty() ? std::string() : ": " + said));
  }
  truncated = total > max_bytes;
  if (truncated) captured.resize(text::utf8_floor(captured, max_bytes));
  diff = as_text(std::move(captured));
  return std::nullopt;
}

}  // namespace millforge

using namespace millforge;
using json::Value;

ToolResult run_workspace_read_diff(const Invocation& call) {
  if (call.ctx.cancelled()) return failure(std::string(kAborted));
  std::vector<std::string> paths;
  if (const Value* named = call.args.find("paths"); named != nullptr) {
    for (const Value& p : named->as_array()) paths.push_back(p.as_string());
  }
  const std::size_t max_bytes = size_arg(call.args, "max_bytes", kDefaultReadBytes);
  std::string diff;
  bool truncated = false;
  std::size_t total = 0;
  if (auto failed = workspace_diff(call, paths, max_bytes, diff, truncated, total)) {
    return *failed;
  }
  std::string summary = diff.empty() ? std::string("No uncommitted changes")
                                     : "The diff has " + plural(total, "byte", "bytes");
  std::string text = diff.empty() ? summary : diff;
  if (truncated) {
    summary += ", cut at " + std::to_string(max_bytes);
    text += "\n\n[Showing the first " + std::to_string(max_bytes) + " bytes of " +
            std::to_string(total) + "; a larger max_bytes or fewer paths show more]";
  }
  std::string digest = hash::sha256_hex(diff);
  return success(
      std::move(text), std::move(summary),
      {{"diff", std::move(diff)}, {"truncated", truncated}, {"diff_sha256", std::move(digest)}});
}

}  // namespace mf::tools
