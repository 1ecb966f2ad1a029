#include "mf/eval/report.hpp"

#include <map>

#include "mf/diag/codes.hpp"
#include "mf/eval/suite.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/json/fields.hpp"
#include "mf/json/pointer.hpp"
#include "mf/json/reader.hpp"

namespace mf::eval {

namespace {

namespace codes = diag::codes;

constexpr std::size_t kMaxReportBytes = 64u << 20;

void check_digest(json::FieldReader& r, std::string_view key) {
  auto hex = r.string(key);
  hash::Digest d;
  if (hex && !hash::from_hex(*hex, d)) {
    r.add(diag::error(codes::kSchema,
                      "\"" + std::string(key) + "\" must be 64 lowercase hex digits",
                      r.pointer_of(key)));
  }
}

std::optional<std::int64_t> count(json::FieldReader& r, std::string_view key, bool required) {
  auto n = r.integer(key, required);
  if (n && *n < 0) {
    r.add(diag::error(codes::kSchema, "\"" + std::string(key) + "\" must not be negative",
                      r.pointer_of(key)));
    return std::nullopt;
  }
  return n;
}

void check_failures(json::FieldReader& parent, const json::Value& failures) {
  const json::Array& items = failures.as_array();
  for (std::size_t i = 0; i < items.size(); ++i) {
    std::string pointer = parent.pointer_of("failures");
    json::append_index(pointer, i);
    json::FieldReader f(items[i], pointer);
    f.string("check");
    if (items[i].is_object() && f.optional("expected") == nullptr) {
      f.add(diag::error(codes::kSchema, "missing required field \"expected\"",
                        f.pointer_of("expected")));
    }
    f.reject_unknown({"check", "expected", "actual"});
    for (auto& d : f.take()) {
      parent.add(std::move(d));
    }
  }
}

std::optional<ReportCase> parse_case(const json::Value& v, const std::string& pointer,
                                     diag::Diagnostics& problems) {
  json::FieldReader r(v, pointer);
  ReportCase c;
  if (auto id = r.string("id")) {
    c.id = *id;
    if (!valid_case_id(c.id)) {
      r.add(diag::error(codes::kBadIdentifier, "invalid case id \"" + c.id + "\"",
                        r.pointer_of("id")));
    }
  }
  auto status = r.string("status");
  if (status && *status != "passed" && *status != "failed") {
    r.add(diag::error(codes::kSchema,
                      "\"status\" must be passed or failed, found \"" + *status + "\"",
                      r.pointer_of("status")));
  }
  c.passed = status && *status == "passed";
  r.string("terminal");
  count(r, "model_calls", true);
  count(r, "repairs", true);
  check_digest(r, "trace_sha256");
  if (const json::Value* usage = r.object("usage")) {
    json::FieldReader u(*usage, r.pointer_of("usage"));
    count(u, "input_tokens", false);
    count(u, "output_tokens", false);
    if (const json::Value* cost = u.optional("cost_usd");
        cost != nullptr && (!cost->is_number() || cost->as_number() < 0)) {
      u.add(diag::error(codes::kSchema, "\"cost_usd\" must be a number >= 0",
                        u.pointer_of("cost_usd")));
    }
    u.reject_unknown({"input_tokens", "output_tokens", "cost_usd"});
    for (auto& d : u.take()) r.add(std::move(d));
  }
  const json::Value* failures = r.array("failures");
  if (failures != nullptr) {
    check_failures(r, *failures);
    // A status contradicting its failures means the report was altered or corrupted.
    if (status && (*status == "passed") != failures->as_array().empty()) {
      r.add(diag::error(codes::kSchema,
                        "\"status\" is " + *status + " but the case lists " +
                            std::to_string(failures->as_array().size()) + " failure(s)",
                        r.pointer_of("status")));
    }
  }
  count(r, "latency_ms", false);
  // A plan case's members: its tool calls, the disposition of an accepted terminal, and its
  // guardrail violations by kind.
  const bool plan_case = count(r, "tool_calls", false).has_value();
  if (auto disposition = r.string("disposition", false)) {
    if (*disposition != "success" && *disposition != "blocked" && *disposition != "rejected") {
      r.add(diag::error(
          codes::kSchema,
          "\"disposition\" must be success, blocked or rejected, found \"" + *disposition + "\"",
          r.pointer_of("disposition")));
    }
  }
  if (const json::Value* violations = r.object("violations", false)) {
    json::FieldReader k(*violations, r.pointer_of("violations"));
    for (const json::Member& m : violations->as_object()) count(k, m.key, true);
    for (auto& d : k.take()) r.add(std::move(d));
  }
  if (!plan_case) {
    for (std::string_view key : {"disposition", "violations"}) {
      if (r.optional(key) != nullptr) {
        r.add(diag::error(codes::kSchema,
                          "\"" + std::string(key) + "\" belongs to a plan case (with tool_calls)",
                          r.pointer_of(key)));
      }
    }
  }
  r.reject_unknown({"id", "status", "terminal", "model_calls", "repairs", "trace_sha256", "usage",
                    "failures", "latency_ms", "tool_calls", "disposition", "violations"});
  const bool ok = r.ok();
  for (auto& d : r.take()) problems.push_back(std::move(d));
  if (!ok) return std::nullopt;
  return c;
}

std::optional<double> pass_rate(const Report& r) {
  if (r.cases.empty()) return std::nullopt;
  std::size_t passed = 0;
  for (const auto& c : r.cases) passed += c.passed ? 1 : 0;
  return static_cast<double>(passed) / static_cast<double>(r.cases.size());
}

json::Value ids(const std::vector<std::string>& v) {
  json::Array out;
  for (const auto& id : v) out.push_back(id);
  return out;
}

}  // namespace

Result<Report> parse_report(std::string_view bytes) {
  Result<json::Value> doc = json::parse_object(bytes, {.max_bytes = kMaxReportBytes});
  if (!doc) return doc.take_diagnostics();

  Report report;
  json::FieldReader top(*doc, "");
  if (auto v = top.integer("v"); v && *v != 1) {
    top.add(diag::error(codes::kSchema, "unsupported report version " + std::to_string(*v),
                        top.pointer_of("v")));
  }
  if (auto kind = top.string("kind"); kind && *kind != "millforge_eval_report") {
    top.add(diag::error(codes::kSchema,
                        "\"kind\" must be millforge_eval_report, found \"" + *kind + "\"",
                        top.pointer_of("kind")));
  }
  if (auto id = top.string("suite_id")) report.suite_id = *id;
  check_digest(top, "suite_sha256");
  const json::Value* cases = top.array("cases");
  const json::Value* summary = top.object("summary");
  top.reject_unknown({"v", "kind", "suite_id", "suite_sha256", "cases", "summary"});
  diag::Diagnostics problems = top.take();

  bool cases_ok = cases != nullptr;
  if (cases != nullptr) {
    const json::Array& items = cases->as_array();
    for (std::size_t i = 0; i < items.size(); ++i) {
      std::string pointer = "/cases";
      json::append_index(pointer, i);
      std::optional<ReportCase> c = parse_case(items[i], pointer, problems);
      if (!c) {
        cases_ok = false;
        continue;
      }
      if (!report.cases.empty() && c->id <= report.cases.back().id) {
        const bool duplicate = c->id == report.cases.back().id;
        problems.push_back(diag::error(duplicate ? codes::kDuplicateCaseId : codes::kSchema,
                                       duplicate
                                           ? "case id \"" + c->id + "\" appears twice"
                                           : "cases must be sorted by id: \"" + c->id +
                                                 "\" follows \"" + report.cases.back().id + "\"",
                                       pointer + "/id"));
        cases_ok = false;
        continue;
      }
      report.cases.push_back(std::move(*c));
    }
  }
  if (summary != nullptr) {
    json::FieldReader s(*summary, "/summary");
    auto total = count(s, "cases", true);
    auto passed = count(s, "passed", true);
    auto failed = count(s, "failed", true);
    s.reject_unknown({"cases", "passed", "failed"});
    if (cases_ok) {
      std::int64_t actual_passed = 0;
      for (const auto& c : report.cases) actual_passed += c.passed ? 1 : 0;
      const auto n = static_cast<std::int64_t>(report.cases.size());
      for (auto [key, claimed, actual] :
           {std::tuple{"cases", total, n}, std::tuple{"passed", passed, actual_passed},
            std::tuple{"failed", failed, n - actual_passed}}) {
        if (claimed && *claimed != actual) {
          s.add(diag::error(codes::kSchema,
                            "summary says " + std::to_string(*claimed) + " but the cases show " +
                                std::to_string(actual),
                            s.pointer_of(key)));
        }
      }
    }
    for (auto& d : s.take()) problems.push_back(std::move(d));
  }
  if (!problems.empty()) return problems;
  return report;
}

Comparison compare(const Report& baseline, const Report& candidate) {
  Comparison out;
  std::map<std::string, bool> after;
  for (const auto& c : candidate.cases) after.emplace(c.id, c.passed);
  for (const auto& c : baseline.cases) {
    auto it = after.find(c.id);
    if (it == after.end()) {
      out.missing.push_back(c.id);
      continue;
    }
    if (c.passed == it->second) {
      out.unchanged.push_back(c.id);
    } else {
      (it->second ? out.improved : out.regressed).push_back(c.id);
    }
    after.erase(it);
  }
  for (const auto& [id, passed] : after) out.added.push_back(id);
  out.baseline_pass_rate = pass_rate(baseline);
  out.candidate_pass_rate = pass_rate(candidate);
  return out;
}

json::Value to_json(const Comparison& c) {
  json::Value v;
  v.set("improved", ids(c.improved));
  v.set("regressed", ids(c.regressed));
  v.set("unchanged", ids(c.unchanged));
  v.set("missing", ids(c.missing));
  v.set("new", ids(c.added));
  v.set("baseline_pass_rate",
        c.baseline_pass_rate ? json::Value(*c.baseline_pass_rate) : json::Value(nullptr));
  v.set("candidate_pass_rate",
        c.candidate_pass_rate ? json::Value(*c.candidate_pass_rate) : json::Value(nullptr));
  return v;
}

std::vector<std::string> gate_failures(const Comparison& c, std::int64_t max_regressions) {
  std::vector<std::string> reasons;
  if (static_cast<std::int64_t>(c.regressed.size()) > max_regressions) {
    reasons.push_back(std::to_string(c.regressed.size()) + " case(s) regressed (at most " +
                      std::to_string(max_regressions) + " allowed)");
  }
  if (!c.missing.empty()) {
    reasons.push_back(std::to_string(c.missing.size()) +
                      " baseline case(s) missing from the candidate");
  }
  return reasons;
}

}  // namespace mf::eval
