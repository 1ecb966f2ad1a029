// The trace's event vocabulary (events.hpp): one table of event rules that the writer and the
// verifier both consult, so they cannot disagree.
#include "mf/trace/events.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include "mf/hash/sha256.hpp"

namespace mf::trace {
namespace {

constexpr std::array<std::string_view, 8> kTerminalStates = {
    "completed", "invalid_output", "model_failed", "budget_exhausted",
    "cancelled", "timed_out",      "tool_failed",  "terminal_rejected"};

// What a member's value must be.
enum class Kind : std::uint8_t {
  Any,         // any JSON value
  Text,        // a string
  Name,        // a non-empty string
  Digest,      // 64 lowercase hex characters
  Natural,     // an integer >= 0
  Positive,    // an integer >= 1
  Flag,        // true or false
  Object,      // a JSON object
  Violations,  // [{path, code, message[, layer]}], all strings, code non-empty
  Names,       // an array of non-empty strings
  Calls,       // [{id, name, arguments[, malformed]}], all strings, id non-empty, name non-empty
               // unless `malformed` (non-empty) says why the call has none
};

struct Member {
  std::string_view name;
  Kind kind;
  bool required;
};

struct EventRule {
  std::string_view event;
  std::initializer_list<Member> members;  // every member the payload may have
};

// The closed payload of every event type (docs/formats/trace.md, "Events").
const std::array<EventRule, kEventTypes.size()> kRules = {{
    {"run_started", {{"mode", Kind::Name, true},           {"task_id", Kind::Name, false},
                     {"plan_sha256", Kind::Digest, false}, {"task_sha256", Kind::Digest, false},
                     {"harness_id", Kind::Name, false},    {"model", Kind::Name, true},
                     {"model_id", Kind::Name, false},      {"model_sha256", Kind::Digest, false},
                     {"endpoint", Kind::Name, false},      {"model_options", Kind::Object, false},
                     {"budget", Kind::Object, true},       {"guardrails", Kind::Name, false},
                     {"capabilities", Kind::Names, false}, {"request", Kind::Object, false},
                     {"artifacts", Kind::Flag, false},     {"parent_run_id", Kind::Name, false},
                     {"fork_seq", Kind::Natural, false},   {"projection", Kind::Object, false},
                     {"durability", Kind::Name, true},     {"trace_content", Kind::Name, true}}},
    {"model_requested",
     {{"call", Kind::Positive, true},
      {"kind", Kind::Name, true},
      {"violations", Kind::Violations, false},
      {"tools", Kind::Names, false},
      {"context_warning", Kind::Object, false}}},
    {"model_responded",
     {{"call", Kind::Positive, true},
      {"content_bytes", Kind::Natural, true},
      {"content_sha256", Kind::Digest, false},
      {"content", Kind::Text, false},
      {"content_redacted", Kind::Flag, false},
      {"content_ref", Kind::Digest, false},
      {"tool_call_count", Kind::Positive, false},
      {"tool_calls_sha256", Kind::Digest, false},
      {"tool_calls", Kind::Calls, false},
      {"usage", Kind::Object, false},
      {"reasoning_bytes", Kind::Positive, false},
      {"reasoning_sha256", Kind::Digest, false},
      {"reasoning", Kind::Text, false},
      {"stop_reason", Kind::Text, false},
      {"response_model", Kind::Name, false},
      {"response_id", Kind::Name, false},
      {"source", Kind::Name, false},
      {"attempts", Kind::Positive, false},
      {"request_sha256", Kind::Digest, false}}},
    {"model_failed",
     {{"call", Kind::Positive, true},
      {"error", Kind::Text, true},
      {"source", Kind::Name, false},
      {"attempts", Kind::Positive, false},
      {"request_sha256", Kind::Digest, false}}},
    {"verification_failed",
     {{"call", Kind::Positive, true},
      {"violations", Kind::Violations, true},
      {"repairs_remaining", Kind::Natural, true}}},
    {"guardrail_violation",
     {{"kind", Kind::Name, true},
      {"call", Kind::Positive, false},
      {"message", Kind::Text, false},
      {"budget", Kind::Object, false}}},
    {"nudge_sent",
     {{"kind", Kind::Name, true}, {"channel", Kind::Name, true}, {"message", Kind::Text, true}}},
    {"projection_compiled",
     {{"call", Kind::Positive, true},
      {"fingerprint", Kind::Digest, true},
      {"visible", Kind::Names, true},
      {"active_units", Kind::Names, true},
      {"ledger", Kind::Object, true}}},
    {"tool_called",
     {{"call_id", Kind::Name, true},
      {"tool", Kind::Name, true},
      {"input_sha256", Kind::Digest, false},
      {"arguments", Kind::Any, false}}},
    {"tool_completed",
     {{"call_id", Kind::Name, true},
      {"ok", Kind::Flag, true},
      {"result_bytes", Kind::Natural, false},
      {"result_sha256", Kind::Digest, false},
      {"record", Kind::Object, false},
      {"error_kind", Kind::Name, false}}},
    {"tool_denied",
     {{"call_id", Kind::Text, false},
      {"tool", Kind::Text, true},
      {"reason", Kind::Text, true},
      {"record", Kind::Object, false}}},
    {"tools_skipped",
     {{"reason", Kind::Name, true},
      {"count", Kind::Positive, true},
      {"call_ids", Kind::Names, true}}},
    {"context_compacted",
     {{"phase", Kind::Positive, true},
      {"tokens_before", Kind::Natural, true},
      {"tokens_after", Kind::Natural, true},
      {"entries_before", Kind::Natural, true},
      {"entries_after", Kind::Natural, true},
      {"digest_before", Kind::Digest, true},
      {"digest_after", Kind::Digest, true}}},
    {"budget_exhausted", {{"budget", Kind::Name, true}, {"limit", Kind::Natural, true}}},
    {"run_completed",
     {{"terminal", Kind::Name, true},
      {"output", Kind::Any, true},
      {"model_calls", Kind::Natural, true},
      {"repairs", Kind::Natural, true},
      {"tool_calls", Kind::Natural, false},
      {kMacMember, Kind::Digest, false}}},
    {"run_failed",
     {{"terminal", Kind::Name, true},
      {"model_calls", Kind::Natural, true},
      {"repairs", Kind::Natural, true},
      {"tool_calls", Kind::Natural, false},
      {"violations", Kind::Violations, false},
      {"error", Kind::Text, false},
      {kMacMember, Kind::Digest, false}}},
}};

// a == b for the short names of the format, in a few word compares rather than a call to memcmp:
// the first and last 8 bytes (overlapping) of a name of 8 to 16 bytes, and the middle ones past
// that; the first and last 4 of a shorter one. Reads only within both names.
bool same_name(std::string_view a, std::string_view b) {
  const std::size_t n = a.size();
  if (n != b.size()) return false;
  const auto word = [](std::string_view s, std::size_t at, auto w) {
    std::memcpy(&w, s.data() + at, sizeof w);
    return w;
  };
  if (n >= 8) {
    for (std::size_t at = 0; at + 8 < n; at += 8) {
      if (word(a, at, std::uint64_t{}) != word(b, at, std::uint64_t{})) return false;
    }
    return word(a, n - 8, std::uint64_t{}) == word(b, n - 8, std::uint64_t{});
  }
  if (n >= 4) {
    return word(a, 0, std::uint32_t{}) == word(b, 0, std::uint32_t{}) &&
           word(a, n - 4, std::uint32_t{}) == word(b, n - 4, std::uint32_t{});
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

// The length and three bytes, not every byte: every member of every trace line is looked up,
// and over the format's names the probes are short.
std::size_t name_hash(std::string_view name) {
  if (name.empty()) return 0;
  const auto at = [&](std::size_t i) { return static_cast<unsigned char>(name[i]); };
  return ((name.size() * 131 + at(0)) * 131 + at(name.size() - 1)) * 131 + at(name.size() / 2);
}

// The event types by name: open addressing over name_hash.
struct EventTable {
  std::array<std::uint8_t, 64> slots{};  // event number + 1; 0 = empty

  EventTable() {
    for (std::size_t e = 0; e < kEventTypes.size(); ++e) {
      std::size_t i = name_hash(kEventTypes[e]);
      while (slots[i % slots.size()] != 0) ++i;
      slots[i % slots.size()] = static_cast<std::uint8_t>(e + 1);
    }
  }
  Event find(std::string_view name) const {
    for (std::size_t i = name_hash(name);; ++i) {
      const std::uint8_t slot = slots[i % slots.size()];
      if (slot == 0) return Event::Unknown;
      if (same_name(kEventTypes[slot - 1], name)) return static_cast<Event>(slot - 1);
    }
  }
};

// The member numbers: the envelope's first, then the MAC, then each payload name as the rules
// first mention it; and for each rule, the kind of each member it allows.
struct MemberTable {
  std::array<std::string_view, kMemberCount> names{};
  std::size_t count = 0;
  // Open addressing over a hash of the name: a probe sequence ends at an empty slot.
  std::array<std::uint8_t, 256> slots{};  // member id + 1; 0 = empty
  static constexpr std::int8_t kNotAllowed = -1;
  std::array<std::array<std::int8_t, kMemberCount>, kEventTypes.size()> kinds{};

  // Over this table's names the probes of name_hash are as short as a hash of the whole name's
  // (1.2 on average, 3 at most).
  std::size_t find(std::string_view name) const {
    for (std::size_t i = name_hash(name);; ++i) {
      const std::uint8_t slot = slots[i % slots.size()];
      if (slot == 0) return kNoMember;
      if (same_name(names[slot - 1], name)) return slot - 1;
    }
  }
  std::size_t add(std::string_view name) {
    if (const std::size_t id = find(name); id != kNoMember) return id;
    names.at(count) = name;  // at(): kMemberCount must count every name the rules use
    std::size_t i = name_hash(name);
    while (slots[i % slots.size()] != 0) ++i;
    slots[i % slots.size()] = static_cast<std::uint8_t>(++count);
    return count - 1;
  }
};

const MemberTable& member_table() {
  static const MemberTable table = [] {
    MemberTable t;
    for (const auto name : kEnvelope) t.add(name);
    t.add(kMacMember);
    for (std::size_t r = 0; r < kRules.size(); ++r) {
      if (kRules[r].event != kEventTypes[r]) std::abort();  // the rules are by event number
      t.kinds[r].fill(MemberTable::kNotAllowed);
      for (const auto& m : kRules[r].members) {
        t.kinds[r][t.add(m.name)] = static_cast<std::int8_t>(m.kind);
      }
    }
    if (t.count != kMemberCount) std::abort();  // kMemberCount must be exact
    return t;
  }();
  return table;
}

bool is_violations(const json::View& v) {
  if (!v.is_array()) return false;
  return v.each([](std::string_view, json::View item) {
    if (!item.is_object()) return false;
    const auto path = item.find("path");
    const auto code = item.find("code");
    const auto message = item.find("message");
    const auto layer = item.find("layer");
    const std::size_t members = layer ? 4 : 3;
    return item.size() == members && path.is_string() && code.is_string() &&
           !code.as_string().empty() && message.is_string() && (!layer || layer.is_string());
  });
}

bool is_names(const json::View& v) {
  return v.is_array() && v.each([](std::string_view, json::View i) {
    return i.is_string() && !i.as_string().empty();
  });
}

bool is_calls(const json::View& v) {
  if (!v.is_array()) return false;
  return v.each([](std::string_view, json::View item) {
    if (!item.is_object() || item.size() < 3 || item.size() > 4) return false;
    const auto id = item.find("id");
    const auto name = item.find("name");
    if (!id.is_string() || id.as_string().empty() || !name.is_string() ||
        !item.find("arguments").is_string()) {
      return false;
    }
    // A call the decoder refused: no name, and `malformed` says why.
    const auto malformed = item.find("malformed");
    if (item.size() == 4) {
      return malformed.is_string() && !malformed.as_string().empty() && name.as_string().empty();
    }
    return !name.as_string().empty();
  });
}

// What `v` fails to be, or nothing.
std::optional<std::string_view> kind_error(Kind kind, const json::View& v) {
  const auto integer = [&]() { return v.as_exact_int(); };
  switch (kind) {
    case Kind::Any:
      return std::nullopt;
    case Kind::Text:
      return v.is_string() ? std::nullopt : std::optional<std::string_view>("a string");
    case Kind::Name:
      if (v.is_string() && !v.as_string().empty()) return std::nullopt;
      return "a non-empty string";
    case Kind::Digest:
      if (v.is_string() && hash::is_hex_digest(v.as_string())) return std::nullopt;
      return "64 lowercase hex digits";
    case Kind::Natural:
      if (auto n = integer(); n && *n >= 0) return std::nullopt;
      return "an integer >= 0";
    case Kind::Positive:
      if (auto n = integer(); n && *n >= 1) return std::nullopt;
      return "an integer >= 1";
    case Kind::Flag:
      return v.is_bool() ? std::nullopt : std::optional<std::string_view>("true or false");
    case Kind::Object:
      return v.is_object() ? std::nullopt : std::optional<std::string_view>("an object");
    case Kind::Violations:
      if (is_violations(v)) return std::nullopt;
      return "an array of {path, code, message} objects of strings";
    case Kind::Names:
      if (is_names(v)) return std::nullopt;
      return "an array of non-empty strings";
    case Kind::Calls:
      if (is_calls(v)) return std::nullopt;
      return "an array of {id, name, arguments} objects of strings";
  }
  return "of an unknown kind";
}

// The members check_values reads, by number; numbered on first use.
struct ValueKeys {
  std::size_t durability = member_id("durability");
  std::size_t kind = member_id("kind");
  std::size_t mode = member_id("mode");
  std::size_t plan_sha256 = member_id("plan_sha256");
  std::size_t source = member_id("source");
  std::size_t task_id = member_id("task_id");
  std::size_t terminal = member_id("terminal");
  std::size_t tool_call_count = member_id("tool_call_count");
  std::size_t tool_calls = member_id("tool_calls");
  std::size_t tool_calls_sha256 = member_id("tool_calls_sha256");
  std::size_t trace_content = member_id("trace_content");
  std::size_t violations = member_id("violations");
};

// The values a few members may take, beyond their kind.
std::optional<std::string> check_values(Event event, const Members& members) {
  static const ValueKeys keys;
  const auto field = [&](std::size_t ValueKeys::*key) { return members[keys.*key]; };
  const auto text = [&](std::size_t ValueKeys::*key) { return field(key).as_string(); };
  using K = ValueKeys;
  if (event == Event::RunStarted) {
    if (text(&K::mode) != "task" && text(&K::mode) != "plan")
      return "\"mode\" must be task or plan";
    if (text(&K::mode) == "task" && !field(&K::task_id)) {
      return "a task run needs \"task_id\"";
    }
    if (text(&K::mode) == "plan" && !field(&K::plan_sha256)) {
      return "a plan run needs \"plan_sha256\"";
    }
    if (text(&K::durability) != "event" && text(&K::durability) != "batch") {
      return "\"durability\" must be event or batch";
    }
    const auto content = text(&K::trace_content);
    if (content != "digest" && content != "inline" && content != "none" && content != "store") {
      return "\"trace_content\" must be digest, inline, none or store";
    }
  } else if (event == Event::ModelRequested) {
    if (text(&K::kind) != "initial" && text(&K::kind) != "repair" && text(&K::kind) != "turn") {
      return "model_requested needs \"kind\" of \"initial\", \"repair\" or \"turn\"";
    }
    if ((text(&K::kind) == "repair") != static_cast<bool>(field(&K::violations))) {
      return "\"violations\" is present exactly on a repair request";
    }
  } else if (event == Event::ModelResponded || event == Event::ModelFailed) {
    if (field(&K::source) && text(&K::source) != "network" && text(&K::source) != "cache") {
      return "\"source\" must be network or cache";
    }
  }
  if (event == Event::ModelResponded) {
    const auto count = field(&K::tool_call_count);
    const auto calls = field(&K::tool_calls);
    if ((calls || field(&K::tool_calls_sha256)) && !count) {
      return "tool calls are recorded with their \"tool_call_count\"";
    }
    if (calls && count && count.as_exact_int() != static_cast<std::int64_t>(calls.size())) {
      return "\"tool_call_count\" is not the number of \"tool_calls\"";
    }
  } else if (event == Event::RunCompleted) {
    if (text(&K::terminal) != "completed") return "run_completed needs \"terminal\":\"completed\"";
  } else if (event == Event::RunFailed) {
    const auto state = text(&K::terminal);
    if (state == "completed" || !is_terminal_state(state)) {
      return "run_failed needs a failed terminal state (invalid_output, model_failed, "
             "budget_exhausted, cancelled, timed_out, tool_failed, terminal_rejected), not \"" +
             std::string(state) + "\"";
    }
  }
  return std::nullopt;
}

}  // namespace

std::string terminal_mac(std::string_view key, std::string_view unsigned_line) {
  return hash::to_hex(hash::hmac_sha256(key, unsigned_line));
}

Event event_type(std::string_view name) {
  static const EventTable table;
  return table.find(name);
}

bool is_known_event(std::string_view event) {
  return event_type(event) != Event::Unknown;
}

bool is_terminal_event(std::string_view event) {
  return is_terminal(event_type(event));
}

bool is_terminal_state(std::string_view state) {
  return std::find(kTerminalStates.begin(), kTerminalStates.end(), state) != kTerminalStates.end();
}

bool is_envelope_member(std::string_view key) {
  return std::find(kEnvelope.begin(), kEnvelope.end(), key) != kEnvelope.end();
}

std::size_t member_id(std::string_view name) {
  return member_table().find(name);
}

void Members::read(const json::View& object) {
  for (std::size_t i = 0; i < count_; ++i) by_id_[order_[i]] = {};
  count_ = 0;
  unknown_ = {};
  const MemberTable& table = member_table();
  before_unknown_ = SIZE_MAX;
  object.each([&](std::string_view key, json::View value) {
    const std::size_t id = table.find(key);
    if (id == kNoMember) {
      if (unknown_.empty()) {
        unknown_ = key;
        before_unknown_ = count_;
      }
    } else {
      by_id_[id] = value;
      order_[count_++] = static_cast<std::uint8_t>(id);
    }
    return true;
  });
}

std::optional<std::string> check_payload(std::string_view event, const json::View& object) {
  Members members;
  members.read(object);
  return check_payload(event, members);
}

std::optional<std::string> check_payload(std::string_view event, const Members& members) {
  const Event type = event_type(event);
  if (type == Event::Unknown) return "unknown event type \"" + std::string(event) + "\"";
  return check_payload(type, members);
}

std::optional<std::string> check_payload(Event type, const Members& members) {
  const EventRule* const rule = &kRules[static_cast<std::size_t>(type)];
  const std::string_view event = rule->event;
  const MemberTable& table = member_table();
  const auto& kinds = table.kinds[static_cast<std::size_t>(type)];
  const auto not_part = [&](std::string_view key) {
    return "member \"" + std::string(key) + "\" is not part of " + std::string(event);
  };
  // In the object's order, up to the first member no event names.
  for (const std::uint8_t* it = members.begin(); it != members.end_of_known(); ++it) {
    const std::size_t id = *it;
    if (id < kEnvelope.size()) continue;
    if (kinds[id] == MemberTable::kNotAllowed) return not_part(table.names[id]);
    if (auto wrong = kind_error(static_cast<Kind>(kinds[id]), members[id])) {
      return "\"" + std::string(table.names[id]) + "\" must be " + std::string(*wrong);
    }
  }
  if (!members.unknown().empty()) return not_part(members.unknown());
  for (const auto& member : rule->members) {
    if (member.required && !members[table.find(member.name)]) {
      return "missing member \"" + std::string(member.name) + "\"";
    }
  }
  return check_values(type, members);
}

}  // namespace mf::trace
