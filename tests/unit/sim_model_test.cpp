#include <gtest/gtest.h>

#include <set>

#include "mf/diag/codes.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"
#include "mf/model/sim.hpp"
#include "mf/text/utf8.hpp"
#include "temp_dir.hpp"

namespace mf::model {
namespace {

std::deque<ScriptedStep> steps(std::string_view json) {
  auto s = ScriptedModel::parse_steps(json);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.diagnostics().front().message);
  return s.ok() ? std::move(*s) : std::deque<ScriptedStep>{};
}

// read a.txt, write b.txt, grep, finish: every step one call with object arguments.
constexpr std::string_view kFour = R"({"steps": [
  {"content": "reading", "tool_calls": [{"name": "read", "arguments": {"path": "a.txt"}}]},
  {"tool_calls": [{"name": "write", "arguments": {"path": "b.txt", "text": "hi"}}]},
  {"tool_calls": [{"name": "grep", "arguments": {"pattern": "x"}}]},
  {"tool_calls": [{"name": "finish", "arguments": {"result": "done"}}]}
]})";

SimModel sim(std::string_view json, double faults, std::vector<Fault> kinds = {},
             std::uint64_t seed = 0) {
  return SimModel(steps(json),
                  SimOptions{.seed = seed, .faults = faults, .kinds = std::move(kinds)});
}

std::vector<ToolSchema> tools(std::initializer_list<const char*> names) {
  std::vector<ToolSchema> out;
  for (const char* n : names) {
    out.push_back(ToolSchema{.name = n, .description = "", .input_schema = json::Value()});
  }
  return out;
}

// Plays the run loop's part: keeps the conversation and answers each call of a reply with a tool
// result (success unless told otherwise), or with a nudge.
struct Loop {
  std::vector<Message> messages{Message::text("system", "sys"), Message::text("user", "go")};
  std::vector<ToolSchema> visible = tools({"read", "write", "grep", "finish"});
  std::int64_t calls = 0;
  Reply last;

  Reply ask(Model& m) {
    Request r;
    r.call = ++calls;
    r.messages = messages;
    r.tools = visible;
    std::atomic<bool> cancel{false};
    last = m.infer(r, cancel);
    return last;
  }
  void record_assistant(const Reply& reply) {
    Message a = Message::text("assistant", reply.content);
    a.tool_calls = reply.tool_calls;
    messages.push_back(std::move(a));
  }
  void results(bool ok = true) {
    record_assistant(last);
    for (const ToolCallRequest& c : last.tool_calls) {
      Message t = Message::text("tool", ok ? "ok" : "failed");
      t.tool_call_id = c.id;
      t.tool_name = c.name;
      t.is_error = !ok;
      messages.push_back(std::move(t));
    }
  }
  void nudge() {
    record_assistant(last);
    messages.push_back(Message::text("user", "Call one of the tools."));
  }
  // What a rescue does: the text becomes the call it names, which then succeeds.
  void rescue() {
    json::Value v = *json::parse(last.content);
    Message a = Message::text("assistant", last.content);
    a.tool_calls.push_back(ToolCallRequest{.id = "rescued",
                                           .name = v.find("name")->as_string(),
                                           .arguments = json::canonical(*v.find("arguments"))});
    messages.push_back(a);
    Message t = Message::text("tool", "ok");
    t.tool_call_id = "rescued";
    t.tool_name = v.find("name")->as_string();
    messages.push_back(std::move(t));
  }
};

std::string first_name(const Reply& r) {
  return r.tool_calls.empty() ? "" : r.tool_calls[0].name;
}

// A reply in full, for comparing sequences.
std::string render(const Reply& r) {
  std::string out = (r.ok ? "ok|" : "fail|") + r.content + "|" + r.error;
  for (const ToolCallRequest& c : r.tool_calls)
    out += "|" + c.id + "," + c.name + "," + c.arguments;
  return out;
}

TEST(SimModelReplay, NoFaultsReplaysTheTrajectoryExactly) {
  SimModel m = sim(R"({"steps": [
    {"content": "reading", "tool_calls": [{"name": "read", "arguments": {"path": "a.txt"}}],
     "usage": {"input_tokens": 3}},
    {"tool_calls": [{"id": "c9", "name": "write", "arguments": "{\"path\": \"b\"}"},
                    {"name": "grep", "arguments": {"pattern": "x"}}]},
    {"content": "all done"}
  ]})",
                   0.0);
  Loop loop;
  Reply r = loop.ask(m);
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.content, "reading");
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].id, "sim-1-0");
  EXPECT_EQ(r.tool_calls[0].name, "read");
  EXPECT_EQ(r.tool_calls[0].arguments, R"({"path":"a.txt"})");
  EXPECT_EQ(json::canonical(r.usage), R"({"input_tokens":3})");
  EXPECT_FALSE(m.last_fault().has_value());
  loop.results();

  r = loop.ask(m);
  ASSERT_EQ(r.tool_calls.size(), 2u);
  EXPECT_EQ(r.tool_calls[0].id, "c9");                        // given ids are kept
  EXPECT_EQ(r.tool_calls[0].arguments, "{\"path\": \"b\"}");  // raw text is sent as written
  EXPECT_EQ(r.tool_calls[1].id, "sim-2-1");
  EXPECT_EQ(r.tool_calls[1].name, "grep");
  EXPECT_TRUE(r.usage.is_null());
  loop.results();

  r = loop.ask(m);
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.content, "all done");
  EXPECT_TRUE(r.tool_calls.empty());
  loop.nudge();

  r = loop.ask(m);  // a text step advances once sent, whatever follows it
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, kSimExhausted);
  EXPECT_EQ(m.cursor(), 3u);
}

TEST(SimModelReplay, FailureStepsAreSentAndPassed) {
  SimModel m = sim(R"({"steps": [{"failure": "provider timed out"}, {"content": "x"}]})", 1.0);
  Loop loop;
  Reply r = loop.ask(m);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "provider timed out");
  r = loop.ask(m);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.content, "x");
}

TEST(SimModelReplay, AnEmptyTrajectoryIsExhaustedAtOnce) {
  SimModel m = sim(R"({"steps": []})", 1.0);
  Loop loop;
  for (int i = 0; i < 3; ++i) {
    Reply r = loop.ask(m);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.error, "sim model has no response remaining");
  }
}

TEST(SimModelReplay, ExhaustedAfterTheLastStepIsCarriedOut) {
  SimModel m = sim(kFour, 0.0);
  Loop loop;
  for (const char* name : {"read", "write", "grep", "finish"}) {
    EXPECT_EQ(first_name(loop.ask(m)), name);
    loop.results();
  }
  Reply r = loop.ask(m);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, kSimExhausted);
  r = loop.ask(m);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, kSimExhausted);
}

TEST(SimModelReplay, DelayIsInterruptedByCancellation) {
  SimModel m = sim(R"({"steps": [{"content": "slow", "delay_ms": 60000}]})", 0.0);
  std::atomic<bool> cancel{true};
  Request req;
  Reply r = m.infer(req, cancel);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("cancelled"), std::string::npos);
  std::atomic<bool> go{false};
  SimModel fast = sim(R"({"steps": [{"content": "quick", "delay_ms": 1}]})", 0.0);
  EXPECT_EQ(fast.infer(req, go).content, "quick");
}

TEST(SimModelFaults, TextInsteadOfCallWritesTheCallAsText) {
  SimModel m = sim(kFour, 1.0, {Fault::TextInsteadOfCall});
  Loop loop;
  Reply r = loop.ask(m);
  ASSERT_TRUE(r.ok);
  EXPECT_TRUE(r.tool_calls.empty());
  EXPECT_EQ(r.content, R"({"name":"read","arguments":{"path":"a.txt"}})");
  EXPECT_EQ(m.last_fault(), Fault::TextInsteadOfCall);
}

TEST(SimModelFaults, WrongArgumentNamesRenamesOneKeyToAnAbsentOne) {
  SimModel m = sim(kFour, 1.0, {Fault::WrongArgumentNames});
  Loop loop;
  Reply r = loop.ask(m);
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].name, "read");
  EXPECT_EQ(r.tool_calls[0].arguments, R"({"path_name":"a.txt"})");
  EXPECT_EQ(r.tool_calls[0].id, "sim-1-0");
  EXPECT_EQ(m.last_fault(), Fault::WrongArgumentNames);

  // The new name is never one the call already has, and the call renamed is the first that has
  // an argument at all.
  SimModel clash = sim(R"({"steps": [{"tool_calls": [
    {"name": "ls", "arguments": {}},
    {"name": "read", "arguments": {"path": "a", "path_name": "b", "path_name_name": "c"}}]}]})",
                       1.0, {Fault::WrongArgumentNames});
  r = loop.ask(clash);
  ASSERT_EQ(r.tool_calls.size(), 2u);
  EXPECT_EQ(r.tool_calls[0].arguments, "{}");
  json::Value args = *json::parse(r.tool_calls[1].arguments);
  EXPECT_EQ(args.find("path"), nullptr);
  EXPECT_EQ(args.as_object().size(), 3u);
  ASSERT_NE(args.find("path_name_name_name"), nullptr);
  EXPECT_EQ(args.find("path_name_name_name")->as_string(), "a");
}

TEST(SimModelFaults, MalformedJsonCutsTheArgumentsShort) {
  SimModel m = sim(kFour, 1.0, {Fault::MalformedJson});
  Loop loop;
  Reply r = loop.ask(m);
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].name, "read");
  const std::string& text = r.tool_calls[0].arguments;
  EXPECT_FALSE(json::parse(text).ok()) << text;
  EXPECT_FALSE(text.empty());
  EXPECT_EQ(std::string(R"({"path":"a.txt"})").rfind(text, 0), 0u) << text;  // a prefix
  EXPECT_EQ(m.last_fault(), Fault::MalformedJson);

  // Whatever the arguments, the text is invalid JSON and valid UTF-8 (no cut inside a character).
  for (const char* args : {R"("{}")", R"("12")", R"("7")", R"("")", R"({"k":"ééééééé"})",
                           R"({"k":"aéééééé"})", R"("{\"path\": ")"}) {
    SimModel one =
        sim(std::string(R"({"steps":[{"tool_calls":[{"name":"x","arguments":)") + args + "}]}]}",
            1.0, {Fault::MalformedJson});
    r = loop.ask(one);
    ASSERT_EQ(r.tool_calls.size(), 1u) << args;
    const std::string& cut = r.tool_calls[0].arguments;
    EXPECT_FALSE(cut.empty()) << args;
    EXPECT_FALSE(json::parse(cut).ok()) << args << " -> " << cut;
    EXPECT_TRUE(text::valid_utf8(cut)) << args;
  }
}

TEST(SimModelFaults, UnknownToolNamesAToolTheRequestDoesNotOffer) {
  SimModel m = sim(kFour, 1.0, {Fault::UnknownTool});
  Loop loop;
  Reply r = loop.ask(m);
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].name, "read_v2");
  EXPECT_EQ(r.tool_calls[0].arguments, R"({"path":"a.txt"})");
  EXPECT_EQ(m.last_fault(), Fault::UnknownTool);

  loop.visible = tools({"read", "read_v2", "read_v2_v2"});
  r = loop.ask(m);
  EXPECT_EQ(first_name(r), "read_v2_v2_v2");
}

TEST(SimModelFaults, PrematureTerminalSendsTheLastStepNow) {
  SimModel m = sim(kFour, 1.0, {Fault::PrematureTerminal});
  Loop loop;
  Reply r = loop.ask(m);
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].name, "finish");
  EXPECT_EQ(r.tool_calls[0].arguments, R"({"result":"done"})");
  EXPECT_EQ(m.last_fault(), Fault::PrematureTerminal);
}

TEST(SimModelFaults, SkippedPrerequisiteSendsTheNextStep) {
  SimModel m = sim(kFour, 1.0, {Fault::SkippedPrerequisite});
  Loop loop;
  Reply r = loop.ask(m);
  EXPECT_EQ(first_name(r), "write");
  EXPECT_EQ(m.last_fault(), Fault::SkippedPrerequisite);
}

TEST(SimModelFaults, RepeatedCallSendsThePreviousStepAgain) {
  SimModel m = sim(kFour, 1.0, {Fault::RepeatedCall});
  Loop loop;
  Reply r = loop.ask(m);  // nothing to repeat yet: the step as scripted
  EXPECT_EQ(first_name(r), "read");
  EXPECT_FALSE(m.last_fault().has_value());
  loop.results();
  r = loop.ask(m);
  EXPECT_EQ(first_name(r), "read");
  EXPECT_EQ(r.tool_calls[0].arguments, R"({"path":"a.txt"})");
  EXPECT_EQ(r.tool_calls[0].id, "sim-2-0");  // fresh, not the first call's id
  EXPECT_EQ(m.last_fault(), Fault::RepeatedCall);
  EXPECT_EQ(m.cursor(), 1u);
}

TEST(SimModelFaults, GivenIdsAreNotReusedByFaults) {
  SimModel m = sim(R"({"steps": [
    {"tool_calls": [{"id": "a1", "name": "read", "arguments": {}}]},
    {"tool_calls": [{"id": "f1", "name": "finish", "arguments": {}}]}]})",
                   1.0, {Fault::PrematureTerminal});
  Loop loop;
  Reply r = loop.ask(m);
  EXPECT_EQ(first_name(r), "finish");
  EXPECT_EQ(r.tool_calls[0].id, "sim-1-0");
}

TEST(SimModelApplicability, PrematureTerminalNotAtTheLastStepNorWithoutATerminalCall) {
  // At the last step the terminal is on time: answered as scripted.
  SimModel last = sim(R"({"steps": [{"tool_calls": [{"name": "finish", "arguments": {}}]}]})", 1.0,
                      {Fault::PrematureTerminal});
  Loop loop;
  EXPECT_EQ(first_name(loop.ask(last)), "finish");
  EXPECT_FALSE(last.last_fault().has_value());

  // A trajectory that ends in text has no terminal call to send early.
  SimModel text_end = sim(R"({"steps": [
    {"tool_calls": [{"name": "read", "arguments": {}}]}, {"content": "the answer"}]})",
                          1.0, {Fault::PrematureTerminal});
  Reply r = loop.ask(text_end);
  EXPECT_EQ(first_name(r), "read");
  EXPECT_FALSE(text_end.last_fault().has_value());
}

TEST(SimModelApplicability, SkippedPrerequisiteNeedsANextStepThatIsNotTheLast) {
  // Two steps: the next one is the terminal, which premature_terminal covers, not this.
  SimModel two = sim(R"({"steps": [
    {"tool_calls": [{"name": "read", "arguments": {}}]},
    {"tool_calls": [{"name": "finish", "arguments": {}}]}]})",
                     1.0, {Fault::SkippedPrerequisite});
  Loop loop;
  EXPECT_EQ(first_name(loop.ask(two)), "read");
  EXPECT_FALSE(two.last_fault().has_value());

  // With three steps it applies at the first: the next step is not the terminal.
  SimModel three = sim(R"({"steps": [
    {"tool_calls": [{"name": "read", "arguments": {}}]},
    {"tool_calls": [{"name": "grep", "arguments": {}}]},
    {"tool_calls": [{"name": "finish", "arguments": {}}]}]})",
                       1.0, {Fault::SkippedPrerequisite});
  Reply r = loop.ask(three);
  EXPECT_EQ(first_name(r), "grep");
  EXPECT_EQ(three.last_fault(), Fault::SkippedPrerequisite);
}

TEST(SimModelApplicability, TextAndArgumentFaultsNeedSuitableCalls) {
  // Two calls cannot be rescued from one text; no arguments cannot be renamed; a text step has
  // no call to break. Each falls back to the step as scripted.
  SimModel two_calls = sim(R"({"steps": [{"tool_calls": [
    {"name": "read", "arguments": {"path": "a"}}, {"name": "read", "arguments": {"path": "b"}}]}]})",
                           1.0, {Fault::TextInsteadOfCall});
  Loop loop;
  EXPECT_EQ(loop.ask(two_calls).tool_calls.size(), 2u);
  EXPECT_FALSE(two_calls.last_fault().has_value());

  SimModel no_args = sim(R"({"steps": [{"tool_calls": [{"name": "ls", "arguments": {}}]}]})", 1.0,
                         {Fault::WrongArgumentNames});
  EXPECT_EQ(loop.ask(no_args).tool_calls[0].arguments, "{}");
  EXPECT_FALSE(no_args.last_fault().has_value());

  SimModel raw = sim(R"({"steps": [{"tool_calls": [{"name": "ls", "arguments": "[1]"}]}]})", 1.0,
                     {Fault::TextInsteadOfCall, Fault::WrongArgumentNames});
  EXPECT_EQ(loop.ask(raw).tool_calls[0].arguments, "[1]");
  EXPECT_FALSE(raw.last_fault().has_value());

  SimModel text = sim(R"({"steps": [{"content": "hello"}]})", 1.0,
                      {Fault::TextInsteadOfCall, Fault::WrongArgumentNames, Fault::MalformedJson,
                       Fault::UnknownTool});
  Reply r = loop.ask(text);
  EXPECT_EQ(r.content, "hello");
  EXPECT_FALSE(text.last_fault().has_value());
}

TEST(SimModelApplicability, EmptyArgumentsAreNoArguments) {
  // A step whose arguments are "" or whitespace is a call without arguments, as the loop reads
  // it: it can be written as text (with {}), and has no argument to rename.
  for (const char* empty : {R"("")", R"(" \n")"}) {
    Loop loop;
    SimModel m = sim(
        std::string(R"({"steps": [{"tool_calls": [{"name": "ls", "arguments": )") + empty + "}]}]}",
        1.0, {Fault::TextInsteadOfCall});
    Reply r = loop.ask(m);
    EXPECT_TRUE(r.tool_calls.empty());
    EXPECT_EQ(r.content, R"({"name":"ls","arguments":{}})");
    EXPECT_EQ(m.last_fault(), Fault::TextInsteadOfCall);
    SimModel rename = sim(
        std::string(R"({"steps": [{"tool_calls": [{"name": "ls", "arguments": )") + empty + "}]}]}",
        1.0, {Fault::WrongArgumentNames});
    EXPECT_TRUE(model::no_arguments(loop.ask(rename).tool_calls[0].arguments));
    EXPECT_FALSE(rename.last_fault().has_value());
  }
}

TEST(SimModelApplicability, AllKindsDrawOnlyApplicableOnes) {
  // At the first of four steps repeated_call cannot apply; over many seeds every other kind is
  // drawn and repeated_call never is.
  std::set<std::string> seen;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    SimModel m = sim(kFour, 1.0, {}, seed);
    Loop loop;
    loop.ask(m);
    ASSERT_TRUE(m.last_fault().has_value());
    seen.insert(std::string(name(*m.last_fault())));
  }
  EXPECT_EQ(seen,
            (std::set<std::string>{"text_instead_of_call", "wrong_argument_names", "malformed_json",
                                   "unknown_tool", "premature_terminal", "skipped_prerequisite"}));
}

TEST(SimModelAdvancing, SuccessAdvancesErrorsAndNudgesRepeat) {
  SimModel m = sim(kFour, 0.0);
  Loop loop;
  EXPECT_EQ(first_name(loop.ask(m)), "read");
  loop.results(false);  // the tool failed
  EXPECT_EQ(first_name(loop.ask(m)), "read");
  loop.nudge();  // no result at all
  EXPECT_EQ(first_name(loop.ask(m)), "read");
  loop.results();
  EXPECT_EQ(first_name(loop.ask(m)), "write");
  EXPECT_EQ(m.cursor(), 1u);

  // Results naming other tools do not count, nor do results from before the last assistant
  // message.
  loop.record_assistant(loop.last);
  Message t = Message::text("tool", "ok");
  t.tool_name = "read";
  loop.messages.push_back(t);
  EXPECT_EQ(first_name(loop.ask(m)), "write");
  loop.results();
  loop.record_assistant(
      Reply{.ok = true, .content = "thinking", .tool_calls = {}, .usage = {}, .error = ""});
  EXPECT_EQ(first_name(loop.ask(m)), "write");
  EXPECT_EQ(m.cursor(), 1u);
}

TEST(SimModelAdvancing, EveryCallOfTheStepMustSucceedInOrder) {
  constexpr std::string_view kPair = R"({"steps": [
    {"tool_calls": [{"name": "read", "arguments": {"path": "a"}},
                    {"name": "grep", "arguments": {"pattern": "b"}}]},
    {"tool_calls": [{"name": "finish", "arguments": {}}]}]})";
  SimModel m = sim(kPair, 0.0);
  Loop loop;
  loop.ask(m);
  // Only the first call answered.
  loop.record_assistant(loop.last);
  Message t = Message::text("tool", "ok");
  t.tool_name = "read";
  loop.messages.push_back(t);
  EXPECT_EQ(first_name(loop.ask(m)), "read");
  // Both answered, in the wrong order.
  loop.record_assistant(loop.last);
  t.tool_name = "grep";
  loop.messages.push_back(t);
  t.tool_name = "read";
  loop.messages.push_back(t);
  EXPECT_EQ(first_name(loop.ask(m)), "read");
  // One of two failed.
  loop.record_assistant(loop.last);
  loop.messages.push_back(t);
  t.tool_name = "grep";
  t.is_error = true;
  loop.messages.push_back(t);
  EXPECT_EQ(first_name(loop.ask(m)), "read");
  // Both, in order, with a nudge after them: carried out.
  loop.results();
  loop.messages.push_back(Message::text("user", "keep going"));
  EXPECT_EQ(first_name(loop.ask(m)), "finish");
}

TEST(SimModelAdvancing, AFaultNeverAdvancesEvenWhenItsCallsSucceed) {
  // With the guardrails off a skipped step's calls may well run; the sim still owes the step.
  SimModel m = sim(kFour, 1.0, {Fault::SkippedPrerequisite});
  Loop loop;
  EXPECT_EQ(first_name(loop.ask(m)), "write");
  loop.results();
  EXPECT_EQ(first_name(loop.ask(m)), "write");
  EXPECT_EQ(m.cursor(), 0u);
}

TEST(SimModelAdvancing, RescuedTextAdvancesAndANudgedOneRepeats) {
  SimModel m = sim(kFour, 1.0, {Fault::TextInsteadOfCall});
  Loop loop;
  loop.ask(m);
  loop.nudge();  // rescue off: the loop asks for a native call
  Reply r = loop.ask(m);
  EXPECT_EQ(r.content, R"({"name":"read","arguments":{"path":"a.txt"}})");
  loop.rescue();
  r = loop.ask(m);
  EXPECT_EQ(r.content, R"({"name":"write","arguments":{"path":"b.txt","text":"hi"}})");
  EXPECT_EQ(m.cursor(), 1u);
  for (int i = 0; i < 3; ++i) {
    loop.rescue();
    r = loop.ask(m);
  }
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, kSimExhausted);
}

// A trajectory of n single-call steps cycling through three tools, the last one "finish".
std::string long_trajectory(int n) {
  std::string out = R"({"steps": [)";
  const char* names[] = {"read", "write", "grep"};
  for (int i = 0; i < n; ++i) {
    if (i > 0) out += ",";
    const std::string name = i == n - 1 ? "finish" : names[i % 3];
    out += R"({"tool_calls": [{"name": ")" + name + R"(", "arguments": {"n": )" +
           std::to_string(i) + "}}]}";
  }
  return out + "]}";
}

// Runs a loop with rescue on and every executed call succeeding unless its tool is unknown or
// its arguments are not an object: a crude guardrail, deterministic in the replies.
std::vector<std::string> play(SimModel& m, int calls) {
  Loop loop;
  std::vector<std::string> out;
  for (int i = 0; i < calls; ++i) {
    Reply r = loop.ask(m);
    out.push_back(render(r));
    if (!r.ok) break;
    if (r.tool_calls.empty()) {
      loop.rescue();
      continue;
    }
    loop.record_assistant(r);
    for (const ToolCallRequest& c : r.tool_calls) {
      Result<json::Value> args = json::parse(c.arguments);
      Message t = Message::text("tool", "");
      t.tool_call_id = c.id;
      t.tool_name = c.name;
      t.is_error = c.name.find("_v2") != std::string::npos || !args.ok() || !args->is_object() ||
                   (args->find("n") == nullptr);
      loop.messages.push_back(t);
    }
  }
  return out;
}

TEST(SimModelDeterminism, SameSeedSameRepliesOtherSeedOtherReplies) {
  const std::string trajectory = long_trajectory(200);
  SimModel a = sim(trajectory, 0.3, {}, 42);
  SimModel b = sim(trajectory, 0.3, {}, 42);
  SimModel c = sim(trajectory, 0.3, {}, 43);
  const auto ra = play(a, 400);
  const auto rb = play(b, 400);
  const auto rc = play(c, 400);
  EXPECT_EQ(ra, rb);
  EXPECT_NE(ra, rc);
  // Faults did happen, and so did progress.
  std::size_t faulty = 0;
  for (const std::string& s : ra) {
    if (s.find("_v2") != std::string::npos || s.rfind("ok|{", 0) == 0) ++faulty;
  }
  EXPECT_GT(faulty, 20u);
  EXPECT_GT(a.cursor(), 50u);
}

TEST(SimModelDeterminism, TheGeneratorIsTheDocumentedSplitmix64) {
  // From docs/formats/sim.md's algorithm, computed independently: with seed 0 and faults 0.5 the
  // first roll is 0xe220a8397b1dcdaf >> 11 as a fraction (0.88: no fault), and of the first 16
  // calls these fault.
  SimModel m = sim(long_trajectory(40), 0.5, {Fault::UnknownTool}, 0);
  Loop loop;
  std::vector<int> faulted;
  for (int call = 1; call <= 16; ++call) {
    loop.ask(m);
    if (m.last_fault()) faulted.push_back(call);
    loop.results();
  }
  EXPECT_EQ(faulted, (std::vector<int>{2, 3, 4, 5, 6, 9, 10, 14}));

  // The second draw picks among the applicable kinds in enum order (six at the first step).
  const std::vector<std::string_view> expected = {"text_instead_of_call", "wrong_argument_names",
                                                  "malformed_json",       "unknown_tool",
                                                  "premature_terminal",   "premature_terminal",
                                                  "skipped_prerequisite", "text_instead_of_call",
                                                  "skipped_prerequisite", "premature_terminal"};
  for (std::uint64_t seed = 0; seed < expected.size(); ++seed) {
    SimModel s = sim(kFour, 1.0, {}, seed);
    Loop l;
    l.ask(s);
    ASSERT_TRUE(s.last_fault().has_value());
    EXPECT_EQ(name(*s.last_fault()), expected[seed]) << "seed " << seed;
  }
}

TEST(SimModelDeterminism, ApplicabilityDoesNotShiftLaterFaults) {
  // Same seed, one trajectory all calls and one where every other step is text (unknown_tool
  // cannot apply there). Calls that roll a fault at a text step still spend both draws, so the
  // second model faults exactly where the first does whenever it is at a call step.
  std::string mixed = R"({"steps": [)";
  for (int i = 0; i < 40; ++i) {
    if (i > 0) mixed += ",";
    mixed += i % 2 == 1 ? R"({"content": "note"})"
                        : R"({"tool_calls": [{"name": "read", "arguments": {"n": 1}}]})";
  }
  mixed += "]}";
  SimModel all_calls = sim(long_trajectory(40), 0.5, {Fault::UnknownTool}, 11);
  SimModel with_text = sim(mixed, 0.5, {Fault::UnknownTool}, 11);
  Loop la, lb;
  int compared = 0;
  for (int call = 1; call <= 30; ++call) {
    la.ask(all_calls);
    la.results();
    Reply b = lb.ask(with_text);
    const bool at_call_step = with_text.cursor() % 2 == 0;
    if (at_call_step) {
      EXPECT_EQ(with_text.last_fault().has_value(), all_calls.last_fault().has_value())
          << "call " << call;
      ++compared;
    } else {
      EXPECT_FALSE(with_text.last_fault().has_value());
      EXPECT_EQ(b.content, "note");
    }
    lb.results();
  }
  EXPECT_GT(compared, 10);
}

TEST(SimModelSpec, ParsesSeedFaultsAndKinds) {
  test::TempDir dir;
  const std::string file = (dir / "t.json").string();
  test::write_file(file, std::string(kFour));
  auto m = open_sim(file + "?seed=18446744073709551615&faults=1&kinds=unknown_tool");
  ASSERT_TRUE(m.ok()) << m.diagnostics().front().message;
  EXPECT_EQ((*m)->name(), "sim");
  Loop loop;
  EXPECT_EQ(first_name(loop.ask(**m)), "read_v2");

  auto plain = open_sim(file);  // defaults: no faults
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(first_name(loop.ask(**plain)), "read");

  auto through = open_model("sim:" + file + "?faults=0.0&seed=3");
  ASSERT_TRUE(through.ok()) << through.diagnostics().front().message;
  EXPECT_EQ((*through)->name(), "sim");
  EXPECT_EQ(first_name(loop.ask(**through)), "read");

  auto other = open_model("ollama:x.json");
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.diagnostics().front().message.find("sim:FILE"), std::string::npos);
}

TEST(SimModelSpec, RejectsMalformedParametersPrecisely) {
  // Parameters are checked before the file is read: none of these files exist.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "no trajectory file"},
      {"?seed=1", "no trajectory file"},
      {"t.json?", "empty parameter"},
      {"t.json?seed=1&&faults=0", "empty parameter"},
      {"t.json?seed=1&", "empty parameter"},
      {"t.json?speed=1", "unknown parameter \"speed\""},
      {"t.json?seed", "parameter \"seed\" has no value"},
      {"t.json?seed=1&seed=2", "\"seed\" is given twice"},
      {"t.json?seed=", "seed \"\" is not a decimal integer"},
      {"t.json?seed=-1", "seed \"-1\""},
      {"t.json?seed=+1", "seed \"+1\""},
      {"t.json?seed=0x10", "seed \"0x10\""},
      {"t.json?seed=18446744073709551616", "seed \"18446744073709551616\""},
      {"t.json?seed=1.0", "seed \"1.0\""},
      {"t.json?faults=1.5", "faults \"1.5\" is not a decimal number in [0, 1]"},
      {"t.json?faults=1.0001", "faults \"1.0001\""},
      {"t.json?faults=-0.1", "faults \"-0.1\""},
      {"t.json?faults=1e-1", "faults \"1e-1\""},
      {"t.json?faults=.5", "faults \".5\""},
      {"t.json?faults=5.", "faults \"5.\""},
      {"t.json?faults=nan", "faults \"nan\""},
      {"t.json?faults=inf", "faults \"inf\""},
      {"t.json?faults=", "faults \"\""},
      {"t.json?kinds=", "kinds names no fault"},
      {"t.json?kinds=unknown_tool,,malformed_json", "kinds has an empty name"},
      {"t.json?kinds=unknown_tool,typo", "unknown fault kind \"typo\""},
      {"t.json?kinds=Unknown_Tool", "unknown fault kind \"Unknown_Tool\""},
  };
  for (const auto& [spec, expected] : cases) {
    auto m = open_sim(spec);
    ASSERT_FALSE(m.ok()) << spec;
    const diag::Diagnostic& d = m.diagnostics().front();
    EXPECT_EQ(d.code, diag::codes::kUsage) << spec;
    EXPECT_NE(d.message.find(expected), std::string::npos) << spec << ": " << d.message;
    EXPECT_TRUE(d.source.empty()) << spec;
  }
  // Every problem is reported, not only the first.
  auto many = open_sim("t.json?seed=x&faults=2&kinds=nope");
  ASSERT_FALSE(many.ok());
  EXPECT_EQ(many.diagnostics().size(), 3u);
  // The list of known kinds is in the message.
  auto unknown = open_sim("t.json?kinds=x");
  EXPECT_NE(unknown.diagnostics().front().message.find("repeated_call"), std::string::npos);
}

TEST(SimModelSpec, TrajectoryProblemsNameTheFile) {
  test::TempDir dir;
  const std::string file = (dir / "bad.json").string();
  test::write_file(file, R"({"steps": [{"tool_calls": [{"name": "read", "args": {}}]}]})");
  auto m = open_sim(file + "?seed=1");
  ASSERT_FALSE(m.ok());
  for (const diag::Diagnostic& d : m.diagnostics()) {
    EXPECT_EQ(d.source, file);
    EXPECT_NE(d.code, diag::codes::kUsage);
  }
  auto missing = open_sim((dir / "absent.json").string() + "?seed=1");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.diagnostics().front().code, diag::codes::kMissing);
}

}  // namespace
}  // namespace mf::model
