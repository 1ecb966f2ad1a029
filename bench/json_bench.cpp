// Micro-benchmarks of the JSON hot path: strict parse, canonical write, and both together, by the
// tree and by the tree-less fast path, over an in-process set of trace-like JSONL lines
// (deterministic seed, ~1 MB), plus ES6 number formatting.
#include <benchmark/benchmark.h>

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mf/json/canonical.hpp"
#include "mf/json/jsonl.hpp"
#include "mf/json/reader.hpp"
#include "mf/json/tape.hpp"
#include "trace_gen.hpp"

namespace {

constexpr std::uint64_t kSeed = 20240501;
constexpr std::size_t kSetBytes = 1u << 20;

struct LineSet {
  std::string text;                     // the lines, each ending in '\n'
  std::vector<std::string_view> lines;  // views into text, without the '\n'
  std::vector<mf::json::Value> values;  // lines parsed once, for the write-only benchmark
  std::string error;                    // first parse failure, if the reader rejected a line
};

const LineSet& line_set() {
  static const LineSet set = [] {
    LineSet s;
    mf::bench::TraceGenerator gen(kSeed);
    gen.append_lines(kSetBytes, s.text);
    std::string_view rest = s.text;
    while (!rest.empty()) {
      std::size_t nl = rest.find('\n');
      s.lines.push_back(rest.substr(0, nl));
      rest.remove_prefix(nl + 1);
    }
    for (std::string_view line : s.lines) {
      auto r = mf::json::parse(line);
      if (!r.ok()) {
        const auto& d = r.diagnostics().front();
        s.error = "generated line rejected: " + d.code + " " + d.message;
        break;
      }
      s.values.push_back(std::move(r).value());
    }
    return s;
  }();
  return set;
}

// Bytes are the JSONL input, newlines included, so MB/s compares with whole-process figures.
void BM_ParseLines(benchmark::State& state) {
  const LineSet& set = line_set();
  if (!set.error.empty()) {
    state.SkipWithError(set.error.c_str());
    return;
  }
  for (auto _ : state) {
    for (std::string_view line : set.lines) {
      auto r = mf::json::parse(line);
      benchmark::DoNotOptimize(r);
    }
  }
  state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(set.text.size()));
  state.SetItemsProcessed(std::int64_t(state.iterations()) * std::int64_t(set.lines.size()));
}
BENCHMARK(BM_ParseLines);

// The JSONL reader over the whole buffer: line splitting plus parse, as `canon --lines` does it.
void BM_JsonlReader(benchmark::State& state) {
  const LineSet& set = line_set();
  if (!set.error.empty()) {
    state.SkipWithError(set.error.c_str());
    return;
  }
  for (auto _ : state) {
    mf::json::JsonlReader reader(set.text);
    mf::Result<mf::json::Value> r{mf::json::Value{}};
    while (reader.next(r)) benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(set.text.size()));
  state.SetItemsProcessed(std::int64_t(state.iterations()) * std::int64_t(set.lines.size()));
}
BENCHMARK(BM_JsonlReader);

// Bytes are the canonical output written.
void BM_WriteCanonical(benchmark::State& state) {
  const LineSet& set = line_set();
  if (!set.error.empty()) {
    state.SkipWithError(set.error.c_str());
    return;
  }
  std::string out;
  std::size_t written = 0;
  for (auto _ : state) {
    out.clear();
    for (const mf::json::Value& v : set.values) {
      mf::json::write_canonical(v, out);
      out.push_back('\n');
    }
    written = out.size();
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(written));
  state.SetItemsProcessed(std::int64_t(state.iterations()) * std::int64_t(set.values.size()));
}
BENCHMARK(BM_WriteCanonical);

// Parse + canonical write per line; bytes are the input, like `mf-store canon --lines`.
void BM_ParseCanonical(benchmark::State& state) {
  const LineSet& set = line_set();
  if (!set.error.empty()) {
    state.SkipWithError(set.error.c_str());
    return;
  }
  std::string out;
  for (auto _ : state) {
    out.clear();
    for (std::string_view line : set.lines) {
      auto r = mf::json::parse(line);
      if (r.ok()) mf::json::write_canonical(r.value(), out);
      out.push_back('\n');
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(set.text.size()));
  state.SetItemsProcessed(std::int64_t(state.iterations()) * std::int64_t(set.lines.size()));
}
BENCHMARK(BM_ParseCanonical);

// The same with the tree-less fast path (mf/json/tape.hpp): no tree, the output written as the
// members are sorted.
void BM_TapeCanonicalize(benchmark::State& state) {
  const LineSet& set = line_set();
  if (!set.error.empty()) {
    state.SkipWithError(set.error.c_str());
    return;
  }
  mf::json::Tape tape;
  std::string out;
  for (auto _ : state) {
    out.clear();
    for (std::string_view line : set.lines) {
      if (!tape.canonicalize(line, {}, out)) state.SkipWithError("the tape declined a line");
      out.push_back('\n');
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(set.text.size()));
  state.SetItemsProcessed(std::int64_t(state.iterations()) * std::int64_t(set.lines.size()));
}
BENCHMARK(BM_TapeCanonicalize);

// Is each line canonical? The strict reader plus a canonical write and compare, against the tape's
// one pass (what the trace verifier does per line).
void BM_CheckCanonicalTree(benchmark::State& state) {
  const LineSet& set = line_set();
  std::vector<std::string> canonical;
  for (const auto& v : set.values) canonical.push_back(mf::json::canonical(v));
  std::string out;
  std::size_t bytes = 0;
  for (auto _ : state) {
    for (const std::string& line : canonical) {
      auto r = mf::json::parse(line);
      out.clear();
      if (r.ok()) mf::json::write_canonical(r.value(), out);
      benchmark::DoNotOptimize(out == line);
      bytes += line.size() + 1;
    }
  }
  state.SetBytesProcessed(std::int64_t(bytes));
}
BENCHMARK(BM_CheckCanonicalTree);

void BM_CheckCanonicalTape(benchmark::State& state) {
  const LineSet& set = line_set();
  std::vector<std::string> canonical;
  for (const auto& v : set.values) canonical.push_back(mf::json::canonical(v));
  mf::json::Tape tape;
  std::size_t bytes = 0;
  for (auto _ : state) {
    for (const std::string& line : canonical) {
      if (!tape.read_canonical(line)) state.SkipWithError("the tape declined a canonical line");
      bytes += line.size() + 1;
    }
  }
  state.SetBytesProcessed(std::int64_t(bytes));
}
BENCHMARK(BM_CheckCanonicalTape);

// Canonical bytes + SHA-256 per value, the cost of every digest the product records.
void BM_CanonicalDigest(benchmark::State& state) {
  const LineSet& set = line_set();
  if (!set.error.empty()) {
    state.SkipWithError(set.error.c_str());
    return;
  }
  for (auto _ : state) {
    for (const mf::json::Value& v : set.values) {
      std::string digest = mf::json::canonical_digest(v);
      benchmark::DoNotOptimize(digest.data());
    }
  }
  state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(set.text.size()));
  state.SetItemsProcessed(std::int64_t(state.iterations()) * std::int64_t(set.values.size()));
}
BENCHMARK(BM_CanonicalDigest);

enum NumberMix : int { kRandomBits = 0, kIntegers = 1, kShortDecimals = 2 };

std::vector<double> make_doubles(int mix) {
  mf::bench::Rng rng(kSeed + std::uint64_t(mix));
  std::vector<double> ds;
  ds.reserve(4096);
  while (ds.size() < 4096) {
    double d = 0;
    switch (mix) {
      case kRandomBits: {
        // Any finite double: every exponent, full 17-digit mantissas, subnormals.
        d = std::bit_cast<double>(rng.next());
        if (d != d || d - d != 0) continue;  // skip NaN and infinities
        break;
      }
      case kIntegers:
        d = double(std::int64_t(rng.below(std::uint64_t(1) << 53)) - (std::int64_t(1) << 52));
        break;
      default:
        // What people type: 0.1, 12.5, 123.456 — few significant digits.
        d = double(std::int64_t(rng.below(1000000)) - 500000) / double(1 + rng.below(1000));
        break;
    }
    ds.push_back(d);
  }
  return ds;
}

void BM_WriteNumber(benchmark::State& state) {
  const std::vector<double> ds = make_doubles(int(state.range(0)));
  std::string out;
  std::size_t written = 0;
  for (auto _ : state) {
    out.clear();
    for (double d : ds) {
      mf::json::write_number(d, out);
      out.push_back(',');
    }
    written = out.size();
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(written));
  state.SetItemsProcessed(std::int64_t(state.iterations()) * std::int64_t(ds.size()));
}
BENCHMARK(BM_WriteNumber)->ArgName("mix")->Arg(kRandomBits)->Arg(kIntegers)->Arg(kShortDecimals);

}  // namespace
