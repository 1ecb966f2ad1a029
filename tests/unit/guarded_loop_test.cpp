// The guarded loop of harness mode (docs/harness-run.md): one test per guardrail, budget, terminal
// acceptance rule, preset, compaction and cancellation, over the golden plan with real tools (the
// artifact producer writes into a temporary artifact directory).
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <sstream>

#include "mf/harness/command.hpp"
#include "mf/harness/compiler.hpp"
#include "mf/harness/plan.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"
#include "mf/model/scripted.hpp"
#include "mf/runtime/compaction.hpp"
#include "mf/runtime/plan_run.hpp"
#include "mf/trace/verify.hpp"
#include "temp_dir.hpp"

namespace mf::runtime {
namespace {

using json::Value;

std::string fixture(const std::string& rel) {
  std::ifstream in(std::string(MF_SOURCE_DIR) + "/fixtures/" + rel, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Value golden_plan() {
  return harness::load_plan(fixture("harness/golden.compiled.json")).value();
}

// Tool-call steps as a scripted file: each step a list of (name, arguments) or raw text.
std::string call(const std::string& name, const std::string& args) {
  return R"({"tool_calls": [{"name": ")" + name + R"(", "arguments": )" + args + "}]}";
}
std::string text(const std::string& t) {
  return R"({"content": )" + json::canonical(Value(t)) + "}";
}
std::string steps(const std::vector<std::string>& s) {
  std::string out = R"({"steps": [)";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + s[i];
  return out + "]}";
}

const std::string kCollect = call("collect_context", R"({"path": "src/lib.rs"})");
const std::string kReport =
    call("write_report", R"({"path": "src/lib.rs", "body": "One panic path."})");
const std::string kFinish = call("finish_success", R"({"summary": "Report written."})");

struct Ran {
  RunOutcome outcome;
  std::vector<Value> events;
  std::string trace;
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : events) out.push_back(e.find("event")->as_string());
    return out;
  }
  std::vector<Value> of(const std::string& event) const {
    std::vector<Value> out;
    for (const auto& e : events) {
      if (e.find("event")->as_string() == event) out.push_back(e);
    }
    return out;
  }
  std::vector<std::string> violations() const {
    std::vector<std::string> out;
    for (const auto& e : of("guardrail_violation")) out.push_back(e.find("kind")->as_string());
    return out;
  }
  std::string last_error() const { return outcome.error; }
};

struct Config {
  Value plan = golden_plan();
  Guardrails guardrails = Guardrails::Full;
  bool artifacts = true;
  std::optional<std::vector<std::string>> capabilities;
  const std::atomic<bool>* cancel = nullptr;
  TraceContent content = TraceContent::Inline;
  std::vector<std::pair<std::string, std::string>> files;  // more workspace files: path, text
  std::vector<model::Request>* requests = nullptr;         // receives every request made
};

// A model that answers from `inner` and keeps every request it was sent.
class Recording final : public model::Model {
 public:
  Recording(model::Model& inner, std::vector<model::Request>& requests)
      : inner_(inner), requests_(requests) {}
  model::Reply infer(const model::Request& r, const std::atomic<bool>& cancel) override {
    requests_.push_back(r);
    return inner_.infer(r, cancel);
  }
  std::string name() const override { return inner_.name(); }

 private:
  model::Model& inner_;
  std::vector<model::Request>& requests_;
};

Ran run(const std::string& script, Config setup = {}) {
  test::TempDir ws("mf-guarded-ws"), art("mf-guarded-art");
  std::filesystem::create_directories(ws.path() / "src");
  test::write_file(ws.path() / "src" / "lib.rs", "fn parse() { x.unwrap() }\n");
  for (const auto& [path, text] : setup.files) {
    std::filesystem::create_directories((ws.path() / path).parent_path());
    test::write_file(ws.path() / path, text);
  }
  auto model = model::ScriptedModel::parse(script);
  EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.diagnostics().front().message);
  auto bindings = tools::bindings_from_plan(setup.plan).value();
  tools::CallContext ctx;
  ctx.workspace = tools::Workspace::open(ws.path().string()).value();
  ctx.cancel = setup.cancel;
  PlanRunOptions po;
  po.guardrails = setup.guardrails;
  if (setup.artifacts) po.artifact_dir = art.path().string();
  if (setup.capabilities) {
    po.capabilities = *setup.capabilities;
  } else {
    for (const auto& c : setup.plan.find("required_capabilities")->as_array()) {
      po.capabilities.push_back(c.as_string());
    }
  }
  tools::ExecutorOptions eo;
  eo.granted_capabilities = po.capabilities;
  eo.artifact_dir = po.artifact_dir;
  eo.fixed_clock = true;
  tools::ToolExecutor executor(std::move(bindings), std::move(ctx), std::move(eo));
  Ran r;
  trace::WriterOptions wo;
  wo.run_id = "run-guarded";
  wo.fixed_clock = true;
  auto writer = trace::Writer::open_memory(&r.trace, wo).value();
  RunOptions options;
  options.trace_content = setup.content;
  options.cancel = setup.cancel;
  std::optional<Recording> recording;
  if (setup.requests != nullptr) recording.emplace(**model, *setup.requests);
  model::Model& m = recording ? static_cast<model::Model&>(*recording) : **model;
  auto outcome = run_plan(setup.plan, executor, m, *writer, options, po);
  if (!outcome) {
    ADD_FAILURE() << outcome.diagnostics().front().message;
    return r;
  }
  r.outcome = *outcome;
  for (std::size_t start = 0; start < r.trace.size();) {
    const std::size_t end = r.trace.find('\n', start);
    r.events.push_back(*json::parse(std::string_view(r.trace).substr(start, end - start)));
    start = end + 1;
  }
  // Every trace the loop writes passes the verifier.
  auto summary = trace::verify(r.trace).value();
  EXPECT_EQ(summary.status, trace::Outcome::Ok)
      << (summary.first_error ? summary.first_error->message : "");
  return r;
}

TEST(GuardedLoop, HappyPathRunsToolsAndAcceptsTheTerminal) {
  Ran r = run(steps({kCollect, kReport, kFinish}));
  ASSERT_EQ(r.outcome.terminal, "completed") << r.last_error();
  EXPECT_EQ(r.outcome.model_calls, 3);
  EXPECT_EQ(r.outcome.tool_calls, 3);
  EXPECT_TRUE(r.violations().empty());
  const Value& out = r.outcome.output;
  EXPECT_EQ(out.find("node_id")->as_string(), "complete");
  EXPECT_EQ(out.find("terminal_result")->as_string(), "BUILDER_COMPLETE");
  EXPECT_EQ(out.find("disposition")->as_string(), "success");
  const auto& artifacts = out.find("artifacts")->as_array();
  ASSERT_EQ(artifacts.size(), 2u);
  EXPECT_EQ(artifacts[0].find("artifact_id")->as_string(), "draft");
  EXPECT_EQ(artifacts[1].find("artifact_id")->as_string(), "report");
  EXPECT_EQ(artifacts[1].find("sha256")->as_string().size(), 64u);
  EXPECT_EQ(r.of("tool_called").size(), 3u);
  EXPECT_EQ(r.of("tool_completed").size(), 3u);
  EXPECT_EQ(r.of("run_completed")[0].find("tool_calls")->as_exact_int(), 3);
  // The second request carries the first call and its result.
  EXPECT_EQ(r.of("model_requested")[1].find("kind")->as_string(), "turn");
}

TEST(GuardedLoop, SameInputsGiveTheSameTraceBytes) {
  const std::string script = steps({text("hello"), kCollect, kReport, kFinish});
  EXPECT_EQ(run(script).trace, run(script).trace);
}

TEST(GuardedLoop, TextReplyGetsAUserNudgeOnTheValidationBudget) {
  Ran r = run(steps({text("I am thinking."), kCollect, kReport, kFinish}));
  ASSERT_EQ(r.outcome.terminal, "completed");
  ASSERT_EQ(r.violations(), std::vector<std::string>{"text_response"});
  const Value nudge = r.of("nudge_sent")[0];
  EXPECT_EQ(nudge.find("channel")->as_string(), "user");
  EXPECT_NE(nudge.find("message")->as_string().find("not a tool call"), std::string::npos);
  const Value budget = *r.of("guardrail_violation")[0].find("budget");
  EXPECT_EQ(budget.find("name")->as_string(), "max_validation_retries");
  EXPECT_EQ(budget.find("used")->as_exact_int(), 1);
}

TEST(GuardedLoop, ValidationBudgetEndsTheRunAfterItsLimit) {
  // max_validation_retries is 2: two nudges, and the third text reply ends the run.
  Ran r = run(steps({text("a"), text("b"), text("c"), kCollect}));
  EXPECT_EQ(r.outcome.terminal, "budget_exhausted");
  EXPECT_EQ(r.outcome.model_calls, 3);
  EXPECT_EQ(r.of("nudge_sent").size(), 2u);
  EXPECT_EQ(r.of("budget_exhausted")[0].find("budget")->as_string(), "max_validation_retries");
}

TEST(GuardedLoop, UnknownToolIsAnsweredOnTheToolChannel) {
  Ran r = run(steps({call("collect", "{}"), kCollect, kReport, kFinish}));
  ASSERT_EQ(r.outcome.terminal, "completed");
  EXPECT_EQ(r.violations(), std::vector<std::string>{"unknown_tool"});
  EXPECT_EQ(r.of("nudge_sent")[0].find("channel")->as_string(), "tool");
  const std::string message = r.of("nudge_sent")[0].find("message")->as_string();
  EXPECT_NE(message.find("no tool named 'collect'"), std::string::npos);
  EXPECT_NE(message.find("collect_context"), std::string::npos);
  EXPECT_EQ(r.of("tool_denied")[0].find("reason")->as_string(), "unknown_tool");
}

TEST(GuardedLoop, MalformedArgumentsSpendTheToolErrorBudget) {
  const std::string bad = call("collect_context", R"("{\"path\": ")");
  const std::string list = call("collect_context", R"("[1, 2]")");
  Ran ok = run(steps({bad, kCollect, kReport, kFinish}));
  ASSERT_EQ(ok.outcome.terminal, "completed");
  EXPECT_EQ(ok.violations(), std::vector<std::string>{"malformed_arguments"});
  EXPECT_EQ(ok.of("guardrail_violation")[0].find("budget")->find("name")->as_string(),
            "max_tool_errors");
  Ran spent = run(steps({bad, list, bad, kCollect}));
  EXPECT_EQ(spent.outcome.terminal, "budget_exhausted");
  EXPECT_EQ(spent.of("budget_exhausted")[0].find("budget")->as_string(), "max_tool_errors");
}

TEST(GuardedLoop, EmptyArgumentsAreACallWithoutArguments) {
  // "", whitespace only, and no arguments member at all: each is the call with {} (recorded so),
  // which the tool's own schema then judges; none is malformed JSON.
  const std::string none = R"({"tool_calls": [{"name": "collect_context"}]})";
  for (const std::string& empty :
       {call("collect_context", R"("")"), call("collect_context", R"(" \n\t ")"), none}) {
    Ran r = run(steps({empty, kCollect, kReport, kFinish}));
    ASSERT_EQ(r.outcome.terminal, "completed") << empty;
    EXPECT_EQ(r.violations(), std::vector<std::string>{"tool_error"}) << empty;
    const Value first = r.of("model_responded")[0].find("tool_calls")->as_array()[0];
    EXPECT_EQ(first.find("arguments")->as_string(), "{}") << empty;
    ASSERT_FALSE(r.of("tool_called").empty()) << r.trace;
    EXPECT_EQ(json::canonical(*r.of("tool_called")[0].find("arguments")), "{}");
    ASSERT_EQ(r.of("tool_denied").size(), 1u) << r.trace;
    const std::string reason = r.of("tool_denied")[0].find("reason")->as_string();
    EXPECT_NE(reason.find("Validation failed"), std::string::npos) << reason;
  }
}

TEST(GuardedLoop, MalformedArgumentsAreQuotedWithinBoundsAndWholeCharacters) {
  // 119 ASCII bytes then a two-byte character across the 120-byte cut.
  const std::string raw = std::string(119, 'a') + "\u00e9\u00e9";
  const std::string bad = call("collect_context", json::canonical(Value(raw)));
  Ran r = run(steps({bad, kCollect, kReport, kFinish}));
  ASSERT_EQ(r.outcome.terminal, "completed");
  const std::string message = r.of("nudge_sent")[0].find("message")->as_string();
  EXPECT_NE(message.find(std::string(119, 'a') + "\""), std::string::npos) << message;
}

TEST(GuardedLoop, PrematureTerminalEscalatesThroughThreeTiers) {
  Value plan = golden_plan();
  plan.find("budgets")->set("max_premature_terminal_attempts", 5);
  plan.find("budgets")->set("max_iterations", 10);
  Config s;
  s.plan = plan;
  Ran r = run(steps({kFinish, kFinish, kFinish, kFinish, kCollect, kReport, kFinish}), s);
  ASSERT_EQ(r.outcome.terminal, "completed") << r.last_error();
  const auto nudges = r.of("nudge_sent");
  ASSERT_EQ(nudges.size(), 4u);
  EXPECT_NE(nudges[0].find("message")->as_string().find("cannot be called yet"), std::string::npos);
  EXPECT_NE(nudges[1].find("message")->as_string().find("Call one of these tools now"),
            std::string::npos);
  EXPECT_NE(nudges[2].find("message")->as_string().find("STOP."), std::string::npos);
  EXPECT_NE(nudges[3].find("message")->as_string().find("STOP."), std::string::npos);
  EXPECT_NE(nudges[0].find("message")->as_string().find("collect_context"), std::string::npos);
}

TEST(GuardedLoop, PrematureBudgetEndsTheRun) {
  Ran r = run(steps({kFinish, kFinish, kFinish, kCollect}));
  EXPECT_EQ(r.outcome.terminal, "budget_exhausted");
  EXPECT_EQ(r.of("budget_exhausted")[0].find("budget")->as_string(),
            "max_premature_terminal_attempts");
}

TEST(GuardedLoop, CleanBatchResetsTheConsecutiveCounters) {
  Value plan = golden_plan();
  plan.find("budgets")->set("max_iterations", 10);
  Config s;
  s.plan = plan;
  // Two prerequisite violations, a clean batch, two more: never three in a row (the limit is 2).
  Ran r = run(steps({kReport, kReport, kCollect, kFinish, kFinish, kReport, kFinish}), s);
  ASSERT_EQ(r.outcome.terminal, "completed") << r.last_error();
  const auto v = r.of("guardrail_violation");
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[1].find("budget")->find("used")->as_exact_int(), 2);
  EXPECT_EQ(v[2].find("budget")->find("used")->as_exact_int(), 1);
}

TEST(GuardedLoop, PrerequisiteWithArgumentMatchBlocksTheWholeBatch) {
  // write_report needs collect_context with the same path; the batch also carries a valid call.
  const std::string batch =
      R"({"tool_calls": [{"name": "collect_context", "arguments": {"path": "src/lib.rs"}},
                         {"name": "write_report", "arguments": {"path": "other.rs", "body": "x"}}]})";
  Ran r = run(steps({kCollect, batch, kReport, kFinish}));
  ASSERT_EQ(r.outcome.terminal, "completed") << r.last_error();
  EXPECT_EQ(r.violations(), std::vector<std::string>{"prerequisite"});
  const std::string message = r.of("nudge_sent")[0].find("message")->as_string();
  EXPECT_NE(message.find("with the same path"), std::string::npos);
  // Neither call of the blocked batch ran: only the three clean calls reached the boundary.
  EXPECT_EQ(r.outcome.tool_calls, 3);
  EXPECT_EQ(r.of("tool_denied").size(), 2u);
}

TEST(GuardedLoop, PrerequisiteBudgetEndsTheRun) {
  Ran r = run(steps({kReport, kReport, kReport, kCollect}));
  EXPECT_EQ(r.outcome.terminal, "budget_exhausted");
  EXPECT_EQ(r.of("budget_exhausted")[0].find("budget")->as_string(), "max_prerequisite_violations");
}

TEST(GuardedLoop, ToolErrorsAreFedBackAndBudgeted) {
  Config s;
  s.artifacts = false;  // the producer refuses: no artifact directory
  Ran r = run(steps({kCollect, kCollect, kCollect, kCollect}), s);
  EXPECT_EQ(r.outcome.terminal, "budget_exhausted");
  EXPECT_EQ(r.of("budget_exhausted")[0].find("budget")->as_string(), "max_tool_errors");
  EXPECT_EQ(r.of("tool_completed")[0].find("ok")->as_bool(), false);
  EXPECT_EQ(r.violations(), (std::vector<std::string>{"tool_error", "tool_error", "tool_error"}));
}

TEST(GuardedLoop, NoRecoveryEndsAtTheFirstToolError) {
  Config s;
  s.artifacts = false;
  s.guardrails = Guardrails::NoRecovery;
  Ran r = run(steps({kCollect, kCollect}), s);
  EXPECT_EQ(r.outcome.terminal, "budget_exhausted");
  EXPECT_EQ(r.outcome.model_calls, 1);
}

TEST(GuardedLoop, MissingCapabilityIsNotRetryable) {
  Config s;
  s.capabilities = std::vector<std::string>{"workspace.read", "terminal.intent"};
  Ran r = run(steps({kCollect, kCollect}), s);
  EXPECT_EQ(r.outcome.terminal, "tool_failed");
  EXPECT_NE(r.outcome.error.find("artifact.write"), std::string::npos);
  EXPECT_EQ(r.of("tool_denied").size(), 1u);
}

TEST(GuardedLoop, RescuedCallRunsAndIsRecorded) {
  const std::string rescued =
      text(R"(Sure. {"name": "collect_context", "arguments": {"path": "src/lib.rs"}})");
  Ran r = run(steps({rescued, kReport, kFinish}));
  ASSERT_EQ(r.outcome.terminal, "completed") << r.last_error();
  EXPECT_EQ(r.violations(), std::vector<std::string>{"rescue"});
  EXPECT_EQ(r.of("tool_called")[0].find("call_id")->as_string(), "call-1-1");
  Config s;
  s.guardrails = Guardrails::NoRescue;
  Ran off = run(steps({rescued, kCollect, kReport, kFinish}), s);
  ASSERT_EQ(off.outcome.terminal, "completed");
  EXPECT_EQ(off.violations(), std::vector<std::string>{"text_response"});
}

TEST(GuardedLoop, NoNudgeEndsAtTheFirstTextReply) {
  Config s;
  s.guardrails = Guardrails::NoNudge;
  Ran r = run(steps({text("hello"), kCollect}), s);
  EXPECT_EQ(r.outcome.terminal, "budget_exhausted");
  EXPECT_TRUE(r.of("nudge_sent").empty());
}

TEST(GuardedLoop, TerminalAcceptanceChecksRequiredNodesAgainstHistory) {
  // Without step enforcement and without prerequisites on the terminal, only acceptance stands
  // between a premature terminal and a false completion.
  Value plan = golden_plan();
  for (auto& n : plan.find("nodes")->as_array()) {
    if (n.find("node_id")->as_string() == "complete") n.set("prerequisites", json::Array{});
  }
  Config s;
  s.plan = plan;
  s.guardrails = Guardrails::NoSteps;
  Ran r = run(steps({kFinish}), s);
  EXPECT_EQ(r.outcome.terminal, "terminal_rejected");
  EXPECT_NE(r.outcome.error.find("required steps have not succeeded: collect_context"),
            std::string::npos);
}

TEST(GuardedLoop, TerminalAcceptanceRequiresTheTerminalArtifacts) {
  Value plan = golden_plan();
  for (auto& n : plan.find("nodes")->as_array()) {
    if (n.find("node_id")->as_string() == "complete") n.set("prerequisites", json::Array{});
  }
  Config s;
  s.plan = plan;
  Ran r = run(steps({kCollect, kFinish}), s);
  EXPECT_EQ(r.outcome.terminal, "terminal_rejected");
  EXPECT_NE(r.outcome.error.find("artifact 'report' was not produced"), std::string::npos);
}

TEST(GuardedLoop, TerminalAcceptanceChecksTheTerminalMap) {
  Value plan = golden_plan();
  plan.find("terminal_result_map")->set("complete", "BLOCKED");
  Config s;
  s.plan = plan;
  Ran r = run(steps({kCollect, kReport, kFinish}), s);
  EXPECT_EQ(r.outcome.terminal, "terminal_rejected");
  EXPECT_NE(r.outcome.error.find("terminal map"), std::string::npos);
}

TEST(GuardedLoop, BlockedTerminalIsACompletedRunWithBlockedDisposition) {
  const std::string failure = call("write_failure_report", R"({"reason": "no access"})");
  const std::string blocked = call("finish_blocked", R"({"summary": "blocked"})");
  Ran r = run(steps({kCollect, failure, blocked}));
  ASSERT_EQ(r.outcome.terminal, "completed") << r.last_error();
  EXPECT_EQ(r.outcome.output.find("disposition")->as_string(), "blocked");
}

TEST(GuardedLoop, IterationBudgetIsCheckedBeforeEveryCall) {
  Ran r = run(steps({text("a"), text("b"), kCollect, kCollect, kCollect, kCollect, kCollect}));
  EXPECT_EQ(r.outcome.terminal, "budget_exhausted");
  EXPECT_EQ(r.outcome.model_calls, 6);
  EXPECT_EQ(r.of("budget_exhausted")[0].find("budget")->as_string(), "max_iterations");
}

TEST(GuardedLoop, CompactionIsTriggeredByTheContextPolicyAndRecorded) {
  Value plan = golden_plan();
  plan.find("context_policy")->set("budget_tokens", 256);
  plan.find("budgets")->set("max_iterations", 40);
  plan.find("budgets")->set("max_validation_retries", 40);
  Config s;
  s.plan = plan;
  std::vector<std::string> script;
  for (int i = 0; i < 20; ++i) script.push_back(text(std::string(400, 'x')));
  script.insert(script.end(), {kCollect, kReport, kFinish});
  Ran r = run(steps(script), s);
  ASSERT_EQ(r.outcome.terminal, "completed") << r.last_error();
  const auto compacted = r.of("context_compacted");
  ASSERT_FALSE(compacted.empty());
  EXPECT_LT(compacted[0].find("tokens_after")->as_exact_int(),
            compacted[0].find("tokens_before")->as_exact_int());
  EXPECT_NE(compacted[0].find("digest_before")->as_string(),
            compacted[0].find("digest_after")->as_string());
  s.guardrails = Guardrails::NoCompact;
  EXPECT_TRUE(run(steps(script), s).of("context_compacted").empty());
}

// A plan whose context policy warns at `thresholds` of a 1000-token budget and never compacts.
Config warning_config(const std::vector<double>& thresholds, std::vector<model::Request>& sent) {
  Value plan = golden_plan();
  Value& c = *plan.find("context_policy");
  c.set("budget_tokens", 1000);
  c.set("phase_thresholds", json::Array{1.0, 1.0, 1.0});
  c.set("warning_thresholds", json::Array(thresholds.begin(), thresholds.end()));
  plan.find("budgets")->set("max_iterations", 40);
  plan.find("budgets")->set("max_validation_retries", 40);
  Config s;
  s.plan = plan;
  s.requests = &sent;
  return s;
}

TEST(GuardedLoop, ContextWarningsAreSentOnceAtEachThresholdAndNotKept) {
  std::vector<model::Request> sent;
  const Config s = warning_config({0.5, 0.65, 0.8}, sent);
  std::vector<std::string> script;
  for (int i = 0; i < 8; ++i) script.push_back(text(std::string(400, 'x')));
  script.insert(script.end(), {kCollect, kReport, kFinish});
  Ran r = run(steps(script), s);
  ASSERT_EQ(r.outcome.terminal, "completed") << r.last_error();
  const auto requested = r.of("model_requested");
  ASSERT_EQ(requested.size(), sent.size());
  std::vector<double> fired;
  for (std::size_t i = 0; i < requested.size(); ++i) {
    const Value* w = requested[i].find("context_warning");
    const std::vector<model::Message>& messages = sent[i].messages;
    // No request carries an earlier request's warning: the history never keeps it.
    for (std::size_t k = 0; k + 1 < messages.size(); ++k) {
      EXPECT_EQ(messages[k].content.rfind("[Context usage: ", 0), std::string::npos) << i;
    }
    if (w == nullptr) {
      EXPECT_NE(messages.back().content.rfind("[Context usage: ", 0), 0u) << i;
      continue;
    }
    fired.push_back(w->find("threshold")->as_number());
    const std::int64_t tokens = *w->find("tokens")->as_exact_int();
    EXPECT_GE(static_cast<double>(tokens), fired.back() * 1000) << i;
    EXPECT_EQ(w->find("budget_tokens")->as_exact_int(), 1000);
    // What the model was sent: the warning, as the last (user) message of this request.
    EXPECT_EQ(messages.back().role, "user");
    EXPECT_EQ(messages.back().content, w->find("message")->as_string());
    EXPECT_EQ(messages.back().content, context_warning_text(tokens, 1000));
  }
  EXPECT_EQ(fired, (std::vector<double>{0.5, 0.65, 0.8}));
  // The three texts escalate as forge's do.
  const auto message = [&](std::size_t k) {
    for (const Value& e : requested) {
      const Value* w = e.find("context_warning");
      if (w != nullptr && k-- == 0) return w->find("message")->as_string();
    }
    return std::string();
  };
  EXPECT_NE(message(0).find("Be mindful of context usage.]"), std::string::npos) << message(0);
  EXPECT_NE(message(1).find("Context is filling up."), std::string::npos) << message(1);
  EXPECT_NE(message(2).find("Context is nearly full."), std::string::npos) << message(2);
}

TEST(GuardedLoop, ContextWarningCrossingTwoThresholdsIsOneWarning) {
  // One reply takes the estimate past 0.3 and 0.4 at once: one warning (0.4); 0.3 does not fire
  // later on (forge would send it with the next request).
  std::vector<model::Request> sent;
  const Config s = warning_config({0.3, 0.4, 0.95}, sent);
  Ran r = run(
      steps({text(std::string(2000, 'x')), text("a"), text("b"), kCollect, kReport, kFinish}), s);
  ASSERT_EQ(r.outcome.terminal, "completed") << r.last_error();
  std::vector<double> fired;
  for (const Value& e : r.of("model_requested")) {
    if (const Value* w = e.find("context_warning"))
      fired.push_back(w->find("threshold")->as_number());
  }
  EXPECT_EQ(fired, std::vector<double>{0.4});
  // Without warning_thresholds the requests are what they were.
  std::vector<model::Request> plain;
  Config off = s;
  off.plan.find("context_policy")->as_object().pop_back();
  ASSERT_EQ(off.plan.find("context_policy")->find("warning_thresholds"), nullptr);
  off.requests = &plain;
  Ran q = run(steps({text(std::string(2000, 'x')), kCollect, kReport, kFinish}), off);
  for (const Value& e : q.of("model_requested")) EXPECT_EQ(e.find("context_warning"), nullptr);
  for (const auto& request : plain) {
    EXPECT_NE(request.messages.back().content.rfind("[Context usage: ", 0), 0u);
  }
}

TEST(ContextWarnings, ForgesTextAndFiring) {
  EXPECT_EQ(context_warning_text(650, 1000),
            "[Context usage: 65% (650 / 1,000 tokens). Context is filling up. When compaction "
            "triggers, older tool results and reasoning will be condensed. Be concise in your "
            "responses and front-load important information.]");
  EXPECT_EQ(context_warning_text(1234567, 2000000),
            "[Context usage: 62% (1,234,567 / 2,000,000 tokens). Be mindful of context usage.]");
  // Rounded as Python's format(pct, ".0%") rounds (forge's own output for these counts).
  EXPECT_EQ(context_warning_text(655, 1000).substr(0, 20), "[Context usage: 66% ");
  EXPECT_EQ(context_warning_text(125, 1000).substr(0, 20), "[Context usage: 12% ");
  EXPECT_EQ(context_warning_text(205, 256),
            "[Context usage: 80% (205 / 256 tokens). Context is nearly full. Older tool results "
            "and reasoning will be compacted soon \u2014 key information may be lost. Summarize "
            "critical findings now and prioritize completing the current task.]");
  ContextWarnings w({0.5, 0.8}, 1000);
  EXPECT_FALSE(w.check(499));
  EXPECT_EQ(w.check(500)->threshold, 0.5);
  EXPECT_FALSE(w.check(700));
  EXPECT_EQ(w.check(800)->threshold, 0.8);
  EXPECT_FALSE(w.check(900));
  // Back under both (compaction), then over the first again: it fires again.
  EXPECT_FALSE(w.check(100));
  EXPECT_EQ(w.check(600)->threshold, 0.5);
  EXPECT_FALSE(ContextWarnings().check(1000000));
}

TEST(GuardedLoop, CancellationEndsTheRunWithACompleteTrace) {
  std::atomic<bool> cancel{true};
  Config s;
  s.cancel = &cancel;
  Ran r = run(steps({kCollect}), s);
  EXPECT_EQ(r.outcome.terminal, "cancelled");
  EXPECT_EQ(r.names().back(), "run_failed");
}

TEST(GuardedLoop, ProviderFailureIsNotRetried) {
  Ran r = run(R"({"steps": [{"failure": "HTTP 503"}]})");
  EXPECT_EQ(r.outcome.terminal, "model_failed");
  EXPECT_EQ(r.outcome.error, "HTTP 503");
}

TEST(GuardedLoop, DigestModeRecordsNoContentOrArguments) {
  Config s;
  s.content = TraceContent::Digest;
  Ran r = run(steps({kCollect, kReport, kFinish}), s);
  for (const auto& e : r.of("model_responded")) {
    EXPECT_EQ(e.find("tool_calls"), nullptr);
    EXPECT_NE(e.find("tool_calls_sha256"), nullptr);
  }
  EXPECT_EQ(r.of("tool_called")[0].find("arguments"), nullptr);
}

TEST(GuardedLoop, PresetNamesRoundTrip) {
  for (const char* n :
       {"full", "no_rescue", "no_nudge", "no_steps", "no_recovery", "no_compact", "bare"}) {
    auto g = parse_guardrails(n);
    ASSERT_TRUE(g.has_value()) << n;
    EXPECT_EQ(name(*g), n);
  }
  EXPECT_FALSE(parse_guardrails("everything").has_value());
}

// --- Resolution errors (forge's ToolResolutionError): fed back, spending no tool-error budget ---

// forge's basic_2step_stateful_tre as ported (fixtures/harness/forge/basic_2step_tre): a lookup
// that reads facts/<country>.txt (a missing file is a resolution error), then the terminal.
Value tre_plan() {
  const std::string dir = "harness/forge/basic_2step_tre/";
  harness::CompileRequest request;
  request.source =
      harness::parse_source(fixture(dir + "harness.yaml"), harness::Format::Yaml).value();
  request.catalogs.push_back({"catalog.json", json::parse(fixture(dir + "catalog.json")).value()});
  request.profiles.push_back({"builtin", harness::builtin_profiles_json()});
  auto compiled = harness::compile(request);
  EXPECT_TRUE(compiled.ok) << compiled.failure_phase;
  return compiled.plan;
}

Config tre_config() {
  Config s;
  s.plan = tre_plan();
  s.files = {{"facts/france.txt", "France. Capital: Paris.\n"}};
  return s;
}

std::string lookup(const std::string& country) {
  return call("get_country_info", R"({"path": "facts/)" + country + R"(.txt"})");
}
const std::string kAnswer = call("summarize", R"({"summary": "The capital of France is Paris."})");
// A failure, not a resolution error: a directory read as a file.
const std::string kBroken = call("get_country_info", R"({"path": "facts"})");

std::vector<std::int64_t> tool_error_counts(const Ran& r) {
  std::vector<std::int64_t> out;
  for (const auto& v : r.of("guardrail_violation")) {
    if (v.find("kind")->as_string() == "tool_error") {
      out.push_back(*v.find("budget")->find("used")->as_exact_int());
    }
  }
  return out;
}

TEST(GuardedLoop, ResolutionErrorsSpendNoToolErrorBudget) {
  // Three misses in a row, where max_tool_errors is 2: the run completes.
  std::vector<model::Request> requests;
  Config s = tre_config();
  s.requests = &requests;
  Ran r = run(steps({lookup("capital of france"), lookup("French Republic"), lookup("fr"),
                     lookup("france"), kAnswer}),
              s);
  ASSERT_EQ(r.outcome.terminal, "completed") << r.last_error();
  EXPECT_EQ(r.outcome.model_calls, 5);
  EXPECT_EQ(r.outcome.tool_calls, 5);
  EXPECT_EQ(r.violations(), std::vector<std::string>(3, "soft_tool_error"));
  EXPECT_TRUE(r.of("budget_exhausted").empty());
  const auto done = r.of("tool_completed");
  ASSERT_EQ(done.size(), 5u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_FALSE(done[i].find("ok")->as_bool());
    ASSERT_NE(done[i].find("error_kind"), nullptr);
    EXPECT_EQ(done[i].find("error_kind")->as_string(), "soft");
  }
  EXPECT_EQ(done[3].find("error_kind"), nullptr);
  // The violation spends nothing: it names no budget.
  EXPECT_EQ(r.of("guardrail_violation")[0].find("budget"), nullptr);
  // The model reads the miss as forge's resolution error, on the tool channel.
  ASSERT_EQ(requests.size(), 5u);
  const model::Message& fed = requests[1].messages.back();
  EXPECT_EQ(fed.role, "tool");
  EXPECT_TRUE(fed.is_error);
  EXPECT_EQ(fed.content.rfind("[ToolResolutionError] ENOENT: no such file or directory", 0), 0u)
      << fed.content;
}

TEST(GuardedLoop, ResolutionErrorResetsTheConsecutiveToolErrorCount) {
  // failure, miss, failure, failure: the miss resets the count, so the two failures after it are
  // 1 and 2, within max_tool_errors of 2 (counted through the miss, the last would be the 3rd).
  Ran r = run(steps({kBroken, lookup("fr"), kBroken, kBroken, lookup("france"), kAnswer}),
              tre_config());
  ASSERT_EQ(r.outcome.terminal, "completed") << r.last_error();
  EXPECT_EQ(tool_error_counts(r), (std::vector<std::int64_t>{1, 1, 2}));
  EXPECT_EQ(r.violations(), (std::vector<std::string>{"tool_error", "soft_tool_error", "tool_error",
                                                      "tool_error"}));
}

TEST(GuardedLoop, ResolutionErrorsAreBoundedByMaxIterations) {
  // max_iterations is 15: fifteen misses, and the sixteenth call is never made.
  Ran r = run(steps(std::vector<std::string>(16, lookup("atlantis"))), tre_config());
  EXPECT_EQ(r.outcome.terminal, "budget_exhausted");
  EXPECT_EQ(r.outcome.model_calls, 15);
  EXPECT_EQ(r.of("budget_exhausted")[0].find("budget")->as_string(), "max_iterations");
  EXPECT_EQ(r.violations(), std::vector<std::string>(15, "soft_tool_error"));
}

TEST(GuardedLoop, AMissDoesNotCompleteTheStep) {
  // The lookup missed, so the terminal is still premature.
  Ran r = run(steps({lookup("fr"), kAnswer, lookup("france"), kAnswer}), tre_config());
  ASSERT_EQ(r.outcome.terminal, "completed") << r.last_error();
  EXPECT_EQ(r.violations(), (std::vector<std::string>{"soft_tool_error", "premature_terminal"}));
}

TEST(GuardedLoop, ABatchWithAFailureAndAMissSpendsOneToolError) {
  const std::string both =
      R"({"tool_calls": [{"name": "get_country_info", "arguments": {"path": "facts/fr.txt"}},
                         {"name": "get_country_info", "arguments": {"path": "facts"}}]})";
  Ran r = run(steps({both, both, both}), tre_config());
  EXPECT_EQ(r.outcome.terminal, "budget_exhausted");
  EXPECT_EQ(r.of("budget_exhausted")[0].find("budget")->as_string(), "max_tool_errors");
  EXPECT_EQ(tool_error_counts(r), (std::vector<std::int64_t>{1, 2, 3}));
}

TEST(GuardedLoop, NoRecoveryStillFeedsResolutionErrorsBack) {
  // no_recovery makes max_tool_errors 0; a miss spends none of it.
  Config s = tre_config();
  s.guardrails = Guardrails::NoRecovery;
  Ran r = run(steps({lookup("fr"), lookup("france"), kAnswer}), s);
  ASSERT_EQ(r.outcome.terminal, "completed") << r.last_error();
  Ran hard = run(steps({kBroken, lookup("france"), kAnswer}), s);
  EXPECT_EQ(hard.outcome.terminal, "budget_exhausted");
}

}  // namespace
}  // namespace mf::runtime
