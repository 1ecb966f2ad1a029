// The dispatch of mf-eval's and mf-replay's command lines (mf/eval/command.hpp, replay.hpp): which
// subcommand or mode the operands and options select, the usage errors refused before any work,
// in the order they are checked, and the key read only where a verification needs it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "mf/eval/command.hpp"
#include "mf/eval/replay.hpp"

namespace mf::eval {
namespace {

const std::string kTrace = std::string(MF_SOURCE_DIR) + "/fixtures/traces/valid.jsonl";
const std::string kTraces = std::string(MF_SOURCE_DIR) + "/fixtures/traces";

// An environment variable for --mac-key-env that holds nothing.
constexpr const char* kUnsetKey = "MF_DISPATCH_TEST_UNSET_KEY";

CommandArgs eval_args(std::vector<std::string> operands) {
  ::unsetenv(kUnsetKey);
  CommandArgs a;
  a.operands = std::move(operands);
  return a;
}

TEST(EvalCommand, TheSubcommandIsNamedAndKnown) {
  EXPECT_EQ(command(eval_args({})).usage, "missing COMMAND (run, merge, report, compare, verify)");
  EXPECT_EQ(command(eval_args({"rnu"})).usage, "unknown command 'rnu' (did you mean \"run\"?)");
  EXPECT_EQ(command(eval_args({"zzzzzz"})).usage,
            "unknown command 'zzzzzz' (commands: run, merge, report, compare, verify)");
  EXPECT_EQ(command(eval_args({"run", "extra"})).usage, "unexpected argument 'extra'");
  EXPECT_EQ(command(eval_args({"compare", "extra"})).usage, "unexpected argument 'extra'");
}

TEST(EvalCommand, RunChecksTheRequiredOptionsThenTheKeyThenItsOwn) {
  CommandArgs a = eval_args({"run"});
  a.mac_key_env = kUnsetKey;
  a.format = "md";
  EXPECT_EQ(command(a).usage, "--suite is required");
  a.suite = "/nonexistent/suite.json";
  EXPECT_EQ(command(a).usage, "--output is required");
  a.output = "-";
  EXPECT_EQ(command(a).usage, std::string("--mac-key-env: the environment variable ") + kUnsetKey +
                                  " is not set or empty");
  a.mac_key_env.reset();
  EXPECT_EQ(command(a).usage,
            "run --format md prints the rendering on stdout: give --output FILE for the report");
}

TEST(EvalCommand, EachSubcommandRefusesWhatItLacks) {
  EXPECT_EQ(command(eval_args({"merge", "a.json"})).usage, "--output is required");
  EXPECT_EQ(command(eval_args({"report", "r.json"})).usage, "--format is required");
  CommandArgs report = eval_args({"report"});
  report.min_pass_rate = "0.5";  // a gate needs no rendering
  EXPECT_EQ(command(report).usage, "report takes one REPORT.json");
  EXPECT_EQ(command(eval_args({"compare"})).usage, "--baseline is required");
  CommandArgs compare = eval_args({"compare"});
  compare.baseline = "b.json";
  EXPECT_EQ(command(compare).usage, "--candidate is required");
  EXPECT_EQ(command(eval_args({"verify"})).usage, "verify takes one REPORT.json");
  CommandArgs verify = eval_args({"verify", "/nonexistent/r.json"});
  verify.mac_key_env = kUnsetKey;
  EXPECT_EQ(command(verify).usage, std::string("--mac-key-env: the environment variable ") +
                                       kUnsetKey + " is not set or empty");
}

TEST(EvalProgressLabel, TheShardElseTheReportElseTheSuite) {
  RunArgs a;
  a.suite = "suite.json";
  a.output = "-";
  EXPECT_EQ(progress_label(a), "suite.json");
  a.output = "out/r.json";
  EXPECT_EQ(progress_label(a), "out/r.json");
  a.shard = "2/4";
  EXPECT_EQ(progress_label(a), "shard 2/4");
}

// Summary lines go to /dev/null; the tests look at the outcome and the progress asked for.
class Replay : public ::testing::Test {
 protected:
  void SetUp() override {
    ::unsetenv(kUnsetKey);
    null_ = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    ASSERT_GE(null_, 0);
    args_.progress = [this](const std::string& what, const std::string& unit) {
      asked_.emplace_back(what, unit);
      return trace::Progress{};
    };
    args_.on_error = [this](const diag::Diagnostic& d) { errors_.push_back(d.code); };
  }
  void TearDown() override { ::close(null_); }
  diag::CommandOutcome replay() { return replay_command(args_, null_); }

  int null_ = -1;
  ReplayArgs args_;
  std::vector<std::pair<std::string, std::string>> asked_;
  std::vector<std::string> errors_;  // the first error of each trace that did not pass
};

TEST_F(Replay, OneTraceIsVerifiedWithItsBytesShown) {
  args_.operands = {kTrace};
  const auto outcome = replay();
  EXPECT_FALSE(outcome.stopped());
  EXPECT_FALSE(outcome.failed);
  EXPECT_EQ(asked_, (std::vector<std::pair<std::string, std::string>>{{kTrace, ""}}));
}

TEST_F(Replay, ManyTracesAreCountedUnderTheFirstAndHowManyMore) {
  args_.operands = {kTrace, kTrace, kTrace};
  EXPECT_FALSE(replay().stopped());
  EXPECT_EQ(asked_,
            (std::vector<std::pair<std::string, std::string>>{{kTrace + " and 2 more", "traces"}}));
  asked_.clear();
  EXPECT_TRUE(errors_.empty());
  args_.operands = {kTraces};  // a directory is many traces, two of them not whole
  const auto outcome = replay();
  EXPECT_FALSE(outcome.stopped());
  EXPECT_TRUE(outcome.failed);
  EXPECT_EQ(errors_.size(), 2u);
  EXPECT_EQ(asked_, (std::vector<std::pair<std::string, std::string>>{{kTraces, "traces"}}));
}

TEST_F(Replay, TheOptionsOfOneTraceAreRefusedWithMany) {
  args_.operands = {kTrace, kTrace};
  args_.expect_sha256 = std::string(64, '0');
  EXPECT_EQ(check_many(args_), "--expect-sha256 takes one TRACE");
  EXPECT_EQ(replay().usage, "--expect-sha256 takes one TRACE");
  args_.expect_sha256.reset();
  args_.fixed_clock = true;  // MF_FIXED_CLOCK=1 alone is not the flag
  EXPECT_EQ(check_many(args_), "");
  args_.fixed_clock_given = true;
  EXPECT_EQ(check_many(args_), "--fixed-clock takes one TRACE");
  args_.fixed_clock_given = false;
  args_.start_unix_ms = 1;
  EXPECT_EQ(check_many(args_), "--start-unix-ms takes one TRACE");
  args_.start_unix_ms.reset();
  args_.operands = {kTrace, "-"};
  EXPECT_EQ(replay().usage, "'-' (stdin) is one TRACE, not one of many");
  EXPECT_TRUE(asked_.empty());
}

TEST_F(Replay, ManyTracesCheckTheKeyBeforeTheirSource) {
  args_.operands = {kTrace, kTrace};
  args_.mac_key_env = kUnsetKey;
  args_.store_given = true;
  EXPECT_EQ(replay().usage, std::string("--mac-key-env: the environment variable ") + kUnsetKey +
                                " is not set or empty");
  args_.mac_key_env.reset();
  EXPECT_EQ(replay().usage, "--store takes --report");
}

TEST_F(Replay, AReportTakesOneDirOrAStore) {
  args_.report = "report.json";
  args_.operands = {kTraces, kTraces};
  EXPECT_EQ(replay().usage, "--report takes one DIR, where its traces are, or --store");
  args_.operands = {kTraces};
  args_.store_given = true;
  args_.store_dir = "st";
  EXPECT_EQ(replay().usage, "--report takes one DIR, where its traces are, or --store");
  args_.operands.clear();
  args_.store_given = false;
  args_.store_dir.clear();  // neither --store nor $MF_STORE
  EXPECT_EQ(replay().usage, "--report takes one DIR, where its traces are, or --store");
  EXPECT_TRUE(asked_.empty());
}

TEST_F(Replay, ARerunNeedsItsPlanAndNoKey) {
  args_.operands = {kTrace};
  args_.mac_key_env = kUnsetKey;  // not read: a re-run verifies nothing
  args_.strict = true;
  EXPECT_EQ(replay().usage, "--plan is required");
  args_.plan = "plan.json";
  args_.fork_at = 3;
  EXPECT_EQ(replay().usage, "--strict or --fork-at, not both");
  args_.strict = false;
  EXPECT_EQ(replay().usage, "--responses is required");
  args_.responses = "r.json";
  EXPECT_EQ(replay().usage, "--trace is required");
  args_.exported = "otlp-json";
  EXPECT_EQ(replay().usage, "--export with --strict or --fork-at");
}

TEST_F(Replay, OneTraceChecksTheKeyThenTheDigest) {
  args_.operands = {kTrace};
  args_.expect_sha256 = "ABC";
  args_.mac_key_env = kUnsetKey;
  EXPECT_EQ(replay().usage, std::string("--mac-key-env: the environment variable ") + kUnsetKey +
                                " is not set or empty");
  args_.mac_key_env.reset();
  EXPECT_EQ(replay().usage, "--expect-sha256 takes 64 lowercase hex digits");
  EXPECT_TRUE(asked_.empty());
}

}  // namespace
}  // namespace mf::eval
