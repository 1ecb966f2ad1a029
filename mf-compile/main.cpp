// mf-compile: harness source + tool catalog + model profiles -> compiled plan (SPEC §5.2, §5.3).
#include "mf/cli/cli.hpp"

namespace cli = mf::cli;
namespace po = boost::program_options;

int main(int argc, char** argv) {
  const cli::Tool tool{
      .name = "mf-compile",
      .summary =
          "Compile a harness source (YAML or JSON) with a tool catalog and model profiles "
          "into a compiled plan (canonical JSON) and diagnostics.",
      .usage =
          "mf-compile [options] HARNESS|-\n       mf-compile project [options] --plan PLAN "
          "--query TEXT",
      .examples =
          {
              "mf-compile harness.yaml --catalog tools.json --out plans/",
              "mf-compile harness.yaml -o - | mf-run --plan - --model scripted:responses.json "
              "--trace run.jsonl",
              "mf-compile project --plan plan.json --query 'find the panic paths'",
          },
      .positional = "args",
  };
  po::options_description options;
  options.add_options()                                                                       //
      ("catalog", po::value<std::string>()->value_name("FILE"),                               //
       "tool catalog (JSON descriptors; default: the built-in catalog)")                      //
      ("profiles", po::value<std::string>()->value_name("FILE"), "model profiles")            //
      ("out,o", po::value<std::string>()->value_name("DIR|-"),                                //
       "publish the plan into DIR, or print it to stdout with '-'")                           //
      ("store", po::value<std::string>()->value_name("DIR"), "also put the plan in a store")  //
      ("plan", po::value<std::string>()->value_name("FILE"), "project: the compiled plan")    //
      ("query", po::value<std::string>()->value_name("TEXT"), "project: the turn's input");   //

  return cli::run(argc, argv, tool, options, [](cli::Context& ctx) {
    const auto args = ctx.positionals();
    if (!args.empty() && args[0] == "project") {
      return cli::not_built(ctx.tool, "prompt projection ('mf-compile project')");
    }
    return cli::not_built(ctx.tool, "harness compilation");
  });
}
