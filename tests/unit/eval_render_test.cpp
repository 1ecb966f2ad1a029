#include "mf/eval/render.hpp"

#include <gtest/gtest.h>

#include <string>

#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"

namespace mf::eval {
namespace {

std::string line(const std::string& json) {
  return json + "\n";
}

TEST(EvalTranscript, EventsWithoutTheEnvelopeAndRepliesFromTheStore) {
  const std::string trace =
      line(R"({"event":"run_started","v":2,"seq":0,"t_ms":0,"run_id":"eval-a","model":"scripted",)"
           R"("guardrails":"full","trace_content":"store"})") +
      line(R"({"event":"model_responded","v":2,"seq":1,"t_ms":0,"run_id":"eval-a","prev":"x",)"
           R"("call":1,"content_bytes":2,"content_sha256":"ab"})") +
      line(R"({"event":"tool_completed","v":2,"seq":2,"t_ms":0,"run_id":"eval-a","call_id":"c",)"
           R"("ok":true,"record":{"summary":"Wrote it","output_sha256":"cd","binding":{}}})");
  const json::Value t = transcript(trace, [](const std::string& sha) -> std::optional<std::string> {
    if (sha == "ab") return "hi";
    return std::nullopt;
  });
  EXPECT_EQ(json::canonical(t),
            R"({"content":"store","events":[{"call":1,"content":"hi","content_bytes":2,)"
            R"("content_from_store":true,"content_sha256":"ab","event":"model_responded"},)"
            R"({"call_id":"c","event":"tool_completed","ok":true,"output_sha256":"cd",)"
            R"("summary":"Wrote it"}],"guardrails":"full","model":"scripted","run_id":"eval-a"})");
}

TEST(EvalTranscript, LongTextIsCutAndEventsPastTheBoundAreCounted) {
  std::string trace = line(R"({"event":"run_started","run_id":"r","trace_content":"inline"})");
  const std::string text(kTranscriptText + 10, 'x');
  trace += line(R"({"event":"model_responded","call":1,"content":")" + text + R"("})");
  for (std::size_t i = 1; i < kTranscriptEvents + 5; ++i) {
    trace += line(R"({"event":"nudge_sent","message":"m"})");
  }
  const json::Value t = transcript(trace);
  const auto& events = t.find("events")->as_array();
  ASSERT_EQ(events.size(), kTranscriptEvents + 1);
  EXPECT_EQ(events[0].find("content")->as_string(),
            std::string(kTranscriptText, 'x') + "… [10 more bytes in the trace]");
  EXPECT_EQ(json::canonical(events.back()), R"({"count":5,"event":"left_out"})");
}

// A report of `n` failed and `n` passed cases, each one attempt.
json::Value report(int n) {
  std::string cases;
  for (int i = 0; i < 2 * n; ++i) {
    const bool passed = i >= n;
    cases += (cases.empty() ? "" : ",") + std::string(R"({"id":"c)") + std::to_string(i) +
             R"(","status":")" + (passed ? "passed" : "failed") +
             R"(","terminal":"completed","model_calls":1,"trace_sha256":"00","failures":)" +
             (passed ? "[]" : R"([{"check":"terminal","expected":"x","actual":"y"}])") + "}";
  }
  return *json::parse(R"({"suite_id":"s","suite_sha256":"00","summary":{"cases":)" +
                      std::to_string(2 * n) + R"(,"passed":)" + std::to_string(n) +
                      R"(,"failed":)" + std::to_string(n) + R"(},"cases":[)" + cases + "]}");
}

TEST(EvalHtml, TranscriptsPastThePageBudgetAreLeftOutFailedAttemptsFirst) {
  // Each transcript takes a third of the budget: two fit, the failed attempts'.
  PageInputs page;
  const json::Value big = json::Object{
      {"content", "inline"},
      {"run_id", "r"},
      {"events",
       json::Array{json::Object{{"event", "nudge_sent"},
                                {"message", std::string(kPageTranscriptBytes / 3, 'm')}}}}};
  for (int i = 0; i < 4; ++i) page.transcripts["c" + std::to_string(i)] = big;
  const std::string html = render(report(2), Format::Html, page);
  EXPECT_LE(html.size(), kPageTranscriptBytes + 64 * 1024);
  const auto data = html.find(R"(<script type="application/json" id="transcripts">)");
  ASSERT_NE(data, std::string::npos);
  const std::string held = html.substr(data, html.find("</script>", data) - data);
  EXPECT_NE(held.find(R"("c0":)"), std::string::npos);
  EXPECT_NE(held.find(R"("c1":)"), std::string::npos);
  EXPECT_EQ(held.find(R"("c2":)"), std::string::npos);
  EXPECT_NE(html.find(R"(<details data-t="c3" data-why="This transcript is left out: the page )"
                      R"(holds at most 8 MiB of transcripts. Open the trace.">)"),
            std::string::npos);
}

TEST(EvalHtml, EmbeddedTextCannotEndTheScriptElement) {
  PageInputs page;
  page.transcripts["c0"] = json::Object{
      {"content", "inline"},
      {"run_id", "r"},
      {"events", json::Array{json::Object{{"event", "model_responded"},
                                          {"content", "</script><script>alert(1)</script>&"}}}}};
  const std::string html = render(report(1), Format::Html, page);
  EXPECT_EQ(html.find("alert(1)</script>"), std::string::npos);
  EXPECT_NE(html.find(R"(\u003c/script\u003e\u003cscript\u003ealert(1)\u003c/script\u003e\u0026)"),
            std::string::npos);
}

}  // namespace
}  // namespace mf::eval
