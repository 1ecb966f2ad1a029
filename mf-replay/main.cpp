// mf-replay: verify and summarise a recorded trace (docs/formats/trace.md); re-run a plan run from
// its recorded replies (--strict) or fork a new run from one (--fork-at) (docs/replay.md).
#include <cstdint>

#include "mf/cli/cli.hpp"
#include "mf/eval/command_line.hpp"
#include "mf/trace/many.hpp"

namespace cli = mf::cli;

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
  const mf::eval::ReplayCommandLine o{
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
  return cli::run(argc, argv, tool, d,
                  [&o](cli::Context& ctx) { return mf::eval::replay_command_line(ctx, o); });
}
