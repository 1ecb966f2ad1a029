#include "mf/trace/many.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <sys/stat.h>

#include <string>
#include <thread>
#include <vector>

#include "mf/diag/codes.hpp"
#include "mf/eval/report.hpp"
#include "mf/eval/runner.hpp"
#include "mf/eval/suite.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using mf::test::TempDir;
using mf::trace::TraceRef;

const std::string kForge = std::string(MF_SOURCE_DIR) + "/fixtures/forge";

// The Forge suite's traces, written by a real campaign (twice each), and its report.
struct Campaign {
  TempDir dir{"mf-many"};
  std::string report;
  Campaign() {
    fs::create_directory(dir / "tr");
    auto suite = mf::eval::load_suite(kForge + "/eval-suite.json");
    EXPECT_TRUE(suite.ok());
    mf::eval::RunOptions o;
    o.fixed_clock = true;
    o.repeat = 2;
    o.traces_dir = (dir / "tr").string();
    auto run = mf::eval::run_suite(*suite, o);
    EXPECT_TRUE(run.ok());
    report = run->bytes();
  }
  std::string trace(const std::string& name) const { return (dir / "tr" / name).string(); }
};

// What verify_many_command writes to a file and reports, for `jobs` threads.
struct Many {
  std::string out;
  std::vector<mf::diag::Diagnostic> errors;
  mf::diag::CommandOutcome outcome;
};

Many verify_many(const std::vector<TraceRef>& traces, std::size_t jobs, const TempDir& dir) {
  Many m;
  const std::string path = (dir / "out").string();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  m.outcome = mf::trace::verify_many_command(
      traces, {}, jobs, fd, [&m](const mf::diag::Diagnostic& d) { m.errors.push_back(d); });
  ::close(fd);
  m.out = mf::test::read_file(path);
  return m;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  for (std::size_t at = 0; at < text.size();) {
    const auto nl = text.find('\n', at);
    out.push_back(text.substr(at, nl - at));
    at = nl + 1;
  }
  return out;
}

TEST(TraceMany, ListsADirectorysTracesByNameAndNothingBelowIt) {
  TempDir d;
  for (const char* name : {"b.jsonl", "a.jsonl", "c.jsonl.bak", ".hidden.jsonl", "notes.txt"}) {
    mf::test::write_file(d / name, "");
  }
  fs::create_directory(d / "sub");
  mf::test::write_file(d / "sub" / "0.jsonl", "");
  auto listed = mf::trace::traces_in(d.path().string());
  ASSERT_TRUE(listed.ok());
  const std::string p = d.path().string() + "/";
  EXPECT_EQ(*listed, (std::vector<std::string>{p + "a.jsonl", p + "b.jsonl"}));
  auto missing = mf::trace::traces_in((d / "nope").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.diagnostics()[0].code, mf::diag::codes::kMissing);
}

TEST(TraceMany, LinesComeInTheOrderGivenForAnyNumberOfThreads) {
  Campaign c;
  TempDir d;
  std::vector<TraceRef> traces;
  const std::vector<std::string> names = {
      "valid-first-response.1.jsonl", "provider-failure.0.jsonl", "one-targeted-repair.1.jsonl"};
  for (int i = 0; i < 30; ++i) traces.push_back({c.trace(names[i % 3]), {}, {}});
  traces[17].path = c.trace("nope.jsonl");
  const Many one = verify_many(traces, 1, d);
  EXPECT_TRUE(one.outcome.failed);
  EXPECT_FALSE(one.outcome.stopped());
  const auto lines = lines_of(one.out);
  ASSERT_EQ(lines.size(), 30u);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    auto line = mf::json::parse(lines[i]);
    ASSERT_TRUE(line.ok());
    EXPECT_EQ(line->find("path")->as_string(), traces[i].path);
    EXPECT_EQ(line->find("status")->as_string(), i == 17 ? "unreadable" : "ok");
  }
  ASSERT_EQ(one.errors.size(), 1u);
  EXPECT_EQ(one.errors[0].code, mf::diag::codes::kMissing);
  EXPECT_EQ(one.errors[0].source, traces[17].path);
  for (std::size_t jobs : {2u, 3u, 8u, 64u}) {
    const Many m = verify_many(traces, jobs, d);
    EXPECT_EQ(m.out, one.out) << jobs;
    EXPECT_EQ(m.errors, one.errors) << jobs;
    EXPECT_TRUE(m.outcome.failed);
  }
}

TEST(TraceMany, ALineIsTheSummaryWithItsPathAndAttempt) {
  Campaign c;
  const std::string path = c.trace("one-targeted-repair.0.jsonl");
  auto summary = mf::trace::verify_file(path);
  ASSERT_TRUE(summary.ok());
  std::optional<mf::diag::Diagnostic> error;
  mf::json::Value line = mf::trace::summary_line({path, "one-targeted-repair.0", {}}, {}, error);
  EXPECT_FALSE(error);
  mf::json::Value expected = mf::trace::to_json(*summary);
  expected.set("path", path);
  expected.set("attempt", "one-targeted-repair.0");
  EXPECT_EQ(mf::json::canonical(line), mf::json::canonical(expected));
  // Another digest expected: corrupt, MF-E018, the attempt named.
  line = mf::trace::summary_line({path, "x.1", std::string(64, '0')}, {}, error);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code, mf::diag::codes::kTraceDigestMismatch);
  EXPECT_EQ(error->source, path);
  EXPECT_EQ(error->message.rfind("attempt x.1: ", 0), 0u) << error->message;
  EXPECT_EQ(line.find("status")->as_string(), "corrupt");
}

// Opens FIFO `path` for writing when a reader has it open (a trace being verified), writes `bytes`
// and closes it; false when no reader has it open.
bool feed_if_read(const std::string& path, const std::string& bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  EXPECT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  ::close(fd);
  return true;
}

void feed(const std::string& path, const std::string& bytes) {
  for (int tries = 0; !feed_if_read(path, bytes); ++tries) {
    ASSERT_LT(tries, 20000) << path << " is never read";
    ::usleep(1000);
  }
}

// Traces are FIFOs fed by the test, so it sees which ones are being read: with 2 threads, never
// more than 2 at once; and while the first is held, no more than 4 x 2 - 1 finish after it.
TEST(TraceMany, BoundsTheTracesInFlightAndTheLinesWaiting) {
  Campaign c;
  TempDir d;
  const std::string bytes = mf::test::read_file(c.trace("provider-failure.0.jsonl"));
  ASSERT_LT(bytes.size(), 4096u);  // fits a pipe's buffer: a write never blocks
  std::vector<TraceRef> traces;
  for (int i = 0; i < 12; ++i) {
    const std::string fifo = (d / ("t" + std::to_string(i))).string();
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    traces.push_back({fifo, {}, {}});
  }
  Many m;
  std::thread pool([&] { m = verify_many(traces, 2, d); });
  auto none_read_from = [&](std::size_t first) {
    for (std::size_t j = first; j < traces.size(); ++j) {
      if (feed_if_read(traces[j].path, bytes)) ADD_FAILURE() << "trace " << j << " read early";
    }
  };
  feed(traces[1].path, bytes);  // traces 0 and 1 are read first
  for (std::size_t k = 2; k < 8; ++k) {
    // 0 and k are in flight, nothing after k.
    for (int i = 0; i < 20; ++i) none_read_from(k + 1), ::usleep(1000);
    feed(traces[k].path, bytes);
  }
  // Lines 1..7 wait for line 0: trace 8 does not start.
  for (int i = 0; i < 200; ++i) none_read_from(8), ::usleep(1000);
  for (std::size_t k : {0u, 8u, 9u, 10u, 11u}) feed(traces[k].path, bytes);
  pool.join();
  EXPECT_FALSE(m.outcome.failed);
  EXPECT_EQ(lines_of(m.out).size(), 12u);
}

TEST(TraceMany, AnOutputThatCannotBeWrittenStopsTheWork) {
  Campaign c;
  std::vector<TraceRef> traces(5, TraceRef{c.trace("provider-failure.1.jsonl"), {}, {}});
  const int full = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  if (full < 0) GTEST_SKIP() << "no /dev/full";
  const auto outcome = mf::trace::verify_many_command(traces, {}, 2, full, {});
  ::close(full);
  ASSERT_FALSE(outcome.diagnostics.empty());
  EXPECT_EQ(mf::diag::exit_status(outcome.diagnostics, mf::diag::Job::Work), 3);
}

TEST(EvalReportTraces, EveryAttemptWithItsFileAndDigest) {
  Campaign c;
  auto report = mf::eval::parse_report(c.report);
  ASSERT_TRUE(report.ok());
  const auto traces = mf::eval::report_traces(*report);
  ASSERT_EQ(traces.size(), 8u);
  EXPECT_EQ(traces[0].attempt, "invalid-without-repair.0");
  EXPECT_EQ(traces[1].attempt, "invalid-without-repair.1");
  EXPECT_EQ(traces[7].file, "valid-first-response.1.jsonl");
  for (const auto& t : traces) {
    EXPECT_EQ(t.file, t.attempt + ".jsonl");
    EXPECT_EQ(t.trace_sha256, mf::hash::sha256_hex(mf::test::read_file(c.trace(t.file))))
        << t.attempt;
  }
}

// mf-replay --report keeps only each attempt and its digest, the same attempts in the same order.
TEST(EvalReportTraces, KeptAsAttemptAndDigest) {
  Campaign c;
  const std::string path = (c.dir / "report.json").string();
  mf::test::write_file(path, c.report);
  auto kept = mf::eval::report_attempt_traces(path);
  ASSERT_TRUE(kept.ok());
  const auto traces = mf::eval::report_traces(*mf::eval::parse_report(c.report));
  ASSERT_EQ(kept->size(), traces.size());
  for (std::size_t i = 0; i < traces.size(); ++i) {
    EXPECT_EQ((*kept)[i].attempt, traces[i].attempt);
    EXPECT_EQ(mf::hash::to_hex((*kept)[i].trace_sha256), traces[i].trace_sha256);
  }
  mf::test::write_file(path, "{\"v\":1}");
  auto refused = mf::eval::report_attempt_traces(path);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.diagnostics().front().code, mf::diag::codes::kSchema);
}

}  // namespace
