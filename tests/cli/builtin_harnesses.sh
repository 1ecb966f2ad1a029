#!/usr/bin/env bash
# Millforge's four builtin harnesses end to end (fixtures/harness/builtin/): each compiles against
# the built-in catalog and runs with real tools as Millforge's workflow chains them — the planner
# writes `plan`, the builder reads it from the same artifact directory, patches a copy of the
# workspace and runs its test profiles, the checker reads the builder's evidence, the arbiter
# closes. Every run is replayed and re-run strictly. Then one failure per harness: a closure
# without the artifact it rests on, a failing test papered over, a failing test repaired too late,
# a premature terminal, a verdict written under the wrong id.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"

mfc="$MF_BIN/mf-compile"
mfr="$MF_BIN/mf-run"
rep="$MF_BIN/mf-replay"
h=fixtures/harness/builtin
runs=$h/runs
pristine=$h/workspace/src/app.txt

for n in planner builder checker arbiter; do
  run 0 "$mfc" $h/$n.yaml -o -
  cp "$tmp/out" "$tmp/$n.plan"
  [[ $(jq -r .harness_id "$tmp/$n.plan") == millforge.builtin.$n.v1 ]] || fail "$n: wrong harness id"
done

# stage HARNESS SCRIPT WS ART EXPECTED_RC: runs SCRIPT against HARNESS's plan and request in WS
# with artifacts in ART, after keeping a copy of WS and ART as the run found them (strict replay
# must start from the same state). The result is left in $tmp/SCRIPT.result, the trace in
# $tmp/SCRIPT.jsonl, the replay summary in $tmp/SCRIPT.summary.
stage() {
  local harness=$1 script=$2 ws=$3 art=$4 rc=$5
  rm -rf "$tmp/before/$script" && mkdir -p "$tmp/before/$script"
  cp -a "$ws" "$tmp/before/$script/ws"
  cp -a "$art" "$tmp/before/$script/art"
  run "$rc" "$mfr" --plan "$tmp/$harness.plan" --model "scripted:$runs/$script.json" \
    --request $h/$harness.request.json --workspace "$ws" --artifacts "$art" \
    --fixed-clock --run-id "r-$script" --trace-content inline --trace "$tmp/$script.jsonl"
  cp "$tmp/out" "$tmp/$script.result"
  run 0 "$rep" "$tmp/$script.jsonl"
  cp "$tmp/out" "$tmp/$script.summary"
  [[ $(jq -r .status "$tmp/$script.summary") == ok ]] || fail "$script: trace not ok"
  [[ $(jq -r .terminal "$tmp/$script.summary") == $(jq -r .terminal "$tmp/$script.result") ]] ||
    fail "$script: the trace's terminal is not the result's"
  [[ $(jq -r .tool_calls "$tmp/$script.summary") == $(jq -r .tool_calls "$tmp/$script.result") ]] ||
    fail "$script: the trace's tool calls are not the result's"
  # Strict replay from the state the run started in executes every tool again.
  local again=$tmp/again/$script
  rm -rf "$again" && mkdir -p "$again" && cp -a "$tmp/before/$script/." "$again/"
  run 0 "$rep" --strict --plan "$tmp/$harness.plan" --workspace "$again/ws" \
    --artifacts "$again/art" "$tmp/$script.jsonl"
  [[ $(jq -r .status "$tmp/out") == identical ]] || fail "$script: strict replay: $(cat "$tmp/out")"
}

# expect_completed SCRIPT TERMINAL_RESULT TOOL_CALLS ART: completed/success with that terminal
# result, no guardrail violation, and every artifact the result names in ART with its digest.
expect_completed() {
  local script=$1 result=$2 calls=$3 art=$4 r=$tmp/$1.result
  [[ $(jq -r .terminal "$r") == completed ]] || fail "$script: $(cat "$r")"
  [[ $(jq -r .result.disposition "$r") == success ]] || fail "$script: disposition: $(cat "$r")"
  [[ $(jq -r .result.terminal_result "$r") == "$result" ]] || fail "$script: terminal result"
  [[ $(jq -r .tool_calls "$r") == "$calls" ]] || fail "$script: $(jq .tool_calls "$r") tool calls"
  [[ $(jq -c .violations_by_kind "$tmp/$script.summary") == '{}' ]] ||
    fail "$script: violations in a clean run: $(cat "$tmp/$script.summary")"
  [[ $(jq '.result.artifacts | length' "$r") -ge 1 ]] || fail "$script: no artifacts named"
  local id sha bytes
  while read -r id sha bytes; do
    [[ -f $art/$id ]] || fail "$script: artifact $id is not in $art"
    [[ $(sha256sum <"$art/$id" | cut -d' ' -f1) == "$sha" ]] || fail "$script: $id digest differs"
    [[ $(stat -c %s "$art/$id") == "$bytes" ]] || fail "$script: $id size differs"
  done < <(jq -r '.result.artifacts[] | "\(.artifact_id) \(.sha256) \(.bytes)"' "$r")
}

# violations SCRIPT JSON: the replay summary's violations_by_kind is exactly JSON.
violations() {
  [[ $(jq -cS .violations_by_kind "$tmp/$1.summary") == $(jq -cS . <<<"$2") ]] ||
    fail "$1: violations $(jq -c .violations_by_kind "$tmp/$1.summary"), expected $2"
}

# exhausted SCRIPT BUDGET: the run ended budget_exhausted on BUDGET.
exhausted() {
  [[ $(jq -r .terminal "$tmp/$1.result") == budget_exhausted ]] || fail "$1: $(cat "$tmp/$1.result")"
  has_event "$tmp/$1.jsonl" ".event == \"budget_exhausted\" and .budget == \"$2\"" ||
    fail "$1: not exhausted on $2"
}

# completed_call SCRIPT TOOL N: the Nth tool_completed event of TOOL (0-based).
completed_call() {
  jq -c --arg t "$2" 'select(.event == "tool_completed" and .record.model_tool_name == $t)' \
    "$tmp/$1.jsonl" | sed -n "$(($3 + 1))p"
}

# has_event TRACE FILTER: some event of TRACE satisfies FILTER (jq 1.6's -e judges only the last
# input's output, so the trace is read as one array).
has_event() {
  jq -se "any(.[]; $2)" "$1" >/dev/null
}

# --- the chain: planner -> builder -> checker -> arbiter over one artifact directory -----------
ws=$tmp/ws
art=$tmp/art
mkdir -p "$art"
cp -a $h/workspace "$ws"

stage planner planner-ok "$ws" "$art" 0
expect_completed planner-ok PLANNER_COMPLETE 4 "$art"
# The artifact is exactly what the model asked write_plan_artifact to write.
cmp -s "$art/plan" <(jq -j '.steps[2].tool_calls[0].arguments.plan' $runs/planner-ok.json) ||
  fail "the plan artifact is not the plan the model wrote"
# The request's requirements reached the model through read_request_requirements.
completed_call planner-ok read_request_requirements 0 | jq -e '.ok and
  (.record.summary | startswith("src/app.txt must say"))' >/dev/null ||
  fail "read_request_requirements did not answer the request's requirements"

stage builder builder-ok "$ws" "$art" 0
expect_completed builder-ok BUILDER_COMPLETE 9 "$art"
# The patch really changed the workspace copy, exactly one line, and not the fixture.
[[ $(sed -n 2p "$ws/src/app.txt") == "status: fixed" ]] || fail "the builder did not patch app.txt"
[[ $(diff "$pristine" "$ws/src/app.txt" | grep -c '^[<>]') == 2 ]] ||
  fail "the patch changed more than one line: $(diff "$pristine" "$ws/src/app.txt")"
grep -q '^status: broken$' "$pristine" || fail "the fixture workspace itself was changed"
# The builder read the planner's plan from the shared directory, and both profiles really ran.
completed_call builder-ok read_artifact 0 | jq -e '.ok and (.record.summary == "1. Read src/app.txt.")' \
  >/dev/null || fail "the builder did not read the planner's plan"
for tool in run_test_profile run_static_check_profile; do
  completed_call builder-ok $tool 0 | jq -e '.ok and .record.execution_status == "success"' \
    >/dev/null || fail "$tool did not succeed"
done
completed_call builder-ok apply_workspace_patch 0 | jq -e '.record.side_effect_certainty ==
  "confirmed_complete"' >/dev/null || fail "apply_workspace_patch did not record its write"

stage checker checker-ok "$ws" "$art" 0
expect_completed checker-ok CHECKER_COMPLETE 4 "$art"
[[ $(jq -c '[.[] | select(.event == "tool_completed" and .record.model_tool_name == "read_artifact")
  | .ok] | select(length > 0)' -s "$tmp/checker-ok.jsonl") == '[true,true]' ]] ||
  fail "the checker did not read both pieces of the builder's evidence"
grep -q '^PASS' "$art/checker_verdict" || fail "checker_verdict was not written"

stage arbiter arbiter-ok "$ws" "$art" 0
expect_completed arbiter-ok ARBITER_COMPLETE 4 "$art"
grep -q '^ACCEPT' "$art/arbiter_verdict" || fail "arbiter_verdict was not written"
[[ $(ls "$art" | tr '\n' ' ') == "arbiter_verdict checker_verdict patch_summary plan test_results " ]] ||
  fail "unexpected artifacts: $(ls "$art")"

# Each stage needs the one before it: the builder without a plan cannot read one.
rm -rf "$tmp/noplan" && mkdir -p "$tmp/noplan/art" && cp -a $h/workspace "$tmp/noplan/ws"
run 1 "$mfr" --plan "$tmp/builder.plan" --model scripted:$runs/builder-ok.json \
  --request $h/builder.request.json --workspace "$tmp/noplan/ws" --artifacts "$tmp/noplan/art" \
  --fixed-clock --trace "$tmp/noplan.jsonl"
has_event "$tmp/noplan.jsonl" '.event == "tool_completed" and .ok == false and
  .record.model_tool_name == "read_artifact" and .record.summary == "error: Artifact not found: plan"' ||
  fail "the builder read a plan that does not exist"
grep -q '^status: broken$' "$tmp/noplan/ws/src/app.txt" || fail "the builder patched without a plan"

# --- failures -------------------------------------------------------------------------------
fresh() { # fresh NAME ARTIFACT...: a new workspace copy and an artifact dir holding ARTIFACTs
  local d=$tmp/f/$1
  shift
  rm -rf "$d" && mkdir -p "$d/art" && cp -a $h/workspace "$d/ws"
  local a
  for a in "$@"; do cp "$art/$a" "$d/art/"; done
}

# Planner: submits after reading the requirements, naming a plan it never wrote. The
# prerequisite refuses it twice; the second refusal spends the budget. No plan exists.
fresh pfc
stage planner planner-false-closure "$tmp/f/pfc/ws" "$tmp/f/pfc/art" 1
exhausted planner-false-closure max_prerequisite_violations
violations planner-false-closure '{"prerequisite":2,"tool_denied":2}'
[[ $(jq -r .tool_calls "$tmp/planner-false-closure.result") == 2 ]] || fail "planner: tool calls"
[[ ! -e $tmp/f/pfc/art/plan ]] || fail "a plan artifact appeared without write_plan_artifact"
has_event "$tmp/planner-false-closure.jsonl" \
  '.event == "nudge_sent" and (.message | contains("write_plan_artifact"))' || fail "the correction does not name write_plan_artifact"

# Builder: the patch is wrong, the unit profile fails and says why; the model records the tests
# as passed anyway and submits. Both are refused (run_test_profile never succeeded), the budget
# is spent, and no test_results artifact exists.
fresh bfc plan
stage builder builder-false-closure "$tmp/f/bfc/ws" "$tmp/f/bfc/art" 1
exhausted builder-false-closure max_prerequisite_violations
violations builder-false-closure '{"prerequisite":2,"tool_denied":2,"tool_error":1}'
completed_call builder-false-closure run_test_profile 0 | jq -e '.ok == false and
  .record.execution_status == "soft_failure" and
  .record.summary == "error: unit: src/app.txt does not say status: fixed"' >/dev/null ||
  fail "the failing unit profile's output did not reach the model"
[[ ! -e $tmp/f/bfc/art/test_results ]] || fail "test_results written although the tests failed"
[[ $(sed -n 2p "$tmp/f/bfc/ws/src/app.txt") == "status: repaired" ]] || fail "the wrong patch was not applied"
has_event "$tmp/builder-false-closure.jsonl" '.event == "nudge_sent" and
  (.message | contains("needs a successful call of '"'run_test_profile'"'"))' || fail "the correction does not name run_test_profile"

# Builder: the model reads the failure and repairs the patch, and the second test run passes,
# but the builder's seven iterations leave no room to record it: budget_exhausted on
# max_iterations with the file fixed and no test_results. The script's eighth reply is never
# asked for (the budget is checked before the call).
fresh btf plan
stage builder builder-test-fails "$tmp/f/btf/ws" "$tmp/f/btf/art" 1
exhausted builder-test-fails max_iterations
violations builder-test-fails '{"tool_error":1}'
[[ $(jq -r .model_calls "$tmp/builder-test-fails.result") == 7 ]] || fail "builder: model calls"
completed_call builder-test-fails run_test_profile 0 | jq -e '.ok == false' >/dev/null ||
  fail "the first unit run did not fail"
completed_call builder-test-fails run_test_profile 1 | jq -e '.ok' >/dev/null ||
  fail "the unit run after the repair did not pass"
[[ $(sed -n 2p "$tmp/f/btf/ws/src/app.txt") == "status: fixed" ]] || fail "the repair patch was not applied"
[[ ! -e $tmp/f/btf/art/test_results ]] || fail "test_results written past the budget"

# Checker: submits before reading anything. The premature terminal is answered (tier 1, naming
# read_artifact), the model reads the evidence and finishes within its four iterations.
fresh cp patch_summary test_results
stage checker checker-premature "$tmp/f/cp/ws" "$tmp/f/cp/art" 0
[[ $(jq -r .terminal "$tmp/checker-premature.result") == completed ]] || fail "checker did not recover"
violations checker-premature '{"premature_terminal":1,"tool_denied":1}'
[[ $(jq -r .tool_calls "$tmp/checker-premature.result") == 4 ]] || fail "checker: tool calls"
has_event "$tmp/checker-premature.jsonl" '.event == "nudge_sent" and .kind == "premature_terminal"
  and .message == "[StepEnforcementError] '"'submit_terminal_intent'"' cannot be called yet: these required steps have not succeeded: read_artifact. Call one of them now."' ||
  fail "the premature-terminal correction differs"

# Arbiter: writes its verdict under checker_verdict (the node may write either) and submits.
# Terminal acceptance finds no arbiter_verdict in the artifact directory: terminal_rejected.
fresh aw checker_verdict
stage arbiter arbiter-wrong-artifact "$tmp/f/aw/ws" "$tmp/f/aw/art" 1
[[ $(jq -r .terminal "$tmp/arbiter-wrong-artifact.result") == terminal_rejected ]] ||
  fail "arbiter: $(cat "$tmp/arbiter-wrong-artifact.result")"
violations arbiter-wrong-artifact '{"terminal_rejected":1}'
jq -e '.error | contains("arbiter_verdict")' "$tmp/arbiter-wrong-artifact.result" >/dev/null ||
  fail "the rejection does not name arbiter_verdict"
[[ ! -e $tmp/f/aw/art/arbiter_verdict ]] || fail "arbiter_verdict appeared"
# A leftover arbiter_verdict from an earlier run does not make the same mistake pass: only what a
# successful call of this run wrote counts.
fresh aw2 checker_verdict
echo '{"verdict": "stale"}' >"$tmp/f/aw2/art/arbiter_verdict"
stage arbiter arbiter-wrong-artifact "$tmp/f/aw2/ws" "$tmp/f/aw2/art" 1
[[ $(jq -r .terminal "$tmp/arbiter-wrong-artifact.result") == terminal_rejected ]] ||
  fail "a leftover artifact was accepted: $(cat "$tmp/arbiter-wrong-artifact.result")"

echo "builtin_harnesses: ok"
