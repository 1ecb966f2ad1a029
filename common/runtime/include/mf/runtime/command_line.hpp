// mf-run's command line (docs/formats/task.md, docs/harness-run.md, docs/tools.md,
// docs/rescue.md): the options mf-run/main.cpp declares, read into the request of the mode or
// subcommand given and run; the outcome mapped to stderr and an exit code.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "mf/cli/cli.hpp"
#include "mf/diag/outcome.hpp"

namespace mf::runtime {

// The handles of mf-run's options.
struct CommandLine {
  cli::Text task, plan, model, trace, output, trace_content, durability, run_id, store, mac_key_env;
  cli::Flag fixed_clock, check_evidence;
  cli::Text request, guardrails;
  cli::Number repeat_index;
  cli::Text cache;
  cli::Number deadline_ms;
  cli::Text workspace, args, capabilities, sandbox, artifacts;
  cli::Number bash_log_max;
  cli::Text tools;
};

// The subcommand or mode mf-run's operands and --task/--plan select, checked before anything else:
// `tool NAME` (exactly one NAME), `rescue` (no operand), or no operand, task or plan mode (not
// --task and --plan both). The usage message when they do not fit (an unknown subcommand named as
// text::unknown_command names it), else "".
std::string check_mode(const std::vector<std::string>& operands, bool task_given, bool plan_given);

// `mf-run rescue`: rescue_lines from `in` to `out` (flushed), its diagnostics about "<stdin>".
diag::CommandOutcome rescue_command(std::istream& in, std::ostream& out,
                                    const std::vector<std::string>& known_tools);

// `mf-run tool NAME` (mf/tools/command.hpp), `mf-run rescue` (stdin to stdout, rescue_lines), or
// task or plan mode (RunArgs, run_command): the mode's options checked in order (--task and --plan
// both, the required ones, check_streams), then --mac-key-env's key read, then the run.
int command_line(cli::Context& ctx, const CommandLine& o);

}  // namespace mf::runtime
