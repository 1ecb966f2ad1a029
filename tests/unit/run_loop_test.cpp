#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "mf/json/canonical.hpp"
#include "mf/json/jsonl.hpp"
#include "mf/model/scripted.hpp"
#include "mf/runtime/run_loop.hpp"

namespace mf::runtime {
namespace {

std::string fixture(const std::string& rel) {
  std::ifstream in(std::string(MF_SOURCE_DIR) + "/fixtures/" + rel, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Task valid_task() {
  return parse_task(fixture("forge/task-valid.json")).value();
}

std::unique_ptr<model::ScriptedModel> script(std::string_view json) {
  return std::move(model::ScriptedModel::parse(json).value());
}

struct Recorded {
  RunOutcome outcome;
  std::vector<json::Value> events;
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : events) out.push_back(e.find("event")->as_string());
    return out;
  }
};

Recorded run(const Task& task, model::Model& m, RunOptions options = {}) {
  std::string sink;
  trace::WriterOptions wo;
  wo.run_id = "run-test";
  wo.fixed_clock = true;
  auto writer = trace::Writer::open_memory(&sink, wo);
  EXPECT_TRUE(writer.ok());
  Result<RunOutcome> outcome = run_task(task, m, **writer, options);
  EXPECT_TRUE(outcome.ok()) << (outcome.ok() ? "" : outcome.diagnostics().front().message);
  Recorded r{outcome.ok() ? *outcome : RunOutcome{}, {}};
  json::JsonlReader reader(sink);
  Result<json::Value> line = json::Value();
  while (reader.next(line)) r.events.push_back(line.value());
  return r;
}

using Names = std::vector<std::string>;

TEST(TaskValidation, AcceptsTheForgeFixture) {
  Task t = valid_task();
  EXPECT_EQ(t.id, "repository-risk-review");
  EXPECT_EQ(t.budget.max_model_calls, 2);
  EXPECT_EQ(t.budget.max_repairs, 1);
  EXPECT_EQ(t.budget.max_output_bytes, 4096);
  EXPECT_EQ(t.sha256, "fc4aa5898f737ba4c5a8cb7b2c2c380e1e133e2696b7915a5a3907332ca840f6");
}

TEST(TaskValidation, EachRuleHasItsCodeAndPointer) {
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"empty-id", "MF-S022", "/id"},
      {"empty-objective", "MF-S022", "/objective"},
      {"empty-required-field", "MF-S022", "/output_contract/required_fields/1"},
      {"zero-model-calls", "MF-S024", "/budget/max_model_calls"},
      {"repairs-not-below-calls", "MF-S024", "/budget/max_repairs"},
      {"unknown-field", "MF-S021", "/priority"},
      {"unknown-budget-field", "MF-S021", "/budget/max_tokens"},
      {"bad-risk", "MF-S020", "/risk"},
      {"missing-budget", "MF-S020", "/budget"},
      {"wrong-type", "MF-S020", "/budget/max_model_calls"},
      {"duplicate-key", "MF-S006", "/id"},
      {"not-an-object", "MF-S012", ""},
  };
  for (const auto& [name, code, pointer] : cases) {
    Result<Task> t = parse_task(fixture("forge/invalid/" + name + ".json"));
    ASSERT_FALSE(t.ok()) << name;
    ASSERT_EQ(t.diagnostics().size(), 1u) << name << ": " << t.diagnostics()[0].message;
    EXPECT_EQ(t.diagnostics()[0].code, code) << name;
    EXPECT_EQ(t.diagnostics()[0].pointer, pointer) << name;
  }
}

TEST(RunLoop, ValidFirstResponseCompletesInOneCall) {
  auto m = script(fixture("forge/responses-valid.json"));
  Recorded r = run(valid_task(), *m);
  EXPECT_EQ(r.outcome.terminal, "completed");
  EXPECT_EQ(r.outcome.model_calls, 1);
  EXPECT_EQ(r.outcome.repairs, 0);
  EXPECT_EQ(r.outcome.output.find("evidence")->as_string(), "src/lib.rs:12");
  EXPECT_EQ(r.names(),
            (Names{"run_started", "model_requested", "model_responded", "run_completed"}));
  const json::Value& responded = r.events[2];
  EXPECT_EQ(responded.find("content_bytes")->as_number(), 80);
  EXPECT_EQ(responded.find("content_sha256")->as_string().size(), 64u);
  EXPECT_EQ(responded.find("content"), nullptr);  // not inline by default
  EXPECT_EQ(r.events[0].find("task_sha256")->as_string(),
            "fc4aa5898f737ba4c5a8cb7b2c2c380e1e133e2696b7915a5a3907332ca840f6");
}

TEST(RunLoop, OneTargetedRepairCarriesTheExactViolation) {
  auto m = script(fixture("forge/responses-repair.json"));
  Recorded r = run(valid_task(), *m);
  EXPECT_EQ(r.outcome.terminal, "completed");
  EXPECT_EQ(r.outcome.model_calls, 2);
  EXPECT_EQ(r.outcome.repairs, 1);
  EXPECT_EQ(r.names(),
            (Names{"run_started", "model_requested", "model_responded", "verification_failed",
                   "model_requested", "model_responded", "run_completed"}));
  const json::Value& v = r.events[3].find("violations")->as_array().at(0);
  EXPECT_EQ(v.find("path")->as_string(), "$.evidence");
  EXPECT_EQ(v.find("code")->as_string(), "missing_required_field");
  EXPECT_EQ(v.find("layer")->as_string(), "required");
  EXPECT_EQ(r.events[4].find("kind")->as_string(), "repair");
  EXPECT_EQ(*r.events[4].find("violations"), *r.events[3].find("violations"));
}

TEST(RunLoop, InvalidWithoutRepairBudgetIsInvalidOutput) {
  auto m = script(fixture("forge/responses-invalid.json"));
  Recorded r = run(parse_task(fixture("forge/task-no-repair.json")).value(), *m);
  EXPECT_EQ(r.outcome.terminal, "invalid_output");
  EXPECT_EQ(r.outcome.model_calls, 1);
  EXPECT_EQ(r.names(), (Names{"run_started", "model_requested", "model_responded",
                              "verification_failed", "run_failed"}));
  EXPECT_EQ(r.events.back().find("terminal")->as_string(), "invalid_output");
  EXPECT_EQ(r.events.back().find("violations")->as_array()[0].find("code")->as_string(),
            "invalid_json");
}

TEST(RunLoop, ProviderFailureIsNeverRepaired) {
  auto m = script(fixture("forge/responses-provider-failure.json"));
  Recorded r = run(valid_task(), *m);
  EXPECT_EQ(r.outcome.terminal, "model_failed");
  EXPECT_EQ(r.outcome.model_calls, 1);
  EXPECT_EQ(r.outcome.repairs, 0);
  EXPECT_EQ(r.names(), (Names{"run_started", "model_requested", "model_failed", "run_failed"}));
}

TEST(RunLoop, ExhaustedScriptIsAModelFailure) {
  auto m = script(R"({"steps":[{"content":"{\"risk\":\"r\"}"}]})");
  Recorded r = run(valid_task(), *m);
  EXPECT_EQ(r.outcome.terminal, "model_failed");
  EXPECT_EQ(r.outcome.model_calls, 2);
  EXPECT_EQ(r.events[r.events.size() - 2].find("error")->as_string(), model::kScriptExhausted);
}

TEST(RunLoop, VerifierLayersInOrder) {
  Task t = valid_task();
  t.budget.max_output_bytes = 20;
  EXPECT_EQ(verify_output(t, std::string(21, ' ')).violations[0].code, "output_too_large");
  t = valid_task();
  EXPECT_EQ(verify_output(t, "{").violations[0].layer, "json");
  EXPECT_EQ(verify_output(t, "[1]").violations[0].code, "not_an_object");
  auto missing = verify_output(t, "{}").violations;
  ASSERT_EQ(missing.size(), 2u);
  EXPECT_EQ(missing[0].path, "$.risk");
  EXPECT_EQ(missing[1].path, "$.evidence");
  auto unknown = verify_output(t, R"({"risk":"r","evidence":"e","extra":1})").violations;
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_EQ(unknown[0].code, "unknown_field");
  EXPECT_EQ(unknown[0].path, "$.extra");
  t.contract.reject_unknown_fields = false;
  EXPECT_TRUE(verify_output(t, R"({"risk":"r","evidence":"e","extra":1})").violations.empty());
  SemanticCheck semantic = [](const json::Value&) {
    return std::vector<Violation>{{"semantic", "$.evidence", "bad_range", "no"}};
  };
  EXPECT_EQ(verify_output(t, R"({"risk":"r","evidence":"e"})", semantic).violations[0].layer,
            "semantic");
}

TEST(RunLoop, CallBudgetIsEnforcedBeforeTheCall) {
  // Validation keeps max_repairs below max_model_calls, so only a task built in code can promise
  // more repairs than calls; the loop still refuses the call the budget does not cover.
  Task t = valid_task();
  t.budget.max_model_calls = 1;
  t.budget.max_repairs = 1;
  auto m = script(fixture("forge/responses-repair.json"));
  Recorded r = run(t, *m);
  EXPECT_EQ(r.outcome.terminal, "budget_exhausted");
  EXPECT_EQ(r.outcome.model_calls, 1);
  EXPECT_EQ(m->remaining(), 1u);  // the second step was never consumed
  EXPECT_EQ(r.names(), (Names{"run_started", "model_requested", "model_responded",
                              "verification_failed", "budget_exhausted", "run_failed"}));
}

TEST(RunLoop, CancelledBeforeTheFirstCallStillEndsTheTrace) {
  auto m = script(fixture("forge/responses-valid.json"));
  std::atomic<bool> cancel{true};
  RunOptions options;
  options.cancel = &cancel;
  Recorded r = run(valid_task(), *m, options);
  EXPECT_EQ(r.outcome.terminal, "cancelled");
  EXPECT_EQ(r.names(), (Names{"run_started", "run_failed"}));
}

TEST(RunLoop, InlineContentIsRecordedOnlyWhenAsked) {
  auto m = script(fixture("forge/responses-valid.json"));
  RunOptions options;
  options.trace_content = TraceContent::Inline;
  Recorded r = run(valid_task(), *m, options);
  ASSERT_NE(r.events[2].find("content"), nullptr);
  EXPECT_NE(r.events[2].find("content")->as_string().find("src/lib.rs:12"), std::string::npos);
}

// A secret the model echoes, or a provider puts in its error, reaches neither the result nor the
// trace: canaries in the output, the inline content, a violation and the error.
TEST(RunLoop, SecretsReachNeitherTheResultNorTheTrace) {
  const std::string key = "sk-" + std::string(32, 'Q') + "9876";
  auto echo = script(R"({"steps":[{"content":"{\"risk\":\")" + key +
                     R"(\",\"evidence\":\"src/lib.rs:12\",\")" + key +
                     R"(\":1}"},)"
                     R"({"content":"{\"risk\":\")" +
                     key + R"(\",\"evidence\":\"src/lib.rs:12\"}"}]})");
  RunOptions options;
  options.trace_content = TraceContent::Inline;
  Recorded r = run(valid_task(), *echo, options);
  ASSERT_EQ(r.outcome.terminal, "completed");
  EXPECT_EQ(json::canonical(r.outcome.output).find("sk-QQQ"), std::string::npos);
  for (const auto& e : r.events) {
    EXPECT_EQ(json::canonical(e).find("sk-QQQ"), std::string::npos) << json::canonical(e);
  }
  auto failing = script(R"({"steps":[{"failure":"HTTP 401: key )" + key + R"( rejected"}]})");
  Recorded f = run(valid_task(), *failing);
  ASSERT_EQ(f.outcome.terminal, "model_failed");
  for (const auto& e : f.events) {
    EXPECT_EQ(json::canonical(e).find("sk-QQQ"), std::string::npos) << json::canonical(e);
  }
}

}  // namespace
}  // namespace mf::runtime

namespace mf::runtime {
namespace {

TEST(EvidenceCheck, ResolvesLocatorsThroughTheConfinedReader) {
  const SemanticCheck check = evidence_check(std::string(MF_SOURCE_DIR) + "/fixtures/repository");
  auto code = [&](const std::string& evidence) {
    json::Value out;
    out.set("evidence", evidence);
    auto vs = check(out);
    return vs.empty() ? std::string("ok") : vs[0].code;
  };
  EXPECT_EQ(code("src/lib.rs:12"), "ok");
  EXPECT_EQ(code("src/lib.rs:11-13"), "ok");
  EXPECT_EQ(code("src/lib.rs"), "malformed_locator");
  EXPECT_EQ(code("src/lib.rs:0"), "malformed_locator");
  EXPECT_EQ(code("src/lib.rs:13-12"), "malformed_locator");
  EXPECT_EQ(code("src/lib.rs:x-2"), "malformed_locator");
  EXPECT_EQ(code("src/missing.rs:1"), "missing_file");
  EXPECT_EQ(code("../../etc/passwd:1"), "missing_file");
  EXPECT_EQ(code("src/lib.rs:900"), "bad_range");
  EXPECT_EQ(code("src/lib.rs:20-30"), "bad_range");
  json::Value not_string;
  not_string.set("evidence", 12);
  EXPECT_EQ(check(not_string)[0].code, "malformed_locator");
}

}  // namespace
}  // namespace mf::runtime
