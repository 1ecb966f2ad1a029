// Replay of a plan run without a model (docs/replay.md): strict replay re-runs the loop from the
// replies a trace recorded and requires the identical event sequence; a fork starts a new run that
// reuses the recorded replies before an event and asks another model after it. Neither touches the
// original trace.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "mf/diag/diagnostic.hpp"
#include "mf/diag/outcome.hpp"
#include "mf/json/value.hpp"

namespace mf::runtime {

struct ReplayRequest {
  std::string trace_path;  // the recorded run (FILE or "-")
  std::string plan_path;   // the plan it ran (its compiled_sha256 must match run_started)
  std::string workspace = ".";
  std::string artifact_dir;  // empty: a fresh directory when the run had one, removed afterwards
  const std::atomic<bool>* cancel = nullptr;
};

// {"status":"identical"|"diverged","events":N,"first_difference":null|{"seq","expected",
//  "actual","member"}}. Diagnostics (exit 2) when the trace is not a complete plan run with inline
// content, or was run from another plan.
Result<json::Value> strict_replay(const ReplayRequest& request);
bool identical(const json::Value& strict_summary);

struct ForkRequest {
  ReplayRequest from;
  std::int64_t fork_seq = 0;  // replies recorded before this event are reused
  std::string model_spec;     // answers every later call (scripted:FILE, sim:…)
  std::string trace_path;     // the new run's trace
  std::string run_id;         // generated when empty
  bool fixed_clock = false;
};

// The new run's result document (plan_result), with parent_run_id and fork_seq in its trace.
Result<json::Value> fork_run(const ForkRequest& request, bool* success = nullptr);

// `mf-replay --strict`: the summary on stdout as canonical JSON; failed when the replay diverged,
// with a remark naming the first differing event. Diagnostics are about the trace ("<stdin>").
diag::CommandOutcome strict_replay_command(const ReplayRequest& request);
// "replay diverges at seq 9: expected \"tool_called\", got \"model_failed\" (member \"event\")"
std::string divergence(const json::Value& strict_summary);

// `mf-replay --fork-at`: a model spec without a scheme is a scripted file; the new trace must be
// a file (the result goes to stdout). The result document on stdout; failed unless the new run
// succeeded.
diag::CommandOutcome fork_command(ForkRequest request);

}  // namespace mf::runtime
