#!/usr/bin/env bash
# What a model reply cannot do to a plan run (docs/live-backends.md, docs/harness-run.md): a tool
# call without a usable name is refused with a correction and the run still ends with its terminal
# event (live and replayed from the reply cache); a credential the server echoes in any member
# reaches no output and no store file; one reply runs at most max_tool_calls_per_reply calls; and
# the rest of a batch after the deadline or a signal is one event, not one per call.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/wire.bash"
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
unset MF_STORE MF_FIXED_CLOCK

fx=$MF_SOURCE_DIR/fixtures
canary="mfcanary$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
export MF_TEST_KEY=$canary
captures=$tmp/captures
mkdir -p "$captures"

# openai CALLS [FINISH] : a non-streamed OpenAI reply entry with these tool_calls.
openai() {
  jq -n --argjson calls "$1" --arg f "${2:-tool_calls}" '{body_json: {id: "chatcmpl-g", object:
    "chat.completion", created: 1, model: "m", choices: [{index: 0, message: {role: "assistant",
    content: null, tool_calls: $calls}, finish_reason: $f}],
    usage: {prompt_tokens: 10, completion_tokens: 5, total_tokens: 15}}}'
}
read_call='{"id": "call_r", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"src/lib.rs\"}"}}'
submit_call='{"id": "call_s", "type": "function", "function": {"name": "submit", "arguments": "{\"terminal_result\":\"COMPLETE\",\"summary\":\"Read it.\"}"}}'

run 0 "$MF_BIN/mf-compile" "$fx/harness/read-submit.yaml" -o -
cp "$tmp/out" "$tmp/rs.plan.json"
base=$tmp/base.json
jq '.auth = {scheme: "bearer", secret_env: "MF_TEST_KEY"}
    | .timeouts_ms = {connect: 2000, first_byte: 5000, idle: 2000, total: 20000}
    | .retry = {max_attempts: 1, initial_backoff_ms: 20, max_backoff_ms: 100}' \
  "$fx/profiles/local.json" >"$base"

# --- a call without a usable name: a correction, then the run goes on ------------------------------
i=0
for bad in '"name": ""' '"name": null' '"name": 7' ''; do
  i=$((i + 1))
  fn="{${bad:+$bad, }\"arguments\": \"{}\"}"
  jq -n --argjson a "$(openai "[{\"id\": \"call_x\", \"type\": \"function\", \"function\": $fn}]")" \
    --argjson b "$(openai "[$read_call]")" --argjson c "$(openai "[$submit_call]")" \
    '{responses: [$a, $b, $c]}' >"$captures/nameless-$i.json"
done
jq -n --argjson a "$(openai '[{}]')" --argjson b "$(openai "[$read_call]")" \
  --argjson c "$(openai "[$submit_call]")" '{responses: [$a, $b, $c]}' >"$captures/nameless-5.json"
wire_start "$captures"
for i in 1 2 3 4 5; do
  wire_reset
  p=$tmp/nameless-$i.profile.json
  wire_profile "nameless-$i" "$base" "$p"
  st=$tmp/store-$i
  common=(--plan "$tmp/rs.plan.json" --model "openai:$p" --workspace "$fx/repository"
    --fixed-clock --run-id r-$i --trace-content inline --store "$st")
  run 0 "$MF_BIN/mf-run" "${common[@]}" --cache write --trace "$tmp/nameless-$i.jsonl"
  [[ $(jq -r .terminal "$tmp/out") == completed ]] || fail "nameless $i: $(cat "$tmp/out")"
  [[ $(jq -s '[.[] | select(.event == "guardrail_violation" and .kind == "malformed_call")] | length' \
    "$tmp/nameless-$i.jsonl") == 1 ]] || fail "nameless $i: no malformed_call correction"
  jq -se 'any(.[]; .event == "nudge_sent" and .kind == "malformed_call" and .channel == "user")' \
    "$tmp/nameless-$i.jsonl" >/dev/null || fail "nameless $i: the correction was not sent"
  # The refused call went back as text, never as a call without a name.
  wire_log | jq -e '.[1].body | fromjson | [.messages[] | .tool_calls? // [] | .[]] | length == 0' \
    >/dev/null || fail "nameless $i: a call without a name was sent back"
  run 0 "$MF_BIN/mf-replay" "$tmp/nameless-$i.jsonl"
  # Replayed from the cache with the server gone from the profile: the same run.
  run 0 "$MF_BIN/mf-run" "${common[@]}" --cache read --trace "$tmp/nameless-$i.read.jsonl"
  [[ $(jq -r .terminal "$tmp/out") == completed ]] || fail "nameless $i, cache read: $(cat "$tmp/out")"
  diff <(jq -c 'del(.prev, .attempts, .source)' "$tmp/nameless-$i.jsonl") \
    <(jq -c 'del(.prev, .attempts, .source)' "$tmp/nameless-$i.read.jsonl") ||
    fail "nameless $i: the cached run differs"
done
# The refusal names what was wrong.
grep -q 'has a null name' "$tmp/nameless-2.jsonl" || fail "the null name is not named"
grep -q 'has a name that is not a string' "$tmp/nameless-3.jsonl" || fail "the number is not named"

# A reply the trace cannot take (with inline content, a line over the 16 MiB a line may hold: an
# 18 MB streamed content) is recorded as the call's failure, with its size and digest and without
# its content, and the run ends with its terminal event (exit 1), the cause on one stderr line; the
# trace verifies and replays. The reply is not kept in the cache: a read replay misses it instead
# of failing on it again.
piece=$(printf 'A%.0s' $(seq 4000))
fill="data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"$piece\"},\"finish_reason\":null}]}"$'\n\n'
suffix="data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}"$'\n\n'"data: [DONE]"$'\n\n'
jq -n --arg f "$fill" --arg s "$suffix" --argjson n $((${#fill} * 4500 + ${#suffix})) \
  '{responses: [{headers: {"Content-Type": "text/event-stream"},
                 huge: {prefix: "", fill: $f, bytes: $n, suffix: $s}}]}' >"$captures/too-long.json"
p=$tmp/too-long.profile.json
wire_profile too-long "$base" "$p"
jq '.stream = true | .max_response_bytes = 33554432' "$p" >"$p.tmp" && mv "$p.tmp" "$p"
long=(--task "$fx/forge/task-valid.json" --model "openai:$p" --trace-content inline --store "$tmp/long-store")
run 1 "$MF_BIN/mf-run" "${long[@]}" --cache write --trace "$tmp/too-long.jsonl"
long_sha=$(head -c 18000000 /dev/zero | tr '\0' A | sha256sum | cut -d' ' -f1)
[[ $(grep -c 'the reply is too large to record' "$tmp/err") == 1 ]] || fail "too long, stderr: $(cat "$tmp/err")"
grep -q "content 18000000 bytes sha256 $long_sha" "$tmp/err" || fail "too long, stderr: $(cat "$tmp/err")"
(($(stat -c %s "$tmp/too-long.jsonl") < 65536)) || fail "too long: the content reached the trace"
jq -se --arg d "$long_sha" '.[-2].event == "model_failed" and .[-2].call == 1
  and (.[-2].error | test("too large to record.*content 18000000 bytes sha256 " + $d))
  and .[-1].event == "run_failed" and .[-1].terminal == "model_failed"' "$tmp/too-long.jsonl" \
  >/dev/null || fail "too long: $(jq -c 'del(.content)' "$tmp/too-long.jsonl")"
run 0 "$MF_BIN/mf-replay" "$tmp/too-long.jsonl"
# Its reply was never recorded: replaying it fails the run (exit 1) on that miss.
run 1 "$MF_BIN/mf-run" "${long[@]}" --cache read --trace "$tmp/too-long.read.jsonl"
grep -q "error MF-M001: .*record it with --cache write" "$tmp/err" || fail "miss: $(cat "$tmp/err")"

# The same for a tool event: a call's arguments nested as deep as the reader allows (64 levels)
# are one level deeper inside tool_called under --trace-content inline, which no line may be.
# The run ends tool_failed with the cause in its terminal event and on stderr; the trace verifies
# and replays.
deep=$(printf '[%.0s' $(seq 63))$(printf ']%.0s' $(seq 63))
deep_call=$(jq -n --arg a "{\"path\":\"src/lib.rs\",\"x\":$deep}" \
  '{id: "call_d", type: "function", function: {name: "read", arguments: $a}}')
jq -n --argjson a "$(openai "[$deep_call]")" '{responses: [$a]}' >"$captures/deep.json"
wire_reset
p=$tmp/deep.profile.json
wire_profile deep "$base" "$p"
run 1 "$MF_BIN/mf-run" --plan "$tmp/rs.plan.json" --model "openai:$p" --workspace "$fx/repository" \
  --fixed-clock --run-id r-deep --trace-content inline --trace "$tmp/deep.jsonl"
[[ $(grep -c 'an event is too large to record: tool_called' "$tmp/err") == 1 ]] ||
  fail "deep arguments, stderr: $(cat "$tmp/err")"
jq -se '.[-2].event == "model_responded" and .[-1].event == "run_failed"
  and .[-1].terminal == "tool_failed" and (.[-1].error | test("too large to record: tool_called"))' \
  "$tmp/deep.jsonl" >/dev/null || fail "deep arguments: $(cat "$tmp/deep.jsonl")"
run 0 "$MF_BIN/mf-replay" "$tmp/deep.jsonl"
run 0 "$MF_BIN/mf-replay" --strict --plan "$tmp/rs.plan.json" --workspace "$fx/repository" "$tmp/deep.jsonl"
[[ $(jq -r .status "$tmp/out") == identical ]] || fail "deep arguments, strict replay: $(cat "$tmp/out")"

# The same in a task run, under the default digest content: violations too long for a line (an
# unknown field whose 9 MB name a violation quotes twice) become one violation that says so, and
# an output run_completed cannot hold (1.2 million numbers 1e20, 6 MB sent, 26 MB canonical) is a
# violation, not a lost terminal event. Each run ends with its terminal event and verifies.
jq '.budget = {max_model_calls: 1, max_repairs: 0, max_output_bytes: 33554432}' \
  "$fx/forge/task-valid.json" >"$tmp/big-task.json"
python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
key = "ab " * 3000000
steps = {"steps": [{"content": json.dumps({"risk": "r", "evidence": "e", key: 0})}]}
open(d + "/long-key.json", "w").write(json.dumps(steps))
nums = ",".join(["1e20"] * 600000)
steps = {"steps": [{"content": '{"risk":[[%s],[%s]],"evidence":"e"}' % (nums, nums)}]}
open(d + "/wide-output.json", "w").write(json.dumps(steps))
PY
run 1 "$MF_BIN/mf-run" --task "$tmp/big-task.json" --model "scripted:$tmp/long-key.json" \
  --fixed-clock --run-id r-key --trace "$tmp/long-key.jsonl"
jq -se '.[-2].event == "verification_failed" and (.[-2].violations | length == 1)
  and .[-2].violations[0].code == "violations_too_large"
  and .[-1].event == "run_failed" and .[-1].terminal == "invalid_output"' "$tmp/long-key.jsonl" \
  >/dev/null || fail "long key: $(cut -c1-300 "$tmp/long-key.jsonl")"
run 0 "$MF_BIN/mf-replay" "$tmp/long-key.jsonl"
run 1 "$MF_BIN/mf-run" --task "$tmp/big-task.json" --model "scripted:$tmp/wide-output.json" \
  --fixed-clock --run-id r-wide --trace "$tmp/wide-output.jsonl"
jq -se '.[-2].event == "verification_failed" and .[-2].violations[0].code == "output_too_large"
  and .[-1].event == "run_failed" and .[-1].terminal == "invalid_output"' "$tmp/wide-output.jsonl" \
  >/dev/null || fail "wide output: $(cut -c1-300 "$tmp/wide-output.jsonl")"
run 0 "$MF_BIN/mf-replay" "$tmp/wide-output.jsonl"

# --- a credential echoed in every member a server fills ---------------------------------------------
k=$canary
jq -n --arg k "$k" --argjson r "$read_call" --argjson s "$submit_call" \
  --argjson a "$(openai "[{\"id\": \"id-$k\", \"type\": \"function\", \"function\": {\"name\": \"$k\", \"arguments\": \"{}\"}}]" "stop-$k")" \
  --argjson b "$(openai "[{\"id\": \"$k\", \"type\": \"function\", \"function\": {\"name\": \"read\", \"arguments\": \"{\\\"path\\\":\\\"src/lib.rs\\\"}\"}}]" "$k")" \
  --argjson c "$(openai "[$submit_call]" "$k")" '{responses: [$a, $b, $c]}' >"$captures/echo-openai.json"
event() { jq -n --arg e "$1" --argjson d "$2" '{event: $e, data: $d}'; }
anthropic() { # NAME ID STOP : a streamed Anthropic reply with one tool_use block
  jq -n --argjson a "$(event message_start '{"type":"message_start","message":{"id":"msg_g","type":"message","role":"assistant","content":[],"model":"c","usage":{"input_tokens":5,"output_tokens":1}}}')" \
    --argjson b "$(event content_block_start "$(jq -n --arg n "$1" --arg i "$2" '{type: "content_block_start", index: 0, content_block: {type: "tool_use", id: $i, name: $n, input: {}}}')")" \
    --argjson c "$(event content_block_delta "$(jq -n --arg j "$4" '{type: "content_block_delta", index: 0, delta: {type: "input_json_delta", partial_json: $j}}')")" \
    --argjson d "$(event message_delta "$(jq -n --arg s "$3" '{type: "message_delta", delta: {stop_reason: $s}, usage: {output_tokens: 9}}')")" \
    --argjson e "$(event message_stop '{"type":"message_stop"}')" '{sse: [$a, $b, $c, $d, $e]}'
}
jq -n --argjson a "$(anthropic "$k" "toolu-$k" "$k" '{}')" \
  --argjson b "$(anthropic read "$k" "tool_use-$k" '{"path":"src/lib.rs"}')" \
  --argjson c "$(anthropic submit toolu_s "$k" '{"terminal_result":"COMPLETE","summary":"Read it."}')" \
  '{responses: [$a, $b, $c]}' >"$captures/echo-anthropic.json"
for api in openai anthropic; do
  wire_reset
  p=$tmp/echo-$api.profile.json
  wire_profile "echo-$api" "$base" "$p"
  if [[ $api == anthropic ]]; then
    jq '.stream = true | .auth = {scheme: "header", header: "x-api-key", secret_env: "MF_TEST_KEY"}
        | .options = {temperature: 0, max_tokens: 512}' \
      "$p" >"$p.tmp" && mv "$p.tmp" "$p"
  fi
  st=$tmp/echo-store-$api
  run 0 "$MF_BIN/mf-run" --plan "$tmp/rs.plan.json" --model "$api:$p" --workspace "$fx/repository" \
    --trace-content inline --cache write --store "$st" --trace "$tmp/echo-$api.jsonl"
  [[ $(jq -r .terminal "$tmp/out") == completed ]] || fail "echo $api: $(cat "$tmp/out")"
  [[ $(wire_log | jq length) == 3 ]] || fail "echo $api: $(wire_log | jq length) requests"
  grep -q REDACTED "$tmp/echo-$api.jsonl" || fail "echo $api: nothing was redacted"
  hits=$(cat "$tmp/echo-$api.jsonl" "$tmp/out" "$tmp/err" | grep -c "$k" || true)
  [[ $hits == 0 ]] || fail "echo $api: the key is in the trace or the output ($hits lines)"
  [[ -f $st/data.mdb ]] || fail "echo $api: no LMDB file in $st"
  ! grep -rqa "$k" "$st" || fail "echo $api: the key is in the store: $(grep -rla "$k" "$st")"
  # What the cache kept replays to the same run.
  run 0 "$MF_BIN/mf-run" --plan "$tmp/rs.plan.json" --model "$api:$p" --workspace "$fx/repository" \
    --trace-content inline --cache read --store "$st" --trace "$tmp/echo-$api.read.jsonl"
  ! grep -q "$k" "$tmp/echo-$api.read.jsonl" "$tmp/out" "$tmp/err" || fail "echo $api: key on replay"
done

# --- at most max_tool_calls_per_reply calls of one reply run ---------------------------------------
# calls N : N read calls, then a submit.
calls() {
  jq -n --argjson n "$1" '{steps: [{tool_calls: [range(0; $n) |
      {name: "read", arguments: {path: "src/lib.rs"}}]},
    {tool_calls: [{name: "submit", arguments: {terminal_result: "COMPLETE", summary: "ok"}}]}]}'
}
sed 's/  max_iterations: 4/  max_iterations: 4\n  max_tool_calls_per_reply: 5/' "$fx/harness/read-submit.yaml" \
  >"$tmp/bound5.yaml"
run 0 "$MF_BIN/mf-compile" "$tmp/bound5.yaml" -o -
cp "$tmp/out" "$tmp/bound5.plan.json"
jq -e '.budgets.max_tool_calls_per_reply == 5' "$tmp/bound5.plan.json" >/dev/null ||
  fail "the bound is not in the plan"
# The default leaves the plan as it was: no member, the same digest.
jq -e '.budgets | has("max_tool_calls_per_reply") | not' "$tmp/rs.plan.json" >/dev/null ||
  fail "a defaulted bound changed the plan"
for plan_calls in "bound5 5 8" "rs 64 70"; do
  read -r plan bound n <<<"$plan_calls"
  calls "$n" >"$tmp/calls-$n.json"
  run 0 "$MF_BIN/mf-run" --plan "$tmp/$plan.plan.json" --model "scripted:$tmp/calls-$n.json" \
    --workspace "$fx/repository" --fixed-clock --trace "$tmp/bound-$n.jsonl"
  [[ $(jq -r .terminal "$tmp/out") == completed ]] || fail "bound $bound: $(cat "$tmp/out")"
  ran=$(jq -s '[.[] | select(.event == "tool_completed" and .record.model_tool_name == "read")] | length' \
    "$tmp/bound-$n.jsonl")
  [[ $ran == "$bound" ]] || fail "a reply of $n calls under a bound of $bound ran $ran"
  jq -se --argjson k $((n - bound)) 'map(select(.event == "tools_skipped")) == [.[] |
    select(.event == "tools_skipped" and .reason == "too_many_calls" and .count == $k
           and (.call_ids | length) == $k)] and any(.[]; .event == "tools_skipped")' \
    "$tmp/bound-$n.jsonl" >/dev/null || fail "bound $bound: the rest is not one tools_skipped event"
  [[ $(jq -s '[.[] | select(.event == "guardrail_violation" and .kind == "too_many_calls")] | length' \
    "$tmp/bound-$n.jsonl") == 1 ]] || fail "bound $bound: no too_many_calls violation"
  run 0 "$MF_BIN/mf-replay" "$tmp/bound-$n.jsonl"
  jq -e --argjson k $((n - bound)) '.violations_by_kind.tools_skipped == 1' "$tmp/out" >/dev/null ||
    fail "mf-replay does not count tools_skipped: $(cat "$tmp/out")"
done
sed 's/  max_iterations: 4/  max_iterations: 4\n  max_tool_calls_per_reply: 0/' "$fx/harness/read-submit.yaml" \
  >"$tmp/bound0.yaml"
run 2 "$MF_BIN/mf-compile" "$tmp/bound0.yaml" -o -
grep -q 'max_tool_calls_per_reply must be 1..1024' "$tmp/err" || fail "bound 0: $(cat "$tmp/err")"

# --- the deadline and a signal inside a batch of 500 calls -----------------------------------------
# The shell in place of the read: the first call sleeps past the deadline, 499 more wait.
sed 's/builtin\.pi_compat\.read@1/builtin.pi_compat.bash@1/; s/  max_iterations: 4/  max_iterations: 4\n  max_tool_calls_per_reply: 512/' \
  "$fx/harness/read-submit.yaml" >"$tmp/shell.yaml"
run 0 "$MF_BIN/mf-compile" "$tmp/shell.yaml" -o -
cp "$tmp/out" "$tmp/shell.plan.json"
jq -n '{steps: [{tool_calls: ([{name: "bash", arguments: {command: "sleep 30"}}] +
  [range(0; 499) | {name: "bash", arguments: {command: "true"}}])}]}' >"$tmp/batch.json"
mkdir -p "$tmp/ws"
# after_first TRACE : the events after the first call's own end.
after_first() {
  jq -s '(map(.event == "tool_completed" or .event == "tool_denied") | index(true)) as $i
    | .[$i + 1:] | map(.event)' "$1"
}
run 1 "$MF_BIN/mf-run" --plan "$tmp/shell.plan.json" --model "scripted:$tmp/batch.json" \
  --workspace "$tmp/ws" --deadline-ms 300 --trace "$tmp/deadline.jsonl"
[[ $(jq -r .terminal "$tmp/out") == timed_out ]] || fail "deadline: $(cat "$tmp/out")"
[[ $(after_first "$tmp/deadline.jsonl" | jq -c .) == '["tools_skipped","run_failed"]' ]] ||
  fail "deadline: after the first call came $(after_first "$tmp/deadline.jsonl" | jq -c 'group_by(.) | map({(.[0]): length}) | add')"
jq -se 'any(.[]; .event == "tools_skipped" and .reason == "timed_out" and .count == 499)' \
  "$tmp/deadline.jsonl" >/dev/null || fail "deadline: the rest is not one event of 499 calls"
run 0 "$MF_BIN/mf-replay" "$tmp/deadline.jsonl"

"$MF_BIN/mf-run" --plan "$tmp/shell.plan.json" --model "scripted:$tmp/batch.json" \
  --workspace "$tmp/ws" --trace "$tmp/term.jsonl" >"$tmp/term.out" 2>"$tmp/term.err" &
pid=$!
for _ in $(seq 200); do grep -q '"tool_called"' "$tmp/term.jsonl" 2>/dev/null && break; sleep 0.05; done
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
[[ $rc == 1 ]] || fail "SIGTERM: exit $rc: $(cat "$tmp/term.err")"
[[ $(jq -r .terminal "$tmp/term.out") == cancelled ]] || fail "SIGTERM: $(cat "$tmp/term.out")"
[[ $(after_first "$tmp/term.jsonl" | jq -c .) == '["tools_skipped","run_failed"]' ]] ||
  fail "SIGTERM: after the first call came $(after_first "$tmp/term.jsonl" | jq -c 'group_by(.) | map({(.[0]): length}) | add')"
jq -se 'any(.[]; .event == "tools_skipped" and .reason == "cancelled" and .count == 499)' \
  "$tmp/term.jsonl" >/dev/null || fail "SIGTERM: the rest is not one event of 499 calls"
run 0 "$MF_BIN/mf-replay" "$tmp/term.jsonl"
echo "reply guards: ok"
