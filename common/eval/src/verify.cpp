// `mf-eval verify` (verify.hpp): every attempt of a report checked against its trace on a pool of
// threads, the failures listed in the report's order whatever order the threads finish in.
#include "mf/eval/verify.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "mf/diag/codes.hpp"
#include "mf/eval/entry.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/store/store.hpp"

namespace mf::eval {

namespace {

namespace codes = diag::codes;

// A trace is read whole (it is graded from memory); one this large is not a campaign's.
constexpr std::size_t kMaxTraceBytes = std::size_t{1} << 30;

// What checking one attempt found: its failure, or the prefix its trace's run id puts before the
// attempt's name.
struct Checked {
  std::optional<VerifyFailure> failure;
  std::string prefix;
};

Checked check_attempt(const ReportTrace& t, const std::string& bytes, const Case* c,
                      const std::string& mac_key) {
  Checked out;
  const auto fail = [&](std::string check, std::string member, std::string message) {
    out.failure = VerifyFailure{t.attempt, std::move(check), std::move(member), std::move(message)};
    return out;
  };
  // The entry as a journal holds it: without the names the report adds.
  json::Value held = json::Object{};
  for (const json::Member& m : t.entry->as_object()) {
    if (m.key != "id" && m.key != "variant" && m.key != "repeat") held.set(m.key, m.value);
  }
  if (auto why = disagreement(c, bytes, held, mac_key)) {
    return fail(std::move(why->check), std::move(why->member), std::move(why->message));
  }
  // The trace is this attempt's: its run id is the campaign's prefix and the attempt's name.
  const auto start = traced_start(bytes);
  const json::Value* run_id = start ? start->find("run_id") : nullptr;
  const std::string id = run_id != nullptr && run_id->is_string() ? run_id->as_string() : "";
  if (!id.ends_with(t.attempt)) {
    return fail("run_id", "", "its trace is of run \"" + id + "\", not of attempt " + t.attempt);
  }
  out.prefix = id.substr(0, id.size() - t.attempt.size());
  return out;
}

}  // namespace

json::Value to_json(const VerifyFailure& f) {
  json::Value v;
  if (!f.attempt.empty()) v.set("attempt", f.attempt);
  v.set("check", f.check);
  if (!f.member.empty()) v.set("member", f.member);
  v.set("message", f.message);
  return v;
}

Result<Verification> verify_report(const Report& report, const TraceFetch& fetch,
                                   const Suite* suite, const std::string& mac_key,
                                   std::size_t jobs) {
  Verification out;
  std::vector<VerifyFailure> whole;  // the report's own failures, listed after the attempts'
  if (suite != nullptr) {
    const json::Value* sha = report.document.find("suite_sha256");
    if (sha->as_string() != suite->sha256) {
      whole.push_back({"", "suite", "",
                       "the report's suite_sha256 is " + sha->as_string() +
                           " but the suite's bytes hash to " + suite->sha256 +
                           ": its entries are not graded"});
      suite = nullptr;
    }
  }
  out.graded = suite != nullptr;

  const std::vector<ReportTrace> traces = report_traces(report);
  out.attempts = traces.size();
  std::vector<Checked> checked(traces.size());
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex problems_mutex;
  diag::Diagnostics problems;
  auto worker = [&] {
    // The traces are in id order, so each thread's look-ups go forward through the index.
    std::optional<Suite::Reader> cases;
    if (suite != nullptr) cases.emplace(suite->cases);
    std::uint64_t near = 0;
    while (!stop.load()) {
      const std::size_t i = next.fetch_add(1);
      if (i >= traces.size()) return;
      const ReportTrace& t = traces[i];
      const auto halt = [&](diag::Diagnostics ds) {
        std::lock_guard<std::mutex> lock(problems_mutex);
        problems.insert(problems.end(), ds.begin(), ds.end());
        stop = true;
      };
      // The suite's case, read again from the suite by its id (the cases are sorted by id).
      std::optional<Case> loaded;
      if (suite != nullptr) {
        const std::optional<std::uint64_t> at = suite->find(t.case_id, *cases, near);
        if (!at) {
          if (!cases->status()) return halt(cases->status().diagnostics());
          checked[i].failure =
              VerifyFailure{t.attempt, "case", "", "the suite has no case \"" + t.case_id + "\""};
          continue;
        }
        Result<Case> c = suite->load_case((*cases)[*at]);
        if (!c) return halt(c.take_diagnostics());
        loaded = std::move(*c);
      }
      const Case* c = loaded ? &*loaded : nullptr;
      try {
        Result<std::string> bytes = fetch(t);
        if (!bytes) {
          const diag::Diagnostics& ds = bytes.diagnostics();
          if (std::any_of(ds.begin(), ds.end(), [](const diag::Diagnostic& d) {
                return diag::exit_class(d.code) == diag::ExitClass::Internal;
              })) {
            return halt(ds);
          }
          checked[i].failure = VerifyFailure{t.attempt, "trace_missing", "",
                                             "its trace is not at hand: " + ds.front().message};
          continue;
        }
        checked[i] = check_attempt(t, *bytes, c, mac_key);
      } catch (const std::exception& e) {
        return halt({diag::error(codes::kInternal, "attempt " + t.attempt + ": " + e.what())});
      }
    }
  };
  const std::size_t threads = std::clamp<std::size_t>(std::min<std::size_t>(jobs, kMaxVerifyJobs),
                                                      1, std::max<std::size_t>(traces.size(), 1));
  {
    // The calling thread is one of the workers.
    std::vector<std::thread> pool;
    pool.reserve(threads - 1);
    for (std::size_t n = 1; n < threads; ++n) pool.emplace_back(worker);
    worker();
    for (auto& th : pool) th.join();
  }
  if (!problems.empty()) return problems;

  // One campaign, one run id prefix: the first attempt's, in the report's order.
  const std::string* prefix = nullptr;
  for (std::size_t i = 0; i < traces.size(); ++i) {
    Checked& k = checked[i];
    if (!k.failure && prefix == nullptr) prefix = &k.prefix;
    if (!k.failure && k.prefix != *prefix) {
      k.failure = VerifyFailure{
          traces[i].attempt, "run_id", "",
          "its trace's run id is \"" + k.prefix + traces[i].attempt +
              "\", with another prefix than the report's first attempt's (\"" + *prefix + "\")"};
    }
    if (k.failure) {
      ++out.failed;
      out.failures.push_back(std::move(*k.failure));
    }
  }
  for (auto& f : whole) out.failures.push_back(std::move(f));
  for (const diag::Diagnostic& d : report.summary_disagreements) {
    ++out.statistics_failed;
    out.failures.push_back({"", "statistic", d.pointer.substr(1), d.message});
  }
  return out;
}

diag::CommandOutcome verify_command(const VerifyArgs& args) {
  using diag::CommandOutcome;
  if (args.traces_dir.empty() == args.store_dir.empty()) {
    return CommandOutcome::usage_error("verify takes one of --traces DIR and --store DIR");
  }
  Result<std::string> bytes = io::read_input(args.report);
  if (!bytes) return CommandOutcome::stopped_by(bytes.take_diagnostics(), args.report);
  Result<Report> report = parse_report(*bytes, SummaryCheck::Collect);
  if (!report) return CommandOutcome::stopped_by(report.take_diagnostics(), args.report);
  std::optional<Suite> suite;
  if (args.suite) {
    Result<Suite> loaded = load_suite(*args.suite);
    if (!loaded) return CommandOutcome::stopped_by(loaded.take_diagnostics(), *args.suite);
    suite = std::move(*loaded);
  }
  TraceFetch fetch;
  std::unique_ptr<store::Store> store;
  std::mutex store_mutex;
  if (!args.traces_dir.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_directory(args.traces_dir, ec)) {
      return CommandOutcome::stopped_by(
          {diag::error(codes::kMissing, "--traces " + args.traces_dir + " is not a directory")});
    }
    fetch = [&](const ReportTrace& t) {
      return io::read_input((std::filesystem::path(args.traces_dir) / t.file).string(),
                            kMaxTraceBytes);
    };
  } else {
    auto opened = store::Store::open(args.store_dir, store::Mode::ReadOnly);
    if (!opened) return CommandOutcome::stopped_by(opened.take_diagnostics(), args.store_dir);
    store = std::move(*opened);
    fetch = [&](const ReportTrace& t) -> Result<std::string> {
      hash::Digest digest{};
      if (!hash::from_hex(t.trace_sha256, digest)) {
        return diag::error(codes::kSchema, "trace_sha256 is not 64 lowercase hex digits");
      }
      std::lock_guard<std::mutex> lock(store_mutex);
      return store->get(digest);
    };
  }
  Result<Verification> done =
      verify_report(*report, fetch, suite ? &*suite : nullptr, args.mac_key,
                    static_cast<std::size_t>(std::max<std::int64_t>(args.jobs, 1)));
  if (!done) return CommandOutcome::stopped_by(done.take_diagnostics());

  std::string lines;
  CommandOutcome outcome;
  for (const VerifyFailure& f : done->failures) {
    lines += json::canonical(to_json(f)) + "\n";
    outcome.remarks.push_back("verify: " +
                              (!f.attempt.empty() ? "attempt " + f.attempt
                               : f.member.empty() ? f.check
                                                  : f.member) +
                              ": " + f.message);
  }
  outcome.failed = !done->failures.empty();
  json::Value summary;
  summary.set("attempts", static_cast<std::int64_t>(done->attempts));
  summary.set("failed", static_cast<std::int64_t>(done->failed));
  summary.set("graded", done->graded);
  summary.set("holds", !outcome.failed);
  summary.set("mac", !args.mac_key.empty());
  summary.set("report_sha256", hash::sha256_hex(*bytes));
  summary.set("statistics_failed", static_cast<std::int64_t>(done->statistics_failed));
  if (suite) summary.set("suite_sha256", suite->sha256);
  lines += json::canonical(summary) + "\n";
  if (Status written = io::write_output("-", lines); !written) {
    return CommandOutcome::stopped_by(written.take_diagnostics());
  }
  if (outcome.failed) {
    outcome.summary = "verify: the report does not hold: " + std::to_string(done->failures.size()) +
                      " failure(s), " + std::to_string(done->failed) + " of " +
                      std::to_string(done->attempts) + " attempt(s) and " +
                      std::to_string(done->statistics_failed) + " statistic(s)";
  }
  return outcome;
}

}  // namespace mf::eval
