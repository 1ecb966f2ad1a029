// The per-turn projector of projector.hpp: the plan's projection member read once, then each turn's
// prompt compiled from the executor's state and the turn's facts.
#include "projector.hpp"

#include <algorithm>

namespace mf::runtime::detail {

Result<std::unique_ptr<Projector>> Projector::from_plan(const json::Value& plan,
                                                        const PlanRunOptions& options) {
  auto policy = harness::plan_projection(plan);
  if (!policy) return policy.take_diagnostics();
  if (!*policy) return std::unique_ptr<Projector>();
  auto p = std::make_unique<Projector>();
  p->policy_ = std::move(**policy);
  if (const json::Value* i = options.request.find("instruction"); i != nullptr && i->is_string()) {
    p->text_ = i->as_string();
  }
  p->capabilities_ = options.capabilities;
  return p;
}

prompt::Input Projector::input(const tools::ToolExecutor& executor, const TurnFacts& facts) const {
  prompt::Input in;
  in.text = text_;
  in.capabilities = capabilities_;
  in.budget_tokens = policy_.budget_tokens;
  in.candidate_limit = policy_.candidate_limit;
  in.mode = policy_.mode;
  if (facts.call == 1) in.signals.push_back("first_turn");
  if (!facts.corrected.empty()) in.signals.push_back("corrected:" + facts.corrected);
  for (const auto& b : executor.bindings()) {
    const bool done = executor.succeeded(b.node_id);
    if (done) in.signals.push_back("succeeded:" + b.node_id);
    if (b.required && !done) in.signals.push_back("pending:" + b.node_id);
    const bool ready =
        std::all_of(b.prerequisites.begin(), b.prerequisites.end(),
                    [&](const auto& rule) { return executor.succeeded(rule.node_id); });
    if (ready) in.signals.push_back("ready:" + b.node_id);
  }
  for (const auto& name : facts.named) {
    const auto& bs = executor.bindings();
    auto b = std::find_if(bs.begin(), bs.end(),
                          [&](const auto& x) { return x.tool.model_tool_name == name; });
    in.selected.push_back(
        prompt::tool_unit_id(name, b != bs.end() && !b->tool.connector.is_null()));
  }
  return in;
}

Result<prompt::Projection> Projector::project(const tools::ToolExecutor& executor,
                                              const TurnFacts& facts) const {
  auto projection = prompt::project(policy_.catalog, input(executor, facts));
  if (projection) return projection;
  auto ds = projection.take_diagnostics();
  for (auto& d : ds) d.pointer = "/projection/budget_tokens";
  return ds;
}

}  // namespace mf::runtime::detail
