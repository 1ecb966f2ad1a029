// mf-run: one task or one compiled plan against a model; the trace and the result (SPEC §4, §5.5).
#include "mf/cli/cli.hpp"

namespace cli = mf::cli;
namespace po = boost::program_options;

int main(int argc, char** argv) {
  const cli::Tool tool{
      .name = "mf-run",
      .summary =
          "Run one task or one compiled plan against a model (scripted or live); emit the "
          "JSONL trace and the result.",
      .usage = "mf-run [options] (--task FILE | --plan FILE|-) --model SPEC --trace FILE|-",
      .examples =
          {
              "mf-run --task fixtures/forge/task-valid.json --model "
              "scripted:fixtures/forge/responses-valid.json --trace target/forge-valid.jsonl",
              "mf-run --task task.json --model scripted:responses.json --trace t.jsonl | jq .risk",
              "mf-compile h.yaml -o - | mf-run --plan - --model openai:profile.json --trace "
              "run.jsonl",
          },
  };
  po::options_description options;
  options.add_options()                                                                        //
      ("task", po::value<std::string>()->value_name("FILE"), "task file (task mode)")          //
      ("plan", po::value<std::string>()->value_name("FILE|-"), "compiled plan to run")         //
      ("model", po::value<std::string>()->value_name("SPEC"),                                  //
       "scripted:RESPONSES.json or openai:PROFILE.json")                                       //
      ("trace", po::value<std::string>()->value_name("FILE|-"), "where the JSONL trace goes")  //
      ("trace-content", po::value<std::string>()->value_name("inline|store|none"),             //
       "where raw model content lives (default: none)")                                        //
      ("durability", po::value<std::string>()->value_name("event|batch"),                      //
       "fdatasync after every event (default) or in batches")                                  //
      ("run-id", po::value<std::string>()->value_name("ID"), "fixed run id")                   //
      ("fixed-clock", "every t_ms is 0 (deterministic mode; also MF_FIXED_CLOCK=1)")           //
      ("store", po::value<std::string>()->value_name("DIR"), "content-addressed store");       //

  return cli::run(argc, argv, tool, options,
                  [](cli::Context& ctx) { return cli::not_built(ctx.tool, "the run loop"); });
}
