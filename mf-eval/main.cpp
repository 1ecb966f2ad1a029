// mf-eval: run suites of cases into reports; compare reports with gates (docs/formats/eval.md).
#include <cstdlib>
#include <iostream>
#include <mutex>

#include "mf/cli/cli.hpp"
#include "mf/eval/report.hpp"
#include "mf/eval/runner.hpp"
#include "mf/eval/suite.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/model/live.hpp"
#include "mf/store/refs.hpp"
#include "mf/store/store.hpp"

namespace cli = mf::cli;
namespace eval = mf::eval;

namespace {

struct Opts {
  cli::Text suite, output, traces, run_id_prefix, store, cache, baseline, candidate;
  cli::Number jobs, max_regressions;
  cli::Flag fixed_clock;
};

int run(cli::Context& ctx, const Opts& o) {
  if (int rc = cli::require(ctx, {o.suite, o.output})) return rc;
  eval::RunOptions options;
  options.jobs = static_cast<unsigned>(ctx.get(o.jobs, 1));
  options.fixed_clock = ctx.fixed_clock(o.fixed_clock);
  options.traces_dir = ctx.get(o.traces);
  options.run_id_prefix = ctx.get(o.run_id_prefix, options.run_id_prefix);
  options.cancel = &cli::cancellation_flag();
  if (ctx.progress()) {
    options.progress = [](std::size_t done, std::size_t total) {
      std::cerr << "\rmf-eval: case " << done << '/' << total << (done == total ? "\n" : "")
                << std::flush;
    };
  }

  const std::string suite_path = ctx.get(o.suite);
  mf::Result<eval::Suite> suite = eval::load_suite(suite_path);
  if (!suite) return cli::report(ctx.tool, suite.diagnostics(), suite_path);
  const std::string store_dir = ctx.store_dir(o.store);
  auto session = mf::model::open_store_session(
      store_dir, *mf::model::parse_cache_mode(ctx.get(o.cache, "off")), !store_dir.empty());
  if (!session) return cli::report(ctx.tool, session.diagnostics());
  options.models = session->models;
  mf::store::Store* store = store_dir.empty() ? nullptr : session->store.get();
  if (store != nullptr) {
    options.keep_trace = [&](const std::string& id, std::string_view trace) -> mf::Status {
      std::lock_guard<std::mutex> guard(*session->lock);
      auto kept = store->put_named(mf::store::refs::campaign_case_trace(suite->id, id), trace);
      return kept ? mf::Status() : mf::Status(kept.take_diagnostics());
    };
  }
  mf::Result<eval::SuiteRun> done = eval::run_suite(*suite, options);
  if (!done) return cli::report(ctx.tool, done.diagnostics());
  const std::string report_bytes = mf::json::canonical_file(done->document);
  mf::Status written = mf::io::write_output(ctx.get(o.output), report_bytes);
  if (!written) return cli::report(ctx.tool, written.diagnostics());
  if (store != nullptr) {
    auto kept = store->put_named(mf::store::refs::campaign_report(suite->id), report_bytes);
    if (!kept) return cli::report(ctx.tool, kept.diagnostics());
  }
  const std::size_t failed = done->failed();
  if (failed > 0 && !ctx.quiet) {
    std::cerr << ctx.tool.name << ": " << failed << " of " << done->report.cases.size()
              << " case(s) failed; see the report\n";
  }
  return failed > 0 ? cli::kFailure : cli::kSuccess;
}

int compare(cli::Context& ctx, const Opts& o) {
  if (int rc = cli::require(ctx, {o.baseline, o.candidate})) return rc;
  eval::Report reports[2];
  const cli::Text* inputs[2] = {&o.baseline, &o.candidate};
  for (int i = 0; i < 2; ++i) {
    const std::string path = ctx.get(*inputs[i]);
    mf::Result<std::string> bytes = mf::io::read_input(path);
    if (!bytes) return cli::report(ctx.tool, bytes.diagnostics(), path);
    mf::Result<eval::Report> report = eval::parse_report(*bytes);
    if (!report) return cli::report(ctx.tool, report.diagnostics(), path);
    reports[i] = std::move(report).value();
  }
  const eval::Comparison comparison = eval::compare(reports[0], reports[1]);
  mf::Status written =
      mf::io::write_output("-", mf::json::canonical_file(eval::to_json(comparison)));
  if (!written) return cli::report(ctx.tool, written.diagnostics());
  const auto reasons = eval::gate_failures(comparison, ctx.get(o.max_regressions, 0));
  for (const auto& reason : reasons) {
    std::cerr << ctx.tool.name << ": gate failed: " << reason << '\n';
  }
  return reasons.empty() ? cli::kSuccess : cli::kFailure;
}

}  // namespace

int main(int argc, char** argv) {
  const cli::Tool tool{
      .name = "mf-eval",
      .summary =
          "Run a suite of cases (in parallel) into a report; compare two reports with gates.",
      .usage =
          "mf-eval run --suite FILE --output FILE|- [-j N] [--fixed-clock] [--traces DIR] "
          "[--store DIR] [--cache MODE]\n"
          "       mf-eval compare --baseline FILE --candidate FILE [--max-regressions N]",
      .examples =
          {
              "mf-eval run --suite fixtures/forge/eval-suite.json --output target/forge-eval.json",
              "mf-eval run --suite fixtures/forge/eval-suite.json --output - -j 4 --fixed-clock "
              "| jq .summary",
              "mf-eval run --suite live-suite.json --output rec.json --fixed-clock --cache write "
              "--store st",
              "mf-eval run --suite live-suite.json --output replay.json --fixed-clock --cache read "
              "--store st",
              "mf-eval compare --baseline main.json --candidate pr.json --max-regressions 0",
          },
      .positional = "args",
      .details =
          "run: exit 0 when every case passed, 1 when any failed (the report is still written), "
          "2 for an invalid suite. compare: prints improved, regressed, unchanged, missing and "
          "new case ids as canonical JSON; exit 1 when more cases regressed than "
          "--max-regressions (default 0) or a baseline case is missing from the candidate, 2 for "
          "an invalid report. Formats: docs/formats/eval.md.",
  };
  cli::Options d;
  const std::vector<std::string> run_cmd{"run"};
  const std::vector<std::string> compare_cmd{"compare"};
  const Opts o{
      .suite = d.text({"suite", "run: the suite of cases", "FILE", run_cmd}),
      .output = d.text({"output", "run: the report", "FILE|-", run_cmd}),
      .traces = d.text({"traces", "run: write DIR/<case>.jsonl", "DIR", run_cmd}),
      .run_id_prefix =
          d.text({"run-id-prefix", "run: run id = P + case id (default eval-)", "P", run_cmd}),
      .store =
          d.text({"store", "run: keep case traces and the report in this store (also MF_STORE)",
                  "DIR", run_cmd}),
      .cache = d.text({"cache",
                       "run: live models' reply cache in the store (--store, MF_STORE or "
                       ".mf/store); read never calls the network",
                       "MODE",
                       run_cmd,
                       {"off", "read", "write", "readwrite"}}),
      .baseline = d.text({"baseline", "compare: the reference", "FILE", compare_cmd}),
      .candidate = d.text({"candidate", "compare: the new report", "FILE", compare_cmd}),
      .jobs = d.number({"jobs,j", "run: cases in parallel (default 1)", "N", run_cmd, {}, 1}),
      .max_regressions = d.number({"max-regressions",
                                   "compare: gate on the number of regressed cases (default 0)",
                                   "N",
                                   compare_cmd,
                                   {},
                                   0}),
      .fixed_clock =
          d.flag({"fixed-clock", "run: deterministic traces, no latency_ms (also MF_FIXED_CLOCK=1)",
                  "", run_cmd}),
  };

  return cli::run(argc, argv, tool, d, [&o](cli::Context& ctx) {
    const auto args = ctx.positionals();
    if (args.empty()) return cli::usage_error(ctx.tool, "missing COMMAND (run, compare)");
    if (args.size() > 1) return cli::usage_error(ctx.tool, "unexpected argument '" + args[1] + "'");
    if (args[0] == "run") return run(ctx, o);
    if (args[0] == "compare") return compare(ctx, o);
    return cli::usage_error(ctx.tool, "unknown command '" + args[0] + "'");
  });
}
