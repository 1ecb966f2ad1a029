// The library sides of mf-compile (harness, mcp) and mf-replay (trace): their option checks and
// how each maps its work to a diag::CommandOutcome.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>

#include "mf/diag/codes.hpp"
#include "mf/harness/command.hpp"
#include "mf/json/reader.hpp"
#include "mf/mcp/command.hpp"
#include "mf/trace/command.hpp"
#include "temp_dir.hpp"

namespace mf {
namespace {

const std::string kFixtures = std::string(MF_SOURCE_DIR) + "/fixtures";

// Writes through `write(fd)` into a file of `dir`; returns what was written.
template <typename Write>
std::string captured(const test::TempDir& dir, Write write) {
  const auto path = dir / "captured";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  EXPECT_GE(fd, 0);
  write(fd);
  ::close(fd);
  return test::read_file(path);
}

TEST(McpTimeout, APositiveIntegerAsStollReadsIt) {
  EXPECT_EQ(mcp::parse_timeout_ms("500"), 500);
  EXPECT_EQ(mcp::parse_timeout_ms("1"), 1);
  // std::stoll's reading, kept as it was: leading blanks and a sign, trailing text ignored.
  EXPECT_EQ(mcp::parse_timeout_ms(" +12abc"), 12);
  for (const std::string text : {"", "abc", "0", "-5", "99999999999999999999", " "}) {
    EXPECT_FALSE(mcp::parse_timeout_ms(text)) << "'" << text << "'";
  }
}

TEST(McpCommand, ABadTimeoutIsRefusedBeforeAnyServerStarts) {
  const auto refused = mcp::discover_command("/nonexistent-server", {}, "", std::string("0"), -1);
  EXPECT_EQ(refused.usage, "--timeout-ms takes a positive integer");
  const auto unreachable =
      mcp::discover_command("/nonexistent-server", {}, "", std::string("2000"), -1);
  ASSERT_FALSE(unreachable.diagnostics.empty());
  EXPECT_EQ(unreachable.diagnostics[0].code, diag::codes::kConnectorUnreachable);
}

TEST(McpCommand, AdmitNamesTheFileAtFault) {
  test::TempDir dir;
  const auto both = mcp::admit_command("-", "-", -1);
  ASSERT_FALSE(both.diagnostics.empty());
  EXPECT_EQ(both.diagnostics[0].code, diag::codes::kUsage);
  const auto missing =
      mcp::admit_command("/nonexistent.json", kFixtures + "/connector/everything.policy.json", -1);
  ASSERT_FALSE(missing.diagnostics.empty());
  EXPECT_EQ(missing.diagnostics[0].source, "/nonexistent.json");
}

TEST(HarnessCommand, PlanAndReportCannotBothGoToStdout) {
  harness::CompileArgs a;
  a.diagnostics = "-";
  const std::string why = "the plan already goes to stdout; give --diagnostics a FILE";
  EXPECT_EQ(harness::check_compile_args(a), why);
  a.output = "-";
  EXPECT_EQ(harness::check_compile_args(a), why);
  EXPECT_EQ(harness::compile_plan(a, -1).usage, why);
  a.output = "plan.json";
  EXPECT_EQ(harness::check_compile_args(a), "");
  a.output.clear();
  a.out_dir = "plans";
  EXPECT_EQ(harness::check_compile_args(a), "");
  a.output = "-";
  EXPECT_EQ(harness::check_compile_args(a),
            "--out-dir and -o both say where the plan goes: give one");
  a.out_dir.clear();
  a.diagnostics = "report.json";
  EXPECT_EQ(harness::check_compile_args(a), "");
}

TEST(HarnessCommand, CompileFaultsAreAboutTheSource) {
  test::TempDir dir;
  harness::CompileArgs a;
  a.source = kFixtures + "/harness/golden.yaml";  // its catalog and profiles are not given
  const std::string out = captured(dir, [&](int fd) {
    const auto refused = harness::compile_plan(a, fd);
    ASSERT_FALSE(refused.diagnostics.empty());
    EXPECT_TRUE(refused.warnings.empty());
    EXPECT_EQ(refused.source, a.source);
  });
  EXPECT_EQ(out, "");
  a.catalogs = {kFixtures + "/harness/catalog.json"};
  a.profiles = {kFixtures + "/harness/profiles.json"};
  const std::string plan = captured(dir, [&](int fd) {
    const auto compiled = harness::compile_plan(a, fd);
    EXPECT_FALSE(compiled.stopped());
    EXPECT_TRUE(compiled.warnings.empty());
  });
  auto doc = json::parse(plan);
  ASSERT_TRUE(doc);
  EXPECT_TRUE(doc->find("compiled_sha256"));
}

TEST(HarnessCommand, AVerifiedPlanPrintsItsSummaryAFailedOneIsACheck) {
  test::TempDir dir;
  const std::string summary = captured(dir, [&](int fd) {
    EXPECT_FALSE(harness::verify_plan(kFixtures + "/harness/golden.compiled.json", fd).stopped());
  });
  auto doc = json::parse(summary);
  ASSERT_TRUE(doc) << summary;
  EXPECT_TRUE(doc->find("verified")->as_bool());
  test::write_file(dir / "plan.json", R"({"kind":"plan"})");
  const auto bad = harness::verify_plan((dir / "plan.json").string(), -1);
  ASSERT_FALSE(bad.diagnostics.empty());
  EXPECT_EQ(bad.job, diag::Job::Check);
  EXPECT_EQ(bad.source, (dir / "plan.json").string());
}

TEST(TraceCommand, RunStartIsTheLastWriteLessItsTime) {
  const std::string two = "{\"seq\":0,\"t_ms\":0}\n{\"seq\":1,\"t_ms\":250}\n";
  EXPECT_EQ(trace::run_start_ms(two, 10000), 9750);
  // Without the final newline, or with a last line that is cut short.
  EXPECT_EQ(trace::run_start_ms("{\"seq\":0,\"t_ms\":0}\n{\"seq\":1,\"t_ms\":40}", 100), 60);
  EXPECT_EQ(trace::run_start_ms("{\"seq\":0,\"t_ms\":7}\n{\"seq\":1,\"t_", 100), 100);
  EXPECT_EQ(trace::run_start_ms("", 5), 5);
}

TEST(TraceCommand, VerifyPrintsTheSummaryThenTheFirstError) {
  test::TempDir dir;
  const std::string ok = captured(dir, [&](int fd) {
    EXPECT_FALSE(trace::verify_command(kFixtures + "/traces/valid.jsonl", {}, fd).stopped());
  });
  EXPECT_NE(ok.find("\"status\":\"ok\""), std::string::npos) << ok;
  const std::string late_path = kFixtures + "/traces/event-after-terminal.jsonl";
  const std::string late = captured(dir, [&](int fd) {
    const auto outcome = trace::verify_command(late_path, {}, fd);
    ASSERT_EQ(outcome.diagnostics.size(), 1u);
    EXPECT_EQ(outcome.diagnostics[0].code, diag::codes::kTraceAfterTerminal);
    EXPECT_EQ(outcome.job, diag::Job::Check);
    EXPECT_EQ(outcome.source, late_path);
  });
  EXPECT_NE(late.find("\"status\":\"corrupt\""), std::string::npos) << late;
}

TEST(TraceCommand, ExportRefusesACorruptTrace) {
  const std::string late_path = kFixtures + "/traces/event-after-terminal.jsonl";
  const auto refused = trace::export_otlp_command(late_path, 0);
  ASSERT_EQ(refused.diagnostics.size(), 1u);
  EXPECT_EQ(refused.job, diag::Job::Check);
  EXPECT_EQ(refused.source, late_path);
  const auto missing = trace::export_otlp_command("/nonexistent.jsonl", std::nullopt);
  ASSERT_FALSE(missing.diagnostics.empty());
  EXPECT_EQ(missing.diagnostics[0].code, diag::codes::kMissing);
  EXPECT_EQ(missing.job, diag::Job::Work);
}

}  // namespace
}  // namespace mf
