// The trace's event vocabulary (docs/formats/trace.md): the event types, the terminal
// states, and the payload rules shared by the writer (which refuses to write an ill-formed event)
// and the verifier (which reports one), so the two can never disagree.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "mf/json/tape.hpp"

namespace mf::trace {

// Extend only by documenting in docs/formats/trace.md.
inline constexpr std::array<std::string_view, 16> kEventTypes = {
    "run_started",         "model_requested",     "model_responded", "model_failed",
    "verification_failed", "guardrail_violation", "nudge_sent",      "projection_compiled",
    "tool_called",         "tool_completed",      "tool_denied",     "tools_skipped",
    "context_compacted",   "budget_exhausted",    "run_completed",   "run_failed"};

// The event types by number, in the order of kEventTypes; Unknown for any other name.
enum class Event : std::uint8_t {
  RunStarted,
  ModelRequested,
  ModelResponded,
  ModelFailed,
  VerificationFailed,
  GuardrailViolation,
  NudgeSent,
  ProjectionCompiled,
  ToolCalled,
  ToolCompleted,
  ToolDenied,
  ToolsSkipped,
  ContextCompacted,
  BudgetExhausted,
  RunCompleted,
  RunFailed,
  Unknown,
};
static_assert(static_cast<std::size_t>(Event::Unknown) == kEventTypes.size());

// The event type of a name, found by a hash and one comparison (the verifier asks for every line).
Event event_type(std::string_view name);
inline bool is_terminal(Event e) {
  return e == Event::RunCompleted || e == Event::RunFailed;
}

// The envelope every line carries (`prev` on every line after the first), which no payload may
// reuse; and the member the writer adds to the terminal event when the trace is keyed.
inline constexpr std::array<std::string_view, 6> kEnvelope = {"v",     "run_id", "seq",
                                                              "event", "t_ms",   "prev"};
inline constexpr std::string_view kMacMember = "hmac_sha256";
// The value of kMacMember: lowercase hex HMAC-SHA256 under `key` of the terminal line's canonical
// form without it (docs/formats/trace.md, "Tamper evidence"). One definition for writer and
// verifier.
std::string terminal_mac(std::string_view key, std::string_view unsigned_line);
inline constexpr std::int64_t kFormatVersion = 2;

bool is_known_event(std::string_view event);
bool is_envelope_member(std::string_view key);
bool is_terminal_event(std::string_view event);  // run_completed, run_failed

// completed, invalid_output, model_failed, budget_exhausted, cancelled, timed_out, tool_failed,
// terminal_rejected.
bool is_terminal_state(std::string_view state);

// Every member name the format knows (the envelope, the MAC and each event's payload members) has
// a number, so that one line's members are found in one pass and read by index afterwards.
inline constexpr std::size_t kMemberCount = 82;
inline constexpr std::size_t kNoMember = kMemberCount;
std::size_t member_id(std::string_view name);  // kNoMember for a name no event has

// One event object's members by member_id.
class Members {
 public:
  // Reads the members of `object`; unknown() names the first one whose name the format does not
  // know. A value that is not an object has no members.
  void read(const json::View& object);
  json::View operator[](std::size_t id) const { return by_id_[id]; }
  // The ids of the known members, in the object's order; end_of_known() is where the first
  // unknown member stood.
  const std::uint8_t* begin() const { return order_.data(); }
  const std::uint8_t* end() const { return order_.data() + count_; }
  const std::uint8_t* end_of_known() const {
    return order_.data() + std::min(count_, before_unknown_);
  }
  std::string_view unknown() const { return unknown_; }

 private:
  std::array<json::View, kMemberCount + 1> by_id_{};
  std::array<std::uint8_t, kMemberCount> order_{};
  std::size_t count_ = 0;
  std::size_t before_unknown_ = SIZE_MAX;
  std::string_view unknown_;
};

// Checks the payload members of one event (the whole event object, envelope included) against the
// event's closed member list: every member known, of its kind, the required ones present, and the
// few enumerated values valid. Returns a message naming the offending member, or nothing. The
// object is read from its canonical line (json::Tape::read_canonical), as the verifier reads it.
std::optional<std::string> check_payload(std::string_view event, const json::View& object);
std::optional<std::string> check_payload(std::string_view event, const Members& members);
std::optional<std::string> check_payload(Event event, const Members& members);

}  // namespace mf::trace
