// Eval reports read strictly, summarised and compared (report.hpp); a report another run or shard
// wrote is input like any other and is checked before it is trusted.
#include "mf/eval/report.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "mf/diag/codes.hpp"
#include "mf/eval/stats.hpp"
#include "mf/eval/suite.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
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

std::optional<std::string> read_status(json::FieldReader& r) {
  auto status = r.string("status");
  if (status && *status != "passed" && *status != "failed") {
    r.add(diag::error(codes::kSchema,
                      "\"status\" must be passed or failed, found \"" + *status + "\"",
                      r.pointer_of("status")));
  }
  return status;
}

// The members of one run's entry (a case without repeats, or one attempt of a repeated case);
// returns whether it passed.
bool parse_run(json::FieldReader& r) {
  auto status = read_status(r);
  if (auto o = r.string("outcome", false)) {
    const auto& known = AttemptFacts::kOutcomes;
    if (std::find(known.begin(), known.end(), *o) == known.end()) {
      r.add(diag::error(codes::kSchema, "unknown outcome \"" + *o + "\"", r.pointer_of("outcome")));
    }
  }
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
  return status && *status == "passed";
}

// A campaign matrix column: {label, model?, guardrails?}.
void check_variant(json::FieldReader& r) {
  const json::Value* variant = r.object("variant", false);
  if (variant == nullptr) return;
  json::FieldReader v(*variant, r.pointer_of("variant"));
  if (auto label = v.string("label"); label && (label->empty() || !valid_case_id(*label))) {
    v.add(diag::error(codes::kBadIdentifier, "invalid variant label", v.pointer_of("label")));
  }
  v.string("model", false);
  v.string("guardrails", false);
  v.reject_unknown({"label", "model", "guardrails"});
  for (auto& d : v.take()) r.add(std::move(d));
}

std::optional<ReportCase> parse_case(const json::Value& v, const std::string& pointer,
                                     diag::Diagnostics& problems) {
  json::FieldReader r(v, pointer);
  ReportCase c;
  check_variant(r);
  if (auto id = r.string("id")) {
    c.id = *id;
    if (!valid_case_id(c.id)) {
      r.add(diag::error(codes::kBadIdentifier, "invalid case id \"" + c.id + "\"",
                        r.pointer_of("id")));
    }
  }
  if (v.is_object() && v.find("attempts") != nullptr) {
    // A repeated case: its status is passed exactly when every attempt, in repeat order, passed.
    auto status = read_status(r);
    const json::Value* items = r.array("attempts");
    std::int64_t passed = 0, runs = 0;
    for (std::size_t i = 0; items != nullptr && i < items->as_array().size(); ++i) {
      std::string at = r.pointer_of("attempts");
      json::append_index(at, i);
      json::FieldReader a(items->as_array()[i], at);
      if (auto repeat = count(a, "repeat", true);
          repeat && *repeat != static_cast<std::int64_t>(i)) {
        a.add(diag::error(codes::kSchema, "attempts are listed in repeat order from 0",
                          a.pointer_of("repeat")));
      }
      passed += parse_run(a) ? 1 : 0;
      ++runs;
      a.reject_unknown({"repeat", "status", "terminal", "model_calls", "repairs", "trace_sha256",
                        "usage", "failures", "latency_ms", "tool_calls", "disposition",
                        "violations", "outcome"});
      for (auto& d : a.take()) r.add(std::move(d));
    }
    if (items != nullptr && runs < 2) {
      r.add(diag::error(codes::kSchema, "a repeated case has at least 2 attempts",
                        r.pointer_of("attempts")));
    }
    c.passed = status && *status == "passed";
    if (status && c.passed != (passed == runs)) {
      r.add(diag::error(codes::kSchema,
                        "\"status\" is " + *status + " but " + std::to_string(passed) + " of " +
                            std::to_string(runs) + " attempts passed",
                        r.pointer_of("status")));
    }
    r.reject_unknown({"id", "status", "attempts", "variant"});
  } else {
    c.passed = parse_run(r);
    r.reject_unknown({"id", "status", "terminal", "model_calls", "repairs", "trace_sha256", "usage",
                      "failures", "latency_ms", "tool_calls", "disposition", "violations",
                      "variant", "outcome"});
  }
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

// A shard setting as the option that sets it.
std::string setting_name(const std::string& key) {
  if (key == "inputs_sha256") return "inputs_sha256 (what the cases run)";
  if (key == "matrix") return "the matrix (--model, --guardrails)";
  if (key == "signed") return "--mac-key-env";
  std::string option = "--" + key;
  std::replace(option.begin(), option.end(), '_', '-');
  return option;
}

// Where `said` first differs from `want`, descending through the objects both are: `pointer` is
// extended to that member, and the two values there are returned (nullptr for one absent).
std::pair<const json::Value*, const json::Value*> first_difference(const json::Value& said,
                                                                   const json::Value& want,
                                                                   std::string& pointer) {
  if (!said.is_object() || !want.is_object()) return {&said, &want};
  for (const json::Member& m : want.as_object()) {
    const json::Value* here = said.find(m.key);
    if (here == nullptr || json::canonical(*here) != json::canonical(m.value)) {
      json::append_token(pointer, m.key);
      return here == nullptr ? std::pair{here, &m.value}
                             : first_difference(*here, m.value, pointer);
    }
  }
  for (const json::Member& m : said.as_object()) {
    if (want.find(m.key) == nullptr) {
      json::append_token(pointer, m.key);
      return {&m.value, nullptr};
    }
  }
  return {&said, &want};
}

json::Value ids(const std::vector<std::string>& v) {
  json::Array out;
  for (const auto& id : v) out.push_back(id);
  return out;
}

}  // namespace

Result<Report> parse_report(std::string_view bytes, SummaryCheck summary_check) {
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
  if (const json::Value* shard = top.object("shard", false)) {
    json::FieldReader sh(*shard, "/shard");
    auto index = count(sh, "index", true);
    auto of = count(sh, "count", true);
    if (index && of && (*of < 2 || *index < 1 || *index > *of)) {
      sh.add(diag::error(codes::kSchema, "a shard is index i of count n, 1 <= i <= n, n >= 2",
                         "/shard"));
    }
    if (const json::Value* settings = sh.object("settings", false)) {
      json::FieldReader st(*settings, "/shard/settings");
      check_digest(st, "inputs_sha256");
      for (const char* key : {"case", "tags"}) {
        const json::Value* ids = st.array(key);
        for (std::size_t i = 0; ids != nullptr && i < ids->as_array().size(); ++i) {
          if (!ids->as_array()[i].is_string()) {
            std::string at = st.pointer_of(key);
            json::append_index(at, i);
            st.add(diag::error(codes::kSchema, "must be a string", at));
          }
        }
      }
      if (auto repeat = count(st, "repeat", true); repeat && *repeat < 1) {
        st.add(
            diag::error(codes::kSchema, "\"repeat\" must be at least 1", st.pointer_of("repeat")));
      }
      count(st, "case_timeout_ms", true);
      st.array("matrix");
      st.string("run_id_prefix");
      st.boolean("fixed_clock");
      st.boolean("signed");
      st.string("trace_content", false);
      st.reject_unknown({"inputs_sha256", "case", "tags", "repeat", "case_timeout_ms", "matrix",
                         "run_id_prefix", "fixed_clock", "signed", "trace_content"});
      for (auto& d : st.take()) sh.add(std::move(d));
    }
    sh.reject_unknown({"index", "count", "settings"});
    for (auto& d : sh.take()) top.add(std::move(d));
  }
  top.reject_unknown({"v", "kind", "suite_id", "suite_sha256", "shard", "cases", "summary"});
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
  // The summary is derived from the cases alone: the counts must be there, and every member
  // present must be what the cases give (a report of an earlier version has only the counts).
  if (summary != nullptr && cases_ok && problems.empty()) {
    Result<json::Value> summarized = summarize(cases->as_array());
    if (!summarized) return summarized.take_diagnostics();
    const json::Value& expected = *summarized;
    json::FieldReader s(*summary, "/summary");
    for (const char* key : {"cases", "passed", "failed"}) count(s, key, true);
    for (const json::Member& m : summary->as_object()) {
      const json::Value* want = expected.find(m.key);
      if (want == nullptr) {
        s.add(diag::error(codes::kUnknownField, "unknown summary member \"" + m.key + "\"",
                          s.pointer_of(m.key)));
      } else if (json::canonical(*want) != json::canonical(m.value)) {
        std::string at = s.pointer_of(m.key);
        const auto [said, gives] = first_difference(m.value, *want, at);
        const auto shown = [](const json::Value* v) {
          return v != nullptr ? json::canonical(*v) : std::string("nothing");
        };
        auto d =
            diag::error(codes::kSchema,
                        "summary says " + shown(said) + " but the cases give " + shown(gives), at);
        if (summary_check == SummaryCheck::Collect) {
          report.summary_disagreements.push_back(std::move(d));
        } else {
          s.add(std::move(d));
        }
      }
    }
    for (auto& d : s.take()) problems.push_back(std::move(d));
  }
  if (!problems.empty()) return problems;
  const auto number_at = [&](std::string_view pointer) -> std::optional<double> {
    const json::Value* v = json::find_at(*summary, pointer);
    return v != nullptr && v->is_number() ? std::optional<double>(v->as_number()) : std::nullopt;
  };
  report.latency_median_ms = number_at("/latency_ms/median");
  report.cost_median_usd = number_at("/usage/cost_usd/median");
  report.false_closure_rate = number_at("/false_closure_rate");
  report.document = std::move(*doc);
  return report;
}

namespace {

// The numbers of one summary member, in the order they come: kept in a record file for the median
// and p90, summed as they come (in case and repeat order: the same bytes every run).
struct Numbers {
  io::RecordFile<double> values{"the summary's numbers"};
  double total = 0;
  Status status;  // the first append that failed

  void add(double v) {
    total += v;
    if (Status s = values.push_back(v); !s && status) status = std::move(s);
  }
  // {median, p90} (nearest rank, as percentile()), with their total when `with_total`.
  Result<json::Value> distribution(bool with_total) {
    if (!status) return status.diagnostics();
    if (Status s = values.sort([](double a, double b) { return a < b; }); !s)
      return s.take_diagnostics();
    io::RecordFile<double>::Reader sorted(values);
    const auto n = static_cast<std::size_t>(values.size());
    json::Value d = json::Object{{"median", sorted[percentile_index(n, 0.5)]},
                                 {"p90", sorted[percentile_index(n, 0.9)]}};
    if (!sorted.status()) return sorted.status().diagnostics();
    if (with_total) d.set("total", total);
    return d;
  }
};

json::Value interval(std::int64_t passed, std::int64_t n) {
  const auto [low, high] = wilson95(passed, n);
  return json::Array{low, high};
}

json::Value rate(std::int64_t passed, std::int64_t n) {
  return n > 0 ? json::Value(static_cast<double>(passed) / static_cast<double>(n))
               : json::Value(nullptr);
}

}  // namespace

// The statistics of one group of cases, observed one case at a time in id order.
struct SummaryBuilder::Stats {
  std::int64_t n = 0, passed = 0, attempts = 0, attempts_passed = 0, any_passed = 0, repeat = 1;
  json::Array flaky;
  std::optional<Numbers> latency;
  std::map<std::string, Numbers> usage;          // input_tokens, output_tokens, cost_usd
  std::map<std::string, std::int64_t> outcomes;  // plan attempts by Millforge's scoring
  std::int64_t scored = 0;

  void observe(const json::Value& run) {
    if (const json::Value* o = run.find("outcome"); o != nullptr && o->is_string()) {
      ++outcomes[o->as_string()];
      ++scored;
    }
    if (const json::Value* l = run.find("latency_ms"); l != nullptr && l->is_number()) {
      add_latency(l->as_number());
    }
    if (const json::Value* u = run.find("usage"); u != nullptr && u->is_object()) {
      for (const auto& m : u->as_object()) {
        if (m.value.is_number()) usage[m.key].add(m.value.as_number());
      }
    }
  }
  void add_latency(double v) {
    if (!latency) latency.emplace();
    latency->add(v);
  }

  void observe(const AttemptFacts& run) {
    if (!run.outcome.empty()) {
      ++outcomes[std::string(run.outcome)];
      ++scored;
    }
    if (run.latency_ms) add_latency(*run.latency_ms);
    for (std::size_t k = 0; k < run.usage.size(); ++k) {
      if (run.usage[k]) usage[std::string(AttemptFacts::kUsageKeys[k])].add(*run.usage[k]);
    }
  }

  // add() of a case given by its runs' facts; the same counts in the same order.
  void add(std::span<const AttemptFacts> runs, bool repeated,
           const std::function<std::string()>& id) {
    ++n;
    std::int64_t p = 0;
    for (const AttemptFacts& a : runs) {
      p += a.passed ? 1 : 0;
      observe(a);
    }
    const auto k = static_cast<std::int64_t>(runs.size());
    passed += p == k ? 1 : 0;
    attempts += k;
    attempts_passed += p;
    any_passed += p > 0 ? 1 : 0;
    if (!repeated) return;
    repeat = std::max(repeat, k);
    if (p > 0 && p < k) flaky.push_back(id());
  }

  void add(const json::Value& c) {
    ++n;
    const json::Value* status = c.find("status");
    const bool ok = status != nullptr && status->is_string() && status->as_string() == "passed";
    passed += ok ? 1 : 0;
    const json::Value* runs = c.find("attempts");
    if (runs == nullptr || !runs->is_array()) {
      ++attempts;
      attempts_passed += ok ? 1 : 0;
      any_passed += ok ? 1 : 0;
      observe(c);
      return;
    }
    std::int64_t p = 0;
    for (const json::Value& a : runs->as_array()) {
      const json::Value* s = a.find("status");
      p += s != nullptr && s->is_string() && s->as_string() == "passed" ? 1 : 0;
      observe(a);
    }
    const auto k = static_cast<std::int64_t>(runs->as_array().size());
    repeat = std::max(repeat, k);
    attempts += k;
    attempts_passed += p;
    any_passed += p > 0 ? 1 : 0;
    if (p > 0 && p < k) flaky.push_back(*c.find("id"));
  }

  Result<json::Value> summary() {
    json::Value summary;
    summary.set("cases", n);
    summary.set("passed", passed);
    summary.set("failed", n - passed);
    summary.set("pass_rate", rate(passed, n));
    summary.set("wilson95", interval(passed, n));
    if (repeat > 1) {
      summary.set("repeat", repeat);
      summary.set("attempts", attempts);
      summary.set("attempts_passed", attempts_passed);
      summary.set("attempt_pass_rate", rate(attempts_passed, attempts));
      summary.set("attempt_wilson95", interval(attempts_passed, attempts));
      summary.set("pass_at_k", rate(any_passed, n));
      summary.set("pass_hat_k", rate(passed, n));
      summary.set("flaky", flaky);
    }
    if (scored > 0) {
      json::Value by = json::Object{};
      for (const auto& [name, count] : outcomes) by.set(name, count);
      summary.set("outcomes", std::move(by));
      const auto closures = outcomes.find("false_closure");
      summary.set("false_closure_rate",
                  rate(closures == outcomes.end() ? 0 : closures->second, scored));
    }
    if (latency) {
      Result<json::Value> d = latency->distribution(false);
      if (!d) return d.take_diagnostics();
      summary.set("latency_ms", std::move(*d));
    }
    if (!usage.empty()) {
      json::Value u = json::Object{};
      for (auto& [key, values] : usage) {
        Result<json::Value> d = values.distribution(true);
        if (!d) return d.take_diagnostics();
        u.set(key, std::move(*d));
      }
      summary.set("usage", std::move(u));
    }
    return summary;
  }
};

SummaryBuilder::SummaryBuilder() : all_(std::make_unique<Stats>()) {}
SummaryBuilder::~SummaryBuilder() = default;

void SummaryBuilder::add(const json::Value& c) {
  all_->add(c);
  // A campaign matrix: the same statistics per column (model, preset).
  const json::Value* label = json::find_at(c, "/variant/label");
  if (label != nullptr && label->is_string()) {
    auto& group = columns_[label->as_string()];
    if (!group) group = std::make_unique<Stats>();
    group->add(c);
  }
}

void SummaryBuilder::add(std::span<const AttemptFacts> runs, bool repeated, std::string_view label,
                         const std::function<std::string()>& id) {
  all_->add(runs, repeated, id);
  if (label.empty()) return;
  auto found = columns_.find(label);
  if (found == columns_.end()) {
    found = columns_.emplace(std::string(label), std::make_unique<Stats>()).first;
  }
  found->second->add(runs, repeated, id);
}

std::optional<AttemptFacts> facts_of(const json::Value& run) {
  const auto& kOutcomes = AttemptFacts::kOutcomes;
  AttemptFacts facts;
  const json::Value* status = run.find("status");
  facts.passed = status != nullptr && status->is_string() && status->as_string() == "passed";
  if (const json::Value* o = run.find("outcome"); o != nullptr && o->is_string()) {
    const auto known = std::find(kOutcomes.begin(), kOutcomes.end(), o->as_string());
    if (known == kOutcomes.end()) return std::nullopt;
    facts.outcome = *known;
  }
  if (const json::Value* l = run.find("latency_ms"); l != nullptr && l->is_number()) {
    facts.latency_ms = l->as_number();
  }
  if (const json::Value* u = run.find("usage"); u != nullptr && u->is_object()) {
    for (const auto& m : u->as_object()) {
      const auto& keys = AttemptFacts::kUsageKeys;
      const auto key = std::find(keys.begin(), keys.end(), m.key);
      if (key == keys.end()) return std::nullopt;
      if (m.value.is_number()) facts.usage[key - keys.begin()] = m.value.as_number();
    }
  }
  return facts;
}

Result<json::Value> SummaryBuilder::finish() {
  Result<json::Value> summary = all_->summary();
  if (!summary) return summary;
  if (!columns_.empty()) {
    json::Value by = json::Object{};
    for (const auto& [label, group] : columns_) {
      Result<json::Value> column = group->summary();
      if (!column) return column;
      by.set(label, std::move(*column));
    }
    summary->set("variants", std::move(by));
  }
  return summary;
}

Result<json::Value> summarize(const json::Array& cases) {
  SummaryBuilder summary;
  for (const json::Value& c : cases) summary.add(c);
  return summary.finish();
}

Result<json::Value> merge_reports(const std::vector<std::pair<std::string, std::string>>& named) {
  diag::Diagnostics problems;
  std::optional<std::string> suite_id, suite_sha;
  std::optional<std::int64_t> count_of;
  json::Value settings_of;  // the first shard's settings
  std::string first;        // the first shard's name
  std::set<std::int64_t> indexes;
  json::Array cases;
  for (const auto& [name, bytes] : named) {
    auto fault = [&, &name = name](std::string message, std::string pointer = "") {
      auto d = diag::error(codes::kSchema, std::move(message), std::move(pointer));
      d.source = name;
      problems.push_back(std::move(d));
    };
    Result<Report> report = parse_report(bytes);
    if (!report) {
      for (auto d : report.take_diagnostics()) {
        d.source = name;
        problems.push_back(std::move(d));
      }
      continue;
    }
    const json::Value& doc = report->document;
    const json::Value* shard = doc.find("shard");
    if (shard == nullptr) {
      fault("not a shard report (no \"shard\")", "/shard");
      continue;
    }
    const std::int64_t index = *shard->find("index")->as_exact_int();
    const std::int64_t of = *shard->find("count")->as_exact_int();
    const std::string sha = doc.find("suite_sha256")->as_string();
    const json::Value* settings = shard->find("settings");
    if (settings == nullptr) {
      fault("the shard records no settings (an earlier version wrote it): run it again",
            "/shard/settings");
      continue;
    }
    if (!suite_id) {
      suite_id = report->suite_id;
      suite_sha = sha;
      count_of = of;
      settings_of = *settings;
      first = name;
    }
    // Every setting that changes what a shard holds must be the same in all of them; the first
    // that differs is named with both values.
    std::optional<std::string> differs;
    const auto differ = [&](const std::string& key, const json::Value* here,
                            const json::Value* there) {
      const std::string a = here != nullptr ? json::canonical(*here) : "absent";
      const std::string b = there != nullptr ? json::canonical(*there) : "absent";
      if (!differs && a != b) {
        differs =
            "a shard of another campaign: " + key + " is " + a + " here but " + b + " in " + first;
      }
    };
    const json::Value first_id(*suite_id), first_sha(*suite_sha);
    differ("suite_id", doc.find("suite_id"), &first_id);
    differ("suite_sha256", doc.find("suite_sha256"), &first_sha);
    for (const json::Member& m : settings->as_object()) {
      differ(setting_name(m.key), &m.value, settings_of.find(m.key));
    }
    for (const json::Member& m : settings_of.as_object()) {
      differ(setting_name(m.key), settings->find(m.key), &m.value);
    }
    if (differs) {
      fault(*differs, "/shard/settings");
    } else if (of != *count_of) {
      fault("shard of " + std::to_string(of) + ", the others are of " + std::to_string(*count_of),
            "/shard/count");
    } else if (!indexes.insert(index).second) {
      fault("shard " + std::to_string(index) + " is given twice", "/shard/index");
    }
    for (const json::Value& c : doc.find("cases")->as_array()) cases.push_back(c);
  }
  if (problems.empty() && count_of && static_cast<std::int64_t>(indexes.size()) != *count_of) {
    std::string absent;
    for (std::int64_t i = 1; i <= *count_of; ++i) {
      if (indexes.count(i) == 0) absent += (absent.empty() ? "" : ", ") + std::to_string(i);
    }
    problems.push_back(diag::error(codes::kSchema, "shard(s) " + absent + " of " +
                                                       std::to_string(*count_of) + " are missing"));
  }
  if (named.empty()) problems.push_back(diag::error(codes::kUsage, "no shard reports to merge"));
  if (!problems.empty()) return problems;
  std::sort(cases.begin(), cases.end(), [](const json::Value& a, const json::Value& b) {
    return a.find("id")->as_string() < b.find("id")->as_string();
  });
  for (std::size_t i = 1; i < cases.size(); ++i) {
    if (cases[i].find("id")->as_string() == cases[i - 1].find("id")->as_string()) {
      return diag::error(codes::kDuplicateCaseId,
                         "case \"" + cases[i].find("id")->as_string() + "\" is in two shards");
    }
  }
  json::Value merged;
  merged.set("v", 1);
  merged.set("kind", "millforge_eval_report");
  merged.set("suite_id", *suite_id);
  merged.set("suite_sha256", *suite_sha);
  Result<json::Value> summary = summarize(cases);
  if (!summary) return summary.take_diagnostics();
  merged.set("cases", std::move(cases));
  merged.set("summary", std::move(*summary));
  return merged;
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
  const auto paired =
      static_cast<std::int64_t>(out.improved.size() + out.regressed.size() + out.unchanged.size());
  const auto improved = static_cast<std::int64_t>(out.improved.size());
  const auto regressed = static_cast<std::int64_t>(out.regressed.size());
  out.mcnemar_p = mcnemar_p(improved, regressed);
  const Difference d = paired_difference(improved, regressed, paired);
  out.difference = d.estimate;
  out.difference_low = d.low;
  out.difference_high = d.high;
  const auto ratio = [](std::optional<double> a, std::optional<double> b) -> std::optional<double> {
    if (!a || !b || *a <= 0) return std::nullopt;
    return *b / *a;
  };
  out.latency_ratio = ratio(baseline.latency_median_ms, candidate.latency_median_ms);
  out.cost_ratio = ratio(baseline.cost_median_usd, candidate.cost_median_usd);
  out.candidate_false_closure_rate = candidate.false_closure_rate;
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
  v.set("mcnemar_p", c.mcnemar_p);
  v.set("pass_rate_difference",
        json::Object{{"estimate", c.difference},
                     {"ci95", json::Array{c.difference_low, c.difference_high}}});
  v.set("latency_ratio", c.latency_ratio ? json::Value(*c.latency_ratio) : json::Value(nullptr));
  v.set("cost_ratio", c.cost_ratio ? json::Value(*c.cost_ratio) : json::Value(nullptr));
  v.set("candidate_false_closure_rate", c.candidate_false_closure_rate
                                            ? json::Value(*c.candidate_false_closure_rate)
                                            : json::Value(nullptr));
  return v;
}

std::vector<std::string> gate_failures(const Comparison& c, const Gates& gates) {
  const std::int64_t max_regressions = gates.max_regressions;
  std::vector<std::string> reasons;
  if (static_cast<std::int64_t>(c.regressed.size()) > max_regressions) {
    reasons.push_back(std::to_string(c.regressed.size()) + " case(s) regressed (at most " +
                      std::to_string(max_regressions) + " allowed)");
  }
  if (!c.missing.empty()) {
    reasons.push_back(std::to_string(c.missing.size()) +
                      " baseline case(s) missing from the candidate");
  }
  const auto number = [](double v) { return json::canonical(json::Value(v)); };
  if (gates.alpha && c.regressed.size() > c.improved.size() && c.mcnemar_p < *gates.alpha) {
    reasons.push_back("a significant regression: " + std::to_string(c.regressed.size()) +
                      " regressed against " + std::to_string(c.improved.size()) +
                      " improved, McNemar p = " + number(c.mcnemar_p) + " < " +
                      number(*gates.alpha));
  }
  for (const auto& [what, ratio, limit] :
       {std::tuple{"latency", c.latency_ratio, gates.max_latency_ratio},
        std::tuple{"cost", c.cost_ratio, gates.max_cost_ratio}}) {
    if (!limit) continue;
    if (!ratio) {
      reasons.push_back(std::string("the ") + what +
                        " gate cannot be checked: a report records no median " + what);
    } else if (*ratio > *limit) {
      reasons.push_back(std::string("median ") + what + " is " + number(*ratio) +
                        " times the baseline's (at most " + number(*limit) + " allowed)");
    }
  }
  if (gates.max_false_closure_rate) {
    if (!c.candidate_false_closure_rate) {
      reasons.push_back(
          "the false-closure gate cannot be checked: the candidate has no scored plan attempt");
    } else if (*c.candidate_false_closure_rate > *gates.max_false_closure_rate) {
      reasons.push_back("false-closure rate " + number(*c.candidate_false_closure_rate) +
                        " is above " + number(*gates.max_false_closure_rate));
    }
  }
  return reasons;
}

namespace {

// Calls visit(attempt, trace_sha256, case_id, entry) for every attempt of a parsed report, in the
// report's order: case_id is the entry's id without its variant's label, entry the case's object
// or, with repeats, its element of `attempts`.
template <class F>
void each_trace(const json::Value& document, F&& visit) {
  for (const json::Value& c : document.find("cases")->as_array()) {
    const std::string& id = c.find("id")->as_string();
    std::string case_id = id;
    const json::Value* label = json::find_at(c, "/variant/label");
    if (label != nullptr && id.ends_with("." + label->as_string())) {
      case_id.resize(id.size() - label->as_string().size() - 1);
    }
    if (const json::Value* attempts = c.find("attempts")) {
      for (const json::Value& a : attempts->as_array()) {
        visit(id + "." + std::to_string(*a.find("repeat")->as_exact_int()),
              a.find("trace_sha256")->as_string(), case_id, &a);
      }
    } else {
      visit(id, c.find("trace_sha256")->as_string(), case_id, &c);
    }
  }
}

}  // namespace

std::vector<ReportTrace> report_traces(const Report& report) {
  std::vector<ReportTrace> out;
  each_trace(report.document, [&](std::string attempt, const std::string& sha256,
                                  const std::string& case_id, const json::Value* entry) {
    std::string file = attempt + ".jsonl";
    out.push_back({std::move(attempt), std::move(file), sha256, case_id, entry});
  });
  return out;
}

Result<std::vector<AttemptTrace>> report_attempt_traces(const std::string& path) {
  Result<Report> parsed = [&]() -> Result<Report> {
    auto bytes = io::read_input(path);
    if (!bytes) return bytes.take_diagnostics();
    return parse_report(*bytes);
  }();
  if (!parsed) return parsed.take_diagnostics();
  std::vector<AttemptTrace> out;
  each_trace(parsed->document, [&](std::string attempt, const std::string& sha256,
                                   const std::string&, const json::Value*) {
    AttemptTrace t{std::move(attempt), {}};
    hash::from_hex(sha256, t.trace_sha256);  // parse_report checked it is 64 lowercase hex
    out.push_back(std::move(t));
  });
  out.shrink_to_fit();
  return out;
}

}  // namespace mf::eval
