// mf-eval: run suites of cases into reports; compare reports with gates (docs/formats/eval.md).
#include "mf/cli/cli.hpp"
#include "mf/eval/command_line.hpp"
#include "mf/runtime/plan_run.hpp"

namespace cli = mf::cli;
namespace eval = mf::eval;

int main(int argc, char** argv) {
  const cli::Tool tool{
      .name = "mf-eval",
      .summary =
          "Run a suite of cases (in parallel) into a report; compare two reports with gates.",
      .usage =
          "mf-eval run --suite FILE --output FILE|- [-j N] [--repeat K] [--shard I/N] "
          "[--tags TAG,...] [--case-timeout-ms MS] [--model LABEL=SPEC]... [--format F] "
          "[--guardrails PRESET]... [--case ID,...] [--resume] [--journal FILE] "
          "[--mac-key-env NAME] [--fixed-clock] [--traces DIR] [--trace-content MODE] [--store "
          "DIR] "
          "[--cache MODE]\n"
          "       mf-eval merge --output FILE|- SHARD.json...\n"
          "       mf-eval report REPORT.json [--format json|md|junit|html] [--output FILE|-] "
          "[--traces DIR] [--store DIR] [--min-pass-rate R]\n       mf-eval compare --baseline "
          "FILE --candidate "
          "FILE "
          "[--max-regressions N] [--alpha A] [--max-latency-ratio R] [--max-cost-ratio R] "
          "[--max-false-closure-rate R] [--format json|md|html]\n       mf-eval verify REPORT.json "
          "--traces DIR|--store DIR [--suite FILE] [--mac-key-env NAME] [-j N]",
      .examples =
          {
              "mf-eval run --suite fixtures/forge/eval-suite.json --output target/forge-eval.json",
              "mf-eval run --suite fixtures/forge/eval-suite.json --output - -j 4 --fixed-clock "
              "| jq .summary",
              "mf-eval run --suite live-suite.json --output rec.json --fixed-clock --cache write "
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
              "mf-eval report r.json --min-pass-rate 0.9   # exit 1 below 90%",
              "mf-eval compare --baseline main.json --candidate pr.json --max-regressions 0",
              "mf-eval compare --baseline main.json --candidate pr.json --max-regressions 3 "
              "--alpha 0.05 --max-latency-ratio 1.5 --max-cost-ratio 1.2",
              "mf-eval verify r.json --traces traces --suite suite.json -j 4",
              "mf-eval verify rec.json --store st --mac-key-env MF_TRACE_KEY | tail -1 | jq .holds",
          },
      .positional = "args",
      .details =
          "run: exit 0 when every case passed, 1 when any failed (the report is still written), 2 "
          "for an invalid suite, 130 or 143 when SIGINT or SIGTERM stopped it (no report is "
          "written). Each finished attempt is appended to a journal (--journal, "
          "default REPORT.journal beside a report file, or the store with --store); --resume "
          "reuses the attempts it holds, so an interrupted campaign (even by SIGKILL) goes on "
          "where it stopped, and the report is the one an uninterrupted run writes. The journal's "
          "lines are hash-chained, and each attempt it holds is checked against its trace when "
          "the trace is at hand; a second run on the same journal is refused at once (MF-V005, "
          "exit 2). --shard i/n runs every n-th case; merge joins the shard reports into the "
          "report one run writes. --repeat K runs each case K times (a sim model's seed + n for "
          "sample n) and reports pass@k, pass^k and flaky cases. merge: exit 1 when a merged case "
          "failed, 2 for a bad set of shards (one missing or twice, or shards whose suite or "
          "settings differ). compare: prints improved, regressed, unchanged, missing and new case "
          "ids, the McNemar p, the paired pass-rate difference with its interval and the latency "
          "and cost ratios as canonical JSON; exit 1 when more cases regressed than "
          "--max-regressions (default 0), a baseline case is missing from the candidate, or a "
          "gate given (--alpha, --max-latency-ratio, --max-cost-ratio, --max-false-closure-rate) "
          "fails, 2 for an invalid report. verify: every attempt's trace must be there, have its "
          "trace_sha256, verify and give its entry (with --suite graded again), and the summary "
          "what the cases give; exit 1 when anything disagrees, 2 for a report or suite that is "
          "not one, 3 for I/O. run and merge end with one summary line on stderr, even with "
          "--quiet (which silences the progress line): the counts, the failing case ids and "
          "where the report went. report: --format renders (required unless --min-pass-rate is "
          "given; html shows each attempt's transcript from --traces or --store); --min-pass-rate "
          "R is a gate, exit 1 when fewer than R of the cases passed. "
          "Formats: docs/formats/eval.md.",
      .command_lines = {{"run", "run a suite of cases (in parallel) into a report"},
                        {"merge", "join shard reports into the report one run writes"},
                        {"report", "render a report as JSON, Markdown, JUnit XML or HTML"},
                        {"compare", "compare two reports; gates turn regressions into exit 1"},
                        {"verify", "derive a report again from its traces, offline"}},
  };
  cli::Options d;
  const std::vector<std::string> run_cmd{"run"};
  const std::vector<std::string> compare_cmd{"compare"};
  const std::vector<std::string> report_cmd{"report"};
  const std::vector<std::string> clocked{"run", "report"};
  const std::vector<std::string> run_or_merge{"run", "merge", "report"};
  const std::vector<std::string> run_or_report{"run", "report", "verify"};
  const std::vector<std::string> run_or_verify{"run", "verify"};
  const std::vector<std::string> formatted{"report", "run", "compare"};
  const std::vector<std::string> formats{"json", "md", "junit", "html"};
  const std::vector<std::string> cache_modes{"off", "read", "write", "readwrite"};
  const std::vector<std::string> any;  // a number's choices: none
  const eval::CommandLine o{
      .suite = d.text({"suite", "run: the suite of cases; verify: grade every entry again", "FILE",
                       run_or_verify}),
      .output = d.text({.name = "output",
                        .help = "run, merge: the report; report: the rendering (default -)",
                        .value = "FILE|-",
                        .commands = run_or_merge,
                        .path = cli::Path::OutFile}),
      .traces = d.text({.name = "traces",
                        .help = "run: write DIR/<case>.jsonl; report (html): show their "
                                "transcripts and link them; verify: read them there",
                        .value = "DIR",
                        .commands = run_or_report,
                        .path = cli::Path::OutDir,
                        .writes = run_cmd}),
      .run_id_prefix =
          d.text({"run-id-prefix", "run: run id = P + case id (default eval-)", "P", run_cmd}),
      .store = d.text({.name = "store",
                       .help = "run: keep case traces and the report in this store (also "
                               "MF_STORE); verify, report (html): read the traces there; merge: "
                               "keep the merged report there",
                       .value = "DIR",
                       .commands = {"run", "verify", "merge", "report"},
                       .path = cli::Path::Store,
                       .writes = {"run", "merge"}}),
      .cache = d.text({"cache",
                       "run: live models' reply cache in the store (--store, MF_STORE or "
                       ".mf/store); read never calls the network",
                       "MODE", run_cmd, cache_modes}),
      .shard = d.text({"shard", "run: this run's share of the cases, i of n", "I/N", run_cmd}),
      .journal = d.text({.name = "journal",
                         .help = "run: the attempts journal (default REPORT.journal)",
                         .value = "FILE",
                         .commands = run_cmd,
                         .path = cli::Path::OutFile}),
      .mac_key_env = d.text({"mac-key-env",
                             "run: sign every trace and journal line with an HMAC-SHA256 under "
                             "the key in this environment variable; --resume checks them; "
                             "verify: every trace must verify under it",
                             "NAME", run_or_verify}),
      .format = d.text({"format",
                        "report, run: json, md (Markdown), junit (JUnit XML) or html (one page, "
                        "inline SVG), on stdout; compare: json (default), md or html",
                        "FORMAT", formatted, formats}),
      .trace_content = d.text({"trace-content",
                               "run: the replies in the traces: digest (default: size + "
                               "SHA-256), inline, or store (kept in --store)",
                               "MODE",
                               run_cmd,
                               {"digest", "inline", "store"}}),
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
      .min_pass_rate = d.text({"min-pass-rate",
                               "report: fail when fewer than R of the cases passed (0 < R <= 1)",
                               "R", report_cmd}),
      .jobs = d.number({"jobs,j", "run: cases, verify: traces in parallel (default 1)", "N",
                        run_or_verify, any, 1}),
      .repeat = d.number({"repeat", "run: attempts per case, each its own sample (default 1)", "K",
                          run_cmd, any, 1}),
      .case_timeout = d.number({"case-timeout-ms",
                                "run: each attempt ends timed_out after this long (default: none)",
                                "MS", run_cmd, any, 1}),
      .max_regressions =
          d.number({"max-regressions", "compare: gate on the number of regressed cases (default 0)",
                    "N", compare_cmd, any, 0}),
      .fixed_clock =
          d.flag({"fixed-clock",
                  "run: deterministic traces, no latency_ms; report: JUnit without timestamp and "
                  "hostname (also MF_FIXED_CLOCK=1)",
                  "", clocked}),
      .resume = d.flag({"resume", "run: reuse the attempts the journal holds", "", run_cmd}),
  };

  return cli::run(argc, argv, tool, d,
                  [&o](cli::Context& ctx) { return eval::command_line(ctx, o); });
}
