// The file side of mf-eval's subcommands (docs/formats/eval.md): run a campaign into its report
// (journal, store, rendering), merge shard reports, render a report, compare two reports under
// gates; and the dispatch of `mf-eval COMMAND` to them. command_line.hpp reads mf-eval's options
// into CommandArgs and maps each outcome to stderr and an exit code.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mf/diag/outcome.hpp"
#include "mf/eval/report.hpp"
#include "mf/json/value.hpp"
#include "mf/model/model.hpp"

namespace mf::eval {

// `mf-eval run`, its options as given (the lists already split at commas).
struct RunArgs {
  std::string suite;            // the suite file
  std::string output;           // the report: a FILE, or "-" for stdout
  std::string format = "json";  // json: the report alone; md, junit, html: also on stdout
  std::int64_t jobs = 1;
  std::int64_t repeat = 1;  // at most 1000
  std::int64_t case_timeout_ms = 0;
  std::vector<std::string> models;   // --model LABEL=SPEC (campaign_args.hpp, read_matrix)
  std::vector<std::string> presets;  // --guardrails PRESET
  std::optional<std::string> shard;  // --shard i/n
  std::vector<std::string> cases;
  std::vector<std::string> tags;
  std::optional<std::string> journal;  // --journal FILE
  bool resume = false;
  std::string store_dir;  // --store or MF_STORE; empty: none
  model::CacheMode cache = model::CacheMode::Off;
  std::string traces_dir;
  std::string trace_content = "digest";  // digest, inline, or store (needs store_dir)
  std::string run_id_prefix = "eval-";
  bool fixed_clock = false;
  std::string mac_key;  // --mac-key-env's key: signs the traces and the journal's lines
  const std::atomic<bool>* cancel = nullptr;
  // Set when progress may be drawn: each progress_line's text (campaign_args.hpp), to be drawn.
  std::function<void(std::string_view)> show_progress;
};

// Checks the options first, in this order: a rendering needs a report file, --repeat, the matrix
// (read_matrix), --shard, --trace-content (store needs a store), --resume needs a journal. Then
// loads the suite, runs the campaign with its journal (journal_place), keeps each attempt's trace
// and the report in the store when there is one, writes the report, then the rendering on stdout.
// Failed when a case failed; its one remark, with or without --quiet, is the summary_line.
diag::CommandOutcome run_command(const RunArgs& args);

// The line `mf-eval run` and `merge` end with on stderr: the counts of cases, passed and failed,
// the first ten failing case ids (then "and N more"), with repeats the attempts, and where the
// report went: "20 cases, 16 passed, 4 failed: a, b, c, d — report out/report.json".
std::string summary_line(const json::Value& report, const std::string& output);
// The same from a report's summary and its failed cases' ids in id order (at least the first ten).
std::string summary_line(const json::Value& summary, const std::vector<std::string>& failing,
                         const std::string& output);

// `mf-eval merge`: the shard reports (read from these paths) joined into `output`, and with a
// `store_dir` also kept there under campaign/<suite_id>/report; failed when a merged case failed.
// Its one remark is the merged report's summary_line.
diag::CommandOutcome merge_command(const std::vector<std::string>& shards,
                                   const std::string& output, const std::string& store_dir = {});

// `mf-eval report`, its options as given (each initialized: callers designate the ones they use).
struct ReportArgs {
  std::string report{};  // the report file, or "-"
  std::string format{};  // json, md, junit or html; empty: nothing rendered
  std::string output = "-";
  // The HTML page reads each attempt's trace under traces_dir (and links it, relative to the
  // page) or in the store at store_dir, for its transcript; JUnit attaches the traces under
  // traces_dir.
  std::string traces_dir{};
  std::string store_dir{};
  bool fixed_clock = false;  // JUnit: no timestamp or hostname
  // The gate: failed, with the remark "gate failed: pass rate P/N is below --min-pass-rate R",
  // when fewer than R of the report's cases passed (every attempt, with repeats) or it has none;
  // else the remark "gate passed: ...". A number above 0 and at most 1.
  std::optional<std::string> min_pass_rate{};
};
// The report re-emitted canonically (json) or rendered (md, junit, html) into `output`, then the
// gate when --min-pass-rate is given.
diag::CommandOutcome report_command(const ReportArgs& args);

// A gate's ratio or level: a number above 0 and at most 1e9, the whole text; nothing otherwise.
std::optional<double> parse_gate(const std::string& text);

// `mf-eval compare`: the comparison on stdout as canonical JSON, Markdown ("md") or one HTML page
// ("html"), the last two with each gate's decision; failed, with one remark per reason, when a
// gate fails.
struct CompareArgs {
  std::string baseline;
  std::string candidate;
  std::string format = "json";
  std::int64_t max_regressions = 0;
  // The gates as given, each checked by parse_gate.
  std::optional<std::string> alpha;
  std::optional<std::string> max_latency_ratio;
  std::optional<std::string> max_cost_ratio;
  std::optional<std::string> max_false_closure_rate;
};
diag::CommandOutcome compare_command(const CompareArgs& args);

// `mf-eval COMMAND ...`, every option as given; each subcommand reads those it takes.
struct CommandArgs {
  std::vector<std::string> operands;  // COMMAND, then its operands
  std::optional<std::string> suite, output, traces, run_id_prefix, cache, shard, journal, format;
  std::optional<std::string> trace_content;
  std::optional<std::string> store;        // --store itself (verify reads the traces there)
  std::string store_dir;                   // run, merge: --store, else $MF_STORE
  std::optional<std::string> mac_key_env;  // the variable holding the trace key
  std::vector<std::string> models, presets;
  std::vector<std::string> cases, tags;  // already split at commas
  std::optional<std::string> baseline, candidate, alpha, max_latency_ratio, max_cost_ratio,
      max_false_closure_rate, min_pass_rate;
  std::optional<std::int64_t> jobs, repeat, case_timeout_ms, max_regressions;
  bool fixed_clock = false;  // --fixed-clock or MF_FIXED_CLOCK=1
  bool resume = false;
  const std::atomic<bool>* cancel = nullptr;
  // `mf-eval run`'s progress line, labelled `label` (progress_label): a callback drawing each text,
  // or an empty one. The line ends when its last copy goes, before command() returns.
  std::function<std::function<void(std::string_view)>(const std::string& label)> progress;
};

// What `mf-eval run`'s progress line names after "mf-eval ": "shard I/N", else the report file
// (the suite for a report on stdout), so runs sharing a terminal are told apart.
std::string progress_label(const RunArgs& args);

// The subcommand of operands[0] (run, merge, report, compare, verify) with its options; a usage
// error for a missing or unknown one, or for an operand it does not take. Each subcommand's
// required options are checked first, then --mac-key-env's key is read, then the subcommand's own
// checks run.
diag::CommandOutcome command(const CommandArgs& args);

}  // namespace mf::eval
