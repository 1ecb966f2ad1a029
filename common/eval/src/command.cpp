// mf-eval's subcommands (command.hpp): each checks its options, does the file work and returns an
// outcome, so the command line (command_line.cpp) only maps it to stderr and an exit code.
#include "mf/eval/command.hpp"

#include <cstdlib>
#include <filesystem>
#include <limits>
#include <memory>
#include <mutex>
#include <tuple>
#include <utility>

#include "mf/diag/secrets.hpp"
#include "mf/eval/campaign_args.hpp"
#include "mf/eval/junit.hpp"
#include "mf/eval/render.hpp"
#include "mf/eval/report.hpp"
#include "mf/eval/runner.hpp"
#include "mf/eval/suite.hpp"
#include "mf/eval/verify.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/model/live.hpp"
#include "mf/store/refs.hpp"
#include "mf/store/store.hpp"
#include "mf/text/suggest.hpp"

namespace mf::eval {
namespace {

using diag::CommandOutcome;

// The options that need no file, checked in order, into `options`.
CommandOutcome read_run_options(const RunArgs& args, RunOptions& options) {
  if (args.format != "json" && args.output == "-") {
    return CommandOutcome::usage_error("run --format " + args.format +
                                       " prints the rendering on stdout: give --output FILE for "
                                       "the report");
  }
  options.jobs = static_cast<unsigned>(args.jobs);
  options.repeat = args.repeat;
  if (options.repeat > 1000) return CommandOutcome::usage_error("--repeat is at most 1000");
  options.case_timeout_ms = args.case_timeout_ms;
  if (auto matrix = read_matrix(args.models, args.presets, options.variants); matrix.stopped()) {
    return matrix;
  }
  if (args.shard) {
    const auto shard = parse_shard(*args.shard);
    if (!shard) {
      return CommandOutcome::usage_error("--shard takes i/n with 1 <= i <= n, not '" + *args.shard +
                                         "'");
    }
    options.shard_index = shard->index;
    options.shard_count = shard->count;
  }
  options.only = args.cases;
  options.tags = args.tags;
  options.fixed_clock = args.fixed_clock;
  options.mac_key = args.mac_key;
  options.traces_dir = args.traces_dir;
  if (args.trace_content == "inline") {
    options.trace_content = runtime::TraceContent::Inline;
  } else if (args.trace_content == "store") {
    if (args.store_dir.empty()) {
      return CommandOutcome::usage_error("--trace-content store needs --store DIR (or MF_STORE)");
    }
    options.trace_content = runtime::TraceContent::Store;
  } else if (args.trace_content != "digest") {
    return CommandOutcome::usage_error("--trace-content is digest, inline or store, not '" +
                                       args.trace_content + "'");
  }
  options.run_id_prefix = args.run_id_prefix;
  options.cancel = args.cancel;
  if (args.show_progress) {
    // The estimate comes from the pace of the attempts run in this process (the journal's are not
    // timed), from now on.
    options.progress = [meter = ProgressMeter(), show = args.show_progress](
                           std::size_t done, std::size_t total, std::size_t passed) mutable {
      show(meter.line(done, total, passed));
    };
  }
  return {};
}

// `dir` as a path relative to the directory of `output` (the working directory for stdout), so a
// page's links lead there from wherever the page is opened.
std::string relative_to_output(const std::string& dir, const std::string& output) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path base =
      output == "-" ? fs::current_path(ec) : fs::absolute(output, ec).parent_path();
  const fs::path target = fs::weakly_canonical(fs::absolute(dir, ec), ec);
  const fs::path rel = target.lexically_relative(fs::weakly_canonical(base, ec));
  if (rel.empty()) return target.generic_string();
  std::string s = rel.generic_string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

// The page's inputs: links to the traces relative to the page, and each attempt's transcript from
// its trace, read under `traces_dir` or from `store` by the trace_sha256 its entry records. A trace
// file that does not have that digest is not shown as the attempt's. The failed attempts are read
// first, and none once the transcripts hold the page's budget (kPageTranscriptBytes), so memory
// stays bounded however large the campaign.
PageInputs page_inputs(const json::Value& report, const std::string& traces_dir,
                       store::Store* store, const std::string& output) {
  PageInputs page;
  if (!traces_dir.empty()) page.traces_href = relative_to_output(traces_dir, output);
  if (traces_dir.empty() && store == nullptr) return page;
  const auto by_digest = [store](const std::string& sha256) -> std::optional<std::string> {
    hash::Digest digest;
    if (store == nullptr || !hash::from_hex(sha256, digest)) return std::nullopt;
    auto bytes = store->get(digest);
    if (!bytes) return std::nullopt;
    return std::string(std::move(*bytes));
  };
  std::size_t spent = 0;
  const auto add = [&](const std::string& name, const json::Value& entry) {
    const json::Value* sha = entry.find("trace_sha256");
    if (sha == nullptr || !sha->is_string()) return;
    std::optional<std::string> trace;
    if (!traces_dir.empty()) {
      const auto path = (std::filesystem::path(traces_dir) / (name + ".jsonl")).string();
      std::error_code ec;
      if (std::filesystem::is_regular_file(path, ec)) {
        auto bytes = io::read_input(path, std::size_t{1} << 30);
        if (bytes && hash::sha256_hex(*bytes) == sha->as_string()) trace = std::move(*bytes);
      }
    }
    if (!trace) trace = by_digest(sha->as_string());
    if (!trace) return;
    json::Value t = transcript(*trace, by_digest);
    spent += json::canonical(t).size();
    page.transcripts[name] = std::move(t);
  };
  // Every attempt by its name in the report, each case without repeats its own attempt.
  std::vector<std::pair<std::string, const json::Value*>> runs;
  for (const json::Value& c : report.find("cases")->as_array()) {
    const std::string& id = c.find("id")->as_string();
    if (const json::Value* attempts = c.find("attempts")) {
      for (const json::Value& a : attempts->as_array()) {
        runs.emplace_back(id + "." + std::to_string(a.find("repeat")->as_exact_int().value_or(0)),
                          &a);
      }
    } else {
      runs.emplace_back(id, &c);
    }
  }
  for (const bool failed : {true, false}) {
    for (const auto& [name, entry] : runs) {
      if ((entry->find("status")->as_string() != "passed") != failed) continue;
      if (spent >= kPageTranscriptBytes) {
        page.left_out.insert(name);
      } else {
        add(name, *entry);
      }
    }
  }
  return page;
}

// A report rendered as `format` (md, junit, html): JUnit says when and where unless the clock is
// fixed and attaches the traces under `traces_dir`; only the HTML page reads transcripts.
std::string rendered(const json::Value& report, const std::string& format,
                     const std::string& traces_dir, bool fixed_clock, store::Store* store,
                     const std::string& output) {
  if (format == "junit") return render_junit(report, {traces_dir, fixed_clock});
  const Format f = *parse_format(format);
  return render(report, f,
                f == Format::Html ? page_inputs(report, traces_dir, store, output) : PageInputs{});
}

// At most this many failing case ids are named in the summary line; the rest are counted.
constexpr std::size_t kNamedFailures = SuiteRun::kFailedNamed;

std::int64_t member(const json::Value& summary, const char* key) {
  const json::Value* v = summary.find(key);
  return v != nullptr ? v->as_exact_int().value_or(0) : 0;
}

}  // namespace

// `failing`: the failed cases' ids in id order, at least the first kNamedFailures of them.
std::string summary_line(const json::Value& summary, const std::vector<std::string>& failing,
                         const std::string& output) {
  const std::int64_t failed = member(summary, "failed");
  std::string line = std::to_string(member(summary, "cases")) + " cases, " +
                     std::to_string(member(summary, "passed")) + " passed, " +
                     std::to_string(failed) + " failed";
  for (std::size_t i = 0; i < failing.size() && i < kNamedFailures; ++i) {
    line += (i == 0 ? ": " : ", ") + diag::printable(failing[i]);
  }
  if (failed > static_cast<std::int64_t>(kNamedFailures)) {
    line += " and " + std::to_string(failed - static_cast<std::int64_t>(kNamedFailures)) + " more";
  }
  if (summary.find("attempts") != nullptr) {
    line += "; " + std::to_string(member(summary, "attempts")) + " attempts (" +
            std::to_string(member(summary, "repeat")) + " per case), " +
            std::to_string(member(summary, "attempts_passed")) + " passed";
  }
  return line + " — report " + (output == "-" ? "on stdout" : diag::printable(output));
}

std::string summary_line(const json::Value& report, const std::string& output) {
  std::vector<std::string> failing;
  for (const json::Value& c : report.find("cases")->as_array()) {
    if (c.find("status")->as_string() != "passed") failing.push_back(c.find("id")->as_string());
  }
  return summary_line(*report.find("summary"), failing, output);
}

CommandOutcome run_command(const RunArgs& args) {
  RunOptions options;
  if (auto checked = read_run_options(args, options); checked.stopped()) return checked;
  const JournalPlace place = journal_place(args.output, args.journal, !args.store_dir.empty());
  if (args.resume && place.kind == JournalPlace::Kind::None && args.store_dir.empty()) {
    return CommandOutcome::usage_error(
        "--resume needs a journal: --journal FILE, --output FILE or --store");
  }
  Result<Suite> suite = load_suite(args.suite, options.jobs);
  if (!suite) return CommandOutcome::stopped_by(suite.take_diagnostics(), args.suite);
  auto session = model::open_store_session(args.store_dir, args.cache, !args.store_dir.empty());
  if (!session) return CommandOutcome::stopped_by(session.take_diagnostics());
  std::unique_ptr<Journal> journal;
  const std::string campaign = campaign_id(*suite, options);
  if (place.kind == JournalPlace::Kind::Store) {
    // With a store the journal lives there, beside the traces it names; its lock is a file in the
    // store's directory, one per campaign.
    auto opened = store_journal(
        session->store, session->lock, suite->id, campaign, args.resume,
        (std::filesystem::path(args.store_dir) / ("campaign-" + campaign.substr(0, 16) + ".lock"))
            .string());
    if (!opened) return CommandOutcome::stopped_by(opened.take_diagnostics());
    journal = std::move(*opened);
  } else if (place.kind == JournalPlace::Kind::File) {
    auto opened = open_file_journal(place.path, campaign, args.resume, args.mac_key);
    if (!opened) return CommandOutcome::stopped_by(opened.take_diagnostics());
    journal = std::move(*opened);
  }
  options.journal = journal.get();
  options.models = session->models;
  store::Store* store = args.store_dir.empty() ? nullptr : session->store.get();
  if (store != nullptr) {
    options.trace_by_digest = [&](const std::string& sha256) -> std::optional<std::string> {
      hash::Digest digest;
      if (!hash::from_hex(sha256, digest)) return std::nullopt;
      std::lock_guard<std::mutex> guard(*session->lock);
      auto bytes = store->get(digest);
      if (!bytes) return std::nullopt;
      return std::string(std::move(*bytes));
    };
    // --trace-content store: each reply under run/<run id>/response/<call>, as mf-run keeps them.
    options.keep_content = [&](const std::string& run_id, std::int64_t call,
                               std::string_view content) -> Status {
      std::lock_guard<std::mutex> guard(*session->lock);
      auto kept = store->put_named(store::refs::run_response(run_id, call), content);
      return kept ? Status() : Status(kept.take_diagnostics());
    };
    options.keep_trace = [&](const std::string& id, std::optional<std::int64_t> repeat,
                             std::string_view trace) -> Status {
      std::lock_guard<std::mutex> guard(*session->lock);
      const std::string ref = repeat ? store::refs::campaign_attempt_trace(suite->id, id, *repeat)
                                     : store::refs::campaign_case_trace(suite->id, id);
      auto kept = store->put_named(ref, trace);
      return kept ? Status() : Status(kept.take_diagnostics());
    };
  }
  Result<SuiteRun> done = run_suite(*suite, options);
  if (!done) return CommandOutcome::stopped_by(done.take_diagnostics());
  if (args.cancel != nullptr && args.cancel->load()) {
    // A report of an interrupted campaign would look final to make, to a scheduler's dependency
    // and to merge: none is written, and the journal keeps what finished.
    CommandOutcome outcome;
    outcome.interrupted = true;
    outcome.remarks.push_back(
        "interrupted: no report written" +
        std::string(journal != nullptr ? "; the journal keeps the finished attempts: run again "
                                         "with --resume to finish the campaign"
                                       : ""));
    return outcome;
  }
  // Written from its entries in pieces; a file atomically, so a reader never sees part of it.
  Status written =
      args.output == "-"
          ? done->write([](std::string_view piece) { return io::write_output("-", piece); })
          : io::publish_atomic(
                args.output,
                [&](int fd) {
                  io::SyncedWriter out(fd);
                  return done->write([&](std::string_view piece) { return out.write(piece); });
                },
                io::Clobber::Replace);
  if (!written) return CommandOutcome::stopped_by(written.take_diagnostics());
  if (args.format != "json") {
    Status shown = io::write_output("-", rendered(done->document(), args.format, args.traces_dir,
                                                  args.fixed_clock, store, "-"));
    if (!shown) return CommandOutcome::stopped_by(shown.take_diagnostics());
  }
  if (store != nullptr) {
    // A shard's report has its own ref, so the shard stores of one campaign merge cleanly.
    const std::string ref = options.shard_count > 1
                                ? store::refs::campaign_shard_report(suite->id, options.shard_index,
                                                                     options.shard_count)
                                : store::refs::campaign_report(suite->id);
    auto kept = store->put_named(ref, done->bytes());
    if (!kept) return CommandOutcome::stopped_by(kept.take_diagnostics());
  }
  CommandOutcome outcome;
  outcome.failed = done->failed() > 0;
  outcome.remarks.push_back(summary_line(done->summary, done->first_failed, args.output));
  return outcome;
}

CommandOutcome merge_command(const std::vector<std::string>& shards, const std::string& output,
                             const std::string& store_dir) {
  std::vector<std::pair<std::string, std::string>> named;
  for (const auto& path : shards) {
    Result<std::string> bytes = io::read_input(path);
    if (!bytes) return CommandOutcome::stopped_by(bytes.take_diagnostics(), path);
    named.emplace_back(path, std::move(*bytes));
  }
  if (named.empty()) return CommandOutcome::usage_error("merge needs the shard reports");
  Result<json::Value> merged = merge_reports(named);
  if (!merged) return CommandOutcome::stopped_by(merged.take_diagnostics());
  const std::string report_bytes = json::canonical_file(*merged);
  if (Status written = io::write_output(output, report_bytes); !written) {
    return CommandOutcome::stopped_by(written.take_diagnostics());
  }
  if (!store_dir.empty()) {
    auto store = store::Store::open(store_dir, store::Mode::ReadWrite);
    if (!store) return CommandOutcome::stopped_by(store.take_diagnostics());
    const json::Value* suite_id = merged->find("suite_id");
    const std::string ref =
        store::refs::campaign_report(suite_id != nullptr ? suite_id->as_string() : "");
    if (auto kept = (*store)->put_named(ref, report_bytes); !kept) {
      return CommandOutcome::stopped_by(kept.take_diagnostics());
    }
  }
  CommandOutcome outcome;
  outcome.failed = member(*merged->find("summary"), "failed") > 0;
  outcome.remarks.push_back(summary_line(*merged, output));
  return outcome;
}

CommandOutcome report_command(const ReportArgs& args) {
  std::optional<double> min_pass_rate;
  if (args.min_pass_rate) {
    min_pass_rate = parse_gate(*args.min_pass_rate);
    if (!min_pass_rate || *min_pass_rate > 1) {
      return CommandOutcome::usage_error(
          "--min-pass-rate takes a number above 0 and at most 1, "
          "not '" +
          *args.min_pass_rate + "'");
    }
  }
  Result<std::string> bytes = io::read_input(args.report);
  if (!bytes) return CommandOutcome::stopped_by(bytes.take_diagnostics(), args.report);
  Result<Report> parsed = parse_report(*bytes);
  if (!parsed) return CommandOutcome::stopped_by(parsed.take_diagnostics(), args.report);
  std::unique_ptr<store::Store> store;
  if (!args.store_dir.empty()) {
    auto opened = store::Store::open(args.store_dir, store::Mode::ReadOnly);
    if (!opened) return CommandOutcome::stopped_by(opened.take_diagnostics());
    store = std::move(*opened);
  }
  if (!args.format.empty()) {
    const std::string text = args.format == "json"
                                 ? json::canonical_file(parsed->document)
                                 : rendered(parsed->document, args.format, args.traces_dir,
                                            args.fixed_clock, store.get(), args.output);
    if (Status written = io::write_output(args.output, text); !written) {
      return CommandOutcome::stopped_by(written.take_diagnostics());
    }
  }
  CommandOutcome outcome;
  if (!min_pass_rate) return outcome;
  // The gate on the report's pass rate: its cases whose every attempt passed, over its cases.
  const std::size_t cases = parsed->cases.size();
  std::size_t passed = 0;
  for (const auto& c : parsed->cases) passed += c.passed ? 1 : 0;
  const std::string rate = "pass rate " + std::to_string(passed) + "/" + std::to_string(cases);
  if (cases == 0) {
    outcome.remarks.push_back("gate failed: the report has no cases, so no pass rate");
  } else if (static_cast<double>(passed) < *min_pass_rate * static_cast<double>(cases)) {
    outcome.remarks.push_back("gate failed: " + rate + " is below --min-pass-rate " +
                              *args.min_pass_rate);
  } else {
    outcome.remarks.push_back("gate passed: " + rate + " is at least --min-pass-rate " +
                              *args.min_pass_rate);
    return outcome;
  }
  outcome.failed = true;
  return outcome;
}

std::optional<double> parse_gate(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !(v > 0) || v > 1e9) return std::nullopt;
  return v;
}

namespace {

// Each gate's decision with its numbers, in gate_failures' order: the regressions and missing
// cases always, the others when given. A gate failed when checking it alone adds a reason to
// those the missing cases give.
json::Value gate_decisions(const Comparison& c, const Gates& gates) {
  Gates none;
  none.max_regressions = std::numeric_limits<std::int64_t>::max();
  const std::size_t base = gate_failures(c, none).size();
  json::Array rows;
  const auto row = [&](const char* gate, json::Value limit, json::Value value, bool passed) {
    rows.push_back(json::Object{{"gate", gate},
                                {"limit", std::move(limit)},
                                {"value", std::move(value)},
                                {"passed", passed}});
  };
  const auto alone = [&](auto set) {
    Gates g = none;
    set(g);
    return gate_failures(c, g).size() == base;
  };
  const auto optional = [](const std::optional<double>& v) {
    return v ? json::Value(*v) : json::Value(nullptr);
  };
  row("max-regressions", gates.max_regressions, static_cast<std::int64_t>(c.regressed.size()),
      static_cast<std::int64_t>(c.regressed.size()) <= gates.max_regressions);
  row("missing cases", std::int64_t{0}, static_cast<std::int64_t>(c.missing.size()),
      c.missing.empty());
  if (gates.alpha) {
    row("alpha (McNemar p)", *gates.alpha, c.mcnemar_p,
        alone([&](Gates& g) { g.alpha = gates.alpha; }));
  }
  if (gates.max_latency_ratio) {
    row("max-latency-ratio", *gates.max_latency_ratio, optional(c.latency_ratio),
        alone([&](Gates& g) { g.max_latency_ratio = gates.max_latency_ratio; }));
  }
  if (gates.max_cost_ratio) {
    row("max-cost-ratio", *gates.max_cost_ratio, optional(c.cost_ratio),
        alone([&](Gates& g) { g.max_cost_ratio = gates.max_cost_ratio; }));
  }
  if (gates.max_false_closure_rate) {
    row("max-false-closure-rate", *gates.max_false_closure_rate,
        optional(c.candidate_false_closure_rate),
        alone([&](Gates& g) { g.max_false_closure_rate = gates.max_false_closure_rate; }));
  }
  return json::Value(std::move(rows));
}

}  // namespace

CommandOutcome compare_command(const CompareArgs& args) {
  Report reports[2];
  const std::string* inputs[2] = {&args.baseline, &args.candidate};
  for (int i = 0; i < 2; ++i) {
    const std::string& path = *inputs[i];
    Result<std::string> bytes = io::read_input(path);
    if (!bytes) return CommandOutcome::stopped_by(bytes.take_diagnostics(), path);
    Result<Report> report = parse_report(*bytes);
    if (!report) return CommandOutcome::stopped_by(report.take_diagnostics(), path);
    reports[i] = std::move(report).value();
  }
  if (args.format != "json" && args.format != "md" && args.format != "html") {
    return CommandOutcome::usage_error("compare --format is json, md or html");
  }
  Gates gates;
  gates.max_regressions = args.max_regressions;
  for (const auto& [option, given, field] :
       {std::tuple{"alpha", &args.alpha, &gates.alpha},
        std::tuple{"max-latency-ratio", &args.max_latency_ratio, &gates.max_latency_ratio},
        std::tuple{"max-cost-ratio", &args.max_cost_ratio, &gates.max_cost_ratio},
        std::tuple{"max-false-closure-rate", &args.max_false_closure_rate,
                   &gates.max_false_closure_rate}}) {
    if (!*given) continue;
    *field = parse_gate(**given);
    if (!*field) {
      return CommandOutcome::usage_error("--" + std::string(option) +
                                         " takes a positive number, not '" + **given + "'");
    }
  }
  const Comparison comparison = compare(reports[0], reports[1]);
  CommandOutcome outcome;
  const auto reasons = gate_failures(comparison, gates);
  const json::Value doc = to_json(comparison);
  Status written = io::write_output(
      "-", args.format == "json" ? json::canonical_file(doc)
                                 : render_comparison(doc, gate_decisions(comparison, gates),
                                                     reasons, *parse_format(args.format)));
  if (!written) return CommandOutcome::stopped_by(written.take_diagnostics());
  for (const auto& reason : reasons) outcome.remarks.push_back("gate failed: " + reason);
  outcome.failed = !reasons.empty();
  return outcome;
}

namespace {

CommandOutcome required(const char* option) {
  return CommandOutcome::usage_error("--" + std::string(option) + " is required");
}

// --mac-key-env's key into `key`: the usage message when it cannot be read, else "".
std::string read_key(const CommandArgs& a, std::string& key) {
  key.clear();
  return a.mac_key_env ? diag::secret_from_env("mac-key-env", *a.mac_key_env, key) : std::string();
}

CommandOutcome run(const CommandArgs& c) {
  if (!c.suite) return required("suite");
  if (!c.output) return required("output");
  RunArgs a;
  a.suite = *c.suite;
  a.output = *c.output;
  a.format = c.format.value_or("json");
  a.jobs = c.jobs.value_or(1);
  a.repeat = c.repeat.value_or(1);
  a.case_timeout_ms = c.case_timeout_ms.value_or(0);
  a.models = c.models;
  a.presets = c.presets;
  a.shard = c.shard;
  a.cases = c.cases;
  a.tags = c.tags;
  a.journal = c.journal;
  a.resume = c.resume;
  a.store_dir = c.store_dir;
  a.cache = *model::parse_cache_mode(c.cache.value_or("off"));
  a.traces_dir = c.traces.value_or("");
  a.trace_content = c.trace_content.value_or("digest");
  a.run_id_prefix = c.run_id_prefix.value_or(a.run_id_prefix);
  a.fixed_clock = c.fixed_clock;
  if (std::string why = read_key(c, a.mac_key); !why.empty()) {
    return CommandOutcome::usage_error(why);
  }
  a.cancel = c.cancel;
  if (c.progress) a.show_progress = c.progress(progress_label(a));
  return run_command(a);
}

CommandOutcome compare(const CommandArgs& c) {
  if (!c.baseline) return required("baseline");
  if (!c.candidate) return required("candidate");
  CompareArgs a;
  a.baseline = *c.baseline;
  a.candidate = *c.candidate;
  a.format = c.format.value_or("json");
  a.max_regressions = c.max_regressions.value_or(0);
  a.alpha = c.alpha;
  a.max_latency_ratio = c.max_latency_ratio;
  a.max_cost_ratio = c.max_cost_ratio;
  a.max_false_closure_rate = c.max_false_closure_rate;
  return compare_command(a);
}

CommandOutcome verify(const CommandArgs& c) {
  const auto& args = c.operands;
  if (args.size() != 2) return CommandOutcome::usage_error("verify takes one REPORT.json");
  VerifyArgs a{.report = args[1],
               .traces_dir = c.traces.value_or(""),
               .store_dir = c.store.value_or(""),
               .suite = c.suite,
               .jobs = c.jobs.value_or(1)};
  if (std::string why = read_key(c, a.mac_key); !why.empty()) {
    return CommandOutcome::usage_error(why);
  }
  return verify_command(a);
}

}  // namespace

std::string progress_label(const RunArgs& a) {
  return a.shard ? "shard " + *a.shard : a.output != "-" ? a.output : a.suite;
}

CommandOutcome command(const CommandArgs& c) {
  const auto& args = c.operands;
  if (args.empty()) {
    return CommandOutcome::usage_error("missing COMMAND (run, merge, report, compare, verify)");
  }
  if (args[0] == "merge") {
    if (!c.output) return required("output");
    return merge_command({args.begin() + 1, args.end()}, *c.output, c.store_dir);
  }
  if (args[0] == "report") {
    if (!c.min_pass_rate && !c.format) return required("format");
    if (args.size() != 2) return CommandOutcome::usage_error("report takes one REPORT.json");
    return report_command({.report = args[1],
                           .format = c.format.value_or(""),
                           .output = c.output.value_or("-"),
                           .traces_dir = c.traces.value_or(""),
                           .store_dir = c.store.value_or(""),
                           .fixed_clock = c.fixed_clock,
                           .min_pass_rate = c.min_pass_rate});
  }
  if (args[0] == "verify") return verify(c);
  if (args.size() > 1) return CommandOutcome::usage_error("unexpected argument '" + args[1] + "'");
  if (args[0] == "run") return run(c);
  if (args[0] == "compare") return compare(c);
  return CommandOutcome::usage_error(
      text::unknown_command(args[0], {"run", "merge", "report", "compare", "verify"}));
}

}  // namespace mf::eval
