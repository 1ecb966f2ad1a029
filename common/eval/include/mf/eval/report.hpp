// Eval reports as inputs (docs/formats/eval.md): strict reading and `mf-eval compare`, which
// classifies case ids between a baseline and a candidate and applies the regression gate.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/json/value.hpp"

namespace mf::eval {

struct ReportCase {
  std::string id;
  bool passed = false;  // with repeats: every attempt passed
};

struct Report {
  std::string suite_id;
  std::vector<ReportCase> cases;             // sorted by id, unique
  json::Value document;                      // the report as read
  std::optional<double> latency_median_ms;   // summary.latency_ms.median, when recorded
  std::optional<double> false_closure_rate;  // summary.false_closure_rate, with plan attempts
  std::optional<double> cost_median_usd;     // summary.usage.cost_usd.median, when priced
  // With SummaryCheck::Collect: each summary statistic that is not what the cases give, as an
  // MF-S020 at the deepest member that differs ("/summary/variants/big/pass_rate").
  diag::Diagnostics summary_disagreements;
};

// What parse_report does with a summary statistic that is not what the cases give: refuse the
// report, or read it and list the statistic in Report::summary_disagreements (`mf-eval verify`,
// whose job is to find it). A summary of unknown members or without its counts is refused either
// way.
enum class SummaryCheck : std::uint8_t { Refuse, Collect };

// Strictly parses a report: every member checked, the summary exactly what summarize() makes of
// the cases, a case's status consistent with its failures (and, repeated, with its attempts).
Result<Report> parse_report(std::string_view bytes, SummaryCheck summary = SummaryCheck::Refuse);

// One attempt's trace as a report names it: the attempt ("<id>", repeated "<id>.<n>"), the file
// `mf-eval run --traces DIR` wrote for it ("<attempt>.jsonl" in DIR) and its trace_sha256.
struct ReportTrace {
  std::string attempt;
  std::string file;
  std::string trace_sha256;
  // The suite case it ran: the entry's id without its variant's label ("<case>.<label>").
  std::string case_id;
  // Its entry in Report::document: the case's, or with repeats its element of `attempts`.
  const json::Value* entry = nullptr;
};

// Every attempt's trace, in the report's order (cases by id, attempts by repeat); the entries point
// into `report`, which must outlive them.
std::vector<ReportTrace> report_traces(const Report& report);
// The same, kept compactly for a campaign of many attempts: the attempt (its file is
// "<attempt>.jsonl") and the trace's digest.
struct AttemptTrace {
  std::string attempt;
  hash::Digest trace_sha256{};
};
// The attempts' traces of the report file at `path`, read and checked as parse_report does. Only
// these are kept: the file's bytes are released once parsed, the document before this returns.
Result<std::vector<AttemptTrace>> report_attempt_traces(const std::string& path);

// The summary of a report's cases (docs/formats/eval.md, "Statistics"): counts, the pass rate
// and its Wilson interval; with repeats the attempt counts, pass@k, pass^k and the flaky cases;
// latency and usage medians and p90s when the cases record them.
Result<json::Value> summarize(const json::Array& cases);

// What the summary takes from one run's entry (a case's, or one attempt of a repeated case): its
// status, its outcome, its latency and its usage. A campaign takes them where each attempt
// finishes, so its summary is made without reading the entries back.
struct AttemptFacts {
  bool passed = false;
  std::string_view outcome;  // empty: none; else one of kOutcomes
  // The outcomes a plan attempt is scored by (runner.hpp), in a fixed order.
  static constexpr std::array<std::string_view, 6> kOutcomes = {
      "provider_failure",  "runtime_failure", "false_closure",
      "correctly_blocked", "false_blocked",   "valid_completion"};
  std::optional<double> latency_ms;
  // cost_usd, input_tokens, output_tokens (kUsageKeys), when the entry's usage has them
  static constexpr std::array<std::string_view, 3> kUsageKeys = {"cost_usd", "input_tokens",
                                                                 "output_tokens"};
  std::array<std::optional<double>, 3> usage;
};

// The facts of a run's entry; none when it records what they cannot hold (an outcome or a usage
// member of another name), which a run's entry made by `mf-eval run` never does.
std::optional<AttemptFacts> facts_of(const json::Value& run);

// summarize() one case at a time: add() each case entry in the report's order, then finish(). It
// keeps counts, and per attempt only the numbers the medians need, in temporary record files, so a
// campaign's summary is made without holding its entries as a tree or its numbers in memory.
class SummaryBuilder {
 public:
  SummaryBuilder();
  ~SummaryBuilder();
  SummaryBuilder(const SummaryBuilder&) = delete;
  SummaryBuilder& operator=(const SummaryBuilder&) = delete;
  void add(const json::Value& case_entry);
  // The same for a case given by its runs' facts: one without repeats, or its attempts in repeat
  // order; `label` its variant's ("" for none) and `id` its id, asked for only when it is flaky.
  void add(std::span<const AttemptFacts> runs, bool repeated, std::string_view label,
           const std::function<std::string()>& id);
  // Fails only when a temporary file for the numbers cannot be made, written or read.
  Result<json::Value> finish();

 private:
  struct Stats;
  std::unique_ptr<Stats> all_;
  std::map<std::string, std::unique_ptr<Stats>, std::less<>> columns_;  // by variant label
};

// `mf-eval merge`: the shard reports of one campaign (same suite, the same `shard.settings`, every
// shard of one count exactly once) as the one report a single run would have written. A setting
// that differs is named with both values.
Result<json::Value> merge_reports(const std::vector<std::pair<std::string, std::string>>& named);

struct Comparison {
  std::vector<std::string> improved;         // failed -> passed
  std::vector<std::string> regressed;        // passed -> failed
  std::vector<std::string> unchanged;        // same status in both
  std::vector<std::string> missing;          // in the baseline only
  std::vector<std::string> added;            // in the candidate only ("new")
  std::optional<double> baseline_pass_rate;  // passed / cases; none for an empty report
  std::optional<double> candidate_pass_rate;
  // Over the cases in both: the exact McNemar p of improved against regressed, and the paired
  // difference of pass rates (candidate minus baseline) with its 95% interval.
  double mcnemar_p = 1;
  double difference = 0, difference_low = 0, difference_high = 0;
  // Candidate over baseline: the summaries' median latency and median cost per attempt, when both
  // reports record them.
  std::optional<double> latency_ratio;
  std::optional<double> cost_ratio;
  std::optional<double> candidate_false_closure_rate;
};

Comparison compare(const Report& baseline, const Report& candidate);
json::Value to_json(const Comparison& c);

struct Gates {
  std::int64_t max_regressions = 0;
  std::optional<double> alpha;              // fail on a significant regression (McNemar p < alpha)
  std::optional<double> max_latency_ratio;  // fail when the latency ratio is above, or unknown
  std::optional<double> max_cost_ratio;     // fail when the cost ratio is above, or unknown
  // fail when the candidate's false-closure rate is above, or unknown (no plan attempts)
  std::optional<double> max_false_closure_rate;
};

// The gate: fails when more than `max_regressions` cases regressed, any baseline case is missing
// from the candidate, or a statistical gate given fails. Returns the reasons, empty when it passes.
std::vector<std::string> gate_failures(const Comparison& c, const Gates& gates);

}  // namespace mf::eval
