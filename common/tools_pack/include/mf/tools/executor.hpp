// The execution boundary (SPEC §5.4): a model's tool call runs only through an exact binding of a
// compiled plan (or, for `mf-run tool`, of a catalog descriptor). Before entry: binding lookup,
// argument validation against the closed input schema, prerequisites with argument matches,
// capability grants, deadline and cancellation; after: output validation, bounding and secret
// redaction. Every attempted or denied call yields a ToolTraceRecord.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
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
  std::vector<std::string> produces;  // the node's produced_artifact_ids
  std::string terminal_result;        // the node's terminal result; empty unless terminal
  bool required = false;              // the node must succeed before any terminal is accepted
};

// The bindings of a plan that the plan loader accepted (mf::harness::load_plan).
Result<std::vector<Binding>> bindings_from_plan(const json::Value& plan);
Binding binding_from_descriptor(const ToolDescriptor& d);

struct ToolCall {
  std::string call_id;
  std::string name;  // model-facing tool name
  json::Value arguments;
};

// The boundary's decisions, each spelled in the trace by name() (docs/formats/trace.md). The
// comparison with a spelling is for tests and logs that hold the trace's words.
enum class Verdict : std::uint8_t { Allowed, Denied };
enum class ExecutionStatus : std::uint8_t {
  NotExecuted,
  Success,
  SoftFailure,
  HardFailure,
  Cancelled,
  TimedOut,
};
enum class SideEffectCertainty : std::uint8_t {
  NotAttempted,
  ConfirmedAbsent,
  ConfirmedComplete,
  CompletionUnknown,
};
std::string_view name(Verdict v);              // allowed | denied
std::string_view name(ExecutionStatus s);      // not_executed | success | soft_failure | ...
std::string_view name(SideEffectCertainty c);  // not_attempted | confirmed_absent | ...
inline bool operator==(Verdict v, std::string_view spelled) {
  return name(v) == spelled;
}
inline bool operator==(ExecutionStatus s, std::string_view spelled) {
  return name(s) == spelled;
}
inline bool operator==(SideEffectCertainty c, std::string_view spelled) {
  return name(c) == spelled;
}

struct Decision {
  std::string key;  // node id, capability, or "tool:<name>"
  Verdict decision = Verdict::Denied;
};

struct ToolTraceRecord {
  std::string call_id;
  std::string model_tool_name;
  std::string node_id;
  const Binding* binding = nullptr;  // null when the name resolved to nothing
  std::string input_sha256;
  std::vector<Decision> prerequisite_decisions;
  std::vector<Decision> capability_decisions;
  ExecutionStatus execution_status = ExecutionStatus::NotExecuted;
  bool retryable = false;
  SideEffectCertainty side_effect_certainty = SideEffectCertainty::NotAttempted;
  std::string output_sha256;  // of the result as returned (after bounding and redaction)
  std::int64_t duration_ms = 0;
  std::string summary;
  bool denied = false;  // refused before entry (tool_denied)
  // A connector tool's evidence (docs/connectors.md); null for every other tool.
  json::Value connector;
};
json::Value to_json(const ToolTraceRecord& r);

struct Execution {
  ToolResult result;
  ToolTraceRecord record;
};

// Where calls of connector tools (descriptors with a `connector`) go: the run's open MCP
// sessions (mf::mcp::Broker). A call reaches it only after every check of the boundary.
class Connectors {
 public:
  virtual ~Connectors() = default;
  // Runs one call; `evidence` receives what the trace records of it.
  virtual ToolResult call(const ToolDescriptor& tool, const json::Value& args,
                          const CallContext& ctx, json::Value& evidence) = 0;
};

struct ExecutorOptions {
  std::vector<std::string> granted_capabilities;
  std::string artifact_dir;  // where read_artifact/write_artifact keep artifacts; empty = none
  json::Value request;       // the run's request (instruction, context) for the request.* tools
  bool fixed_clock = false;  // durations recorded as 0 (deterministic traces)
  std::shared_ptr<Connectors> connectors;  // null: connector tools are refused
};

class ToolExecutor {
 public:
  ToolExecutor(std::vector<Binding> bindings, CallContext context, ExecutorOptions options);

  // Runs one call through the boundary. Never throws; refusals are error results with a record.
  Execution call(const ToolCall& call);

  const std::vector<Binding>& bindings() const { return bindings_; }

  // Against this executor's history of successful calls: whether some earlier success of the
  // rule's node has arguments matching `args` as the rule says, and whether a node succeeded.
  bool prerequisite_met(const PrerequisiteRule& rule, const json::Value& args) const;
  bool succeeded(const std::string& node_id) const { return successes_.count(node_id) != 0; }

 private:
  const Binding* find_binding(const std::string& model_tool_name) const;
  // The refusal message when a prerequisite of `b` is not met by an earlier success; records the
  // decisions either way.
  std::optional<std::string> check_prerequisites(const Binding& b, const json::Value& args,
                                                 ToolTraceRecord& rec) const;
  // The refusal message when a capability `b` needs is not granted; records the decisions.
  std::optional<std::string> check_capabilities(const Binding& b, const std::string& name,
                                                ToolTraceRecord& rec) const;
  // Statuses after the tool ran; a success joins the history prerequisites are checked against.
  void settle(const Binding& b, const ToolCall& call, const json::Value& args,
              const CallContext& ctx, const ToolResult& result, ToolTraceRecord& rec);

  std::vector<Binding> bindings_;
  CallContext context_;
  ExecutorOptions options_;
  // Successful calls so far, per node id, with their arguments (for argument-matched
  // prerequisites).
  std::map<std::string, std::vector<json::Value>> successes_;
};

}  // namespace mf::tools
