// Prompt projection per turn (docs/projection.md): a generated catalog of N tools (descriptions
// of ~20 words from a 400-word vocabulary) and N/10 skills with triggers, compiled against one
// turn's text in compiled mode (index lookups, then at most candidate_limit units) and in
// all_tools mode (every unit scored and packed). Linear in N is the claim: the N = 500..5000 rows.
#include <benchmark/benchmark.h>

#include <random>

#include "mf/prompt/projection.hpp"

namespace {

using namespace mf::prompt;

std::string word(std::mt19937& rng) {
  return "w" + std::to_string(rng() % 400);
}

Catalog make_catalog(int n) {
  std::mt19937 rng(7);
  std::vector<ToolSource> tools;
  for (int i = 0; i < n; ++i) {
    std::string d;
    for (int w = 0; w < 20; ++w) d += (w ? " " : "") + word(rng);
    tools.push_back({"tool_" + std::to_string(i),
                     d,
                     mf::json::Object{{"type", "object"}, {"properties", mf::json::Object{}}},
                     {}});
  }
  std::vector<Unit> skills;
  for (int i = 0; i < n / 10; ++i) {
    Unit u;
    u.id = "skill:s" + std::to_string(i);
    u.name = "s" + std::to_string(i);
    u.kind = Kind::Skill;
    u.content = "Guidance for " + word(rng) + " and " + word(rng) + ".";
    u.triggers = {{Trigger::On::Phrase, word(rng) + " " + word(rng), 50},
                  {Trigger::On::Keyword, word(rng), 30}};
    u.suggests = {"tool:tool_" + std::to_string(rng() % n)};
    skills.push_back(std::move(u));
  }
  return std::move(*Catalog::build(std::move(*with_tools(std::move(skills), tools))));
}

Input turn(Mode mode) {
  std::mt19937 rng(11);
  Input in;
  for (int w = 0; w < 40; ++w) in.text += word(rng) + " ";
  in.budget_tokens = 16000;
  in.mode = mode;
  return in;
}

void BM_Project(benchmark::State& state, Mode mode) {
  const Catalog c = make_catalog(static_cast<int>(state.range(0)));
  const Input in = turn(mode);
  for (auto _ : state) benchmark::DoNotOptimize(project(c, in));
  state.SetComplexityN(state.range(0));
}
// The catalog sizes both modes are measured at.
void sizes(benchmark::internal::Benchmark* b) {
  for (int n : {500, 1000, 2000, 5000}) b->Arg(n);
  b->Unit(benchmark::kMicrosecond)->Complexity();
}
BENCHMARK_CAPTURE(BM_Project, Compiled, Mode::Compiled)->Apply(sizes);
BENCHMARK_CAPTURE(BM_Project, AllTools, Mode::AllTools)->Apply(sizes);

void BM_CatalogBuild(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(make_catalog(static_cast<int>(state.range(0))));
}
BENCHMARK(BM_CatalogBuild)->Arg(5000)->Unit(benchmark::kMillisecond);

}  // namespace
