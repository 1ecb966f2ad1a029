// An attempt's report entry graded from its run or checked against its trace (entry.hpp).
#include "mf/eval/entry.hpp"

#include <array>
#include <utility>

#include "mf/hash/sha256.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"
#include "mf/trace/verify.hpp"

namespace mf::eval {

namespace {

// The members of an entry that its trace alone gives, without the case's expectations.
constexpr std::array<std::string_view, 6> kTraced = {"terminal",   "model_calls", "repairs",
                                                     "tool_calls", "disposition", "violations"};

Disagreement differs(const std::string& member, const json::Value* said, const json::Value* gives) {
  return {"entry", member,
          "it says \"" + member +
              "\": " + (said == nullptr ? std::string("nothing") : json::canonical(*said)) +
              " but its trace gives " +
              (gives == nullptr ? std::string("nothing") : json::canonical(*gives))};
}

}  // namespace

json::Value graded(const Case& c, const runtime::RunOutcome& outcome, const PlanFacts* facts,
                   std::string_view trace, json::Value usage, std::optional<std::int64_t> latency) {
  json::Array failures = grade(c.expect, outcome, facts);
  const bool passed = failures.empty();
  json::Value r;
  r.set("status", passed ? "passed" : "failed");
  r.set("terminal", outcome.terminal);
  r.set("model_calls", outcome.model_calls);
  r.set("repairs", outcome.repairs);
  r.set("trace_sha256", hash::sha256_hex(trace));
  r.set("usage", std::move(usage));
  r.set("failures", std::move(failures));
  if (facts != nullptr) {
    r.set("tool_calls", outcome.tool_calls);
    if (const json::Value* d = outcome.completed() ? outcome.output.find("disposition") : nullptr) {
      r.set("disposition", *d);
    }
    json::Value violations = json::Object{};
    for (const auto& [kind, n] : facts->violations) violations.set(kind, n);
    r.set("violations", std::move(violations));
    r.set("outcome", plan_outcome(c.expect, outcome, passed));
  }
  if (latency) r.set("latency_ms", *latency);
  return r;
}

std::optional<runtime::RunOutcome> traced_outcome(std::string_view trace) {
  if (!trace.empty() && trace.back() == '\n') trace.remove_suffix(1);
  const auto newline = trace.rfind('\n');
  auto last = json::parse(newline == std::string_view::npos ? trace : trace.substr(newline + 1));
  if (!last || !last->is_object()) return std::nullopt;
  const json::Value* terminal = last->find("terminal");
  if (terminal == nullptr || !terminal->is_string()) return std::nullopt;
  runtime::RunOutcome o;
  o.terminal = terminal->as_string();
  const auto count = [&](const char* key) {
    const json::Value* v = last->find(key);
    return v != nullptr ? v->as_exact_int().value_or(-1) : 0;
  };
  o.model_calls = count("model_calls");
  o.repairs = count("repairs");
  o.tool_calls = count("tool_calls");
  if (const json::Value* output = last->find("output")) o.output = *output;
  return o;
}

std::optional<json::Value> traced_start(std::string_view trace) {
  auto first = json::parse(trace.substr(0, trace.find('\n')));
  if (!first || !first->is_object()) return std::nullopt;
  return std::move(*first);
}

std::optional<Disagreement> disagreement(const Case* c, std::string_view trace,
                                         const json::Value& held, const std::string& mac_key) {
  const json::Value* sha = held.find("trace_sha256");
  const std::string digest = hash::sha256_hex(trace);
  if (sha == nullptr || !sha->is_string() || sha->as_string() != digest) {
    return Disagreement{"trace_sha256", "",
                        "its trace_sha256 is not the digest of its trace (" + digest + ")"};
  }
  trace::VerifyOptions vo;
  vo.mac_key = mac_key;
  auto verified = trace::verify(trace, vo);
  if (!verified || verified->status != trace::Outcome::Ok) {
    return Disagreement{
        "trace", "",
        "its trace does not verify" +
            (verified && verified->first_error
                 ? ": " + verified->first_error->code + " " + verified->first_error->message
                 : std::string())};
  }
  const std::optional<runtime::RunOutcome> outcome = traced_outcome(trace);
  if (!outcome) return Disagreement{"trace", "", "its trace ends without a terminal event"};
  // Without the suite the case is known only by what its trace says it ran, and expects nothing.
  Case unknown;
  if (c == nullptr) {
    const auto start = traced_start(trace);
    const json::Value* mode = start ? start->find("mode") : nullptr;
    unknown.kind = mode != nullptr && mode->is_string() && mode->as_string() == "plan"
                       ? CaseKind::Plan
                       : CaseKind::Task;
  }
  const Case& graded_as = c != nullptr ? *c : unknown;
  std::optional<PlanFacts> facts;
  if (graded_as.kind == CaseKind::Plan) {
    auto read = plan_facts(trace);
    if (!read) return Disagreement{"trace", "", "its trace cannot be read"};
    facts = std::move(*read);
  }
  const json::Value* usage = held.find("usage");
  const json::Value* latency = held.find("latency_ms");
  const json::Value again =
      graded(graded_as, *outcome, facts ? &*facts : nullptr, trace, usage ? *usage : json::Value(),
             latency != nullptr ? latency->as_exact_int() : std::nullopt);
  if (c == nullptr) {
    for (std::string_view key : kTraced) {
      const json::Value* said = held.find(key);
      const json::Value* gives = again.find(key);
      if ((said == nullptr) != (gives == nullptr) ||
          (said != nullptr && json::canonical(*said) != json::canonical(*gives))) {
        return differs(std::string(key), said, gives);
      }
    }
    return std::nullopt;
  }
  if (json::canonical(again) == json::canonical(held)) return std::nullopt;
  for (const json::Member& m : again.as_object()) {
    const json::Value* said = held.find(m.key);
    if (said == nullptr || json::canonical(*said) != json::canonical(m.value)) {
      return differs(m.key, said, &m.value);
    }
  }
  for (const json::Member& m : held.as_object()) {
    if (again.find(m.key) == nullptr) return differs(m.key, &m.value, nullptr);
  }
  return std::nullopt;  // unreachable: the canonical forms differ
}

}  // namespace mf::eval
