#include "mf/trace/cause.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mf/json/reader.hpp"
#include "mf/trace/writer.hpp"

namespace {

using mf::trace::FirstCause;

// The first cause of events given as JSON lines (envelope members other than seq and event left
// out: the cause reads neither).
std::optional<mf::trace::Cause> cause_of(const std::vector<std::string>& lines) {
  FirstCause c;
  for (const auto& line : lines) c.see(mf::json::parse(line).value());
  return c.cause();
}

TEST(FirstCause, IsTheFirstErrorEventNotTheEnding) {
  auto c = cause_of({
      R"({"seq":0,"event":"run_started"})",
      R"j({"seq":1,"event":"guardrail_violation","kind":"rescue","message":"read 1 tool call(s)"})j",
      R"({"seq":2,"event":"tool_completed","call_id":"c1","ok":false,)"
      R"("record":{"model_tool_name":"write_report","summary":"error: No artifact directory"}})",
      R"({"seq":3,"event":"guardrail_violation","kind":"tool_error","message":"a call failed"})",
      R"({"seq":4,"event":"model_failed","call":2,"error":"scripted model has no response"})",
      R"({"seq":5,"event":"run_failed","terminal":"model_failed","error":"scripted"})",
  });
  ASSERT_TRUE(c);
  EXPECT_EQ(c->seq, 2);
  EXPECT_EQ(c->text, "tool write_report failed: No artifact directory");
}

TEST(FirstCause, NamesTheRefusedPointerAndHowManyMore) {
  auto c = cause_of({
      R"({"seq":3,"event":"verification_failed","call":1,"repairs_remaining":0,"violations":[)"
      R"({"path":"$.risk","code":"missing_required_field","message":"missing required field"},)"
      R"({"path":"$.x","code":"unknown_field","message":"unknown field"}]})",
      R"({"seq":4,"event":"run_failed","terminal":"invalid_output"})",
  });
  ASSERT_TRUE(c);
  EXPECT_EQ(c->seq, 3);
  EXPECT_EQ(c->text, "output refused at $.risk: missing required field (and 1 more)");
}

TEST(FirstCause, ProviderFailureAndTheTerminalsOwnError) {
  auto c = cause_of({
      R"j({"seq":2,"event":"model_failed","call":1,)j"
      R"j("error":"connection refused by 127.0.0.1:9 (after 3 attempts)"})j",
      R"({"seq":3,"event":"run_failed","terminal":"model_failed","error":"x"})",
  });
  ASSERT_TRUE(c);
  EXPECT_EQ(c->seq, 2);
  EXPECT_EQ(c->text, "connection refused by 127.0.0.1:9 (after 3 attempts)");
  // Nothing went wrong before the end: the terminal event says why.
  c = cause_of({R"({"seq":7,"event":"budget_exhausted","budget":"max_iterations","limit":4})",
                R"({"seq":8,"event":"run_failed","terminal":"budget_exhausted"})"});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->text, "the max_iterations budget is spent (limit 4)");
  c = cause_of({R"({"seq":9,"event":"run_failed","terminal":"tool_failed","error":"denied"})"});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->seq, 9);
  EXPECT_EQ(c->text, "denied");
}

TEST(FirstCause, ARunStoppedFromOutsideSaysSo) {
  auto c = cause_of({
      R"({"seq":2,"event":"tool_denied","tool":"bash","reason":"capability"})",
      R"({"seq":3,"event":"run_failed","terminal":"timed_out"})",
  });
  ASSERT_TRUE(c);
  EXPECT_EQ(c->seq, 3);
  EXPECT_EQ(c->text, "the deadline passed");
}

TEST(FirstCause, ACompletedRunHasNoneUnlessItsTerminalIsNotASuccess) {
  EXPECT_FALSE(cause_of({R"({"seq":1,"event":"run_completed","terminal":"completed",)"
                         R"("output":{"disposition":"success","node_id":"done"}})"}));
  EXPECT_FALSE(cause_of({R"({"seq":1,"event":"run_completed","terminal":"completed",)"
                         R"("output":{"risk":"low"}})"}));
  auto c = cause_of({R"({"seq":4,"event":"run_completed","terminal":"completed","output":)"
                     R"({"disposition":"blocked","node_id":"blocked","terminal_result":"BLOCKED",)"
                     R"("summary":"the tests do not build"}})"});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->text, "node blocked returned BLOCKED (blocked): the tests do not build");
}

TEST(FirstCause, IsOneBoundedLine) {
  const std::string long_error = "first\nsecond\t" + std::string(1000, 'x');
  mf::json::Value failed = mf::json::Object{};
  failed.set("seq", 2);
  failed.set("event", "model_failed");
  failed.set("error", long_error);
  FirstCause c;
  c.see(failed);
  c.see(mf::json::parse(R"({"seq":3,"event":"run_failed","terminal":"model_failed"})").value());
  ASSERT_TRUE(c.cause());
  EXPECT_EQ(c.cause()->text.size(), mf::trace::kMaxCauseBytes);
  EXPECT_EQ(c.cause()->text.find('\n'), std::string::npos);
  EXPECT_EQ(c.cause()->text.substr(0, 13), "first second ");
  EXPECT_EQ(c.cause()->text.substr(c.cause()->text.size() - 3), "...");
}

// The writer keeps the cause of what it wrote, redacted as the trace holds it.
TEST(FirstCause, TheWriterKeepsItRedacted) {
  std::string sink;
  mf::trace::WriterOptions wo;
  wo.run_id = "r";
  auto w = mf::trace::Writer::open_memory(&sink, wo);
  ASSERT_TRUE(w);
  mf::json::Value started = mf::json::Object{};
  started.set("mode", "task");
  started.set("task_id", "t");
  started.set("model", "m");
  started.set("budget", mf::json::Object{});
  started.set("durability", "event");
  started.set("trace_content", "digest");
  ASSERT_TRUE((*w)->emit("run_started", started));
  EXPECT_FALSE((*w)->first_cause());
  mf::json::Value failed = mf::json::Object{};
  failed.set("call", 1);
  failed.set("error", "HTTP 401: bad key sk-ant-api03-" + std::string(40, 'A'));
  ASSERT_TRUE((*w)->emit("model_failed", failed));
  EXPECT_FALSE((*w)->first_cause());  // decided at the terminal event
  mf::json::Value end = mf::json::Object{};
  end.set("terminal", "model_failed");
  end.set("model_calls", 1);
  end.set("repairs", 0);
  ASSERT_TRUE((*w)->emit("run_failed", end));
  ASSERT_TRUE((*w)->first_cause());
  EXPECT_EQ((*w)->first_cause()->seq, 1);
  EXPECT_EQ((*w)->first_cause()->text.find("AAAA"), std::string::npos);
  EXPECT_NE((*w)->first_cause()->text.find("[REDACTED]"), std::string::npos);
}

}  // namespace
