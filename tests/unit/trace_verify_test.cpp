#include "mf/trace/verify.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mf/diag/codes.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"

namespace {

namespace codes = mf::diag::codes;
using mf::trace::Outcome;
using mf::trace::Summary;

// One canonical trace line: the envelope merged with `payload` (JSON object text).
std::string ev(std::int64_t seq, std::string_view event, std::string_view payload = "{}",
               std::string_view run_id = "r1") {
  auto v = mf::json::parse(payload);
  EXPECT_TRUE(v.ok()) << payload;
  mf::json::Value line = std::move(v).value();
  line.set("v", 1);
  line.set("run_id", run_id);
  line.set("seq", seq);
  line.set("event", event);
  line.set("t_ms", 0);
  return mf::json::canonical(line) + "\n";
}

const std::string kStart = ev(0, "run_started", R"({"mode":"task","task_id":"t"})");
const std::string kRequest = ev(1, "model_requested", R"({"call":1,"kind":"initial"})");
const std::string kResponse = ev(2, "model_responded", R"({"call":1,"content_bytes":2})");
const std::string kCompleted =
    ev(3, "run_completed", R"({"terminal":"completed","model_calls":1,"repairs":0})");
const std::string kValid = kStart + kRequest + kResponse + kCompleted;

Summary check(std::string_view bytes) {
  auto s = mf::trace::verify(bytes);
  EXPECT_TRUE(s.ok());
  return std::move(s).value();
}

// Asserts the trace fails with `code` at `line` and the given status.
void expect_error(const std::string& bytes, const char* code, std::int64_t line,
                  Outcome status = Outcome::Corrupt) {
  auto s = check(bytes);
  EXPECT_EQ(s.status, status);
  ASSERT_TRUE(s.first_error.has_value()) << bytes;
  EXPECT_EQ(s.first_error->code, code) << s.first_error->message;
  EXPECT_EQ(s.first_error->line, line) << s.first_error->message;
  EXPECT_EQ(s.trace_sha256, mf::hash::sha256_hex(bytes));
}

TEST(TraceVerify, TheValidTraceIsOkWithItsCounts) {
  // The literal bytes, so ev() is not trusted blindly.
  ASSERT_EQ(kStart,
            "{\"event\":\"run_started\",\"mode\":\"task\",\"run_id\":\"r1\",\"seq\":0,\"t_ms\":0,"
            "\"task_id\":\"t\",\"v\":1}\n");
  auto s = check(kValid);
  EXPECT_EQ(s.status, Outcome::Ok);
  EXPECT_FALSE(s.first_error.has_value());
  EXPECT_EQ(s.run_id, "r1");
  EXPECT_EQ(s.terminal, "completed");
  EXPECT_EQ(s.events, 4);
  EXPECT_EQ(s.model_calls, 1);
  EXPECT_EQ(s.repairs, 0);
  EXPECT_EQ(s.tool_calls, 0);
  EXPECT_TRUE(s.violations_by_kind.empty());
  EXPECT_EQ(s.trace_sha256, mf::hash::sha256_hex(kValid));
  EXPECT_EQ(mf::json::canonical(mf::trace::to_json(s)),
            "{\"events\":4,\"first_error\":null,\"model_calls\":1,\"repairs\":0,\"run_id\":\"r1\","
            "\"status\":\"ok\",\"terminal\":\"completed\",\"tool_calls\":0,\"trace_sha256\":\"" +
                mf::hash::sha256_hex(kValid) + "\",\"violations_by_kind\":{}}");
}

TEST(TraceVerify, CountsRepairsViolationsAndToolCalls) {
  const std::string t =
      kStart + kRequest + kResponse +
      ev(3, "verification_failed",
         R"({"call":1,"repairs_remaining":1,"violations":[)"
         R"({"path":"/risk","code":"required_field","message":"missing"},)"
         R"({"path":"/x","code":"unknown_field","message":"unknown"}]})") +
      ev(4, "model_requested", R"({"call":2,"kind":"repair"})") +
      ev(5, "model_responded", R"({"call":2,"content_bytes":9})") +
      ev(6, "guardrail_violation", R"({"kind":"retry_nudge"})") +
      ev(7, "tool_called", R"({"call_id":"c1","tool":"grep"})") +
      ev(8, "tool_completed", R"({"call_id":"c1"})") + ev(9, "tool_denied", R"({"call_id":"c2"})") +
      ev(10, "guardrail_violation") +
      ev(11, "run_failed", R"({"terminal":"invalid_output","model_calls":2,"repairs":1})");
  auto s = check(t);
  EXPECT_EQ(s.status, Outcome::Ok) << (s.first_error ? s.first_error->message : "");
  EXPECT_EQ(s.events, 12);
  EXPECT_EQ(s.model_calls, 2);
  EXPECT_EQ(s.repairs, 1);
  EXPECT_EQ(s.tool_calls, 1);
  EXPECT_EQ(s.terminal, "invalid_output");
  EXPECT_EQ(s.violations_by_kind, (std::map<std::string, std::int64_t>{
                                      {"guardrail_violation", 1},
                                      {"required_field", 1},
                                      {"retry_nudge", 1},
                                      {"tool_denied", 1},
                                      {"unknown_field", 1},
                                  }));
}

TEST(TraceVerify, EventAfterTerminal) {
  expect_error(kValid + ev(4, "context_compacted"), codes::kTraceAfterTerminal, 5);
}

TEST(TraceVerify, SecondTerminal) {
  expect_error(kValid + ev(4, "run_failed", R"({"terminal":"cancelled"})"),
               codes::kTraceSecondTerminal, 5);
}

TEST(TraceVerify, MissingRunStarted) {
  expect_error(kRequest + kResponse + kCompleted, codes::kTraceNoRunStarted, 1);
}

TEST(TraceVerify, RunStartedTwice) {
  expect_error(kStart + ev(1, "run_started"), codes::kTraceNoRunStarted, 2);
}

TEST(TraceVerify, ForeignRunId) {
  expect_error(kStart + ev(1, "model_requested", R"({"call":1,"kind":"initial"})", "r2") +
                   kResponse + kCompleted,
               codes::kTraceForeignRunId, 2);
}

TEST(TraceVerify, SeqGap) {
  expect_error(kStart + kRequest + kCompleted, codes::kTraceSeqBroken, 3);
}

TEST(TraceVerify, DuplicateSeq) {
  expect_error(kStart + kRequest + kRequest + kResponse, codes::kTraceSeqBroken, 3);
}

TEST(TraceVerify, FirstSeqMustBeZero) {
  expect_error(ev(1, "run_started") + kRequest, codes::kTraceSeqBroken, 1);
}

TEST(TraceVerify, TruncatedLastLineIsIncomplete) {
  const std::string t = kStart + kRequest + kCompleted.substr(0, 20);
  expect_error(t, codes::kTraceTruncated, 3, Outcome::Incomplete);
  auto s = check(t);
  EXPECT_EQ(s.events, 2);
  EXPECT_FALSE(s.terminal.has_value());
  // A whole terminal line missing only its '\n' is still a torn write.
  expect_error(kStart + kRequest + kResponse + kCompleted.substr(0, kCompleted.size() - 1),
               codes::kTraceTruncated, 4, Outcome::Incomplete);
}

TEST(TraceVerify, UnterminatedBytesAfterTheTerminalAreCorrupt) {
  expect_error(kValid + "{\"ev", codes::kTraceAfterTerminal, 5);
}

TEST(TraceVerify, NoTerminalIsIncomplete) {
  expect_error(kStart + kRequest + kResponse, codes::kTraceNoTerminal, 4, Outcome::Incomplete);
  auto s = check(kStart + kRequest + kResponse);
  EXPECT_EQ(s.events, 3);
  EXPECT_EQ(s.model_calls, 1);
}

TEST(TraceVerify, EmptyTraceIsIncomplete) {
  expect_error("", codes::kTraceNoTerminal, 1, Outcome::Incomplete);
  EXPECT_FALSE(check("").run_id.has_value());
}

TEST(TraceVerify, MalformedLines) {
  expect_error(kStart + "{\"v\":1,\n", codes::kTraceMalformedLine, 2);
  expect_error(kStart + "[1]\n", codes::kTraceMalformedLine, 2);
  expect_error(kStart + "\n" + kRequest, codes::kTraceMalformedLine, 2);
  expect_error(kStart + "{\"a\":1,\"a\":1}\n", codes::kTraceMalformedLine, 2);
  auto s = check(kStart + "{\"v\":1,\n");
  EXPECT_NE(s.first_error->message.find("MF-S011"), std::string::npos);
}

TEST(TraceVerify, BadEnvelope) {
  auto tamper = [](std::string line, std::string_view from, std::string_view to) {
    line.replace(line.find(from), from.size(), to);
    return kStart + line;
  };
  expect_error(tamper(kRequest, "\"v\":1", "\"v\":2"), codes::kTraceBadEnvelope, 2);
  expect_error(tamper(kRequest, "\"seq\":1", "\"seq\":\"1\""), codes::kTraceBadEnvelope, 2);
  expect_error(tamper(kRequest, "\"seq\":1", "\"seq\":1.5"), codes::kTraceBadEnvelope, 2);
  expect_error(tamper(kRequest, "\"t_ms\":0,", ""), codes::kTraceBadEnvelope, 2);
  expect_error(tamper(kRequest, "\"t_ms\":0", "\"t_ms\":-1"), codes::kTraceBadEnvelope, 2);
  expect_error(tamper(kRequest, "\"run_id\":\"r1\"", "\"run_id\":1"), codes::kTraceBadEnvelope, 2);
  expect_error(tamper(kRequest, "\"event\":\"model_requested\"", "\"event\":null"),
               codes::kTraceBadEnvelope, 2);
}

TEST(TraceVerify, NonCanonicalLine) {
  std::string spaced = kRequest;
  spaced.insert(1, " ");
  expect_error(kStart + spaced, codes::kTraceNotCanonical, 2);
  std::string crlf = kStart;
  crlf.insert(crlf.size() - 1, "\r");
  expect_error(crlf, codes::kTraceNotCanonical, 1);
}

TEST(TraceVerify, UnknownEvent) {
  expect_error(kStart + ev(1, "model_sneezed"), codes::kTraceUnknownEvent, 2);
}

TEST(TraceVerify, ToolCompletedWithoutToolCalled) {
  expect_error(kStart + ev(1, "tool_completed", R"({"call_id":"c1"})"), codes::kTraceUnpairedTool,
               2);
  // Pairing is by call_id, and one call completes once.
  expect_error(kStart + ev(1, "tool_called", R"({"call_id":"c1"})") +
                   ev(2, "tool_completed", R"({"call_id":"c2"})"),
               codes::kTraceUnpairedTool, 3);
  expect_error(kStart + ev(1, "tool_called", R"({"call_id":"c1"})") +
                   ev(2, "tool_completed", R"({"call_id":"c1"})") +
                   ev(3, "tool_completed", R"({"call_id":"c1"})"),
               codes::kTraceUnpairedTool, 4);
}

TEST(TraceVerify, ToolCalledTwiceWithAnOpenCallId) {
  expect_error(kStart + ev(1, "tool_called", R"({"call_id":"c1"})") +
                   ev(2, "tool_called", R"({"call_id":"c1"})"),
               codes::kTraceDuplicateCallId, 3);
}

TEST(TraceVerify, IllFormedPayloads) {
  const std::vector<std::pair<const char*, const char*>> bad = {
      {"run_completed", R"({"terminal":"invalid_output"})"},
      {"run_completed", "{}"},
      {"run_failed", R"({"terminal":"completed"})"},
      {"run_failed", R"({"terminal":"exploded"})"},
      {"model_requested", R"({"call":0,"kind":"initial"})"},
      {"model_requested", R"({"call":1})"},
      {"model_requested", R"({"call":1,"kind":"again"})"},
      {"model_responded", R"({"content_bytes":1})"},
      {"model_responded", R"({"call":"1"})"},
      {"model_failed", R"({"call":1.5})"},
      {"verification_failed", R"({"violations":[{"code":"x"}]})"},
      {"verification_failed", R"({"call":1})"},
      {"tool_called", R"({"call_id":""})"},
      {"tool_completed", "{}"},
      {"tool_denied", R"({"call_id":7})"},
  };
  for (const auto& [event, payload] : bad) {
    SCOPED_TRACE(std::string(event) + " " + payload);
    expect_error(kStart + ev(1, event, payload), codes::kTraceBadPayload, 2);
  }
  for (const char* state : {"invalid_output", "model_failed", "budget_exhausted", "cancelled"}) {
    auto s = check(kStart + ev(1, "run_failed", std::string(R"({"terminal":")") + state + "\"}"));
    EXPECT_EQ(s.status, Outcome::Ok) << state;
    EXPECT_EQ(s.terminal, state);
  }
}

TEST(TraceVerify, OverlongLineIsMalformed) {
  mf::trace::Verifier v({.max_line_bytes = 64});
  v.feed(kStart.substr(0, 40));
  v.feed(kStart.substr(40));
  auto s = v.finish();
  EXPECT_EQ(s.status, Outcome::Corrupt);
  EXPECT_EQ(s.first_error->code, codes::kTraceMalformedLine);
  EXPECT_EQ(s.first_error->line, 1);
  EXPECT_EQ(s.trace_sha256, mf::hash::sha256_hex(kStart));
}

// Streaming in chunks of any size gives the same summary as the whole buffer.
TEST(TraceVerify, ChunkingDoesNotChangeTheSummary) {
  const std::vector<std::string> traces = {kValid,
                                           kValid + ev(4, "context_compacted"),
                                           kStart + kRequest + kCompleted.substr(0, 7),
                                           kStart + kRequest,
                                           kStart + "\n",
                                           ""};
  for (const auto& t : traces) {
    const auto whole = mf::json::canonical(mf::trace::to_json(check(t)));
    for (std::size_t chunk : {1u, 2u, 7u, 64u, 1000u}) {
      mf::trace::Verifier v;
      for (std::size_t i = 0; i < t.size(); i += chunk)
        v.feed(std::string_view(t).substr(i, chunk));
      EXPECT_EQ(mf::json::canonical(mf::trace::to_json(v.finish())), whole) << chunk;
    }
  }
}

TEST(TraceVerify, SummaryOfACorruptTraceNamesTheFirstError) {
  auto s = check(kStart + kRequest + kCompleted);
  auto j = mf::json::canonical(mf::trace::to_json(s));
  EXPECT_NE(j.find("\"first_error\":{\"code\":\"MF-E006\",\"line\":3,\"message\":"),
            std::string::npos)
      << j;
  EXPECT_NE(j.find("\"status\":\"corrupt\""), std::string::npos);
  EXPECT_NE(j.find("\"terminal\":null"), std::string::npos);
  EXPECT_NE(j.find("\"events\":2"), std::string::npos);
}

TEST(TraceVerifyFile, MissingFileAndDirectoryAreRejected) {
  auto missing = mf::trace::verify_file("/nonexistent/trace.jsonl");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.diagnostics().front().code, codes::kMissing);
  auto dir = mf::trace::verify_file("/");
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.diagnostics().front().code, codes::kNotRegularFile);
}

}  // namespace
