// mf-replay: verify and summarise a recorded trace (docs/formats/trace.md); re-run a plan run from
// its recorded replies (--strict) or fork a new run from one (--fork-at) (docs/replay.md).
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <iostream>

#include "mf/cli/cli.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/jsonl.hpp"
#include "mf/runtime/replay.hpp"
#include "mf/trace/otlp.hpp"
#include "mf/trace/verify.hpp"

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
  cli::Number max_line_bytes;
};

// --export otlp-json: the verified trace as OTLP/JSON spans on stdout.
int export_otlp(cli::Context& ctx, const Opts& o, const std::string& path) {
  const std::string source = path == "-" ? "<stdin>" : path;
  mf::Result<std::string> bytes = mf::io::read_input(path, 256u << 20);
  if (!bytes) return cli::report(ctx.tool, bytes.diagnostics(), source);
  auto summary = mf::trace::verify(*bytes);
  if (!summary) return cli::report(ctx.tool, summary.diagnostics(), source);
  if (summary->status == mf::trace::Outcome::Corrupt) {
    return cli::report(ctx.tool, {*summary->first_error}, source, mf::diag::Job::Check);
  }
  // Times: t_ms after --start-unix-ms, else after the moment the last event was written (the
  // file's modification time, or now for stdin) less the run's length.
  std::int64_t start = ctx.get(o.start_unix_ms, -1);
  if (start < 0) {
    std::int64_t last = 0;
    const auto end = bytes->find_last_of('\n', bytes->size() >= 2 ? bytes->size() - 2 : 0);
    if (auto line = mf::json::parse(bytes->substr(end == std::string::npos ? 0 : end + 1))) {
      if (const auto* t = line->find("t_ms")) last = t->as_exact_int().value_or(0);
    }
    struct stat st {};
    std::int64_t written_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count();
    if (path != "-" && ::stat(path.c_str(), &st) == 0) {
      written_ms =
          static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000;
    }
    start = written_ms - last;
  }
  auto spans = mf::trace::to_otlp(*bytes, start);
  if (!spans) return cli::report(ctx.tool, spans.diagnostics(), source);
  mf::Status w = mf::io::write_output("-", mf::json::canonical_file(*spans));
  if (!w) return cli::report(ctx.tool, w.diagnostics());
  return cli::kSuccess;
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
  const std::string source = path == "-" ? "<stdin>" : path;
  if (ctx.get(o.strict)) {
    if (ctx.given(o.fork_at)) return cli::usage_error(ctx.tool, "--strict or --fork-at, not both");
    auto summary = rt::strict_replay(from);
    if (!summary) return cli::report(ctx.tool, summary.diagnostics(), source);
    mf::Status w = mf::io::write_output("-", mf::json::canonical_file(*summary));
    if (!w) return cli::report(ctx.tool, w.diagnostics());
    if (rt::identical(*summary)) return cli::kSuccess;
    const auto& d = *summary->find("first_difference");
    std::cerr << ctx.tool.name << ": replay diverges at seq " << mf::json::canonical(*d.find("seq"))
              << ": expected " << mf::json::canonical(*d.find("expected")) << ", got "
              << mf::json::canonical(*d.find("actual")) << " (member "
              << mf::json::canonical(*d.find("member")) << ")\n";
    return cli::kFailure;
  }
  if (int rc = cli::require(ctx, {o.responses, o.trace})) return rc;
  rt::ForkRequest fork;
  fork.from = from;
  fork.fork_seq = ctx.get(o.fork_at, 0);
  fork.model_spec = ctx.get(o.responses);
  if (fork.model_spec.find(':') == std::string::npos)
    fork.model_spec = "scripted:" + fork.model_spec;
  fork.trace_path = ctx.get(o.trace);
  fork.run_id = ctx.get(o.run_id);
  fork.fixed_clock = ctx.fixed_clock(o.fixed_clock);
  if (fork.trace_path == "-") return cli::usage_error(ctx.tool, "--trace - : the result is stdout");
  bool success = false;
  auto result = rt::fork_run(fork, &success);
  if (!result) return cli::report(ctx.tool, result.diagnostics(), source);
  mf::Status w = mf::io::write_output("-", mf::json::canonical_file(*result));
  if (!w) return cli::report(ctx.tool, w.diagnostics());
  return success ? cli::kSuccess : cli::kFailure;
}

int verify(cli::Context& ctx, const Opts& o) {
  const auto args = ctx.positionals();
  if (args.size() > 1) return cli::usage_error(ctx.tool, "takes one TRACE (or '-')");
  const std::string path = args.empty() ? "-" : args[0];
  const std::string source = path == "-" ? "<stdin>" : path;
  if (ctx.given(o.exported)) {
    if (ctx.get(o.strict) || ctx.given(o.fork_at)) {
      return cli::usage_error(ctx.tool, "--export with --strict or --fork-at");
    }
    return export_otlp(ctx, o, path);
  }
  if (ctx.get(o.strict) || ctx.given(o.fork_at)) return rerun(ctx, o, path);

  mf::trace::VerifyOptions options;
  if (int rc = cli::secret_from_env(ctx, o.mac_key_env, options.mac_key)) return rc;
  options.expect_sha256 = ctx.get(o.expect_sha256);
  options.max_line_bytes =
      static_cast<std::size_t>(ctx.get(o.max_line_bytes, std::int64_t{mf::json::kMaxHeldBytes}));
  mf::hash::Digest parsed{};
  if (ctx.given(o.expect_sha256) && !mf::hash::from_hex(options.expect_sha256, parsed)) {
    return cli::usage_error(ctx.tool, "--expect-sha256 takes 64 lowercase hex digits");
  }
  auto summary = mf::trace::verify_file(path, options);
  if (!summary) return cli::report(ctx.tool, summary.diagnostics(), source);
  std::string line;
  mf::json::append_jsonl(mf::trace::to_json(*summary), line);
  if (auto written = mf::io::write_all(STDOUT_FILENO, line); !written) {
    return cli::report(ctx.tool, written.diagnostics());
  }
  if (summary->status == mf::trace::Outcome::Ok) return cli::kSuccess;
  return cli::report(ctx.tool, {*summary->first_error}, source, mf::diag::Job::Check);
}

}  // namespace

int main(int argc, char** argv) {
  const cli::Tool tool{
      .name = "mf-replay",
      .summary = "Read a trace, verify its integrity and summarise it, without a model.",
      .usage =
          "mf-replay [options] TRACE|-\n"
          "       mf-replay --strict --plan PLAN [--workspace DIR] TRACE\n"
          "       mf-replay --fork-at SEQ --responses FILE --plan PLAN --trace NEW TRACE\n"
          "       mf-replay --export otlp-json [--start-unix-ms MS] TRACE",
      .examples =
          {
              "mf-replay target/forge-valid.jsonl",
              "mf-run --task task.json --model scripted:r.json --trace - | mf-replay -",
              "mf-replay run.jsonl | jq -r .status",
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
          "Exit 2 also covers a missing or unreadable TRACE (MF-S013, MF-S014).\n"
          "--strict re-runs a plan run (recorded with --trace-content inline) from its recorded\n"
          "replies, executing the tools again in --workspace, and requires the same event\n"
          "sequence (time, the chain and tool durations aside); it prints {status, events,\n"
          "first_difference} and exits 1 naming the first differing event. --fork-at SEQ starts\n"
          "a new run that reuses the replies recorded before event SEQ and asks the --responses\n"
          "model after it; its trace (--trace, a new file) names parent_run_id and fork_seq, and\n"
          "the original is never changed. --export otlp-json prints the verified trace as\n"
          "OpenTelemetry spans (OTLP/JSON, GenAI conventions: the run, each model call and\n"
          "each tool call); a corrupt trace is refused (exit 1).",
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
      .trace = d.text({"trace", "--fork-at: where the new run's trace goes", "FILE"}),
      .workspace =
          d.text({"workspace", "--strict/--fork-at: the tools' workspace (default: .)", "DIR"}),
      .artifacts = d.text({"artifacts",
                           "--strict/--fork-at: the artifact directory (default: a "
                           "scratch one when the run had one)",
                           "DIR"}),
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
  };
  return cli::run(argc, argv, tool, d, [&o](cli::Context& ctx) { return verify(ctx, o); });
}
