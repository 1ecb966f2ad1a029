// The one run loop (docs/formats/task.md, docs/harness-run.md, docs/architecture.md). Task mode is
// a plan with no tools whose final answer is the assistant content checked by the output contract;
// harness mode (plan_run.hpp) runs tool turns through the same loop. It sequences model calls,
// enforces cancellation, the deadline and the budget before every call, and records every decision
// in the trace.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "mf/model/model.hpp"
#include "mf/runtime/task.hpp"
#include "mf/runtime/verifier.hpp"
#include "mf/trace/writer.hpp"

namespace mf::runtime {

// How raw model content is recorded in model_responded (docs/formats/trace.md).
enum class TraceContent : std::uint8_t {
  Digest,  // size + SHA-256 + usage (default)
  Inline,  // additionally the content itself
  None,    // size + usage only
  Store,   // like Digest, with the content itself kept in the store under that digest
};

struct RunOptions {
  TraceContent trace_content = TraceContent::Digest;
  std::string durability = "event";           // recorded in run_started
  SemanticCheck semantic;                     // optional semantic layer of the verifier
  const std::atomic<bool>* cancel = nullptr;  // SIGINT/SIGTERM flag; polled between steps
  // The run ends timed_out when a step would start after this.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  // With TraceContent::Store: keeps one raw response (call number, bytes) before it is recorded.
  std::function<Status(std::int64_t call, std::string_view content)> keep_content;
};

// completed | invalid_output | model_failed | budget_exhausted | cancelled | timed_out, and in
// harness mode tool_failed | terminal_rejected (docs/formats/trace.md, "Terminal states").
struct RunOutcome {
  std::string terminal;
  json::Value output;  // the verified output (task) or the accepted terminal (harness)
  std::int64_t model_calls = 0;
  std::int64_t repairs = 0;
  std::int64_t tool_calls = 0;  // harness mode: calls that entered the execution boundary
  std::string error;            // why a failed run ended, when it says
  // A model failure that is a rejected request (a reply-cache miss under --cache read): its
  // diagnostic code, which decides the exit status (docs/live-backends.md).
  std::string error_code{};
  // An event the trace could not take (too large for a line), recorded as a failure in its
  // place: the cause, for stderr.
  std::string unrecorded{};
  // The first cause of a run that did not succeed, as its trace records it (mf/trace/cause.hpp):
  // what stderr says of the ending.
  std::optional<trace::Cause> cause{};
  bool completed() const { return terminal == "completed"; }
};

// Runs the task to a terminal state. Fails only when the trace cannot be written (MF-O003); every
// model or output problem is an outcome, recorded in the trace.
Result<RunOutcome> run_task(const Task& task, model::Model& model, trace::Writer& trace,
                            const RunOptions& options = {});

}  // namespace mf::runtime
