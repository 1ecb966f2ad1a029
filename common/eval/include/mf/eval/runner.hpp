// `mf-eval run`: every case of a suite through the one run loop on a pool of threads, each with its
// own model and in-memory trace (a plan case also with its own scratch artifact directory), graded
// against its expectations into a canonical report (docs/formats/eval.md). Under a fixed clock the
// report is a function of the suite and its inputs alone, for any number of threads.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "mf/eval/report.hpp"
#include "mf/eval/suite.hpp"
#include "mf/json/value.hpp"
#include "mf/model/model.hpp"
#include "mf/runtime/run_loop.hpp"

namespace mf::eval {

struct RunOptions {
  unsigned jobs = 1;         // threads; at least 1
  bool fixed_clock = false;  // traces carry t_ms 0 and the report omits latency_ms
  std::string run_id_prefix = "eval-";
  std::string traces_dir;  // when set, each case's trace is published as DIR/<id>.jsonl
  // Called once per finished case, serialised, with the number done so far.
  std::function<void(std::size_t done, std::size_t total)> progress;
  const std::atomic<bool>* cancel = nullptr;  // unstarted cases then end `cancelled` at once
  // Called with each finished case's trace (from worker threads, one call at a time), e.g. to keep
  // it in the store; a failure is the case's problem like a trace file that cannot be published.
  std::function<Status(const std::string& case_id, std::string_view trace)> keep_trace;
  // How live models use the reply cache (docs/live-backends.md); scripted and sim models ignore
  // it. One cache serves every thread.
  model::OpenOptions models;
};

// What a plan run's trace shows beyond its outcome: the guardrail_violation events by kind, and the
// tool of each successful tool_completed event, in trace order.
struct PlanFacts {
  std::map<std::string, std::int64_t> violations;
  std::vector<std::string> tools;
};

// Reads the facts back from the JSONL trace the run wrote.
Result<PlanFacts> plan_facts(std::string_view trace);

// The failure entries {check, expected, actual} of one run against its expectations; `actual` is
// absent when the run produced no such output field (or, for `disposition`, no accepted terminal).
// `facts` answers the plan checks (violations, tools); without it they are not checked.
json::Array grade(const Expect& expect, const runtime::RunOutcome& outcome,
                  const PlanFacts* facts = nullptr);

// A finished suite: the report document as written, and its typed view.
struct SuiteRun {
  json::Value document;  // docs/formats/eval.md
  Report report;         // suite id and each case's id and status, sorted by id
  std::size_t failed() const;
};

// Runs every case and returns the report. Fails only on I/O (a trace file that cannot be
// published) or an internal error; failed cases are part of the report.
Result<SuiteRun> run_suite(const Suite& suite, const RunOptions& options);

}  // namespace mf::eval
