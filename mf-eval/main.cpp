// mf-eval: run suites of cases into reports, compare and merge reports with gates (SPEC §8).
#include <cstdlib>
#include <iostream>

#include "mf/cli/cli.hpp"
#include "mf/eval/report.hpp"
#include "mf/eval/runner.hpp"
#include "mf/eval/suite.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/store/store.hpp"

namespace cli = mf::cli;
namespace eval = mf::eval;
namespace po = boost::program_options;

namespace {

// Options that belong to the other command are usage errors, not silently ignored.
int reject_foreign(const cli::Context& ctx, std::initializer_list<const char*> names,
                   std::string_view command) {
  for (const char* name : names) {
    if (ctx.vars.count(name) != 0) {
      return cli::usage_error(
          ctx.tool, "--" + std::string(name) + " does not apply to '" + std::string(command) + "'");
    }
  }
  return cli::kSuccess;
}

int run(cli::Context& ctx) {
  const auto& vars = ctx.vars;
  if (int rc = reject_foreign(ctx, {"baseline", "candidate", "max-regressions"}, "run")) return rc;
  if (vars.count("shard") != 0) return cli::not_built(ctx.tool, "--shard");
  for (const char* required : {"suite", "output"}) {
    if (vars.count(required) == 0) {
      return cli::usage_error(ctx.tool, std::string("--") + required + " is required");
    }
  }
  eval::RunOptions options;
  if (vars.count("jobs") != 0) {
    options.jobs = vars["jobs"].as<unsigned>();
    if (options.jobs == 0) return cli::usage_error(ctx.tool, "-j must be at least 1");
  }
  options.fixed_clock = ctx.fixed_clock();
  options.traces_dir = ctx.get("traces");
  if (vars.count("run-id-prefix") != 0) options.run_id_prefix = ctx.get("run-id-prefix");
  options.cancel = &cli::cancellation_flag();
  if (ctx.progress()) {
    options.progress = [](std::size_t done, std::size_t total) {
      std::cerr << "\rmf-eval: case " << done << '/' << total << (done == total ? "\n" : "")
                << std::flush;
    };
  }

  const std::string suite_path = ctx.get("suite");
  mf::Result<eval::Suite> suite = eval::load_suite(suite_path);
  if (!suite) return cli::report(ctx.tool, suite.diagnostics(), suite_path);
  const std::string store_dir = ctx.store_dir();
  std::unique_ptr<mf::store::Store> store;
  if (!store_dir.empty()) {
    auto opened = mf::store::Store::open(store_dir, mf::store::Mode::ReadWrite);
    if (!opened) return cli::report(ctx.tool, opened.diagnostics());
    store = std::move(*opened);
    options.keep_trace = [&](const std::string& id, std::string_view trace) -> mf::Status {
      auto kept = store->put_named("campaign/" + suite->id + "/case/" + id + "/trace", trace);
      return kept ? mf::Status() : mf::Status(kept.take_diagnostics());
    };
  }
  mf::Result<mf::json::Value> report = eval::run_suite(*suite, options);
  if (!report) return cli::report(ctx.tool, report.diagnostics());
  const std::string report_bytes = mf::json::canonical_file(*report);
  mf::Status written = mf::io::write_output(ctx.get("output"), report_bytes);
  if (!written) return cli::report(ctx.tool, written.diagnostics());
  if (store) {
    auto kept = store->put_named("campaign/" + suite->id + "/report", report_bytes);
    if (!kept) return cli::report(ctx.tool, kept.diagnostics());
  }
  const mf::json::Value& summary = *report->find("summary");
  const double failed = summary.find("failed")->as_number();
  if (failed > 0 && !ctx.quiet) {
    std::cerr << ctx.tool.name << ": " << failed << " of " << summary.find("cases")->as_number()
              << " case(s) failed; see the report\n";
  }
  return failed > 0 ? cli::kFailure : cli::kSuccess;
}

int compare(cli::Context& ctx) {
  const auto& vars = ctx.vars;
  if (int rc = reject_foreign(
          ctx,
          {"suite", "output", "jobs", "shard", "store", "traces", "fixed-clock", "run-id-prefix"},
          "compare")) {
    return rc;
  }
  for (const char* required : {"baseline", "candidate"}) {
    if (vars.count(required) == 0) {
      return cli::usage_error(ctx.tool, std::string("--") + required + " is required");
    }
  }
  eval::Report reports[2];
  const char* names[2] = {"baseline", "candidate"};
  for (int i = 0; i < 2; ++i) {
    const std::string path = ctx.get(names[i]);
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
  const unsigned max_regressions =
      vars.count("max-regressions") != 0 ? vars["max-regressions"].as<unsigned>() : 0;
  const auto reasons = eval::gate_failures(comparison, max_regressions);
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
          "Run a suite of cases (in parallel, resumable, shardable) into a report; compare "
          "two reports with gates.",
      .usage =
          "mf-eval run --suite FILE --output FILE|- [-j N] [--fixed-clock] [--traces DIR]\n"
          "       mf-eval compare --baseline FILE --candidate FILE [--max-regressions N]\n"
          "       mf-eval merge --output FILE REPORT...",
      .examples =
          {
              "mf-eval run --suite fixtures/forge/eval-suite.json --output target/forge-eval.json",
              "mf-eval run --suite fixtures/forge/eval-suite.json --output - -j 4 --fixed-clock "
              "| jq .summary",
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
  po::options_description options;
  options.add_options()                                                                       //
      ("suite", po::value<std::string>()->value_name("FILE"), "run: the suite of cases")      //
      ("output", po::value<std::string>()->value_name("FILE"), "run, merge: the report")      //
      ("jobs,j", po::value<unsigned>()->value_name("N"), "run: cases in parallel")            //
      ("fixed-clock", "run: deterministic traces, no latency_ms (also MF_FIXED_CLOCK=1)")     //
      ("traces", po::value<std::string>()->value_name("DIR"), "run: write DIR/<case>.jsonl")  //
      ("run-id-prefix", po::value<std::string>()->value_name("P"),                            //
       "run: run id = P + case id (default eval-)")                                           //
      ("shard", po::value<std::string>()->value_name("I/N"), "run: this shard's cases only")  //
      ("store", po::value<std::string>()->value_name("DIR"),                                  //
       "keep case traces and the report in this store (also MF_STORE)")                       //
      ("baseline", po::value<std::string>()->value_name("FILE"), "compare: the reference")    //
      ("candidate", po::value<std::string>()->value_name("FILE"), "compare: the new report")  //
      ("max-regressions", po::value<unsigned>()->value_name("N"),                             //
       "compare: gate on the number of regressed cases (default 0)");                         //

  return cli::run(argc, argv, tool, options, [](cli::Context& ctx) {
    const auto args = ctx.positionals();
    if (args.empty()) return cli::usage_error(ctx.tool, "missing COMMAND (run, compare, merge)");
    if (args.size() > 1 && args[0] != "merge") {
      return cli::usage_error(ctx.tool, "unexpected argument '" + args[1] + "'");
    }
    if (args[0] == "run") return run(ctx);
    if (args[0] == "compare") return compare(ctx);
    if (args[0] == "merge") return cli::not_built(ctx.tool, "'mf-eval merge'");
    return cli::usage_error(ctx.tool, "unknown command '" + args[0] + "'");
  });
}
