// The live backends' wire codec (common/model/src/wire.hpp): request bodies for both APIs, reply
// bodies, the Server-Sent Events parser and the stream decoders fed in every possible split,
// llama.cpp's salvageable 500s and error summaries.
#include "wire.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"
#include "mf/text/utf8.hpp"

namespace mf::model::wire {
namespace {

using net::SseParser;

json::Value parsed(std::string_view text) {
  Result<json::Value> v = json::parse(text);
  EXPECT_TRUE(v.ok()) << text;
  return v.ok() ? std::move(*v) : json::Value();
}

// Canonical text of a hand-written expected value, so comparisons ignore member order.
std::string canon(std::string_view text) {
  return json::canonical(parsed(text));
}

Settings settings(Api api, bool native = true, bool stream = false) {
  Settings s;
  s.api = api;
  s.model = api == Api::OpenAI ? "gpt-test" : "claude-test";
  s.native_tools = native;
  s.stream = stream;
  return s;
}

Message assistant(std::string content, std::vector<ToolCallRequest> calls) {
  Message m = Message::text("assistant", std::move(content));
  m.tool_calls = std::move(calls);
  return m;
}

Message tool_result(std::string id, std::string name, std::string content, bool error = false) {
  Message m = Message::text("tool", std::move(content));
  m.tool_call_id = std::move(id);
  m.tool_name = std::move(name);
  m.is_error = error;
  return m;
}

std::vector<ToolSchema> read_tool() {
  return {ToolSchema{.name = "read",
                     .description = "Read a file.",
                     .input_schema = parsed(R"({"type":"object","properties":{"path":)"
                                            R"({"type":"string"}},"required":["path"]})")}};
}

// A conversation with every kind of message: a call with text, a call without, results.
Request conversation() {
  Request r;
  r.messages.push_back(Message::text("system", "Be brief."));
  r.messages.push_back(Message::text("user", "Read a.txt"));
  r.messages.push_back(assistant("Reading.", {{"c1", "read", R"({"path":"a.txt"})"}}));
  r.messages.push_back(tool_result("c1", "read", "hello"));
  r.messages.push_back(assistant("", {{"c2", "read", R"({"path":"b.txt"})"}}));
  r.messages.push_back(tool_result("c2", "read", "no such file", true));
  r.tools = read_tool();
  return r;
}

// Every observable field of a reply, as one string, so two replies compare in one assertion.
std::string describe(const Reply& r) {
  json::Value v;
  v.set("ok", r.ok);
  v.set("content", r.content);
  v.set("reasoning", r.reasoning);
  v.set("stop_reason", r.stop_reason);
  v.set("usage", r.usage);
  v.set("error", r.error);
  json::Value calls = json::Array{};
  for (const ToolCallRequest& c : r.tool_calls) {
    json::Value call(json::Object{{"id", c.id}, {"name", c.name}, {"arguments", c.arguments}});
    if (!c.malformed.empty()) call.set("malformed", c.malformed);
    calls.push_back(std::move(call));
  }
  v.set("tool_calls", std::move(calls));
  return json::canonical(v);
}

Reply decode(const Settings& s, const std::vector<std::string_view>& pieces) {
  StreamDecoder d(s);
  for (std::string_view p : pieces) (void)d.feed(p);
  return d.finish();
}

Reply decode(const Settings& s, std::string_view stream) {
  return decode(s, std::vector<std::string_view>{stream});
}

// The stream decoded whole, split in two at every byte position, and one byte at a time.
void expect_split_invariant(const Settings& s, std::string_view stream) {
  const std::string whole = describe(decode(s, stream));
  for (std::size_t i = 0; i <= stream.size(); ++i) {
    ASSERT_EQ(describe(decode(s, {stream.substr(0, i), stream.substr(i)})), whole)
        << "split at " << i;
  }
  std::vector<std::string_view> bytes;
  for (std::size_t i = 0; i < stream.size(); ++i) bytes.push_back(stream.substr(i, 1));
  EXPECT_EQ(describe(decode(s, bytes)), whole);
}

// --- OpenAI request bodies ------------------------------------------------------------------

TEST(WireOpenAiBody, NativeToolsAndEveryMessageKind) {
  Settings s = settings(Api::OpenAI);
  s.parallel_tool_calls = true;
  s.options = parsed(R"({"temperature":0.2,"seed":7})");
  EXPECT_EQ(json::canonical(build_body(s, conversation())), canon(R"({
    "model": "gpt-test", "temperature": 0.2, "seed": 7, "parallel_tool_calls": true,
    "messages": [
      {"role": "system", "content": "Be brief."},
      {"role": "user", "content": "Read a.txt"},
      {"role": "assistant", "content": "Reading.", "tool_calls": [
        {"id": "c1", "type": "function",
         "function": {"name": "read", "arguments": "{\"path\":\"a.txt\"}"}}]},
      {"role": "tool", "tool_call_id": "c1", "content": "hello"},
      {"role": "assistant", "content": null, "tool_calls": [
        {"id": "c2", "type": "function",
         "function": {"name": "read", "arguments": "{\"path\":\"b.txt\"}"}}]},
      {"role": "tool", "tool_call_id": "c2", "content": "no such file"}],
    "tools": [{"type": "function", "function": {"name": "read", "description": "Read a file.",
      "parameters": {"type": "object", "properties": {"path": {"type": "string"}},
                     "required": ["path"]}}}]})"));
}

TEST(WireOpenAiBody, ArgumentsArePassedThroughRaw) {
  Request r;
  r.messages.push_back(assistant("", {{"c1", "read", "{\"path\": \"a"}}));
  const json::Value body = build_body(settings(Api::OpenAI), r);
  EXPECT_EQ(json::canonical(body), canon(R"({"model": "gpt-test", "messages": [
    {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
      "function": {"name": "read", "arguments": "{\"path\": \"a"}}]}]})"));
}

TEST(WireOpenAiBody, StreamingAsksForUsageAndTaskModeSendsNoTools) {
  Request r;
  r.messages.push_back(Message::text("user", "hi"));
  EXPECT_EQ(json::canonical(build_body(settings(Api::OpenAI, true, true), r)), canon(R"({
    "model": "gpt-test", "messages": [{"role": "user", "content": "hi"}],
    "stream": true, "stream_options": {"include_usage": true}})"));
}

TEST(WireOpenAiBody, OptionsNeverReplaceTheCodecsMembers) {
  Settings s = settings(Api::OpenAI);
  s.options = parsed(R"({"model": "other", "messages": [], "top_p": 0.5})");
  Request r;
  r.messages.push_back(Message::text("user", "hi"));
  EXPECT_EQ(json::canonical(build_body(s, r)), canon(R"({"model": "gpt-test", "top_p": 0.5,
    "messages": [{"role": "user", "content": "hi"}]})"));
}

TEST(WireOpenAiBody, TextToolsJoinTheSystemMessage) {
  const json::Value body = build_body(settings(Api::OpenAI, false), conversation());
  const std::string system = "Be brief.\n\n" + detail::tools_instructions(read_tool());
  json::Value expected = parsed(R"({"model": "gpt-test", "messages": [
    {"role": "system", "content": "SYSTEM"},
    {"role": "user", "content": "Read a.txt"},
    {"role": "assistant", "content": "Reading.\n{\"name\":\"read\",\"arguments\":{\"path\":\"a.txt\"}}"},
    {"role": "user", "content": "Result of read (call c1): hello"},
    {"role": "assistant", "content": "{\"name\":\"read\",\"arguments\":{\"path\":\"b.txt\"}}"},
    {"role": "user", "content": "Error from read (call c2): no such file"}]})");
  expected.find("messages")->as_array()[0].set("content", system);
  EXPECT_EQ(json::canonical(body), json::canonical(expected));
}

TEST(WireOpenAiBody, TextToolsWithoutASystemMessageAddOne) {
  Request r;
  r.messages.push_back(Message::text("user", "hi"));
  r.tools = read_tool();
  const json::Value body = build_body(settings(Api::OpenAI, false), r);
  const json::Array& messages = body.find("messages")->as_array();
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(*messages[0].find("role"), json::Value("system"));
  EXPECT_EQ(*messages[0].find("content"), json::Value(detail::tools_instructions(read_tool())));
  EXPECT_EQ(*messages[1].find("content"), json::Value("hi"));
  EXPECT_EQ(body.find("tools"), nullptr);
  EXPECT_EQ(body.find("parallel_tool_calls"), nullptr);
}

TEST(WireText, InstructionsListEveryToolWithItsCanonicalSchema) {
  std::vector<ToolSchema> tools = read_tool();
  tools.push_back(ToolSchema{.name = "submit", .description = "", .input_schema = json::Value()});
  const std::string text = detail::tools_instructions(tools);
  EXPECT_NE(text.find("\n- read: Read a file.\n  input schema: "
                      R"({"properties":{"path":{"type":"string"}},"required":["path"],)"
                      R"("type":"object"})"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n- submit\n  input schema: {\"type\":\"object\"}"), std::string::npos);
  EXPECT_NE(text.find(R"({"name": "<tool name>", "arguments": {...}})"), std::string::npos);
  EXPECT_NE(text.find("exactly one"), std::string::npos);
}

TEST(WireText, CallsAndResultsAsText) {
  EXPECT_EQ(detail::call_as_text({"c1", "read", R"( {"path" : "a"} )"}),
            R"({"name":"read","arguments":{"path":"a"}})");
  // Arguments that are not JSON are quoted as a string: the model sees exactly what it wrote.
  EXPECT_EQ(detail::call_as_text({"c1", "read", R"({"path": )"}),
            R"({"name":"read","arguments":"{\"path\": "})");
  EXPECT_EQ(detail::result_as_text(tool_result("c9", "grep", "3 hits")),
            "Result of grep (call c9): 3 hits");
  EXPECT_EQ(detail::result_as_text(tool_result("c9", "grep", "bad regex", true)),
            "Error from grep (call c9): bad regex");
}

// --- Anthropic request bodies ---------------------------------------------------------------

TEST(WireAnthropicBody, NativeToolsMergeResultsIntoOneUserMessage) {
  Request r;
  r.messages.push_back(Message::text("system", "Be brief."));
  r.messages.push_back(Message::text("user", "Read a.txt and b.txt"));
  r.messages.push_back(assistant(
      "Both.", {{"c1", "read", R"({"path":"a.txt"})"}, {"c2", "read", R"({"path":"b.txt"})"}}));
  r.messages.push_back(tool_result("c1", "read", "hello"));
  r.messages.push_back(tool_result("c2", "read", "no such file", true));
  r.messages.push_back(Message::text("system", "Two calls left."));
  r.messages.push_back(Message::text("user", "Now submit."));
  r.tools = read_tool();
  Settings s = settings(Api::Anthropic, true, true);
  s.options = parsed(R"({"temperature": 0})");
  EXPECT_EQ(json::canonical(build_body(s, r)), canon(R"({
    "model": "claude-test", "max_tokens": 4096, "temperature": 0, "stream": true,
    "system": "Be brief.\n\nTwo calls left.",
    "messages": [
      {"role": "user", "content": [{"type": "text", "text": "Read a.txt and b.txt"}]},
      {"role": "assistant", "content": [
        {"type": "text", "text": "Both."},
        {"type": "tool_use", "id": "c1", "name": "read", "input": {"path": "a.txt"}},
        {"type": "tool_use", "id": "c2", "name": "read", "input": {"path": "b.txt"}}]},
      {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "c1", "content": "hello", "is_error": false},
        {"type": "tool_result", "tool_use_id": "c2", "content": "no such file", "is_error": true},
        {"type": "text", "text": "Now submit."}]}],
    "tools": [{"name": "read", "description": "Read a file.", "input_schema":
      {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}]})"));
}

TEST(WireAnthropicBody, MaxTokensFromOptions) {
  Settings s = settings(Api::Anthropic);
  s.options = parsed(R"({"max_tokens": 300})");
  Request r;
  r.messages.push_back(Message::text("user", "hi"));
  EXPECT_EQ(json::canonical(build_body(s, r)), canon(R"({"model": "claude-test",
    "max_tokens": 300, "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]})"));
}

TEST(WireAnthropicBody, ArgumentsThatAreNotAnObjectGoAlongAsText) {
  Request r;
  r.messages.push_back(Message::text("user", "go"));
  r.messages.push_back(assistant(
      "", {{"c1", "read", R"({"path": "a)"}, {"c2", "read", "[1, 2]"}, {"c3", "read", ""}}));
  r.messages.push_back(tool_result("c1", "read", "invalid arguments", true));
  r.messages.push_back(tool_result("c2", "read", "invalid arguments", true));
  r.messages.push_back(tool_result("c3", "read", "invalid arguments", true));
  const json::Value body = build_body(settings(Api::Anthropic), r);
  const json::Value& blocks = body.find("messages")->as_array()[1];
  EXPECT_EQ(json::canonical(blocks), canon(R"({"role": "assistant", "content": [
    {"type": "text", "text": "{\"path\": \"a"},
    {"type": "tool_use", "id": "c1", "name": "read", "input": {}},
    {"type": "text", "text": "[1, 2]"},
    {"type": "tool_use", "id": "c2", "name": "read", "input": {}},
    {"type": "tool_use", "id": "c3", "name": "read", "input": {}}]})"));
  EXPECT_EQ(body.find("messages")->as_array().size(), 3u);
}

TEST(WireAnthropicBody, EmptyTextIsDroppedAndRolesStillAlternate) {
  Request r;
  r.messages.push_back(Message::text("user", "one"));
  r.messages.push_back(Message::text("assistant", ""));
  r.messages.push_back(Message::text("user", "two"));
  r.messages.push_back(Message::text("assistant", "ok"));
  r.messages.push_back(Message::text("assistant", "more"));
  EXPECT_EQ(json::canonical(*build_body(settings(Api::Anthropic), r).find("messages")), canon(R"([
    {"role": "user", "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]},
    {"role": "assistant", "content": [{"type": "text", "text": "ok"},
                                      {"type": "text", "text": "more"}]}])"));
}

TEST(WireAnthropicBody, TextToolsJoinTheSystemTextAndResultsBecomeUserText) {
  Request r = conversation();
  r.messages.push_back(Message::text("user", "Go on."));
  json::Value body = build_body(settings(Api::Anthropic, false), r);
  EXPECT_EQ(body.find("tools"), nullptr);
  EXPECT_EQ(*body.find("system"),
            json::Value("Be brief.\n\n" + detail::tools_instructions(read_tool())));
  EXPECT_EQ(json::canonical(*body.find("messages")), canon(R"([
    {"role": "user", "content": [{"type": "text", "text": "Read a.txt"}]},
    {"role": "assistant", "content": [{"type": "text",
      "text": "Reading.\n{\"name\":\"read\",\"arguments\":{\"path\":\"a.txt\"}}"}]},
    {"role": "user", "content": [{"type": "text", "text": "Result of read (call c1): hello"}]},
    {"role": "assistant", "content": [{"type": "text",
      "text": "{\"name\":\"read\",\"arguments\":{\"path\":\"b.txt\"}}"}]},
    {"role": "user", "content": [
      {"type": "text", "text": "Error from read (call c2): no such file"},
      {"type": "text", "text": "Go on."}]}])"));
}

// --- Reply bodies ---------------------------------------------------------------------------

TEST(WireOpenAiReply, TextReasoningAndUsage) {
  const Reply r = parse_body(settings(Api::OpenAI), R"({"id": "x", "choices": [{"index": 0,
    "message": {"role": "assistant", "content": "Hi.", "reasoning_content": "Think."},
    "finish_reason": "stop"}], "usage": {"prompt_tokens": 12, "completion_tokens": 5,
    "total_tokens": 17, "completion_tokens_details": {"reasoning_tokens": 3}}})");
  EXPECT_EQ(describe(r), canon(R"({"ok": true, "content": "Hi.", "reasoning": "Think.",
    "stop_reason": "stop", "error": "", "tool_calls": [],
    "usage": {"input_tokens": 12, "output_tokens": 5, "reasoning_tokens": 3}})"));
}

TEST(WireOpenAiReply, ToolCallsWithNullContent) {
  const Reply r = parse_body(settings(Api::OpenAI), R"({"choices": [{"index": 0, "message": {
    "role": "assistant", "content": null, "reasoning": "Plan.", "tool_calls": [
      {"id": "call_1", "type": "function", "function": {"name": "read",
       "arguments": "{\"path\": \"a\"}"}},
      {"id": "call_2", "type": "function", "function": {"name": "read", "arguments": "{bad"}},
      {"id": "call_3", "type": "function", "function": {"name": "list",
       "arguments": {"dir": "."}}}]},
    "finish_reason": "tool_calls"}]})");
  EXPECT_EQ(describe(r), canon(R"({"ok": true, "content": "", "reasoning": "Plan.",
    "stop_reason": "tool_calls", "error": "", "usage": null, "tool_calls": [
      {"id": "call_1", "name": "read", "arguments": "{\"path\": \"a\"}"},
      {"id": "call_2", "name": "read", "arguments": "{bad"},
      {"id": "call_3", "name": "list", "arguments": "{\"dir\":\".\"}"}]})"));
}

TEST(WireOpenAiReply, Refusal) {
  const Reply r = parse_body(settings(Api::OpenAI), R"({"choices": [{"message": {
    "content": null, "refusal": "I can't help with that."}, "finish_reason": "stop"}]})");
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.content, "I can't help with that.");
  EXPECT_EQ(r.stop_reason, "refusal");
}

TEST(WireOpenAiReply, UsageOnlyWhenBothCountsAreIntegers) {
  auto usage_of = [](std::string_view usage) {
    const std::string body =
        R"({"choices": [{"message": {"content": "x"}}], "usage": )" + std::string(usage) + "}";
    return json::canonical(parse_body(settings(Api::OpenAI), body).usage);
  };
  EXPECT_EQ(usage_of(R"({"prompt_tokens": 1, "completion_tokens": 2})"),
            R"({"input_tokens":1,"output_tokens":2})");
  EXPECT_EQ(usage_of(R"({"prompt_tokens": 1.5, "completion_tokens": 2})"), "null");
  EXPECT_EQ(usage_of(R"({"prompt_tokens": 1})"), "null");
  EXPECT_EQ(usage_of(R"({"prompt_tokens": -1, "completion_tokens": 2})"), "null");
  EXPECT_EQ(usage_of("null"), "null");
  EXPECT_EQ(usage_of(R"({"prompt_tokens": 1, "completion_tokens": 2,
                         "completion_tokens_details": {"reasoning_tokens": "3"}})"),
            R"({"input_tokens":1,"output_tokens":2})");
}

TEST(WireOpenAiReply, Failures) {
  const Settings s = settings(Api::OpenAI);
  Reply r = parse_body(s, "{\"choices\": [\n{\"message\": }]}");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("the response body is not valid JSON (line 2, column 13"),
            std::string::npos)
      << r.error;
  EXPECT_EQ(parse_body(s, R"({"choices": []})").error, "the response has no choices");
  EXPECT_EQ(parse_body(s, R"({"id": "x"})").error, "the response has no choices");
  EXPECT_EQ(parse_body(s, R"({"choices": [{"index": 0}]})").error,
            "the response's choice has no message");
  EXPECT_EQ(parse_body(s, "[1]").error, "the response body is not a JSON object");
  EXPECT_EQ(
      parse_body(s, R"({"error": {"message": "model overloaded", "type": "server_error"}})").error,
      "the response is an error: model overloaded (server_error)");
  // A long message is quoted, bounded, on one line.
  const std::string body =
      R"({"error": {"message": ")" + std::string(5000, 'x') + R"(\nend", "code": 42}})";
  r = parse_body(s, body);
  EXPECT_FALSE(r.ok);
  EXPECT_LT(r.error.size(), 300u);
  EXPECT_EQ(r.error.find('\n'), std::string::npos);
  EXPECT_NE(r.error.find("..."), std::string::npos);
}

TEST(WireAnthropicReply, BlocksToolUseAndUsage) {
  const Reply r = parse_body(settings(Api::Anthropic), R"({"id": "msg_1", "type": "message",
    "role": "assistant", "content": [
      {"type": "thinking", "thinking": "Hmm.", "signature": "sig"},
      {"type": "text", "text": "Reading "},
      {"type": "text", "text": "both."},
      {"type": "redacted_thinking", "data": "xyz"},
      {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a", "n": 1}},
      {"type": "tool_use", "id": "toolu_2", "name": "list", "input": {}}],
    "stop_reason": "tool_use",
    "usage": {"input_tokens": 10, "cache_read_input_tokens": 90, "output_tokens": 20}})");
  EXPECT_EQ(describe(r), canon(R"({"ok": true, "content": "Reading both.", "reasoning": "Hmm.",
    "stop_reason": "tool_use", "error": "",
    "usage": {"input_tokens": 100, "output_tokens": 20}, "tool_calls": [
      {"id": "toolu_1", "name": "read", "arguments": "{\"n\":1,\"path\":\"a\"}"},
      {"id": "toolu_2", "name": "list", "arguments": "{}"}]})"));
}

TEST(WireAnthropicReply, Failures) {
  const Settings s = settings(Api::Anthropic);
  EXPECT_EQ(parse_body(s, R"({"type": "error", "error": {"type": "overloaded_error",
                                "message": "Overloaded"}})")
                .error,
            "the response is an error: Overloaded (overloaded_error)");
  EXPECT_EQ(parse_body(s, R"({"type": "message", "stop_reason": "end_turn"})").error,
            "the response has no content");
  const Reply r = parse_body(s, R"({"content": [)");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("not valid JSON (line 1, column 14"), std::string::npos) << r.error;
}

// --- Server-Sent Events ---------------------------------------------------------------------

struct SseEvents {
  std::vector<std::string> seen;  // "name|data"
  SseParser parser(std::size_t max_line = 8u << 20) {
    return SseParser(
        [this](std::string_view event, std::string_view data) {
          seen.push_back(std::string(event) + "|" + std::string(data));
          return Status();
        },
        max_line);
  }
};

std::vector<std::string> events_of(const std::vector<std::string_view>& pieces) {
  SseEvents e;
  SseParser p = e.parser();
  for (std::string_view piece : pieces) EXPECT_TRUE(p.feed(piece).ok());
  EXPECT_TRUE(p.finish().ok());
  return e.seen;
}

// Comments, every field form, multi-line data, all three line ends, an id and a retry.
constexpr std::string_view kSse =
    "\xEF\xBB\xBF: keep-alive\r\n"
    "data: one\n\n"
    "event: delta\r"
    "data:two\r"
    "data:  three\r\n"
    "id: 7\n"
    "retry: 1000\n"
    "\r\n"
    "event: ignored\n"
    "\n"
    "data\n"
    "unknown: field\n"
    "\n"
    "data: caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\n"
    "\r"
    "data: unterminated";

TEST(SseParser, FieldsCommentsAndLineEnds) {
  EXPECT_EQ(events_of({kSse}),
            (std::vector<std::string>{"message|one", "delta|two\n three", "message|",
                                      "message|caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"}));
}

TEST(SseParser, EverySplitGivesTheSameEvents) {
  const std::vector<std::string> whole = events_of({kSse});
  for (std::size_t i = 0; i <= kSse.size(); ++i) {
    ASSERT_EQ(events_of({kSse.substr(0, i), kSse.substr(i)}), whole) << "split at " << i;
    for (std::size_t j = i; j <= kSse.size(); j += 7) {
      ASSERT_EQ(events_of({kSse.substr(0, i), kSse.substr(i, j - i), kSse.substr(j)}), whole)
          << "split at " << i << " and " << j;
    }
  }
  std::vector<std::string_view> bytes;
  for (std::size_t i = 0; i < kSse.size(); ++i) bytes.push_back(kSse.substr(i, 1));
  EXPECT_EQ(events_of(bytes), whole);
}

TEST(SseParser, CrlfSplitAcrossFeedsIsOneLineEnd) {
  // Were the LF after a feed-final CR a line end of its own, it would end the event early.
  EXPECT_EQ(events_of({"data: a\r", "\ndata: b\r", "\n\r", "\n"}),
            (std::vector<std::string>{"message|a\nb"}));
  EXPECT_EQ(events_of({"data: a\r", "", "\ndata: b\r\n\r\n"}),
            (std::vector<std::string>{"message|a\nb"}));
  // A lone CR then a blank line in the next feed: two line ends.
  EXPECT_EQ(events_of({"data: a\r", "\r"}), (std::vector<std::string>{"message|a"}));
}

TEST(SseParser, BomOnlyAtTheStart) {
  EXPECT_EQ(events_of({"\xEF", "\xBB", "\xBF", "data: x\n\n"}),
            (std::vector<std::string>{"message|x"}));
  EXPECT_EQ(events_of({"\xEF\xBB"}), std::vector<std::string>{});
  // A second BOM is part of the field name, which is then unknown.
  EXPECT_EQ(events_of({"\xEF\xBB\xBF\xEF\xBB\xBF"
                       "data: x\n\ndata: y\n\n"}),
            (std::vector<std::string>{"message|y"}));
  // Bytes that only start like a BOM are kept.
  EXPECT_EQ(events_of({"\xEF", "x\n", "data: z\n\n"}), (std::vector<std::string>{"message|z"}));
}

TEST(SseParser, UnterminatedEventIsNotDispatched) {
  EXPECT_EQ(events_of({"data: a\n"}), std::vector<std::string>{});
  EXPECT_EQ(events_of({"data: a\n\ndata: b"}), (std::vector<std::string>{"message|a"}));
}

TEST(SseParser, LineLongerThanTheLimitFails) {
  SseEvents e;
  SseParser ok = e.parser(8);
  EXPECT_TRUE(ok.feed("data: 12").ok());  // exactly 8 bytes, split over feeds
  EXPECT_TRUE(ok.feed("\n\n").ok());
  EXPECT_EQ(e.seen, (std::vector<std::string>{"message|12"}));

  SseParser in_one = e.parser(8);
  Status s = in_one.feed("data: 123\n\n");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.diagnostics().front().message.find("longer than 8 bytes"), std::string::npos);

  // Across feeds, and without a line end yet: the parser does not wait for one.
  SseParser across = e.parser(8);
  EXPECT_TRUE(across.feed("data:").ok());
  EXPECT_TRUE(across.feed(" 12").ok());
  EXPECT_FALSE(across.feed("3").ok());
  EXPECT_FALSE(across.feed("\n\n").ok());  // sticky
  EXPECT_FALSE(across.finish().ok());
  EXPECT_EQ(e.seen.size(), 1u);
}

TEST(SseParser, CallbackFailureStopsTheStream) {
  int calls = 0;
  SseParser p([&](std::string_view, std::string_view data) {
    ++calls;
    return data == "bad" ? Status(diag::error("MF-S011", "bad event")) : Status();
  });
  EXPECT_FALSE(p.feed("data: ok\n\ndata: bad\n\ndata: later\n\n").ok());
  EXPECT_FALSE(p.feed("data: more\n\n").ok());
  EXPECT_EQ(calls, 2);
}

TEST(SseParser, CrOnlyStreamIsLinear) {
  // 200 000 CR-terminated lines in one feed; quadratic rescanning would take minutes.
  std::string stream;
  for (int i = 0; i < 100000; ++i) stream += "data: x\r\r";
  SseEvents e;
  SseParser p = e.parser();
  EXPECT_TRUE(p.feed(stream).ok());
  EXPECT_EQ(e.seen.size(), 100000u);
}

// --- OpenAI streams -------------------------------------------------------------------------

std::string chunk(std::string_view choice_or_rest) {
  return "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,"
         "\"model\":\"m\"," +
         std::string(choice_or_rest) + "}\n\n";
}

std::string delta(std::string_view d, std::string_view finish = "null") {
  return chunk(R"("choices":[{"index":0,"delta":)" + std::string(d) +
               R"(,"logprobs":null,"finish_reason":)" + std::string(finish) + "}]");
}

const std::string kUsageChunk =
    chunk(R"("choices":[],"usage":{"prompt_tokens":9,"completion_tokens":4,)"
          R"("total_tokens":13,"completion_tokens_details":{"reasoning_tokens":2}})");

TEST(WireOpenAiStream, ContentReasoningUsage) {
  const std::string stream =
      ": OPENROUTER PROCESSING\n\n" + delta(R"({"role":"assistant","content":""})") +
      delta(R"({"reasoning_content":"Let me "})") + delta(R"({"reasoning_content":"think."})") +
      delta(R"({"content":"Caf\u00e9 "})") + delta(R"({"content":"€ ok"})") +
      delta("{}", "\"stop\"") + kUsageChunk + "data: [DONE]\n\n";
  const Settings s = settings(Api::OpenAI, true, true);
  EXPECT_EQ(describe(decode(s, stream)), canon(R"({"ok": true, "content": "Café € ok",
    "reasoning": "Let me think.", "stop_reason": "stop", "error": "", "tool_calls": [],
    "usage": {"input_tokens": 9, "output_tokens": 4, "reasoning_tokens": 2}})"));
  expect_split_invariant(s, stream);
}

TEST(WireOpenAiStream, ToolCallsAssembledByIndex) {
  const std::string stream =
      delta(R"({"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_a",)"
            R"("type":"function","function":{"name":"read","arguments":""}}]})") +
      delta(R"({"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]})") +
      delta(R"({"tool_calls":[{"index":0,"function":{"arguments":"th\": \"a\"}"}}]})") +
      delta(R"({"tool_calls":[{"index":1,"id":"call_b","type":"function",)"
            R"("function":{"name":"list"}}]})") +
      delta("{}", "\"tool_calls\"") + "data: [DONE]\n\n";
  const Settings s = settings(Api::OpenAI, true, true);
  EXPECT_EQ(describe(decode(s, stream)), canon(R"({"ok": true, "content": "", "reasoning": "",
    "stop_reason": "tool_calls", "error": "", "usage": null, "tool_calls": [
      {"id": "call_a", "name": "read", "arguments": "{\"path\": \"a\"}"},
      {"id": "call_b", "name": "list", "arguments": ""}]})"));
  expect_split_invariant(s, stream);
}

TEST(WireOpenAiStream, ReasoningSpellingAndRefusal) {
  const Settings s = settings(Api::OpenAI, true, true);
  Reply r = decode(s, delta(R"({"reasoning":"R."})") + delta(R"({"content":"A"})", "\"stop\""));
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.reasoning, "R.");
  r = decode(s, delta(R"({"refusal":"I can't "})") + delta(R"({"refusal":"do that."})") +
                    delta("{}", "\"stop\"") + "data: [DONE]\n\n");
  EXPECT_EQ(r.content, "I can't do that.");
  EXPECT_EQ(r.stop_reason, "refusal");
}

TEST(WireOpenAiStream, FinishReasonWithoutDoneIsComplete) {
  const Settings s = settings(Api::OpenAI, true, true);
  const Reply r = decode(s, delta(R"({"content":"hi"})") + delta("{}", "\"length\"") + kUsageChunk);
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.stop_reason, "length");
  EXPECT_EQ(json::canonical(r.usage),
            R"({"input_tokens":9,"output_tokens":4,"reasoning_tokens":2})");
}

TEST(WireOpenAiStream, Truncated) {
  const Settings s = settings(Api::OpenAI, true, true);
  Reply r = decode(s, delta(R"({"content":"hi"})") + delta(R"({"content":" there"})"));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error,
            "the stream was truncated: it ended after 2 events without [DONE] or a finish_reason");
  // Cut inside the last event: what was received never counts as the reply.
  const std::string cut = delta(R"({"content":"hi"})") + delta("{}", "\"stop\"");
  r = decode(s, std::string_view(cut).substr(0, cut.size() - 1));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("truncated"), std::string::npos);
  EXPECT_FALSE(decode(s, "").ok);
}

TEST(WireOpenAiStream, ErrorEventsAndMalformedEvents) {
  const Settings s = settings(Api::OpenAI, true, true);
  StreamDecoder d(s);
  EXPECT_TRUE(d.feed(delta(R"({"content":"hi"})")).ok());
  EXPECT_FALSE(d.feed(R"(data: {"error": {"message": "upstream timeout", "type": "server_error"}})"
                      "\n\n")
                   .ok());
  EXPECT_FALSE(d.feed(delta("{}", "\"stop\"")).ok());  // sticky
  Reply r = d.finish();
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "the server sent an error in the stream: upstream timeout (server_error)");

  r = decode(s, "event: error\ndata: {\"message\": \"quota\"}\n\n");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "the server sent an error in the stream: quota");
  r = decode(s, "event: error\ndata: {}\n\n");
  EXPECT_EQ(r.error, "the server sent an error in the stream");

  r = decode(s, delta(R"({"content":"hi"})") + "data: {\"choices\": [}\n\n" + "data: [DONE]\n\n");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("stream event 2 is not valid JSON (line 1, column 14"), std::string::npos)
      << r.error;
  r = decode(s, "data: [1]\n\n");
  EXPECT_EQ(r.error, "stream event 1 is not a JSON object");
}

TEST(WireOpenAiStream, NothingAfterDoneCounts) {
  const Settings s = settings(Api::OpenAI, true, true);
  const Reply r = decode(s, delta(R"({"content":"a"})") + "data: [DONE]\n\n" +
                                delta(R"({"content":"b"})") + "data: not json\n\n");
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.content, "a");
  EXPECT_EQ(r.stop_reason, "");
}

TEST(WireOpenAiStream, StartedOnlyOnceTheReplyBegins) {
  StreamDecoder d(settings(Api::OpenAI, true, true));
  EXPECT_FALSE(d.started());
  (void)d.feed(": ping\n\n" + delta(R"({"role":"assistant","content":""})"));
  EXPECT_FALSE(d.started());
  (void)d.feed(delta(R"({"content":"x"})"));
  EXPECT_TRUE(d.started());
}

TEST(WireOpenAiStream, LineOverTheLimit) {
  const std::string huge = "data: {\"x\":\"" + std::string(9u << 20, 'a') + "\"}\n\n";
  const Reply r = decode(settings(Api::OpenAI, true, true), huge);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("longer than"), std::string::npos) << r.error;
}

// Events that repeat one envelope are read through the envelope cache; the same events with a
// nonce in each (so that no envelope repeats) take the full parse. Both must agree, and an
// event that only looks like the envelope must be judged by the full parse.
std::string content_event(std::string_view created, std::string_view content_json) {
  return "data: {\"id\":\"c\",\"created\":" + std::string(created) +
         R"(,"choices":[{"index":0,"delta":{"content":)" + std::string(content_json) +
         R"(},"finish_reason":null}]})" + "\n\n";
}

TEST(WireStreamEnvelope, CachedAndUncachedEventsAgree) {
  const std::vector<std::string_view> pieces = {R"("Hello")",
                                                R"(" wor")",
                                                R"("ld")",
                                                R"("\u00e9\"q\"")",
                                                R"( "a\\b" )",
                                                R"("{\"content\":1}")",
                                                R"("\ud83d\ude00")",
                                                "\"caf\xC3\xA9\"",
                                                R"("")",
                                                R"("x")",
                                                R"("y")",
                                                R"("\n")"};
  std::string same;
  std::string unique;
  for (int round = 0; round < 3; ++round) {
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      same += content_event("1", pieces[i]);
      unique += content_event(std::to_string(round * 100 + int(i)), pieces[i]);
    }
  }
  const std::string end = R"(data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})"
                          "\n\ndata: [DONE]\n\n";
  const Settings s = settings(Api::OpenAI, true, true);
  const Reply cached = decode(s, same + end);
  ASSERT_TRUE(cached.ok) << cached.error;
  const std::string once =
      "Hello world\u00e9\"q\"a\\b{\"content\":1}\xF0\x9F\x98\x80"
      "caf\xC3\xA9xy\n";
  EXPECT_EQ(cached.content, once + once + once);
  EXPECT_EQ(describe(cached), describe(decode(s, unique + end)));
}

TEST(WireStreamEnvelope, LookalikesAreJudgedWhole) {
  const Settings s = settings(Api::OpenAI, true, true);
  std::string learnt;
  for (const char* word : {R"("a")", R"("b")", R"("c")"}) learnt += content_event("1", word);
  const std::string end = R"(data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})"
                          "\n\n";
  // Two values where one belongs: a duplicate key, caught by the full parse.
  Reply r = decode(s, learnt + content_event("1", R"("x","content":"y")") + end);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("duplicate object key"), std::string::npos) << r.error;
  // A cut that leaves the envelope's brackets unbalanced.
  r = decode(s, learnt + content_event("1", R"("x"},"more":{"y")") + end);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("stream event 4 is not valid JSON"), std::string::npos) << r.error;
  // Invalid UTF-8 in the string.
  r = decode(s, learnt + content_event("1", "\"\xFF\"") + end);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("stream event 4 is not valid JSON"), std::string::npos) << r.error;
  // Not a string: read whole, and content that is not text adds nothing.
  r = decode(s, learnt + content_event("1", "5") + content_event("1", R"("d")") + end);
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.content, "abcd");
}

TEST(WireStreamEnvelope, CacheLearnsOnlyWhatTheBytesProve) {
  const std::string first = R"({"type":"d","index":0,"delta":{"text":"ab"}})";
  detail::EnvelopeCache cache;
  EXPECT_EQ(cache.match(first), nullptr);
  cache.learn(first, parsed(first), {"delta", "text"});
  const json::Value* v = cache.match(R"({"type":"d","index":0,"delta":{"text":"x\u00e9y"}})");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(json::canonical(*v),
            "{\"delta\":{\"text\":\"x\xC3\xA9y\"},\"index\":0,\"type\":\"d\"}");
  EXPECT_EQ(cache.match(R"({"type":"d","index":1,"delta":{"text":"x"}})"), nullptr);
  EXPECT_EQ(cache.match(R"({"type":"d","index":0,"delta":{"text":7}})"), nullptr);
  EXPECT_EQ(cache.match(R"({"type":"d","index":0,"delta":{"text":"x"},"text":"y"}})"), nullptr);

  // The string written another way than the canonical form: nothing is learnt.
  const std::string escaped = R"({"delta":{"text":"\u0061"}})";
  detail::EnvelopeCache other;
  other.learn(escaped, parsed(escaped), {"delta", "text"});
  EXPECT_EQ(other.match(R"({"delta":{"text":"b"}})"), nullptr);
  // The last `"text":` in the bytes is another member's: the sentinel refutes the guess.
  const std::string decoy = R"({"delta":{"text":"q"},"other":{"text":"q"}})";
  other.learn(decoy, parsed(decoy), {"delta", "text"});
  EXPECT_EQ(other.match(R"({"delta":{"text":"q"},"other":{"text":"zz"}})"), nullptr);
}

// --- Anthropic streams ----------------------------------------------------------------------

std::string event(std::string_view name, std::string_view data) {
  return "event: " + std::string(name) + "\ndata: " + std::string(data) + "\n\n";
}

const std::string kAnthropicStream =
    event("message_start",
          R"({"type":"message_start","message":{"id":"msg_1","type":"message",)"
          R"("role":"assistant","content":[],"model":"claude","stop_reason":null,)"
          R"("usage":{"input_tokens":25,"cache_creation_input_tokens":5,"output_tokens":1}}})") +
    event("content_block_start", R"({"type":"content_block_start","index":0,)"
                                 R"("content_block":{"type":"thinking","thinking":""}})") +
    event("content_block_delta", R"({"type":"content_block_delta","index":0,)"
                                 R"("delta":{"type":"thinking_delta","thinking":"Hm"}})") +
    event("content_block_delta", R"({"type":"content_block_delta","index":0,)"
                                 R"("delta":{"type":"signature_delta","signature":"s"}})") +
    event("content_block_stop", R"({"type":"content_block_stop","index":0})") +
    event("ping", R"({"type": "ping"})") +
    event("content_block_start", R"({"type":"content_block_start","index":1,)"
                                 R"("content_block":{"type":"text","text":""}})") +
    event("content_block_delta", R"({"type":"content_block_delta","index":1,)"
                                 R"("delta":{"type":"text_delta","text":"Read"}})") +
    event("content_block_delta", R"({"type":"content_block_delta","index":1,)"
                                 R"("delta":{"type":"text_delta","text":"ing \u00e9"}})") +
    event("content_block_stop", R"({"type":"content_block_stop","index":1})") +
    event("content_block_start",
          R"({"type":"content_block_start","index":2,"content_block":{"type":"tool_use",)"
          R"("id":"toolu_1","name":"read","input":{}}})") +
    event("content_block_delta", R"({"type":"content_block_delta","index":2,)"
                                 R"("delta":{"type":"input_json_delta","partial_json":""}})") +
    event("content_block_delta",
          R"({"type":"content_block_delta","index":2,)"
          R"("delta":{"type":"input_json_delta","partial_json":"{\"path\""}})") +
    event("content_block_delta",
          R"({"type":"content_block_delta","index":2,)"
          R"("delta":{"type":"input_json_delta","partial_json":": \"a\"}"}})") +
    event("content_block_stop", R"({"type":"content_block_stop","index":2})") +
    event("content_block_start",
          R"({"type":"content_block_start","index":3,"content_block":{"type":"tool_use",)"
          R"("id":"toolu_2","name":"list","input":{}}})") +
    event("content_block_stop", R"({"type":"content_block_stop","index":3})") +
    event("message_delta", R"({"type":"message_delta","delta":{"stop_reason":"tool_use",)"
                           R"("stop_sequence":null},"usage":{"output_tokens":42}})") +
    event("message_stop", R"({"type":"message_stop"})");

TEST(WireAnthropicStream, BlocksToolInputAndUsage) {
  const Settings s = settings(Api::Anthropic, true, true);
  EXPECT_EQ(describe(decode(s, kAnthropicStream)), canon(R"({"ok": true,
    "content": "Reading é", "reasoning": "Hm", "stop_reason": "tool_use", "error": "",
    "usage": {"input_tokens": 30, "output_tokens": 42}, "tool_calls": [
      {"id": "toolu_1", "name": "read", "arguments": "{\"path\": \"a\"}"},
      {"id": "toolu_2", "name": "list", "arguments": ""}]})"));
  expect_split_invariant(s, kAnthropicStream);
}

TEST(WireAnthropicStream, TruncatedBeforeMessageStop) {
  const Settings s = settings(Api::Anthropic, true, true);
  const std::string cut = kAnthropicStream.substr(0, kAnthropicStream.rfind("event: message_stop"));
  const Reply r = decode(s, cut);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "the stream was truncated: it ended after 18 events without message_stop");
}

TEST(WireAnthropicStream, ErrorEvent) {
  const Settings s = settings(Api::Anthropic, true, true);
  StreamDecoder d(s);
  EXPECT_TRUE(
      d.feed(kAnthropicStream.substr(0, kAnthropicStream.find("event: content_block_start"))).ok());
  EXPECT_TRUE(d.started() == false);
  EXPECT_FALSE(d.feed(event("error", R"({"type":"error","error":{"type":"overloaded_error",)"
                                     R"("message":"Overloaded"}})"))
                   .ok());
  const Reply r = d.finish();
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "the server sent an error in the stream: Overloaded (overloaded_error)");
  EXPECT_NE(
      decode(s, event("message_start", "{oops")).error.find("stream event 1 is not valid JSON"),
      std::string::npos);
}

TEST(WireAnthropicStream, WholeInputInTheBlockStart) {
  const Settings s = settings(Api::Anthropic, true, true);
  const Reply r = decode(
      s, event("content_block_start",
               R"({"type":"content_block_start","index":0,"content_block":{"type":"tool_use",)"
               R"("id":"t","name":"read","input":{"path":"b"}}})") +
             event("message_stop", R"({"type":"message_stop"})"));
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].arguments, R"({"path":"b"})");
  EXPECT_TRUE(r.usage.is_null());
}

// --- empty arguments: every decoder hands them on, and the loop reads them as {} -----------------

TEST(WireEmptyArguments, EveryDecoderHandsOnNoArguments) {
  const auto expect_none = [](const Reply& r, std::size_t calls) {
    ASSERT_TRUE(r.ok) << r.error;
    ASSERT_EQ(r.tool_calls.size(), calls) << describe(r);
    for (const ToolCallRequest& c : r.tool_calls) {
      EXPECT_TRUE(model::no_arguments(c.arguments)) << describe(r);
      EXPECT_TRUE(c.malformed.empty()) << describe(r);
    }
  };
  // OpenAI, not streamed: "" as forge sees it, whitespace, null, and no member.
  expect_none(parse_body(settings(Api::OpenAI), R"({"choices": [{"index": 0, "message": {
    "role": "assistant", "content": null, "tool_calls": [
      {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": ""}},
      {"id": "c2", "type": "function", "function": {"name": "ls", "arguments": " \n "}},
      {"id": "c3", "type": "function", "function": {"name": "ls", "arguments": null}},
      {"id": "c4", "type": "function", "function": {"name": "ls"}}]},
    "finish_reason": "tool_calls"}]})"),
              4);
  // OpenAI, streamed: empty pieces, a whitespace piece, no arguments.
  expect_none(decode(settings(Api::OpenAI, true, true),
                     delta(R"({"tool_calls":[{"index":0,"id":"c1","type":"function",)"
                           R"("function":{"name":"ls","arguments":""}}]})") +
                         delta(R"({"tool_calls":[{"index":0,"function":{"arguments":""}}]})") +
                         delta(R"({"tool_calls":[{"index":1,"id":"c2","type":"function",)"
                               R"("function":{"name":"ls","arguments":" "}}]})") +
                         delta(R"({"tool_calls":[{"index":2,"id":"c3","type":"function",)"
                               R"("function":{"name":"ls"}}]})") +
                         delta("{}", "\"tool_calls\"") + "data: [DONE]\n\n"),
              3);
  // Anthropic, not streamed: text input (some servers send it), and no input.
  expect_none(parse_body(settings(Api::Anthropic), R"({"type": "message", "content": [
      {"type": "tool_use", "id": "t1", "name": "ls", "input": ""},
      {"type": "tool_use", "id": "t2", "name": "ls", "input": "\t"},
      {"type": "tool_use", "id": "t3", "name": "ls"}],
    "stop_reason": "tool_use", "usage": {"input_tokens": 1, "output_tokens": 1}})"),
              3);
  // Anthropic, streamed: an empty and a whitespace partial_json, and none.
  const auto use = [](int index, std::string_view partial) {
    const std::string i = std::to_string(index);
    std::string out =
        event("content_block_start", R"({"type":"content_block_start","index":)" + i +
                                         R"(,"content_block":{"type":"tool_use","id":"t)" + i +
                                         R"(","name":"ls","input":{}}})");
    if (!partial.empty()) {
      out += event("content_block_delta",
                   R"({"type":"content_block_delta","index":)" + i +
                       R"(,"delta":{"type":"input_json_delta","partial_json":)" +
                       std::string(partial) + "}}");
    }
    return out + event("content_block_stop", R"({"type":"content_block_stop","index":)" + i + "}");
  };
  expect_none(decode(settings(Api::Anthropic, true, true),
                     use(0, R"("")") + use(1, R"(" \r\n")") + use(2, "") +
                         event("message_stop", R"({"type":"message_stop"})")),
              3);
}

// --- llama.cpp salvage ----------------------------------------------------------------------

constexpr std::string_view kLlamaBody =
    R"({"error": {"code": 500, "message": "Failed to parse input at pos 37: )"
    R"(<tool_call>\n{\"name\": \"read\", \"arguments\": {\"path\": \"a: b\"}}", )"
    R"("type": "server_error"}})";

TEST(WireSalvage, LlamaCppParseFailureKeepsTheRawOutput) {
  const std::optional<Reply> r = salvage_error(settings(Api::OpenAI), 500, kLlamaBody);
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->ok);
  EXPECT_EQ(r->content, "<tool_call>\n{\"name\": \"read\", \"arguments\": {\"path\": \"a: b\"}}");
  EXPECT_EQ(r->stop_reason, "salvaged");
  EXPECT_TRUE(r->tool_calls.empty());
}

TEST(WireSalvage, AnythingElseIsNotSalvaged) {
  const Settings openai = settings(Api::OpenAI);
  EXPECT_FALSE(salvage_error(openai, 400, kLlamaBody).has_value());
  EXPECT_FALSE(salvage_error(openai, 503, kLlamaBody).has_value());
  EXPECT_FALSE(salvage_error(settings(Api::Anthropic), 500, kLlamaBody).has_value());
  for (std::string_view body : {
           R"({"error": {"message": "Internal error at pos 3: x"}})",
           R"({"error": {"message": "Failed to parse input: no position"}})",
           R"({"error": {"message": "Failed to parse input at pos x: y"}})",
           R"({"error": {"message": "Failed to parse input at pos 3"}})",
           R"({"error": {"message": "Failed to parse input at pos 3: "}})",
           R"({"error": "Failed to parse input at pos 3: x"})",
           R"({"message": "Failed to parse input at pos 3: x"})",
           "Failed to parse input at pos 3: x",
           R"({"error": {"message": "Failed to parse input at pos 3: x"})",
       }) {
    EXPECT_FALSE(salvage_error(openai, 500, body).has_value()) << body;
  }
}

// --- Error summaries ------------------------------------------------------------------------

TEST(WireDescribeError, ProviderShapes) {
  EXPECT_EQ(describe_error(429, R"({"error": {"message": "Rate limit reached",
              "type": "requests", "param": null, "code": "rate_limit_exceeded"}})"),
            "HTTP 429: Rate limit reached (requests)");
  EXPECT_EQ(describe_error(429, R"({"error": {"message": "Slow down", "type": null,
              "code": "rate_limit_exceeded"}})"),
            "HTTP 429: Slow down (rate_limit_exceeded)");
  EXPECT_EQ(describe_error(529, R"({"type": "error", "error": {"type": "overloaded_error",
              "message": "Overloaded"}, "request_id": "req_1"})"),
            "HTTP 529: Overloaded (overloaded_error)");
  EXPECT_EQ(describe_error(404, R"({"error": "model \"x\" not found, try pulling it first"})"),
            "HTTP 404: model \"x\" not found, try pulling it first");
  EXPECT_EQ(describe_error(422, R"({"detail": "bad field"})"), "HTTP 422: bad field");
  EXPECT_EQ(describe_error(400, R"({"object": "error", "message": "max_tokens is too large",
              "type": "BadRequestError", "param": null, "code": 400})"),
            "HTTP 400: max_tokens is too large (BadRequestError)");
  // JSON of another shape may echo the request: it is not quoted.
  EXPECT_EQ(describe_error(422, R"({"detail": [{"loc": ["body"], "input": "my prompt"}]})"),
            "HTTP 422");
  EXPECT_EQ(describe_error(500, "{\"error\": truncated"), "HTTP 500: {\"error\": truncated");
  EXPECT_EQ(describe_error(503, ""), "HTTP 503");
  EXPECT_EQ(describe_error(502, "<html>\r\n<head><title>502 Bad Gateway</title></head>\n</html>"),
            "HTTP 502: <html>  <head><title>502 Bad Gateway</title></head> </html>");
}

TEST(WireDescribeError, SecretsAreNotRepeated) {
  const std::string key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789";
  const std::string d = describe_error(
      401, R"({"error": {"message": "Incorrect API key provided: )" + key +
               R"(.", "type": "invalid_request_error", "code": "invalid_api_key"}})");
  EXPECT_EQ(d.find(key.substr(0, 24)), std::string::npos) << d;
  EXPECT_NE(d.find("[REDACTED]"), std::string::npos) << d;
  EXPECT_NE(d.find("(invalid_request_error)"), std::string::npos) << d;
}

void expect_bounded(const std::string& d) {
  EXPECT_LE(d.size(), 300u);
  EXPECT_TRUE(text::valid_utf8(d));
  for (char c : d) EXPECT_GE(static_cast<unsigned char>(c), 0x20) << "control byte in " << d;
}

TEST(WireDescribeError, BoundedOnMegabyteBodies) {
  const std::string text(1u << 20, 'x');
  const std::string d = describe_error(500, text);
  expect_bounded(d);
  EXPECT_EQ(d, "HTTP 500: " + std::string(117, 'x') + "...");

  std::string noisy;
  for (int i = 0; noisy.size() < (1u << 20); ++i) noisy += "\x01\n\xFF\xC3(\xE2\x82\xC2\x85ok ";
  expect_bounded(describe_error(500, noisy));

  const std::string json_body = R"({"error": {"message": ")" + std::string(1u << 20, 'm') +
                                R"(", "type": ")" + std::string(1u << 20, 't') + R"("}})";
  const std::string j = describe_error(400, json_body);
  expect_bounded(j);
  EXPECT_TRUE(j.starts_with("HTTP 400: mmm")) << j;
  EXPECT_NE(j.find("(ttt"), std::string::npos) << j;

  // Every byte value at every position of a short body, cut anywhere.
  for (int b = 0; b < 256; ++b) {
    expect_bounded(describe_error(-1, std::string(500, static_cast<char>(b))));
  }
}

TEST(WireQuote, CutAtACodePointAndMarked) {
  const std::string euros = std::string(300, 'a').substr(0, 196) + "\xE2\x82\xAC\xE2\x82\xAC";
  const std::string q = detail::quote(euros);
  EXPECT_LE(q.size(), detail::kMaxQuote);
  EXPECT_TRUE(text::valid_utf8(q));
  EXPECT_EQ(q, std::string(196, 'a') + "...");
  EXPECT_EQ(detail::quote("short\ttext\x7F"), "short text ");
  EXPECT_EQ(detail::quote("\xC2\x85 next"), "   next");  // U+0085, a C1 line break
  EXPECT_EQ(detail::quote(std::string(200, 'z')), std::string(200, 'z'));
}

// --- tool calls without a usable name --------------------------------------------------------

// Each way a call can lack a name, as the `name` member's JSON text (empty: no member) and what
// the decoder says of it.
struct BadName {
  std::string_view member;
  std::string_view malformed;
};
constexpr BadName kBadNames[] = {{R"("name":"",)", "an empty name"},
                                 {"", "no name"},
                                 {R"("name":null,)", "a null name"},
                                 {R"("name":7,)", "a name that is not a string"}};

// The one call every decoder below must return for a call with `bad`, beside a good call.
void expect_refused(const Reply& r, std::string_view malformed) {
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.tool_calls.size(), 2u);
  EXPECT_EQ(r.tool_calls[0].name, "");
  EXPECT_EQ(r.tool_calls[0].malformed, malformed);
  EXPECT_EQ(r.tool_calls[1].name, "read");
  EXPECT_EQ(r.tool_calls[1].malformed, "");
}

TEST(WireBadToolName, OpenAiBody) {
  const Settings s = settings(Api::OpenAI);
  const auto body = [](std::string_view first) {
    return R"({"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[)" +
           std::string(first) +
           R"(,{"id":"c2","type":"function","function":{"name":"read","arguments":"{}"}}]},)"
           R"("finish_reason":"tool_calls"}]})";
  };
  for (const BadName& b : kBadNames) {
    expect_refused(parse_body(s, body(R"({"id":"c1","type":"function","function":{)" +
                                      std::string(b.member) + R"("arguments":"{}"}})")),
                   b.malformed);
  }
  expect_refused(parse_body(s, body("{}")), "no name");
}

TEST(WireBadToolName, OpenAiStream) {
  const Settings s = settings(Api::OpenAI, true, true);
  const auto stream = [](std::string_view first) {
    return delta(R"({"role":"assistant","content":null,"tool_calls":[)" + std::string(first) +
                 "]}") +
           delta(R"({"tool_calls":[{"index":1,"id":"c2","type":"function",)"
                 R"("function":{"name":"read","arguments":"{}"}}]})") +
           delta("{}", "\"tool_calls\"") + "data: [DONE]\n\n";
  };
  for (const BadName& b : kBadNames) {
    const std::string text = stream(R"({"index":0,"id":"c1","type":"function","function":{)" +
                                    std::string(b.member) + R"("arguments":"{}"}})");
    expect_refused(decode(s, text), b.malformed);
    expect_split_invariant(s, text);
  }
  expect_refused(decode(s, stream("{}")), "no name");
  // A later delta naming the call makes it whole: the name may come in any of its deltas.
  Reply late =
      decode(s, delta(R"({"tool_calls":[{"index":0,"id":"c1","function":{"name":null}}]})") +
                    delta(R"({"tool_calls":[{"index":0,"function":{"name":"read"}}]})") +
                    delta("{}", "\"tool_calls\""));
  ASSERT_EQ(late.tool_calls.size(), 1u);
  EXPECT_EQ(late.tool_calls[0].name, "read");
  EXPECT_EQ(late.tool_calls[0].malformed, "");
}

TEST(WireBadToolName, AnthropicBody) {
  const Settings s = settings(Api::Anthropic);
  const auto body = [](std::string_view first) {
    return R"({"type":"message","content":[)" + std::string(first) +
           R"(,{"type":"tool_use","id":"t2","name":"read","input":{}}],"stop_reason":"tool_use"})";
  };
  for (const BadName& b : kBadNames) {
    expect_refused(parse_body(s, body(R"({"type":"tool_use","id":"t1",)" + std::string(b.member) +
                                      R"("input":{}})")),
                   b.malformed);
  }
  // The Anthropic shape of an empty call: a tool_use block with nothing else.
  expect_refused(parse_body(s, body(R"({"type":"tool_use"})")), "no name");
}

TEST(WireBadToolName, AnthropicStream) {
  const Settings s = settings(Api::Anthropic, true, true);
  const auto stream = [](std::string_view first) {
    return event("content_block_start", R"({"type":"content_block_start","index":0,)"
                                        R"("content_block":)" +
                                            std::string(first) + "}") +
           event("content_block_stop", R"({"type":"content_block_stop","index":0})") +
           event("content_block_start",
                 R"({"type":"content_block_start","index":1,"content_block":{"type":"tool_use",)"
                 R"("id":"t2","name":"read","input":{}}})") +
           event("message_stop", R"({"type":"message_stop"})");
  };
  for (const BadName& b : kBadNames) {
    const std::string text =
        stream(R"({"type":"tool_use","id":"t1",)" + std::string(b.member) + R"("input":{}})");
    expect_refused(decode(s, text), b.malformed);
    expect_split_invariant(s, text);
  }
  expect_refused(decode(s, stream(R"({"type":"tool_use"})")), "no name");
}

// --- the response's own model and id ---------------------------------------------------------

TEST(WireResponseIdentity, BodiesAndStreamsOfBothApis) {
  Reply r = parse_body(settings(Api::OpenAI), R"({"id": "chatcmpl-9", "model": "gpt-4o-2024-08-06",
    "choices": [{"index": 0, "message": {"content": "Hi."}, "finish_reason": "stop"}]})");
  EXPECT_EQ(r.response_model, "gpt-4o-2024-08-06");
  EXPECT_EQ(r.response_id, "chatcmpl-9");
  r = parse_body(settings(Api::Anthropic), R"({"id": "msg_1", "model": "claude-x",
    "type": "message", "content": [{"type": "text", "text": "Hi."}], "stop_reason": "end_turn"})");
  EXPECT_EQ(r.response_model, "claude-x");
  EXPECT_EQ(r.response_id, "msg_1");
  // Streams: every chunk repeats them (OpenAI), message_start carries them (Anthropic); any split.
  const std::string openai =
      delta(R"({"content":"A"})") + delta("{}", "\"stop\"") + "data: [DONE]\n\n";
  for (std::size_t i = 0; i <= openai.size(); ++i) {
    const Reply split =
        decode(settings(Api::OpenAI, true, true),
               {std::string_view(openai).substr(0, i), std::string_view(openai).substr(i)});
    ASSERT_EQ(split.response_model, "m");
    ASSERT_EQ(split.response_id, "chatcmpl-1");
  }
  r = decode(settings(Api::Anthropic, true, true), kAnthropicStream);
  EXPECT_EQ(r.response_model, "claude");
  EXPECT_EQ(r.response_id, "msg_1");
  // None given, none recorded; one that is not a string is not taken; a long one is cut.
  r = parse_body(settings(Api::OpenAI),
                 R"({"model": 7, "choices": [{"message": {"content": ""}}]})");
  EXPECT_EQ(r.response_model, "");
  EXPECT_EQ(r.response_id, "");
  r = parse_body(settings(Api::OpenAI), R"({"id": ")" + std::string(1000, 'x') +
                                            R"(", "choices": [{"message": {"content": ""}}]})");
  EXPECT_LE(r.response_id.size(), 256u);
  EXPECT_EQ(r.response_id.substr(0, 10), std::string(10, 'x'));
}

}  // namespace
}  // namespace mf::model::wire
