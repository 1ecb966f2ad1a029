// mf-eval: run suites of cases into reports, compare and merge reports with gates (SPEC §8).
#include "mf/cli/cli.hpp"

namespace cli = mf::cli;
namespace po = boost::program_options;

int main(int argc, char** argv) {
  const cli::Tool tool{
      .name = "mf-eval",
      .summary =
          "Run a suite of cases (in parallel, resumable, shardable) into a report; compare "
          "two reports with gates.",
      .usage =
          "mf-eval run --suite FILE --output FILE [options]\n"
          "       mf-eval compare --baseline FILE --candidate FILE [gates]\n"
          "       mf-eval merge --output FILE REPORT...",
      .examples =
          {
              "mf-eval run --suite fixtures/forge/eval-suite.json --output target/forge-eval.json",
              "mf-eval run --suite suite.json --output shard-1.json -j 8 --shard 1/4 --store "
              "shared-store",
              "mf-eval compare --baseline main.json --candidate pr.json --max-regressions 0",
          },
      .positional = "args",
  };
  po::options_description options;
  options.add_options()                                                                       //
      ("suite", po::value<std::string>()->value_name("FILE"), "run: the suite of cases")      //
      ("output", po::value<std::string>()->value_name("FILE"), "run, merge: the report")      //
      ("jobs,j", po::value<unsigned>()->value_name("N"), "run: cases in parallel")            //
      ("shard", po::value<std::string>()->value_name("I/N"), "run: this shard's cases only")  //
      ("store", po::value<std::string>()->value_name("DIR"), "content-addressed store")       //
      ("baseline", po::value<std::string>()->value_name("FILE"), "compare: the reference")    //
      ("candidate", po::value<std::string>()->value_name("FILE"), "compare: the new report")  //
      ("max-regressions", po::value<unsigned>()->value_name("N"),                             //
       "compare: gate on the number of regressed cases");                                     //

  return cli::run(argc, argv, tool, options, [](cli::Context& ctx) {
    const auto args = ctx.positionals();
    if (args.empty()) return cli::usage_error(ctx.tool, "missing COMMAND (run, compare, merge)");
    if (args[0] == "run" || args[0] == "compare" || args[0] == "merge") {
      return cli::not_built(ctx.tool, "'mf-eval " + args[0] + "'");
    }
    return cli::usage_error(ctx.tool, "unknown command '" + args[0] + "'");
  });
}
