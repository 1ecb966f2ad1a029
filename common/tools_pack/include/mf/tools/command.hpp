// `mf-run tool`: one call through the execution boundary against a workspace, for debugging, shell
// scripts and conformance tests. The call binds to the built-in catalog.
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/diag/outcome.hpp"
#include "mf/json/value.hpp"

namespace mf::tools {

struct ToolCommand {
  std::string name;       // model-facing name ("read") or exact "tool.id@N"
  std::string workspace;  // the directory every path is confined to
  std::string args;       // JSON text, or @FILE (@- = stdin)
  std::optional<std::vector<std::string>> capabilities;  // default: what the tool needs
  bool sandbox = false;                                  // bash under bubblewrap
  std::optional<std::size_t> bash_log_max_bytes;         // default: kDefaultBashLogMaxBytes
  std::string artifact_dir;
  bool fixed_clock = false;
  const std::atomic<bool>* cancel = nullptr;
};

// {"content":[…],"details":…,"is_error":…,"trace":{ToolTraceRecord}}. Diagnostics (exit 2) for an
// unknown tool, a missing workspace or arguments that are not a JSON object.
Result<json::Value> run_tool_command(const ToolCommand& command);

// `mf-run tool` end to end: the call's document on stdout as canonical JSON; failed when the tool
// returned an error result (a refusal included).
diag::CommandOutcome tool_command(const ToolCommand& command);

}  // namespace mf::tools
