// Millforge's shell tools, run_tests and run_static_check: a profile the request defines
// (context.shell_profiles) run in the workspace, its exit code and the tail of its output.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "file_tools.hpp"
#include "mf/process/process.hpp"
#include "mf/text/utf8.hpp"
#include "millforge_builtins.hpp"
#include "millforge_support.hpp"

namespace mf::tools {

using namespace millforge;

namespace {

using json::Value;

constexpr std::size_t kShellTailBytes = 32u << 10;

// The argv of profile `name` from the request's context.shell_profiles, or the refusal text.
std::optional<std::string> profile_argv(const Invocation& call, const std::string& name,
                                        std::vector<std::string>& argv) {
  const Value* context = member(call.request, "context");
  const Value* profiles = context != nullptr ? member(*context, "shell_profiles") : nullptr;
  if (profiles == nullptr || !profiles->is_object() || profiles->as_object().empty()) {
    return std::string("The request defines no shell profiles (context.shell_profiles)");
  }
  const Value* profile = profiles->find(name);
  if (profile == nullptr) {
    std::vector<std::string> names;
    for (const auto& m : profiles->as_object()) names.push_back(m.key);
    return "Unknown profile \"" + name + "\"; the request defines: " + join(names);
  }
  const Value* args = member(*profile, "argv");
  const bool only_argv = profile->is_object() && profile->as_object().size() == 1;
  if (args == nullptr || !only_argv || !args->is_array() || args->as_array().empty()) {
    return "Profile \"" + name + "\" must be an object {\"argv\": [program, args...]}";
  }
  for (const Value& a : args->as_array()) {
    if (!a.is_string() || a.as_string().find('\0') != std::string::npos) {
      return "Profile \"" + name + "\": every argv entry must be a string";
    }
    argv.push_back(a.as_string());
  }
  if (argv.front().empty()) return "Profile \"" + name + "\" names no program";
  return std::nullopt;
}

// What runs the profile for both shell tools; `what` names the kind in texts.
ToolResult run_profile(const Invocation& call, std::string_view what) {
  const CallContext& ctx = call.ctx;
  const std::string& name = call.args.find("profile")->as_string();
  json::Object none{
      {"profile", name}, {"exit_code", nullptr}, {"output", ""}, {"truncated", false}};
  auto refuse = [&](std::string message) {
    return failure(std::move(message), true, "soft_failure", none);
  };
  if (!ctx.workspace) return refuse("No workspace is configured for this run");
  if (ctx.sandbox) {
    return refuse("Shell profiles do not run inside the bwrap sandbox; run " + std::string(what) +
                  " profiles without --sandbox");
  }
  std::vector<std::string> argv;
  if (auto refused = profile_argv(call, name, argv)) return refuse(*refused);
  if (ctx.cancelled()) return refuse(std::string(kAborted));

  process::ShellCommand command;
  command.argv = argv;
  command.cwd = ctx.workspace->root();
  command.deadline = ctx.deadline;
  command.cancel = ctx.cancel;
  std::string tail;  // the last bytes only: a chatty test run must not fill memory
  std::size_t total = 0;
  command.on_output = [&](std::string_view chunk) {
    total += chunk.size();
    tail.append(chunk);
    if (tail.size() > 4 * kShellTailBytes) tail.erase(0, tail.size() - 2 * kShellTailBytes);
  };
  auto outcome = process::run_shell(command);
  if (!outcome) {
    return failure("Profile " + name + " could not start: " + outcome.diagnostics().front().message,
                   true, "hard_failure", none);
  }
  Truncation t = truncate_tail(text::decode_utf8_lossy(tail), kMaxLines, kShellTailBytes);
  const bool truncated = t.truncated || total > tail.size();
  std::string output = std::move(t.content);
  const Value exit_code =
      outcome->exit_code ? Value(static_cast<std::int64_t>(*outcome->exit_code)) : Value();
  json::Object more{
      {"profile", name}, {"exit_code", exit_code}, {"output", output}, {"truncated", truncated}};
  const std::string shown = output.empty() ? std::string("(no output)") : output;
  const std::string note = truncated ? " (showing the last " + std::to_string(output.size()) +
                                           " of " + std::to_string(total) + " bytes of output)"
                                     : std::string();
  if (outcome->cancelled || outcome->timed_out) {
    std::string summary = "Profile " + name + (outcome->cancelled ? " aborted" : " timed out") +
                          " and was killed" + note;
    ToolResult r = failure(summary, false, "hard_failure", std::move(more));
    r.text = shown + "\n\n" + summary;
    return r;
  }
  if (!outcome->exit_code || *outcome->exit_code != 0) {
    std::string summary = "Profile " + name + " failed: " +
                          (outcome->exit_code ? "exit code " + std::to_string(*outcome->exit_code)
                                              : std::string("ended by a signal")) +
                          note;
    ToolResult r = failure(summary, false, "soft_failure", std::move(more));
    r.text = shown + "\n\n" + summary;
    return r;
  }
  std::string summary = "Profile " + name + " passed (exit code 0)" + note;
  return success(shown + "\n\n" + summary, summary, std::move(more));
}

}  // namespace

ToolResult run_test_profile(const Invocation& call) {
  return run_profile(call, "test");
}

ToolResult run_static_check_profile(const Invocation& call) {
  return run_profile(call, "static-check");
}

}  // namespace mf::tools
