#!/usr/bin/env bash
# Context warnings (docs/compaction.md, "Context warnings"): a harness whose context policy has
# warning_thresholds compiles into a plan that carries them; a scripted run of it records the
# warning in model_requested, and the same conversation through the real libcurl client and the
# loopback wire server shows what the model was sent: the warning as the last user message of that
# request only. The run replays strictly; a bad threshold list is refused at its line.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/wire.bash"
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY

fx=$MF_SOURCE_DIR/fixtures
ws=$fx/repository
# read-submit with a 400-token budget that warns at 0.5 and 0.9: the first request is under 0.5,
# the second (with src/lib.rs read) is over it.
sed 's/^  budget_tokens: 4096$/  budget_tokens: 400/
     s/^  phase_thresholds: \[0.6, 0.75, 0.9\]$/  phase_thresholds: [1, 1, 1]\n  warning_thresholds: [0.5, 0.9]/' \
  "$fx/harness/read-submit.yaml" >"$tmp/warn.yaml"
grep -q '^  warning_thresholds: \[0.5, 0.9\]$' "$tmp/warn.yaml" || fail "the harness was not edited"
run 0 "$MF_BIN/mf-compile" "$tmp/warn.yaml" -o -
cp "$tmp/out" "$tmp/plan.json"
jq -e '.context_policy.warning_thresholds == [0.5, 0.9]' "$tmp/plan.json" >/dev/null ||
  fail "the plan lacks the thresholds: $(jq -c .context_policy "$tmp/plan.json")"
# Without the option the plan is the one compiled before it existed.
run 0 "$MF_BIN/mf-compile" "$fx/harness/read-submit.yaml" -o -
cmp -s "$tmp/out" "$fx/harness/ablation/read-submit.plan.json" || fail "read-submit's plan changed"

# A scripted run: the warning is in the trace, on the second request only.
script=$fx/harness/runs/read-submit.json
run 0 "$MF_BIN/mf-run" --plan "$tmp/plan.json" --model "scripted:$script" --workspace "$ws" \
  --fixed-clock --run-id r-warn --trace-content inline --trace "$tmp/scripted.jsonl"
[[ $(jq -r .terminal "$tmp/out") == completed ]] || fail "scripted: $(cat "$tmp/out")"
warnings=$(jq -c 'select(.event == "model_requested") | [.call, .context_warning.threshold]' \
  "$tmp/scripted.jsonl" | paste -sd' ')
[[ $warnings == '[1,null] [2,0.5]' ]] || fail "warnings by call: $warnings"
w=$(jq -c 'select(.event == "model_requested" and .call == 2) | .context_warning' "$tmp/scripted.jsonl")
jq -e '.budget_tokens == 400 and .tokens >= 200 and .tokens < 260
  and (.message | startswith("[Context usage: ") and endswith(" tokens). Be mindful of context usage.]"))' \
  <<<"$w" >/dev/null || fail "context_warning: $w"
run 0 "$MF_BIN/mf-replay" "$tmp/scripted.jsonl"
[[ $(jq -r .status "$tmp/out") == ok ]] || fail "the trace does not verify"
run 0 "$MF_BIN/mf-replay" --strict --plan "$tmp/plan.json" --workspace "$ws" "$tmp/scripted.jsonl"
[[ $(jq -r .status "$tmp/out") == identical ]] || fail "strict replay: $(cat "$tmp/out")"

# What the model was sent: the same conversation over the wire.
captures=$tmp/captures
mkdir "$captures"
jq '{description: "read-submit as OpenAI chat completions", responses: [.steps[] | {body_json: {
  id: "chatcmpl-w", object: "chat.completion", created: 1, model: "m", choices: [{index: 0,
    finish_reason: "tool_calls", message: {role: "assistant", content: null, tool_calls:
      [.tool_calls[] | {id: "call_\(.name)", type: "function",
        function: {name, arguments: (.arguments | tojson)}}]}}],
  usage: {prompt_tokens: 90, completion_tokens: 9, total_tokens: 99}}}]}' "$script" \
  >"$captures/warn.json"
wire_start "$captures"
jq '.retry = {max_attempts: 1, initial_backoff_ms: 20, max_backoff_ms: 100}' \
  "$fx/profiles/local.json" >"$tmp/base.json"
wire_profile warn "$tmp/base.json" "$tmp/warn.profile.json"
run 0 "$MF_BIN/mf-run" --plan "$tmp/plan.json" --model "openai:$tmp/warn.profile.json" \
  --workspace "$ws" --trace-content inline --trace "$tmp/wire.jsonl"
[[ $(jq -r .terminal "$tmp/out") == completed ]] || fail "wire: $(cat "$tmp/out")"
[[ $(jq -c 'select(.event == "model_requested" and .call == 2) | .context_warning' "$tmp/wire.jsonl") == "$w" ]] ||
  fail "the wire run warned otherwise than the scripted run"
wire_log >"$tmp/log.json"
[[ $(jq length "$tmp/log.json") == 2 ]] || fail "requests: $(jq length "$tmp/log.json")"
first=$(jq -r '.[0].body' "$tmp/log.json")
second=$(jq -r '.[1].body' "$tmp/log.json")
jq -e '[.messages[] | select(.content | strings | startswith("[Context usage: "))] | length == 0' \
  <<<"$first" >/dev/null || fail "the first request carries a warning: $first"
jq -e --argjson w "$w" '.messages[-1] == {role: "user", content: $w.message}
  and ([.messages[] | select(.content | strings | startswith("[Context usage: "))] | length == 1)' \
  <<<"$second" >/dev/null || fail "the second request does not end with the warning: $second"

# A bad threshold list is refused where it is.
sed 's/^  warning_thresholds: \[0.5, 0.9\]$/  warning_thresholds: [0.9, 0.5]/' "$tmp/warn.yaml" >"$tmp/bad.yaml"
run 2 "$MF_BIN/mf-compile" "$tmp/bad.yaml" -o -
[[ ! -s $tmp/out ]] || fail "a refused harness printed a plan"
grep -q 'bad.yaml:26:3: error MF-S025: warning_thresholds must be 1..8 increasing numbers in (0, 1] (at /context/warning_thresholds)' "$tmp/err" ||
  fail "no diagnostic: $(cat "$tmp/err")"
echo "context_warning: ok"
