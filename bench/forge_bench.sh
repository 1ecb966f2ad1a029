#!/usr/bin/env bash
# Whole-process latency of the Forge slice: mf-run on the valid fixture (trace fdatasync'd per event,
# the default) and with --durability batch, mf-replay on the repair trace, and the full mf-audit,
# beside `jq -c .` on the same task file and /bin/true, the cost of spawning any process here.
# Usage: MF_BIN=build/bin bench/forge_bench.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${MF_BIN:-build/bin}
runs=${1:-200}
out=target/bench
mkdir -p "$out"
f=fixtures/forge

# mean milliseconds per invocation of "$@", over $runs invocations
per_run_ms() {
  local start end
  start=$(date +%s%N)
  for _ in $(seq "$runs"); do "$@" >/dev/null; done
  end=$(date +%s%N)
  awk -v ns=$((end - start)) -v n="$runs" 'BEGIN { printf "%.3f", ns / 1e6 / n }'
}

run_event=$(per_run_ms "$bin/mf-run" --task $f/task-valid.json \
  --model scripted:$f/responses-valid.json --trace "$out/run.jsonl")
run_batch=$(per_run_ms "$bin/mf-run" --task $f/task-valid.json \
  --model scripted:$f/responses-valid.json --durability batch --trace "$out/run.jsonl")
run_repair=$(per_run_ms "$bin/mf-run" --task $f/task-valid.json \
  --model scripted:$f/responses-repair.json --trace "$out/repair.jsonl")
replay=$(per_run_ms "$bin/mf-replay" "$out/repair.jsonl")
true_ms=$(per_run_ms /bin/true)
jq_ms=$(per_run_ms jq -c . $f/task-valid.json)
runs_audit=$(( runs / 20 > 0 ? runs / 20 : 1 ))
mkdir -p "$out/audit"
audit=$(runs=$runs_audit per_run_ms "$bin/mf-audit" --fixtures fixtures --out-dir "$out/audit" -q)

{
  echo "Forge slice, whole processes, mean of $runs runs (audit: $runs_audit)"
  printf '%-52s %8s ms\n' "mf-run valid fixture (fdatasync per event)" "$run_event"
  printf '%-52s %8s ms\n' "mf-run valid fixture (--durability batch)" "$run_batch"
  printf '%-52s %8s ms\n' "mf-run repair fixture (7 events, fdatasync each)" "$run_repair"
  printf '%-52s %8s ms\n' "mf-replay repair trace" "$replay"
  printf '%-52s %8s ms\n' "mf-audit (6 child processes)" "$audit"
  printf '%-52s %8s ms\n' "jq -c . on the task file (a peer process)" "$jq_ms"
  printf '%-52s %8s ms\n' "/bin/true (process spawn floor)" "$true_ms"
} | tee "$out/forge-results.txt"
