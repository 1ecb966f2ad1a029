// What an eval campaign costs beside the runs it makes (common/eval/src/runner.cpp): a suite of
// N copies of Forge's valid-first-response task case (fixtures/forge/, a scripted model answering
// from memory), run by run_suite with its journal, grading, report and summary, against the same
// N task runs made directly with runtime::run_task (each with its own model and memory trace,
// graded by nothing). The difference divided by N is the campaign's overhead per case;
// BM_CampaignSpeedup pairs -j 1 with -j 2 to show what a second thread buys on two cores.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "mf/eval/runner.hpp"
#include "mf/eval/suite.hpp"
#include "mf/hash/sha256.hpp"
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
  std::vector<mf::eval::Case> cases;
  mf::eval::Suite::Reader refs(suite.cases);
  for (std::uint64_t i = 0; i < suite.size(); ++i) cases.push_back(*suite.load_case(refs[i]));
  for (auto _ : state) {
    for (const auto& c : cases) {
      auto model = mf::model::ScriptedModel::parse(*c.script);
      std::string trace;
      mf::trace::WriterOptions wo;
      wo.run_id = "eval-" + c.id;
      wo.fixed_clock = true;
      auto writer = mf::trace::Writer::open_memory(&trace, wo);
      auto outcome = mf::runtime::run_task(*c.loaded_task, **model, **writer, {});
      if (!outcome || outcome->terminal != "completed") state.SkipWithError("a run failed");
      benchmark::DoNotOptimize(trace.data());
    }
  }
  state.counters["per_case"] = benchmark::Counter(
      static_cast<double>(state.range(0)),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

std::string journal_path() {
  return (std::filesystem::temp_directory_path() /
          ("mf-campaign-bench-" + std::to_string(::getpid())))
      .string();
}

// One whole campaign of `suite` on `jobs` threads, journal included, into its report's bytes.
bool campaign(const mf::eval::Suite& suite, unsigned jobs) {
  auto j = mf::eval::open_file_journal(journal_path(), "bench", false);
  if (!j) return false;
  mf::eval::RunOptions o;
  o.fixed_clock = true;
  o.jobs = jobs;
  if (std::getenv("MF_BENCH_NO_JOURNAL") == nullptr) o.journal = j->get();
  auto done = mf::eval::run_suite(suite, o);
  if (!done || done->failed() != 0) return false;
  benchmark::DoNotOptimize(done->bytes().size());
  return true;
}

void BM_Campaign(benchmark::State& state) {
  const auto& suite = suite_of(state.range(0));
  for (auto _ : state) {
    if (!campaign(suite, static_cast<unsigned>(state.range(1)))) {
      state.SkipWithError("the campaign failed");
    }
  }
  std::filesystem::remove(journal_path());
  state.counters["per_case"] = benchmark::Counter(
      static_cast<double>(state.range(0)),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// What two threads buy on this machine with no shared state at all: SHA-256 over private
// buffers, the same total work on one thread and split over two. On a shared host (steal time,
// other guests on the same cores) this is below 2 and bounds any campaign's speedup.
void hash_work(int threads) {
  auto part = [] {
    std::string block(4096, 'x');
    for (int i = 0; i < 1500; ++i) {
      block[0] = static_cast<char>(i);
      benchmark::DoNotOptimize(mf::hash::sha256_hex(block));
    }
  };
  if (threads == 1) {
    part();
    part();
    return;
  }
  std::thread other(part);
  part();
  other.join();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// -j 1 and -j 2 back to back in each iteration, so both see the same load on a shared host:
// `speedup` is the median over the iterations of the -j 1 time over the -j 2 time, `ceiling`
// the same ratio for hash_work measured beside it.
void BM_CampaignSpeedup(benchmark::State& state) {
  const auto& suite = suite_of(state.range(0));
  std::vector<double> speedup, ceiling;
  const auto timed = [](auto&& work) {
    const auto start = std::chrono::steady_clock::now();
    work();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  for (auto _ : state) {
    bool ok = true;
    const double one = timed([&] { ok = campaign(suite, 1) && ok; });
    const double two = timed([&] { ok = campaign(suite, 2) && ok; });
    if (!ok) state.SkipWithError("the campaign failed");
    speedup.push_back(one / two);
    ceiling.push_back(timed([] { hash_work(1); }) / timed([] { hash_work(2); }));
  }
  std::filesystem::remove(journal_path());
  state.counters["speedup"] = median(speedup);
  state.counters["ceiling"] = median(ceiling);
}

BENCHMARK(BM_CampaignBareRuns)->Arg(1000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Campaign)
    ->Args({1000, 1})
    ->Args({1000, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_CampaignSpeedup)->Arg(1000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
