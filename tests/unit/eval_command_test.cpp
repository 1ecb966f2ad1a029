#include "mf/eval/command.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "mf/diag/codes.hpp"
#include "mf/json/reader.hpp"
#include "temp_dir.hpp"

namespace mf::eval {
namespace {

const std::string kForge = std::string(MF_SOURCE_DIR) + "/fixtures/forge";

// A suite of the forge task with one case that passes and, with `failing`, one that does not.
std::string suite_json(bool failing) {
  const std::string c = R"("task":")" + kForge + R"(/task-valid.json","model":"scripted:)" +
                        kForge + R"(/responses-valid.json","expect":{"terminal":"completed",)";
  return R"({"suite_id":"s","cases":[{"id":"ok",)" + c + R"("model_calls":1}})" +
         (failing ? R"(,{"id":"wrong",)" + c + R"("model_calls":7}})" : "") + "]}";
}

RunArgs args_for(const test::TempDir& dir, bool failing) {
  test::write_file(dir / "suite.json", suite_json(failing));
  RunArgs a;
  a.suite = (dir / "suite.json").string();
  a.output = (dir / "r.json").string();
  a.fixed_clock = true;
  return a;
}

TEST(EvalRunCommand, OptionChecksComeFirstInOrder) {
  RunArgs a;
  a.suite = "/nonexistent/suite.json";
  a.output = "-";
  a.format = "md";
  a.repeat = 5000;
  EXPECT_EQ(run_command(a).usage,
            "run --format md prints the rendering on stdout: give --output FILE for the report");
  a.format = "json";
  EXPECT_EQ(run_command(a).usage, "--repeat is at most 1000");
  a.repeat = 1000;
  a.models = {"no-equals"};
  EXPECT_EQ(run_command(a).usage,
            "--model takes LABEL=SPEC, LABEL of [A-Za-z0-9_-], not 'no-equals'");
  a.models.clear();
  a.shard = "3/2";
  EXPECT_EQ(run_command(a).usage, "--shard takes i/n with 1 <= i <= n, not '3/2'");
  a.shard = "2/2";
  a.trace_content = "store";
  EXPECT_EQ(run_command(a).usage, "--trace-content store needs --store DIR (or MF_STORE)");
  a.trace_content = "none";
  EXPECT_EQ(run_command(a).usage, "--trace-content is digest, inline or store, not 'none'");
  a.trace_content = "inline";
  a.resume = true;
  EXPECT_EQ(run_command(a).usage,
            "--resume needs a journal: --journal FILE, --output FILE or --store");
  // Only then is the suite read; its diagnostics are about the suite file.
  a.resume = false;
  const auto missing = run_command(a);
  EXPECT_TRUE(missing.usage.empty());
  ASSERT_FALSE(missing.diagnostics.empty());
  EXPECT_EQ(missing.diagnostics[0].code, diag::codes::kMissing);
  EXPECT_EQ(missing.source, "/nonexistent/suite.json");
}

TEST(EvalRunCommand, WritesTheReportAndItsJournal) {
  test::TempDir dir;
  const auto done = run_command(args_for(dir, false));
  EXPECT_FALSE(done.stopped());
  EXPECT_FALSE(done.failed);
  // A passing run says so too, in the one summary line.
  EXPECT_EQ(done.remarks, std::vector<std::string>{"1 cases, 1 passed, 0 failed — report " +
                                                   (dir / "r.json").string()});
  auto report = json::parse(test::read_file(dir / "r.json"));
  ASSERT_TRUE(report);
  EXPECT_EQ(report->find("summary")->find("passed")->as_exact_int(), 1);
  EXPECT_FALSE(test::read_file(dir / "r.json.journal").empty());
}

TEST(EvalRunCommand, AFailedCaseIsAFailedOutcomeWithItsCount) {
  test::TempDir dir;
  const auto done = run_command(args_for(dir, true));
  EXPECT_FALSE(done.stopped());
  EXPECT_TRUE(done.failed);
  EXPECT_EQ(done.remarks, std::vector<std::string>{"2 cases, 1 passed, 1 failed: wrong — report " +
                                                   (dir / "r.json").string()});
}

// The first ten failing ids are named and the rest counted; with repeats the attempts are
// counted too; a report on stdout is said to be there.
TEST(EvalSummaryLine, NamesTenFailuresAndCountsTheRest) {
  json::Value report = *json::parse(R"({"summary":{"cases":13,"passed":1,"failed":12},"cases":[
    {"id":"c00","status":"passed"},{"id":"c01","status":"failed"},{"id":"c02","status":"failed"},
    {"id":"c03","status":"failed"},{"id":"c04","status":"failed"},{"id":"c05","status":"failed"},
    {"id":"c06","status":"failed"},{"id":"c07","status":"failed"},{"id":"c08","status":"failed"},
    {"id":"c09","status":"failed"},{"id":"c10","status":"failed"},{"id":"c11","status":"failed"},
    {"id":"c12","status":"failed"}]})");
  EXPECT_EQ(summary_line(report, "out/r.json"),
            "13 cases, 1 passed, 12 failed: c01, c02, c03, c04, c05, c06, c07, c08, c09, c10 and "
            "2 more — report out/r.json");
  report = *json::parse(R"({"summary":{"cases":2,"passed":1,"failed":1,"repeat":3,"attempts":6,
    "attempts_passed":4},"cases":[{"id":"a","status":"passed"},{"id":"b","status":"failed"}]})");
  EXPECT_EQ(summary_line(report, "-"),
            "2 cases, 1 passed, 1 failed: b; 6 attempts (3 per case), 4 passed — report on stdout");
}

TEST(EvalRunCommand, ProgressLinesGoToTheCallback) {
  test::TempDir dir;
  RunArgs a = args_for(dir, true);
  std::string shown;
  a.show_progress = [&shown](std::string_view line) { shown += line; };
  (void)run_command(a);
  EXPECT_NE(shown.find("attempt 0/2, 0 passed"), std::string::npos) << shown;
  EXPECT_NE(shown.find("attempt 2/2, 1 passed (50%)"), std::string::npos) << shown;
}

TEST(EvalMergeCommand, NeedsShards) {
  EXPECT_EQ(merge_command({}, "-").usage, "merge needs the shard reports");
  const auto missing = merge_command({"/nonexistent.json"}, "-");
  ASSERT_FALSE(missing.diagnostics.empty());
  EXPECT_EQ(missing.source, "/nonexistent.json");
}

// Runs shard 1/2 of `a` into s1.json, then shard 2/2 with `repeat` into s2.json, and merges them
// into m.json.
diag::CommandOutcome run_and_merge_two_shards(const test::TempDir& dir, RunArgs a,
                                              std::int64_t repeat) {
  a.shard = "1/2";
  a.output = (dir / "s1.json").string();
  EXPECT_FALSE(run_command(a).stopped());
  a.shard = "2/2";
  a.repeat = repeat;
  a.output = (dir / "s2.json").string();
  EXPECT_FALSE(run_command(a).stopped());
  return merge_command({(dir / "s1.json").string(), (dir / "s2.json").string()},
                       (dir / "m.json").string());
}

TEST(EvalMergeCommand, AMergedFailureIsAFailedOutcome) {
  test::TempDir dir;
  const RunArgs a = args_for(dir, true);
  const auto merged = run_and_merge_two_shards(dir, a, a.repeat);
  EXPECT_FALSE(merged.stopped());
  EXPECT_TRUE(merged.failed);
  EXPECT_EQ(merged.remarks,
            std::vector<std::string>{"2 cases, 1 passed, 1 failed: wrong — report " +
                                     (dir / "m.json").string()});
  auto report = json::parse(test::read_file(dir / "m.json"));
  ASSERT_TRUE(report);
  EXPECT_EQ(report->find("summary")->find("failed")->as_exact_int(), 1);
}

// A shard run with another --repeat (or any other setting) is of another campaign: merge names the
// setting and both values, and writes nothing.
TEST(EvalMergeCommand, ShardsOfAnotherCampaignAreRefused) {
  test::TempDir dir;
  const auto merged = run_and_merge_two_shards(dir, args_for(dir, true), 3);
  ASSERT_EQ(merged.diagnostics.size(), 1u);
  EXPECT_EQ(merged.diagnostics[0].code, diag::codes::kSchema);
  EXPECT_EQ(
      merged.diagnostics[0].message,
      "a shard of another campaign: --repeat is 3 here but 1 in " + (dir / "s1.json").string());
  EXPECT_EQ(merged.diagnostics[0].source, (dir / "s2.json").string());
  EXPECT_FALSE(std::filesystem::exists(dir / "m.json"));
}

// The journal is a hash chain: a resume reads it back whole; a line edited before the last is
// caught at the line after it (MF-V004).
TEST(EvalRunCommand, TheJournalIsAChainAResumeChecks) {
  test::TempDir dir;
  RunArgs a = args_for(dir, true);
  ASSERT_FALSE(run_command(a).stopped());
  const std::string journal = test::read_file(dir / "r.json.journal");
  const auto second = journal.find('\n') + 1;
  ASSERT_NE(journal.find("\"prev\":\"", second), std::string::npos) << journal;
  a.resume = true;
  EXPECT_FALSE(run_command(a).stopped());
  EXPECT_EQ(test::read_file(dir / "r.json.journal"), journal);
  std::string edited = journal;
  edited.replace(edited.find("\"model_calls\":1"), 15, "\"model_calls\":2");
  test::write_file(dir / "r.json.journal", edited);
  const auto refused = run_command(a);
  ASSERT_EQ(refused.diagnostics.size(), 1u);
  EXPECT_EQ(refused.diagnostics[0].code, diag::codes::kJournalTampered);
  EXPECT_EQ(refused.diagnostics[0].line, 2);
}

TEST(EvalReportCommand, RendersOrRefusesTheFile) {
  test::TempDir dir;
  ASSERT_FALSE(run_command(args_for(dir, false)).stopped());
  const auto md = dir / "r.md";
  EXPECT_FALSE(
      report_command({.report = (dir / "r.json").string(), .format = "md", .output = md.string()})
          .stopped());
  EXPECT_NE(test::read_file(md).find("ok"), std::string::npos);
  test::write_file(dir / "bad.json", "{}");
  const auto bad = report_command(
      {.report = (dir / "bad.json").string(), .format = "md", .output = md.string()});
  ASSERT_FALSE(bad.diagnostics.empty());
  EXPECT_EQ(bad.source, (dir / "bad.json").string());
}

// --min-pass-rate: one of two cases passed, so 0.5 holds and 0.6 does not; nothing is rendered
// without --format; the rate is checked before the file is read.
TEST(EvalReportCommand, MinPassRateGatesTheReport) {
  test::TempDir dir;
  ASSERT_TRUE(run_command(args_for(dir, true)).failed);
  const std::string r = (dir / "r.json").string();
  const auto held =
      report_command({.report = r, .output = (dir / "none").string(), .min_pass_rate = "0.5"});
  EXPECT_FALSE(held.stopped());
  EXPECT_FALSE(held.failed);
  EXPECT_EQ(held.remarks,
            std::vector<std::string>{"gate passed: pass rate 1/2 is at least --min-pass-rate 0.5"});
  EXPECT_FALSE(std::filesystem::exists(dir / "none"));
  const auto below = report_command({.report = r, .min_pass_rate = "0.6"});
  EXPECT_TRUE(below.failed);
  EXPECT_EQ(below.remarks,
            std::vector<std::string>{"gate failed: pass rate 1/2 is below --min-pass-rate 0.6"});
  for (const char* bad : {"0", "1.5", "x", ""}) {
    EXPECT_EQ(
        report_command({.report = "/nonexistent.json", .min_pass_rate = bad}).usage,
        "--min-pass-rate takes a number above 0 and at most 1, not '" + std::string(bad) + "'")
        << bad;
  }
}

TEST(EvalGate, APositiveNumberUpToABillion) {
  EXPECT_EQ(parse_gate("0.05"), 0.05);
  EXPECT_EQ(parse_gate("1.5"), 1.5);
  EXPECT_EQ(parse_gate("1e9"), 1e9);
  EXPECT_EQ(parse_gate(" 2"), 2);  // strtod's reading: leading blanks are skipped
  for (const std::string text : {"", "0", "-1", "1e10", "x", "1x", "2 ", "nan", "inf"}) {
    EXPECT_FALSE(parse_gate(text)) << "'" << text << "'";
  }
}

TEST(EvalCompareCommand, ChecksFormatThenGatesAfterReadingTheReports) {
  test::TempDir dir;
  ASSERT_FALSE(run_command(args_for(dir, false)).stopped());
  CompareArgs c;
  c.baseline = "/nonexistent.json";
  c.candidate = (dir / "r.json").string();
  c.format = "junit";
  EXPECT_EQ(compare_command(c).source, "/nonexistent.json");
  c.baseline = c.candidate;
  EXPECT_EQ(compare_command(c).usage, "compare --format is json, md or html");
  c.format = "md";
  c.max_cost_ratio = "0";
  EXPECT_EQ(compare_command(c).usage, "--max-cost-ratio takes a positive number, not '0'");
  c.max_cost_ratio.reset();
  c.max_false_closure_rate = "-2";
  EXPECT_EQ(compare_command(c).usage, "--max-false-closure-rate takes a positive number, not '-2'");
}

TEST(EvalCompareCommand, AFailedGateIsARemark) {
  test::TempDir dir;
  ASSERT_FALSE(run_command(args_for(dir, false)).stopped());
  RunArgs a = args_for(dir, true);
  a.output = (dir / "candidate.json").string();
  ASSERT_FALSE(run_command(a).stopped());
  CompareArgs c;
  c.baseline = (dir / "r.json").string();
  c.candidate = (dir / "candidate.json").string();
  c.format = "md";
  testing::internal::CaptureStdout();
  CompareArgs same_reports;
  same_reports.baseline = same_reports.candidate = c.baseline;
  const auto same = compare_command(same_reports);
  testing::internal::GetCapturedStdout();
  EXPECT_FALSE(same.failed);
  EXPECT_TRUE(same.remarks.empty());
  // The candidate has a case the baseline lacks, which no gate minds; a latency gate on a report
  // without latencies fails.
  c.max_latency_ratio = "1.5";
  testing::internal::CaptureStdout();
  const auto gated = compare_command(c);
  testing::internal::GetCapturedStdout();
  EXPECT_TRUE(gated.failed);
  ASSERT_EQ(gated.remarks.size(), 1u);
  EXPECT_EQ(gated.remarks[0].rfind("gate failed: ", 0), 0u) << gated.remarks[0];
}

}  // namespace
}  // namespace mf::eval
