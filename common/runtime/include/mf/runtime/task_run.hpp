// `mf-run --task`: load and validate every input before the trace exists, then run the loop.
#pragma once

#include <atomic>
#include <string>

#include "mf/runtime/run_loop.hpp"

namespace mf::runtime {

struct TaskRunRequest {
  std::string task_path;
  std::string model_spec;  // scripted:FILE, openai:PROFILE, anthropic:PROFILE
  // Live models: the reply cache (kept in the store at store_dir, or the default store) and the
  // sample index it keys on (docs/live-backends.md).
  model::CacheMode cache = model::CacheMode::Off;
  std::int64_t repeat = 0;
  std::string trace_path;  // FILE or "-"
  std::string run_id;      // generated when empty
  bool fixed_clock = false;
  trace::Durability durability = trace::Durability::Event;
  TraceContent trace_content = TraceContent::Digest;
  // Semantic layer: `evidence` as path:start-end under input.repository.
  bool check_evidence = false;
  // With a store (docs/store.md): the trace and the result are put there after the run and named
  // by refs run/<run_id>/trace and run/<run_id>/result; with TraceContent::Store each raw response
  // is put before it is recorded, named run/<run_id>/response/<call>. The trace must be a file.
  std::string store_dir;
  // Non-empty: the trace's terminal event carries an HMAC-SHA256 under this key.
  std::string mac_key;
  const std::atomic<bool>* cancel = nullptr;
};

// Rejections (invalid task or model script, unwritable trace) come back as diagnostics before any
// event is written; a run that started always ends in an outcome with a complete trace.
Result<RunOutcome> run_task_request(const TaskRunRequest& request);

// "run-" + 16 random hex digits.
std::string new_run_id();

}  // namespace mf::runtime
