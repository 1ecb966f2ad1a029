// `mf-run tool` (command.hpp): one call through the execution boundary, bound to the built-in
// catalog.
#include "mf/tools/command.hpp"

#include "mf/diag/codes.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"
#include "mf/text/suggest.hpp"
#include "mf/tools/executor.hpp"

namespace mf::tools {

Result<json::Value> run_tool_command(const ToolCommand& command) {
  namespace codes = diag::codes;
  const ToolDescriptor* tool = nullptr;
  std::vector<std::string> names;
  for (const auto& [key, d] : builtin_catalog().descriptors()) {
    if (d.model_tool_name == command.name || d.ref() == command.name) tool = &d;
    names.push_back(d.ref());
    names.push_back(d.model_tool_name);
  }
  if (tool == nullptr) {
    return diag::error(codes::kUnknownTool, "no built-in tool is named \"" + command.name + "\"" +
                                                text::did_you_mean(command.name, names));
  }
  auto workspace = Workspace::open(command.workspace);
  if (!workspace) return workspace.take_diagnostics();

  Result<std::string> text = command.args;
  if (!command.args.empty() && command.args[0] == '@')
    text = io::read_input(command.args.substr(1));
  if (!text) return text.take_diagnostics();
  auto args = json::parse_object(*text);
  if (!args) return args.take_diagnostics();

  ExecutorOptions options;
  options.granted_capabilities =
      command.capabilities ? *command.capabilities : tool->required_capabilities;
  options.artifact_dir = command.artifact_dir;
  options.fixed_clock = command.fixed_clock;
  CallContext context;
  context.workspace = std::move(*workspace);
  context.cancel = command.cancel;
  context.sandbox = command.sandbox;
  if (command.bash_log_max_bytes) context.bash_log_max_bytes = *command.bash_log_max_bytes;
  ToolExecutor executor({binding_from_descriptor(*tool)}, std::move(context), std::move(options));
  Execution e = executor.call({"call-1", tool->model_tool_name, std::move(*args)});
  json::Value out = to_json(e.result);
  out.set("trace", to_json(e.record));
  return out;
}

diag::CommandOutcome tool_command(const ToolCommand& command) {
  auto result = run_tool_command(command);
  if (!result) return diag::CommandOutcome::stopped_by(result.take_diagnostics());
  if (Status written = io::write_output("-", json::canonical_file(*result)); !written) {
    return diag::CommandOutcome::stopped_by(written.take_diagnostics());
  }
  diag::CommandOutcome done;
  done.failed = result->find("is_error")->as_bool();
  return done;
}

}  // namespace mf::tools
