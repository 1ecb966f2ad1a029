#!/usr/bin/env bash
# Whole-process benchmark of trace verification: mf-replay against `jq -c . >/dev/null` and a
# python3 json.loads-per-line loop on one generated valid trace, measured in the same run, beside
# the limits of the machine (`openssl dgst -sha256` and `sha256sum` for one SHA-256 pass, `wc -l`
# for reading the bytes), plus mf-replay's peak RSS on a small and a large trace (it streams: memory
# must not grow with the trace). With MF_BIN_BEFORE, an earlier build's mf-replay is timed in the
# same run (before/after on one machine state). With perf, the CPU of each thread is printed too:
# the checking thread and the hashing one, the busier of which is the wall time on idle cores.
# Benchmarks are not tests: only correctness checks
# (mf-replay says "ok", both builds print the same summary) fail the script.
#
# Environment:
#   MF_BIN          bin directory holding mf-replay (default: build it, Release, in build-bench)
#   MF_BIN_BEFORE   bin directory of an earlier build's mf-replay, timed beside it (optional)
#   MF_BENCH_DIR    output directory (default target/bench)
#   MF_BENCH_MB     size of the large trace in MB (default 100); the small one is a tenth
#   MF_BENCH_RUNS   timed runs per command, the best is kept (default 3)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out_dir=${MF_BENCH_DIR:-$root/target/bench}
mb=${MF_BENCH_MB:-100}
runs=${MF_BENCH_RUNS:-3}
small_mb=$(awk -v m="$mb" 'BEGIN { printf "%g", m / 10 }')

bench_name=replay_bench
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
release_bin mf-replay
replay=$bin/mf-replay
[[ -x $replay ]] || die "$replay not found (set MF_BIN)"
require_tools jq python3 awk openssl /usr/bin/time
before=${MF_BIN_BEFORE:+$MF_BIN_BEFORE/mf-replay}
[[ -z $before || -x $before ]] || die "$before not found (MF_BIN_BEFORE)"
mkdir -p "$out_dir"

big=$out_dir/trace-${mb}mb.jsonl
small=$out_dir/trace-${small_mb}mb.jsonl
for pair in "$big:$mb" "$small:$small_mb"; do
  file=${pair%%:*}
  size=${pair##*:}
  if [[ ! -s $file ]]; then
    log "generating $file"
    python3 "$root/bench/replay_gen.py" "$file" "$size"
  fi
done

# Correctness first: the generated traces are valid, and the digest is sha256sum's.
summary=$("$replay" "$big") || die "mf-replay rejected $big: $summary"
[[ $(jq -r .status <<<"$summary") == ok ]] || die "status is not ok: $summary"
[[ $(jq -r .trace_sha256 <<<"$summary") == $(sha256sum "$big" | cut -d' ' -f1) ]] ||
  die "trace_sha256 differs from sha256sum"
if [[ -n $before ]]; then
  [[ $("$before" "$big") == "$summary" ]] || die "$before prints another summary for $big"
fi

bytes=$(stat -c %s "$big")

# The trace is a path argument, not stdin: best_of runs the command several times.
py_loop='import json, sys
with open(sys.argv[1], "rb") as f:
    for line in f:
        json.loads(line)'

cat "$big" >/dev/null  # warm the page cache
t_replay=$(best_of "$replay" "$big")
t_before=""
[[ -z $before ]] || t_before=$(best_of "$before" "$big")
t_jq=$(best_of jq -c . "$big")
t_py=$(best_of python3 -c "$py_loop" "$big")
t_sha=$(best_of sha256sum "$big")
t_ossl=$(best_of openssl dgst -sha256 "$big")
t_wc=$(best_of wc -l "$big")

# CPU seconds beside the wall clock: mf-replay hashes on a second thread, so its wall time is less
# than its CPU time on an idle machine; the peers run on one thread.
c_replay=$(cpu_of "$replay" "$big")
c_before=""
[[ -z $before ]] || c_before=$(cpu_of "$before" "$big")
c_py=$(cpu_of python3 -c "$py_loop" "$big")
c_ossl=$(cpu_of openssl dgst -sha256 "$big")

# split BIN: the share of mf-replay's CPU on the checking (main) thread, from `perf record` samples
# every 100 us of task-clock by thread (finer sampling inflates the time it measures); "-" without
# perf. Times the share gives the checking thread's CPU seconds, the rest the hashing thread's.
split() {
  command -v perf >/dev/null || {
    echo "-"
    return
  }
  local data=$out_dir/replay_split.data
  perf record -q -e task-clock -c 100000 -o "$data" -- "$1" "$big" >/dev/null 2>&1
  perf report -i "$data" --sort pid -F sample,pid --stdio 2>/dev/null | grep -v '^#' |
    awk 'NF >= 2 { split($2, id, ":"); print id[1], $1 }' | sort -n |
    awk '{ n[++k] = $2; total += $2 } END { printf "%.3f", (total > 0 ? n[1] / total : 0) }'
  rm -f "$data"
}
s_replay=$(split "$replay")
s_before=""
[[ -z $before ]] || s_before=$(split "$before")

rss() { /usr/bin/time -f %M "$replay" "$1" 2>&1 >/dev/null | tail -1; }
rss_small=$(rss "$small")
rss_big=$(rss "$big")

awk -v bytes="$bytes" -v r="$t_replay" -v b="$t_before" -v j="$t_jq" -v p="$t_py" -v s="$t_sha" \
  -v o="$t_ossl" -v w="$t_wc" -v cr="$c_replay" -v cb="$c_before" -v cp="$c_py" -v co="$c_ossl" \
  -v mb="$mb" -v smb="$small_mb" -v sr="$s_replay" -v sb="$s_before" \
  -v rs="$rss_small" -v rb="$rss_big" 'BEGIN {
  m = bytes / 1e6
  printf "trace: %.1f MB, best of runs, page cache warm\n", m
  printf "%-34s %8s %9s %14s\n", "command", "seconds", "MB/s", "vs mf-replay"
  printf "%-34s %8.3f %9.1f %14s\n", "mf-replay (verify + sha256)", r, m / r, "1.00x"
  if (b != "") printf "%-34s %8.3f %9.1f %13.2fx\n", "mf-replay, MF_BIN_BEFORE build", b, m / b, b / r
  printf "%-34s %8.3f %9.1f %13.2fx\n", "jq -c . >/dev/null", j, m / j, j / r
  printf "%-34s %8.3f %9.1f %13.2fx\n", "python3 json.loads per line", p, m / p, p / r
  printf "%-34s %8.3f %9.1f %13.2fx\n", "openssl dgst -sha256 (one pass)", o, m / o, o / r
  printf "%-34s %8.3f %9.1f %13.2fx\n", "sha256sum (one SHA-256 pass)", s, m / s, s / r
  printf "%-34s %8.3f %9.1f %13.2fx\n", "wc -l (reading the bytes)", w, m / w, w / r
  printf "CPU seconds (all threads, best of runs): mf-replay %s, MF_BIN_BEFORE build %s, python3 %s, openssl %s\n", cr, (cb == "" ? "-" : cb), cp, co
  if (cr > 0 && co > 0) {
    printf "CPU ratios: python3 / mf-replay %.2fx, mf-replay / openssl %.2fx", cp / cr, cr / co
    if (cb > 0) printf "; MF_BIN_BEFORE build: %.2fx, %.2fx", cp / cb, cb / co
    printf "\n"
  }
  if (sr != "-" && cr > 0) {
    printf "By thread (checking + hashing): mf-replay %.3f + %.3f s, the busier one %.2fx python3, %.2fx openssl", cr * sr, cr * (1 - sr), cp / max(sr, 1 - sr) / cr, max(sr, 1 - sr) * cr / co
    if (sb != "" && cb > 0) printf "; MF_BIN_BEFORE build %.3f + %.3f s", cb * sb, cb * (1 - sb)
    printf "\n"
  }
  printf "mf-replay peak RSS: %s MB trace %.1f MiB, %s MB trace %.1f MiB\n", smb, rs / 1024, mb, rb / 1024
}
function max(a, b) { return a > b ? a : b }' | tee "$out_dir/replay_results.txt"
