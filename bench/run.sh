#!/usr/bin/env bash
# Whole-process benchmarks against peer tools on one generated corpus, all measured in the same run:
#   mf-store canon --lines   vs  jq -c -S .
#   mf-store hash            vs  sha256sum
# plus the Google Benchmark micro figures (mf_bench). Prints a table and writes target/bench/results.txt.
# Benchmarks are not tests: absolute times are never a pass/fail criterion; only the correctness
# checks (line counts, same digest, same content after jq normalisation) make this script fail.
#
# Environment:
#   MF_BIN            use these binaries (mf-store, mf_gen_corpus, mf_bench) instead of building
#   MF_BENCH_BUILD    build dir when MF_BIN is unset (default build-bench, Release)
#   MF_BENCH_DIR      output dir (default target/bench)
#   MF_BENCH_MB       corpus size in MB (default 100)
#   MF_BENCH_RUNS     timed runs per command, the best is kept (default 3)
#   MF_BENCH_MICRO    0 skips mf_bench (default 1)
#   MF_BENCH_STARTUP  0 skips the start-up table (startup_bench.sh; default 1)
#   MF_JOBS           build parallelism (default 2)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out_dir=${MF_BENCH_DIR:-$root/target/bench}
mb=${MF_BENCH_MB:-100}
runs=${MF_BENCH_RUNS:-3}
jobs=${MF_JOBS:-2}
corpus=$out_dir/corpus-${mb}mb.jsonl
results=$out_dir/results.txt
mkdir -p "$out_dir"

bench_name=run.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

require_tools jq sha256sum awk

# --- binaries ---------------------------------------------------------------------------------
release_bin mf-store mf_gen_corpus
if [[ -z ${MF_BIN:-} ]]; then
  if ! grep -q 'benchmark_DIR-NOTFOUND' "$bin/../CMakeCache.txt"; then
    cmake --build "$bin/.." -j "$jobs" --target mf_bench >/dev/null
  else
    log "Google Benchmark not found; micro-benchmarks skipped"
  fi
fi
mf_store=$bin/mf-store
[[ -x $mf_store ]] || die "$mf_store not found (set MF_BIN or unset it to build)"

# --- corpus -----------------------------------------------------------------------------------
if [[ ! -s $corpus ]]; then
  gen=$bin/mf_gen_corpus
  if [[ ! -x $gen ]]; then
    # The generator is header-only C++; build it on the spot when MF_BIN lacks it.
    gen=$out_dir/mf_gen_corpus
    "${CXX:-c++}" -std=c++20 -O2 -I "$root/bench" "$root/bench/gen_corpus.cpp" -o "$gen"
  fi
  log "generating $corpus"
  "$gen" "$corpus" --mb "$mb"
fi
bytes=$(stat -c %s "$corpus")
lines=$(wc -l <"$corpus")
cat "$corpus" >/dev/null # warm the page cache so the first timed run is not penalised

# --- correctness, once ------------------------------------------------------------------------
log "checking correctness"
mf_lines=$("$mf_store" canon --lines "$corpus" | wc -l)
jq_lines=$(jq -c -S . "$corpus" | wc -l)
[[ $mf_lines -eq $lines ]] || die "mf-store canon --lines wrote $mf_lines lines for $lines input lines"
[[ $jq_lines -eq $lines ]] || die "jq wrote $jq_lines lines for $lines input lines"

# The canonical bytes differ from jq's (UTF-16 vs code point key order, ES6 vs jq number form), so
# compare meaning: both sides normalised by jq must be identical. A sample keeps this cheap.
sample=$out_dir/sample.jsonl
head -n 20000 "$corpus" >"$sample"
jq_digest=$(jq -c -S . "$sample" | sha256sum | cut -d' ' -f1)
mf_digest=$("$mf_store" canon --lines "$sample" | jq -c -S . | sha256sum | cut -d' ' -f1)
[[ $jq_digest == "$mf_digest" ]] || die "canonical output changes the meaning of $sample"
# Canonical output is a fixed point.
first=$("$mf_store" canon --lines "$sample" | tee "$out_dir/sample.canon.jsonl" | sha256sum)
second=$("$mf_store" canon --lines "$out_dir/sample.canon.jsonl" | sha256sum)
[[ $first == "$second" ]] || die "mf-store canon --lines is not idempotent on $sample"
rm -f "$sample" "$out_dir/sample.canon.jsonl"

mf_hash=$("$mf_store" hash "$corpus" | grep -oE '[0-9a-f]{64}' | head -n 1)
peer_hash=$(sha256sum "$corpus" | cut -d' ' -f1)
[[ $mf_hash == "$peer_hash" ]] || die "mf-store hash says $mf_hash, sha256sum says $peer_hash"
log "correct: $lines lines both ways, same meaning as jq on a 20000-line sample, same digest"

# --- timings ----------------------------------------------------------------------------------

log "timing (best of $runs)"
t_canon=$(best_of "$mf_store" canon --lines "$corpus")
t_jq=$(best_of jq -c -S . "$corpus")
t_hash=$(best_of "$mf_store" hash "$corpus")
t_sha=$(best_of sha256sum "$corpus")


{
  echo "Millforge whole-process benchmarks ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores)"
  echo "build: $("$mf_store" --version 2>/dev/null || echo unknown)"
  echo "peers: $(jq --version), $(sha256sum --version | head -n 1)"
  awk -v f="$corpus" -v b="$bytes" -v l="$lines" -v r="$runs" \
    'BEGIN { printf "corpus: %s (%.1f MB, %d lines), best of %d wall-clock runs\n", f, b / 1e6, l, r }'
  echo "ratio = peer seconds / mf seconds: above 1.00x Millforge is faster, below it is slower"
  echo
  printf "%-26s %9s %10s %14s\n" tool seconds MB/s "ratio vs peer"
  row "mf-store canon --lines" "$t_canon" "$t_jq"
  row "jq -c -S ." "$t_jq" ""
  row "mf-store hash" "$t_hash" "$t_sha"
  row "sha256sum" "$t_sha" ""
} | tee "$results"

# --- micro-benchmarks -------------------------------------------------------------------------
if [[ ${MF_BENCH_MICRO:-1} != 0 && -x $bin/mf_bench ]]; then
  log "running mf_bench"
  {
    echo
    echo "Micro-benchmarks (mf_bench; bytes/s is input bytes except WriteCanonical/WriteNumber: output)"
    "$bin/mf_bench" --benchmark_min_time=0.3 --benchmark_color=false \
      --benchmark_out="$out_dir/micro.json" --benchmark_out_format=json 2>&1
  } | tee -a "$results"
fi
# --- process start-up ----------------------------------------------------------------------------
if [[ ${MF_BENCH_STARTUP:-1} != 0 ]]; then
  log "running startup_bench.sh"
  { echo; "$root/bench/startup_bench.sh"; } | tee -a "$results"
fi
log "results written to $results"
