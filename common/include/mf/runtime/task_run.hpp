// `mf-run --task`: load and validate every input before the trace exists, then run the loop.
#pragma once

#include <atomic>
#include <string>

#include "mf/runtime/run_loop.hpp"

namespace mf::runtime {

struct TaskRunRequest {
  std::string task_path;
  std::string model_spec;  // scripted:FILE
  std::string trace_path;  // FILE or "-"
  std::string run_id;      // generated when empty
  bool fixed_clock = false;
  trace::Durability durability = trace::Durability::Event;
  TraceContent trace_content = TraceContent::Digest;
  bool check_evidence =
      false;  // semantic layer: `evidence` as path:start-end under input.repository
  const std::atomic<bool>* cancel = nullptr;
};

// Rejections (invalid task or model script, unwritable trace) come back as diagnostics before any
// event is written; a run that started always ends in an outcome with a complete trace.
Result<RunOutcome> run_task_request(const TaskRunRequest& request);

// "run-" + 16 random hex digits.
std::string new_run_id();

}  // namespace mf::runtime
