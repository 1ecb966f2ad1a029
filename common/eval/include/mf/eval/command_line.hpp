// The command lines of mf-eval (docs/formats/eval.md) and mf-replay (docs/replay.md): the options
// their main.cpp declares, read into CommandArgs (command.hpp) or ReplayArgs (replay.hpp) and run
// with the progress line of the work; the outcome mapped to stderr and an exit code.
#pragma once

#include "mf/cli/cli.hpp"

namespace mf::eval {

// The handles of mf-eval's options.
struct CommandLine {
  cli::Text suite, output, traces, run_id_prefix, store, cache, shard, journal, mac_key_env, format;
  cli::Text trace_content;
  cli::Texts models, presets, cases, tags;
  cli::Text baseline, candidate, alpha, max_latency_ratio, max_cost_ratio, max_false_closure;
  cli::Text min_pass_rate;
  cli::Number jobs, repeat, case_timeout, max_regressions;
  cli::Flag fixed_clock, resume;
};

// Every option as given into CommandArgs (--case and --tags split at commas), then command(); a
// progress line "mf-eval <progress_label>" drawn while a campaign runs, ended before the summary.
int command_line(cli::Context& ctx, const CommandLine& o);

// The handles of mf-replay's options.
struct ReplayCommandLine {
  cli::Text mac_key_env, expect_sha256;
  cli::Flag strict;
  cli::Number fork_at;
  cli::Text plan, responses, trace, workspace, artifacts, run_id;
  cli::Flag fixed_clock;
  cli::Text exported;
  cli::Number start_unix_ms;
  cli::Number max_line_bytes, jobs;
  cli::Text report, store;
};

// Every operand and option as given into ReplayArgs, then replay_command() with stdout for the
// summary lines; each trace of many that did not pass named on stderr as it is found; the progress
// line "mf-replay <what>" of a verification ended before the outcome is reported.
int replay_command_line(cli::Context& ctx, const ReplayCommandLine& o);

}  // namespace mf::eval
