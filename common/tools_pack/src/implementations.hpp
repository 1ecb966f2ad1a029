// The tool implementations the execution boundary can run, in one table: each is found by the
// implementation_id of a descriptor, may fold legacy argument forms in before the input schema sees
// them (prepare_args), and runs on validated arguments (run). The executor looks tools up here and
// knows no tool by name.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "mf/json/value.hpp"
#include "mf/tools/catalog.hpp"
#include "mf/tools/executor.hpp"
#include "mf/tools/pack.hpp"

namespace mf::tools {

// What a run gets: the validated arguments, the call's context (workspace, deadline, cancel),
// where the run's artifacts live (empty = none configured), the binding it runs through (its node's
// produced artifacts and terminal result) and the run's request.
struct Invocation {
  const json::Value& args;
  const CallContext& ctx;
  const std::string& artifact_dir;
  const Binding& binding;
  const json::Value& request;
};

struct Implementation {
  std::string_view id;  // implementation_id; empty for the terminal recorder (found by class)
  json::Value (*prepare_args)(const json::Value& args);  // null: the arguments as received
  ToolResult (*run)(const Invocation& call);
};

// The implementation of `tool`: the entry for its implementation_id, else, for any tool of the
// terminal class, the terminal recorder; null when there is none.
const Implementation* implementation_for(const ToolDescriptor& tool);

// Whether `s` is an artifact id: [a-z][a-z0-9_]{0,63}, the file name it is kept under.
bool valid_artifact_id(std::string_view s);

// The terminal recorder: the intent of a terminal control, with the node's terminal result (an
// argument naming another one is refused). Details {terminal_result, summary}.
ToolResult record_terminal(const Invocation& call);

// The configured terminal controls (builtin_catalog_json(legal_terminals)): the recorder, after a
// refusal of a blank summary.
ToolResult run_configured_terminal(const Invocation& call);

// Reads artifact `id` from the call's artifact directory into `content` (a link leading out of the
// directory is refused); the error result when it is invalid, missing or not a regular file.
std::optional<ToolResult> read_artifact_file(const Invocation& call, const std::string& id,
                                             std::string& content);

// Writes `content` as artifact `id` beneath the call's artifact directory (atomically, never
// through a link); the error result when the id is invalid or no directory is configured.
std::optional<ToolResult> write_artifact_file(const Invocation& call, const std::string& id,
                                              const std::string& content);

}  // namespace mf::tools
