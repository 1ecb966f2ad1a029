#!/usr/bin/env bash
# Process start-up: every Millforge program's `--version` against `/bin/true` (no arguments: the
# cost of spawning any process here), all measured in the same run. Each round runs every command
# MF_BENCH_STARTUP_RUNS times in a row (a batch, timed as a whole), the commands taking turns so
# that a busy moment of the machine falls on all of them alike; a command's ratio is its batch time
# over /bin/true's in the same round, and the table shows the median over the rounds. Then, per
# program, the shared libraries it loads (ldd), whether libcurl is among them, and the dynamic
# loader's own figures (LD_DEBUG=statistics, one run: relocations before main, cycles spent).
# With MF_BENCH_BASELINE=DIR the programs in DIR (another build: before a change) take turns in
# the same rounds, as rows "PROGRAM (baseline)".
# Benchmarks are not tests: nothing here fails on a time.
#
# Environment:
#   MF_BIN                   use these binaries instead of building
#   MF_BENCH_BUILD           build dir when MF_BIN is unset (default build-bench, Release)
#   MF_BENCH_BASELINE        a bin directory to compare with, in the same rounds (default none)
#   MF_BENCH_DIR             output dir (default target/bench)
#   MF_BENCH_STARTUP_RUNS    invocations per command and round (default 200)
#   MF_BENCH_STARTUP_ROUNDS  rounds; the median is reported (default 5)
#   MF_JOBS                  build parallelism (default 2)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out_dir=${MF_BENCH_DIR:-$root/target/bench}
runs=${MF_BENCH_STARTUP_RUNS:-200}
rounds=${MF_BENCH_STARTUP_ROUNDS:-5}
baseline=${MF_BENCH_BASELINE:-}
results=$out_dir/startup-results.txt
mkdir -p "$out_dir"

bench_name=startup_bench.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

require_tools ldd awk
programs=(mf-compile mf-run mf-replay mf-eval mf-toolread mf-audit mf-store)
release_bin "${programs[@]}"

# The commands timed: labels and paths, /bin/true first.
labels=(true)
paths=(/bin/true)
for p in "${programs[@]}"; do
  labels+=("$p")
  paths+=("$bin/$p")
  if [[ -n $baseline ]]; then
    labels+=("$p (baseline)")
    paths+=("$baseline/$p")
  fi
done
for path in "${paths[@]:1}"; do
  [[ -x $path ]] || die "$path not found (set MF_BIN, or unset it to build)"
  "$path" --version >/dev/null || die "$path --version failed"
done

# batch_us CMD...: microseconds for $runs invocations of CMD in a row.
batch_us() {
  local t0=$EPOCHREALTIME i
  for ((i = 0; i < runs; i++)); do "$@" >/dev/null; done
  local t1=$EPOCHREALTIME
  echo $((${t1/./} - ${t0/./}))
}

# One line per round and command: "ROUND INDEX MICROSECONDS"; /bin/true (index 0) first in every
# round, the others in an order rotated by one each round, so that none always follows it.
samples=$out_dir/startup-samples.txt
: >"$samples"
n=${#paths[@]}
log "timing $rounds rounds of $runs runs of $n commands"
for ((r = 0; r < rounds; r++)); do
  echo "$r 0 $(batch_us /bin/true)" >>"$samples"
  for ((k = 0; k < n - 1; k++)); do
    i=$((1 + (k + r) % (n - 1)))
    echo "$r $i $(batch_us "${paths[$i]}" --version)" >>"$samples"
  done
done

# median: the middle line of sorted numbers on stdin.
median() { awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# loader_stats COMMAND...: "symbol relative cycles" from LD_DEBUG=statistics: the symbol and
# relative relocations the dynamic loader processed before main, and the fewest CPU cycles it
# spent then over 5 runs (one run is at the mercy of the other processes).
loader_stats() {
  local k
  for ((k = 0; k < 5; k++)); do LD_DEBUG=statistics "$@" 2>&1 >/dev/null; done | awk '
    /total startup time in dynamic loader/ { if (t == "" || $(NF - 1) < t) t = $(NF - 1) }
    $2 == "number" && $4 == "relocations:" && rel == "" { rel = $NF }
    $2 == "number" && $4 == "relative" { rr = $NF }
    END { printf "%d %d %d\n", rel, rr, t }'
}

{
  echo "Millforge process start-up ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores)"
  echo "programs: $bin ($("$bin/mf-run" --version 2>/dev/null | head -n 1))"
  [[ -z $baseline ]] || echo "baseline: $baseline ($("$baseline/mf-run" --version | head -n 1))"
  echo "each round: $runs runs of every command in turn; median of $rounds rounds;"
  echo "ratio = the command's time / /bin/true's time in the same round (1.00x = as fast as true)"
  echo
  printf "%-23s %8s %8s %5s %8s %7s %9s %12s\n" command "us/run" ratio libs libcurl relocs \
    relative "loader kcyc"
  for ((i = 0; i < n; i++)); do
    path=${paths[$i]}
    libs=$(ldd "$path" | grep -c '=>' || true)
    curl=$(ldd "$path" | grep -q 'libcurl' && echo yes || echo no)
    if ((i == 0)); then
      read -r relocs relative loader < <(loader_stats "$path")
    else
      read -r relocs relative loader < <(loader_stats "$path" --version)
    fi
    # Per round: microseconds per run and the ratio to /bin/true; the medians of both.
    per_round=$(awk -v i="$i" -v runs="$runs" '
      $2 == 0 { base[$1] = $3 }
      $2 == i { t[$1] = $3 }
      END { for (r in t) printf "%.1f %.4f\n", t[r] / runs, t[r] / base[r] }' "$samples")
    us=$(cut -d' ' -f1 <<<"$per_round" | sort -n | median)
    ratio=$(cut -d' ' -f2 <<<"$per_round" | sort -n | median)
    printf "%-23s %8.0f %7.2fx %5d %8s %7d %9d %12d\n" "${labels[$i]}" "$us" "$ratio" "$libs" \
      "$curl" "$relocs" "$relative" "$((loader / 1000))"
  done
} | tee "$results"
log "results written to $results"
