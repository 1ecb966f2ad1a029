// The sim model (docs/formats/sim.md): a seeded fault-injecting model over a correct scripted
// trajectory. On each call it either answers the trajectory's current step or, with the
// configured probability, makes one of the mistakes small models make instead. It advances to the
// next step only when the history shows the current step's calls succeeded, so a guardrail that
// corrects a fault lets the run go on, and one that is switched off lets it fail. Same trajectory,
// seed and requests: the same replies, byte for byte.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mf/model/scripted.hpp"

namespace mf::model {

enum class Fault : std::uint8_t {
  TextInsteadOfCall,    // the step's call written as text (rescuable)
  WrongArgumentNames,   // an argument renamed
  MalformedJson,        // arguments cut short
  UnknownTool,          // a tool name the harness does not have
  PrematureTerminal,    // the trajectory's terminal call, too early
  SkippedPrerequisite,  // the next step's calls instead of this one's
  RepeatedCall,         // the previous step's calls again
};
std::string_view name(Fault f);  // text_instead_of_call, wrong_argument_names, ...

struct SimOptions {
  std::uint64_t seed = 0;
  double faults = 0.0;       // probability that a call answers with a fault, 0..1
  std::vector<Fault> kinds;  // the faults to draw from; empty = all
};

inline constexpr std::string_view kSimExhausted = "sim model has no response remaining";

class SimModel final : public Model {
 public:
  SimModel(std::deque<ScriptedStep> trajectory, SimOptions options);
  Reply infer(const Request& request, const std::atomic<bool>& cancel) override;
  std::string name() const override { return "sim"; }

  // The step the last reply was for, which the next call offers again unless its request shows it
  // carried out; the trajectory's size once exhausted.
  std::size_t cursor() const { return cursor_; }
  // The fault the last reply made, or nothing when it answered as scripted (or failed).
  std::optional<Fault> last_fault() const { return last_fault_; }

 private:
  std::deque<ScriptedStep> trajectory_;
  SimOptions options_;
  std::uint64_t state_;  // splitmix64: the generator is specified, so any build replays a seed
  std::uint64_t calls_ = 0;
  std::size_t cursor_ = 0;
  bool last_was_step_ = false;  // the last reply was the current step (or its rescuable text)
  std::optional<Fault> last_fault_;
};

// "FILE?seed=S&faults=R[&kinds=a,b]" (the part after "sim:"); sample N (a repeat index) draws as
// seed S+N, so the repeats of a campaign are distinct samples and each is reproducible.
Result<std::unique_ptr<Model>> open_sim(const std::string& spec, std::int64_t sample = 0);

}  // namespace mf::model
