#!/usr/bin/env bash
# Millforge's harness loop against forge's WorkflowRunner as whole processes, on the same scripted
# conversation (fixtures/harness/runs/golden-ok.json) over the same workflow: mf-run --plan on the
# compiled golden harness, and bench/forge_runner.py on forge's rendering of it (same tools,
# required step, prerequisites; the artifact tools write the same bytes). Both sides run in this
# script, so the ratio is measured on one machine minutes apart. Then forge's decisions on the
# golden-recover conversation beside ours (violations by kind), and every trajectory of
# fixtures/harness/forge/ run by both: ours on the ported harness, forge's on its own eval scenario
# (with its validator's verdict on the final answer), for docs/benchmarks.md and
# docs/forge-scenarios.md.
#
# Skips (exit 0, with the reason) when forge's snapshot or a Python with pydantic 2 is missing.
# Benchmarks are not tests: only the correctness checks (both runs complete, same artifacts, the
# trace verifies, the call-by-call comparisons agree) fail the script.
#
# Environment:
#   MF_BIN            bin directory holding mf-compile, mf-run, mf-replay (default build/bin)
#   MF_BENCH_DIR      output directory (default target/bench)
#   MF_BENCH_RUNS     processes timed per command (default 20)
#   MF_FORGE_REPO     a git clone (bare or not) of antoinezambelli/forge; without it the script skips
#   MF_FORGE_PYTHON   the Python to run forge with (default python3)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${MF_BIN:-$root/build/bin}
out_dir=${MF_BENCH_DIR:-$root/target/bench}
runs=${MF_BENCH_RUNS:-20}
repo=${MF_FORGE_REPO:-}
py=${MF_FORGE_PYTHON:-python3}

bench_name=forge_compare
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

skip() {
  log "skipped: $*"
  exit 0
}

[[ -n $repo ]] || skip "set MF_FORGE_REPO to a git clone of antoinezambelli/forge"
for b in mf-compile mf-run mf-replay; do
  [[ -x $bin/$b ]] || die "$bin/$b not found (set MF_BIN)"
done
require_tools awk jq git tar
if ! git -C "$repo" rev-parse --verify -q HEAD >/dev/null 2>&1; then
  skip "forge's snapshot is not at $repo (set MF_FORGE_REPO to a clone of antoinezambelli/forge)"
fi
command -v "$py" >/dev/null || skip "$py is not installed (set MF_FORGE_PYTHON)"
# forge needs pydantic 2 (Debian bookworm's python3-pydantic is 1.10); httpx is not needed, since
# forge_runner.py imports only forge's core.
pyd=$("$py" -c 'import pydantic; print(pydantic.VERSION)' 2>/dev/null) ||
  skip "$py has no pydantic (forge needs pydantic >= 2: pip install 'pydantic>=2', or set MF_FORGE_PYTHON)"
[[ ${pyd%%.*} -ge 2 ]] ||
  skip "$py has pydantic $pyd; forge needs pydantic >= 2 (set MF_FORGE_PYTHON to a Python that has it)"

work=$out_dir/forge-compare
rm -rf "$work" && mkdir -p "$work/forge" "$work/ws/src" "$work/art-mf" "$work/art-forge"
git -C "$repo" archive HEAD src tests/eval/scenarios | tar -x -C "$work/forge"
forge_rev=$(git -C "$repo" rev-parse --short HEAD)
cp "$root/fixtures/repository/src/lib.rs" "$work/ws/src/"
h=$root/fixtures/harness
"$bin/mf-compile" "$h/golden.yaml" --catalog "$h/catalog.json" --profiles "$h/profiles.json" \
  -o - >"$work/plan.json"
runner=("$py" "$root/bench/forge_runner.py" --forge "$work/forge")

# --- correctness, once: both complete, with the same artifacts --------------------------------
mf_run() { # mf_run SCRIPT ARTIFACTS TRACE [options]
  local script=$1 art=$2 trace=$3
  shift 3
  "$bin/mf-run" --plan "$work/plan.json" --model "scripted:$script" --workspace "$work/ws" \
    --artifacts "$art" --fixed-clock --run-id forge-compare --trace "$trace" "$@"
}
mf_run "$h/runs/golden-ok.json" "$work/art-mf" "$work/ok.jsonl" >"$work/mf.result"
[[ $(jq -r .terminal "$work/mf.result") == completed ]] || die "mf-run: $(cat "$work/mf.result")"
"$bin/mf-replay" "$work/ok.jsonl" >/dev/null || die "mf-run's trace does not verify"
"${runner[@]}" --script "$h/runs/golden-ok.json" --artifacts "$work/art-forge" >"$work/forge.result" ||
  die "forge_runner.py: $(cat "$work/forge.result")"
[[ $(jq -r .end.result.terminal_result "$work/forge.result") == BUILDER_COMPLETE ]] ||
  die "forge did not finish: $(cat "$work/forge.result")"
for a in draft report; do
  cmp -s "$work/art-mf/$a" "$work/art-forge/$a" || die "artifact $a differs between the two runs"
done
log "correct: both complete with BUILDER_COMPLETE after 3 calls; draft and report identical"

# --- timing: whole processes ------------------------------------------------------------------
# times N CMD...: "BEST MEAN" wall-clock seconds per process over N runs (stdout discarded). The
# best is what the ratio uses: on a shared machine it is the figure least moved by other load.
times() {
  local n=$1 t0 t1 i all=""
  shift
  for ((i = 0; i < n; i++)); do
    t0=$(date +%s.%N)
    "$@" >/dev/null
    t1=$(date +%s.%N)
    all+="$t0 $t1 "
  done
  awk -v all="$all" 'BEGIN {
    k = split(all, v, " "); best = -1; sum = 0
    for (i = 1; i < k; i += 2) { d = v[i + 1] - v[i]; sum += d; if (best < 0 || d < best) best = d }
    printf "%.4f %.4f\n", best, sum / (k / 2) }'
}
log "timing ($runs processes each)"
read -r b_event m_event < <(times "$runs" mf_run "$h/runs/golden-ok.json" "$work/art-mf" "$work/t.jsonl")
read -r b_batch m_batch < <(times "$runs" mf_run "$h/runs/golden-ok.json" "$work/art-mf" \
  "$work/t.jsonl" --durability batch)
read -r b_forge m_forge < <(times "$runs" "${runner[@]}" --script "$h/runs/golden-ok.json" \
  --artifacts "$work/art-forge")
read -r b_py m_py < <(times "$runs" "$py" -c 'import pydantic')
read -r b_true m_true < <(times "$runs" /bin/true)
# forge's loop alone, in one process (imports and pydantic's schema caches warm).
loop_runs=$((runs * 10))
t_forge_loop=$("${runner[@]}" --script "$h/runs/golden-ok.json" --artifacts "$work/art-forge" \
  --repeat "$loop_runs" | jq -r .seconds_per_run)

# --- decisions on golden-recover --------------------------------------------------------------
rm -rf "$work/art-rec" && mkdir "$work/art-rec"
mf_run "$h/runs/golden-recover.json" "$work/art-rec" "$work/rec.jsonl" >/dev/null
ours=$("$bin/mf-replay" "$work/rec.jsonl" | jq -c '.violations_by_kind | del(.tool_denied)')
ours_calls=$(jq -c -s '[.[] | select(.event == "guardrail_violation")] | group_by(.call) |
  map({call: .[0].call, decisions: map(.kind)})' "$work/rec.jsonl")
theirs=$("${runner[@]}" --script "$h/runs/golden-recover.json" --decisions)

# ours_calls TRACE: a trace's model calls as {call, tools, decisions, warning} (the trace's content
# inline, for the tool calls' names and arguments).
ours_calls() {
  jq -sc 'reduce .[] as $e ({call: 0, out: []};
      if $e.event == "model_requested" then
        .call = $e.call | .out += [{call: $e.call, tools: [], decisions: []} +
          (if $e.context_warning then {warning: $e.context_warning.message} else {} end)]
      elif $e.event == "model_responded" then
        .out[-1].tools = [($e.tool_calls // [])[] | .name + (if .arguments == "{}" then "{}" else "" end)]
      elif $e.event == "guardrail_violation" then .out[-1].decisions += [$e.kind]
      elif $e.event == "tool_completed" and $e.ok then .out[-1].decisions += ["executed"]
      else . end) | .out | map(.decisions |= unique)' "$1"
}
# forge_calls: forge_runner.py --decisions output (stdin) in the same form.
forge_calls() {
  jq -c '[.per_call[] | {call, tools: (.calls // []), decisions: (.decisions | unique)} +
    (if .context_warning then {warning: .context_warning} else {} end)]'
}
# masked: the calls with each warning's percentage and token count masked.
masked() {
  jq -c 'map(if .warning then .warning |= sub("^\\[Context usage: [0-9]+% \\([0-9,]+ / ";
    "[Context usage: N% (N / ") else . end)'
}
# compare_calls SCENARIO RUN HARNESS: runs fixtures/harness/forge/SCENARIO/runs/RUN.json on both
# sides (forge with HARNESS's context budget, phases and warning thresholds), prints both call
# lists and their ends, and a MISMATCH line when they differ.
compare_calls() {
  local s=$1 r=$2 hf=$3 dir=$root/fixtures/harness/forge/$1 plan=$work/calls.plan ctx ours theirs
  "$bin/mf-compile" "$dir/$hf" --catalog "$dir/catalog.json" -o - >"$plan"
  ctx=$(jq -r '.. | objects | select(has("budget_tokens") and has("phase_thresholds")) |
    "--budget-tokens \(.budget_tokens) --phase-thresholds \(.phase_thresholds | join(","))" +
    (if .warning_thresholds then " --warning-thresholds \(.warning_thresholds | join(","))"
     else "" end)' "$plan" | head -n 1)
  rm -rf "$work/sa" && mkdir "$work/sa"
  "$bin/mf-run" --plan "$plan" --model "scripted:$dir/runs/$r.json" --workspace "$dir/workspace" \
    --artifacts "$work/sa" --request "$dir/request.json" --fixed-clock --trace-content inline \
    --trace "$work/calls.jsonl" >"$work/calls.result" 2>/dev/null || true
  ours=$(ours_calls "$work/calls.jsonl")
  # shellcheck disable=SC2086  # ctx is a list of options
  theirs=$("${runner[@]}" --scenario "$s" --script "$dir/runs/$r.json" --decisions $ctx || true)
  echo "  $s/$r ($hf: ${ctx:-default context})"
  echo "    millforge: $ours -> $(jq -r .terminal "$work/calls.result")"
  echo "    forge:     $(forge_calls <<<"$theirs") -> $(jq -r 'if .end.ok then "returned" else .end.error end' <<<"$theirs")"
  if [[ $(masked <<<"$ours") == "$(forge_calls <<<"$theirs" | masked)" ]]; then
    echo "    identical call by call"
  else
    echo "    MISMATCH: the two sides decided differently on $s/$r"
  fi
}

{
  echo "mf-run --plan vs forge WorkflowRunner ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores)"
  echo "build: $("$bin/mf-run" --version 2>/dev/null || echo unknown)"
  echo "forge: snapshot $forge_rev, $("$py" --version 2>&1), pydantic $pyd"
  echo "conversation: fixtures/harness/runs/golden-ok.json (3 model calls, 3 tool calls, 2 artifacts)"
  echo "wall-clock seconds per process, best and mean of $runs runs; ratio = forge's best / ours"
  echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  {
    printf "%-44s %8s %8s %8s\n" process best mean ratio
    row3() { awk -v n="$1" -v b="$2" -v m="$3" -v f="$4" 'BEGIN {
      r = (f == "") ? "" : sprintf("%.1fx", f / b); printf "%-44s %8.4f %8.4f %8s\n", n, b, m, r }'; }
    row3 "mf-run --plan (per-event fdatasync)" "$b_event" "$m_event" "$b_forge"
    row3 "mf-run --plan --durability batch" "$b_batch" "$m_batch" "$b_forge"
    row3 "python3 forge_runner.py" "$b_forge" "$m_forge" ""
    row3 "python3 -c \"import pydantic\" (start-up floor)" "$b_py" "$m_py" ""
    row3 "/bin/true (spawn floor)" "$b_true" "$m_true" ""
    awk -v l="$t_forge_loop" -v n="$loop_runs" 'BEGIN {
      printf "%-44s %8.4f %8s   (mean of %d runs in one process)\n", "forge loop alone, per run", l, "", n }'
  }
  echo
  echo "golden-recover (fixtures/harness/runs/golden-recover.json), violations by kind:"
  echo "  millforge: $ours"
  echo "  forge:     $(jq -c .violations_by_kind <<<"$theirs")"
  echo "  millforge per call: $ours_calls"
  echo "  forge per call:     $(jq -c '[.per_call[] | {call, decisions: (.decisions - ["executed"])}
    | select(.decisions | length > 0)]' <<<"$theirs")"
  echo "  forge's end: $(jq -c .end <<<"$theirs") after $(jq .model_calls <<<"$theirs") calls"

  # Call by call, on the trajectories whose point is a decision both sides take: resolution errors
  # (basic_2step_tre/wrong-keys), empty arguments (tool_selection/no-arguments) and context
  # warnings (conditional_routing/ideal on harness-warnings.yaml, forge with the same budget and
  # thresholds). Each side's calls are listed as {call, tools, decisions, warning}: the tools the
  # reply called (`name{}` for a call without arguments), the decisions taken on them (a violation
  # kind, or `executed`), and the context warning the request carried. They must be identical,
  # except the warning's percentage and token count, which each side's own estimate gives
  # (docs/forge-scenarios.md, "Context warnings"); the budget and the text around them must agree.
  echo
  echo "call by call (tools called, decisions, context warning); ours | forge's:"
  compare_calls basic_2step_tre wrong-keys harness.yaml
  compare_calls tool_selection no-arguments harness.yaml
  compare_calls conditional_routing ideal harness-warnings.yaml

  # The ported scenarios: ours (terminal, violations) beside forge's (end, violations, validator).
  echo
  echo "fixtures/harness/forge/ trajectories: millforge | forge (forge's scenario, its validator)"
  printf "%-40s %-17s %-50s | %-22s %-5s %s\n" run terminal "violations" end valid violations
  for dir in "$root"/fixtures/harness/forge/*/; do
    s=$(basename "$dir")
    "$bin/mf-compile" "$dir/harness.yaml" --catalog "$dir/catalog.json" -o - >"$work/$s.plan"
    for r in "$dir"/runs/*.json; do
      n=$(basename "$r" .json)
      rm -rf "$work/sa" && mkdir "$work/sa"
      "$bin/mf-run" --plan "$work/$s.plan" --model "scripted:$r" --workspace "$dir/workspace" \
        --artifacts "$work/sa" --request "$dir/request.json" --fixed-clock \
        --trace "$work/s.jsonl" >"$work/s.result" 2>/dev/null || true
      v=$("$bin/mf-replay" "$work/s.jsonl" | jq -c '.violations_by_kind | del(.tool_denied)')
      f=$("${runner[@]}" --scenario "$s" --script "$r" --decisions || true)
      printf "%-40s %-17s %-50s | %-22s %-5s %s\n" "$s/$n" "$(jq -r .terminal "$work/s.result")" "$v" \
        "$(jq -r 'if .end.ok then "returned" else .end.error end' <<<"$f")" \
        "$(jq -r '.end.validated' <<<"$f")" "$(jq -c .violations_by_kind <<<"$f")"
    done
  done
} | tee "$out_dir/forge-compare-results.txt"
log "results written to $out_dir/forge-compare-results.txt"
# The call-by-call comparison is a correctness check: a mismatch fails the script (the block above
# runs in a pipeline's subshell, so its count is read back from the output).
n=$(grep -c '^    MISMATCH: ' "$out_dir/forge-compare-results.txt" || true)
[[ $n -eq 0 ]] || die "$n call-by-call comparison(s) differ between Millforge and forge"
