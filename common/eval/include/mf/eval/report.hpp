// Eval reports as inputs (docs/formats/eval.md): strict reading and `mf-eval compare`, which
// classifies case ids between a baseline and a candidate and applies the regression gate.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"

namespace mf::eval {

struct ReportCase {
  std::string id;
  bool passed = false;
};

struct Report {
  std::string suite_id;
  std::vector<ReportCase> cases;  // sorted by id, unique
};

// Strictly parses a report: every member checked, summary consistent with the cases, a case's
// status consistent with its failures.
Result<Report> parse_report(std::string_view bytes);

struct Comparison {
  std::vector<std::string> improved;         // failed -> passed
  std::vector<std::string> regressed;        // passed -> failed
  std::vector<std::string> unchanged;        // same status in both
  std::vector<std::string> missing;          // in the baseline only
  std::vector<std::string> added;            // in the candidate only ("new")
  std::optional<double> baseline_pass_rate;  // passed / cases; none for an empty report
  std::optional<double> candidate_pass_rate;
};

Comparison compare(const Report& baseline, const Report& candidate);
json::Value to_json(const Comparison& c);

// The gate: fails when more than `max_regressions` cases regressed or any baseline case is missing
// from the candidate. Returns the reasons, empty when the gate passes.
std::vector<std::string> gate_failures(const Comparison& c, std::int64_t max_regressions);

}  // namespace mf::eval
