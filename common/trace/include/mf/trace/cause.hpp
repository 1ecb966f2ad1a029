// The first cause of a run that did not succeed, read from its trace events (docs/cli.md, "How a
// run ended"): what mf-run's last line on stderr names, so the cause is read without opening the
// trace. The writer feeds it every event it writes; a reader of a finished trace can feed it the
// same lines.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "mf/json/value.hpp"

namespace mf::trace {

struct Cause {
  std::int64_t seq = 0;  // the event that records it
  std::string text;      // one line, at most kMaxCauseBytes, as the trace holds it (redacted)
};

inline constexpr std::size_t kMaxCauseBytes = 400;

// Reads events in trace order and keeps the first cause: the first event that records something
// going wrong (a provider failure, an output the verifier refused, a guardrail correction other
// than a rescue, a tool that failed or was refused, a spent budget); else the terminal event
// itself (a run_failed's error, or the terminal a completed run chose). A run stopped from outside
// (cancelled, timed_out) has that as its cause, whatever came before.
class FirstCause {
 public:
  // One whole event object (envelope and payload), as written or as read back from its line.
  void see(const json::Value& event);
  // Nothing until an event gave a cause; a run that completed with a success disposition has none.
  const std::optional<Cause>& cause() const { return cause_; }

 private:
  std::optional<Cause> first_;  // the first error event
  std::optional<Cause> cause_;  // decided at the terminal event
};

}  // namespace mf::trace
