// mf-run: one task or one compiled plan against a model, one call of the tool pack, or the rescue
// of tool calls from model text; the trace and the result (docs/formats/task.md,
// docs/harness-run.md, docs/tools.md, docs/rescue.md).
#include "mf/cli/cli.hpp"
#include "mf/runtime/command_line.hpp"
#include "mf/runtime/plan_run.hpp"

namespace cli = mf::cli;

int main(int argc, char** argv) {
  const cli::Tool tool{
      .name = "mf-run",
      .summary =
          "Run one task or one compiled plan against a model; emit the JSONL trace and print the "
          "result. 'mf-run tool' makes one call of the tool pack; 'mf-run rescue' reads tool "
          "calls out of model text.",
      .usage =
          "mf-run [options] --task FILE --model SPEC --trace FILE|-\n"
          "       mf-run [options] --plan FILE|- --model SPEC --trace FILE|- [--workspace DIR] "
          "[--artifacts DIR]\n"
          "       mf-run tool NAME --workspace DIR --args JSON|@FILE [--capabilities CAPS] "
          "[--sandbox bwrap]\n"
          "       mf-run rescue --tools NAME,...",
      .examples =
          {
              "mf-run --task fixtures/forge/task-valid.json --model "
              "scripted:fixtures/forge/responses-valid.json --trace target/forge-valid.jsonl",
              "mf-run --task fixtures/forge/task-valid.json --model "
              "scripted:fixtures/forge/responses-repair.json --trace target/t.jsonl | jq .risk",
              "mf-run --task task.json --model scripted:r.json --run-id run-1 --fixed-clock "
              "--trace - --output result.json | mf-replay -",
              "MF_TRACE_KEY=... mf-run --task task.json --model scripted:r.json --trace t.jsonl "
              "--mac-key-env MF_TRACE_KEY",
              "mf-compile fixtures/harness/golden.yaml --catalog fixtures/harness/catalog.json "
              "--profiles fixtures/harness/profiles.json -o - > plan.json",
              "mf-run --plan plan.json --model scripted:fixtures/harness/runs/golden-ok.json "
              "--workspace fixtures/repository --artifacts out/ --trace run.jsonl | jq .terminal",
              "mf-run --plan plan.json --model 'sim:fixtures/harness/runs/golden-ok.json?seed=7&"
              "faults=0.3' --guardrails no_rescue --fixed-clock --run-id r1 --trace run.jsonl",
              "mf-compile fixtures/harness/projected/projected.yaml -o - > projected.json && "
              "mf-run --plan projected.json --model "
              "scripted:fixtures/harness/projected/run-ok.json --request "
              "fixtures/harness/projected/request.json --workspace fixtures/repository --trace "
              "run.jsonl && jq -c 'select(.event == \"projection_compiled\") | .visible' run.jsonl",
              "mf-run --task fixtures/forge/task-valid.json --model "
              "openai:fixtures/profiles/local.json --trace t.jsonl",
              "mf-run --task task.json --model openai:profile.json --cache write --store st "
              "--repeat-index 2 --trace t.jsonl",
              "echo '\"{\\\"name\\\": \\\"read\\\", \\\"arguments\\\": {}}\"' | mf-run rescue "
              "--tools read,ls",
              "mf-run tool read --workspace . --args '{\"path\":\"README.md\",\"limit\":5}' | "
              "jq -r '.content[0].text'",
              "mf-run tool bash --workspace /tmp/ws --args '{\"command\":\"ls\"}' --sandbox bwrap",
          },
      .positional = "operands",
      .details =
          "Task mode prints the verified output to stdout as canonical JSON (or writes it to "
          "--output); a run that ends in any other terminal state (invalid_output, model_failed, "
          "budget_exhausted, cancelled) exits 1 with a complete trace. Plan mode prints the run's "
          "result document (terminal, accepted terminal with its artifacts' digests, counts) "
          "whatever the ending, and exits 0 only when the run completed with a success "
          "disposition. A plan compiled with a projection section shows each model turn only "
          "the tools and guidance that turn's projection selects; a call of a bound tool the turn "
          "hid is corrected as not_visible (docs/projection.md). An invalid task, plan, request "
          "or model script, or a first turn whose mandatory prompt units do not fit the "
          "projection budget (MF-P005), is rejected (exit 2) before the trace is created. "
          "SIGINT/SIGTERM end a run cancelled with a complete "
          "trace. Live models (openai:, anthropic:) call the network only with such a profile, "
          "read their key from the environment variable the profile names, and with --cache "
          "read replay recorded replies without the network or a key; a reply never recorded "
          "ends the run model_failed and exits 1, naming it (docs/live-backends.md).",
      .command_lines = {{"tool", "make one call of the tool pack in a workspace"},
                        {"rescue", "read tool calls out of model text on stdin"}},
  };
  cli::Options d;
  const std::vector<std::string> task{""};  // task and plan mode: no subcommand
  const std::vector<std::string> tool_cmd{"tool"};
  const std::vector<std::string> tool_or_run{"", "tool"};
  const mf::runtime::CommandLine o{
      .task = d.text({"task", "task file (task mode)", "FILE", task}),
      .plan = d.text({"plan", "compiled plan (harness mode)", "FILE|-", task}),
      .model = d.text({"model",
                       "scripted:RESPONSES.json, sim:TRAJECTORY.json?seed=S&faults=R, "
                       "openai:PROFILE.json or anthropic:PROFILE.json",
                       "SPEC", task}),
      .trace = d.text({.name = "trace",
                       .help = "where the JSONL trace goes",
                       .value = "FILE|-",
                       .commands = task,
                       .path = cli::Path::OutFile}),
      .output = d.text({.name = "output",
                        .help = "where the result goes (default: stdout; none with --trace -)",
                        .value = "FILE|-",
                        .commands = task,
                        .path = cli::Path::OutFile}),
      .trace_content = d.text({"trace-content",
                               "digest (default: size + SHA-256 + usage), inline, none, or store",
                               "MODE",
                               task,
                               {"digest", "inline", "none", "store"}}),
      .durability = d.text({"durability",
                            "fdatasync after every event (default) or in batches",
                            "event|batch",
                            task,
                            {"event", "batch"}}),
      .run_id = d.text({"run-id", "fixed run id", "ID", task}),
      .store = d.text({.name = "store",
                       .help = "task: keep the trace, result (and responses) in this store; with "
                               "--cache: the store the cache uses (also MF_STORE; default "
                               ".mf/store)",
                       .value = "DIR",
                       .commands = task,
                       .path = cli::Path::Store}),
      .mac_key_env = d.text({"mac-key-env",
                             "sign the trace: its terminal event carries an HMAC-SHA256 under the "
                             "key in this environment variable",
                             "NAME", task}),
      .fixed_clock =
          d.flag({"fixed-clock", "every t_ms is 0 (deterministic mode; also MF_FIXED_CLOCK=1)"}),
      .check_evidence = d.flag({"check-evidence",
                                "semantic layer: `evidence` must be path:start-end inside "
                                "input.repository",
                                "", task}),
      .request = d.text({"request",
                         "plan: the run's request {\"instruction\", \"context\"} (a file, or "
                         "inline JSON)",
                         "FILE|JSON", task}),
      .guardrails =
          d.text({"guardrails", "plan: full (default), or switch one mechanism off for ablations",
                  "PRESET", task, mf::runtime::guardrail_names()}),
      .repeat_index = d.number({"repeat-index",
                                "the sample index (default 0): live models' reply cache keys "
                                "on it beside the request, a sim model draws as seed S+N",
                                "N",
                                task,
                                {},
                                0}),
      .cache = d.text({"cache",
                       "live models: the reply cache in the store; read never calls the network "
                       "and a miss fails the run (exit 1)",
                       "MODE",
                       task,
                       {"off", "read", "write", "readwrite"}}),
      .deadline_ms = d.number(
          {"deadline-ms", "plan: end the run timed_out after this long", "MS", task, {}, 1}),
      .workspace = d.text({.name = "workspace",
                           .help = "the directory every tool path is confined to (plan default: .)",
                           .value = "DIR",
                           .commands = tool_or_run,
                           .path = cli::Path::InDir}),
      .args = d.text({"args", "tool: the arguments", "JSON|@FILE", tool_cmd}),
      .capabilities =
          d.text({"capabilities", "granted capabilities (default: those the tool or plan needs)",
                  "CAP,...", tool_or_run}),
      .sandbox = d.text({"sandbox",
                         "run bash under bubblewrap (no network, read-only outside the "
                         "workspace)",
                         "none|bwrap",
                         tool_or_run,
                         {"none", "bwrap"}}),
      .artifacts = d.text({.name = "artifacts",
                           .help = "where artifact tools keep artifacts (plan: and where "
                                   "terminal acceptance finds them); it must exist",
                           .value = "DIR",
                           .commands = tool_or_run,
                           .path = cli::Path::OutDir}),
      .bash_log_max = d.number({"bash-log-max",
                                "tool: bash's full-output log keeps its last BYTES (default 8 MiB)",
                                "BYTES",
                                tool_cmd,
                                {},
                                1}),
      .tools = d.text({"tools", "rescue: the tool names a call may name", "NAME,...", {"rescue"}}),
  };
  return cli::run(argc, argv, tool, d,
                  [&o](cli::Context& ctx) { return mf::runtime::command_line(ctx, o); });
}
