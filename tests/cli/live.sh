#!/usr/bin/env bash
# The live backends end to end (docs/live-backends.md): the real libcurl client in mf-run and
# mf-eval against the loopback wire server (tests/server/wire_server.py) replaying captures of each
# server kind from fixtures/wire: task and harness runs, streaming, retries and what is not retried,
# timeouts, bounds, the reply cache with the network gone, connection reuse, profile validation,
# and a canary secret that must appear nowhere.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/wire.bash"
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
unset MF_STORE MF_FIXED_CLOCK

# A canary secret: it must reach the server and nothing else. The captures get a 401 that quotes it
# back the way some servers quote a wrong key.
canary="mfcanary$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
export MF_TEST_KEY=$canary
captures=$tmp/captures
cp -r "$MF_SOURCE_DIR/fixtures/wire" "$captures"
jq -n --arg k "$canary" '{description: "a 401 that quotes the key back",
  responses: [{status: 401, body_json: {error: {message: ("Incorrect API key provided: " + $k + "."),
    type: "invalid_request_error", code: "invalid_api_key"}}}]}' >"$captures/echo-key-401.json"
wire_start "$captures"

fx=$MF_SOURCE_DIR/fixtures
base=$tmp/base.json
jq '.auth = {scheme: "bearer", secret_env: "MF_TEST_KEY"}
    | .timeouts_ms = {connect: 2000, first_byte: 5000, idle: 2000, total: 20000}
    | .retry = {max_attempts: 3, initial_backoff_ms: 20, max_backoff_ms: 100}
    | .stream = false | .capabilities.streaming = true' "$fx/profiles/local.json" >"$base"

# profile SCENARIO [JQ] : a profile for SCENARIO at $tmp/SCENARIO.json, optionally edited by JQ.
profile() {
  local out=$tmp/$1.json
  wire_profile "$1" "$base" "$out"
  if [[ -n ${2:-} ]]; then jq "$2" "$out" >"$out.tmp" && mv "$out.tmp" "$out"; fi
  printf '%s' "$out"
}
# event TRACE NAME : the first event NAME of TRACE.
event() { jq -c --arg e "$2" 'select(.event == $e)' "$1" | head -1; }

# --- task mode: the issue's own command, against the server
wire_reset
p=$(profile task-valid)
run 0 "$MF_BIN/mf-run" --task "$fx/forge/task-valid.json" --model "openai:$p" --trace "$tmp/t1.jsonl"
[[ $(jq -r .risk "$tmp/out") == "A user-controlled value reaches panic!." ]] || fail "task output: $(cat "$tmp/out")"
run 0 "$MF_BIN/mf-replay" "$tmp/t1.jsonl"
r=$(event "$tmp/t1.jsonl" model_responded)
[[ $(jq -r .source <<<"$r") == network && $(jq -r .attempts <<<"$r") == 1 ]] || fail "responded: $r"
[[ $(jq -r .stop_reason <<<"$r") == stop ]] || fail "stop_reason: $r"
jq -e '.usage.input_tokens > 0 and .usage.output_tokens > 0' <<<"$r" >/dev/null || fail "usage: $r"
[[ $(jq -r .model "$tmp/t1.jsonl" | head -1) == openai ]] || fail "run_started.model"
# What the server received: the bearer key, the profile's model and options, canonical JSON.
req=$(wire_log | jq -c '.[0]')
[[ $(jq -r '.headers.authorization' <<<"$req") == "Bearer $canary" ]] || fail "no bearer key sent"
body=$(jq -r .body <<<"$req")
jq -e '.model == "local" and .temperature == 0 and .seed == 7 and .max_tokens == 1024
       and (.messages | length) >= 1 and (has("tools") | not)' <<<"$body" >/dev/null ||
  fail "request body: $body"
[[ $("$MF_BIN/mf-store" canon <<<"$body") == "$body" ]] || fail "the request body is not canonical JSON"

# One targeted repair over two network calls.
wire_reset
p=$(profile task-repair)
run 0 "$MF_BIN/mf-run" --task "$fx/forge/task-valid.json" --model "openai:$p" --trace "$tmp/t2.jsonl"
[[ $(jq -s '[.[] | select(.event == "model_responded")] | length' "$tmp/t2.jsonl") == 2 ]] || fail "repair: two calls"
wire_log | jq -e '.[1].body | fromjson | .messages | length >= 3' >/dev/null || fail "the repair request carries the history"

# --- harness mode: native tool calls, non-streamed, streamed, and over the Anthropic API
run 0 "$MF_BIN/mf-compile" "$fx/harness/read-submit.yaml" -o -
cp "$tmp/out" "$tmp/rs.plan.json"
for scenario in harness-read-submit harness-read-submit-stream harness-read-submit-anthropic; do
  wire_reset
  case $scenario in
    *-stream) p=$(profile $scenario '.stream = true') api=openai ;;
    *-anthropic) p=$(profile $scenario '.stream = true | .auth = {scheme: "header", header: "x-api-key", secret_env: "MF_TEST_KEY"}
                                        | .options = {temperature: 0, max_tokens: 512}') api=anthropic ;;
    *) p=$(profile $scenario) api=openai ;;
  esac
  run 0 "$MF_BIN/mf-run" --plan "$tmp/rs.plan.json" --model "$api:$p" --workspace "$fx/repository" \
    --trace "$tmp/$scenario.jsonl"
  [[ $(jq -r .terminal "$tmp/out") == completed ]] || fail "$scenario: $(cat "$tmp/out")"
  run 0 "$MF_BIN/mf-replay" "$tmp/$scenario.jsonl"
  first=$(wire_log | jq -r '.[0].body')
  jq -e '(.tools | length) >= 2' <<<"$first" >/dev/null || fail "$scenario: tools not sent: $first"
  second=$(wire_log | jq -r '.[1].body')
  if [[ $api == anthropic ]]; then
    [[ $(wire_log | jq -r '.[0].headers["x-api-key"]') == "$canary" ]] || fail "x-api-key not sent"
    [[ $(wire_log | jq -r '.[0].path') == /$scenario/v1/messages ]] || fail "anthropic path"
    jq -e '[.messages[] | .content | arrays | .[] | select(.type == "tool_result")] | length == 1' \
      <<<"$second" >/dev/null || fail "$scenario: tool_result not sent back: $second"
  else
    jq -e '[.messages[] | select(.role == "tool")] | length == 1' <<<"$second" >/dev/null ||
      fail "$scenario: tool result not sent back: $second"
    [[ $scenario != *-stream ]] || jq -e '.stream == true' <<<"$first" >/dev/null || fail "stream not asked"
  fi
done

# A server without native tool calling: tools described in the prompt, calls read out of the text
# by rescue, results sent back as user messages.
reply() { jq -n --arg c "$1" '{body_json: {id: "chatcmpl-x", object: "chat.completion", created: 1,
  model: "base", choices: [{index: 0, message: {role: "assistant", content: $c}, finish_reason: "stop"}],
  usage: {prompt_tokens: 50, completion_tokens: 9, total_tokens: 59}}}'; }
jq -n --argjson a "$(reply 'I will read it. {"name": "read", "arguments": {"path": "src/lib.rs"}}')" \
      --argjson b "$(reply '```json
{"name": "submit", "arguments": {"terminal_result": "COMPLETE", "summary": "Read src/lib.rs."}}
```')" '{description: "text tool calls", responses: [$a, $b]}' >"$captures/text-calls.json"
wire_reset
p=$(profile text-calls '.capabilities.tools = false')
run 0 "$MF_BIN/mf-run" --plan "$tmp/rs.plan.json" --model "openai:$p" --workspace "$fx/repository" \
  --trace "$tmp/text-calls.jsonl"
[[ $(jq -r .terminal "$tmp/out") == completed ]] || fail "text tool calls: $(cat "$tmp/out")"
[[ $(grep -c '"kind":"rescue"' "$tmp/text-calls.jsonl") == 2 ]] || fail "the text calls were not rescued"
first=$(wire_log | jq -r '.[0].body')
jq -e '(has("tools") | not) and (.messages[0].role == "system")
       and (.messages[0].content | test("submit"))' <<<"$first" >/dev/null ||
  fail "tools not described in the prompt: $first"
wire_log | jq -r '.[1].body' | jq -e '[.messages[] | select(.role == "tool")] | length == 0' \
  >/dev/null || fail "a tool message went to a server without tool calling"

# --- strict replay of live runs: the transport record of each call (source, attempts, the request
# digest) is the recording's, since a replay cannot make the call again; the reply and everything
# the run did with it must still be the same.
jq --slurpfile ok "$captures/harness-read-submit.json" \
  '{description: "a 503, then the read-submit replies", responses: ([.responses[0]] + $ok[0].responses)}' \
  "$captures/openai-503-then-ok.json" >"$captures/harness-retry.json"
for scenario in harness-retry harness-read-submit-anthropic; do
  wire_reset
  case $scenario in
    *-anthropic) p=$(profile $scenario '.stream = true | .auth = {scheme: "header", header: "x-api-key", secret_env: "MF_TEST_KEY"}
                                        | .options = {temperature: 0, max_tokens: 512}') api=anthropic ;;
    *) p=$(profile $scenario) api=openai ;;
  esac
  run 0 "$MF_BIN/mf-run" --plan "$tmp/rs.plan.json" --model "$api:$p" --workspace "$fx/repository" \
    --trace-content inline --trace "$tmp/strict-$scenario.jsonl"
  run 0 "$MF_BIN/mf-replay" --strict --plan "$tmp/rs.plan.json" --workspace "$fx/repository" \
    "$tmp/strict-$scenario.jsonl"
  [[ $(jq -r .status "$tmp/out") == identical ]] || fail "$scenario: strict replay: $(cat "$tmp/out")"
done
r=$(event "$tmp/strict-harness-retry.jsonl" model_responded)
[[ $(jq -r .attempts <<<"$r") == 2 && $(jq -r .source <<<"$r") == network ]] || fail "retry: $r"
# Another workspace: the read's result differs.
mkdir -p "$tmp/ws-other/src"
echo "fn other() {}" >"$tmp/ws-other/src/lib.rs"
run 1 "$MF_BIN/mf-replay" --strict --plan "$tmp/rs.plan.json" --workspace "$tmp/ws-other" \
  "$tmp/strict-harness-retry.jsonl"
[[ $(jq -r .first_difference.actual "$tmp/out") == tool_completed ]] ||
  fail "another workspace: $(cat "$tmp/out")"
# A reply edited in the trace (and the chain relinked): its recorded digest no longer matches it.
jq -c 'del(.prev) | if .event == "model_responded" and .call == 1
       then .tool_calls[0].arguments = "{\"path\":\"src/main.rs\"}" else . end' \
  "$tmp/strict-harness-retry.jsonl" | link >"$tmp/strict-edited.jsonl"
run 0 "$MF_BIN/mf-replay" "$tmp/strict-edited.jsonl"
run 1 "$MF_BIN/mf-replay" --strict --plan "$tmp/rs.plan.json" --workspace "$fx/repository" \
  "$tmp/strict-edited.jsonl"
[[ $(jq -r '.status + " " + .first_difference.actual' "$tmp/out") == "diverged model_responded" ]] ||
  fail "an edited reply: $(cat "$tmp/out")"

# Reasoning and parallel calls reach the trace (task mode records them; its contract then fails).
wire_reset
p=$(profile vllm-tool-call)
run 1 "$MF_BIN/mf-run" --task "$fx/forge/task-valid.json" --model "openai:$p" --trace-content inline \
  --trace "$tmp/vllm.jsonl"
r=$(event "$tmp/vllm.jsonl" model_responded)
jq -e '.reasoning_bytes > 0 and (.reasoning | length) > 0 and .tool_call_count >= 1' <<<"$r" >/dev/null ||
  fail "vLLM reasoning or calls not recorded: $r"
wire_reset
p=$(profile openai-parallel-calls)
run 1 "$MF_BIN/mf-run" --task "$fx/forge/task-valid.json" --model "openai:$p" --trace "$tmp/par.jsonl"
[[ $(event "$tmp/par.jsonl" model_responded | jq .tool_call_count) == 2 ]] || fail "parallel calls"
wire_reset
p=$(profile openai-refusal)
run 1 "$MF_BIN/mf-run" --task "$fx/forge/task-valid.json" --model "openai:$p" --trace "$tmp/refusal.jsonl"
[[ $(event "$tmp/refusal.jsonl" model_responded | jq -r .stop_reason) == refusal ]] || fail "refusal"

# Every server kind's capture decodes through the real client: what the first call ends as, and
# in how many attempts.
while read -r scenario api stream ends attempts check; do
  wire_reset
  edit=".stream = $stream"
  [[ $api == anthropic ]] && edit="$edit | .options = {temperature: 0, max_tokens: 256}"
  p=$(profile "$scenario" "$edit")
  rc=0
  "$MF_BIN/mf-run" --task "$fx/forge/task-valid.json" --model "$api:$p" --trace-content inline \
    --trace "$tmp/$scenario.jsonl" >/dev/null 2>&1 || rc=$?
  ((rc <= 1)) || fail "$scenario: exit $rc"
  e=$(event "$tmp/$scenario.jsonl" "$ends")
  [[ -n $e && $(jq -r .attempts <<<"$e") == "$attempts" ]] || fail "$scenario: expected $ends in $attempts: $e"
  [[ $check == - ]] || jq -e "$check" <<<"$e" >/dev/null || fail "$scenario: $check: $e"
  run 0 "$MF_BIN/mf-replay" "$tmp/$scenario.jsonl"
done <<'EOF_CASES'
openai-text openai false model_responded 1 .content_bytes>0
openai-stream-text openai true model_responded 1 .usage.output_tokens>0
openai-stream-awkward openai true model_responded 1 (.content|test("é|ü|—|…|中"))
openai-stream-tools openai true model_responded 1 .tool_call_count==2
llamacpp-stream openai true model_responded 1 .content_bytes>0
ollama-tools openai false model_responded 1 .tool_call_count==1
ollama-stream openai true model_responded 1 .content_bytes>0
lmstudio-tools openai false model_responded 1 .tool_call_count==1
vllm-stream-reasoning openai true model_responded 1 .reasoning_bytes>0
anthropic-text anthropic false model_responded 1 .stop_reason=="end_turn"
anthropic-tool-use anthropic false model_responded 1 .tool_call_count==1
anthropic-stream anthropic true model_responded 1 .tool_call_count==1
anthropic-thinking-stream anthropic true model_responded 1 .reasoning_bytes>0
anthropic-529-then-ok anthropic false model_responded 2 -
anthropic-error-event anthropic true model_failed 3 (.error|test("overloaded.*after 3 attempts"))
anthropic-truncated-stream anthropic true model_failed 1 (.error|test("trunc|ended"))
EOF_CASES

# --- transport retries: each kind retried, with its own budget
retried() {  # SCENARIO ATTEMPTS [JQ]
  wire_reset
  local p
  p=$(profile "$1" "${3:-}")
  run 1 "$MF_BIN/mf-run" --task "$fx/forge/task-valid.json" --model "openai:$p" --trace "$tmp/$1.jsonl"
  local r
  r=$(jq -c 'select(.event == "model_responded" or .event == "model_failed")' "$tmp/$1.jsonl" | head -1)
  [[ $(jq -r .attempts <<<"$r") == "$2" ]] || fail "$1: attempts: $r"
  # Every request the server saw is an attempt some call counted (a repair is a new call).
  local total
  total=$(jq -s '[.[] | select(.event == "model_responded" or .event == "model_failed") | .attempts] | add' "$tmp/$1.jsonl")
  [[ $(wire_log | jq length) == "$total" ]] || fail "$1: the server saw $(wire_log | jq length) requests, the trace counts $total"
  run 0 "$MF_BIN/mf-replay" "$tmp/$1.jsonl"
}
# The text replies after a retry are not task outputs: the run fails its contract (exit 1) after
# a successful call; what matters here is the attempts.
start=$(date +%s%N)
retried openai-429-then-ok 2
elapsed=$((($(date +%s%N) - start) / 1000000))
((elapsed >= 1000)) || fail "Retry-After: 1 was not honoured (${elapsed} ms)"
grep -q '"event":"model_responded"' "$tmp/openai-429-then-ok.jsonl" || fail "429 then ok: no reply"
retried openai-500-then-ok 2
retried openai-503-then-ok 2
retried openai-reset-then-ok 2
retried openai-500-always 3
jq -se '[.[] | select(.event == "model_failed")][0].error | test("HTTP 500.*after 3 attempts")' \
  "$tmp/openai-500-always.jsonl" >/dev/null || fail "500 always: error text"
[[ $(jq -r 'select(.event == "run_failed") | .repairs' "$tmp/openai-500-always.jsonl") == 0 ]] ||
  fail "transport failures spent the repair budget"
retried openai-401 1
retried openai-400 1
retried openai-malformed 1
retried openai-truncated-stream 1 '.stream = true'
# A Retry-After beyond the profile's limit fails at once instead of sleeping.
retried openai-429-then-ok 1 '.retry.max_retry_after_ms = 500'

# Timeouts: a slow first byte, a stall mid-stream, a body over the bound.
retried openai-slow-first-byte 1 '.timeouts_ms.first_byte = 300 | .retry.max_attempts = 1'
grep -q 'first-byte timeout' "$tmp/openai-slow-first-byte.jsonl" || fail "first-byte timeout not named"
start=$(date +%s%N)
retried openai-stall 2 '.stream = true | .timeouts_ms.idle = 300 | .retry.max_attempts = 2'
elapsed=$((($(date +%s%N) - start) / 1000000))
((elapsed < 10000)) || fail "the stall was not cut by the idle timeout (${elapsed} ms)"
grep -q 'idle timeout' "$tmp/openai-stall.jsonl" || fail "idle timeout not named"
# Peak RSS against a small run's (so a sanitizer's own overhead cancels out; its quarantine would
# count freed chunks as peak memory).
peak() {
  { ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0 \
      /usr/bin/time -f %M "$@" 2>&1 >/dev/null || true; } | tail -1
}
small=$(peak "$MF_BIN/mf-run" --task "$fx/forge/task-valid.json" \
  --model "openai:$(profile task-valid)" --trace "$tmp/small.jsonl")
rss=$(peak "$MF_BIN/mf-run" --task "$fx/forge/task-valid.json" \
  --model "openai:$(profile openai-huge '.max_response_bytes = 1048576')" --trace "$tmp/huge.jsonl")
grep -q 'response too large' "$tmp/huge.jsonl" || fail "the 64 MiB body was not bounded"
((rss < small + 16 * 1024)) || fail "peak RSS $rss KiB reading a bounded body (a small run: $small KiB)"
# A slow first byte on a reused connection is the first-byte timeout's business, not the connect
# timeout's: two slow replies in one run, the second over the kept-alive connection.
jq '.responses |= map(. + {delay_ms: 700})' "$captures/harness-read-submit.json" >"$captures/slow-twice.json"
wire_reset
run 0 "$MF_BIN/mf-run" --plan "$tmp/rs.plan.json" --workspace "$fx/repository" --trace "$tmp/slow2.jsonl" \
  --model "openai:$(profile slow-twice '.timeouts_ms.connect = 300 | .timeouts_ms.first_byte = 5000')"
[[ $(jq -s '[.[] | select(.event == "model_responded" and .attempts == 1)] | length' "$tmp/slow2.jsonl") == 2 ]] ||
  fail "slow replies on a reused connection were cut: $(grep model_ "$tmp/slow2.jsonl")"
[[ $(wire_log | jq '[.[].conn] | unique | length') == 1 ]] || fail "the second call did not reuse the connection"

# The run's deadline stops a call mid-wait (plan mode).
wire_reset
run 1 "$MF_BIN/mf-run" --plan "$tmp/rs.plan.json" --model "openai:$(profile openai-slow-first-byte)" \
  --workspace "$fx/repository" --deadline-ms 400 --trace "$tmp/deadline.jsonl"
[[ $(jq -r .terminal "$tmp/out") == timed_out ]] || fail "deadline: $(cat "$tmp/out")"

# llama.cpp's "Failed to parse" 500 is salvaged as text, not retried.
retried llamacpp-failed-to-parse 1
grep -q '"stop_reason":"salvaged"' "$tmp/llamacpp-failed-to-parse.jsonl" || fail "llama.cpp 500 not salvaged"

# --- rejected before any request: bad profiles, an unset secret
wire_reset
printf '{"schema_version": "1.0", "kind": "millforge_live_profile",\n "base_url": "ftp://x",\n "model": "m", "options": {"temprature": 1}}\n' >"$tmp/bad.json"
run 2 "$MF_BIN/mf-run" --task "$fx/forge/task-valid.json" --model "openai:$tmp/bad.json" --trace "$tmp/bad.jsonl"
grep -q 'bad.json:2:2: error MF-S020.*base_url' "$tmp/err" || fail "bad base_url: $(cat "$tmp/err")"
grep -q 'MF-S021.*temprature' "$tmp/err" || fail "unknown option: $(cat "$tmp/err")"
[[ ! -e $tmp/bad.jsonl ]] || fail "a trace was created for a rejected profile"
jq '.auth = {scheme: "bearer", secret_env: "sk-abcdefghijklmnopqrstuvwxyz012345"}' "$base" >"$tmp/inline-secret.json"
run 2 "$MF_BIN/mf-run" --task "$fx/forge/task-valid.json" --model "openai:$tmp/inline-secret.json" --trace "$tmp/x.jsonl"
grep -q MF-S026 "$tmp/err" || fail "a key in secret_env: $(cat "$tmp/err")"
grep -q abcdefghijklmnop "$tmp/err" && fail "the inline secret was echoed"
p=$(profile task-valid)
(unset MF_TEST_KEY; run 2 "$MF_BIN/mf-run" --task "$fx/forge/task-valid.json" --model "openai:$p" --trace "$tmp/x.jsonl")
grep -q 'MF-M002.*MF_TEST_KEY' "$tmp/err" || fail "unset secret: $(cat "$tmp/err")"
[[ $(wire_log | jq length) == 0 ]] || fail "a rejected run made a request"
# A key with a line break cannot smuggle a second header into the request.
(MF_TEST_KEY=$'abc\r\nX-Injected: 1' run 1 "$MF_BIN/mf-run" --task "$fx/forge/task-valid.json" \
  --model "openai:$p" --trace "$tmp/inject.jsonl")
grep -q 'holds a control character' "$tmp/inject.jsonl" || fail "a CRLF in the key was sent"
[[ $(wire_log | jq length) == 0 ]] || fail "a request went out with a CRLF in the key"

# --- the reply cache: record, then replay with the server gone
st=$tmp/store
wire_reset
p=$(profile harness-read-submit)
run 0 "$MF_BIN/mf-run" --plan "$tmp/rs.plan.json" --model "openai:$p" --workspace "$fx/repository" \
  --cache write --store "$st" --fixed-clock --run-id r1 --trace "$tmp/rec.jsonl"
wire_reset
run 0 "$MF_BIN/mf-run" --plan "$tmp/rs.plan.json" --model "openai:$p" --workspace "$fx/repository" \
  --cache write --store "$st" --repeat-index 1 --fixed-clock --run-id r1 --trace "$tmp/rec1.jsonl"
[[ $(wire_log | jq length) == 2 ]] || fail "write mode calls the network every time"
# Samples of one request are separate keys: index 1 was recorded beside index 0.
digest=$(jq -r 'select(.event == "model_responded") | .request_sha256' "$tmp/rec.jsonl" | head -1)
for i in 0 1; do
  run 0 "$MF_BIN/mf-store" --store "$st" ref get "cache/model/$digest/$i"
done

# --- eval: a small live campaign recorded with -j 2, replayed twice without the network
mkdir -p "$tmp/camp"
profile task-valid >/dev/null
profile harness-read-submit >/dev/null
profile harness-read-submit-stream '.stream = true' >/dev/null
cp "$tmp/task-valid.json" "$tmp/harness-read-submit.json" "$tmp/harness-read-submit-stream.json" \
  "$tmp/rs.plan.json" "$tmp/camp/"
jq -n --arg task "$fx/forge/task-valid.json" --arg ws "$fx/repository" '{
  suite_id: "live-small", cases: [
  {id: "task", task: $task, model: "openai:task-valid.json",
   expect: {terminal: "completed", model_calls: 1}},
  {id: "plan", plan: "rs.plan.json", model: "openai:harness-read-submit.json", workspace: $ws,
   expect: {terminal: "completed", tool_calls: 2}},
  {id: "plan-stream", plan: "rs.plan.json", model: "openai:harness-read-submit-stream.json",
   workspace: $ws, expect: {terminal: "completed", tool_calls: 2}}]}' >"$tmp/camp/suite.json"
jq '.price_usd_per_mtok = {input: 2, output: 8}' "$tmp/camp/task-valid.json" >"$tmp/camp/priced.json"
mv "$tmp/camp/priced.json" "$tmp/camp/task-valid.json"
cst=$tmp/camp-store
wire_reset
run 0 "$MF_BIN/mf-eval" run --suite "$tmp/camp/suite.json" --output "$tmp/rec.report.json" \
  --fixed-clock -j 2 --cache write --store "$cst"
[[ $(wire_log | jq length) == 5 ]] || fail "campaign: 5 requests expected, saw $(wire_log | jq length)"
# The priced case's cost: its tokens at the profile's prices, in the report.
jq -e '.cases[] | select(.id == "task") | .usage as $u
       | ($u.cost_usd - ($u.input_tokens * 2 + $u.output_tokens * 8) / 1e6 | fabs) < 1e-12' \
  "$tmp/rec.report.json" >/dev/null || fail "cost not accounted: $(jq -c '.cases[].usage' "$tmp/rec.report.json")"
# Connections were reused: two workers, never more connections than requests minus reuse.
conns=$(wire_log | jq '[.[].conn] | unique | length')
((conns <= 3)) || fail "campaign opened $conns connections for 5 requests on 2 threads"
wire_stop
run 0 "$MF_BIN/mf-eval" run --suite "$tmp/camp/suite.json" --output "$tmp/replay1.json" \
  --fixed-clock -j 2 --cache read --store "$cst"
run 0 "$MF_BIN/mf-eval" run --suite "$tmp/camp/suite.json" --output "$tmp/replay2.json" \
  --fixed-clock -j 1 --cache read --store "$cst"
cmp "$tmp/replay1.json" "$tmp/replay2.json" || fail "two replays differ"
strip='del(.cases[].trace_sha256)'
[[ "$(jq -S "$strip" "$tmp/rec.report.json")" == "$(jq -S "$strip" "$tmp/replay1.json")" ]] ||
  fail "the replay's outcomes differ from the recording's"
# Single runs replay too, and say where the reply came from.
run 0 "$MF_BIN/mf-run" --plan "$tmp/rs.plan.json" --model "openai:$p" --workspace "$fx/repository" \
  --cache read --store "$st" --fixed-clock --run-id r1 --trace "$tmp/rep.jsonl"
[[ $(jq -r 'select(.event == "model_responded") | .source' "$tmp/rep.jsonl" | sort -u) == cache ]] ||
  fail "replayed replies not marked cache"
# The replayed trace is the recorded one but for where each reply came from (source, attempts).
diff <(jq -c 'del(.prev, .attempts) | if .source then .source = "cache" else . end' "$tmp/rec.jsonl") \
  <(jq -c 'del(.prev)' "$tmp/rep.jsonl") >/dev/null || fail "the replayed trace differs beyond source"
grep -q '"attempts"' "$tmp/rep.jsonl" && fail "a cached reply claims transport attempts"
(unset MF_TEST_KEY; run 0 "$MF_BIN/mf-run" --plan "$tmp/rs.plan.json" --model "openai:$p" \
  --workspace "$fx/repository" --cache read --store "$st" --repeat-index 1 --trace "$tmp/rep1.jsonl")
# A miss in read mode fails the run that happened (exit 1, not 2: 2 is a refusal before any work),
# with a complete trace and one line naming the reply never recorded and how to record it.
run 1 "$MF_BIN/mf-run" --plan "$tmp/rs.plan.json" --model "openai:$p" --workspace "$fx/repository" \
  --cache read --store "$st" --repeat-index 7 --trace "$tmp/miss.jsonl"
grep -Eq '^mf-run: error MF-M001: reply cache miss: the reply to request [0-9a-f]{64} sample 7 was never recorded \(.*record it with --cache write\)$' \
  "$tmp/err" || fail "cache miss: $(cat "$tmp/err")"
[[ $(grep -c MF-M001 "$tmp/err") -eq 1 ]] || fail "cache miss: more than one line: $(cat "$tmp/err")"
[[ $(jq -r .terminal "$tmp/out") == model_failed ]] || fail "cache miss: result $(cat "$tmp/out")"
run 0 "$MF_BIN/mf-replay" "$tmp/miss.jsonl"
run 2 "$MF_BIN/mf-run" --task "$fx/forge/task-valid.json" --model "scripted:$fx/forge/responses-valid.json" \
  --cache read --trace "$tmp/x.jsonl"
grep -q 'applies to live models' "$tmp/err" || fail "--cache with a scripted model"

# --- the canary: a server quoting the key back; nothing anywhere may hold it
wire_start "$captures"
p=$(profile echo-key-401)
run 1 "$MF_BIN/mf-run" --task "$fx/forge/task-valid.json" --model "openai:$p" --trace "$tmp/echo.jsonl"
grep -q 'Incorrect API key provided: \[REDACTED\]' "$tmp/echo.jsonl" || fail "the echoed key was not cut: $(grep model_failed "$tmp/echo.jsonl")"
wire_stop
# Everything under $tmp: traces, results, reports, stderr, both stores' data files. Only the
# server's own request log (and the capture quoting the key) may hold it.
if grep -rl --binary-files=text "$canary" "$tmp" --exclude='wire-*' --exclude-dir=captures; then
  fail "the canary secret leaked into the files above"
fi
echo "live: ok"
