// Per-turn prompt projection in harness mode (docs/harness-run.md, "Projection"): what a plan with
// a projection member shows the model on each turn, compiled from what the host knows alone.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "loop.hpp"
#include "mf/harness/plan.hpp"
#include "mf/prompt/projection.hpp"
#include "mf/runtime/plan_run.hpp"

namespace mf::runtime::detail {

// What the turn before this one left for the host to act on: the kind of correction it answered
// with, and the tools that correction told the model to call. Never the model's text or a tool's
// result: those are not the host's to trust.
struct TurnFacts {
  std::int64_t call = 1;
  std::string corrected;
  std::vector<std::string> named;  // model-facing tool names
};

class Projector {
 public:
  // Nothing when the plan has no projection member.
  static Result<std::unique_ptr<Projector>> from_plan(const json::Value& plan,
                                                      const PlanRunOptions& options);

  // The turn's input: the request's instruction as text; the run state as signals (first_turn,
  // succeeded:<node>, pending:<node>, ready:<node>, corrected:<kind>); the tools the last
  // correction named as host selections; the granted capabilities; the plan's budget and mode.
  prompt::Input input(const tools::ToolExecutor& executor, const TurnFacts& facts) const;

  // MF-P005 (pointing at /projection/budget_tokens) when a selected mandatory unit cannot fit.
  Result<prompt::Projection> project(const tools::ToolExecutor& executor,
                                     const TurnFacts& facts) const;

  const harness::PlanProjection& policy() const { return policy_; }

 private:
  harness::PlanProjection policy_;
  std::string text_;
  std::vector<std::string> capabilities_;
};

// run_plan with the projector the caller already built and checked (nullptr: no projection).
Result<RunOutcome> run_guarded(const json::Value& plan, tools::ToolExecutor& executor,
                               model::Model& model, trace::Writer& trace, const RunOptions& options,
                               const PlanRunOptions& plan_options,
                               std::unique_ptr<Projector> projector);

}  // namespace mf::runtime::detail
