// The command lines of mf-eval and mf-replay read into their commands' arguments
// (command_line.hpp).
#include "mf/eval/command_line.hpp"

#include <unistd.h>

#include <memory>

#include "mf/eval/command.hpp"
#include "mf/eval/replay.hpp"

namespace mf::eval {
namespace {

// A progress line kept by the callbacks drawing on it, so it ends when the work lets go of them.
std::shared_ptr<cli::ProgressLine> progress_line(const cli::Context& ctx,
                                                 const std::string& label) {
  return std::make_shared<cli::ProgressLine>(ctx.progress(), ctx.tool.name + " " + label);
}

}  // namespace

int command_line(cli::Context& ctx, const CommandLine& o) {
  const CommandArgs a{
      .operands = ctx.positionals(),
      .suite = ctx.if_given(o.suite),
      .output = ctx.if_given(o.output),
      .traces = ctx.if_given(o.traces),
      .run_id_prefix = ctx.if_given(o.run_id_prefix),
      .cache = ctx.if_given(o.cache),
      .shard = ctx.if_given(o.shard),
      .journal = ctx.if_given(o.journal),
      .format = ctx.if_given(o.format),
      .trace_content = ctx.if_given(o.trace_content),
      .store = ctx.if_given(o.store),
      .store_dir = ctx.store_dir(o.store),
      .mac_key_env = ctx.if_given(o.mac_key_env),
      .models = ctx.get(o.models),
      .presets = ctx.get(o.presets),
      .cases = cli::split_commas(ctx.get(o.cases)),
      .tags = cli::split_commas(ctx.get(o.tags)),
      .baseline = ctx.if_given(o.baseline),
      .candidate = ctx.if_given(o.candidate),
      .alpha = ctx.if_given(o.alpha),
      .max_latency_ratio = ctx.if_given(o.max_latency_ratio),
      .max_cost_ratio = ctx.if_given(o.max_cost_ratio),
      .max_false_closure_rate = ctx.if_given(o.max_false_closure),
      .min_pass_rate = ctx.if_given(o.min_pass_rate),
      .jobs = ctx.if_given(o.jobs),
      .repeat = ctx.if_given(o.repeat),
      .case_timeout_ms = ctx.if_given(o.case_timeout),
      .max_regressions = ctx.if_given(o.max_regressions),
      .fixed_clock = ctx.fixed_clock(o.fixed_clock),
      .resume = ctx.get(o.resume),
      .cancel = &cli::cancellation_flag(),
      .progress = [&ctx](const std::string& label) -> std::function<void(std::string_view)> {
        auto line = progress_line(ctx, label);
        if (!line->enabled()) return {};
        return [line](std::string_view text) { line->draw(text); };
      }};
  return cli::finish(ctx, command(a));
}

int replay_command_line(cli::Context& ctx, const ReplayCommandLine& o) {
  ReplayArgs a;
  a.operands = ctx.positionals();
  a.mac_key_env = ctx.if_given(o.mac_key_env);
  a.expect_sha256 = ctx.if_given(o.expect_sha256);
  a.strict = ctx.get(o.strict);
  a.fork_at = ctx.if_given(o.fork_at);
  a.plan = ctx.if_given(o.plan);
  a.responses = ctx.if_given(o.responses);
  a.trace = ctx.if_given(o.trace);
  a.workspace = ctx.if_given(o.workspace);
  a.artifacts = ctx.if_given(o.artifacts);
  a.run_id = ctx.if_given(o.run_id);
  a.fixed_clock_given = ctx.get(o.fixed_clock);
  a.fixed_clock = ctx.fixed_clock(o.fixed_clock);
  a.exported = ctx.if_given(o.exported);
  a.start_unix_ms = ctx.if_given(o.start_unix_ms);
  a.max_line_bytes = ctx.if_given(o.max_line_bytes);
  a.jobs = ctx.if_given(o.jobs);
  a.report = ctx.if_given(o.report);
  a.store_given = ctx.given(o.store);
  a.store_dir = ctx.store_dir(o.store);
  a.cancel = &cli::cancellation_flag();
  a.on_error = [&ctx](const diag::Diagnostic& d) {
    cli::report(ctx.tool, {d}, {}, diag::Job::Check);
  };
  a.progress = [&ctx](const std::string& what, const std::string& unit) -> trace::Progress {
    auto line = progress_line(ctx, what);
    auto draw = unit.empty() ? line->bytes() : line->counts(unit);
    if (!draw) return {};
    return [line, draw](std::uint64_t done, std::uint64_t total) { draw(done, total); };
  };
  return cli::finish(ctx, replay_command(a, STDOUT_FILENO));
}

}  // namespace mf::eval
