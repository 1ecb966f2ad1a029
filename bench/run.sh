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
#   MF_BENCH_BEFORE   a bin directory of an earlier build (same flags): every figure is taken for
#                     it and for MF_BIN's build in turn, MF_BENCH_RUNS rounds, in CPU time, and
#                     printed before/after with the range over the rounds (see compare below)
#   MF_BENCH_FILTER   with MF_BENCH_BEFORE: only the mf_bench benchmarks matching this regex
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
before=${MF_BENCH_BEFORE:-}
if [[ -n $before ]]; then
  [[ -n ${MF_BIN:-} ]] || die "MF_BENCH_BEFORE needs MF_BIN: the build to compare it with"
  command -v perf >/dev/null || die "MF_BENCH_BEFORE times CPU seconds with perf, which is not installed"
fi

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

peer_hash=$(sha256sum "$corpus" | cut -d' ' -f1)
for store in "$mf_store" ${before:+"$before/mf-store"}; do
  mf_hash=$("$store" hash "$corpus" | grep -oE '[0-9a-f]{64}' | head -n 1)
  [[ $mf_hash == "$peer_hash" ]] || die "$store hash says $mf_hash, sha256sum says $peer_hash"
done
if [[ -n $before ]]; then
  # The earlier build must write the same canonical bytes, or its times are not for the same work.
  [[ $("$before/mf-store" canon --lines "$corpus" | sha256sum) == $("$mf_store" canon --lines "$corpus" | sha256sum) ]] ||
    die "$before/mf-store canon --lines writes other bytes than $mf_store"
fi
log "correct: $lines lines both ways, same meaning as jq on a 20000-line sample, same digest"

# --- before and after ------------------------------------------------------------------------
# With MF_BENCH_BEFORE every figure is taken for both builds in each of $runs rounds, the builds
# taking turns (which goes first alternates), in CPU seconds: on a machine other work shares, the
# wall clock moves with the load, CPU time far less. Each figure is printed as the range over the
# rounds, and after/before as the range of the rounds' own ratios; "slower" marks a figure whose
# after/before is above 1.10 in every round, "faster" one below 1/1.10 in every round.
if [[ -n $before ]]; then
  # verdict(LO, HI) of the rounds' ratios; span(LO, HI): a range of seconds in one unit, chosen by LO.
  verdict='function verdict(lo, hi) { return lo > 1.10 ? "slower" : (hi < 1 / 1.10 ? "faster" : "") }
    function span(lo, hi,  f, u) {
      if (lo < 1e-6) { f = 1e9; u = "ns" } else if (lo < 1e-3) { f = 1e6; u = "us" }
      else if (lo < 1) { f = 1e3; u = "ms" } else { f = 1; u = "s" }
      return sprintf(lo * f < 10 ? "%.2f-%.2f %s" : lo * f < 100 ? "%.1f-%.1f %s" : "%.0f-%.0f %s", lo * f, hi * f, u)
    }'
  samples=$out_dir/compare-samples.txt # "SIDE ROUND NAME SECONDS", one line per figure and round
  : >"$samples"
  sides=(before after)
  declare -A dir=([before]=$before [after]=$bin)
  log "timing $runs rounds, before and after in turn (CPU seconds)"
  for ((r = 0; r < runs; r++)); do
    order=("${sides[@]}")
    ((r % 2 == 0)) || order=(after before)
    for side in "${order[@]}"; do
      printf '%s %d canon %s\n' "$side" "$r" "$(cpu_seconds "${dir[$side]}/mf-store" canon --lines "$corpus")"
      printf '%s %d hash %s\n' "$side" "$r" "$(cpu_seconds "${dir[$side]}/mf-store" hash "$corpus")"
    done >>"$samples"
    # The peers are the same binaries on both sides: their spread is the machine's noise.
    printf 'peer %d jq %s\n' "$r" "$(cpu_seconds jq -c -S . "$corpus")" >>"$samples"
    printf 'peer %d sha256sum %s\n' "$r" "$(cpu_seconds sha256sum "$corpus")" >>"$samples"
    if [[ ${MF_BENCH_MICRO:-1} != 0 ]]; then
      for side in "${order[@]}"; do
        log "round $((r + 1)): mf_bench ($side)"
        json=$out_dir/micro-$side-$r.json
        "${dir[$side]}/mf_bench" --benchmark_min_time=0.3 ${MF_BENCH_FILTER:+--benchmark_filter="$MF_BENCH_FILTER"} \
          --benchmark_out="$json" --benchmark_out_format=json >/dev/null 2>&1
        # Each benchmark's CPU time per iteration, in seconds.
        jq -r --arg side "$side" --arg r "$r" '.benchmarks[]
          | select(.run_type != "aggregate" and (.error_occurred // false | not))
          | "\($side) \($r) \(.name) \(.cpu_time * ({"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[.time_unit]))"' \
          "$json" >>"$samples"
      done
    fi
  done

  {
    echo "Millforge before and after ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"
    echo "before: $before ($("$before/mf-store" --version 2>/dev/null || echo unknown))"
    echo "after:  $bin ($("$mf_store" --version 2>/dev/null || echo unknown))"
    awk -v f="$corpus" -v b="$bytes" -v l="$lines" -v r="$runs" \
      'BEGIN { printf "corpus: %s (%.1f MB, %d lines); %d rounds, CPU seconds (task-clock; mf_bench: cpu_time)\n", f, b / 1e6, l, r }'
    echo "ranges are over the rounds; after/before is each round's own ratio (below 1.00x: faster)"
    echo
    printf "%-52s %18s %18s %13s\n" figure before after after/before
    awk "$verdict"'
      { key = $3; if (!(key in seen)) { seen[key] = 1; order[++n] = key }
        t[$1, $2, key] = $4; has[$1, key] = 1; if ($2 + 1 > rounds) rounds = $2 + 1 }
      function range(side, key,  r, lo, hi) {
        lo = hi = t[side, 0, key]
        for (r = 1; r < rounds; r++) { if (t[side, r, key] < lo) lo = t[side, r, key]; if (t[side, r, key] > hi) hi = t[side, r, key] }
        LO = lo; HI = hi
      }
      END {
        for (i = 1; i <= n; i++) {
          key = order[i]
          if (has["peer", key]) { range("peer", key); printf "%-52s %18s %18s %13s\n", key " (peer, same binary)", span(LO, HI), "", ""; continue }
          if (!has["before", key]) { only_after = only_after "\n  " key; continue }
          if (!has["after", key]) { only_before = only_before "\n  " key; continue }
          range("before", key); b = span(LO, HI); range("after", key); a = span(LO, HI)
          lo = hi = t["after", 0, key] / t["before", 0, key]
          for (r = 1; r < rounds; r++) { q = t["after", r, key] / t["before", r, key]; if (q < lo) lo = q; if (q > hi) hi = q }
          name = key == "canon" ? "mf-store canon --lines" : key == "hash" ? "mf-store hash" : key
          printf "%-52s %18s %18s %6.2f-%.2fx %s\n", name, b, a, lo, hi, verdict(lo, hi)
        }
        if (only_before != "") printf "\nonly in the before build:%s\n", only_before
        if (only_after != "") printf "\nonly in the after build:%s\n", only_after
      }' "$samples"
  } | tee "$results"
  if [[ ${MF_BENCH_STARTUP:-1} != 0 ]]; then
    log "running startup_bench.sh with the before build as its baseline"
    { echo; MF_BENCH_BASELINE=$before "$root/bench/startup_bench.sh"; } | tee -a "$results"
  fi
  log "results written to $results"
  exit 0
fi

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
