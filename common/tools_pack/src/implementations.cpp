// The table of tool implementations (implementations.hpp): each entry's id, argument preparation
// and run, so the executor knows no tool by name.
#include "implementations.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <optional>
#include <utility>

#include "edit_core.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "millforge_builtins.hpp"

namespace mf::tools {
namespace {

using json::Value;

// The pack's tools take their arguments and the call's context only.
template <ToolResult (*Run)(const Value&, const CallContext&)>
ToolResult pack_tool(const Invocation& call) {
  return Run(call.args, call.ctx);
}

// The artifact's path, or the error result that refuses the call.
std::pair<std::string, std::optional<ToolResult>> artifact_path(const Invocation& call,
                                                                const std::string& id) {
  if (call.artifact_dir.empty()) {
    return {{}, ToolResult::refusal("No artifact directory is configured for this run")};
  }
  if (!valid_artifact_id(id)) {
    return {{},
            ToolResult::refusal("Invalid artifact id \"" + id +
                                "\": use lowercase letters, digits and _")};
  }
  return {call.artifact_dir + "/" + id, std::nullopt};
}

ToolResult read_artifact(const Invocation& call) {
  const std::string& id = call.args.find("artifact_id")->as_string();
  std::string text;
  if (auto failed = read_artifact_file(call, id, text)) return std::move(*failed);
  return ToolResult{false, std::move(text), {}};
}

ToolResult write_artifact(const Invocation& call) {
  const std::string& id = call.args.find("artifact_id")->as_string();
  const std::string& content = call.args.find("content")->as_string();
  if (auto failed = write_artifact_file(call, id, content)) return std::move(*failed);
  return ToolResult{
      false, "Wrote artifact " + id + " (" + std::to_string(content.size()) + " bytes)", {}};
}

// Records the call's arguments, as canonical JSON, as every artifact its node produces: a tool
// whose work is the structured record it is given (a report, a verdict, a draft).
ToolResult produce_artifacts(const Invocation& call) {
  if (call.binding.produces.empty()) {
    return ToolResult::refusal("Tool " + call.binding.tool.model_tool_name +
                               " produces no artifact in this plan");
  }
  const std::string content = json::canonical_file(call.args);
  std::string ids;
  for (const auto& id : call.binding.produces) {
    if (auto failed = write_artifact_file(call, id, content)) return std::move(*failed);
    ids += (ids.empty() ? "" : ", ") + id;
  }
  std::string summary = "Wrote artifact " + ids + " (" + std::to_string(content.size()) + " bytes)";
  return ToolResult{false, summary, json::Object{{"status", "success"}, {"summary", summary}}};
}

constexpr std::array kImplementations = {
    Implementation{"impl.builtin.pi_compat.read.v1", nullptr, pack_tool<run_read>},
    Implementation{"impl.builtin.pi_compat.write.v1", nullptr, pack_tool<run_write>},
    // Pi's prepareArguments for edit: a stringified `edits` and top-level oldText/newText.
    Implementation{"impl.builtin.pi_compat.edit.v1", prepare_edit_arguments, pack_tool<run_edit>},
    Implementation{"impl.builtin.pi_compat.ls.v1", nullptr, pack_tool<run_ls>},
    Implementation{"impl.builtin.pi_compat.grep.v1", nullptr, pack_tool<run_grep>},
    Implementation{"impl.builtin.pi_compat.find.v1", nullptr, pack_tool<run_find>},
    Implementation{"impl.builtin.pi_compat.bash.v1", nullptr, pack_tool<run_bash>},
    Implementation{"impl.builtin.artifact.read.v1", nullptr, read_artifact},
    Implementation{"impl.builtin.artifact.write.v1", nullptr, write_artifact},
    Implementation{"impl.builtin.artifact.produce.v1", nullptr, produce_artifacts},
    // Millforge's builtin harness tools (millforge_*.cpp).
    Implementation{"impl.builtin.request.inspect.v1", nullptr, run_inspect_request},
    Implementation{"impl.builtin.request.read_requirements.v1", nullptr, run_read_requirements},
    Implementation{"impl.builtin.workspace.read_file.v1", nullptr, run_workspace_read_file},
    Implementation{"impl.builtin.workspace.apply_patch.v1", nullptr, run_workspace_apply_patch},
    Implementation{"impl.builtin.shell.run_tests.v1", nullptr, run_test_profile},
    Implementation{"impl.builtin.shell.run_static_check.v1", nullptr, run_static_check_profile},
    Implementation{"impl.builtin.artifact.write_plan.v1", nullptr, run_write_plan},
    Implementation{"impl.builtin.artifact.write_patch_summary.v1", nullptr,
                   run_write_patch_summary},
    Implementation{"impl.builtin.artifact.write_test_results.v1", nullptr, run_write_test_results},
    Implementation{"impl.builtin.artifact.write_verdict.v1", nullptr, run_write_verdict},
    Implementation{"impl.builtin.workspace.list_files.v1", nullptr, run_workspace_list_files},
    Implementation{"impl.builtin.workspace.search_text.v1", nullptr, run_workspace_search_text},
    Implementation{"impl.builtin.workspace.write_file.v1", nullptr, run_workspace_write_file},
    Implementation{"impl.builtin.workspace.read_diff.v1", nullptr, run_workspace_read_diff},
    Implementation{"impl.builtin.artifact.read_plan.v1", nullptr, run_read_plan},
    Implementation{"impl.builtin.artifact.read_patch_summary.v1", nullptr, run_read_patch_summary},
    Implementation{"impl.builtin.artifact.read_test_results.v1", nullptr, run_read_test_results},
    Implementation{"impl.builtin.artifact.read_workspace_diff.v1", nullptr,
                   run_read_workspace_diff_artifact},
    Implementation{"impl.builtin.artifact.read_checker_verdict.v1", nullptr,
                   run_read_checker_verdict},
    Implementation{"impl.builtin.artifact.write_workspace_diff.v1", nullptr,
                   run_write_workspace_diff},
    Implementation{"impl.builtin.artifact.write_checker_verdict.v1", nullptr,
                   run_write_checker_verdict},
    Implementation{"impl.builtin.artifact.write_arbiter_verdict.v1", nullptr,
                   run_write_arbiter_verdict},
    // Terminal controls the recorder serves, with the status their output schemas ask for.
    Implementation{"impl.builtin.terminal.submit.v1", nullptr, run_submit_terminal},
    Implementation{"impl.builtin.terminal.reject.v1", nullptr, run_reject_terminal},
    Implementation{"impl.builtin.terminal.escalate.v1", nullptr, run_escalate_terminal},
    // Every terminal control of builtin_catalog_json(legal_terminals).
    Implementation{kConfiguredTerminalImplementation, nullptr, run_configured_terminal},
};
constexpr Implementation kTerminal{{}, nullptr, record_terminal};

}  // namespace

// A terminal control records the intent; the run loop decides whether to accept it. The terminal
// result is the node's; arguments that name one must name the same.
ToolResult record_terminal(const Invocation& call) {
  const Value* terminal = call.args.find("terminal_result");
  const Value* summary = call.args.find("summary");
  std::string result = call.binding.terminal_result;
  if (terminal != nullptr && terminal->is_string()) {
    if (!result.empty() && terminal->as_string() != result) {
      return ToolResult::refusal("Tool " + call.binding.tool.model_tool_name + " submits " +
                                 result + ", not " + terminal->as_string());
    }
    result = terminal->as_string();
  }
  if (result.empty()) return ToolResult::refusal("Terminal controls need a terminal_result");
  return ToolResult{
      false, "Terminal intent recorded: " + result,
      json::Object{{"terminal_result", result}, {"summary", summary ? *summary : Value("")}}};
}

// Millforge's Pi-compatible terminals refuse a summary of only whitespace, which the schema's
// minLength lets through.
ToolResult run_configured_terminal(const Invocation& call) {
  const std::string& summary = call.args.find("summary")->as_string();
  if (summary.find_first_not_of(" \t\n\r\f\v") == std::string::npos) {
    return ToolResult::refusal("The terminal summary must not be blank");
  }
  return record_terminal(call);
}

bool valid_artifact_id(std::string_view s) {
  if (s.empty() || s.size() > 64 || s[0] < 'a' || s[0] > 'z') return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// Read beneath the artifact directory, held open as the workspace is: a link leading out of it is
// refused rather than followed, as write_artifact never writes through one.
std::optional<ToolResult> read_artifact_file(const Invocation& call, const std::string& id,
                                             std::string& content) {
  if (auto refused = artifact_path(call, id).second) return std::move(*refused);
  const ToolResult missing = ToolResult::error("Artifact not found: " + id);
  auto dir = Workspace::open(call.artifact_dir);
  if (!dir) return missing;
  io::Fd fd((*dir)->open_at(id, O_RDONLY | O_NONBLOCK | O_NOCTTY));
  // No such artifact (yet): the call named one that does not exist, a resolution error.
  if (fd.get() == -ENOENT) return ToolResult::not_found("Artifact not found: " + id);
  if (fd.get() == -EXDEV) {
    return ToolResult::error("Artifact " + id + " leads out of the artifact directory");
  }
  struct stat st {};
  if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0) return missing;
  if (!S_ISREG(st.st_mode)) return ToolResult::error("Artifact " + id + " is not a regular file");
  content.clear();
  if (io::read_all(fd.get(), content, kMaxToolFileBytes) != 0) return missing;
  if (content.size() > kMaxToolFileBytes)
    return ToolResult::error(too_large_message("read", id, "more than"));
  return std::nullopt;
}

std::optional<ToolResult> write_artifact_file(const Invocation& call, const std::string& id,
                                              const std::string& content) {
  auto [path, refused] = artifact_path(call, id);
  if (refused) return std::move(*refused);
  if (Status s = io::publish_atomic(path, content, io::Clobber::Replace, call.ctx.deferred_sync);
      !s) {
    return ToolResult::error("Could not write artifact " + id + ": " +
                             s.diagnostics().front().message);
  }
  return std::nullopt;
}

const Implementation* implementation_for(const ToolDescriptor& tool) {
  const auto it =
      std::find_if(kImplementations.begin(), kImplementations.end(),
                   [&](const Implementation& i) { return i.id == tool.implementation_id; });
  if (it != kImplementations.end()) return &*it;
  if (tool.side_effect_class == SideEffect::Terminal) return &kTerminal;
  return nullptr;
}

}  // namespace mf::tools
