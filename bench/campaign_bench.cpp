// What an eval campaign costs beside the runs it makes (common/eval/src/runner.cpp): a suite of
// N copies of Forge's valid-first-response task case (fixtures/forge/, a scripted model answering
// from memory), run by run_suite with its journal, grading, report and summary, against the same
// N task runs made directly with runtime::run_task (each with its own model and memory trace,
// graded by nothing). The difference divided by N is the campaign's overhead per case;
// BM_Campaign/N/2 over BM_Campaign/N/1 is what a second thread buys on two cores.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>

#include "mf/eval/runner.hpp"
#include "mf/eval/suite.hpp"
#include "mf/json/canonical.hpp"
#include "mf/model/scripted.hpp"
#include "mf/runtime/task_run.hpp"
#include "mf/trace/writer.hpp"

namespace {

const std::string kForge = std::string(MF_SOURCE_DIR) + "/fixtures/forge";

// N cases "c00000".."cN-1", each the valid first response of the Forge suite.
const mf::eval::Suite& suite_of(std::int64_t n) {
  static std::map<std::int64_t, mf::eval::Suite> suites;
  auto it = suites.find(n);
  if (it != suites.end()) return it->second;
  mf::json::Array cases;
  for (std::int64_t i = 0; i < n; ++i) {
    std::string id = std::to_string(i);
    id = "c" + std::string(5 - std::min<std::size_t>(5, id.size()), '0') + id;
    cases.push_back(mf::json::Object{
        {"id", id},
        {"task", "task-valid.json"},
        {"model", "scripted:responses-valid.json"},
        {"expect", mf::json::Object{{"terminal", "completed"}, {"model_calls", 1}}}});
  }
  const std::string bytes = mf::json::canonical(
      mf::json::Value(mf::json::Object{{"suite_id", "bench"}, {"cases", std::move(cases)}}));
  auto suite = mf::eval::load_suite_bytes(bytes, kForge);
  if (!suite) throw std::runtime_error("the bench suite does not load");
  return suites.emplace(n, std::move(*suite)).first->second;
}

void BM_CampaignBareRuns(benchmark::State& state) {
  const auto& suite = suite_of(state.range(0));
  for (auto _ : state) {
    for (const auto& c : suite.cases) {
      auto model = mf::model::ScriptedModel::parse(c.script);
      std::string trace;
      mf::trace::WriterOptions wo;
      wo.run_id = "eval-" + c.id;
      wo.fixed_clock = true;
      auto writer = mf::trace::Writer::open_memory(&trace, wo);
      auto outcome = mf::runtime::run_task(c.loaded_task, **model, **writer, {});
      if (!outcome || outcome->terminal != "completed") state.SkipWithError("a run failed");
      benchmark::DoNotOptimize(trace.data());
    }
  }
  state.counters["per_case"] = benchmark::Counter(
      static_cast<double>(state.range(0)),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_Campaign(benchmark::State& state) {
  const auto& suite = suite_of(state.range(0));
  const std::string journal =
      (std::filesystem::temp_directory_path() / ("mf-campaign-bench-" + std::to_string(::getpid())))
          .string();
  const std::string campaign = "bench";
  for (auto _ : state) {
    auto j = mf::eval::open_file_journal(journal, campaign, false);
    if (!j) {
      state.SkipWithError("no journal");
      return;
    }
    mf::eval::RunOptions o;
    o.fixed_clock = true;
    o.jobs = static_cast<unsigned>(state.range(1));
    if (std::getenv("MF_BENCH_NO_JOURNAL") == nullptr) o.journal = j->get();
    auto done = mf::eval::run_suite(suite, o);
    if (!done || done->failed() != 0) state.SkipWithError("the campaign failed");
    benchmark::DoNotOptimize(mf::json::canonical_file(done->document).size());
  }
  std::filesystem::remove(journal);
  state.counters["per_case"] = benchmark::Counter(
      static_cast<double>(state.range(0)),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

BENCHMARK(BM_CampaignBareRuns)->Arg(1000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Campaign)
    ->Args({1000, 1})
    ->Args({1000, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
