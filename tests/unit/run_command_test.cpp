#include "mf/runtime/run_command.hpp"

#include <gtest/gtest.h>

#include <string>

#include "mf/diag/codes.hpp"
#include "mf/json/reader.hpp"
#include "mf/runtime/replay.hpp"
#include "temp_dir.hpp"

namespace mf::runtime {
namespace {

const std::string kFixtures = std::string(MF_SOURCE_DIR) + "/fixtures";

// Arguments for plan mode (built apart: GCC 12 warns falsely about an optional<string> member
// assigned in the test body).
RunArgs in_plan_mode(std::string plan_path) {
  RunArgs a;
  a.plan_path = std::move(plan_path);
  return a;
}

TEST(RunCommand, TraceContentModes) {
  EXPECT_EQ(parse_trace_content("digest"), TraceContent::Digest);
  EXPECT_EQ(parse_trace_content("inline"), TraceContent::Inline);
  EXPECT_EQ(parse_trace_content("none"), TraceContent::None);
  EXPECT_EQ(parse_trace_content("store"), TraceContent::Store);
  EXPECT_FALSE(parse_trace_content("Digest"));
  EXPECT_FALSE(parse_trace_content(""));
}

TEST(RunCommand, TraceAndResultCannotShareStdout) {
  RunArgs a;
  a.trace_path = "-";
  const std::string why =
      "--trace - and --output - both name stdout: give --output a FILE, or none (the trace holds "
      "the result)";
  EXPECT_EQ(check_streams(a), why);
  EXPECT_EQ(run_command(a).usage, why);
  a.output.clear();  // no result written: the trace on stdout holds it
  EXPECT_EQ(check_streams(a), "");
  a.output = "result.json";
  EXPECT_EQ(check_streams(a), "");
  a.trace_path = "t.jsonl";
  a.output = "-";
  EXPECT_EQ(check_streams(a), "");
}

TEST(RunCommand, EachModeRefusesWhatItCannotDo) {
  RunArgs plan = in_plan_mode("/nonexistent/plan.json");
  plan.trace_path = "t.jsonl";
  plan.trace_content = TraceContent::Store;
  EXPECT_EQ(run_command(plan).usage, "--trace-content store is not available with --plan");
  plan.trace_content = TraceContent::Digest;
  plan.store_given = true;
  plan.store_dir = "st";
  EXPECT_EQ(run_command(plan).usage, "--store with --plan holds the reply cache: give --cache");
  // MF_STORE alone is no --store: the plan is read (and is missing).
  plan.store_given = false;
  const auto missing = run_command(plan);
  EXPECT_TRUE(missing.usage.empty());
  ASSERT_FALSE(missing.diagnostics.empty());
  EXPECT_EQ(missing.source, "/nonexistent/plan.json");

  RunArgs task;
  task.task_path = "/nonexistent/task.json";
  task.trace_path = "t.jsonl";
  task.trace_content = TraceContent::Store;
  EXPECT_EQ(run_command(task).usage, "--trace-content store needs --store DIR (or MF_STORE)");
  task.trace_content = TraceContent::Inline;
  const auto no_task = run_command(task);
  ASSERT_FALSE(no_task.diagnostics.empty());
  EXPECT_EQ(no_task.diagnostics[0].code, diag::codes::kMissing);
  EXPECT_EQ(no_task.source, "/nonexistent/task.json");
}

TEST(RunCommand, ATaskRunWritesItsOutputOrEndsWithASummary) {
  test::TempDir dir;
  RunArgs a;
  a.task_path = kFixtures + "/forge/task-valid.json";
  a.model_spec = "scripted:" + kFixtures + "/forge/responses-valid.json";
  a.trace_path = (dir / "t.jsonl").string();
  a.output = (dir / "out.json").string();
  a.fixed_clock = true;
  const auto done = run_command(a);
  EXPECT_FALSE(done.stopped());
  EXPECT_FALSE(done.failed);
  auto out = json::parse(test::read_file(dir / "out.json"));
  ASSERT_TRUE(out);
  EXPECT_TRUE(out->find("risk"));

  a.model_spec = "scripted:" + kFixtures + "/forge/responses-invalid.json";
  a.output = (dir / "none.json").string();
  const auto ended = run_command(a);
  EXPECT_FALSE(ended.stopped());
  EXPECT_TRUE(ended.failed);
  // The first cause, not the ending: the reply the verifier refused, and where the trace says so.
  EXPECT_EQ(ended.summary,
            "run ended model_failed after 2 model call(s) and 1 repair(s): output refused at $: "
            "output is not strict JSON: invalid value (line 1, column 1) (trace " +
                a.trace_path + ", event 3)");
  EXPECT_EQ(test::read_file(dir / "none.json"), "");
}

TEST(RunCommand, EndingsSayHowFarTheRunGot) {
  RunOutcome o;
  o.terminal = "budget_exhausted";
  o.model_calls = 3;
  o.repairs = 2;
  o.tool_calls = 5;
  EXPECT_EQ(task_ending(o),
            "run ended budget_exhausted after 3 model call(s) and 2 repair(s); see the trace");
  EXPECT_EQ(plan_ending(o),
            "run ended budget_exhausted after 3 model call(s) and 5 tool call(s); see the trace");
  o.terminal = "completed";
  o.output = json::parse(R"({"disposition":"blocked"})").value();
  EXPECT_EQ(plan_ending(o),
            "run ended completed (blocked) after 3 model call(s) and 5 tool call(s); see the "
            "trace");
  // With its first cause: redacted and printable, on one line, the trace named.
  o.cause = trace::Cause{7, "HTTP 401: key sk-ant-api03-" + std::string(40, 'A') + " \x1b[31m"};
  EXPECT_EQ(plan_ending(o, "-"),
            "run ended completed (blocked) after 3 model call(s) and 5 tool call(s): HTTP 401: "
            "key [REDACTED] \\x1b[31m (trace on stdout, event 7)");
}

TEST(ReplayCommand, DivergenceNamesTheFirstDifference) {
  const auto summary =
      json::parse(R"({"status":"diverged","events":10,"first_difference":)"
                  R"({"seq":4,"expected":"a","actual":{"b":1},"member":"record"}})");
  ASSERT_TRUE(summary);
  EXPECT_EQ(divergence(*summary),
            R"(replay diverges at seq 4: expected "a", got {"b":1} (member "record"))");
}

TEST(ReplayCommand, RefusalsNameTheTrace) {
  ReplayRequest from;
  from.trace_path = "-";
  from.plan_path = "/nonexistent/plan.json";
  ForkRequest fork;
  fork.from = from;
  fork.trace_path = "-";
  EXPECT_EQ(fork_command(fork).usage, "--trace - : the result is stdout");
  fork.from.trace_path = "/nonexistent/run.jsonl";
  fork.trace_path = "fork.jsonl";
  const auto forked = fork_command(fork);
  ASSERT_FALSE(forked.diagnostics.empty());
  EXPECT_EQ(forked.source, "/nonexistent/run.jsonl");
  from.trace_path = "/nonexistent/run.jsonl";
  const auto strict = strict_replay_command(from);
  ASSERT_FALSE(strict.diagnostics.empty());
  EXPECT_EQ(strict.source, "/nonexistent/run.jsonl");
}

}  // namespace
}  // namespace mf::runtime
