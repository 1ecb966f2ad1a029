#include "mf/runtime/rescue.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "mf/diag/codes.hpp"
#include "mf/json/canonical.hpp"

namespace mf::runtime {
namespace {

namespace codes = diag::codes;

const std::vector<std::string> kTools = {"read", "write", "web-search"};

// The canonical JSON of the rescue, or "null": one string states every call, in order.
std::string rescued(std::string_view text, const std::vector<std::string>& tools = kTools) {
  const std::optional<Rescue> r = rescue_tool_calls(text, tools);
  return r ? json::canonical(to_json(*r)) : "null";
}

std::string one(std::string_view format, std::string_view name, std::string_view args) {
  return std::string(R"({"calls":[{"arguments":)") + std::string(args) + R"(,"name":")" +
         std::string(name) + R"("}],"format":")" + std::string(format) + "\"}";
}

// --- JSON objects ---------------------------------------------------------------------------

TEST(RescueJson, BareObjectInEverySpelling) {
  const std::string read_a = one("json", "read", R"({"path":"a"})");
  EXPECT_EQ(rescued(R"({"tool":"read","args":{"path":"a"}})"), read_a);
  EXPECT_EQ(rescued(R"({"name":"read","arguments":{"path":"a"}})"), read_a);
  EXPECT_EQ(rescued(R"({"name":"read","parameters":{"path":"a"}})"), read_a);
  EXPECT_EQ(rescued(R"({"args":{"path":"a"},"tool":"read"})"), read_a);
  EXPECT_EQ(rescued(" \n{ \"tool\" : \"read\" , \"args\" : { \"path\" : \"a\" } }\n"), read_a);
}

TEST(RescueJson, EmbeddedInProse) {
  EXPECT_EQ(rescued(R"(I will read it: {"name":"read","arguments":{"path":"a"}}. Done.)"),
            one("json", "read", R"({"path":"a"})"));
}

TEST(RescueJson, FencedBlock) {
  EXPECT_EQ(rescued("Calling:\n```json\n{\"tool\":\"read\",\"args\":{\"path\":\"a\"}}\n```\n"),
            one("fenced_json", "read", R"({"path":"a"})"));
  EXPECT_EQ(rescued("```\n{\"tool\":\"read\",\"args\":{}}\n```"), one("fenced_json", "read", "{}"));
}

TEST(RescueJson, FencedOnlyWhenEveryCallIsFenced) {
  EXPECT_EQ(
      rescued("```json\n{\"tool\":\"read\",\"args\":{}}\n```\n{\"tool\":\"write\",\"args\":{}}"),
      R"({"calls":[{"arguments":{},"name":"read"},{"arguments":{},"name":"write"}],)"
      R"("format":"json"})");
}

TEST(RescueJson, SeveralObjectsInOrder) {
  EXPECT_EQ(rescued(R"({"tool":"write","args":{"n":1}} then {"tool":"read","args":{"n":2}})"
                    R"({"tool":"write","args":{"n":3}})"),
            R"({"calls":[{"arguments":{"n":1},"name":"write"},{"arguments":{"n":2},"name":"read"},)"
            R"({"arguments":{"n":3},"name":"write"}],"format":"json"})");
}

TEST(RescueJson, ArrayOfCalls) {
  EXPECT_EQ(
      rescued(R"([{"name":"read","arguments":{"path":"a"}}, {"name":"write","arguments":{}}])"),
      R"({"calls":[{"arguments":{"path":"a"},"name":"read"},{"arguments":{},"name":"write"}],)"
      R"("format":"json"})");
}

TEST(RescueJson, ArrayWithAnElementThatIsNotACallIsNoBatch) {
  EXPECT_EQ(rescued(R"([{"name":"read","arguments":{}}, {"name":"delete","arguments":{}}])"),
            "null");
  EXPECT_EQ(rescued(R"([{"name":"read","arguments":{}}, 3])"), "null");
}

TEST(RescueJson, AbsentArgumentsAreEmpty) {
  EXPECT_EQ(rescued(R"({"name":"read"})"), one("json", "read", "{}"));
}

TEST(RescueJson, ArgumentsAsAStringHoldingAnObject) {
  EXPECT_EQ(rescued(R"({"name":"read","arguments":"{\"path\":\"a\"}"})"),
            one("json", "read", R"({"path":"a"})"));
  EXPECT_EQ(rescued(R"({"name":"read","arguments":"[1]"})"), "null");
  EXPECT_EQ(rescued(R"({"name":"read","arguments":"a.txt"})"), "null");
}

TEST(RescueJson, ArgumentsThatAreNotAnObjectAreNotRescued) {
  for (const char* args : {R"("a.txt")", "[1]", "null", "3", "true"}) {
    EXPECT_EQ(rescued(std::string(R"({"tool":"read","args":)") + args + "}"), "null") << args;
  }
}

TEST(RescueJson, IdAndFunctionTypeAreAllowed) {
  EXPECT_EQ(rescued(R"({"type":"function","name":"read","parameters":{}})"),
            one("json", "read", "{}"));
  EXPECT_EQ(rescued(R"({"id":"call_1","name":"read","arguments":{}})"), one("json", "read", "{}"));
  EXPECT_EQ(rescued(R"({"type":"tool_use","name":"read","parameters":{}})"), "null");
  EXPECT_EQ(rescued(R"({"id":7,"name":"read","arguments":{}})"), "null");
}

TEST(RescueJson, AnEchoedToolDefinitionIsNotACall) {
  EXPECT_EQ(rescued(R"({"name":"read","description":"Reads a file","parameters":)"
                    R"({"type":"object","properties":{"path":{"type":"string"}}}})"),
            "null");
}

TEST(RescueJson, AmbiguousSpellingsAreNotRescued) {
  EXPECT_EQ(rescued(R"({"tool":"read","name":"write","args":{}})"), "null");
  EXPECT_EQ(rescued(R"({"tool":"read","name":"read","args":{}})"), "null");
  EXPECT_EQ(rescued(R"({"tool":"read","args":{},"arguments":{}})"), "null");
}

TEST(RescueJson, ACallNestedInOtherJsonIsData) {
  EXPECT_EQ(rescued(R"({"thought":"x","action":{"tool":"read","args":{}}})"), "null");
  // ...and a call's arguments are never searched for calls.
  EXPECT_EQ(rescued(R"({"tool":"write","args":{"body":{"tool":"read","args":{}}}})"),
            one("json", "write", R"({"body":{"args":{},"tool":"read"}})"));
  EXPECT_EQ(rescued(R"({"tool":"delete","args":{"then":{"tool":"read","args":{}}}})"), "null");
}

TEST(RescueJson, BracesAndQuotesInsideStrings) {
  EXPECT_EQ(rescued(R"({"tool":"write","args":{"content":"a } b { \" ] ["}})"),
            one("json", "write", R"({"content":"a } b { \" ] ["})"));
  EXPECT_EQ(rescued(R"(x {"tool":"write","args":{"c":"}}}}"}} {"tool":"read","args":{"c":"{{"}})"),
            R"({"calls":[{"arguments":{"c":"}}}}"},"name":"write"},{"arguments":{"c":"{{"},)"
            R"("name":"read"}],"format":"json"})");
}

TEST(RescueJson, FencesInsideStringValuesAreKept) {
  const std::string text =
      "```json\n{\"tool\":\"write\",\"args\":{\"content\":\"```json\\n{}\\n```\"}}\n```";
  EXPECT_EQ(rescued(text), one("fenced_json", "write", R"({"content":"```json\n{}\n```"})"));
}

TEST(RescueJson, MalformedJsonIsSkippedAndTheWalkGoesOn) {
  EXPECT_EQ(rescued(R"({"tool":"read","args":{"path":"a"})"), "null");
  EXPECT_EQ(rescued(R"({"tool":"read","args":{"path":'a'}})"), "null");
  EXPECT_EQ(rescued(R"({"tool":"read","args":{"n":NaN}})"), "null");
  EXPECT_EQ(rescued(R"({"tool":"read","args":{"a":1,"a":2}})"), "null");  // duplicate key
  EXPECT_EQ(rescued(R"({"tool":"read","args":{"path":"a"},} {"tool":"write","args":{}})"),
            one("json", "write", "{}"));
  // A malformed outer object with a valid call inside it: the call is found.
  EXPECT_EQ(rescued(R"({ I think: {"tool":"read","args":{}} })"), one("json", "read", "{}"));
}

// --- names ----------------------------------------------------------------------------------

TEST(RescueNames, UnknownToolsAreNotRescuedInAnyFormat) {
  for (const char* text : {
           R"({"tool":"delete","args":{}})",
           R"(delete[ARGS]{})",
           "<function=delete></function>",
           R"([TOOL_CALLS]delete{})",
           R"([TOOL_CALLS][{"name":"delete","arguments":{}}])",
       }) {
    EXPECT_EQ(rescued(text), "null") << text;
  }
}

TEST(RescueNames, NoKnownToolsNoRescue) {
  EXPECT_EQ(rescued(R"({"tool":"read","args":{}})", {}), "null");
}

TEST(RescueNames, ExactBytesOnly) {
  EXPECT_EQ(rescued(R"({"tool":"Read","args":{}})"), "null");
  EXPECT_EQ(rescued(R"({"tool":" read","args":{}})"), "null");
  EXPECT_EQ(rescued("{\"tool\":\"r\xD0\xB5"
                    "ad\",\"args\":{}}"),
            "null");  // Cyrillic e
  EXPECT_EQ(rescued("{\"tool\":\"re\\u0061d\",\"args\":{}}"), one("json", "read", "{}"));
}

TEST(RescueNames, AHyphenatedNameIsOneName) {
  const std::vector<std::string> only_search = {"search"};
  EXPECT_EQ(rescued(R"(web-search[ARGS]{"q":"x"})", only_search), "null");
  EXPECT_EQ(rescued(R"([TOOL_CALLS]web-search{"q":"x"})", only_search), "null");
  EXPECT_EQ(rescued(R"(web-search[ARGS]{"q":"x"})"), one("bracket", "web-search", R"({"q":"x"})"));
}

TEST(RescueNames, ANameGluedToALongerWordIsNotAName) {
  EXPECT_EQ(rescued("\xC3\xA9read[ARGS]{}"), "null");  // "éread"
  EXPECT_EQ(rescued("unread[ARGS]{}"), "null");
  EXPECT_EQ(rescued("(read[ARGS]{})"), one("bracket", "read", "{}"));
}

// --- name[ARGS]{...} ------------------------------------------------------------------------

TEST(RescueBracket, OneCall) {
  EXPECT_EQ(rescued(R"(Let me look. read[ARGS]{"path":"a"})"),
            one("bracket", "read", R"({"path":"a"})"));
  EXPECT_EQ(rescued("read[ARGS] \n{}"), one("bracket", "read", "{}"));
}

TEST(RescueBracket, TwoCallsOneAfterTheOther) {
  EXPECT_EQ(rescued(R"(read[ARGS]{"path":"a"} write[ARGS]{"path":"b"})"),
            R"({"calls":[{"arguments":{"path":"a"},"name":"read"},)"
            R"({"arguments":{"path":"b"},"name":"write"}],"format":"bracket"})");
  EXPECT_EQ(rescued(R"(read[ARGS]{"path":"a"}read[ARGS]{"path":"}"})"),
            R"({"calls":[{"arguments":{"path":"a"},"name":"read"},)"
            R"({"arguments":{"path":"}"},"name":"read"}],"format":"bracket"})");
}

TEST(RescueBracket, ArgumentsMustBeAnObject) {
  EXPECT_EQ(rescued(R"(read[ARGS]["a"])"), "null");
  EXPECT_EQ(rescued(R"(read[ARGS]"a")"), "null");
  EXPECT_EQ(rescued(R"(read[ARGS]{"path":})"), "null");
  EXPECT_EQ(rescued(R"(read [ARGS]{})"), "null");
}

// --- Qwen XML -------------------------------------------------------------------------------

TEST(RescueQwenXml, OneCallWithAndWithoutTheWrapper) {
  const std::string expected = one("qwen_xml", "read", R"({"path":"src/a.cpp"})");
  EXPECT_EQ(rescued("<tool_call>\n<function=read>\n<parameter=path>\nsrc/a.cpp\n</parameter>\n"
                    "</function>\n</tool_call>"),
            expected);
  EXPECT_EQ(rescued("<function=read><parameter=path>src/a.cpp</parameter></function>"), expected);
}

TEST(RescueQwenXml, ValuesThatAreJsonTakeThatValue) {
  EXPECT_EQ(rescued("<function=write>"
                    "<parameter=n>42</parameter>"
                    "<parameter=flag> true </parameter>"
                    "<parameter=obj>{\"a\":[1,2]}</parameter>"
                    "<parameter=quoted>\"42\"</parameter>"
                    "<parameter=nothing>null</parameter>"
                    "<parameter=text>hello world</parameter>"
                    "<parameter=almost>{\"a\":</parameter>"
                    "<parameter=empty></parameter>"
                    "</function>"),
            one("qwen_xml", "write",
                R"({"almost":"{\"a\":","empty":"","flag":true,"n":42,"nothing":null,)"
                R"("obj":{"a":[1,2]},"quoted":"42","text":"hello world"})"));
}

TEST(RescueQwenXml, OnlyOneLayoutNewlineIsStrippedEachSide) {
  EXPECT_EQ(rescued("<function=write><parameter=c>\n\nx\n\n</parameter></function>"),
            one("qwen_xml", "write", R"({"c":"\nx\n"})"));
}

TEST(RescueQwenXml, ValuesKeepTagsFencesAndBraces) {
  EXPECT_EQ(rescued("<function=write><parameter=c><think>a</think> ```json\n{\"x\": 1 }"
                    "</parameter></function>"),
            one("qwen_xml", "write", R"({"c":"<think>a</think> ```json\n{\"x\": 1 }"})"));
}

TEST(RescueQwenXml, NoParameters) {
  EXPECT_EQ(rescued("<function=read></function>"), one("qwen_xml", "read", "{}"));
}

TEST(RescueQwenXml, TwoCallsInOrder) {
  EXPECT_EQ(rescued("<function=read><parameter=p>a</parameter></function>\n"
                    "<function=write><parameter=p>b</parameter></function>"),
            R"({"calls":[{"arguments":{"p":"a"},"name":"read"},)"
            R"({"arguments":{"p":"b"},"name":"write"}],"format":"qwen_xml"})");
}

TEST(RescueQwenXml, AMissingClosingTagSpoilsOnlyItsBlock) {
  EXPECT_EQ(rescued("<function=read><parameter=p>a</function>"), "null");
  EXPECT_EQ(rescued("<function=read><parameter=p>a<parameter=q>b</parameter></function>"), "null");
  EXPECT_EQ(rescued("<function=read><parameter=p>a</parameter>"), "null");
  EXPECT_EQ(rescued("<function=read><parameter=p>a\n<function=write><parameter=p>b</parameter>"
                    "</function>"),
            one("qwen_xml", "write", R"({"p":"b"})"));
}

TEST(RescueQwenXml, MalformedBlocksAreNotRescued) {
  EXPECT_EQ(rescued("<function=read>text<parameter=p>a</parameter></function>"), "null");
  EXPECT_EQ(rescued("<function=read><parameter=p>a</parameter><parameter=p>b</parameter>"
                    "</function>"),
            "null");  // duplicate parameter
  EXPECT_EQ(rescued("<function=read><parameter=>a</parameter></function>"), "null");
  EXPECT_EQ(rescued("<function= read><parameter=p>a</parameter></function>"), "null");
  EXPECT_EQ(rescued("<function=read><parameter=p>\xFF</parameter></function>"), "null");
}

// --- Mistral --------------------------------------------------------------------------------

TEST(RescueMistral, NameThenArguments) {
  EXPECT_EQ(rescued(R"([TOOL_CALLS]read{"path":"a"})"), one("mistral", "read", R"({"path":"a"})"));
  EXPECT_EQ(rescued("[TOOL_CALLS] read \n{\"path\":\"a\"}"),
            one("mistral", "read", R"({"path":"a"})"));
  EXPECT_EQ(rescued(R"([TOOL_CALLS]read[ARGS]{"path":"a"})"),
            one("mistral", "read", R"({"path":"a"})"));
}

TEST(RescueMistral, ArrayOfCalls) {
  EXPECT_EQ(
      rescued(R"([TOOL_CALLS][{"name":"read","arguments":{"path":"a"},"id":"abc123def"},)"
              R"({"name":"write","arguments":{}}])"),
      R"({"calls":[{"arguments":{"path":"a"},"name":"read"},{"arguments":{},"name":"write"}],)"
      R"("format":"mistral"})");
  EXPECT_EQ(
      rescued(R"([TOOL_CALLS][{"name":"read","arguments":{}},{"name":"nope","arguments":{}}])"),
      "null");
}

TEST(RescueMistral, SeveralMarkers) {
  EXPECT_EQ(rescued(R"([TOOL_CALLS]read{"p":1}[TOOL_CALLS]write{"p":"}"})"),
            R"({"calls":[{"arguments":{"p":1},"name":"read"},{"arguments":{"p":"}"},)"
            R"("name":"write"}],"format":"mistral"})");
}

TEST(RescueMistral, ArgumentsMustBeAnObject) {
  EXPECT_EQ(rescued(R"([TOOL_CALLS]read["a"])"), "null");
  EXPECT_EQ(rescued(R"([TOOL_CALLS]read)"), "null");
  EXPECT_EQ(rescued(R"([TOOL_CALLS]read{"a":)"), "null");
}

// --- order ----------------------------------------------------------------------------------

TEST(RescueOrder, EarlierFormatsWin) {
  const std::string json = R"({"tool":"write","args":{}})";
  const std::string bracket = R"(read[ARGS]{"p":1})";
  const std::string qwen = "<function=read><parameter=p>2</parameter></function>";
  const std::string mistral = R"([TOOL_CALLS]read{"p":3})";
  EXPECT_EQ(rescued(mistral + qwen + bracket + json), one("json", "write", "{}"));
  EXPECT_EQ(rescued(mistral + qwen + bracket), one("bracket", "read", R"({"p":1})"));
  EXPECT_EQ(rescued(mistral + qwen), one("qwen_xml", "read", R"({"p":2})"));
  EXPECT_EQ(rescued(mistral), one("mistral", "read", R"({"p":3})"));
}

TEST(RescueOrder, AFormsArgumentsAreNotAJsonCall) {
  // The argument objects below look like JSON calls; they belong to their own form.
  EXPECT_EQ(rescued(R"(read[ARGS]{"tool":"write","args":{}})"),
            one("bracket", "read", R"({"args":{},"tool":"write"})"));
  EXPECT_EQ(rescued(R"([TOOL_CALLS][{"name":"read","arguments":{}}])"),
            one("mistral", "read", "{}"));
  EXPECT_EQ(rescued("<function=read><parameter=p>{\"tool\":\"write\",\"args\":{}}</parameter>"
                    "</function>"),
            one("qwen_xml", "read", R"({"p":{"args":{},"tool":"write"}})"));
}

// --- think blocks ---------------------------------------------------------------------------

TEST(RescueThink, CallsInsideReasoningAreNotRescued) {
  EXPECT_EQ(rescued(R"(<think>maybe {"tool":"read","args":{}}</think>)"), "null");
  EXPECT_EQ(rescued(R"(<think>read[ARGS]{}</think>No call.)"), "null");
  EXPECT_EQ(rescued(R"([THINK]{"tool":"read","args":{}}[/THINK])"), "null");
}

TEST(RescueThink, TheCallAfterReasoningIsRescuedOnce) {
  EXPECT_EQ(rescued(R"(<think>I should call {"tool":"read","args":{"path":"a"}}.</think>)"
                    R"({"tool":"read","args":{"path":"a"}})"),
            one("json", "read", R"({"path":"a"})"));
  EXPECT_EQ(rescued(R"(<think>x</think>a<think>y</think>{"tool":"read","args":{}})"),
            one("json", "read", "{}"));
}

TEST(RescueThink, AnUnclosedBlockRunsToTheEnd) {
  EXPECT_EQ(rescued(R"(<think>let me try {"tool":"read","args":{}})"), "null");
  EXPECT_EQ(rescued(R"({"tool":"write","args":{}} <think>and {"tool":"read","args":{}})"),
            one("json", "write", "{}"));
}

TEST(RescueThink, AClosingTagWithoutAnOpeningOneEndsReasoningThatBeganInThePrompt) {
  EXPECT_EQ(rescued(R"(try {"tool":"read","args":{}} ... </think>{"tool":"write","args":{}})"),
            one("json", "write", "{}"));
  EXPECT_EQ(rescued(R"(```json {"tool":"read","args":{}} </think>{"tool":"write","args":{}})"),
            one("json", "write", "{}"));
}

TEST(RescueThink, TagsInsideArgumentsAreContent) {
  EXPECT_EQ(rescued(R"({"tool":"write","args":{"c":"<think>x</think>y"}})"),
            one("json", "write", R"({"c":"<think>x</think>y"})"));
  EXPECT_EQ(rescued(R"({"tool":"write","args":{"c":"</think>"}})"),
            one("json", "write", R"({"c":"</think>"})"));
  EXPECT_EQ(rescued(R"({"tool":"write","args":{"c":"<think>"}} {"tool":"read","args":{}})"),
            R"({"calls":[{"arguments":{"c":"<think>"},"name":"write"},)"
            R"({"arguments":{},"name":"read"}],"format":"json"})");
}

// --- limits and adversarial inputs ----------------------------------------------------------

TEST(RescueLimits, TextsOverOneMebibyteAreNotRescued) {
  const std::string call = R"({"tool":"read","args":{}})";
  std::string text = call + std::string((1u << 20) - call.size(), ' ');
  EXPECT_EQ(rescued(text), one("json", "read", "{}"));
  text.push_back(' ');
  EXPECT_EQ(rescued(text), "null");
}

std::string repeat(std::string_view s, std::size_t total_bytes) {
  std::string out;
  out.reserve(total_bytes + s.size());
  while (out.size() + s.size() <= total_bytes) out.append(s);
  return out;
}

// Rescues make(n) for n and 8n bytes and fails when the larger takes more than 40 times as long (a
// quadratic walk takes 64 times; a linear one 8 times, and up to about 30 on a loaded machine,
// where the larger text falls out of the caches the other processes share): a bound on the shape of
// the cost, whatever the machine, the build or the load. Each size's time is its best of three
// runs, and the pair is measured again, up to five rounds, until one round holds: a loaded machine
// stalls some rounds, while a quadratic walk misses the bound in every one. Returns the larger
// text's rescue.
std::string linear(const std::function<std::string(std::size_t)>& make, const char* what) {
  const auto time = [](const std::string& text, std::string& out) {
    double best = 1e300;
    for (int i = 0; i < 3; ++i) {
      const auto start = std::chrono::steady_clock::now();
      out = rescued(text);
      best = std::min(
          best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                    .count());
    }
    return best;
  };
  const std::size_t n = 1u << 17;
  const std::string small_text = make(n), big_text = make(8 * n);
  std::string small, big;
  double t_small = 0, t_big = 0;
  for (int round = 0; round < 5; ++round) {
    t_small = time(small_text, small);
    t_big = time(big_text, big);
    if (t_big < 40 * std::max(t_small, 2.0)) return big;
  }
  ADD_FAILURE() << what << ": " << t_small << " ms, then " << t_big
                << " ms for 8 times the bytes, in each of five rounds";
  return big;
}

TEST(RescueLimits, AdversarialInputsStayLinear) {
  const std::string call = R"({"tool":"read","args":{}})";
  const std::string ok = one("json", "read", "{}");
  EXPECT_EQ(rescued(std::string(100000, '{') + call), ok);
  // Braces that are not JSON around a call do not hide it.
  EXPECT_EQ(linear(
                [&](std::size_t n) {
                  const std::size_t side = (n - call.size()) / 2;
                  return std::string(side, '{') + call + std::string(side, '}');
                },
                "braces"),
            ok);
  for (const char* unit : {"{",
                           "[",
                           "{\"",
                           "{\"a\":",
                           "[{",
                           "{\"a\":{\"b\":\"",
                           "\"{",
                           "{\"\\",
                           "{\"a\":1,",
                           "read[ARGS]",
                           "[TOOL_CALLS]read",
                           "[TOOL_CALLS][",
                           "<function=read>",
                           "<function=read><parameter=p>",
                           "<parameter=p>x</parameter>",
                           "<think>",
                           "</think>",
                           "```",
                           "read",
                           "{\"tool\":\"read\",\"args\":{\"a\":\"}\"}"}) {
    // The unit alone, then the unit followed by a call the walk must still reach when the units
    // leave it outside any string or block.
    linear([&](std::size_t n) { return repeat(unit, n - call.size() - 1); }, unit);
    linear([&](std::size_t n) { return repeat(unit, n - call.size() - 1) + " " + call; }, unit);
  }
  EXPECT_EQ(linear(
                [&](std::size_t n) {
                  return "<function=read>" + repeat("<parameter=p>x</parameter>", n - 64) + call;
                },
                "params"),
            ok);
}

TEST(RescueLimits, DeepNestingIsRefusedWithoutHarm) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_EQ(rescued(R"({"tool":"read","args":{"a":)" + deep + "}}"), "null");
  EXPECT_EQ(rescued(R"({"tool":"read","args":{"a":)" + deep + R"(}} {"tool":"write","args":{}})"),
            one("json", "write", "{}"));
  const std::string shallow = std::string(10, '[') + std::string(10, ']');
  EXPECT_EQ(rescued(R"({"tool":"read","args":{"a":)" + shallow + "}}"),
            one("json", "read", R"({"a":)" + shallow + "}"));
  EXPECT_EQ(rescued("<function=read><parameter=a>" + deep + "</parameter></function>"),
            one("qwen_xml", "read", R"({"a":")" + deep + "\"}"));
}

TEST(RescueLimits, InvalidUtf8) {
  // Inside a call, the call cannot be read; around it, the prose does not matter.
  EXPECT_EQ(rescued("{\"tool\":\"read\",\"args\":{\"p\":\"\xFF\"}}"), "null");
  EXPECT_EQ(rescued("{\"tool\":\"read\",\"args\":{\"p\":\"\xED\xA0\x80\"}}"), "null");
  EXPECT_EQ(rescued("{\"tool\":\"read\",\"args\":{\"p\":\"\\udc00\"}}"), "null");
  EXPECT_EQ(rescued("\xC0\xAF\xFF {\"tool\":\"read\",\"args\":{}} \xFE"),
            one("json", "read", "{}"));
  EXPECT_EQ(rescued("<function=read><parameter=\xFF>a</parameter></function>"), "null");
  // Every byte value in every position of a call: no crash, and only a valid call comes back.
  const std::string call = R"({"tool":"read","args":{"p":"a"}})";
  for (std::size_t i = 0; i < call.size(); ++i) {
    for (int b = 0x80; b < 0x100; ++b) {
      std::string t = call;
      t[i] = static_cast<char>(b);
      EXPECT_EQ(rescued(t), "null") << i << " " << b;
    }
  }
}

// --- to_json and rescue_lines ---------------------------------------------------------------

TEST(RescueToJson, CanonicalShape) {
  Rescue r;
  r.format = "bracket";
  r.calls.push_back(RescuedCall{.name = "read", .arguments = json::Object{}});
  r.calls.back().arguments.set("z", 1);
  r.calls.back().arguments.set("a", "x");
  EXPECT_EQ(json::canonical(to_json(r)),
            R"({"calls":[{"arguments":{"a":"x","z":1},"name":"read"}],"format":"bracket"})");
}

Status lines(const std::string& input, std::string& output) {
  std::istringstream in(input);
  std::ostringstream out;
  Status s = rescue_lines(in, out, kTools);
  output = out.str();
  return s;
}

TEST(RescueLines, OneOutputLinePerInputLine) {
  std::string out;
  ASSERT_TRUE(lines(R"("{\"tool\":\"read\",\"args\":{\"path\":\"a\"}}")"
                    "\n\"no call here\"\n"
                    R"("read[ARGS]{}\u003cthink\u003e")",
                    out)
                  .ok());
  EXPECT_EQ(out, one("json", "read", R"({"path":"a"})") + "\nnull\n" +
                     one("bracket", "read", "{}") + "\n");
}

TEST(RescueLines, EmptyInputGivesNoOutput) {
  std::string out = "x";
  ASSERT_TRUE(lines("", out).ok());
  EXPECT_EQ(out, "");
}

TEST(RescueLines, AnOversizedTextIsNull) {
  std::string out;
  ASSERT_TRUE(lines("\"" + std::string((1u << 20) + 1, 'a') + "\"\n", out).ok());
  EXPECT_EQ(out, "null\n");
}

TEST(RescueLines, ALineThatIsNotAJsonStringStopsTheOutput) {
  struct Case {
    std::string line;
    std::string code;
  };
  for (const Case& c : std::vector<Case>{{"42", codes::kMalformed},
                                         {R"({"text":"x"})", codes::kMalformed},
                                         {"", codes::kMalformed},
                                         {"no quotes", codes::kMalformed},
                                         {"\"a\" \"b\"", codes::kMalformed},
                                         {"\"\xFF\"", codes::kNotUtf8}}) {
    std::string out;
    Status s = lines("\"{\\\"tool\\\":\\\"read\\\"}\"\n" + c.line + "\n\"more\"\n", out);
    ASSERT_FALSE(s.ok()) << c.line;
    ASSERT_EQ(s.diagnostics().size(), 1u);
    const diag::Diagnostic& d = s.diagnostics()[0];
    EXPECT_EQ(d.code, c.code) << c.line;
    EXPECT_EQ(d.line, 2) << c.line;
    EXPECT_NE(d.message.find("line 2"), std::string::npos) << d.message;
    EXPECT_EQ(out, one("json", "read", "{}") + "\n") << c.line;
  }
}

}  // namespace
}  // namespace mf::runtime
