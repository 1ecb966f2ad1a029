// `mf-eval run`: every case of a suite through the one run loop on a pool of threads, each with its
// own model and in-memory trace (a plan case also with its own scratch artifact directory), graded
// against its expectations into a canonical report (docs/formats/eval.md). Under a fixed clock the
// report is a function of the suite and its inputs alone, for any number of threads.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mf/eval/journal.hpp"
#include "mf/eval/report.hpp"
#include "mf/eval/suite.hpp"
#include "mf/io/records.hpp"
#include "mf/json/value.hpp"
#include "mf/model/model.hpp"
#include "mf/runtime/run_loop.hpp"
#include "mf/store/store.hpp"

namespace mf::eval {

// One column of a campaign's matrix: every case runs with this model and, for plan cases, this
// preset instead of its own. Its label names the case's entries in the report ("<id>.<label>").
struct Variant {
  std::string label;                              // [A-Za-z0-9_-]+, joined by "." when crossed
  std::string model;                              // a model spec; empty: the case's own
  std::optional<runtime::Guardrails> guardrails;  // plan cases; none: the case's own
};

struct RunOptions {
  unsigned jobs = 1;        // threads; at least 1
  std::int64_t repeat = 1;  // attempts per case, each its own sample (docs/formats/eval.md)
  // This run takes the cases whose position in id order k has k % shard_count == shard_index - 1.
  std::int64_t shard_index = 1;
  std::int64_t shard_count = 1;
  std::vector<std::string> only;     // case ids to run (empty: all); each must be in the suite
  std::vector<std::string> tags;     // run only cases with one of these tags (empty: all)
  std::int64_t case_timeout_ms = 0;  // each attempt ends timed_out after this long; 0 = none
  std::vector<Variant> variants;     // the matrix's columns; empty: every case as the suite says
  Journal* journal = nullptr;        // resume from and record into; none: every attempt runs
  bool fixed_clock = false;          // traces carry t_ms 0 and the report omits latency_ms
  std::string run_id_prefix = "eval-";
  std::string traces_dir;  // when set, each case's trace is published as DIR/<id>.jsonl
  // How the traces record the model's replies (docs/formats/trace.md): digest, inline, or store
  // with each reply handed to keep_content (from worker threads, one call at a time) under the
  // attempt's run id and call number.
  runtime::TraceContent trace_content = runtime::TraceContent::Digest;
  std::function<Status(const std::string& run_id, std::int64_t call, std::string_view content)>
      keep_content;
  // Called once per finished attempt, serialised: attempts done so far (those the journal held
  // included), all of them, and how many of those done passed; plus once at the start.
  std::function<void(std::size_t done, std::size_t total, std::size_t passed)> progress;
  const std::atomic<bool>* cancel = nullptr;  // unstarted cases then end `cancelled` at once
  // Called with each finished attempt's trace (from worker threads, one call at a time), e.g. to
  // keep it in the store; a failure is the case's problem like a trace file that cannot be
  // published. `repeat` is the attempt's sample index; nothing for a campaign without repeats.
  std::function<Status(const std::string& case_id, std::optional<std::int64_t> repeat,
                       std::string_view trace)>
      keep_trace;
  // The bytes of a trace kept in the store, by its SHA-256, when the store holds it: a journaled
  // attempt is checked against its trace before it is reused.
  std::function<std::optional<std::string>(const std::string& sha256)> trace_by_digest;
  // Non-empty: every attempt's trace is signed under this key (its terminal event's hmac_sha256),
  // and a journaled attempt's trace must verify under it.
  std::string mac_key;
  // How live models use the reply cache (docs/live-backends.md); scripted and sim models ignore
  // it. One cache serves every thread.
  model::OpenOptions models;
};

// What a plan run's trace shows beyond its outcome: the guardrail_violation events by kind, and the
// tool of each successful tool_completed event, in trace order.
struct PlanFacts {
  std::map<std::string, std::int64_t> violations;
  std::vector<std::string> tools;
  std::vector<std::string> named;  // every tool a call named: tool_called and tool_denied events
};

// Millforge's scoring of a plan attempt, in its precedence: provider_failure (model_failed),
// runtime_failure (tool_failed, timed_out, cancelled, budget_exhausted, terminal_rejected),
// false_closure (a success terminal accepted though a check failed), correctly_blocked or
// false_blocked (a blocked or rejected terminal, as the case expected or not), valid_completion.
std::string plan_outcome(const Expect& expect, const runtime::RunOutcome& outcome, bool passed);

// Reads the facts back from the JSONL trace the run wrote.
Result<PlanFacts> plan_facts(std::string_view trace);

// The failure entries {check, expected, actual} of one run against its expectations; `actual` is
// absent when the run produced no such output field (or, for `disposition`, no accepted terminal).
// `facts` answers the plan checks (violations, tools); without it they are not checked.
json::Array grade(const Expect& expect, const runtime::RunOutcome& outcome,
                  const PlanFacts* facts = nullptr);

// The finished entries' canonical bytes, kept out of memory in an unlinked temporary file
// (runner.cpp).
class EntrySpill;

// Where an entry's canonical bytes are in the spill.
struct EntryPlace {
  std::uint64_t offset = 0;
  std::uint32_t size = 0;
};

// A finished suite: its report, kept as the canonical bytes of each case's entry (in a temporary
// file that no name reaches, removed with its last handle), where each is in that file in id order
// (a record file of its own), its summary and its failed cases. The report file is written from
// these pieces (write), so neither it nor its tree is ever held whole for a campaign of many cases
// (docs/campaigns.md, "Memory").
struct SuiteRun {
  static constexpr std::size_t kFailedNamed = 10;  // failed case ids kept for a summary line

  std::string suite_id;
  std::size_t cases = 0;                  // entries in the report
  std::size_t failed_cases = 0;           // of them failed (with repeats: an attempt failed)
  std::vector<std::string> first_failed;  // the first kFailedNamed failed cases' ids, by id
  json::Value summary;                    // the report's summary (docs/formats/eval.md)
  std::shared_ptr<const EntrySpill> spill;
  io::RecordFile<EntryPlace> entries{"the report's entries"};  // each entry's bytes, in id order
  std::string tail;  // the report's bytes after its entries: "],\"kind\":...}\n"

  std::size_t failed() const { return failed_cases; }
  // Hands the report file's bytes (canonical JSON and a newline) to `sink` in order, in pieces.
  Status write(const std::function<Status(std::string_view)>& sink) const;
  // The report file's bytes, whole.
  std::string bytes() const;
  // The report, parsed (for renderings and tests): the tree of every entry.
  json::Value document() const;
};

// Every setting besides the suite's bytes and the shard that changes what a campaign's report
// holds, as the report of a shard records it (`shard.settings`): the digest of what each case runs
// (task digest and script, plan digest, model spec), the case and tag filters (as sets), the
// repeat count, the per-case timeout, the matrix, the run id prefix, the clock, and whether the
// traces are signed.
json::Value campaign_settings(const Suite& suite, const RunOptions& options);

// The campaign's identity, which a journal's lines carry: a digest of the suite's bytes, its
// settings and the shard.
std::string campaign_id(const Suite& suite, const RunOptions& options);

// Runs every attempt of the campaign that the journal does not already hold and returns the
// report. A journaled attempt whose trace is at hand (under traces_dir, or by trace_by_digest)
// must be what its trace grades to, else MF-V004 with the journal's line. Fails only on that, on
// I/O (a trace file or journal line that cannot be written), an unknown --case id, or an internal
// error; failed cases are part of the report.
Result<SuiteRun> run_suite(const Suite& suite, const RunOptions& options);

}  // namespace mf::eval
