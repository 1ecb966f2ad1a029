#include "mf/trace/events.hpp"

#include <algorithm>

namespace mf::trace {
namespace {

constexpr std::array<std::string_view, 5> kTerminalStates = {
    "completed", "invalid_output", "model_failed", "budget_exhausted", "cancelled"};

bool is_string_member(const json::Value& object, std::string_view key) {
  const auto* v = object.find(key);
  return v != nullptr && v->is_string() && !v->as_string().empty();
}

std::optional<std::string> check_call_number(const json::Value& object) {
  const auto* call = object.find("call");
  if (call == nullptr) return "missing member \"call\"";
  auto n = call->is_number() ? call->as_exact_int() : std::nullopt;
  if (!n || *n < 1) return "\"call\" must be an integer >= 1";
  return std::nullopt;
}

std::optional<std::string> check_terminal(std::string_view event, const json::Value& object) {
  const auto* terminal = object.find("terminal");
  if (terminal == nullptr || !terminal->is_string()) {
    return "missing or non-string member \"terminal\"";
  }
  const auto& state = terminal->as_string();
  if (event == "run_completed") {
    if (state != "completed") return "run_completed needs \"terminal\":\"completed\"";
  } else if (state == "completed" || !is_terminal_state(state)) {
    return "run_failed needs \"terminal\" of invalid_output, model_failed, budget_exhausted or "
           "cancelled, not \"" +
           state + "\"";
  }
  return std::nullopt;
}

std::optional<std::string> check_violations(const json::Value& object) {
  const auto* violations = object.find("violations");
  if (violations == nullptr || !violations->is_array()) {
    return "missing or non-array member \"violations\"";
  }
  for (const auto& v : violations->as_array()) {
    if (!v.is_object() || !is_string_member(v, "code") || v.find("path") == nullptr ||
        !v.find("path")->is_string() || v.find("message") == nullptr ||
        !v.find("message")->is_string()) {
      return "each of \"violations\" must be an object with string path, code and message";
    }
  }
  return std::nullopt;
}

}  // namespace

bool is_known_event(std::string_view event) {
  return std::find(kEventTypes.begin(), kEventTypes.end(), event) != kEventTypes.end();
}

bool is_terminal_event(std::string_view event) {
  return event == "run_completed" || event == "run_failed";
}

bool is_terminal_state(std::string_view state) {
  return std::find(kTerminalStates.begin(), kTerminalStates.end(), state) != kTerminalStates.end();
}

std::optional<std::string> check_payload(std::string_view event, const json::Value& object) {
  if (event == "model_requested") {
    if (auto bad = check_call_number(object)) return bad;
    const auto* kind = object.find("kind");
    if (kind == nullptr || !kind->is_string() ||
        (kind->as_string() != "initial" && kind->as_string() != "repair")) {
      return "model_requested needs \"kind\" of \"initial\" or \"repair\"";
    }
    return std::nullopt;
  }
  if (event == "model_responded" || event == "model_failed") return check_call_number(object);
  if (is_terminal_event(event)) return check_terminal(event, object);
  if (event == "verification_failed") return check_violations(object);
  if (event == "tool_called" || event == "tool_completed") {
    if (!is_string_member(object, "call_id")) return "missing or empty string member \"call_id\"";
    return std::nullopt;
  }
  if (event == "tool_denied") {
    const auto* id = object.find("call_id");
    if (id != nullptr && !id->is_string()) return "\"call_id\" must be a string";
  }
  return std::nullopt;
}

}  // namespace mf::trace
