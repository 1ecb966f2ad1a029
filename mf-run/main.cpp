// mf-run: one task or one compiled plan against a model; the trace and the result (SPEC §4, §5.5).
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "mf/cli/cli.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/runtime/task_run.hpp"
#include "mf/tools/command.hpp"

namespace cli = mf::cli;
namespace po = boost::program_options;
namespace rt = mf::runtime;

namespace {

// mf-run tool NAME: one call through the execution boundary; the result JSON on stdout. Exit 0
// when the tool succeeded, 1 when it returned an error result (including a refusal).
int run_tool(cli::Context& ctx, const std::vector<std::string>& args) {
  if (args.size() != 2) return cli::usage_error(ctx.tool, "tool takes exactly one NAME");
  for (const char* required : {"workspace", "args"}) {
    if (ctx.vars.count(required) == 0) {
      return cli::usage_error(ctx.tool, std::string("tool needs --") + required);
    }
  }
  mf::tools::ToolCommand command;
  command.name = args[1];
  command.workspace = ctx.get("workspace");
  command.args = ctx.get("args");
  if (ctx.vars.count("capabilities") != 0) {
    std::vector<std::string> caps;
    const std::string list = ctx.get("capabilities");
    for (std::size_t start = 0; start <= list.size();) {
      std::size_t comma = list.find(',', start);
      if (comma == std::string::npos) comma = list.size();
      if (comma > start) caps.push_back(list.substr(start, comma - start));
      start = comma + 1;
    }
    command.capabilities = std::move(caps);
  }
  const std::string sandbox = ctx.get("sandbox", "none");
  if (sandbox != "none" && sandbox != "bwrap") {
    return cli::usage_error(ctx.tool, "--sandbox must be none or bwrap");
  }
  command.sandbox = sandbox == "bwrap";
  command.artifact_dir = ctx.get("artifacts");
  command.fixed_clock = ctx.fixed_clock();
  command.cancel = &cli::cancellation_flag();
  auto result = mf::tools::run_tool_command(command);
  if (!result) return cli::report(ctx.tool, result.diagnostics());
  mf::Status written = mf::io::write_output("-", mf::json::canonical_file(*result));
  if (!written) return cli::report(ctx.tool, written.diagnostics());
  return result->find("is_error")->as_bool() ? cli::kFailure : cli::kSuccess;
}

int run(cli::Context& ctx) {
  const auto& vars = ctx.vars;
  if (const auto args = ctx.positionals(); !args.empty()) {
    if (args[0] == "tool") return run_tool(ctx, args);
    return cli::usage_error(ctx.tool, "unknown command '" + args[0] + "' (only 'tool')");
  }
  if (vars.count("plan") != 0) return cli::not_built(ctx.tool, "harness mode (--plan)");
  for (const char* required : {"task", "model", "trace"}) {
    if (vars.count(required) == 0) {
      return cli::usage_error(ctx.tool, std::string("--") + required + " is required");
    }
  }
  rt::TaskRunRequest request;
  request.task_path = ctx.get("task");
  request.model_spec = ctx.get("model");
  request.trace_path = ctx.get("trace");
  request.run_id = ctx.get("run-id");
  request.fixed_clock = ctx.fixed_clock();
  const std::string output = ctx.get("output", "-");
  if (request.trace_path == "-" && output == "-") {
    return cli::usage_error(ctx.tool, "--trace - needs --output FILE for the result");
  }
  const std::string durability = ctx.get("durability", "event");
  if (durability == "batch") {
    request.durability = mf::trace::Durability::Batch;
  } else if (durability != "event") {
    return cli::usage_error(ctx.tool, "--durability must be event or batch");
  }
  const std::string content = ctx.get("trace-content", "digest");
  if (content == "inline") {
    request.trace_content = rt::TraceContent::Inline;
  } else if (content == "none") {
    request.trace_content = rt::TraceContent::None;
  } else if (content == "store") {
    request.trace_content = rt::TraceContent::Store;
  } else if (content != "digest") {
    return cli::usage_error(ctx.tool, "--trace-content must be digest, inline, none or store");
  }
  request.check_evidence = vars.count("check-evidence") != 0;
  request.store_dir = ctx.store_dir();
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
          "Run one task or one compiled plan against a model (scripted or live); emit the "
          "JSONL trace and print the verified result.",
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
  po::options_description options;
  options.add_options()                                                                        //
      ("task", po::value<std::string>()->value_name("FILE"), "task file (task mode)")          //
      ("plan", po::value<std::string>()->value_name("FILE|-"), "compiled plan to run")         //
      ("model", po::value<std::string>()->value_name("SPEC"),                                  //
       "scripted:RESPONSES.json (openai:PROFILE.json later)")                                  //
      ("trace", po::value<std::string>()->value_name("FILE|-"), "where the JSONL trace goes")  //
      ("output", po::value<std::string>()->value_name("FILE|-"),                               //
       "where the result goes (default: stdout)")                                              //
      ("trace-content", po::value<std::string>()->value_name("MODE"),                          //
       "digest (default: size + SHA-256 + usage), inline, none, or store")                     //
      ("durability", po::value<std::string>()->value_name("event|batch"),                      //
       "fdatasync after every event (default) or in batches")                                  //
      ("run-id", po::value<std::string>()->value_name("ID"), "fixed run id")                   //
      ("fixed-clock", "every t_ms is 0 (deterministic mode; also MF_FIXED_CLOCK=1)")           //
      ("check-evidence",                                                                       //
       "semantic layer: `evidence` must be path:start-end inside input.repository")            //
      ("store", po::value<std::string>()->value_name("DIR"),                                   //
       "keep the trace, result (and responses) in this store (also MF_STORE)")                 //
      ("workspace", po::value<std::string>()->value_name("DIR"),                               //
       "tool: the directory every path is confined to")                                        //
      ("args", po::value<std::string>()->value_name("JSON|@FILE"), "tool: the arguments")      //
      ("capabilities", po::value<std::string>()->value_name("CAP,..."),                        //
       "tool: granted capabilities (default: those the tool needs)")                           //
      ("sandbox", po::value<std::string>()->value_name("none|bwrap"),                          //
       "tool: run bash under bubblewrap (no network, read-only outside the workspace)")        //
      ("artifacts", po::value<std::string>()->value_name("DIR"),                               //
       "tool: where read_artifact/write_artifact keep artifacts");                             //
  return cli::run(argc, argv, tool, options, run);
}
