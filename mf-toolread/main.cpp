// mf-toolread: root-confined, bounded source reading and searching; emits a SourceSlice (SPEC §9).
#include "mf/cli/cli.hpp"

namespace cli = mf::cli;
namespace po = boost::program_options;

int main(int argc, char** argv) {
  const cli::Tool tool{
      .name = "mf-toolread",
      .summary =
          "Root-confined, line- and byte-bounded source reading and searching; emits a "
          "SourceSlice.",
      .usage =
          "mf-toolread --root DIR --path FILE [--start-line A --end-line B]\n"
          "       mf-toolread search --root DIR --pattern TEXT",
      .examples =
          {
              "mf-toolread --root fixtures --path forge/task-valid.json --start-line 1 "
              "--end-line 20",
              "mf-toolread --root . --path src/lib.rs | jq -r .text",
              "mf-toolread search --root fixtures/repository --pattern 'panic!'",
          },
      .positional = "args",
  };
  po::options_description options;
  options.add_options()                                                                      //
      ("root", po::value<std::string>()->value_name("DIR"), "the confining root")            //
      ("path", po::value<std::string>()->value_name("FILE"), "file relative to the root")    //
      ("start-line", po::value<unsigned>()->value_name("A"), "first line (1-based)")         //
      ("end-line", po::value<unsigned>()->value_name("B"), "last line (at most 200 lines)")  //
      ("pattern", po::value<std::string>()->value_name("TEXT"), "search: what to find");     //

  return cli::run(argc, argv, tool, options, [](cli::Context& ctx) {
    const auto args = ctx.positionals();
    if (!args.empty() && args[0] == "search") {
      return cli::not_built(ctx.tool, "'mf-toolread search'");
    }
    return cli::not_built(ctx.tool, "source reading");
  });
}
