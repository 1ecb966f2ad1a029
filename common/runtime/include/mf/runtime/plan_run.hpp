// Harness mode (docs/harness-run.md): a compiled plan run against a model through the one run loop,
// with forge's guardrails between the model and the execution boundary. Every reply is read for
// tool calls (native, or rescued from text), validated, checked against the required steps and the
// prerequisites, executed serially through the ToolExecutor, and fed back; each correction spends
// its own budget, and a terminal call is accepted only against the run's own history of successes.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mf/model/model.hpp"
#include "mf/runtime/run_loop.hpp"
#include "mf/tools/executor.hpp"

namespace mf::runtime {

// Guardrail presets for ablations: each switches off exactly one mechanism (bare: all of them).
enum class Guardrails : std::uint8_t {
  Full,
  NoRescue,    // text is never read for tool calls
  NoNudge,     // a text reply or an unknown tool ends the run (no retry message)
  NoSteps,     // no premature-terminal or prerequisite corrections (the boundary still refuses)
  NoRecovery,  // the first tool error ends the run
  NoCompact,   // the history is never compacted
  Bare,
};
std::string_view name(Guardrails g);  // full, no_rescue, ...
std::optional<Guardrails> parse_guardrails(std::string_view name);
std::vector<std::string> guardrail_names();  // every preset, in declaration order

// Where a forked run came from (recorded in run_started).
struct Parent {
  std::string run_id;
  std::int64_t fork_seq = 0;
};

struct PlanRunOptions {
  Guardrails guardrails = Guardrails::Full;
  json::Value request;       // {"instruction"?: string, "context"?: object}
  std::string artifact_dir;  // where artifacts are checked for terminal acceptance; empty = none
  std::vector<std::string> capabilities;  // granted (recorded in run_started)
  std::optional<Parent> parent;
};

// Runs a plan the loader accepted through `executor` (built from the plan's bindings). Fails only
// when the trace cannot be written; every model, guardrail or tool outcome is recorded.
Result<RunOutcome> run_plan(const json::Value& plan, tools::ToolExecutor& executor,
                            model::Model& model, trace::Writer& trace, const RunOptions& options,
                            const PlanRunOptions& plan_options);

// `mf-run --plan`: load and check every input before the trace exists, then run.
struct PlanRunRequest {
  std::string plan_path;
  json::Value plan;        // the plan the loader already accepted, instead of reading plan_path
  std::string model_spec;  // scripted:FILE | sim:FILE?seed=S&faults=R
  std::unique_ptr<model::Model> model;  // instead of model_spec (replay's recorded model)
  // Live models: the reply cache, kept in the store at store_dir (empty: MF_STORE, else the
  // default store), and the sample index it keys on (docs/live-backends.md).
  model::CacheMode cache = model::CacheMode::Off;
  std::int64_t repeat = 0;
  std::string store_dir;
  std::string trace_path;
  std::string* trace_sink = nullptr;  // instead of trace_path: the lines, in memory
  std::string run_id;                 // generated when empty
  bool fixed_clock = false;
  trace::Durability durability = trace::Durability::Event;
  TraceContent trace_content = TraceContent::Digest;
  // With TraceContent::Store: keeps each raw response (RunOptions::keep_content).
  std::function<Status(std::int64_t call, std::string_view content)> keep_content;
  std::string workspace = ".";
  std::string artifact_dir;
  std::string request;  // FILE, or inline JSON when it starts with '{'; empty = no request
  Guardrails guardrails = Guardrails::Full;
  std::optional<std::vector<std::string>> capabilities;  // default: the plan's
  bool sandbox = false;
  std::int64_t deadline_ms = 0;  // 0 = none
  std::string mac_key;
  std::optional<Parent> parent;
  const std::atomic<bool>* cancel = nullptr;
  // Refuse, before anything starts, a plan whose granted tools use the artifact directory when
  // artifact_dir is empty (mf-run); a replay repeats the run as it was recorded instead.
  bool check_artifacts = true;
};

// The run's result document (docs/harness-run.md): terminal, the accepted terminal (node, result,
// disposition, summary, artifacts with digests) or the error, and the counts.
json::Value plan_result(const RunOutcome& outcome, const std::string& run_id);

// A plan file ("-" = stdin) through the plan loader; diagnostics name the file.
Result<json::Value> load_plan_file(const std::string& path);

Result<RunOutcome> run_plan_request(PlanRunRequest& request, std::string* run_id = nullptr);

}  // namespace mf::runtime
