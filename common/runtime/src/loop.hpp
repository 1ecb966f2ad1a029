// The one run loop, shared by task mode (run_loop.cpp) and harness mode (guarded.cpp): it records
// the start, enforces cancellation, the deadline and the call budget before every model call, calls
// the model, records what came back, and hands the reply to the mode's Turns, which decide what the
// reply means (a verified answer, a repair, tool calls, a correction) until one ends the run.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mf/runtime/run_loop.hpp"

namespace mf::runtime::detail {

struct Ending {
  std::string terminal;               // a terminal state (trace::is_terminal_state)
  std::vector<Violation> violations;  // run_failed: what made the output invalid
  std::string error;                  // run_failed: the reason, when there is one
};

class Turns {
 public:
  virtual ~Turns() = default;
  // The mode's members of run_started (mode, identity, budget).
  virtual json::Value started() const = 0;
  // The budget that forbids another call after `calls_made` calls, as (name, limit), or nothing.
  virtual std::optional<std::pair<std::string, std::int64_t>> spent(
      std::int64_t calls_made) const = 0;
  // What comes before model call `call` (a compaction, a projection), recorded as its events; an
  // Ending ends the run without the call.
  virtual Result<std::optional<Ending>> prepare(std::int64_t /*call*/) {
    return std::optional<Ending>();
  }
  // The request of model call `call`; `requested` receives model_requested's members beyond call.
  virtual Result<model::Request> request(std::int64_t call, json::Value& requested) = 0;
  // What a recorded reply means; emits the mode's events. An Ending ends the run.
  virtual Result<std::optional<Ending>> decide(std::int64_t call, model::Reply& reply) = 0;
};

// Gives every call without an id "call-<model call>-<index>" (1-based), so each call the trace
// records, native or rescued, has one; and marks a call without a name that no decoder marked as
// malformed, so none is recorded or run; and reads arguments that are empty or only whitespace as
// {} (model::no_arguments), before the reply is recorded.
void name_calls(std::int64_t call, std::vector<model::ToolCallRequest>& calls);

// Runs `turns` to a terminal state; `outcome` is the loop's record, which the turns may also fill
// (repairs, tool calls, output). Fails only when the trace cannot be written.
Result<RunOutcome> run_loop(Turns& turns, RunOutcome& outcome, model::Model& model,
                            trace::Writer& trace, const RunOptions& options);

}  // namespace mf::runtime::detail
