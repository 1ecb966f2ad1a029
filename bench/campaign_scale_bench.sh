#!/usr/bin/env bash
# Scaling of a whole `mf-eval run` campaign as a process: suites of 1,000, 10,000 and 100,000
# copies of Forge's valid-first-response task case (fixtures/forge, a scripted model), each run at
# -j 1 and -j 2 with a fixed clock and the file journal beside the report. Per run: wall time, CPU
# time (user + system) per case, and peak RSS (/usr/bin/time -f %M). Peak RSS should not grow with
# the cases beyond about a hundred bytes a case (the suite is read in windows, the entries are in
# a temporary file: docs/campaigns.md, "Memory"), and CPU per case should stay flat from 1k
# to 100k. The -j 2 speedup is wall(-j 1) / wall(-j 2) of the same suite in the same round, shown
# as the median and the range of the rounds. Beside it, the machine's ceiling in the same rounds:
# two -j 1 runs of the same suite at once against one after the other, which is what two cores
# give two processes that share nothing. On a shared machine both say as much about the
# neighbours as about the campaign, so the load average is printed with every row and CPU time is
# the figure to compare. Each run starts after a sync, so none pays for the writeback of the
# files the one before wrote.
# Benchmarks are not tests: only the correctness checks (every case passes) fail the script.
#
# Environment:
#   MF_BIN          bin directory holding mf-eval (default: a Release build, bench/lib.bash)
#   MF_BENCH_DIR    output directory (default target/bench)
#   MF_BENCH_CASES  the suite sizes (default "1000 10000 100000")
#   MF_BENCH_RUNS   rounds per size (default 3): -j 1, -j 2, and the ceiling's pair; the table
#                   shows the range (and for ratios the median)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out_dir=${MF_BENCH_DIR:-$root/target/bench}
read -r -a sizes <<<"${MF_BENCH_CASES:-1000 10000 100000}"
runs=${MF_BENCH_RUNS:-3}

bench_name=campaign_scale_bench
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
require_tools awk jq /usr/bin/time
release_bin mf-eval
[[ -x $bin/mf-eval ]] || die "$bin/mf-eval not found (set MF_BIN)"
gen=$out_dir/campaign-scale
rm -rf "$gen" && mkdir -p "$gen"
cp "$root/fixtures/forge/task-valid.json" "$gen/task.json"
cp "$root/fixtures/forge/responses-valid.json" "$gen/responses.json"
results=$out_dir/campaign-scale-results.txt

# suite N: N copies of the case, ids t-0 .. t-(N-1).
suite() {
  awk -v n="$1" 'BEGIN {
    printf "{\"suite_id\":\"scale\",\"cases\":["
    for (i = 0; i < n; i++) {
      printf "%s{\"id\":\"t-%d\",\"task\":\"task.json\",\"model\":\"scripted:responses.json\",", (i ? "," : ""), i
      printf "\"expect\":{\"terminal\":\"completed\",\"model_calls\":1}}"
    }
    print "]}"
  }' >"$gen/s$1.json"
}

# one N J [TAG]: "wall cpu rss" of one campaign, checked; TAG names its files (two at once).
one() {
  local tag=${3:-} r
  r=$gen/r$tag.json
  /usr/bin/time -f "%e %U %S %M" -o "$gen/time$tag" "$bin/mf-eval" run --suite "$gen/s$1.json" \
    --fixed-clock -j "$2" --output "$r" --journal "$r.journal" --quiet \
    2>"$gen/err$tag" || die "the campaign of $1 cases at -j $2 failed: $(cat "$gen/err$tag")"
  [[ $(jq -c '[.summary.cases, .summary.passed]' "$r") == "[$1,$1]" ]] ||
    die "the campaign of $1 cases at -j $2 did not pass every case"
  rm -f "$r" "$r.journal"
  awk '{ printf "%s %.3f %d\n", $1, $2 + $3, $4 }' "$gen/time$tag"
}
settle() { sync && sleep 0.2; }

{
  echo "# mf-eval run, Forge task cases, fixed clock, file journal; $(nproc) CPUs; $runs runs each"
  printf "%-8s %-3s %-12s %-12s %-12s %-18s %-18s %s\n" cases j "wall s" "CPU µs/case" \
    "peak RSS MiB" "-j2 speedup" "ceiling" "load (1 min)"
} | tee "$results"
# range V...: "min–max" of the numbers; spread V...: "median (min–max)".
range() { printf '%s\n' "$@" | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo "–" hi }'; }
spread() {
  printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 }
    END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
          printf "%.2f (%s–%s)\n", m, v[1], v[NR] }'
}
for n in "${sizes[@]}"; do
  suite "$n"
  w1=() w2=() c1=() c2=() m1=() m2=() ratios=() ceilings=()
  # -j 1, -j 2 and the ceiling's pair back to back in each round, so each ratio compares runs
  # under the same load.
  for ((r = 0; r < runs; r++)); do
    for j in 1 2; do
      settle
      read -r w c m < <(one "$n" "$j")
      per=$(awk -v c="$c" -v n="$n" 'BEGIN { printf "%.1f", c * 1e6 / n }')
      mib=$(awk -v m="$m" 'BEGIN { printf "%.1f", m / 1024 }')
      eval "w$j+=($w) c$j+=($per) m$j+=($mib)"
    done
    ratios+=("$(awk -v a="${w1[r]}" -v b="${w2[r]}" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')")
    settle
    read -r a _ < <(one "$n" 1 a)
    settle
    read -r b _ < <(one "$n" 1 b)
    settle
    one "$n" 1 a >"$gen/pair" &
    pair=$!
    read -r pb _ < <(one "$n" 1 b)
    wait "$pair" || die "the campaign of $n cases beside another failed"
    read -r pa _ <"$gen/pair"
    ceilings+=("$(awk -v a="$a" -v b="$b" -v x="$pa" -v y="$pb" \
      'BEGIN { t = x > y ? x : y; printf "%.2f", (t > 0 ? (a + b) / t : 0) }')")
  done
  load=$(cut -d' ' -f1 /proc/loadavg)
  printf "%-8s %-3s %-12s %-12s %-12s %-18s %-18s %s\n" "$n" 1 "$(range "${w1[@]}")" \
    "$(range "${c1[@]}")" "$(range "${m1[@]}")" - - "$load" | tee -a "$results"
  printf "%-8s %-3s %-12s %-12s %-12s %-18s %-18s %s\n" "$n" 2 "$(range "${w2[@]}")" \
    "$(range "${c2[@]}")" "$(range "${m2[@]}")" "$(spread "${ratios[@]}")x" \
    "$(spread "${ceilings[@]}")x" "$load" | tee -a "$results"
done
log "results in $results"
