// `mf-eval verify` (docs/formats/eval.md, "`mf-eval verify`"): an eval report derived again from
// its evidence, offline. Each attempt's trace must be at hand, hash to the entry's trace_sha256,
// verify, and give the entry (graded again against its case with the suite); the summary must be
// what the cases give. No model runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/diag/outcome.hpp"
#include "mf/eval/report.hpp"
#include "mf/eval/suite.hpp"
#include "mf/json/value.hpp"

namespace mf::eval {

// One thing of the report its evidence does not bear out.
struct VerifyFailure {
  std::string attempt;  // the attempt ("<id>", repeated "<id>.<n>"); empty: the report as a whole
  // trace_missing, trace_sha256, trace, entry, run_id, case (attempts); statistic, suite (report)
  std::string check;
  std::string member;  // entry: the entry's member; statistic: "summary/pass_rate"; else empty
  std::string message;
};

// {"attempt"?, "check", "member"?, "message"}: one line of `mf-eval verify`'s output.
json::Value to_json(const VerifyFailure& f);

struct Verification {
  std::size_t attempts = 0;
  std::size_t failed = 0;               // attempts with a failure
  std::size_t statistics_failed = 0;    // summary statistics that are not what the cases give
  bool graded = false;                  // every entry was graded again against its suite case
  std::vector<VerifyFailure> failures;  // the attempts' in report order, then the report's
};

// An attempt's trace bytes. A diagnostic of the Rejected class (the file or object is not there,
// not a regular file, too large) fails the attempt with its message; any other (I/O) stops the
// verification.
using TraceFetch = std::function<Result<std::string>(const ReportTrace&)>;

// Checks every attempt of `report` (read with SummaryCheck::Collect) on up to `jobs` threads, each
// holding one trace at a time: its trace (fetch) is there, the entry is not in disagreement() with
// it (with `suite`, graded against the case the entry ran: its id without the variant's label),
// and every attempt's trace carries the run id P + attempt, for one prefix P (the first attempt's).
// With a suite whose bytes are not the report's suite_sha256 that is a failure, and the entries
// are not graded. Then each of the report's summary_disagreements is a failure. Stopped only by a
// fetch's I/O diagnostic.
Result<Verification> verify_report(const Report& report, const TraceFetch& fetch,
                                   const Suite* suite, const std::string& mac_key,
                                   std::size_t jobs);

inline constexpr std::int64_t kMaxVerifyJobs = 64;

// `mf-eval verify`, its options as given. Every member has an initializer, so a caller may
// designate only those it sets.
struct VerifyArgs {
  std::string report{};                // the report file, or "-" for stdin
  std::string traces_dir{};            // --traces: the attempt's trace is DIR/<attempt>.jsonl
  std::string store_dir{};             // --store: the store's object named by its trace_sha256
  std::optional<std::string> suite{};  // --suite: grade every entry again
  std::string mac_key{};               // --mac-key-env's key: every trace must verify under it
  std::int64_t jobs = 1;               // at most kMaxVerifyJobs threads are used
};

// Exactly one of --traces and --store (else a usage error); reads the report (a report that is not
// one is refused: exit 2), the suite and the store read-only, runs verify_report and prints one
// line per failure, then the summary line {"attempts","failed","graded","holds","mac",
// "report_sha256","statistics_failed","suite_sha256"?}, as canonical JSON on stdout. Each failure
// is also a remark ("verify: attempt case-07: its trace ..."); failed when any.
diag::CommandOutcome verify_command(const VerifyArgs& args);

}  // namespace mf::eval
