// mf-run's command line read into each mode's request (command_line.hpp).
#include "mf/runtime/command_line.hpp"

#include <iostream>

#include "mf/runtime/rescue.hpp"
#include "mf/runtime/run_command.hpp"
#include "mf/text/suggest.hpp"
#include "mf/tools/command.hpp"

namespace mf::runtime {
namespace {

// mf-run tool NAME: one call through the execution boundary (mf/tools/command.hpp).
int run_tool(cli::Context& ctx, const CommandLine& o, const std::vector<std::string>& args) {
  if (int rc = cli::require(ctx, {o.workspace, o.args})) return rc;
  mf::tools::ToolCommand command;
  command.name = args[1];
  command.args = ctx.get(o.args);
  if (auto max = ctx.if_given(o.bash_log_max)) command.bash_log_max_bytes = *max;
  command.workspace = ctx.get(o.workspace);
  if (ctx.given(o.capabilities)) command.capabilities = cli::split_commas(ctx.get(o.capabilities));
  command.sandbox = ctx.get(o.sandbox, "none") == "bwrap";
  command.artifact_dir = ctx.get(o.artifacts);
  command.fixed_clock = ctx.fixed_clock(o.fixed_clock);
  command.cancel = &cli::cancellation_flag();
  return cli::finish(ctx, mf::tools::tool_command(command));
}

// mf-run rescue --tools a,b: model text (one JSON string per line) in, rescued calls out.
int run_rescue(cli::Context& ctx, const CommandLine& o) {
  if (int rc = cli::require(ctx, {o.tools})) return rc;
  return cli::finish(ctx, rescue_command(std::cin, std::cout, cli::split_commas(ctx.get(o.tools))));
}

}  // namespace

std::string check_mode(const std::vector<std::string>& args, bool task_given, bool plan_given) {
  if (!args.empty()) {
    if (args[0] == "tool") return args.size() == 2 ? "" : "tool takes exactly one NAME";
    if (args[0] == "rescue") return args.size() == 1 ? "" : "rescue takes no operands";
    return text::unknown_command(args[0], {"tool", "rescue"});
  }
  return task_given && plan_given ? "--task and --plan are two modes: give one" : "";
}

diag::CommandOutcome rescue_command(std::istream& in, std::ostream& out,
                                    const std::vector<std::string>& known_tools) {
  Status s = rescue_lines(in, out, known_tools);
  out.flush();
  return s ? diag::CommandOutcome{} : diag::CommandOutcome::stopped_by(s.diagnostics(), "<stdin>");
}

// Task mode, or plan mode (--plan): mf/runtime/run_command.hpp.
int command_line(cli::Context& ctx, const CommandLine& o) {
  const auto args = ctx.positionals();
  if (std::string why = check_mode(args, ctx.given(o.task), ctx.given(o.plan)); !why.empty()) {
    return cli::usage_error(ctx.tool, why);
  }
  if (!args.empty()) return args[0] == "tool" ? run_tool(ctx, o, args) : run_rescue(ctx, o);
  // The mode's file (given already in plan mode), the model and the trace.
  if (int rc = cli::require(ctx, {ctx.given(o.plan) ? o.plan : o.task, o.model, o.trace}))
    return rc;
  RunArgs a;
  a.task_path = ctx.get(o.task);
  a.plan_path = ctx.if_given(o.plan);
  a.model_spec = ctx.get(o.model);
  a.trace_path = ctx.get(o.trace);
  // With the trace on stdout the result is written only to an --output FILE: the trace holds it.
  a.output = ctx.get(o.output, ctx.get(o.trace) == "-" ? "" : "-");
  a.run_id = ctx.get(o.run_id);
  if (ctx.get(o.durability, "event") == "batch") a.durability = mf::trace::Durability::Batch;
  a.trace_content = *parse_trace_content(ctx.get(o.trace_content, "digest"));
  a.cache = *mf::model::parse_cache_mode(ctx.get(o.cache, "off"));
  a.repeat = ctx.get(o.repeat_index, 0);
  a.store_dir = ctx.store_dir(o.store);
  a.store_given = ctx.given(o.store);
  a.check_evidence = ctx.get(o.check_evidence);
  a.request = ctx.get(o.request);
  a.guardrails = *parse_guardrails(ctx.get(o.guardrails, "full"));
  a.deadline_ms = ctx.get(o.deadline_ms, 0);
  a.workspace = ctx.get(o.workspace, ".");
  a.artifact_dir = ctx.get(o.artifacts);
  if (ctx.given(o.capabilities)) a.capabilities = cli::split_commas(ctx.get(o.capabilities));
  a.sandbox = ctx.get(o.sandbox, "none") == "bwrap";
  a.fixed_clock = ctx.fixed_clock(o.fixed_clock);
  a.cancel = &cli::cancellation_flag();
  // The key is read after the check of the streams and before the mode's own checks.
  if (std::string why = check_streams(a); !why.empty()) return cli::usage_error(ctx.tool, why);
  if (int rc = cli::secret_from_env(ctx, o.mac_key_env, a.mac_key)) return rc;
  return cli::finish(ctx, run_command(a));
}

}  // namespace mf::runtime
