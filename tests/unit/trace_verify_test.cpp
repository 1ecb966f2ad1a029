#include "mf/trace/verify.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "mf/diag/codes.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"
#include "mf/trace/writer.hpp"
#include "temp_dir.hpp"

namespace {

namespace codes = mf::diag::codes;
using mf::trace::Outcome;
using mf::trace::Summary;

// One canonical trace line without its chain link: the envelope merged with `payload`.
std::string ev(std::int64_t seq, std::string_view event, std::string_view payload = "{}",
               std::string_view run_id = "r1") {
  auto v = mf::json::parse(payload);
  EXPECT_TRUE(v.ok()) << payload;
  mf::json::Value line = std::move(v).value();
  line.set("v", 2);
  line.set("run_id", run_id);
  line.set("seq", seq);
  line.set("event", event);
  line.set("t_ms", 0);
  return mf::json::canonical(line) + "\n";
}

// Links the lines as the writer does (and as someone rewriting a trace can): every line after the
// first that parses as an object gets "prev", the SHA-256 of the line before it as linked. Other
// lines (malformed, cut short) stay as they are.
std::string chain(std::string_view bytes) {
  std::string out;
  std::string prev;
  while (!bytes.empty()) {
    const auto newline = bytes.find('\n');
    std::string text(bytes.substr(0, newline));
    bytes.remove_prefix(newline == std::string_view::npos ? bytes.size() : newline + 1);
    auto parsed = mf::json::parse(text);
    if (parsed.ok() && parsed->is_object() && mf::json::canonical(*parsed) == text) {
      if (!prev.empty()) parsed->set("prev", prev);
      text = mf::json::canonical(*parsed);
    }
    prev = mf::hash::sha256_hex(text);
    out += text;
    if (newline != std::string_view::npos) out += '\n';
  }
  return out;
}

// Structural rules are checked under a plan-mode start, whose event order is not fixed (yet);
// the task-mode sequence has tests of its own.
const std::string kStart =
    ev(0, "run_started",
       R"({"mode":"plan","plan_sha256":")" + std::string(64, 'a') +
           R"(","model":"scripted:r.json","budget":{"max_model_calls":2,)"
           R"("max_repairs":1},"durability":"event","trace_content":"digest"})");
const std::string kRequest = ev(1, "model_requested", R"({"call":1,"kind":"initial"})");
const std::string kResponse = ev(2, "model_responded", R"({"call":1,"content_bytes":2})");
const std::string kCompleted =
    ev(3, "run_completed", R"({"terminal":"completed","output":{},"model_calls":1,"repairs":0})");
const std::string kValid = kStart + kRequest + kResponse + kCompleted;

Summary check_raw(std::string_view bytes, mf::trace::VerifyOptions options = {}) {
  auto s = mf::trace::verify(bytes, options);
  EXPECT_TRUE(s.ok());
  return std::move(s).value();
}

Summary check(std::string_view bytes) {
  return check_raw(chain(bytes));
}

// Asserts the trace (raw bytes) fails with `code` at `line` and the given status.
void expect_raw_error(const std::string& bytes, const char* code, std::int64_t line,
                      Outcome status = Outcome::Corrupt, mf::trace::VerifyOptions options = {}) {
  auto s = check_raw(bytes, options);
  EXPECT_EQ(s.status, status);
  ASSERT_TRUE(s.first_error.has_value()) << bytes;
  EXPECT_EQ(s.first_error->code, code) << s.first_error->message;
  EXPECT_EQ(s.first_error->line, line) << s.first_error->message;
  EXPECT_EQ(s.trace_sha256, mf::hash::sha256_hex(bytes));
}

// The same for the lines linked into a chain.
void expect_error(const std::string& bytes, const char* code, std::int64_t line,
                  Outcome status = Outcome::Corrupt) {
  expect_raw_error(chain(bytes), code, line, status);
}

TEST(TraceVerify, TheValidTraceIsOkWithItsCounts) {
  // The literal bytes, so ev() is not trusted blindly.
  ASSERT_EQ(
      kStart,
      "{\"budget\":{\"max_model_calls\":2,\"max_repairs\":1},\"durability\":\"event\","
      "\"event\":\"run_started\",\"mode\":\"plan\",\"model\":\"scripted:r.json\","
      "\"plan_sha256\":\"" +
          std::string(64, 'a') +
          "\",\"run_id\":\"r1\",\"seq\":0,\"t_ms\":0,\"trace_content\":\"digest\",\"v\":2}\n");
  const std::string linked = chain(kValid);
  EXPECT_NE(linked.find("\"prev\":\"" + mf::hash::sha256_hex(kStart.substr(0, kStart.size() - 1))),
            std::string::npos);
  auto s = check_raw(linked);
  EXPECT_EQ(s.status, Outcome::Ok);
  EXPECT_FALSE(s.first_error.has_value());
  EXPECT_EQ(s.run_id, "r1");
  EXPECT_EQ(s.terminal, "completed");
  EXPECT_EQ(s.events, 4);
  EXPECT_EQ(s.model_calls, 1);
  EXPECT_EQ(s.repairs, 0);
  EXPECT_EQ(s.tool_calls, 0);
  EXPECT_TRUE(s.violations_by_kind.empty());
  EXPECT_EQ(s.trace_sha256, mf::hash::sha256_hex(linked));
  EXPECT_EQ(s.mac, mf::trace::Mac::Absent);
  EXPECT_EQ(mf::json::canonical(mf::trace::to_json(s)),
            "{\"events\":4,\"first_error\":null,\"mac\":\"absent\",\"model_calls\":1,\"repairs\":0,"
            "\"run_id\":\"r1\","
            "\"status\":\"ok\",\"terminal\":\"completed\",\"tool_calls\":0,\"trace_sha256\":\"" +
                mf::hash::sha256_hex(linked) + "\",\"violations_by_kind\":{}}");
}

TEST(TraceVerify, CountsRepairsViolationsAndToolCalls) {
  const std::string t =
      kStart + kRequest + kResponse +
      ev(3, "verification_failed",
         R"({"call":1,"repairs_remaining":1,"violations":[)"
         R"({"path":"/risk","code":"required_field","message":"missing"},)"
         R"({"path":"/x","code":"unknown_field","message":"unknown"}]})") +
      ev(4, "model_requested", R"({"call":2,"kind":"repair","violations":[]})") +
      ev(5, "model_responded", R"({"call":2,"content_bytes":9})") +
      ev(6, "guardrail_violation", R"({"kind":"retry_nudge"})") +
      ev(7, "tool_called", R"({"call_id":"c1","tool":"grep"})") +
      ev(8, "tool_completed", R"({"call_id":"c1","ok":true})") +
      ev(9, "tool_denied", R"({"call_id":"c2","tool":"bash","reason":"capability"})") +
      ev(10, "guardrail_violation", R"({"kind":"rescue"})") +
      ev(11, "run_failed",
         R"({"terminal":"invalid_output","model_calls":2,"repairs":1,"tool_calls":1})");
  auto s = check(t);
  EXPECT_EQ(s.status, Outcome::Ok) << (s.first_error ? s.first_error->message : "");
  EXPECT_EQ(s.events, 12);
  EXPECT_EQ(s.model_calls, 2);
  EXPECT_EQ(s.repairs, 1);
  EXPECT_EQ(s.tool_calls, 1);
  EXPECT_EQ(s.terminal, "invalid_output");
  EXPECT_EQ(s.violations_by_kind, (decltype(s.violations_by_kind){
                                      {"required_field", 1},
                                      {"rescue", 1},
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
  expect_error(tamper(kRequest, "\"v\":2", "\"v\":3"), codes::kTraceBadEnvelope, 2);
  expect_error(tamper(kRequest, "\"seq\":1", "\"seq\":\"1\""), codes::kTraceBadEnvelope, 2);
  expect_error(tamper(kRequest, "\"seq\":1", "\"seq\":1.5"), codes::kTraceBadEnvelope, 2);
  expect_error(tamper(kRequest, "\"t_ms\":0,", ""), codes::kTraceBadEnvelope, 2);
  expect_error(tamper(kRequest, "\"t_ms\":0", "\"t_ms\":-1"), codes::kTraceBadEnvelope, 2);
  expect_error(tamper(kRequest, "\"run_id\":\"r1\"", "\"run_id\":1"), codes::kTraceBadEnvelope, 2);
  expect_error(tamper(kRequest, "\"event\":\"model_requested\"", "\"event\":null"),
               codes::kTraceBadEnvelope, 2);
}

TEST(TraceVerify, NonCanonicalLine) {
  std::string spaced = chain(kStart + kRequest);
  spaced.insert(kStart.size() + 1, " ");
  expect_raw_error(spaced, codes::kTraceNotCanonical, 2);
  std::string crlf = kStart;
  crlf.insert(crlf.size() - 1, "\r");
  expect_error(crlf, codes::kTraceNotCanonical, 1);
}

TEST(TraceVerify, UnknownEvent) {
  expect_error(kStart + ev(1, "model_sneezed"), codes::kTraceUnknownEvent, 2);
}

TEST(TraceVerify, ToolCompletedWithoutToolCalled) {
  expect_error(kStart + ev(1, "tool_completed", R"({"call_id":"c1","ok":true})"),
               codes::kTraceUnpairedTool, 2);
  // Pairing is by call_id, and one call completes once.
  expect_error(kStart + ev(1, "tool_called", R"({"call_id":"c1","tool":"grep"})") +
                   ev(2, "tool_completed", R"({"call_id":"c2","ok":true})"),
               codes::kTraceUnpairedTool, 3);
  expect_error(kStart + ev(1, "tool_called", R"({"call_id":"c1","tool":"grep"})") +
                   ev(2, "tool_completed", R"({"call_id":"c1","ok":true})") +
                   ev(3, "tool_completed", R"({"call_id":"c1","ok":true})"),
               codes::kTraceUnpairedTool, 4);
}

TEST(TraceVerify, ErrorKindIsSoftOnAFailedCallOnly) {
  const std::string called = ev(1, "tool_called", R"({"call_id":"c1","tool":"read"})");
  const auto done = [&](const char* payload) {
    return kStart + called + ev(2, "tool_completed", payload) +
           ev(3, "run_failed",
              R"({"terminal":"budget_exhausted","model_calls":0,"repairs":0,"tool_calls":1})");
  };
  EXPECT_EQ(check(done(R"({"call_id":"c1","ok":false,"error_kind":"soft"})")).status, Outcome::Ok);
  expect_error(done(R"({"call_id":"c1","ok":true,"error_kind":"soft"})"), codes::kTraceInconsistent,
               3);
  expect_error(done(R"({"call_id":"c1","ok":false,"error_kind":"hard"})"),
               codes::kTraceInconsistent, 3);
}

TEST(TraceVerify, ToolCalledTwiceWithAnOpenCallId) {
  expect_error(kStart + ev(1, "tool_called", R"({"call_id":"c1","tool":"grep"})") +
                   ev(2, "tool_called", R"({"call_id":"c1","tool":"grep"})"),
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
      // Payloads are closed: a member the event does not define is refused, as are ill-kinded ones.
      {"model_requested", R"({"call":1,"kind":"initial","injected":true})"},
      {"model_requested", R"({"call":1,"kind":"repair"})"},
      {"model_requested", R"({"call":1,"kind":"initial","violations":[]})"},
      {"model_responded", R"({"call":1,"content_bytes":1,"content_sha256":"ABC"})"},
      {"model_responded", R"({"call":1,"content_bytes":-1})"},
      {"tool_completed", R"({"call_id":"c1","ok":"yes"})"},
      {"budget_exhausted", R"({"budget":"max_model_calls"})"},
      {"run_failed",
       R"({"terminal":"cancelled","model_calls":0,"repairs":0,"hmac_sha256":"not hex"})"},
      {"run_completed", R"({"terminal":"completed","model_calls":0,"repairs":0})"},
  };
  for (const auto& [event, payload] : bad) {
    SCOPED_TRACE(std::string(event) + " " + payload);
    expect_error(kStart + ev(1, event, payload), codes::kTraceBadPayload, 2);
  }
  for (const char* state : {"invalid_output", "model_failed", "budget_exhausted", "cancelled"}) {
    auto s = check(
        kStart + ev(1, "run_failed",
                    std::string(R"({"terminal":")") + state + R"(","model_calls":0,"repairs":0})"));
    EXPECT_EQ(s.status, Outcome::Ok) << state;
    EXPECT_EQ(s.terminal, state);
  }
}

TEST(TraceVerify, SkippedCallsAndRefusedCalls) {
  const std::string skipped =
      ev(3, "tools_skipped", R"({"reason":"timed_out","count":2,"call_ids":["c2","c3"]})");
  const std::string failed =
      ev(4, "run_failed", R"({"terminal":"timed_out","model_calls":1,"repairs":0})");
  const Summary s = check(kStart + kRequest + kResponse + skipped + failed);
  EXPECT_EQ(s.status, Outcome::Ok) << (s.first_error ? s.first_error->message : "");
  EXPECT_EQ(s.violations_by_kind.at("tools_skipped"), 1);
  // The count names every id the event lists.
  expect_error(kStart + kRequest + kResponse +
                   ev(3, "tools_skipped", R"({"reason":"timed_out","count":3,"call_ids":["c2"]})"),
               codes::kTraceInconsistent, 4);
  for (const char* payload : {R"({"reason":"timed_out","count":0,"call_ids":[]})",
                              R"({"reason":"timed_out","count":1,"call_ids":[""]})",
                              R"({"count":1,"call_ids":["c1"]})"}) {
    expect_error(kStart + ev(1, "tools_skipped", payload), codes::kTraceBadPayload, 2);
  }
  // A call the decoder refused is recorded without a name and with why; a nameless call that does
  // not say why, or a named one that claims to be refused, is ill-formed.
  const auto responded = [](std::string_view call) {
    return ev(2, "model_responded",
              R"({"call":1,"content_bytes":0,"tool_call_count":1,"tool_calls":[)" +
                  std::string(call) + "]}");
  };
  EXPECT_EQ(check(kStart + kRequest +
                  responded(R"({"id":"c1","name":"","arguments":"{}","malformed":"no name"})") +
                  kCompleted)
                .status,
            Outcome::Ok);
  for (const char* call : {R"({"id":"c1","name":"","arguments":"{}"})",
                           R"({"id":"c1","name":"read","arguments":"{}","malformed":"no name"})",
                           R"({"id":"c1","name":"","arguments":"{}","malformed":""})"}) {
    SCOPED_TRACE(call);
    expect_error(kStart + kRequest + responded(call), codes::kTraceBadPayload, 3);
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
  for (const auto& unlinked : traces) {
    const std::string t = chain(unlinked);
    const auto whole = mf::json::canonical(mf::trace::to_json(check_raw(t)));
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

// --- the hash chain ------------------------------------------------------------------------------

// The lines of a trace, each without its '\n'.
std::vector<std::string> lines_of(const std::string& bytes) {
  std::vector<std::string> out;
  for (std::size_t at = 0; at < bytes.size();) {
    const auto newline = bytes.find('\n', at);
    out.push_back(bytes.substr(at, newline - at));
    at = newline + 1;
  }
  return out;
}

std::string join(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

TEST(TraceChain, AnEditedDroppedInsertedOrMovedLineBreaksTheChainAtTheNextLine) {
  const auto lines = lines_of(chain(kValid));
  ASSERT_EQ(check_raw(join(lines)).status, Outcome::Ok);
  // An edit that keeps the line valid on its own (content_bytes 2 -> 3).
  auto edited = lines;
  edited[2].replace(edited[2].find("\"content_bytes\":2"), 17, "\"content_bytes\":3");
  expect_raw_error(join(edited), codes::kTraceChainBroken, 4);
  // A dropped line, the later lines renumbered so every seq is contiguous again.
  auto dropped = lines_of(chain(kStart + kRequest + kResponse +
                                ev(3, "guardrail_violation", R"({"kind":"rescue"})") +
                                ev(4, "run_completed",
                                   R"({"terminal":"completed","output":{},"model_calls":1,)"
                                   R"("repairs":0})")));
  dropped.erase(dropped.begin() + 3);
  dropped[3].replace(dropped[3].find("\"seq\":4"), 7, "\"seq\":3");
  expect_raw_error(join(dropped), codes::kTraceChainBroken, 4);
  // Two lines swapped; a line inserted.
  auto swapped = lines;
  std::swap(swapped[1], swapped[2]);
  expect_raw_error(join(swapped), codes::kTraceChainBroken, 2);
  auto inserted = lines;
  inserted.insert(inserted.begin() + 1, lines[1]);
  expect_raw_error(join(inserted), codes::kTraceChainBroken, 3);
  // A missing or ill-formed link, and a first line that claims one.
  auto unlinked = lines;
  unlinked[1] = lines_of(kRequest)[0];
  expect_raw_error(join(unlinked), codes::kTraceBadEnvelope, 2);
  const auto first = lines_of(chain(kRequest + kStart))[1];
  expect_raw_error(first + "\n", codes::kTraceBadEnvelope, 1);
}

TEST(TraceChain, AVersionOneTraceIsRefusedWithItsReason) {
  std::string old = kStart;
  old.replace(old.find("\"v\":2"), 5, "\"v\":1");
  auto s = check_raw(old);
  ASSERT_TRUE(s.first_error.has_value());
  EXPECT_EQ(s.first_error->code, codes::kTraceBadEnvelope);
  EXPECT_NE(s.first_error->message.find("hash chain"), std::string::npos);
}

TEST(TraceChain, ExpectedDigestAnchorsTheWholeTrace) {
  const std::string t = chain(kValid);
  const std::string digest = mf::hash::sha256_hex(t);
  EXPECT_EQ(check_raw(t, {.expect_sha256 = digest}).status, Outcome::Ok);
  // Rewritten and re-chained: every rule holds, only the anchor tells.
  std::string rewritten = kValid;
  rewritten.replace(rewritten.find("\"content_bytes\":2"), 17, "\"content_bytes\":5");
  const std::string relinked = chain(rewritten);
  EXPECT_EQ(check_raw(relinked).status, Outcome::Ok);
  expect_raw_error(relinked, codes::kTraceDigestMismatch, 0, Outcome::Corrupt,
                   {.expect_sha256 = digest});
}

// --- authenticity: the keyed MAC in the terminal event -------------------------------------------

const std::string kKey = "0123456789abcdef0123456789abcdef";

std::string keyed_trace(const std::string& key) {
  std::string sink;
  auto w =
      mf::trace::Writer::open_memory(&sink, {.run_id = "r1", .fixed_clock = true, .mac_key = key});
  EXPECT_TRUE(w.ok());
  auto payload = [](std::string_view text) { return mf::json::parse(text).value(); };
  EXPECT_TRUE(
      (*w)->emit("run_started", payload(R"({"mode":"task","task_id":"t","model":"m",)"
                                        R"("budget":{"max_model_calls":1,"max_repairs":0},)"
                                        R"("durability":"event","trace_content":"digest"})")));
  EXPECT_TRUE((*w)->emit("model_requested", payload(R"({"call":1,"kind":"initial"})")));
  EXPECT_TRUE((*w)->emit("model_responded", payload(R"({"call":1,"content_bytes":2})")));
  EXPECT_TRUE((*w)->emit("run_completed", payload(R"({"terminal":"completed","output":{"a":1},)"
                                                  R"("model_calls":1,"repairs":0})")));
  return sink;
}

TEST(TraceMac, AKeyedTraceVerifiesOnlyUnderItsKey) {
  const std::string t = keyed_trace(kKey);
  ASSERT_NE(t.find("\"hmac_sha256\":\""), std::string::npos);
  EXPECT_EQ(check_raw(t).mac, mf::trace::Mac::Unchecked);
  auto s = check_raw(t, {.mac_key = kKey});
  EXPECT_EQ(s.status, Outcome::Ok) << (s.first_error ? s.first_error->message : "");
  EXPECT_EQ(s.mac, mf::trace::Mac::Verified);
  expect_raw_error(t, codes::kTraceMacMismatch, 4, Outcome::Corrupt,
                   {.mac_key = "another key, 32 bytes long......"});
  // An unkeyed trace offered as keyed is not authenticated.
  expect_raw_error(keyed_trace(""), codes::kTraceMacMismatch, 4, Outcome::Corrupt,
                   {.mac_key = kKey});
}

TEST(TraceMac, ARewrittenAndRechainedTraceFailsTheMac) {
  // The output edited, the chain recomputed by the forger: the MAC no longer fits.
  auto lines = lines_of(keyed_trace(kKey));
  lines[3].replace(lines[3].find("{\"a\":1}"), 7, "{\"a\":2}");
  std::string unlinked;
  for (auto& l : lines) {
    auto v = mf::json::parse(l).value();
    auto& members = v.as_object();
    members.erase(std::remove_if(members.begin(), members.end(),
                                 [](const auto& m) { return m.key == "prev"; }),
                  members.end());
    unlinked += mf::json::canonical(v) + "\n";
  }
  const std::string forged = chain(unlinked);
  EXPECT_EQ(check_raw(forged).status, Outcome::Ok);
  expect_raw_error(forged, codes::kTraceMacMismatch, 4, Outcome::Corrupt, {.mac_key = kKey});
}

// --- semantic cross-checks
// ------------------------------------------------------------------------

const std::string kTaskStart =
    ev(0, "run_started",
       R"({"mode":"task","task_id":"t","model":"scripted:r.json","budget":{"max_model_calls":2,)"
       R"("max_repairs":1},"durability":"event","trace_content":"inline"})");
const std::string kViolation = R"([{"path":"/risk","code":"required_field","message":"missing"}])";

// A task run with one repair, as the run loop writes it (events after run_started, from seq 1).
std::vector<std::string> repaired_run() {
  return {ev(1, "model_requested", R"({"call":1,"kind":"initial"})"),
          ev(2, "model_responded",
             R"({"call":1,"content_bytes":2,"content":"{}","content_sha256":")" +
                 mf::hash::sha256_hex("{}") + "\"}"),
          ev(3, "verification_failed",
             R"({"call":1,"repairs_remaining":0,"violations":)" + kViolation + "}"),
          ev(4, "model_requested", R"({"call":2,"kind":"repair","violations":)" + kViolation + "}"),
          ev(5, "model_responded", R"({"call":2,"content_bytes":9})"),
          ev(6, "run_completed",
             R"({"terminal":"completed","output":{"risk":1},"model_calls":2,"repairs":1})")};
}

std::string task_trace(const std::vector<std::string>& events) {
  std::string t = kTaskStart;
  for (const auto& e : events) t += e;
  return t;
}

TEST(TraceConsistency, TheRunLoopsSequenceIsOk) {
  auto s = check(task_trace(repaired_run()));
  EXPECT_EQ(s.status, Outcome::Ok) << (s.first_error ? s.first_error->message : "");
}

TEST(TraceConsistency, EventsThatContradictTheEventsBeforeThemAreCorrupt) {
  const auto edit = [](std::size_t index, std::string_view from, std::string_view to) {
    auto events = repaired_run();
    auto& line = events[index];
    EXPECT_NE(line.find(from), std::string::npos) << from;
    line.replace(line.find(from), from.size(), to);
    return task_trace(events);
  };
  // Inline content against its size and digest.
  expect_error(edit(1, R"("content":"{}")", R"("content":"[]")"), codes::kTraceInconsistent, 3);
  expect_error(edit(1, R"("content_bytes":2)", R"("content_bytes":3)"), codes::kTraceInconsistent,
               3);
  // The terminal's counts against the events.
  expect_error(edit(5, R"("model_calls":2)", R"("model_calls":1)"), codes::kTraceInconsistent, 7);
  expect_error(edit(5, R"("repairs":1)", R"("repairs":0)"), codes::kTraceInconsistent, 7);
  // Call numbers; a repair nothing called for; time going back.
  expect_error(edit(3, R"("call":2)", R"("call":3)"), codes::kTraceInconsistent, 5);
  expect_error(edit(4, R"("call":2)", R"("call":1)"), codes::kTraceInconsistent, 6);
  expect_error(edit(2, R"("repairs_remaining":0)", R"("repairs_remaining":1)"),
               codes::kTraceInconsistent, 4);
  auto late = repaired_run();
  late[0].replace(late[0].find("\"t_ms\":0"), 8, "\"t_ms\":9");
  expect_error(task_trace(late), codes::kTraceInconsistent, 3);
}

TEST(TraceConsistency, ASwappedTerminalIsCorrupt) {
  auto events = repaired_run();
  // The run failed validation and had no repair left, yet claims completion.
  events.resize(3);
  events[2] = ev(3, "verification_failed",
                 R"({"call":1,"repairs_remaining":0,"violations":)" + kViolation + "}");
  const std::string start_no_repairs =
      ev(0, "run_started",
         R"({"mode":"task","task_id":"t","model":"scripted:r.json","budget":{"max_model_calls":2,)"
         R"("max_repairs":0},"durability":"event","trace_content":"inline"})");
  const std::string honest =
      start_no_repairs + events[0] + events[1] + events[2] +
      ev(4, "run_failed", R"({"terminal":"invalid_output","model_calls":1,"repairs":0})");
  EXPECT_EQ(check(honest).status, Outcome::Ok);
  const std::string swapped =
      start_no_repairs + events[0] + events[1] + events[2] +
      ev(4, "run_completed", R"({"terminal":"completed","output":{},"model_calls":1,"repairs":0})");
  expect_error(swapped, codes::kTraceInconsistent, 5);
  // A model failure ends as model_failed, nothing else.
  const std::string failed =
      kTaskStart + events[0] + ev(2, "model_failed", R"({"call":1,"error":"refused"})") +
      ev(3, "run_failed", R"({"terminal":"budget_exhausted","model_calls":1,"repairs":0})");
  expect_error(failed, codes::kTraceInconsistent, 4);
  // A cancellation may come between any two steps.
  EXPECT_EQ(check(kTaskStart + events[0] +
                  ev(2, "run_failed", R"({"terminal":"cancelled","model_calls":1,"repairs":0})"))
                .status,
            Outcome::Ok);
  // Tool events have no place in a task run.
  expect_error(kTaskStart + ev(1, "tool_called", R"({"call_id":"c","tool":"grep"})"),
               codes::kTraceInconsistent, 2);
}

TEST(TraceConsistency, TheBudgetRunStartedRecordedHolds) {
  auto events = repaired_run();
  // A third call under a budget of two.
  events.pop_back();
  events.push_back(ev(6, "verification_failed",
                      R"({"call":2,"repairs_remaining":0,"violations":)" + kViolation + "}"));
  events.push_back(
      ev(7, "model_requested", R"({"call":3,"kind":"repair","violations":)" + kViolation + "}"));
  expect_error(task_trace(events), codes::kTraceInconsistent, 8);
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

namespace plan_rules {

const std::string kPlanStart =
    ev(0, "run_started",
       R"({"mode":"plan","plan_sha256":")" + std::string(64, 'a') +
           R"(","model":"scripted","budget":{"max_iterations":1},"durability":"event",)"
           R"("trace_content":"digest"})");

TEST(TraceVerifyPlan, NoModelCallBeyondMaxIterations) {
  expect_error(
      kPlanStart + kRequest + kResponse + ev(3, "model_requested", R"({"call":2,"kind":"turn"})"),
      codes::kTraceInconsistent, 4);
}

TEST(TraceVerifyPlan, TheTerminalCountsTheToolCalls) {
  const std::string calls = kPlanStart + kRequest + kResponse +
                            ev(3, "tool_called", R"({"call_id":"c1","tool":"read"})") +
                            ev(4, "tool_completed", R"({"call_id":"c1","ok":true})");
  EXPECT_EQ(check(calls + ev(5, "run_completed",
                             R"({"terminal":"completed","output":{},"model_calls":1,)"
                             R"("repairs":0,"tool_calls":1})"))
                .status,
            Outcome::Ok);
  expect_error(calls + ev(5, "run_completed",
                          R"({"terminal":"completed","output":{},"model_calls":1,"repairs":0})"),
               codes::kTraceInconsistent, 6);
}

TEST(TraceVerifyPlan, ADenialAnswersTheOpenCallOfItsId) {
  // Denied at the boundary: the call is closed, so a completion for it afterwards is unpaired.
  expect_error(kPlanStart + kRequest + kResponse +
                   ev(3, "tool_called", R"({"call_id":"c1","tool":"read"})") +
                   ev(4, "tool_denied", R"({"call_id":"c1","tool":"read","reason":"x"})") +
                   ev(5, "tool_completed", R"({"call_id":"c1","ok":true})"),
               codes::kTraceUnpairedTool, 6);
}

TEST(TraceVerifyPlan, RecordedToolCallsCarryTheirCount) {
  const std::string call = R"([{"id":"c1","name":"read","arguments":"{}"}])";
  EXPECT_EQ(
      check(kPlanStart + kRequest +
            ev(2, "model_responded",
               R"({"call":1,"content_bytes":0,"tool_call_count":1,"tool_calls":)" + call + "}") +
            ev(3, "run_failed", R"({"terminal":"cancelled","model_calls":1,"repairs":0})"))
          .status,
      Outcome::Ok);
  expect_error(
      kPlanStart + kRequest +
          ev(2, "model_responded",
             R"({"call":1,"content_bytes":0,"tool_call_count":2,"tool_calls":)" + call + "}"),
      codes::kTraceBadPayload, 3);
  expect_error(
      kPlanStart + kRequest +
          ev(2, "model_responded", R"({"call":1,"content_bytes":0,"tool_calls":)" + call + "}"),
      codes::kTraceBadPayload, 3);
  // A call without a name, or arguments that are not the raw text, is not a recorded call.
  expect_error(kPlanStart + kRequest +
                   ev(2, "model_responded",
                      R"({"call":1,"content_bytes":0,"tool_call_count":1,)"
                      R"("tool_calls":[{"id":"c1","name":"","arguments":{}}]})"),
               codes::kTraceBadPayload, 3);
}

TEST(TraceVerifyPlan, NewTerminalStatesAreFailures) {
  for (const char* state : {"timed_out", "tool_failed", "terminal_rejected"}) {
    EXPECT_EQ(
        check(kPlanStart + kRequest + kResponse +
              ev(3, "run_failed",
                 std::string(R"({"terminal":")") + state + R"(","model_calls":1,"repairs":0})"))
            .status,
        Outcome::Ok)
        << state;
    expect_error(kPlanStart + kRequest + kResponse +
                     ev(3, "run_completed",
                        std::string(R"({"terminal":")") + state +
                            R"(","output":{},"model_calls":1,"repairs":0})"),
                 codes::kTraceBadPayload, 4);
  }
}

// A projecting plan run: run_started declares the projection, each request follows its own.
const std::string kProjectedStart =
    ev(0, "run_started",
       R"({"mode":"plan","plan_sha256":")" + std::string(64, 'a') +
           R"(","model":"scripted","budget":{"max_iterations":2},"durability":"event",)"
           R"("trace_content":"digest","projection":{"budget_tokens":100,"catalog_sha256":")" +
           std::string(64, 'c') + R"(","candidate_limit":8,"mode":"compiled"}})");

// projection_compiled for `call` showing `visible` with one ledger item per active unit.
std::string projected(std::int64_t seq, std::int64_t call,
                      const std::string& visible = R"(["read"])",
                      const std::string& active = R"(["tool:read"])",
                      const std::string& ledger =
                          R"({"bytes":40,"charged":12,"items":[{"bytes":40,"tokens":12,)"
                          R"("unit":"tool:read","variant":"full"}],"limit":100,"remaining":88})") {
  return ev(seq, "projection_compiled",
            R"({"call":)" + std::to_string(call) + R"(,"fingerprint":")" + std::string(64, 'f') +
                R"(","visible":)" + visible + R"(,"active_units":)" + active + R"(,"ledger":)" +
                ledger + "}");
}

std::string requested(std::int64_t seq, std::int64_t call, const std::string& tools) {
  return ev(seq, "model_requested",
            R"({"call":)" + std::to_string(call) + R"(,"kind":")" +
                (call == 1 ? "initial" : "turn") + R"(")" +
                (tools.empty() ? std::string() : R"(,"tools":)" + tools) + "}");
}

const std::string kProjectedEnd =
    ev(3, "model_responded", R"({"call":1,"content_bytes":2})") +
    ev(4, "run_completed", R"({"terminal":"completed","output":{},"model_calls":1,"repairs":0})");

TEST(TraceVerifyProjection, ARequestSendsWhatItsProjectionShowed) {
  EXPECT_EQ(
      check(kProjectedStart + projected(1, 1) + requested(2, 1, R"(["read"])") + kProjectedEnd)
          .status,
      Outcome::Ok);
  // More, fewer, other or no tools than the projection showed.
  for (const std::string tools : {R"(["read","bash"])", R"([])", R"(["bash"])", ""}) {
    expect_error(kProjectedStart + projected(1, 1) + requested(2, 1, tools) + kProjectedEnd,
                 codes::kTraceInconsistent, 3);
  }
}

TEST(TraceVerifyProjection, EveryRequestHasItsOwnProjection) {
  // None at all, one for another call, two for one call, something in between.
  expect_error(kProjectedStart + requested(1, 1, R"(["read"])"), codes::kTraceInconsistent, 2);
  expect_error(kProjectedStart + projected(1, 2) + requested(2, 1, R"(["read"])"),
               codes::kTraceInconsistent, 2);
  expect_error(kProjectedStart + projected(1, 1) + projected(2, 1), codes::kTraceInconsistent, 3);
  expect_error(kProjectedStart + projected(1, 1) +
                   ev(2, "nudge_sent", R"({"kind":"x","channel":"user","message":"m"})"),
               codes::kTraceInconsistent, 3);
}

TEST(TraceVerifyProjection, ARunThatDoesNotProjectRecordsNoProjection) {
  expect_error(kPlanStart + projected(1, 1), codes::kTraceInconsistent, 2);
  expect_error(kPlanStart + requested(1, 1, R"(["read"])"), codes::kTraceInconsistent, 2);
}

TEST(TraceVerifyProjection, TheLedgerAddsUpUnderTheDeclaredBudget) {
  const std::string item = R"({"bytes":40,"tokens":12,"unit":"tool:read","variant":"full"})";
  const auto ledger = [&](int bytes, int charged, int limit, int remaining, std::string items) {
    return R"({"bytes":)" + std::to_string(bytes) + R"(,"charged":)" + std::to_string(charged) +
           R"(,"items":)" + items + R"(,"limit":)" + std::to_string(limit) + R"(,"remaining":)" +
           std::to_string(remaining) + "}";
  };
  const std::string one = "[" + item + "]";
  for (const std::string& bad :
       {ledger(40, 13, 100, 87, one), ledger(41, 12, 100, 88, one), ledger(40, 12, 200, 188, one),
        ledger(40, 12, 100, 80, one), ledger(80, 24, 100, 76, "[" + item + "," + item + "]"),
        ledger(0, 0, 100, 100, "[]")}) {
    expect_error(kProjectedStart + projected(1, 1, R"(["read"])", R"(["tool:read"])", bad),
                 codes::kTraceInconsistent, 2);
  }
  // Over the budget: 120 tokens charged against 100.
  const std::string big = R"([{"bytes":400,"tokens":120,"unit":"tool:read","variant":"full"}])";
  expect_error(kProjectedStart + projected(1, 1, R"(["read"])", R"(["tool:read"])",
                                           ledger(400, 120, 100, -20, big)),
               codes::kTraceInconsistent, 2);
}

TEST(TraceVerifyProjection, OnlyActiveToolsAreVisible) {
  expect_error(kProjectedStart + projected(1, 1, R"(["read","bash"])"), codes::kTraceInconsistent,
               2);
  expect_error(kProjectedStart + projected(1, 1, R"(["bash"])"), codes::kTraceInconsistent, 2);
  EXPECT_EQ(
      check(kProjectedStart + projected(1, 1, R"([])") + requested(2, 1, R"([])") + kProjectedEnd)
          .status,
      Outcome::Ok);
}

}  // namespace plan_rules

// A trace of several slices (the hashing thread takes 128 KiB at a time): the same summary whole
// and in chunks of any size, the digest of every byte, and a changed line deep inside found at the
// line after it, whichever slice either falls in.
TEST(TraceVerify, ALongTraceIsHashedAndCheckedAcrossSlices) {
  std::string unlinked = kStart;
  std::int64_t seq = 1;
  const std::string filler(300, 'x');
  for (int call = 1; call <= 3000; ++call) {
    unlinked +=
        ev(seq++, "guardrail_violation",
           R"({"kind":"retry_nudge","message":")" + filler + std::to_string(call) + R"("})");
  }
  unlinked += ev(seq, "run_completed",
                 R"({"terminal":"completed","output":{},"model_calls":0,"repairs":0})");
  const std::string t = chain(unlinked);
  ASSERT_GT(t.size(), 4u * (128u << 10));
  const Summary whole = check_raw(t);
  EXPECT_EQ(whole.status, Outcome::Ok) << (whole.first_error ? whole.first_error->message : "");
  EXPECT_EQ(whole.events, seq + 1);
  EXPECT_EQ(whole.trace_sha256, mf::hash::sha256_hex(t));
  const auto json = mf::json::canonical(mf::trace::to_json(whole));
  for (std::size_t chunk : {4096u, 131071u, 300000u, 1u << 20}) {
    mf::trace::Verifier v;
    for (std::size_t i = 0; i < t.size(); i += chunk) v.feed(std::string_view(t).substr(i, chunk));
    EXPECT_EQ(mf::json::canonical(mf::trace::to_json(v.finish())), json) << chunk;
  }
  // One byte of a message changed on line 2000: that line is still well-formed, the next names
  // the old digest.
  std::string tampered = t;
  std::size_t at = 0;
  for (int line = 1; line < 2000; ++line) at = tampered.find('\n', at) + 1;
  at = tampered.find(filler, at);
  ASSERT_NE(at, std::string::npos);
  tampered[at] = 'y';
  for (std::size_t chunk : {tampered.size(), std::size_t{65536}}) {
    mf::trace::Verifier v;
    for (std::size_t i = 0; i < tampered.size(); i += chunk) {
      v.feed(std::string_view(tampered).substr(i, chunk));
    }
    const Summary s = v.finish();
    ASSERT_TRUE(s.first_error) << chunk;
    EXPECT_EQ(s.first_error->code, codes::kTraceChainBroken);
    EXPECT_EQ(s.first_error->line, 2001);
    EXPECT_EQ(s.events, 2000);
    EXPECT_EQ(s.trace_sha256, mf::hash::sha256_hex(tampered));
  }
}

// Inline content full of escapes (every short escape, \u00xx controls, raw non-ASCII) over many
// slices, each line a different length so the line digests end at every offset of a block: ok
// with the digest of every byte; one content byte changed and the trace chained again, the
// content check finds it at its line.
TEST(TraceVerify, EscapeHeavyInlineContentAcrossSlices) {
  const std::vector<std::string> words = {"panic",    "quote\"d", "back\\slash", "line\nbreak",
                                          "tab\tx",   "ctl\x1f",  "caf\xc3\xa9", "\xf0\x9f\x98\x80",
                                          "cr\r\f\b", "plain",    "unwrap()"};
  std::string unlinked = kStart;
  std::int64_t seq = 1;
  const int calls = 600;
  for (int call = 1; call <= calls; ++call) {
    unlinked += ev(seq++, "model_requested",
                   R"({"call":)" + std::to_string(call) + R"(,"kind":")" +
                       (call == 1 ? "initial" : "turn") + R"("})");
    std::string content;
    for (int w = 0; w < 20 + call % 97; ++w) {
      content += words[static_cast<std::size_t>(call * 7 + w * 3) % words.size()];
      content += ' ';
    }
    mf::json::Value payload = mf::json::Object{};
    payload.set("call", call);
    payload.set("content", content);
    payload.set("content_bytes", static_cast<std::int64_t>(content.size()));
    payload.set("content_sha256", mf::hash::sha256_hex(content));
    unlinked += ev(seq++, "model_responded", mf::json::canonical(payload));
  }
  unlinked += ev(seq, "run_completed",
                 R"({"terminal":"completed","output":{},"model_calls":)" + std::to_string(calls) +
                     R"(,"repairs":0})");
  const std::string t = chain(unlinked);
  ASSERT_GT(t.size(), 4u * (128u << 10));
  const Summary whole = check_raw(t);
  EXPECT_EQ(whole.status, Outcome::Ok) << (whole.first_error ? whole.first_error->message : "");
  EXPECT_EQ(whole.events, seq + 1);
  EXPECT_EQ(whole.model_calls, calls);
  EXPECT_EQ(whole.trace_sha256, mf::hash::sha256_hex(t));
  const auto json = mf::json::canonical(mf::trace::to_json(whole));
  for (std::size_t chunk : {std::size_t{1000}, std::size_t{131073}, t.size()}) {
    mf::trace::Verifier v;
    for (std::size_t i = 0; i < t.size(); i += chunk) v.feed(std::string_view(t).substr(i, chunk));
    EXPECT_EQ(mf::json::canonical(mf::trace::to_json(v.finish())), json) << chunk;
  }
  // Line 801 is call 400's response: "panic" becomes "pan!c" in its content.
  std::string changed = unlinked;
  std::size_t at = 0;
  for (int line = 1; line < 801; ++line) at = changed.find('\n', at) + 1;
  ASSERT_NE(changed.find("\"event\":\"model_responded\"", at), std::string::npos);
  at = changed.find("panic", at);
  changed[at + 3] = '!';
  expect_error(changed, codes::kTraceInconsistent, 801);
}

// --- a trace past two slices (256 KiB), hashed on a second thread that also reads each line's
// inline content ahead of the checks
// ------------------------------------------------------------------------

// The run_started line of a plan run that records the model's replies inline.
std::string inline_plan_start() {
  return ev(0, "run_started",
            R"({"mode":"plan","plan_sha256":")" + std::string(64, 'a') +
                R"(","model":"scripted:r.json","budget":{"max_repairs":0},)"
                R"("durability":"event","trace_content":"inline"})");
}

// A model_responded payload with its content inline, its size and its digest.
std::string inline_response(int call, const std::string& content) {
  mf::json::Value response = mf::json::Object{};
  response.set("call", call);
  response.set("content", content);
  response.set("content_bytes", static_cast<std::int64_t>(content.size()));
  response.set("content_sha256", mf::hash::sha256_hex(content));
  return mf::json::canonical(response);
}

// A plan run of `rounds` model calls with escape-heavy inline content, each followed by a tool
// call whose arguments hold a nested "content" member before the line's own keys.
std::vector<std::string> content_run(int rounds) {
  std::vector<std::string> lines = {inline_plan_start()};
  std::int64_t seq = 1;
  std::string text;
  for (int k = 0; k < 8; ++k) text += "quote\" tab\t back\\ ctl\x1f caf\xc3\xa9 line\n ";
  for (int call = 1; call <= rounds; ++call) {
    const std::string n = std::to_string(call);
    lines.push_back(ev(seq++, "model_requested", R"({"call":)" + n + R"(,"kind":"initial"})"));
    lines.push_back(ev(seq++, "model_responded", inline_response(call, text + n)));
    lines.push_back(
        ev(seq++, "tool_called",
           R"({"arguments":{"content":"x\"y"},"call_id":"c)" + n + R"(","tool":"write"})"));
    lines.push_back(ev(seq++, "tool_completed", R"({"call_id":"c)" + n + R"(","ok":true})"));
  }
  lines.push_back(ev(seq, "run_completed",
                     R"({"terminal":"completed","output":{},"model_calls":)" +
                         std::to_string(rounds) + R"(,"repairs":0,"tool_calls":)" +
                         std::to_string(rounds) + "}"));
  return lines;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string t;
  for (const auto& l : lines) t += l;
  return t;
}

TEST(TraceVerify, ContentReadAheadKeepsTheVerdicts) {
  constexpr int kRounds = 900;
  auto lines = content_run(kRounds);
  const std::string trace = chain(joined(lines));
  ASSERT_GT(trace.size(), 2u * 256 * 1024);
  const auto s = check_raw(trace);
  EXPECT_EQ(s.status, Outcome::Ok) << (s.first_error ? s.first_error->message : "");
  EXPECT_EQ(s.model_calls, kRounds);
  EXPECT_EQ(s.tool_calls, kRounds);
  // Fed in small chunks, each hashed on the checking thread: the same summary.
  mf::trace::Verifier v;
  for (std::size_t i = 0; i < trace.size(); i += 4000)
    v.feed(std::string_view(trace).substr(i, 4000));
  EXPECT_EQ(mf::json::canonical(mf::trace::to_json(v.finish())),
            mf::json::canonical(mf::trace::to_json(s)));

  // Edits of one line deep in the linked trace (the line's own link kept), each found at that line.
  const std::size_t late = 4 * (kRounds - 100) + 2;  // a model_responded line, 0-based
  const auto edit = [&](std::string_view from, std::string_view to) {
    std::size_t at = 0;
    for (std::size_t k = 0; k < late; ++k) at = trace.find('\n', at) + 1;
    std::string t = trace;
    t.replace(t.find(from, at), from.size(), to);
    return t;
  };
  const auto line = static_cast<std::int64_t>(late) + 1;
  // Content changed, its size kept: the digest no longer matches.
  expect_raw_error(edit("tab\\t", "tab\\n"), codes::kTraceInconsistent, line);
  // An escape JCS does not write: not canonical.
  expect_raw_error(edit("tab\\t", "tab\\u0009"), codes::kTraceNotCanonical, line);
  // A raw control character: not strict JSON.
  expect_raw_error(edit("tab\\t", "tab\t"), codes::kTraceMalformedLine, line);
}

namespace {

// `trace` with the first "tab\t" escape after its line `late` changed to "tab\n": line `late` + 1
// no longer matches its content's digest.
std::string with_content_edited_after(const std::string& trace, std::size_t late) {
  std::size_t at = 0;
  for (std::size_t k = 0; k < late; ++k) at = trace.find('\n', at) + 1;
  std::string t = trace;
  t.replace(t.find("tab\\t", at), 5, "tab\\n");
  return t;
}

// What with_content_edited_after(trace, late) must verify to: inconsistent at line `late` + 1,
// with the digest of the edited bytes.
void expect_edit_found(const Summary& s, const std::string& edited, std::size_t late) {
  ASSERT_TRUE(s.first_error.has_value());
  EXPECT_EQ(s.first_error->code, codes::kTraceInconsistent);
  EXPECT_EQ(s.first_error->line, static_cast<std::int64_t>(late) + 1);
  EXPECT_EQ(s.trace_sha256, mf::hash::sha256_hex(edited));
}

}  // namespace

// A trace file of many slices read into the ring (128 KiB each, the ring wrapping many times): the
// verdicts are the in-memory ones, for a whole trace and for an edit in a later slice, found at its
// line.
TEST(TraceVerify, AFileOfManyChunksKeepsTheVerdicts) {
  constexpr int kRounds = 6000;
  const std::string trace = chain(joined(content_run(kRounds)));
  ASSERT_GT(trace.size(), 3u << 20);
  const mf::test::TempDir dir("mf-verify-chunks");
  const auto in_file = [&](const std::string& bytes) {
    const std::string path = (dir / "t.jsonl").string();
    mf::test::write_file(path, bytes);
    std::uint64_t last = 0, calls = 0;
    auto s = mf::trace::verify_file(path, {}, [&](std::uint64_t done, std::uint64_t) {
      EXPECT_GT(done, last);
      last = done;
      ++calls;
    });
    EXPECT_TRUE(s.ok());
    EXPECT_EQ(last, bytes.size());
    EXPECT_GT(calls, 2u);
    return std::move(s).value();
  };
  const auto same = [](const Summary& a, const Summary& b) {
    EXPECT_EQ(mf::json::canonical(mf::trace::to_json(a)),
              mf::json::canonical(mf::trace::to_json(b)));
    ASSERT_EQ(a.first_error.has_value(), b.first_error.has_value());
    if (a.first_error) {
      EXPECT_EQ(a.first_error->code, b.first_error->code);
      EXPECT_EQ(a.first_error->line, b.first_error->line);
    }
  };
  same(in_file(trace), check_raw(trace));
  EXPECT_EQ(in_file(trace).status, Outcome::Ok);
  // An edit in the third chunk, and one in the last line's neighbourhood.
  for (const std::size_t late : {std::size_t{4 * 4000 + 2}, std::size_t{4 * (kRounds - 2) + 2}}) {
    const std::string t = with_content_edited_after(trace, late);
    const Summary s = in_file(t);
    expect_edit_found(s, t, late);
    same(s, check_raw(t));
  }
}

// --- the ring of slices between the hashing thread and the checking one
// ------------------------------------------------------------------------

// Slices of every size from a source, hundreds of them through a ring of 16 (it wraps round many
// times), lines that begin in one slice and end several slices on: the verdicts are the in-memory
// ones, the bytes checked are told after each slice, and an edit far past the first wrap is found
// at its line.
TEST(TraceVerifyRing, SlicesOfAnySizeKeepTheVerdicts) {
  constexpr int kRounds = 3000;
  const std::string trace = chain(joined(content_run(kRounds)));
  ASSERT_GT(trace.size(), 1u << 20);
  const std::vector<std::size_t> sizes = {1, 7, 700, 4096, 131073, 3, 65536, 20000, 100, 5000};
  const auto in_slices = [&](std::string_view bytes) {
    mf::trace::Verifier v;
    std::size_t next = 0, slices = 0, told = 0;
    std::uint64_t last = 0;
    v.feed_from(
        [&](std::span<char> buffer) {
          // Every other slice is copied into the ring's buffer, the rest given in place.
          std::string_view slice = bytes.substr(0, sizes[next++ % sizes.size()]);
          bytes.remove_prefix(slice.size());
          if (slices++ % 2 == 0 && slice.size() <= buffer.size()) {
            std::copy(slice.begin(), slice.end(), buffer.begin());
            slice = {buffer.data(), slice.size()};
          }
          return slice;
        },
        [&](std::uint64_t checked) {
          EXPECT_GT(checked, last);
          last = checked;
          ++told;
        });
    EXPECT_EQ(told + 1, slices);  // each slice but the empty one at the end
    EXPECT_GT(told, 4u * 16);     // the ring of 16 slices wraps round
    return v.finish();
  };
  const auto same = [](const Summary& a, const Summary& b) {
    EXPECT_EQ(mf::json::canonical(mf::trace::to_json(a)),
              mf::json::canonical(mf::trace::to_json(b)));
  };
  const Summary whole = in_slices(trace);
  EXPECT_EQ(whole.status, Outcome::Ok) << (whole.first_error ? whole.first_error->message : "");
  EXPECT_EQ(whole.trace_sha256, mf::hash::sha256_hex(trace));
  same(whole, check_raw(trace));
  for (const std::size_t late : {std::size_t{4 * 2500 + 2}, std::size_t{4 * 10 + 2}}) {
    const std::string t = with_content_edited_after(trace, late);
    const Summary s = in_slices(t);
    expect_edit_found(s, t, late);
    same(s, check_raw(t));
  }
}

// A trace file whose model responses are longer than many slices (each line spans a dozen of the
// 128 KiB slices read into the ring), between short lines: ok, with progress told after each
// slice; a changed content byte is found at its line.
TEST(TraceVerifyRing, LinesLongerThanManySlices) {
  std::string text;
  while (text.size() < (3u << 19)) text += "quote\" tab\t back\\ ctl\x1f caf\xc3\xa9 line\n ";
  std::vector<std::string> lines = {inline_plan_start()};
  std::int64_t seq = 1;
  constexpr int kCalls = 4;
  for (int call = 1; call <= kCalls; ++call) {
    lines.push_back(ev(seq++, "model_requested",
                       R"({"call":)" + std::to_string(call) + R"(,"kind":"initial"})"));
    lines.push_back(ev(seq++, "model_responded", inline_response(call, text)));
  }
  lines.push_back(ev(seq, "run_completed",
                     R"({"terminal":"completed","output":{},"model_calls":)" +
                         std::to_string(kCalls) + R"(,"repairs":0})"));
  const std::string trace = chain(joined(lines));
  ASSERT_GT(trace.size(), 4u * (12u << 17));
  const mf::test::TempDir dir("mf-verify-long");
  const auto in_file = [&](const std::string& bytes) {
    const std::string path = (dir / "t.jsonl").string();
    mf::test::write_file(path, bytes);
    std::uint64_t calls = 0;
    auto s = mf::trace::verify_file(path, {}, [&](std::uint64_t, std::uint64_t) { ++calls; });
    EXPECT_TRUE(s.ok());
    EXPECT_EQ(calls, (bytes.size() + (128u << 10) - 1) / (128u << 10));
    return std::move(s).value();
  };
  const Summary s = in_file(trace);
  EXPECT_EQ(s.status, Outcome::Ok) << (s.first_error ? s.first_error->message : "");
  EXPECT_EQ(s.events, seq + 1);
  EXPECT_EQ(s.trace_sha256, mf::hash::sha256_hex(trace));
  // The third response (line 7): one escape changed deep inside, its size kept.
  std::size_t at = 0;
  for (int k = 0; k < 6; ++k) at = trace.find('\n', at) + 1;
  std::string t = trace;
  t.replace(t.find("tab\\t", at + (1u << 20)), 5, "tab\\n");
  const Summary edited = in_file(t);
  ASSERT_TRUE(edited.first_error.has_value());
  EXPECT_EQ(edited.first_error->code, codes::kTraceInconsistent);
  EXPECT_EQ(edited.first_error->line, 7);
  EXPECT_EQ(edited.trace_sha256, mf::hash::sha256_hex(t));
}

// Slices of little but newlines (a line digest for every byte or two) hold the hashing thread
// back until the checks have them: the first empty line is the error, and every byte after it is
// still hashed.
TEST(TraceVerifyRing, SlicesOfTinyLinesAfterAGoodLine) {
  std::string t = kStart;
  while (t.size() < (3u << 20)) t += "\n\n{}\n";
  for (const std::size_t chunk : {t.size(), std::size_t{1} << 20}) {
    mf::trace::Verifier v;
    for (std::size_t i = 0; i < t.size(); i += chunk) v.feed(std::string_view(t).substr(i, chunk));
    const Summary s = v.finish();
    ASSERT_TRUE(s.first_error.has_value());
    EXPECT_EQ(s.first_error->code, codes::kTraceMalformedLine);
    EXPECT_EQ(s.first_error->line, 2);
    EXPECT_EQ(s.trace_sha256, mf::hash::sha256_hex(t));
  }
}
