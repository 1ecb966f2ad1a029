// The trace's event vocabulary (docs/formats/trace.md): the event types, the terminal
// states, and the payload rules shared by the writer (which refuses to write an ill-formed event)
// and the verifier (which reports one), so the two can never disagree.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "mf/json/value.hpp"

namespace mf::trace {

// Extend only by documenting in docs/formats/trace.md.
inline constexpr std::array<std::string_view, 14> kEventTypes = {
    "run_started",         "model_requested",     "model_responded",     "model_failed",
    "verification_failed", "guardrail_violation", "projection_compiled", "tool_called",
    "tool_completed",      "tool_denied",         "context_compacted",   "budget_exhausted",
    "run_completed",       "run_failed"};

bool is_known_event(std::string_view event);
bool is_terminal_event(std::string_view event);  // run_completed, run_failed

// completed, invalid_output, model_failed, budget_exhausted, cancelled.
bool is_terminal_state(std::string_view state);

// Checks the payload members of one event (the whole event object, envelope included); returns a
// message naming the offending member, or nothing when the event is well-formed. Only rules the
// run loop guarantees are checked; unknown extra members are allowed.
std::optional<std::string> check_payload(std::string_view event, const json::Value& object);

}  // namespace mf::trace
