// `mf-run --task` and `mf-run --plan` from the command line's values (docs/formats/task.md,
// docs/harness-run.md): the checks of options that only make sense together, the run, the result
// written, and how a run that did not succeed ended. command_line.hpp reads mf-run's options and
// the trace key from the environment into RunArgs, and maps the outcome to stderr and an exit code.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mf/diag/outcome.hpp"
#include "mf/model/model.hpp"
#include "mf/runtime/plan_run.hpp"
#include "mf/runtime/run_loop.hpp"

namespace mf::runtime {

// --trace-content: digest, inline, none or store.
std::optional<TraceContent> parse_trace_content(std::string_view mode);

// mf-run's options for either mode, as given.
struct RunArgs {
  std::string task_path;                 // task mode
  std::optional<std::string> plan_path;  // plan mode when set (FILE or "-")
  std::string model_spec;
  std::string trace_path;    // FILE or "-"
  std::string output = "-";  // where the result goes: FILE, "-", or empty for nowhere
  std::string run_id;        // generated when empty
  bool fixed_clock = false;
  trace::Durability durability = trace::Durability::Event;
  TraceContent trace_content = TraceContent::Digest;
  model::CacheMode cache = model::CacheMode::Off;
  std::int64_t repeat = 0;
  std::string mac_key;          // signs the trace's terminal event when set
  std::string store_dir;        // --store, else MF_STORE; empty: none
  bool store_given = false;     // --store itself: in plan mode the store is the reply cache's only
  bool check_evidence = false;  // task mode
  // Plan mode.
  std::string workspace = ".";
  std::string artifact_dir;
  std::string request;  // FILE or inline JSON; empty: none
  Guardrails guardrails = Guardrails::Full;
  std::optional<std::vector<std::string>> capabilities;  // default: the plan's
  bool sandbox = false;
  std::int64_t deadline_ms = 0;  // 0: none
  const std::atomic<bool>* cancel = nullptr;
};

// The result and the trace cannot share stdout: the usage message, or empty.
std::string check_streams(const RunArgs& args);

// The run of either mode (check_streams first, then the mode's own checks). Task mode writes the
// verified output, and fails (a summary: task_ending) on any other terminal state; plan mode
// writes the result document whatever the ending, and fails (plan_ending) unless the run completed
// with a success disposition. A reply-cache miss under --cache read fails with its diagnostic.
diag::CommandOutcome run_command(const RunArgs& args);

// "run ended invalid_output after 2 model call(s) and 1 repair(s): output refused at $.risk:
// missing required field (trace t.jsonl, event 3)": the run's first cause (RunOutcome::cause) and
// the trace event that records it, redacted and printable; "; see the trace" for a run without one.
std::string task_ending(const RunOutcome& outcome, std::string_view trace_path = {});
// "run ended completed (blocked) after 4 model call(s) and 3 tool call(s): ..."; the disposition
// only for a completed run.
std::string plan_ending(const RunOutcome& outcome, std::string_view trace_path = {});

}  // namespace mf::runtime
