// mf-run: one task against a model, or one call of the tool pack; the trace and the result
// (docs/formats/task.md, docs/tools.md).
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "mf/cli/cli.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/runtime/task_run.hpp"
#include "mf/tools/command.hpp"

namespace cli = mf::cli;
namespace rt = mf::runtime;

namespace {

// The options, declared once; main() fills them in.
struct Opts {
  cli::Text task, model, trace, output, trace_content, durability, run_id, store, mac_key_env;
  cli::Flag fixed_clock, check_evidence;
  cli::Text workspace, args, capabilities, sandbox, artifacts;
  cli::Number bash_log_max;
};

std::vector<std::string> split_commas(const std::string& list) {
  std::vector<std::string> out;
  for (std::size_t start = 0; start <= list.size();) {
    std::size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    if (comma > start) out.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

// mf-run tool NAME: one call through the execution boundary; the result JSON on stdout. Exit 0
// when the tool succeeded, 1 when it returned an error result (including a refusal).
int run_tool(cli::Context& ctx, const Opts& o, const std::vector<std::string>& args) {
  if (args.size() != 2) return cli::usage_error(ctx.tool, "tool takes exactly one NAME");
  if (int rc = cli::require(ctx, {o.workspace, o.args})) return rc;
  mf::tools::ToolCommand command;
  command.name = args[1];
  command.workspace = ctx.get(o.workspace);
  command.args = ctx.get(o.args);
  if (ctx.given(o.capabilities)) command.capabilities = split_commas(ctx.get(o.capabilities));
  command.sandbox = ctx.get(o.sandbox, "none") == "bwrap";
  command.artifact_dir = ctx.get(o.artifacts);
  if (ctx.given(o.bash_log_max)) {
    command.bash_log_max_bytes = static_cast<std::size_t>(ctx.get(o.bash_log_max, 0));
  }
  command.fixed_clock = ctx.fixed_clock(o.fixed_clock);
  command.cancel = &cli::cancellation_flag();
  auto result = mf::tools::run_tool_command(command);
  if (!result) return cli::report(ctx.tool, result.diagnostics());
  mf::Status written = mf::io::write_output("-", mf::json::canonical_file(*result));
  if (!written) return cli::report(ctx.tool, written.diagnostics());
  return result->find("is_error")->as_bool() ? cli::kFailure : cli::kSuccess;
}

rt::TraceContent trace_content(const std::string& mode) {
  if (mode == "inline") return rt::TraceContent::Inline;
  if (mode == "none") return rt::TraceContent::None;
  if (mode == "store") return rt::TraceContent::Store;
  return rt::TraceContent::Digest;
}

int run(cli::Context& ctx, const Opts& o) {
  if (const auto args = ctx.positionals(); !args.empty()) {
    if (args[0] == "tool") return run_tool(ctx, o, args);
    return cli::usage_error(ctx.tool, "unknown command '" + args[0] + "' (only 'tool')");
  }
  if (int rc = cli::require(ctx, {o.task, o.model, o.trace})) return rc;
  rt::TaskRunRequest request;
  request.task_path = ctx.get(o.task);
  request.model_spec = ctx.get(o.model);
  request.trace_path = ctx.get(o.trace);
  request.run_id = ctx.get(o.run_id);
  request.fixed_clock = ctx.fixed_clock(o.fixed_clock);
  const std::string output = ctx.get(o.output, "-");
  if (request.trace_path == "-" && output == "-") {
    return cli::usage_error(ctx.tool, "--trace - needs --output FILE for the result");
  }
  if (ctx.get(o.durability, "event") == "batch") request.durability = mf::trace::Durability::Batch;
  request.trace_content = trace_content(ctx.get(o.trace_content, "digest"));
  request.check_evidence = ctx.get(o.check_evidence);
  request.store_dir = ctx.store_dir(o.store);
  if (int rc = cli::secret_from_env(ctx, o.mac_key_env, request.mac_key)) return rc;
  if (request.trace_content == rt::TraceContent::Store && request.store_dir.empty()) {
    return cli::usage_error(ctx.tool, "--trace-content store needs --store DIR (or MF_STORE)");
  }
  request.cancel = &cli::cancellation_flag();

  mf::Result<rt::RunOutcome> outcome = rt::run_task_request(request);
  if (!outcome) return cli::report(ctx.tool, outcome.diagnostics(), request.task_path);
  if (!outcome->completed()) {
    if (!ctx.quiet) {
      std::cerr << ctx.tool.name << ": run ended " << outcome->terminal << " after "
                << outcome->model_calls << " model call(s) and " << outcome->repairs
                << " repair(s); see the trace\n";
    }
    return cli::kFailure;
  }
  const std::string result = mf::json::canonical_file(outcome->output);
  mf::Status written = mf::io::write_output(output, result);
  return written ? cli::kSuccess : cli::report(ctx.tool, written.diagnostics());
}

}  // namespace

int main(int argc, char** argv) {
  const cli::Tool tool{
      .name = "mf-run",
      .summary =
          "Run one task against a model; emit the JSONL trace and print the verified result. "
          "'mf-run tool' makes one call of the tool pack.",
      .usage =
          "mf-run [options] --task FILE --model SPEC --trace FILE|-\n"
          "       mf-run tool NAME --workspace DIR --args JSON|@FILE [--capabilities CAPS] "
          "[--sandbox bwrap]",
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
              "mf-run tool read --workspace . --args '{\"path\":\"README.md\",\"limit\":5}' | "
              "jq -r '.content[0].text'",
              "mf-run tool bash --workspace /tmp/ws --args '{\"command\":\"ls\"}' --sandbox bwrap",
          },
      .positional = "operands",
      .details =
          "The verified output is printed to stdout as canonical JSON (or written to --output). A "
          "run that ends in any other terminal state (invalid_output, model_failed, "
          "budget_exhausted, cancelled) exits 1 with a complete trace. An invalid task or model "
          "script is rejected (exit 2) before the trace is created.",
  };
  cli::Options d;
  const std::vector<std::string> task{""};  // task mode: no subcommand
  const std::vector<std::string> tool_cmd{"tool"};
  Opts o{
      .task = d.text({"task", "task file (task mode)", "FILE", task}),
      .model = d.text({"model", "scripted:RESPONSES.json", "SPEC", task}),
      .trace = d.text({"trace", "where the JSONL trace goes", "FILE|-", task}),
      .output = d.text({"output", "where the result goes (default: stdout)", "FILE|-", task}),
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
      .store =
          d.text({"store", "keep the trace, result (and responses) in this store (also MF_STORE)",
                  "DIR", task}),
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
      .workspace =
          d.text({"workspace", "tool: the directory every path is confined to", "DIR", tool_cmd}),
      .args = d.text({"args", "tool: the arguments", "JSON|@FILE", tool_cmd}),
      .capabilities =
          d.text({"capabilities", "tool: granted capabilities (default: those the tool needs)",
                  "CAP,...", tool_cmd}),
      .sandbox = d.text({"sandbox",
                         "tool: run bash under bubblewrap (no network, read-only outside the "
                         "workspace)",
                         "none|bwrap",
                         tool_cmd,
                         {"none", "bwrap"}}),
      .artifacts = d.text({"artifacts", "tool: where read_artifact/write_artifact keep artifacts",
                           "DIR", tool_cmd}),
      .bash_log_max = d.number({"bash-log-max",
                                "tool: bash's full-output log keeps its last BYTES (default 8 MiB)",
                                "BYTES",
                                tool_cmd,
                                {},
                                1}),
  };
  return cli::run(argc, argv, tool, d, [&o](cli::Context& ctx) { return run(ctx, o); });
}
