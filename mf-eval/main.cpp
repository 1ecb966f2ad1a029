// mf-eval: run suites of cases into reports; compare reports with gates (docs/formats/eval.md).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <mutex>

#include "mf/cli/cli.hpp"
#include "mf/eval/render.hpp"
#include "mf/eval/report.hpp"
#include "mf/eval/runner.hpp"
#include "mf/eval/suite.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/model/live.hpp"
#include "mf/runtime/plan_run.hpp"
#include "mf/store/refs.hpp"
#include "mf/store/store.hpp"

namespace cli = mf::cli;
namespace eval = mf::eval;

namespace {

struct Opts {
  cli::Text suite, output, traces, run_id_prefix, store, cache, shard, journal, format;
  cli::Texts models, presets, cases, tags;
  cli::Text baseline, candidate, alpha, max_latency_ratio, max_cost_ratio, max_false_closure;
  cli::Number jobs, repeat, case_timeout, max_regressions;
  cli::Flag fixed_clock, resume;
};

// "i/n" with 1 <= i <= n, n >= 1.
bool parse_shard(const std::string& text, std::int64_t& index, std::int64_t& count) {
  const auto slash = text.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == text.size() || text.size() > 21) {
    return false;
  }
  const auto digits = [](std::string_view t) {
    return !t.empty() && t.find_first_not_of("0123456789") == std::string_view::npos &&
           t.size() <= 9;
  };
  const std::string_view i(text.data(), slash), n(text.data() + slash + 1, text.size() - slash - 1);
  if (!digits(i) || !digits(n)) return false;
  index = std::stoll(std::string(i));
  count = std::stoll(std::string(n));
  return count >= 1 && index >= 1 && index <= count;
}

int run(cli::Context& ctx, const Opts& o) {
  if (int rc = cli::require(ctx, {o.suite, o.output})) return rc;
  const std::string format = ctx.get(o.format, "json");
  if (format != "json" && ctx.get(o.output) == "-") {
    return cli::usage_error(ctx.tool, "run --format " + format +
                                          " prints the rendering on stdout: give --output FILE "
                                          "for the report");
  }
  eval::RunOptions options;
  options.jobs = static_cast<unsigned>(ctx.get(o.jobs, 1));
  options.repeat = ctx.get(o.repeat, 1);
  if (options.repeat > 1000) return cli::usage_error(ctx.tool, "--repeat is at most 1000");
  options.case_timeout_ms = ctx.get(o.case_timeout, 0);
  // The matrix: every --model LABEL=SPEC crossed with every --guardrails PRESET.
  std::vector<std::pair<std::string, std::string>> models;
  for (const auto& m : ctx.get(o.models)) {
    const auto eq = m.find('=');
    const std::string label = eq == std::string::npos ? "" : m.substr(0, eq);
    const bool ok = !label.empty() && label.size() <= 64 &&
                    label.find_first_not_of(
                        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                        "0123456789_-") == std::string::npos;
    if (!ok || eq + 1 == m.size()) {
      return cli::usage_error(ctx.tool,
                              "--model takes LABEL=SPEC, LABEL of [A-Za-z0-9_-], not '" + m + "'");
    }
    for (const auto& [seen, spec] : models) {
      if (seen == label) return cli::usage_error(ctx.tool, "--model " + label + " given twice");
    }
    const std::string spec = m.substr(eq + 1);
    if (mf::Status s = mf::model::check_model_spec(spec); !s) {
      return cli::report(ctx.tool, s.diagnostics());
    }
    models.emplace_back(label, spec);
  }
  std::vector<mf::runtime::Guardrails> presets;
  for (const auto& p : ctx.get(o.presets)) {
    auto g = mf::runtime::parse_guardrails(p);
    if (!g) return cli::usage_error(ctx.tool, "--guardrails: no preset '" + p + "'");
    if (std::find(presets.begin(), presets.end(), *g) != presets.end()) {
      return cli::usage_error(ctx.tool, "--guardrails " + p + " given twice");
    }
    presets.push_back(*g);
  }
  for (std::size_t m = 0; m < std::max<std::size_t>(models.size(), 1); ++m) {
    for (std::size_t g = 0; g < std::max<std::size_t>(presets.size(), 1); ++g) {
      if (models.empty() && presets.empty()) break;
      eval::Variant v;
      if (!models.empty()) {
        v.label = models[m].first;
        v.model = models[m].second;
      }
      if (!presets.empty()) {
        const std::string name(mf::runtime::name(presets[g]));
        v.label += (v.label.empty() ? "" : ".") + name;
        v.guardrails = presets[g];
      }
      options.variants.push_back(std::move(v));
    }
  }
  if (ctx.given(o.shard) &&
      !parse_shard(ctx.get(o.shard), options.shard_index, options.shard_count)) {
    return cli::usage_error(ctx.tool,
                            "--shard takes i/n with 1 <= i <= n, not '" + ctx.get(o.shard) + "'");
  }
  for (const auto& [lists, out] :
       {std::pair{ctx.get(o.cases), &options.only}, std::pair{ctx.get(o.tags), &options.tags}}) {
    for (const auto& list : lists) {
      for (std::size_t at = 0; at <= list.size();) {
        const std::size_t comma = std::min(list.find(',', at), list.size());
        if (comma > at) out->push_back(list.substr(at, comma - at));
        at = comma + 1;
      }
    }
  }
  options.fixed_clock = ctx.fixed_clock(o.fixed_clock);
  options.traces_dir = ctx.get(o.traces);
  options.run_id_prefix = ctx.get(o.run_id_prefix, options.run_id_prefix);
  options.cancel = &cli::cancellation_flag();
  if (ctx.progress()) {
    // "attempt 37/120, 31 passed (84%), 12 s left": the ETA from the pace of the attempts run so
    // far in this process (the journal's are not timed).
    const auto start = std::chrono::steady_clock::now();
    options.progress = [start, first = std::size_t{0}, started = false](
                           std::size_t done, std::size_t total, std::size_t passed) mutable {
      if (!started) {
        first = done;
        started = true;
      }
      std::string line = "\rmf-eval: attempt " + std::to_string(done) + "/" +
                         std::to_string(total) + ", " + std::to_string(passed) + " passed";
      if (done > 0) line += " (" + std::to_string(passed * 100 / done) + "%)";
      const std::size_t run_here = done - first;
      if (run_here > 0 && done < total) {
        const double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const auto left = static_cast<long long>(elapsed / static_cast<double>(run_here) *
                                                 static_cast<double>(total - done));
        line += ", " + std::to_string(left) + " s left";
      }
      std::cerr << line << "\x1b[K" << (done == total ? "\n" : "") << std::flush;
    };
  }

  // The journal: --journal, else beside a report file; --resume reuses what it holds.
  const std::string output = ctx.get(o.output);
  const std::string journal_path = ctx.get(o.journal, output == "-" ? "" : output + ".journal");
  if (ctx.get(o.resume) && journal_path.empty() && ctx.store_dir(o.store).empty()) {
    return cli::usage_error(ctx.tool,
                            "--resume needs a journal: --journal FILE, --output FILE or --store");
  }
  const std::string suite_path = ctx.get(o.suite);
  mf::Result<eval::Suite> suite = eval::load_suite(suite_path);
  if (!suite) return cli::report(ctx.tool, suite.diagnostics(), suite_path);
  std::unique_ptr<eval::Journal> journal;
  const std::string store_dir = ctx.store_dir(o.store);
  auto session = mf::model::open_store_session(
      store_dir, *mf::model::parse_cache_mode(ctx.get(o.cache, "off")), !store_dir.empty());
  if (!session) return cli::report(ctx.tool, session.diagnostics());
  if (!store_dir.empty() && !ctx.given(o.journal)) {
    // With a store the journal lives there, beside the traces it names.
    journal = eval::store_journal(session->store, session->lock, suite->id,
                                  eval::campaign_id(*suite, options), ctx.get(o.resume));
    options.journal = journal.get();
  } else if (!journal_path.empty()) {
    auto opened = eval::open_file_journal(journal_path, eval::campaign_id(*suite, options),
                                          ctx.get(o.resume));
    if (!opened) return cli::report(ctx.tool, opened.diagnostics());
    journal = std::move(*opened);
    options.journal = journal.get();
  }
  options.models = session->models;
  mf::store::Store* store = store_dir.empty() ? nullptr : session->store.get();
  if (store != nullptr) {
    options.keep_trace = [&](const std::string& id, std::optional<std::int64_t> repeat,
                             std::string_view trace) -> mf::Status {
      std::lock_guard<std::mutex> guard(*session->lock);
      const std::string ref = repeat
                                  ? mf::store::refs::campaign_attempt_trace(suite->id, id, *repeat)
                                  : mf::store::refs::campaign_case_trace(suite->id, id);
      auto kept = store->put_named(ref, trace);
      return kept ? mf::Status() : mf::Status(kept.take_diagnostics());
    };
  }
  mf::Result<eval::SuiteRun> done = eval::run_suite(*suite, options);
  if (!done) return cli::report(ctx.tool, done.diagnostics());
  const std::string report_bytes = mf::json::canonical_file(done->document);
  mf::Status written = mf::io::write_output(output, report_bytes);
  if (!written) return cli::report(ctx.tool, written.diagnostics());
  if (format != "json") {
    mf::Status shown = mf::io::write_output(
        "-", eval::render(done->document, *eval::parse_format(format), ctx.get(o.traces)));
    if (!shown) return cli::report(ctx.tool, shown.diagnostics());
  }
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

int merge(cli::Context& ctx, const Opts& o) {
  if (int rc = cli::require(ctx, {o.output})) return rc;
  const auto args = ctx.positionals();
  std::vector<std::pair<std::string, std::string>> named;
  for (std::size_t i = 1; i < args.size(); ++i) {
    mf::Result<std::string> bytes = mf::io::read_input(args[i]);
    if (!bytes) return cli::report(ctx.tool, bytes.diagnostics(), args[i]);
    named.emplace_back(args[i], std::move(*bytes));
  }
  if (named.empty()) return cli::usage_error(ctx.tool, "merge needs the shard reports");
  mf::Result<mf::json::Value> merged = eval::merge_reports(named);
  if (!merged) return cli::report(ctx.tool, merged.diagnostics());
  mf::Status written = mf::io::write_output(ctx.get(o.output), mf::json::canonical_file(*merged));
  if (!written) return cli::report(ctx.tool, written.diagnostics());
  const auto* summary = merged->find("summary");
  return summary->find("failed")->as_exact_int().value_or(0) > 0 ? cli::kFailure : cli::kSuccess;
}

int report(cli::Context& ctx, const Opts& o) {
  if (int rc = cli::require(ctx, {o.format})) return rc;
  const auto args = ctx.positionals();
  if (args.size() != 2) return cli::usage_error(ctx.tool, "report takes one REPORT.json");
  mf::Result<std::string> bytes = mf::io::read_input(args[1]);
  if (!bytes) return cli::report(ctx.tool, bytes.diagnostics(), args[1]);
  mf::Result<eval::Report> parsed = eval::parse_report(*bytes);
  if (!parsed) return cli::report(ctx.tool, parsed.diagnostics(), args[1]);
  const std::string format = ctx.get(o.format);
  const std::string text =
      format == "json"
          ? mf::json::canonical_file(parsed->document)
          : eval::render(parsed->document, *eval::parse_format(format), ctx.get(o.traces));
  mf::Status written = mf::io::write_output(ctx.get(o.output, "-"), text);
  if (!written) return cli::report(ctx.tool, written.diagnostics());
  return cli::kSuccess;
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
  const std::string format = ctx.get(o.format, "json");
  if (format != "json" && format != "md") {
    return cli::usage_error(ctx.tool, "compare --format is json or md");
  }
  eval::Gates gates;
  gates.max_regressions = ctx.get(o.max_regressions, 0);
  for (const auto& [option, field] :
       {std::pair{&o.alpha, &gates.alpha},
        std::pair{&o.max_latency_ratio, &gates.max_latency_ratio},
        std::pair{&o.max_cost_ratio, &gates.max_cost_ratio},
        std::pair{&o.max_false_closure, &gates.max_false_closure_rate}}) {
    if (!ctx.given(*option)) continue;
    const std::string text = ctx.get(*option);
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !(v > 0) || v > 1e9) {
      return cli::usage_error(
          ctx.tool, "--" + option->name() + " takes a positive number, not '" + text + "'");
    }
    *field = v;
  }
  const eval::Comparison comparison = eval::compare(reports[0], reports[1]);
  const auto reasons = eval::gate_failures(comparison, gates);
  const mf::json::Value doc = eval::to_json(comparison);
  mf::Status written = mf::io::write_output(
      "-", format == "md" ? eval::render_comparison(doc, reasons) : mf::json::canonical_file(doc));
  if (!written) return cli::report(ctx.tool, written.diagnostics());
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
          "mf-eval run --suite FILE --output FILE|- [-j N] [--repeat K] [--shard I/N] "
          "[--tags TAG,...] [--case-timeout-ms MS] [--model LABEL=SPEC]... [--format F] "
          "[--guardrails PRESET]... "
          "[--case ID,...] [--resume] [--journal FILE] [--fixed-clock] [--traces DIR] "
          "[--store DIR] [--cache MODE]\n"
          "       mf-eval merge --output FILE|- SHARD.json...\n"
          "       mf-eval report REPORT.json --format json|md|junit|html [--output FILE|-] "
          "[--traces DIR]\n"
          "       mf-eval compare --baseline FILE --candidate FILE [--max-regressions N] "
          "[--alpha A] [--max-latency-ratio R] [--max-cost-ratio R] "
          "[--max-false-closure-rate R] [--format json|md]",
      .examples =
          {
              "mf-eval run --suite fixtures/forge/eval-suite.json --output target/forge-eval.json",
              "mf-eval run --suite fixtures/forge/eval-suite.json --output - -j 4 --fixed-clock "
              "| jq .summary",
              "mf-eval run --suite live-suite.json --output rec.json --fixed-clock --cache write "
              "--store st",
              "mf-eval run --suite live-suite.json --output replay.json --fixed-clock --cache read "
              "--store st",
              "mf-eval run --suite suite.json --output r.json --repeat 5 -j 2 | jq .summary",
              "mf-eval run --suite plans.json --output m.json --model small=openai:small.json "
              "--model big=openai:big.json --guardrails full --guardrails bare --cache readwrite",
              "mf-eval run --suite suite.json --output r.json --resume   # after an interruption",
              "mf-eval run --suite suite.json --output s1.json --shard 1/2 --fixed-clock && "
              "mf-eval run --suite suite.json --output s2.json --shard 2/2 --fixed-clock && "
              "mf-eval merge --output r.json s1.json s2.json",
              "mf-eval report r.json --format md >> \"$GITHUB_STEP_SUMMARY\"",
              "mf-eval report r.json --format junit --output junit.xml",
              "mf-eval report r.json --format html --output report.html --traces traces",
              "mf-eval compare --baseline main.json --candidate pr.json --max-regressions 0",
              "mf-eval compare --baseline main.json --candidate pr.json --max-regressions 3 "
              "--alpha 0.05 --max-latency-ratio 1.5 --max-cost-ratio 1.2",
          },
      .positional = "args",
      .details =
          "run: exit 0 when every case passed, 1 when any failed (the report is still written), "
          "2 for an invalid suite. Each finished attempt is appended to a journal (--journal, "
          "default REPORT.journal beside a report file, or the store with --store); --resume "
          "reuses the attempts it holds, "
          "so an interrupted campaign (even by SIGKILL) goes on where it stopped, and the report "
          "is the one an uninterrupted run writes. --shard i/n runs every n-th case; merge "
          "joins the shard reports into the report one run writes. --repeat K runs each case K "
          "times (a sim model's seed + n for sample n) and reports pass@k, pass^k and flaky "
          "cases. merge: exit 1 when a merged case failed, 2 for a bad set of shards. compare: "
          "prints improved, regressed, unchanged, missing and "
          "new case ids, the McNemar p, the paired pass-rate difference with its interval and "
          "the latency and cost ratios as canonical JSON; exit 1 when more cases regressed than "
          "--max-regressions (default 0), a baseline case is missing from the candidate, or a "
          "gate given (--alpha, --max-latency-ratio, --max-cost-ratio, "
          "--max-false-closure-rate) fails, 2 for an invalid "
          "report. Formats: docs/formats/eval.md.",
  };
  cli::Options d;
  const std::vector<std::string> run_cmd{"run"};
  const std::vector<std::string> compare_cmd{"compare"};
  const std::vector<std::string> run_or_merge{"run", "merge", "report"};
  const std::vector<std::string> run_or_report{"run", "report"};
  const Opts o{
      .suite = d.text({"suite", "run: the suite of cases", "FILE", run_cmd}),
      .output = d.text({"output", "run, merge: the report; report: the rendering (default -)",
                        "FILE|-", run_or_merge}),
      .traces =
          d.text({"traces", "run: write DIR/<case>.jsonl; report: link the traces there (html)",
                  "DIR", run_or_report}),
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
      .shard = d.text({"shard", "run: this run's share of the cases, i of n", "I/N", run_cmd}),
      .journal = d.text(
          {"journal", "run: the attempts journal (default REPORT.journal)", "FILE", run_cmd}),
      .format = d.text({"format",
                        "report, run: json, md (Markdown), junit (JUnit XML) or html (one page, "
                        "inline SVG), on stdout; compare: json (default) or md",
                        "FORMAT",
                        {"report", "run", "compare"},
                        {"json", "md", "junit", "html"}}),
      .models = d.texts({"model",
                         "run: cross every case with this model, LABEL=SPEC (repeatable; the "
                         "report names its entries <case>.LABEL)",
                         "LABEL=SPEC", run_cmd}),
      .presets = d.texts({"guardrails", "run: cross every plan case with this preset (repeatable)",
                          "PRESET", run_cmd, mf::runtime::guardrail_names()}),
      .cases = d.texts(
          {"case", "run: only these case ids (repeatable, or comma-separated)", "ID,...", run_cmd}),
      .tags = d.texts({"tags",
                       "run: only cases with one of these tags (repeatable, or comma-separated)",
                       "TAG,...", run_cmd}),
      .baseline = d.text({"baseline", "compare: the reference", "FILE", compare_cmd}),
      .candidate = d.text({"candidate", "compare: the new report", "FILE", compare_cmd}),
      .alpha = d.text({"alpha", "compare: fail on a regression significant at this level (McNemar)",
                       "A", compare_cmd}),
      .max_latency_ratio =
          d.text({"max-latency-ratio", "compare: fail when the median latency grows past R times",
                  "R", compare_cmd}),
      .max_cost_ratio =
          d.text({"max-cost-ratio", "compare: fail when the median cost grows past R times", "R",
                  compare_cmd}),
      .max_false_closure = d.text({"max-false-closure-rate",
                                   "compare: fail when the candidate's false-closure rate is above",
                                   "R", compare_cmd}),
      .jobs = d.number({"jobs,j", "run: cases in parallel (default 1)", "N", run_cmd, {}, 1}),
      .repeat = d.number({"repeat",
                          "run: attempts per case, each its own sample (default 1)",
                          "K",
                          run_cmd,
                          {},
                          1}),
      .case_timeout = d.number({"case-timeout-ms",
                                "run: each attempt ends timed_out after this long (default: none)",
                                "MS",
                                run_cmd,
                                {},
                                1}),
      .max_regressions = d.number({"max-regressions",
                                   "compare: gate on the number of regressed cases (default 0)",
                                   "N",
                                   compare_cmd,
                                   {},
                                   0}),
      .fixed_clock =
          d.flag({"fixed-clock", "run: deterministic traces, no latency_ms (also MF_FIXED_CLOCK=1)",
                  "", run_cmd}),
      .resume = d.flag({"resume", "run: reuse the attempts the journal holds", "", run_cmd}),
  };

  return cli::run(argc, argv, tool, d, [&o](cli::Context& ctx) {
    const auto args = ctx.positionals();
    if (args.empty()) {
      return cli::usage_error(ctx.tool, "missing COMMAND (run, merge, report, compare)");
    }
    if (args[0] == "merge") return merge(ctx, o);
    if (args[0] == "report") return report(ctx, o);
    if (args.size() > 1) return cli::usage_error(ctx.tool, "unexpected argument '" + args[1] + "'");
    if (args[0] == "run") return run(ctx, o);
    if (args[0] == "compare") return compare(ctx, o);
    return cli::usage_error(ctx.tool, "unknown command '" + args[0] + "'");
  });
}
