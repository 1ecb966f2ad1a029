// The first cause of a failed run, from its events (cause.hpp).
#include "mf/trace/cause.hpp"

#include <optional>
#include <string_view>

namespace mf::trace {
namespace {

using json::Value;

// A string member, or empty.
std::string text_of(const Value& object, std::string_view key) {
  const Value* v = object.is_object() ? object.find(key) : nullptr;
  return v != nullptr && v->is_string() ? v->as_string() : std::string();
}

// One line of at most kMaxCauseBytes: line breaks and tabs become spaces, a cut ends in "...".
std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  if (text.size() <= kMaxCauseBytes) return text;
  std::size_t cut = kMaxCauseBytes - 3;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  text.resize(cut);
  return text + "...";
}

// The first of an event's verifier violations: where and what, and how many more.
std::string violations_text(const Value& violations) {
  if (!violations.is_array() || violations.as_array().empty()) return {};
  const Value& first = violations.as_array().front();
  std::string out =
      "output refused at " + text_of(first, "path") + ": " + text_of(first, "message");
  if (const std::size_t more = violations.as_array().size() - 1; more > 0) {
    out += " (and " + std::to_string(more) + " more)";
  }
  return out;
}

// A tool's own account of a failed or refused call: its record's summary without the "error: "
// the boundary puts before an error result's first line.
std::string record_summary(const Value& event) {
  const Value* record = event.find("record");
  std::string summary = record != nullptr ? text_of(*record, "summary") : std::string();
  if (summary.rfind("error: ", 0) == 0) summary.erase(0, 7);
  return summary;
}

// What an event says went wrong, or nothing for an event that records no failure.
std::string error_in(std::string_view event, const Value& e) {
  if (event == "model_failed") return text_of(e, "error");
  if (event == "verification_failed") {
    const Value* vs = e.find("violations");
    return vs != nullptr ? violations_text(*vs) : std::string();
  }
  if (event == "guardrail_violation") {
    const std::string kind = text_of(e, "kind");
    if (kind == "rescue") return {};  // calls read from text: a repair, not a failure
    return kind + ": " + text_of(e, "message");
  }
  if (event == "tool_completed") {
    const Value* ok = e.find("ok");
    if (ok == nullptr || !ok->is_bool() || ok->as_bool()) return {};
    const Value* record = e.find("record");
    const std::string tool = record != nullptr ? text_of(*record, "model_tool_name") : "";
    const std::string why = record_summary(e);
    return "tool " + (tool.empty() ? text_of(e, "call_id") : tool) + " failed" +
           (why.empty() ? std::string() : ": " + why);
  }
  if (event == "tool_denied") {
    std::string why = record_summary(e);
    if (why.empty()) why = text_of(e, "reason");
    return "tool " + text_of(e, "tool") + " refused: " + why;
  }
  if (event == "budget_exhausted") {
    const Value* limit = e.find("limit");
    const auto n = limit != nullptr ? limit->as_exact_int() : std::nullopt;
    return "the " + text_of(e, "budget") + " budget is spent" +
           (n ? " (limit " + std::to_string(*n) + ")" : std::string());
  }
  return {};
}

// What the terminal event itself says: a failed run's error (or its last violations, or how the
// loop ended it), or the terminal a completed run chose when it is not a success.
std::string ending_in(std::string_view event, const Value& e) {
  const std::string terminal = text_of(e, "terminal");
  if (event == "run_completed") {
    const Value* output = e.find("output");
    if (output == nullptr || !output->is_object()) return {};
    const std::string disposition = text_of(*output, "disposition");
    if (disposition.empty() || disposition == "success") return {};
    std::string out = "node " + text_of(*output, "node_id") + " returned " +
                      text_of(*output, "terminal_result") + " (" + disposition + ")";
    if (const std::string summary = text_of(*output, "summary"); !summary.empty()) {
      out += ": " + summary;
    }
    return out;
  }
  if (std::string error = text_of(e, "error"); !error.empty()) return error;
  if (const Value* vs = e.find("violations")) {
    if (std::string v = violations_text(*vs); !v.empty()) return v;
  }
  if (terminal == "cancelled") return "cancelled by a signal";
  if (terminal == "timed_out") return "the deadline passed";
  if (terminal == "budget_exhausted") return "the budget is spent";
  return "the run ended " + terminal;
}

}  // namespace

void FirstCause::see(const Value& e) {
  if (cause_ || !e.is_object()) return;
  const std::string event = text_of(e, "event");
  const Value* seq = e.find("seq");
  const std::int64_t at = seq != nullptr ? seq->as_exact_int().value_or(0) : 0;
  if (event == "run_completed" || event == "run_failed") {
    const std::string terminal = text_of(e, "terminal");
    const bool from_outside = terminal == "cancelled" || terminal == "timed_out";
    std::string ending = ending_in(event, e);
    if (ending.empty()) return;  // a success: no cause
    cause_ = first_ && !from_outside ? *first_ : Cause{at, one_line(std::move(ending))};
    return;
  }
  if (first_) return;
  if (std::string error = error_in(event, e); !error.empty()) {
    first_ = Cause{at, one_line(std::move(error))};
  }
}

}  // namespace mf::trace
