#!/usr/bin/env bash
# A live smoke test against a real server, only when asked: MF_LIVE_PROFILE names the model spec
# (openai:PROFILE.json or anthropic:PROFILE.json; the profile's secret variable must be set), and
# MF_LIVE_PLAN=1 also runs the read-submit harness. Without MF_LIVE_PROFILE it is skipped (exit 77).
# It checks what any working server must give: a well-formed trace whose calls went over the
# network, a run that ends in a terminal state, and no key in any output.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"
if [[ -z ${MF_LIVE_PROFILE:-} ]]; then
  echo "live_smoke: skipped (set MF_LIVE_PROFILE=openai:PROFILE.json to run it)"
  exit 77
fi
fx=$MF_SOURCE_DIR/fixtures
rc=0
"$MF_BIN/mf-run" --task "$fx/forge/task-valid.json" --model "$MF_LIVE_PROFILE" \
  --trace "$tmp/task.jsonl" >"$tmp/out" 2>"$tmp/err" || rc=$?
((rc <= 1)) || { cat "$tmp/err" >&2; fail "task run exited $rc"; }
run 0 "$MF_BIN/mf-replay" "$tmp/task.jsonl"
jq -se 'any(.[]; .event == "model_responded" and .source == "network")' "$tmp/task.jsonl" >/dev/null ||
  fail "no reply came over the network: $(grep model_failed "$tmp/task.jsonl" || true)"
if [[ ${MF_LIVE_PLAN:-} == 1 ]]; then
  run 0 "$MF_BIN/mf-compile" "$fx/harness/read-submit.yaml" -o -
  cp "$tmp/out" "$tmp/plan.json"
  rc=0
  "$MF_BIN/mf-run" --plan "$tmp/plan.json" --model "$MF_LIVE_PROFILE" --workspace "$fx/repository" \
    --trace "$tmp/plan.jsonl" >"$tmp/out" 2>"$tmp/err" || rc=$?
  ((rc <= 1)) || { cat "$tmp/err" >&2; fail "plan run exited $rc"; }
  run 0 "$MF_BIN/mf-replay" "$tmp/plan.jsonl"
fi
# The key, whatever variable holds it, appears in no output.
profile=${MF_LIVE_PROFILE#*:}
var=$(jq -r '.auth.secret_env // empty' "$profile")
if [[ -n $var && -n ${!var:-} ]]; then
  ! grep -rqF -- "${!var}" "$tmp" || fail "the key of $var appears in an output"
fi
echo "live_smoke: ok ($(jq -r 'select(.event == "run_completed" or .event == "run_failed") | .terminal' "$tmp/task.jsonl"))"
