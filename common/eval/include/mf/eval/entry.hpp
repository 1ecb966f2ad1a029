// An attempt's report entry (docs/formats/eval.md, "Report"): graded from its run, and checked
// against the trace it names. A campaign grades each attempt it runs with `graded`; a resumed
// campaign checks each journaled attempt, and `mf-eval verify` each attempt of a report, with
// `disagreement`, which grades the trace again the same way, so the two cannot differ.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "mf/eval/runner.hpp"
#include "mf/eval/suite.hpp"
#include "mf/json/value.hpp"
#include "mf/runtime/run_loop.hpp"

namespace mf::eval {

// An attempt's report entry (without its id, variant or repeat) from its outcome, the facts of its
// trace (plan cases), the trace's bytes, its usage and, with a real clock, its latency.
json::Value graded(const Case& c, const runtime::RunOutcome& outcome, const PlanFacts* facts,
                   std::string_view trace, json::Value usage, std::optional<std::int64_t> latency);

// The outcome a trace's terminal event records (docs/formats/trace.md): its state, the counts, and
// a completed run's output. Nothing when the last line is not such an event.
std::optional<runtime::RunOutcome> traced_outcome(std::string_view trace);

// A trace's first event (run_started), parsed; nothing when the first line is not a JSON object.
std::optional<json::Value> traced_start(std::string_view trace);

// Why an entry is not what its trace gives.
struct Disagreement {
  // What failed: "trace_sha256" (the bytes have another digest), "trace" (the trace does not
  // verify, or has no terminal event), "entry" (a member differs from the trace's).
  std::string check;
  std::string member;   // with "entry": the first member that differs
  std::string message;  // "its trace_sha256 is not the digest of its trace (<hex>)"
};

// Why the entry `held` (without its id, variant or repeat) is not what its trace gives, when it is
// not, checked in this order: the trace's digest is the entry's trace_sha256; the trace verifies
// (trace::verify, under `mac_key` when it is not empty); the entry is what grading the trace again
// gives, with the usage and latency the entry records (a trace does not hold them). With the case
// `c` the entry is graded against its expectations, so every member is checked. Without it (no
// suite at hand) only the members the trace alone gives are: terminal, model_calls, repairs and,
// for a plan run (run_started's mode), tool_calls, disposition and violations; status, failures
// and outcome are then as the entry says.
std::optional<Disagreement> disagreement(const Case* c, std::string_view trace,
                                         const json::Value& held, const std::string& mac_key);

}  // namespace mf::eval
