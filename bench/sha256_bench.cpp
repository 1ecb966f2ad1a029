// Micro-benchmarks of SHA-256: one-shot over buffers of several sizes, and incremental in 64 KiB
// chunks as a streamed file is hashed.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "mf/hash/sha256.hpp"
#include "trace_gen.hpp"

namespace {

std::string random_bytes(std::size_t n) {
  mf::bench::Rng rng(20240501);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng.next() & 0xff);
  return s;
}

void BM_Sha256(benchmark::State& state) {
  const std::string buf = random_bytes(std::size_t(state.range(0)));
  for (auto _ : state) {
    mf::hash::Digest d = mf::hash::sha256(buf);
    benchmark::DoNotOptimize(d);
  }
  state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(buf.size()));
}
BENCHMARK(BM_Sha256)->Arg(64)->Arg(4 << 10)->Arg(1 << 20);

void BM_Sha256Incremental(benchmark::State& state) {
  const std::string buf = random_bytes(1 << 20);
  const std::size_t chunk = 64 << 10;
  for (auto _ : state) {
    mf::hash::Sha256 h;
    for (std::size_t off = 0; off < buf.size(); off += chunk) {
      h.update(std::string_view(buf).substr(off, chunk));
    }
    mf::hash::Digest d = h.finish();
    benchmark::DoNotOptimize(d);
  }
  state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(buf.size()));
}
BENCHMARK(BM_Sha256Incremental);

}  // namespace
