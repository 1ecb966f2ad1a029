// mf-audit: run the product end to end and hash its capability receipts into one report (SPEC §10).
#include "mf/cli/cli.hpp"

namespace cli = mf::cli;
namespace po = boost::program_options;

int main(int argc, char** argv) {
  const cli::Tool tool{
      .name = "mf-audit",
      .summary =
          "Execute the product end to end and hash its capability receipts into one exit "
          "report.",
      .usage = "mf-audit --fixtures DIR --out DIR [--expect-sha256 DIGEST]",
      .examples =
          {
              "mf-audit --fixtures fixtures --out target/audit",
              "mf-audit --fixtures fixtures --out target/audit --expect-sha256 \"$(cat "
              "audit.sha256)\"",
          },
  };
  po::options_description options;
  options.add_options()                                                               //
      ("fixtures", po::value<std::string>()->value_name("DIR"), "the fixtures tree")  //
      ("out", po::value<std::string>()->value_name("DIR"),                            //
       "where exit-report.json and the run artifacts go")                             //
      ("expect-sha256", po::value<std::string>()->value_name("DIGEST"),               //
       "exit 1 unless the report's digest is DIGEST");                                //

  return cli::run(argc, argv, tool, options,
                  [](cli::Context& ctx) { return cli::not_built(ctx.tool, "the exit audit"); });
}
