// mf-replay: verify and summarise a recorded trace (docs/formats/trace.md).
#include <unistd.h>

#include "mf/cli/cli.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/io/file.hpp"
#include "mf/json/jsonl.hpp"
#include "mf/trace/verify.hpp"

namespace cli = mf::cli;

namespace {

struct Opts {
  cli::Text mac_key_env, expect_sha256;
};

int verify(const cli::Context& ctx, const Opts& o) {
  const auto args = ctx.positionals();
  if (args.size() > 1) return cli::usage_error(ctx.tool, "takes one TRACE (or '-')");
  const std::string path = args.empty() ? "-" : args[0];
  const std::string source = path == "-" ? "<stdin>" : path;

  mf::trace::VerifyOptions options;
  if (int rc = cli::secret_from_env(ctx, o.mac_key_env, options.mac_key)) return rc;
  options.expect_sha256 = ctx.get(o.expect_sha256);
  mf::hash::Digest parsed{};
  if (ctx.given(o.expect_sha256) && !mf::hash::from_hex(options.expect_sha256, parsed)) {
    return cli::usage_error(ctx.tool, "--expect-sha256 takes 64 lowercase hex digits");
  }
  auto summary = mf::trace::verify_file(path, options);
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
              "mf-replay --expect-sha256 \"$(mf-store --store s ref get run/r1/trace)\" run.jsonl",
              "MF_TRACE_KEY=... mf-replay --mac-key-env MF_TRACE_KEY run.jsonl",
          },
      .positional = "trace",
      .details =
          "Streams the trace (TRACE or '-' for stdin; stdin when omitted) and checks every\n"
          "integrity rule of docs/formats/trace.md. Prints one canonical JSON summary line on\n"
          "stdout: status (ok|incomplete|corrupt), run_id, terminal, events, model_calls,\n"
          "repairs, violations_by_kind, tool_calls, trace_sha256, mac, first_error. Each line\n"
          "names the SHA-256 of the line before it, so an edited, dropped or moved line breaks\n"
          "the chain; --expect-sha256 (a digest recorded elsewhere, e.g. the store's run ref)\n"
          "and --mac-key-env (the HMAC a keyed mf-run put in the terminal event) prove the\n"
          "whole trace. A trace cut short by a crash is 'incomplete', not 'corrupt'. On a\n"
          "violation the first offending line is named on stderr (MF-E0xx) and the summary is\n"
          "still printed; exit 1.\n"
          "Exit 2 also covers a missing or unreadable TRACE (MF-S013, MF-S014).",
  };
  cli::Options d;
  const Opts o{
      .mac_key_env = d.text({"mac-key-env",
                             "the terminal event's hmac_sha256 must be right under the key in this "
                             "environment variable",
                             "NAME"}),
      .expect_sha256 = d.text({"expect-sha256", "the trace's bytes must have this SHA-256", "HEX"}),
  };
  return cli::run(argc, argv, tool, d, [&o](cli::Context& ctx) { return verify(ctx, o); });
}
