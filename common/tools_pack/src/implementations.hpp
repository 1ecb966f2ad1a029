// The tool implementations the execution boundary can run, in one table: each is found by the
// implementation_id of a descriptor, may fold legacy argument forms in before the input schema sees
// them (prepare_args), and runs on validated arguments (run). The executor looks tools up here and
// knows no tool by name.
#pragma once

#include <string>
#include <string_view>

#include "mf/json/value.hpp"
#include "mf/tools/catalog.hpp"
#include "mf/tools/pack.hpp"

namespace mf::tools {

// What a run gets: the validated arguments, the call's context (workspace, deadline, cancel), and
// where the run's artifacts live (empty = none configured).
struct Invocation {
  const json::Value& args;
  const CallContext& ctx;
  const std::string& artifact_dir;
};

struct Implementation {
  std::string_view id;  // implementation_id; empty for the terminal recorder (found by class)
  json::Value (*prepare_args)(const json::Value& args);  // null: the arguments as received
  ToolResult (*run)(const Invocation& call);
};

// The implementation of `tool`: the entry for its implementation_id, else, for any tool of the
// terminal class, the terminal recorder; null when there is none.
const Implementation* implementation_for(const ToolDescriptor& tool);

}  // namespace mf::tools
