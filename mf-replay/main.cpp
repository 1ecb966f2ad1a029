// mf-replay: verify, summarise, strictly re-execute or fork a recorded trace (SPEC §7).
#include "mf/cli/cli.hpp"

namespace cli = mf::cli;
namespace po = boost::program_options;

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
              "mf-replay --strict --plan plan.json run.jsonl",
              "mf-replay --fork-at 3 --responses alternative.json run.jsonl > forked.jsonl",
          },
      .positional = "trace",
  };
  po::options_description options;
  options.add_options()                                                                   //
      ("strict", "re-execute from recorded observations; require an identical sequence")  //
      ("plan", po::value<std::string>()->value_name("FILE"), "the plan the trace ran")    //
      ("fork-at", po::value<long long>()->value_name("N"), "start a new run at event N")  //
      ("responses", po::value<std::string>()->value_name("FILE"),                         //
       "scripted responses for the forked run")                                           //
      ("store", po::value<std::string>()->value_name("DIR"), "content-addressed store");  //

  return cli::run(argc, argv, tool, options,
                  [](cli::Context& ctx) { return cli::not_built(ctx.tool, "trace replay"); });
}
