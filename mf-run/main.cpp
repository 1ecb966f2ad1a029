// mf-run: one task or one compiled plan against a model; the trace and the result (SPEC §4, §5.5).
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "mf/cli/cli.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/runtime/task_run.hpp"

namespace cli = mf::cli;
namespace po = boost::program_options;
namespace rt = mf::runtime;

namespace {

int run(cli::Context& ctx) {
  const auto& vars = ctx.vars;
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
      .usage = "mf-run [options] --task FILE --model SPEC --trace FILE|-",
      .examples =
          {
              "mf-run --task fixtures/forge/task-valid.json --model "
              "scripted:fixtures/forge/responses-valid.json --trace target/forge-valid.jsonl",
              "mf-run --task fixtures/forge/task-valid.json --model "
              "scripted:fixtures/forge/responses-repair.json --trace target/t.jsonl | jq .risk",
              "mf-run --task task.json --model scripted:r.json --run-id run-1 --fixed-clock "
              "--trace - --output result.json | mf-replay -",
          },
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
       "keep the trace, result (and responses) in this store (also MF_STORE)");                //
  return cli::run(argc, argv, tool, options, run);
}
