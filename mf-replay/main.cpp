// mf-replay: verify and summarise a recorded trace (docs/formats/trace.md); re-run a plan run from
// its recorded replies (--strict) or fork a new run from one (--fork-at) (docs/replay.md).
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "mf/cli/cli.hpp"
#include "mf/eval/campaign_traces.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/runtime/replay.hpp"
#include "mf/trace/command.hpp"
#include "mf/trace/many.hpp"

namespace cli = mf::cli;

namespace {

struct Opts {
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

// The progress line of a verification, labelled with what it verifies: "N/M traces" of many, the
// bytes of one ("12.0 MiB of 40.0 MiB"). Ended (reset) before the outcome is reported.
struct Progress {
  std::optional<cli::ProgressLine> line;
  Progress(const cli::Context& ctx, const std::string& what) {
    line.emplace(ctx.progress(), "mf-replay " + what);
  }
  mf::trace::Progress traces() { return line->counts("traces"); }
  mf::trace::Progress bytes() { return line->bytes(); }
  int finish(const cli::Context& ctx, const mf::diag::CommandOutcome& outcome) {
    line.reset();
    return cli::finish(ctx, outcome);
  }
};

// The options every verification takes, one trace or many: the MAC key and the line bound.
int verify_options(cli::Context& ctx, const Opts& o, mf::trace::VerifyOptions& options) {
  if (int rc = cli::secret_from_env(ctx, o.mac_key_env, options.mac_key)) return rc;
  if (auto max = ctx.if_given(o.max_line_bytes)) {
    options.max_line_bytes = static_cast<std::size_t>(*max);
  }
  return 0;
}

// --strict and --fork-at: the loop again, from the recorded replies.
int rerun(cli::Context& ctx, const Opts& o, const std::string& path) {
  if (int rc = cli::require(ctx, {o.plan})) return rc;
  namespace rt = mf::runtime;
  rt::ReplayRequest from;
  from.trace_path = path;
  from.plan_path = ctx.get(o.plan);
  from.workspace = ctx.get(o.workspace, ".");
  from.artifact_dir = ctx.get(o.artifacts);
  from.cancel = &cli::cancellation_flag();
  if (ctx.get(o.strict)) {
    if (ctx.given(o.fork_at)) return cli::usage_error(ctx.tool, "--strict or --fork-at, not both");
    return cli::finish(ctx, rt::strict_replay_command(from));
  }
  if (int rc = cli::require(ctx, {o.responses, o.trace})) return rc;
  rt::ForkRequest fork;
  fork.from = from;
  fork.fork_seq = ctx.get(o.fork_at, 0);
  fork.model_spec = ctx.get(o.responses);
  fork.trace_path = ctx.get(o.trace);
  fork.run_id = ctx.get(o.run_id);
  fork.fixed_clock = ctx.fixed_clock(o.fixed_clock);
  return cli::finish(ctx, rt::fork_command(fork));
}

// Many traces: several TRACE operands, a directory's *.jsonl, or the attempts of an eval report
// (--report REPORT DIR, DIR being where `mf-eval run --traces` wrote them, or --store).
int verify_many(cli::Context& ctx, const Opts& o, const std::vector<std::string>& args) {
  // What names one trace's digest, reads stdin, or re-runs or exports one trace.
  const std::initializer_list<const cli::OptionBase*> single = {
      &o.expect_sha256, &o.strict,    &o.fork_at, &o.plan,        &o.responses, &o.trace,
      &o.workspace,     &o.artifacts, &o.run_id,  &o.fixed_clock, &o.exported,  &o.start_unix_ms};
  for (const cli::OptionBase* one : single) {
    if (ctx.given(*one)) return cli::usage_error(ctx.tool, "--" + one->name() + " takes one TRACE");
  }
  for (const std::string& a : args) {
    if (a == "-") return cli::usage_error(ctx.tool, "'-' (stdin) is one TRACE, not one of many");
  }
  mf::trace::VerifyOptions options;
  if (int rc = verify_options(ctx, o, options)) return rc;
  const auto jobs = static_cast<std::size_t>(ctx.get(o.jobs, 0));
  const auto on_error = [&ctx](const mf::diag::Diagnostic& d) {
    cli::report(ctx.tool, {d}, {}, mf::diag::Job::Check);
  };
  if (!ctx.given(o.report)) {
    if (ctx.given(o.store)) return cli::usage_error(ctx.tool, "--store takes --report");
    auto listed = mf::trace::operand_traces(args);
    if (!listed) return cli::report(ctx.tool, listed.diagnostics());
    Progress progress(
        ctx, args[0] + (args.size() > 1 ? " and " + std::to_string(args.size() - 1) + " more"
                                        : std::string()));
    return progress.finish(
        ctx, mf::trace::verify_many_command(*listed, options, jobs, STDOUT_FILENO, on_error,
                                            progress.traces()));
  }
  // DIR, else --store, else $MF_STORE; DIR and --store both is ambiguous.
  const mf::eval::CampaignTraces from{ctx.get(o.report), args.size() == 1 ? args[0] : "",
                                      args.empty() ? ctx.store_dir(o.store) : ""};
  if (args.size() > 1 || (args.empty() ? from.store.empty() : ctx.given(o.store))) {
    return cli::usage_error(ctx.tool, "--report takes one DIR, where its traces are, or --store");
  }
  Progress progress(ctx, from.report);
  return progress.finish(ctx, mf::eval::campaign_traces_command(from, options, jobs, STDOUT_FILENO,
                                                                on_error, progress.traces()));
}

int verify(cli::Context& ctx, const Opts& o) {
  const auto args = ctx.positionals();
  std::error_code ec;
  if (args.size() > 1 || ctx.given(o.report) || ctx.given(o.store) ||
      (args.size() == 1 && std::filesystem::is_directory(args[0], ec))) {
    return verify_many(ctx, o, args);
  }
  const std::string path = args.empty() ? "-" : args[0];
  if (ctx.given(o.exported)) {
    if (ctx.get(o.strict) || ctx.given(o.fork_at)) {
      return cli::usage_error(ctx.tool, "--export with --strict or --fork-at");
    }
    return cli::finish(ctx, mf::trace::export_otlp_command(path, ctx.if_given(o.start_unix_ms)));
  }
  if (ctx.get(o.strict) || ctx.given(o.fork_at)) return rerun(ctx, o, path);

  mf::trace::VerifyOptions options;
  if (int rc = verify_options(ctx, o, options)) return rc;
  options.expect_sha256 = ctx.get(o.expect_sha256);
  mf::hash::Digest parsed{};
  if (ctx.given(o.expect_sha256) && !mf::hash::from_hex(options.expect_sha256, parsed)) {
    return cli::usage_error(ctx.tool, "--expect-sha256 takes 64 lowercase hex digits");
  }
  Progress progress(ctx, path == "-" ? "<stdin>" : path);
  return progress.finish(ctx,
                         mf::trace::verify_command(path, options, STDOUT_FILENO, progress.bytes()));
}

}  // namespace

int main(int argc, char** argv) {
  const cli::Tool tool{
      .name = "mf-replay",
      .summary = "Read a trace, verify its integrity and summarise it, without a model.",
      .usage =
          "mf-replay [options] TRACE|-\n"
          "       mf-replay [-j N] [--mac-key-env NAME] TRACE|DIR TRACE|DIR...\n"
          "       mf-replay [-j N] --report REPORT DIR|--store STORE\n"
          "       mf-replay --strict --plan PLAN [--workspace DIR] TRACE\n"
          "       mf-replay --fork-at SEQ --responses FILE --plan PLAN --trace NEW TRACE\n"
          "       mf-replay --export otlp-json [--start-unix-ms MS] TRACE",
      .examples =
          {
              "mf-replay target/forge-valid.jsonl",
              "mf-run --task task.json --model scripted:r.json --trace - | mf-replay -",
              "mf-replay run.jsonl | jq -r .status",
              "mf-replay a.jsonl b.jsonl",
              "mf-replay -j 4 traces/ | jq -r 'select(.status != \"ok\") | .path'",
              "mf-replay --report report.json traces/",
              "mf-replay -j 8 --report report.json --store .mf/store",
              "mf-replay --expect-sha256 \"$(mf-store --store s ref get run/r1/trace)\" run.jsonl",
              "MF_TRACE_KEY=... mf-replay --mac-key-env MF_TRACE_KEY run.jsonl",
              "mf-replay --strict --plan plan.json --workspace fixtures/repository run.jsonl",
              "mf-replay --fork-at 9 --responses alt.json --plan plan.json run.jsonl --trace "
              "fork.jsonl",
              "mf-replay --export otlp-json run.jsonl | curl -s -H 'Content-Type: "
              "application/json' --data-binary @- http://localhost:4318/v1/traces",
          },
      .positional = "operands",
      .details =
          "Streams the trace (TRACE or '-' for stdin; stdin when omitted) and checks every\n"
          "integrity rule of docs/formats/trace.md. Prints one canonical JSON summary line on\n"
          "stdout: status (ok|incomplete|corrupt), run_id, terminal, events, model_calls,\n"
          "repairs, violations_by_kind, tool_calls, trace_sha256, mac, first_error. Each line\n"
          "names the SHA-256 of the line before it, so an edited, dropped or moved line breaks\n"
          "the chain; --expect-sha256 (a digest recorded elsewhere, e.g. the store's run ref)\n"
          "and --mac-key-env (the HMAC a keyed mf-run put in the terminal event) prove the\n"
          "whole trace. A trace cut short by a crash is 'incomplete', not 'corrupt'. Memory\n"
          "stays flat: one line is held at a time, at most --max-line-bytes. On a\n"
          "violation the first offending line is named on stderr (MF-E0xx) and the summary is\n"
          "still printed; exit 1.\n"
          "With one TRACE, exit 2 also covers a missing or unreadable TRACE (MF-S013, MF-S014).\n"
          "--strict re-runs a plan run (recorded with --trace-content inline) from its recorded\n"
          "replies, executing the tools again in --workspace, and requires the same event\n"
          "sequence (time, the chain and tool durations aside); it prints {status, events,\n"
          "first_difference} and exits 1 naming the first differing event. --fork-at SEQ starts\n"
          "a new run that reuses the replies recorded before event SEQ and asks the --responses\n"
          "model after it; its trace (--trace, a new file) names parent_run_id and fork_seq, and\n"
          "the original is never changed. --export otlp-json prints the verified trace as\n"
          "OpenTelemetry spans (OTLP/JSON, GenAI conventions: the run, each model call and\n"
          "each tool call); a corrupt trace is refused (exit 1).\n"
          "Many traces (several operands, a DIR's *.jsonl sorted by name, or --report with the\n"
          "DIR `mf-eval run --traces` wrote or the --store of `mf-eval run --store`) give one "
          "line\n"
          "each, in operand order for any -j: the summary with \"path\" (\"object\", its digest,\n"
          "from a store; and \"attempt\", whose trace_sha256 it must have, with --report); one\n"
          "that cannot be read is {path|object, status: \"unreadable\", first_error}; then each\n"
          "*.jsonl in DIR the report does not name, {path, status: \"extra\"}. Exit 1 when any\n"
          "did not pass. The options for one trace are refused with many (docs/replay.md).",
  };
  cli::Options d;
  const Opts o{
      .mac_key_env = d.text({"mac-key-env",
                             "the terminal event's hmac_sha256 must be right under the key in this "
                             "environment variable",
                             "NAME"}),
      .expect_sha256 = d.text({"expect-sha256", "the trace's bytes must have this SHA-256", "HEX"}),
      .strict = d.flag({"strict",
                        "re-run the plan run from its recorded replies; require the "
                        "identical event sequence"}),
      .fork_at = d.number({"fork-at",
                           "start a new run that reuses the replies recorded before "
                           "this event",
                           "SEQ",
                           {},
                           {},
                           1}),
      .plan = d.text({"plan", "--strict/--fork-at: the plan the run used", "FILE"}),
      .responses = d.text({"responses",
                           "--fork-at: the model after the fork (a scripted file, "
                           "or a model spec)",
                           "FILE|SPEC"}),
      .trace = d.text({.name = "trace",
                       .help = "--fork-at: where the new run's trace goes",
                       .value = "FILE",
                       .path = cli::Path::OutFile}),
      .workspace = d.text({.name = "workspace",
                           .help = "--strict/--fork-at: the tools' workspace (default: .)",
                           .value = "DIR",
                           .path = cli::Path::InDir}),
      .artifacts = d.text({.name = "artifacts",
                           .help = "--strict/--fork-at: the artifact directory (default: a "
                                   "scratch one when the run had one)",
                           .value = "DIR",
                           .path = cli::Path::OutDir}),
      .run_id = d.text({"run-id", "--fork-at: the new run's id", "ID"}),
      .fixed_clock = d.flag({"fixed-clock", "--fork-at: every t_ms is 0 (also MF_FIXED_CLOCK=1)"}),
      .exported =
          d.text({"export", "print the trace in another format", "FORMAT", {}, {"otlp-json"}}),
      .start_unix_ms = d.number({"start-unix-ms",
                                 "--export: the run's start, in ms since the epoch (default: the "
                                 "file's modification time less the run's length)",
                                 "MS",
                                 {},
                                 {},
                                 0}),
      .max_line_bytes = d.number({"max-line-bytes",
                                  "the longest line accepted, held whole while it is checked "
                                  "(default 16777216, 16 MiB)",
                                  "N",
                                  {},
                                  {},
                                  1}),
      .jobs = d.number({"jobs,j",
                        "many traces: how many are verified at once (default: the number of "
                        "cores; at most 64)",
                        "N",
                        {},
                        {},
                        1,
                        static_cast<std::int64_t>(mf::trace::kMaxJobs)}),
      .report = d.text({"report",
                        "verify the trace of every attempt of this eval report, in DIR or the "
                        "store, against its trace_sha256",
                        "REPORT"}),
      .store = d.text({.name = "store",
                       .help = "--report: the store holding the traces (else $MF_STORE)",
                       .value = "DIR",
                       .path = cli::Path::InDir}),
  };
  return cli::run(argc, argv, tool, d, [&o](cli::Context& ctx) { return verify(ctx, o); });
}
