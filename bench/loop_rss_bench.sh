#!/usr/bin/env bash
# Peak RSS of `mf-run --plan` as a whole process (/usr/bin/time -f %M) against the number of model
# turns: the read-submit plan (fixtures/harness/read-submit.yaml) driven by a generated scripted
# model that reads one small file on every turn and submits on the last. Compaction bounds the
# history the loop keeps, so the loop's memory should not grow with the turns; what does grow is
# the scripted model itself (the whole file is parsed up front), which the control row measures:
# the long script, ended after the short run's turns.
#
# The plan language caps max_iterations at 256 (the plan loader refuses more, even in a plan sealed
# again), so the script sets the compiled plan's budget to the longest run, at most 256, and seals
# it again (compiled_sha256 over the canonical plan without it, as mf-compile computes it).
# Benchmarks are not tests: only the correctness checks (each run completes with one tool call per
# turn, the trace verifies) fail the script.
#
# Environment:
#   MF_BIN          bin directory holding mf-compile, mf-run, mf-replay, mf-store (default build/bin)
#   MF_BENCH_DIR    output directory (default target/bench)
#   MF_BENCH_TURNS  the turn counts to compare (default "16 64 256"; at most 256)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${MF_BIN:-$root/build/bin}
out_dir=${MF_BENCH_DIR:-$root/target/bench}
read -r -a turns_list <<<"${MF_BENCH_TURNS:-16 64 256}"

bench_name=loop_rss_bench
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
for b in mf-compile mf-run mf-replay mf-store; do
  [[ -x $bin/$b ]] || die "$bin/$b not found (set MF_BIN)"
done
require_tools awk jq sha256sum /usr/bin/time
gen=$out_dir/loop-rss
rm -rf "$gen" && mkdir -p "$gen/ws/src"
cp "$root/fixtures/repository/src/lib.rs" "$gen/ws/src/"
results=$out_dir/loop-rss-results.txt

max_turns=0
for n in "${turns_list[@]}"; do ((n > max_turns)) && max_turns=$n; done
min_turns=${turns_list[0]}
for n in "${turns_list[@]}"; do ((n < min_turns)) && min_turns=$n; done
((max_turns <= 256)) || die "a plan allows at most 256 iterations (MF_BENCH_TURNS)"

# The plan, with room for the longest run, sealed again.
"$bin/mf-compile" "$root/fixtures/harness/read-submit.yaml" -o - >"$gen/compiled.json"
jq --argjson n "$max_turns" '.budgets.max_iterations = $n | del(.compiled_sha256)' \
  "$gen/compiled.json" | "$bin/mf-store" canon >"$gen/unsealed.json"
digest=$(head -c -1 "$gen/unsealed.json" | sha256sum | cut -d' ' -f1)
jq --arg d "$digest" '. + {compiled_sha256: $d}' "$gen/unsealed.json" | "$bin/mf-store" canon \
  >"$gen/plan.json"
"$bin/mf-compile" verify "$gen/plan.json" >/dev/null || die "the resealed plan does not verify"

# script STEPS SUBMIT_AT FILE: STEPS scripted replies, the submit at reply SUBMIT_AT, reads before.
script() {
  awk -v steps="$1" -v at="$2" 'BEGIN {
    print "{\"steps\": ["
    for (i = 1; i <= steps; i++) {
      if (i == at) call = "{\"name\": \"submit\", \"arguments\": {\"terminal_result\": \"COMPLETE\", \"summary\": \"done\"}}"
      else call = "{\"name\": \"read\", \"arguments\": {\"path\": \"src/lib.rs\"}}"
      printf "  {\"tool_calls\": [%s]}%s\n", call, (i < steps ? "," : "")
    }
    print "]}"
  }' >"$3"
}

# measure LABEL TURNS STEPS: one run of TURNS turns from a script of STEPS replies; prints a row.
measure() {
  local label=$1 turns=$2 steps=$3 s=$gen/script-$2-$3.json t=$gen/trace-$2-$3.jsonl
  script "$steps" "$turns" "$s"
  local t0 t1 kib
  t0=$(date +%s.%N)
  kib=$(/usr/bin/time -f %M "$bin/mf-run" --plan "$gen/plan.json" --model "scripted:$s" \
    --workspace "$gen/ws" --trace "$t" --durability batch --fixed-clock --run-id loop-rss \
    2>&1 >"$gen/result.json" | tail -1)
  t1=$(date +%s.%N)
  [[ $(jq -r .terminal "$gen/result.json") == completed ]] || die "$label: $(cat "$gen/result.json")"
  [[ $(jq -r .tool_calls "$gen/result.json") == "$turns" ]] || die "$label: not one call per turn"
  "$bin/mf-replay" "$t" >"$gen/replay.json" || die "$label: the trace does not verify"
  local compactions
  compactions=$(grep -c '"event":"context_compacted"' "$t" || true)
  awk -v l="$label" -v n="$turns" -v st="$steps" -v k="$kib" -v sb="$(stat -c %s "$s")" \
    -v tb="$(stat -c %s "$t")" -v c="$compactions" -v a="$t0" -v b="$t1" 'BEGIN {
    printf "%-22s %7d %7d %10.1f %11.2f %10.2f %6d %8.2f\n", l, n, st, k / 1024, sb / 1048576,
      tb / 1048576, c, b - a }'
  rm -f "$t"
}

{
  echo "mf-run --plan peak RSS against turns ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores)"
  echo "build: $("$bin/mf-run" --version 2>/dev/null || echo unknown)"
  echo "plan: fixtures/harness/read-submit.yaml, max_iterations set to $max_turns;"
  echo "one read of a small file per turn, --durability batch, digest trace content"
  echo
  printf "%-22s %7s %7s %10s %11s %10s %6s %8s\n" run turns script "RSS MiB" "script MiB" \
    "trace MiB" compct seconds
  for n in "${turns_list[@]}"; do measure "$n turns" "$n" "$n"; done
  measure "control: $min_turns of $max_turns" "$min_turns" "$max_turns"
} | tee "$results"
log "results written to $results"
