#!/usr/bin/env bash
# Whole-process latency of mf-compile: generated harnesses of 8..512 nodes (bench/gen_harness.py;
# layered DAG, 1-3 prerequisites per node, argument matches, artifacts required by terminals,
# min(N/8, 64) terminals, one catalog tool per node), each compiled as a process with the plan to
# /dev/null, and the golden harness beside /bin/true and `jq . catalog.json`, the cost of spawning any
# process and of a peer that merely parses the catalog. Prints ms per compile, ms per node, the
# marginal cost per node between sizes and t(512)/t(8), so growth can be judged (nothing is gated).
# Benchmarks are not tests: only the correctness checks (each plan compiles, verifies, has N nodes and
# its YAML and JSON twins give the same bytes) fail the script.
#
# Usage: MF_BIN=build/bin bench/compile_bench.sh
# Environment:
#   MF_BIN            bin directory holding mf-compile (default build/bin; use an optimised build)
#   MF_BENCH_DIR      output directory (default target/bench)
#   MF_BENCH_RUNS     timed runs per command, the best is kept (default 10)
#   MF_BENCH_BATCH    invocations per timed run, so that millisecond processes are resolved below
#                     the clock's step (default 10)
#   MF_BENCH_SIZES    node counts (default "8 16 32 64 128 256 512")
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${MF_BIN:-$root/build/bin}
out_dir=${MF_BENCH_DIR:-$root/target/bench}
runs=${MF_BENCH_RUNS:-10}
batch=${MF_BENCH_BATCH:-10}
sizes=${MF_BENCH_SIZES:-8 16 32 64 128 256 512}
gen=$out_dir/compile-gen
results=$out_dir/compile-results.txt

bench_name=compile_bench
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
mfc=$(cd "$bin" 2>/dev/null && pwd)/mf-compile
[[ -x $mfc ]] || die "$bin/mf-compile not found (set MF_BIN)"
require_tools jq python3 awk
mkdir -p "$gen"

h=$root/fixtures/harness
golden=(--catalog "$h/catalog.json" --profiles "$h/profiles.json")

# repeat CMD...: CMD $batch times; best_of times the whole batch.
repeat() {
  local j
  for ((j = 0; j < batch; j++)); do "$@"; done
}
# ms SECONDS_PER_BATCH: milliseconds per invocation.
ms() { awk -v s="$1" -v b="$batch" 'BEGIN { printf "%.3f", s * 1000 / b }'; }

# --- generate and check once ---------------------------------------------------------------------
log "generating harnesses ($sizes nodes) in $gen"
for n in $sizes; do
  python3 "$root/bench/gen_harness.py" "$gen" "$n"
  python3 "$root/bench/gen_harness.py" "$gen" "$n" --json
  args=("$gen/harness-$n.yaml" --catalog "$gen/catalog-$n.json" --profiles "$gen/profiles.json")
  "$mfc" "${args[@]}" -o - >"$gen/plan-$n.json" || die "$n nodes: the generated harness is rejected"
  "$mfc" "$gen/harness-$n.json" --catalog "$gen/catalog-$n.json" --profiles "$gen/profiles.json" |
    cmp -s - "$gen/plan-$n.json" || die "$n nodes: the YAML and JSON twins compile differently"
  summary=$("$mfc" verify "$gen/plan-$n.json") || die "$n nodes: the plan does not verify"
  [[ $(jq -r .nodes <<<"$summary") -eq $n ]] || die "$n nodes: verify counts $(jq .nodes <<<"$summary")"
done
"$mfc" "$h/golden.yaml" "${golden[@]}" -o - | "$mfc" verify - >/dev/null || die "golden does not verify"
log "correct: every size compiles, verifies, and its YAML and JSON twins agree"

# --- timings -------------------------------------------------------------------------------------
log "timing (best of $runs runs of $batch invocations each)"
declare -A t
for n in $sizes; do
  t[$n]=$(ms "$(best_of repeat "$mfc" "$gen/harness-$n.yaml" --catalog "$gen/catalog-$n.json" \
    --profiles "$gen/profiles.json" -o -)")
done
t_golden=$(ms "$(best_of repeat "$mfc" "$h/golden.yaml" "${golden[@]}" -o -)")
first=${sizes%% *} last=${sizes##* }
t_verify=$(ms "$(best_of repeat "$mfc" verify "$gen/plan-$last.json")")
t_true=$(ms "$(best_of repeat /bin/true)")
t_jq=$(ms "$(best_of repeat jq . "$h/catalog.json")")

{
  echo "mf-compile, whole processes ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores)"
  echo "build: $("$mfc" --version 2>/dev/null || echo unknown); peer: $(jq --version)"
  echo "best of $runs runs of $batch invocations each, plan to /dev/null; ms per invocation"
  echo
  printf "%6s %9s %11s %12s %12s %18s\n" nodes terminals "source KB" "ms/compile" "ms/node" \
    "marginal ms/node"
  prev_n="" prev_t=""
  for n in $sizes; do
    terms=$(jq '.terminal_result_map | length' "$gen/plan-$n.json")
    kb=$(awk -v b="$(stat -c %s "$gen/harness-$n.yaml")" 'BEGIN { printf "%.1f", b / 1024 }')
    awk -v n="$n" -v k="$terms" -v kb="$kb" -v t="${t[$n]}" -v pn="$prev_n" -v pt="$prev_t" 'BEGIN {
      marg = (pn == "") ? "-" : sprintf("%.4f", (t - pt) / (n - pn))
      printf "%6d %9d %11s %12.3f %12.4f %18s\n", n, k, kb, t, t / n, marg
    }'
    prev_n=$n prev_t=${t[$n]}
  done
  awk -v a="${t[$first]}" -v b="${t[$last]}" -v f="$first" -v l="$last" -v z="$t_true" 'BEGIN {
    if (l == f) exit
    printf "\nt(%d)/t(%d) = %.2f for %dx the nodes; above the spawn floor: %.2f; ", l, f, b / a, l / f,
      (b - z) / (a - z)
    printf "(t(%d)-t(%d))/%d = %.4f ms per node\n", l, f, l - f, (b - a) / (l - f)
  }'
  echo
  echo "ratio = peer ms / mf ms: above 1.00x Millforge is faster, below it is slower"
  printf "%-44s %10s %14s\n" command ms "ratio vs mf"
  awk -v g="$t_golden" -v tr="$t_true" -v jq="$t_jq" -v v="$t_verify" -v l="$last" 'BEGIN {
    printf "%-44s %10.3f %14s\n", "mf-compile golden.yaml -o - (5 nodes)", g, "1.00x"
    printf "%-44s %10.3f %14s\n", "mf-compile verify (" l "-node plan)", v, "-"
    printf "%-44s %10.3f %13.2fx\n", "jq . catalog.json (peer)", jq, jq / g
    printf "%-44s %10.3f %13.2fx\n", "/bin/true (process spawn floor)", tr, tr / g
  }'
} | tee "$results"
log "results written to $results"
