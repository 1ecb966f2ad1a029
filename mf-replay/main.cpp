// mf-replay: verify and summarise a recorded trace (docs/formats/trace.md).
#include <unistd.h>

#include "mf/cli/cli.hpp"
#include "mf/io/file.hpp"
#include "mf/json/jsonl.hpp"
#include "mf/trace/verify.hpp"

namespace cli = mf::cli;

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
  return cli::report(ctx.tool, {*summary->first_error}, source, mf::diag::Job::Check);
}

}  // namespace

int main(int argc, char** argv) {
  const cli::Tool tool{
      .name = "mf-replay",
      .summary = "Read a trace, verify its integrity and summarise it, without a model.",
      .usage = "mf-replay [options] TRACE|-",
      .examples =
          {
              "mf-replay target/forge-valid.jsonl",
              "mf-run --task task.json --model scripted:r.json --trace - | mf-replay -",
              "mf-replay run.jsonl | jq -r .status",
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
  return cli::run(argc, argv, tool, cli::Options{}, verify);
}
