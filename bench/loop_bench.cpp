// The guarded loop's own cost per model turn (common/runtime/src/guarded.cpp), in process: a
// compiled plan, the scripted model answering from memory, a memory trace writer, a fixed clock.
// Each turn is one model call, its tool call through the execution boundary, the trace events and
// the history it adds (compacted by the plan's context policy), so the figure is everything
// harness mode spends between two model calls except the provider. Two tools: Pi's `read` of a
// small file (fixtures/harness/read-submit.yaml, the plan `mf-run --plan` would run) and
// `inspect_request`, which touches no file, so the difference is the tool's I/O.
//
// 16, 64 and 256 turns always run (256 is the most max_iterations a compiled plan allows); 1024
// and 4096, which take about a minute each, only with MF_BENCH_LOOP_LONG=1.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "mf/harness/command.hpp"
#include "mf/harness/compiler.hpp"
#include "mf/json/canonical.hpp"
#include "mf/model/scripted.hpp"
#include "mf/runtime/plan_run.hpp"
#include "mf/tools/catalog.hpp"
#include "mf/tools/executor.hpp"
#include "mf/trace/writer.hpp"

namespace {

namespace fs = std::filesystem;
using mf::json::Value;

// The read-submit plan's twin over the request tool: a required no-I/O call, then submit.
constexpr const char* kInspectHarness = R"(schema_version: "1.0"
kind: millforge_harness
harness_id: millforge.bench.inspect_submit.v1
harness_version: 1
stage_scope: {stage_kind_ids: [checker]}
model_profile_id: profile.standard
prompt:
  policy_id: millforge.bench.inspect_submit.policy.v1
  system_instructions: |
    Inspect the request, then submit.
  include_request_context: true
budgets: {max_iterations: 4, max_validation_retries: 1, max_tool_errors: 1,
          max_prerequisite_violations: 1, max_premature_terminal_attempts: 1}
context: {strategy_id: forge.tiered.v1, budget_tokens: 4096, keep_recent_iterations: 1,
          phase_thresholds: [0.6, 0.75, 0.9]}
graph:
  nodes:
    inspect:
      tool_ref: builtin.request.inspect@1
      required: true
    submit:
      tool_ref: builtin.pi_compat.submit@1
      terminal_result: COMPLETE
      prerequisites: [{node_id: inspect}]
)";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Compiles a harness against the built-in catalog and profiles, then lifts max_iterations to the
// number of turns: the compiler caps the budget at 256 and the loop reads it from the plan value,
// so a long run is this one change away from the compiled plan.
Value compile_plan(const std::string& yaml, std::int64_t max_iterations) {
  auto source = mf::harness::parse_source(yaml, mf::harness::Format::Yaml);
  if (!source) throw std::runtime_error("harness does not parse");
  mf::harness::CompileRequest req;
  req.source = std::move(*source);
  req.catalogs.push_back({"builtin", mf::tools::builtin_catalog_json()});
  req.profiles.push_back({"builtin", mf::harness::builtin_profiles_json()});
  auto compiled = mf::harness::compile(req);
  if (!compiled.ok) throw std::runtime_error("harness does not compile: " + compiled.failure_phase);
  Value plan = std::move(compiled.plan);
  Value budgets = *plan.find("budgets");
  budgets.set("max_iterations", max_iterations);
  plan.set("budgets", std::move(budgets));
  return plan;
}

// A workspace with the one small file the read calls name, removed at exit.
struct Workspace {
  std::string root;
  Workspace() {
    std::string pattern = (fs::temp_directory_path() / "mf-loop-bench.XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    root = pattern;
    fs::create_directories(root + "/src");
    std::ofstream(root + "/src/lib.rs") << "pub fn parse(input: &str) -> u32 {\n"
                                           "    input.trim().parse().unwrap()\n"
                                           "}\n";
  }
  ~Workspace() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
};

const Workspace& workspace() {
  static const Workspace ws;
  return ws;
}

// turns-1 calls of `tool` with `args`, then the submit.
std::deque<mf::model::ScriptedStep> script(std::int64_t turns, const std::string& tool,
                                           const Value& args) {
  std::deque<mf::model::ScriptedStep> steps;
  const std::string text = mf::json::canonical(args);
  for (std::int64_t i = 1; i < turns; ++i) {
    mf::model::ScriptedStep s;
    s.tool_calls.push_back({"", tool, text});
    steps.push_back(std::move(s));
  }
  mf::model::ScriptedStep submit;
  submit.tool_calls.push_back({"", "submit",
                               mf::json::canonical(Value(mf::json::Object{
                                   {"terminal_result", "COMPLETE"}, {"summary", "done"}}))});
  steps.push_back(std::move(submit));
  return steps;
}

void run_turns(benchmark::State& state, const Value& plan, const std::string& tool,
               const Value& args) {
  const std::int64_t turns = state.range(0);
  const Value request = mf::json::Object{{"instruction", "Benchmark the loop."},
                                         {"context", mf::json::Object{{"ticket", "BENCH-1"}}}};
  std::string sink;
  std::int64_t trace_bytes = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto bindings = mf::tools::bindings_from_plan(plan);
    auto ws = mf::tools::Workspace::open(workspace().root);
    if (!bindings || !ws) {
      state.SkipWithError("the plan's bindings or the workspace did not open");
      return;
    }
    mf::tools::CallContext context;
    context.workspace = std::move(*ws);
    mf::tools::ExecutorOptions eo;
    for (const auto& c : plan.find("required_capabilities")->as_array()) {
      eo.granted_capabilities.push_back(c.as_string());
    }
    eo.fixed_clock = true;
    eo.request = request;
    mf::tools::ToolExecutor executor(std::move(*bindings), std::move(context), eo);
    mf::model::ScriptedModel model(script(turns, tool, args));
    sink.clear();
    mf::trace::WriterOptions wo;
    wo.run_id = "run-bench";
    wo.fixed_clock = true;
    auto writer = mf::trace::Writer::open_memory(&sink, wo);
    mf::runtime::RunOptions options;
    mf::runtime::PlanRunOptions po;
    po.request = request;
    po.capabilities = eo.granted_capabilities;
    state.ResumeTiming();

    auto outcome = mf::runtime::run_plan(plan, executor, model, **writer, options, po);

    state.PauseTiming();
    if (!outcome || outcome->terminal != "completed" || outcome->tool_calls != turns) {
      state.SkipWithError("the run did not complete with one tool call per turn");
      return;
    }
    trace_bytes = static_cast<std::int64_t>(sink.size());
    state.ResumeTiming();
  }
  state.counters["per_turn"] =
      benchmark::Counter(static_cast<double>(turns), benchmark::Counter::kIsIterationInvariantRate |
                                                         benchmark::Counter::kInvert);
  state.counters["trace_B_per_turn"] =
      benchmark::Counter(static_cast<double>(trace_bytes) / static_cast<double>(turns));
}

void loop_turn_read(benchmark::State& state) {
  static const Value plan = compile_plan(
      read_file(std::string(MF_SOURCE_DIR) + "/fixtures/harness/read-submit.yaml"), 1 << 20);
  run_turns(state, plan, "read", mf::json::Object{{"path", "src/lib.rs"}});
}

void loop_turn_inspect(benchmark::State& state) {
  static const Value plan = compile_plan(kInspectHarness, 1 << 20);
  run_turns(state, plan, "inspect_request", mf::json::Object{});
}

// fixtures/harness/projected/projected.yaml: eight tools bound, each turn projected (read and the
// guidance shown; submit once read has succeeded). Its twin without the projection section shows
// all eight every turn, so the difference is what projecting a turn costs.
std::string projected_yaml(bool with_projection) {
  std::string yaml =
      read_file(std::string(MF_SOURCE_DIR) + "/fixtures/harness/projected/projected.yaml");
  if (!with_projection) yaml.resize(yaml.find("\nprojection:") + 1);
  return yaml;
}

void loop_turn_projected(benchmark::State& state) {
  static const Value plan = compile_plan(projected_yaml(true), 1 << 20);
  run_turns(state, plan, "read", mf::json::Object{{"path", "src/lib.rs"}});
}

void loop_turn_eight_shown(benchmark::State& state) {
  static const Value plan = compile_plan(projected_yaml(false), 1 << 20);
  run_turns(state, plan, "read", mf::json::Object{{"path", "src/lib.rs"}});
}

using Bench = void (*)(benchmark::State&);

[[maybe_unused]] const bool registered = [] {
  const char* on = std::getenv("MF_BENCH_LOOP_LONG");
  const bool long_runs = on != nullptr && std::string_view(on) == "1";
  const std::pair<const char*, Bench> benches[] = {
      {"BM_LoopTurnRead", loop_turn_read},
      {"BM_LoopTurnInspect", loop_turn_inspect},
      {"BM_LoopTurnProjected", loop_turn_projected},
      {"BM_LoopTurnEightShown", loop_turn_eight_shown}};
  for (const auto& [name, fn] : benches) {
    auto* b = benchmark::RegisterBenchmark(name, fn)->UseRealTime()->Unit(benchmark::kMillisecond);
    b->Arg(16)->Arg(64)->Arg(256);
    if (long_runs) b->Arg(1024)->Arg(4096);
  }
  return true;
}();

}  // namespace
