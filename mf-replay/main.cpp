// mf-replay: verify, summarise, strictly re-execute or fork a recorded trace (SPEC §7).
// Verification and the summary are built; strict re-execution and forks are not yet.
#include <unistd.h>

#include "mf/cli/cli.hpp"
#include "mf/io/file.hpp"
#include "mf/json/jsonl.hpp"
#include "mf/trace/verify.hpp"

namespace cli = mf::cli;
namespace po = boost::program_options;

namespace {

int verify(const cli::Context& ctx) {
  const auto args = ctx.positionals();
  if (args.size() > 1) return cli::usage_error(ctx.tool, "takes one TRACE (or '-')");
  const std::string path = args.empty() ? "-" : args[0];
  const std::string source = path == "-" ? "<stdin>" : path;

  auto summary = mf::trace::verify_file(path);
  if (!summary) return cli::report(ctx.tool, summary.diagnostics(), source);
  std::string line;
  mf::json::append_jsonl(mf::trace::to_json(*summary), line);
  if (auto written = mf::io::write_all(STDOUT_FILENO, line); !written) {
    return cli::report(ctx.tool, written.diagnostics());
  }
  if (summary->status == mf::trace::Outcome::Ok) return cli::kSuccess;
  (void)cli::report(ctx.tool, {*summary->first_error}, source);
  return cli::kFailure;
}

}  // namespace

int main(int argc, char** argv) {
  const cli::Tool tool{
      .name = "mf-replay",
      .summary =
          "Read a trace; verify its integrity; summarise it; strict re-execution from "
          "recorded observations; forked replay.",
      .usage = "mf-replay [options] TRACE|-",
      .examples =
          {
              "mf-replay target/forge-valid.jsonl",
              "mf-run --task task.json --model scripted:r.json --trace - | mf-replay -",
              "mf-replay run.jsonl | jq -r .status",
              "mf-replay --strict --plan plan.json run.jsonl         # not built yet",
              "mf-replay --fork-at 3 --responses alt.json run.jsonl  # not built yet",
          },
      .positional = "trace",
      .details =
          "Streams the trace (TRACE or '-' for stdin; stdin when omitted) and checks every\n"
          "integrity rule of docs/formats/trace.md. Prints one canonical JSON summary line on\n"
          "stdout: status (ok|incomplete|corrupt), run_id, terminal, events, model_calls, "
          "repairs,\n"
          "violations_by_kind, tool_calls, trace_sha256, first_error. A trace cut short by a "
          "crash\n"
          "is 'incomplete', not 'corrupt'. On a violation the first offending line is named on\n"
          "stderr (MF-E0xx) and the summary is still printed; exit 1.\n"
          "Exit 2 also covers a missing or unreadable TRACE (MF-S013, MF-S014).",
  };
  po::options_description options;
  options.add_options()                                                                   //
      ("strict", "re-execute from recorded observations; require an identical sequence")  //
      ("plan", po::value<std::string>()->value_name("FILE"), "the plan the trace ran")    //
      ("fork-at", po::value<long long>()->value_name("N"), "start a new run at event N")  //
      ("responses", po::value<std::string>()->value_name("FILE"),                         //
       "scripted responses for the forked run")                                           //
      ("store", po::value<std::string>()->value_name("DIR"), "content-addressed store");  //

  return cli::run(argc, argv, tool, options, [](cli::Context& ctx) {
    if (ctx.vars.count("strict") != 0) return cli::not_built(ctx.tool, "strict re-execution");
    if (ctx.vars.count("fork-at") != 0) return cli::not_built(ctx.tool, "forked replay");
    if (ctx.vars.count("plan") != 0) return cli::usage_error(ctx.tool, "--plan needs --strict");
    if (ctx.vars.count("responses") != 0) {
      return cli::usage_error(ctx.tool, "--responses needs --fork-at");
    }
    if (ctx.vars.count("store") != 0) {
      return cli::not_built(ctx.tool, "reading trace content from the store (--store)");
    }
    return verify(ctx);
  });
}
