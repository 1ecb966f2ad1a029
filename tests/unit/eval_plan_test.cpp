#include <gtest/gtest.h>

#include <stdlib.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "mf/eval/report.hpp"
#include "mf/eval/runner.hpp"
#include "mf/eval/suite.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"
#include "temp_dir.hpp"

namespace mf::eval {
namespace {

const std::string kAblation = std::string(MF_SOURCE_DIR) + "/fixtures/harness/ablation";

// One plan case (relative to the ablation fixtures) with the given members after its id.
std::string plan_case(std::string_view members) {
  return R"({"suite_id":"s","cases":[{"id":"c",)" + std::string(members) + "}]}";
}

// The golden plan over its correct trajectory, with `extra` members and this expect.
std::string golden(std::string_view expect, std::string_view extra = "") {
  return plan_case(R"("plan":"golden.plan.json","model":"scripted:../runs/golden-ok.json",)"
                   R"("workspace":"../../repository",)" +
                   std::string(extra) + R"("expect":)" + std::string(expect));
}

RunOptions fixed(unsigned jobs = 1) {
  RunOptions o;
  o.jobs = jobs;
  o.fixed_clock = true;
  return o;
}

json::Value run_ok(const Suite& suite, const RunOptions& options) {
  Result<SuiteRun> run = run_suite(suite, options);
  EXPECT_TRUE(run.ok()) << (run.ok() ? "" : run.diagnostics()[0].message);
  if (!run.ok()) return json::Value();
  // What the runner writes, the strict report reader accepts.
  // The report written from its entries is the canonical form of the whole document.
  const json::Value document = run->document();
  EXPECT_EQ(run->bytes(), json::canonical_file(document));
  Result<Report> typed = parse_report(run->bytes());
  EXPECT_TRUE(typed.ok()) << (typed.ok() ? "" : typed.diagnostics()[0].message);
  return document;
}

const json::Value& only_case(const json::Value& report) {
  return report.find("cases")->as_array().at(0);
}

TEST(EvalPlanSuite, EachRuleHasItsCodeAndPointer) {
  const std::string p = R"("plan":"p.json","model":"sim:t.json?seed=1",)";
  const std::vector<std::tuple<std::string, std::string, std::string, std::string>> cases = {
      {"task and plan", plan_case(p + R"("task":"t.json","expect":{"model_calls":1})"), "MF-S020",
       "/cases/0/task"},
      {"empty plan", plan_case(R"("plan":"","model":"sim:t.json","expect":{"model_calls":1})"),
       "MF-S020", "/cases/0/plan"},
      {"plan not a string",
       plan_case(R"("plan":1,"model":"sim:t.json","expect":{"model_calls":1})"), "MF-S020",
       "/cases/0/plan"},
      {"missing model", plan_case(R"("plan":"p.json","expect":{"model_calls":1})"), "MF-S020",
       "/cases/0/model"},
      {"other backend", plan_case(R"("plan":"p","model":"ollama:x","expect":{"model_calls":1})"),
       "MF-S020", "/cases/0/model"},
      {"sim without a file",
       plan_case(R"("plan":"p","model":"sim:?seed=1","expect":{"model_calls":1})"), "MF-S020",
       "/cases/0/model"},
      {"scripted without a file",
       plan_case(R"("plan":"p","model":"scripted:","expect":{"model_calls":1})"), "MF-S020",
       "/cases/0/model"},
      {"model from stdin",
       plan_case(R"("plan":"p","model":"sim:-?seed=1","expect":{"model_calls":1})"), "MF-S020",
       "/cases/0/model"},
      {"unknown preset", plan_case(p + R"("guardrails":"none","expect":{"model_calls":1})"),
       "MF-S020", "/cases/0/guardrails"},
      {"preset not a string", plan_case(p + R"("guardrails":true,"expect":{"model_calls":1})"),
       "MF-S020", "/cases/0/guardrails"},
      {"empty workspace", plan_case(p + R"("workspace":"","expect":{"model_calls":1})"), "MF-S020",
       "/cases/0/workspace"},
      {"request not an object", plan_case(p + R"("request":"go","expect":{"model_calls":1})"),
       "MF-S020", "/cases/0/request"},
      {"request member unknown",
       plan_case(p + R"("request":{"prompt":"go"},"expect":{"model_calls":1})"), "MF-S021",
       "/cases/0/request/prompt"},
      {"request instruction not a string",
       plan_case(p + R"("request":{"instruction":1},"expect":{"model_calls":1})"), "MF-S020",
       "/cases/0/request/instruction"},
      {"request context not an object",
       plan_case(p + R"("request":{"context":[]},"expect":{"model_calls":1})"), "MF-S020",
       "/cases/0/request/context"},
      {"unknown case member", plan_case(p + R"("expect":{"model_calls":1},"seed":1)"), "MF-S021",
       "/cases/0/seed"},
      {"empty expect", plan_case(p + R"("expect":{})"), "MF-S020", "/cases/0/expect"},
      {"task-only check", plan_case(p + R"("expect":{"repairs":0})"), "MF-S021",
       "/cases/0/expect/repairs"},
      {"output check", plan_case(p + R"("expect":{"output":{}})"), "MF-S021",
       "/cases/0/expect/output"},
      {"task-only terminal", plan_case(p + R"("expect":{"terminal":"invalid_output"})"), "MF-S020",
       "/cases/0/expect/terminal"},
      {"terminal no plan case can reach", plan_case(p + R"("expect":{"terminal":"finished"})"),
       "MF-S020", "/cases/0/expect/terminal"},
      {"bad disposition", plan_case(p + R"("expect":{"disposition":"ok"})"), "MF-S020",
       "/cases/0/expect/disposition"},
      {"disposition of a failed run",
       plan_case(p + R"("expect":{"terminal":"budget_exhausted","disposition":"success"})"),
       "MF-S020", "/cases/0/expect/disposition"},
      {"negative tool calls", plan_case(p + R"("expect":{"tool_calls":-1})"), "MF-S020",
       "/cases/0/expect/tool_calls"},
      {"fractional model calls", plan_case(p + R"("expect":{"model_calls":1.5})"), "MF-S020",
       "/cases/0/expect/model_calls"},
      {"unknown violation kind", plan_case(p + R"("expect":{"violations":{"nudge":1}})"), "MF-S021",
       "/cases/0/expect/violations/nudge"},
      {"negative violation count", plan_case(p + R"("expect":{"violations":{"rescue":-1}})"),
       "MF-S020", "/cases/0/expect/violations/rescue"},
      {"fractional violation count", plan_case(p + R"("expect":{"violations":{"rescue":0.5}})"),
       "MF-S020", "/cases/0/expect/violations/rescue"},
      {"violation count not a number", plan_case(p + R"("expect":{"violations":{"rescue":"1"}})"),
       "MF-S020", "/cases/0/expect/violations/rescue"},
      {"violations check nothing", plan_case(p + R"("expect":{"violations":{}})"), "MF-S020",
       "/cases/0/expect/violations"},
      {"tools not an array", plan_case(p + R"("expect":{"tools":"read"})"), "MF-S020",
       "/cases/0/expect/tools"},
      {"tool name not a string", plan_case(p + R"("expect":{"tools":["read",2]})"), "MF-S020",
       "/cases/0/expect/tools/1"},
      {"empty tool name", plan_case(p + R"("expect":{"tools":[""]})"), "MF-S020",
       "/cases/0/expect/tools/0"},
      // A task case keeps its own vocabulary: the plan members are unknown there.
      {"task case with a preset",
       R"({"suite_id":"s","cases":[{"id":"a","task":"t","model":"scripted:r","guardrails":"full","expect":{"repairs":0}}]})",
       "MF-S021", "/cases/0/guardrails"},
      {"task case with a plan check",
       R"({"suite_id":"s","cases":[{"id":"a","task":"t","model":"scripted:r","expect":{"tool_calls":0}}]})",
       "MF-S021", "/cases/0/expect/tool_calls"},
      {"task case with a plan terminal",
       R"({"suite_id":"s","cases":[{"id":"a","task":"t","model":"scripted:r","expect":{"terminal":"tool_failed"}}]})",
       "MF-S020", "/cases/0/expect/terminal"},
      {"task case with a sim model",
       R"({"suite_id":"s","cases":[{"id":"a","task":"t","model":"sim:r","expect":{"repairs":0}}]})",
       "MF-S020", "/cases/0/model"},
  };
  for (const auto& [name, bytes, code, pointer] : cases) {
    Result<Suite> s = parse_suite(bytes);
    ASSERT_FALSE(s.ok()) << name;
    ASSERT_EQ(s.diagnostics().size(), 1u) << name << ": " << s.diagnostics()[1].message;
    EXPECT_EQ(s.diagnostics()[0].code, code) << name << ": " << s.diagnostics()[0].message;
    EXPECT_EQ(s.diagnostics()[0].pointer, pointer) << name << ": " << s.diagnostics()[0].message;
  }
}

TEST(EvalPlanSuite, ParsesEveryMemberOfAPlanCase) {
  Result<Suite> s = parse_suite(
      plan_case(R"("plan":"p.json","model":"sim:t.json?seed=3&faults=0.5","workspace":"ws",)"
                R"("request":{"instruction":"go","context":{"k":1}},"guardrails":"no_steps",)"
                R"("expect":{"terminal":"completed","disposition":"blocked","model_calls":2,)"
                R"("tool_calls":1,"violations":{"rescue":1,"tool_error":0},"tools":["a","b"]})"));
  ASSERT_TRUE(s.ok()) << s.diagnostics()[0].message;
  const Case c = *s->load_case(Suite::Reader(s->cases)[0]);
  EXPECT_EQ(c.kind, CaseKind::Plan);
  EXPECT_EQ(c.plan, "p.json");
  EXPECT_EQ(c.model, "sim:t.json?seed=3&faults=0.5");
  EXPECT_EQ(c.workspace, "ws");
  EXPECT_EQ(json::canonical(c.request), R"({"context":{"k":1},"instruction":"go"})");
  EXPECT_EQ(c.guardrails, runtime::Guardrails::NoSteps);
  EXPECT_EQ(c.expect.disposition, "blocked");
  EXPECT_EQ(c.expect.tool_calls, 1);
  const std::vector<std::pair<std::string, std::int64_t>> violations = {{"rescue", 1},
                                                                        {"tool_error", 0}};
  EXPECT_EQ(c.expect.violations, violations);
  EXPECT_EQ(c.expect.tools, (std::vector<std::string>{"a", "b"}));

  // Defaults: no workspace (the suite's directory), no request, every guardrail on.
  Result<Suite> d =
      parse_suite(plan_case(R"("plan":"p","model":"scripted:r","expect":{"tools":[]})"));
  ASSERT_TRUE(d.ok());
  const Case dc = *d->load_case(Suite::Reader(d->cases)[0]);
  EXPECT_FALSE(dc.workspace.has_value());
  EXPECT_TRUE(dc.request.is_null());
  EXPECT_EQ(dc.guardrails, runtime::Guardrails::Full);
  EXPECT_EQ(dc.expect.tools, std::vector<std::string>{});
}

TEST(EvalPlanSuite, PlansModelsAndWorkspacesAreValidatedAtLoad) {
  auto problem = [](const std::string& bytes, const std::string& base) {
    Result<Suite> s = load_suite_bytes(bytes, base);
    EXPECT_FALSE(s.ok());
    return s.ok() ? diag::Diagnostic{} : s.diagnostics().at(0);
  };
  const std::string ok_model = R"("model":"scripted:../runs/golden-ok.json",)";
  const std::string ws = R"("workspace":"../../repository",)";
  const std::string expect = R"("expect":{"terminal":"completed"})";

  diag::Diagnostic d =
      problem(plan_case(R"("plan":"nope.json",)" + ok_model + ws + expect), kAblation);
  EXPECT_EQ(d.code, "MF-S013");
  EXPECT_EQ(d.pointer, "/cases/0/plan");

  // A plan the loader refuses: an edited byte breaks its digest.
  test::TempDir dir;
  std::string plan = test::read_file(kAblation + "/golden.plan.json");
  ASSERT_FALSE(plan.empty());
  std::filesystem::create_directories(dir / "runs");
  std::filesystem::copy_file(std::string(MF_SOURCE_DIR) + "/fixtures/harness/runs/golden-ok.json",
                             dir / "runs/golden-ok.json");
  const std::string edited = [&] {
    std::string out = plan;
    const std::string from = "Preserve this first instruction.";
    out.replace(out.find(from), from.size(), "Ignore this first instruction.");
    return out;
  }();
  test::write_file(dir / "tampered.json", edited);
  test::write_file(dir / "plan.json", plan);
  const std::string local_model = R"("model":"scripted:runs/golden-ok.json",)";
  d = problem(plan_case(R"("plan":"tampered.json",)" + local_model + expect), dir.path().string());
  EXPECT_EQ(d.code, "MF-L004");
  EXPECT_EQ(d.pointer, "/cases/0/plan");
  EXPECT_NE(d.message.find("tampered.json"), std::string::npos) << d.message;
  // A task file is not a plan either.
  test::write_file(dir / "task.json", R"({"task_id":"t"})");
  d = problem(plan_case(R"("plan":"task.json",)" + local_model + expect), dir.path().string());
  EXPECT_EQ(d.pointer, "/cases/0/plan");

  // The model opens as mf-run would open it: its parameters and its file are checked.
  d = problem(plan_case(R"("plan":"plan.json","model":"sim:runs/golden-ok.json?seed=x",)" + expect),
              dir.path().string());
  EXPECT_EQ(d.code, "MF-U001");
  EXPECT_EQ(d.pointer, "/cases/0/model");
  d = problem(plan_case(R"("plan":"plan.json","model":"sim:runs/absent.json?seed=1",)" + expect),
              dir.path().string());
  EXPECT_EQ(d.code, "MF-S013");
  EXPECT_EQ(d.pointer, "/cases/0/model");
  test::write_file(dir / "runs/bad.json", R"({"steps":[{"content":"a","failure":"b"}]})");
  d = problem(plan_case(R"("plan":"plan.json","model":"scripted:runs/bad.json",)" + expect),
              dir.path().string());
  EXPECT_EQ(d.pointer, "/cases/0/model");
  EXPECT_NE(d.message.find("bad.json"), std::string::npos) << d.message;

  // The workspace must be a directory.
  d = problem(plan_case(R"("plan":"plan.json",)" + local_model + R"("workspace":"gone",)" + expect),
              dir.path().string());
  EXPECT_EQ(d.code, "MF-T009");
  EXPECT_EQ(d.pointer, "/cases/0/workspace");
  d = problem(
      plan_case(R"("plan":"plan.json",)" + local_model + R"("workspace":"plan.json",)" + expect),
      dir.path().string());
  EXPECT_EQ(d.pointer, "/cases/0/workspace");

  // Every problem of every case at once, before anything runs.
  Result<Suite> all = load_suite_bytes(
      R"({"suite_id":"s","cases":[{"id":"a","plan":"tampered.json","model":"sim:runs/absent.json",)"
      R"("workspace":"gone","expect":{"tool_calls":0}},{"id":"b","plan":"plan.json",)"
      R"("model":"scripted:runs/bad.json","expect":{"tool_calls":0}}]})",
      dir.path().string());
  ASSERT_FALSE(all.ok());
  std::vector<std::string> pointers;
  for (const auto& p : all.diagnostics()) pointers.push_back(p.pointer);
  EXPECT_EQ(pointers, (std::vector<std::string>{"/cases/0/plan", "/cases/0/model",
                                                "/cases/0/workspace", "/cases/1/model"}));

  // The defaults resolve against the suite's directory: the copied plan and trajectory load.
  Result<Suite> good = load_suite_bytes(plan_case(R"("plan":"plan.json",)" + local_model + expect),
                                        dir.path().string());
  ASSERT_TRUE(good.ok()) << good.diagnostics()[0].message;
  EXPECT_EQ(good->load_case(Suite::Reader(good->cases)[0])->workspace_path, dir.path().string());
  EXPECT_EQ(good->load_case(Suite::Reader(good->cases)[0])->plan_path,
            (dir / "plan.json").string());
  EXPECT_EQ(good->load_case(Suite::Reader(good->cases)[0])->model_spec,
            "scripted:" + (dir / "runs/golden-ok.json").string());
  Result<Suite> sim = load_suite_bytes(
      plan_case(R"("plan":"plan.json","model":"sim:runs/golden-ok.json?seed=2&faults=0.5",)" +
                expect),
      dir.path().string());
  ASSERT_TRUE(sim.ok()) << sim.diagnostics()[0].message;
  EXPECT_EQ(sim->load_case(Suite::Reader(sim->cases)[0])->model_spec,
            "sim:" + (dir / "runs/golden-ok.json").string() + "?seed=2&faults=0.5");
}

TEST(EvalPlanRun, TheGoldenPlanPassesEveryCheck) {
  Result<Suite> suite = load_suite_bytes(
      golden(R"({"terminal":"completed","disposition":"success","model_calls":3,"tool_calls":3,)"
             R"("violations":{"rescue":0,"tool_error":0},)"
             R"("tools":["collect_context","write_report","finish_success"]})"),
      kAblation);
  ASSERT_TRUE(suite.ok()) << suite.diagnostics()[0].message;
  json::Value report = run_ok(*suite, fixed());
  const json::Value& c = only_case(report);
  EXPECT_EQ(c.find("status")->as_string(), "passed") << json::canonical(c);
  EXPECT_EQ(c.find("terminal")->as_string(), "completed");
  EXPECT_EQ(c.find("disposition")->as_string(), "success");
  EXPECT_EQ(c.find("tool_calls")->as_number(), 3);
  EXPECT_EQ(c.find("repairs")->as_number(), 0);
  EXPECT_EQ(json::canonical(*c.find("violations")), "{}");
  // The trajectory's usage, summed over its three replies.
  EXPECT_EQ(json::canonical(*c.find("usage")), R"({"input_tokens":530,"output_tokens":62})");
  EXPECT_EQ(c.find("latency_ms"), nullptr);
}

TEST(EvalPlanRun, FailedChecksAreExactEntries) {
  // golden-recover: a premature terminal, two rescues, an unknown tool and a prerequisite.
  Result<Suite> suite = load_suite_bytes(
      plan_case(R"("plan":"golden.plan.json","model":"scripted:../runs/golden-recover.json",)"
                R"("workspace":"../../repository","expect":{"terminal":"completed",)"
                R"("disposition":"blocked","model_calls":5,"tool_calls":3,)"
                R"("violations":{"rescue":2,"premature_terminal":3,"text_response":1},)"
                R"("tools":["collect_context","finish_success"]})"),
      kAblation);
  ASSERT_TRUE(suite.ok()) << suite.diagnostics()[0].message;
  json::Value report = run_ok(*suite, fixed());
  const json::Value& c = only_case(report);
  EXPECT_EQ(c.find("status")->as_string(), "failed");
  EXPECT_EQ(json::canonical(*c.find("violations")),
            R"({"premature_terminal":1,"prerequisite":1,"rescue":2,"unknown_tool":1})");
  EXPECT_EQ(json::canonical(*c.find("failures")),
            R"([{"actual":"success","check":"disposition","expected":"blocked"},)"
            R"({"actual":6,"check":"model_calls","expected":5},)"
            R"({"actual":1,"check":"violations/premature_terminal","expected":3},)"
            R"({"actual":0,"check":"violations/text_response","expected":1},)"
            R"({"actual":["collect_context","write_report","finish_success"],"check":"tools",)"
            R"("expected":["collect_context","finish_success"]}])");
  // Wilson at 0 of 1: [0, z^2 / (1 + z^2)]. The run was accepted as a success although its
  // checks failed: a false closure, in Millforge's scoring.
  EXPECT_EQ(json::canonical(*report.find("summary")),
            R"({"cases":1,"failed":1,"false_closure_rate":1,"outcomes":{"false_closure":1},)"
            R"("pass_rate":0,"passed":0,"wilson95":[0,0.7934506856227626]})");
}

TEST(EvalPlanRun, PresetAndRequestReachTheRun) {
  // Without rescue the same trajectory runs out of validation retries.
  const std::string members =
      R"("plan":"golden.plan.json","model":"scripted:../runs/golden-recover.json",)"
      R"("workspace":"../../repository","request":{"instruction":"Report on src/lib.rs."},)";
  Result<Suite> suite =
      load_suite_bytes(R"({"suite_id":"s","cases":[{"id":"full",)" + members +
                           R"("expect":{"terminal":"completed"}},{"id":"no-rescue",)" + members +
                           R"("guardrails":"no_rescue","expect":{"terminal":"budget_exhausted",)"
                           R"("disposition":"success"}}]})",
                       kAblation);
  // A disposition is checked only with terminal completed; without a terminal check it is allowed
  // and fails against a run that has none.
  ASSERT_FALSE(suite.ok());
  suite =
      load_suite_bytes(R"({"suite_id":"s","cases":[{"id":"full",)" + members +
                           R"("expect":{"terminal":"completed"}},{"id":"no-rescue",)" + members +
                           R"("guardrails":"no_rescue","expect":{"disposition":"success",)"
                           R"("violations":{"rescue":0,"text_response":2}}}]})",
                       kAblation);
  ASSERT_TRUE(suite.ok()) << suite.diagnostics()[0].message;
  std::map<std::string, std::string> traces;
  RunOptions o = fixed();
  o.keep_trace = [&](const std::string& id, std::optional<std::int64_t>, std::string_view trace) {
    traces[id] = std::string(trace);
    return Status();
  };
  json::Value report = run_ok(*suite, o);
  const json::Array& cases = report.find("cases")->as_array();
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].find("status")->as_string(), "passed");
  EXPECT_EQ(cases[1].find("terminal")->as_string(), "budget_exhausted");
  EXPECT_EQ(cases[1].find("disposition"), nullptr);
  // The only failure: no disposition, so no actual.
  EXPECT_EQ(json::canonical(*cases[1].find("failures")),
            R"([{"check":"disposition","expected":"success"}])");
  for (const auto& [id, preset] :
       {std::pair{"full", "full"}, std::pair{"no-rescue", "no_rescue"}}) {
    const std::string first = traces[id].substr(0, traces[id].find('\n'));
    Result<json::Value> started = json::parse(first);
    ASSERT_TRUE(started.ok()) << id;
    EXPECT_EQ(started->find("guardrails")->as_string(), preset);
    EXPECT_EQ(started->find("run_id")->as_string(), std::string("eval-") + id);
    EXPECT_EQ(json::canonical(*started->find("request")),
              R"({"instruction":"Report on src/lib.rs."})");
    EXPECT_TRUE(started->find("artifacts")->as_bool()) << "each case gets an artifact directory";
    EXPECT_EQ(hash::sha256_hex(traces[id]),
              (id == std::string("full") ? cases[0] : cases[1]).find("trace_sha256")->as_string());
  }
}

TEST(EvalPlanRun, TheWorkspaceDefaultsToTheSuiteDirectory) {
  // read-submit reads src/lib.rs: present beside the suite, the run completes; a suite elsewhere
  // with the workspace named explicitly reads the fixture repository instead.
  test::TempDir dir;
  std::filesystem::create_directories(dir / "src");
  test::write_file(dir / "src/lib.rs", "fn main() {}\n");
  std::filesystem::copy_file(kAblation + "/read-submit.plan.json", dir / "plan.json");
  std::filesystem::copy_file(std::string(MF_SOURCE_DIR) + "/fixtures/harness/runs/read-submit.json",
                             dir / "run.json");
  const std::string members = R"("plan":"plan.json","model":"scripted:run.json",)";
  Result<Suite> suite = load_suite_bytes(
      plan_case(members + R"("expect":{"terminal":"completed","tools":["read","submit"]})"),
      dir.path().string());
  ASSERT_TRUE(suite.ok()) << suite.diagnostics()[0].message;
  EXPECT_EQ(only_case(run_ok(*suite, fixed())).find("status")->as_string(), "passed");

  std::filesystem::remove(dir / "src/lib.rs");
  json::Value report = run_ok(*suite, fixed());
  // The read misses (a resolution error: there is no such file), and the trajectory's submit is
  // then refused as premature.
  EXPECT_EQ(only_case(report).find("status")->as_string(), "failed");
  EXPECT_EQ(json::canonical(*only_case(report).find("violations")),
            R"({"premature_terminal":1,"soft_tool_error":1})");
  EXPECT_EQ(json::canonical(*only_case(report).find("failures")),
            R"([{"actual":"model_failed","check":"terminal","expected":"completed"},)"
            R"({"actual":[],"check":"tools","expected":["read","submit"]}])");
}

TEST(EvalPlanRun, ReportBytesDoNotDependOnThreadsAndScratchIsRemoved) {
  // Every case's artifact directory lives under TMPDIR while it runs and is gone afterwards.
  test::TempDir tmp;
  const char* saved = ::getenv("TMPDIR");
  const std::string restore = saved != nullptr ? saved : "";
  ::setenv("TMPDIR", tmp.path().c_str(), 1);
  std::string cases;
  for (int seed = 1; seed <= 8; ++seed) {
    for (const char* preset : {"full", "bare"}) {
      cases += std::string(cases.empty() ? "" : ",") + R"({"id":"s)" + std::to_string(seed) + "-" +
               preset + R"(","plan":"golden.plan.json","model":"sim:../runs/golden-ok.json?seed=)" +
               std::to_string(seed) + R"(&faults=0.5","workspace":"../../repository",)" +
               R"("guardrails":")" + preset + R"(","expect":{"tool_calls":0}})";
    }
  }
  Result<Suite> suite = load_suite_bytes(R"({"suite_id":"s","cases":[)" + cases + "]}", kAblation);
  ASSERT_TRUE(suite.ok()) << suite.diagnostics()[0].message;
  const std::string one = json::canonical_file(run_ok(*suite, fixed(1)));
  for (unsigned jobs : {2u, 5u}) {
    EXPECT_EQ(json::canonical_file(run_ok(*suite, fixed(jobs))), one) << jobs;
  }
  const bool empty = std::filesystem::is_empty(tmp.path());
  if (saved != nullptr) {
    ::setenv("TMPDIR", restore.c_str(), 1);
  } else {
    ::unsetenv("TMPDIR");
  }
  EXPECT_TRUE(empty) << "scratch artifact directories were left behind";
  // The faults differ by seed and preset: the cases do not all end alike.
  Result<json::Value> doc = json::parse(one);
  ASSERT_TRUE(doc.ok());
  std::set<std::string> endings;
  for (const auto& c : doc->find("cases")->as_array())
    endings.insert(c.find("terminal")->as_string());
  EXPECT_GE(endings.size(), 2u);
}

TEST(EvalPlanFacts, ReadsViolationsAndSuccessfulToolsFromTheTrace) {
  const std::string trace =
      R"({"event":"run_started","seq":0})"
      "\n"
      R"({"event":"guardrail_violation","kind":"rescue"})"
      "\n"
      R"({"event":"tool_called","call_id":"a","tool":"read"})"
      "\n"
      R"({"event":"tool_completed","call_id":"a","ok":true})"
      "\n"
      R"({"event":"tool_called","call_id":"b","tool":"write"})"
      "\n"
      R"({"event":"tool_completed","call_id":"b","ok":false})"
      "\n"
      R"({"event":"tool_called","call_id":"c","tool":"submit"})"
      "\n"
      R"({"event":"tool_denied","call_id":"c","tool":"submit","reason":"x"})"
      "\n"
      // Refused before the boundary: never called, never a success.
      R"({"event":"tool_denied","call_id":"d","tool":"finish","reason":"premature_terminal"})"
      "\n"
      R"({"event":"guardrail_violation","kind":"tool_error"})"
      "\n"
      R"({"event":"guardrail_violation","kind":"rescue"})"
      "\n"
      // A call id used again after its call closed names the new call's tool.
      R"({"event":"tool_called","call_id":"a","tool":"grep"})"
      "\n"
      R"({"event":"tool_completed","call_id":"a","ok":true})"
      "\n"
      R"({"event":"tool_completed","call_id":"zz","ok":true})"
      "\n";
  Result<PlanFacts> facts = plan_facts(trace);
  ASSERT_TRUE(facts.ok());
  EXPECT_EQ(facts->tools, (std::vector<std::string>{"read", "grep"}));
  EXPECT_EQ(facts->violations,
            (std::map<std::string, std::int64_t>{{"rescue", 2}, {"tool_error", 1}}));

  EXPECT_FALSE(plan_facts("{\"event\":\"run_started\"}\nnot json\n").ok());
  Result<PlanFacts> empty = plan_facts("");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->tools.empty());
}

TEST(EvalPlanGrade, EveryFailedCheckIsAnEntryInOrder) {
  Expect e;
  e.terminal = "completed";
  e.disposition = "success";
  e.model_calls = 2;
  e.tool_calls = 1;
  e.violations = {{"tool_error", 1}, {"rescue", 0}, {"a/b", 0}};
  e.tools = std::vector<std::string>{"read"};
  runtime::RunOutcome failed{"budget_exhausted", json::Value(), 3, 0, 2, "spent"};
  PlanFacts facts;
  facts.violations = {{"rescue", 2}, {"unknown_tool", 4}};
  facts.tools = {"read", "read"};
  EXPECT_EQ(json::canonical(grade(e, failed, &facts)),
            R"([{"actual":"budget_exhausted","check":"terminal","expected":"completed"},)"
            R"({"check":"disposition","expected":"success"},)"
            R"({"actual":3,"check":"model_calls","expected":2},)"
            R"({"actual":2,"check":"tool_calls","expected":1},)"
            R"({"actual":0,"check":"violations/tool_error","expected":1},)"
            R"({"actual":2,"check":"violations/rescue","expected":0},)"
            R"({"actual":["read","read"],"check":"tools","expected":["read"]}])");
  // An accepted terminal with another disposition names it; listed kinds only are checked.
  Expect d;
  d.disposition = "success";
  d.violations = {{"rescue", 2}};
  runtime::RunOutcome blocked{"completed", json::Object{{"disposition", "blocked"}}, 1, 0, 1, {}};
  EXPECT_EQ(json::canonical(grade(d, blocked, &facts)),
            R"([{"actual":"blocked","check":"disposition","expected":"success"}])");
  runtime::RunOutcome success{"completed", json::Object{{"disposition", "success"}}, 1, 0, 1, {}};
  EXPECT_TRUE(grade(d, success, &facts).empty());
}

TEST(EvalPlanReport, PlanMembersAreReadStrictly) {
  Result<Suite> suite = load_suite_bytes(golden(R"({"terminal":"completed"})"), kAblation);
  ASSERT_TRUE(suite.ok()) << suite.diagnostics()[0].message;
  const std::string good = json::canonical_file(run_ok(*suite, fixed()));
  ASSERT_TRUE(parse_report(good).ok());
  auto rejects = [&](const std::string& from, const std::string& to, std::string_view code,
                     std::string_view pointer) {
    std::string text = good;
    ASSERT_NE(text.find(from), std::string::npos) << from;
    text.replace(text.find(from), from.size(), to);
    Result<Report> r = parse_report(text);
    ASSERT_FALSE(r.ok()) << to;
    EXPECT_EQ(r.diagnostics()[0].code, code) << r.diagnostics()[0].message;
    EXPECT_EQ(r.diagnostics()[0].pointer, pointer) << r.diagnostics()[0].message;
  };
  rejects(R"("disposition":"success")", R"("disposition":"done")", "MF-S020",
          "/cases/0/disposition");
  rejects(R"("tool_calls":3)", R"("tool_calls":-3)", "MF-S020", "/cases/0/tool_calls");
  rejects(R"("violations":{})", R"("violations":{"rescue":-1})", "MF-S020",
          "/cases/0/violations/rescue");
  rejects(R"("violations":{})", R"("violations":[])", "MF-S020", "/cases/0/violations");
  // Without tool_calls the case is a task case, which has neither member.
  rejects(R"("tool_calls":3,)", "", "MF-S020", "/cases/0/disposition");
}

}  // namespace
}  // namespace mf::eval
