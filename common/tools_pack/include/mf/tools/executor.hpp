// The execution boundary (SPEC §5.4): a model's tool call runs only through an exact binding of a
// compiled plan (or, for `mf-run tool`, of a catalog descriptor). Before entry: binding lookup,
// argument validation against the closed input schema, prerequisites with argument matches,
// capability grants, deadline and cancellation; after: output validation, bounding and secret
// redaction. Every attempted or denied call yields a ToolTraceRecord.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"
#include "mf/tools/catalog.hpp"
#include "mf/tools/pack.hpp"

namespace mf::tools {

struct PrerequisiteRule {
  std::string node_id;
  std::vector<std::pair<std::string, std::string>> matches;  // prerequisite arg -> current arg
};

// One callable tool as the boundary sees it: the descriptor's identity and policies, plus, when it
// comes from a plan, the node it is bound to and that node's prerequisites.
struct Binding {
  ToolDescriptor tool;
  std::string node_id;  // empty for a catalog binding
  std::vector<PrerequisiteRule> prerequisites;
};

// The bindings of a plan that the plan loader accepted (mf::harness::load_plan).
Result<std::vector<Binding>> bindings_from_plan(const json::Value& plan);
Binding binding_from_descriptor(const ToolDescriptor& d);

struct ToolCall {
  std::string call_id;
  std::string name;  // model-facing tool name
  json::Value arguments;
};

struct Decision {
  std::string key;       // node id, capability, or "tool:<name>"
  std::string decision;  // "allowed" | "denied"
};

struct ToolTraceRecord {
  std::string call_id;
  std::string model_tool_name;
  std::string node_id;
  const Binding* binding = nullptr;  // null when the name resolved to nothing
  std::string input_sha256;
  std::vector<Decision> prerequisite_decisions;
  std::vector<Decision> capability_decisions;
  // not_executed | success | soft_failure | hard_failure | cancelled | timed_out
  std::string execution_status = "not_executed";
  bool retryable = false;
  // not_attempted | confirmed_absent | confirmed_complete | completion_unknown
  std::string side_effect_certainty = "not_attempted";
  std::string output_sha256;  // of the result as returned (after bounding and redaction)
  std::int64_t duration_ms = 0;
  std::string summary;
  bool denied = false;  // refused before entry (tool_denied)
};
json::Value to_json(const ToolTraceRecord& r);

struct Execution {
  ToolResult result;
  ToolTraceRecord record;
};

struct ExecutorOptions {
  std::vector<std::string> granted_capabilities;
  std::string artifact_dir;  // where read_artifact/write_artifact keep artifacts; empty = none
  bool fixed_clock = false;  // durations recorded as 0 (deterministic traces)
};

class ToolExecutor {
 public:
  ToolExecutor(std::vector<Binding> bindings, CallContext context, ExecutorOptions options);

  // Runs one call through the boundary. Never throws; refusals are error results with a record.
  Execution call(const ToolCall& call);

  const std::vector<Binding>& bindings() const { return bindings_; }

 private:
  ToolResult dispatch(const Binding& b, const json::Value& args, const CallContext& ctx);

  std::vector<Binding> bindings_;
  CallContext context_;
  ExecutorOptions options_;
  // Successful calls so far, per node id, with their arguments (for argument-matched
  // prerequisites).
  std::map<std::string, std::vector<json::Value>> successes_;
};

}  // namespace mf::tools
