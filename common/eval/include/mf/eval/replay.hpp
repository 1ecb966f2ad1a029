// `mf-replay` from the command line's values (docs/replay.md): one trace verified, exported
// (trace/command.hpp) or run again (runtime/replay.hpp); many traces, of operands or of an eval
// report (campaign_traces.hpp). It lives here, above the trace, runtime and eval layers it
// dispatches to. command_line.hpp reads mf-replay's options into ReplayArgs and maps the outcome
// to stderr and an exit code.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "mf/diag/outcome.hpp"
#include "mf/trace/many.hpp"
#include "mf/trace/verify.hpp"

namespace mf::eval {

// mf-replay's operands and options, as given.
struct ReplayArgs {
  std::vector<std::string> operands;       // TRACE|- (none: stdin), or TRACE|DIR..., or DIR
  std::optional<std::string> mac_key_env;  // the variable holding the trace's HMAC key
  std::optional<std::string> expect_sha256;
  bool strict = false;
  std::optional<std::int64_t> fork_at;
  std::optional<std::string> plan, responses, trace, workspace, artifacts, run_id;
  bool fixed_clock_given = false;  // --fixed-clock itself
  bool fixed_clock = false;        // --fixed-clock or MF_FIXED_CLOCK=1
  std::optional<std::string> exported;
  std::optional<std::int64_t> start_unix_ms, max_line_bytes, jobs;
  std::optional<std::string> report;
  bool store_given = false;
  std::string store_dir;  // --store, else $MF_STORE
  const std::atomic<bool>* cancel = nullptr;
  // Told each trace of many that did not pass, as it is found.
  trace::OnTraceError on_error;
  // The progress of a verification labelled with what it verifies (the trace, "<stdin>", "a.jsonl
  // and 2 more", the report): a callback drawing the traces done of all when `unit` is "traces",
  // the bytes read when it is empty; or an empty one. Its line ends when its last copy goes, before
  // replay_command returns.
  std::function<trace::Progress(const std::string& what, const std::string& unit)> progress;
};

// The usage message when an option for one trace (a digest, stdin, a re-run or an export) is given
// with many traces, else "".
std::string check_many(const ReplayArgs& args);

// Many traces (several operands, a directory, --report or --store): verify_many_command over the
// operands' traces, or campaign_traces_command over --report's, its DIR operand or the store. One
// trace: --export (export_otlp_command), --strict or --fork-at (strict_replay_command,
// fork_command), else verify_command. Every summary line goes to `out_fd`.
diag::CommandOutcome replay_command(const ReplayArgs& args, int out_fd);

}  // namespace mf::eval
