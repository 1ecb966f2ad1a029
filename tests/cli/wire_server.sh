#!/usr/bin/env bash
# The loopback wire server itself (tests/server/wire_server.py, docs/testing-wire-server.md),
# checked with curl rather than with Millforge: routing and per-scenario counters, headers, SSE
# framing and split pieces, reset/stall/truncate, a 64 MiB body streamed in bounded memory, the
# request log and connection reuse, refusals, and that the server never outlives its parent.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/wire.bash"

wire_start
u=$WIRE_URL
chat=v1/chat/completions
caps=$MF_SOURCE_DIR/fixtures/wire

# --- the captures: every one is servable and described; the mirrors of scripted fixtures agree ----
python3 - "$WIRE_SERVER" "$caps" <<'EOF' || fail "a capture is invalid"
import importlib.util, json, os, sys
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
spec = importlib.util.spec_from_file_location("wire_server", sys.argv[1])
server = importlib.util.module_from_spec(spec)
spec.loader.exec_module(server)
names = sorted(f[:-5] for f in os.listdir(sys.argv[2]) if f.endswith(".json"))
assert len(names) >= 38, names
for name in names:
    server.load_scenario(sys.argv[2], name)
    with open(os.path.join(sys.argv[2], name + ".json"), encoding="utf-8") as f:
        assert next(iter(json.load(f))) == "description", name + ": description is not first"
EOF
content() { jq -c '[.responses[].body_json.choices[0].message.content]' "$caps/$1.json"; }
forge=fixtures/forge
[[ $(content task-valid) == "$(jq -c '[.steps[0].content]' $forge/responses-valid.json)" ]] ||
  fail "task-valid differs from responses-valid.json"
[[ $(content task-repair) == "$(jq -c '[.steps[].content]' $forge/responses-repair.json)" ]] ||
  fail "task-repair differs from responses-repair.json"
[[ $(jq -c '[.responses[].body_json.choices[0].message.tool_calls[].function
  | {name, arguments: (.arguments | fromjson)}]' "$caps/harness-read-submit.json") == \
  "$(jq -c '[.steps[].tool_calls[]]' fixtures/harness/runs/read-submit.json)" ]] ||
  fail "harness-read-submit differs from runs/read-submit.json"

# status URL [CURL_ARGS...] : POSTs to URL, keeps the body in $tmp/body and the headers in
# $tmp/head, and prints the HTTP status.
status() {
  local url=$1
  shift
  curl -sS -o "$tmp/body" -D "$tmp/head" -w '%{http_code}' -X POST -d '{"model":"m"}' "$@" "$url"
}
header() { # header NAME : the value of NAME in $tmp/head
  tr -d '\r' <"$tmp/head" | awk -v n="$(tr '[:upper:]' '[:lower:]' <<<"$1")" -F': ' \
    'tolower($1) == n { print $2 }'
}

[[ $(curl -s -o /dev/null -w '%{http_code}' "$u/_health") == 200 ]] || fail "/_health is not 200"

# wire_profile keeps the profile and points base_url at one scenario.
echo '{"base_url": "https://api.example.invalid/v1", "model": "m", "timeouts": {"total_ms": 5}}' \
  >"$tmp/base.json"
wire_profile openai-text "$tmp/base.json" "$tmp/p1.json"
wire_profile anthropic-text "$tmp/base.json" "$tmp/p2.json" ""
jq -e --arg u "$u" '.base_url == $u + "/openai-text/v1" and .model == "m"
  and .timeouts.total_ms == 5' "$tmp/p1.json" >/dev/null ||
  fail "wire_profile: $(cat "$tmp/p1.json")"
[[ $(jq -r .base_url "$tmp/p2.json") == "$u/anthropic-text" ]] || fail "wire_profile API_PATH"

# --- routing and counters: 429 with Retry-After, then the reply, which then repeats ---------------
[[ $(status "$u/openai-429-then-ok/$chat") == 429 ]] || fail "first attempt is not 429"
[[ $(header retry-after) == 1 ]] || fail "429 without Retry-After: 1"
jq -e '.error.code == "rate_limit_exceeded"' "$tmp/body" >/dev/null || fail "429 body"
for attempt in second third; do
  [[ $(status "$u/openai-429-then-ok/$chat") == 200 ]] || fail "$attempt attempt is not 200"
  jq -e '.object == "chat.completion" and .choices[0].finish_reason == "stop"' "$tmp/body" \
    >/dev/null || fail "$attempt attempt body"
done
[[ $(status "$u/openai-text/$chat") == 200 ]] || fail "counters are not per scenario"
wire_reset
[[ $(status "$u/openai-429-then-ok/$chat") == 429 ]] || fail "/_reset did not reset the counter"

# --- SSE: the rendered frames, chunked, byte for byte ---------------------------------------------
for scenario in openai-stream-text anthropic-stream; do
  [[ $(status "$u/$scenario/v1/x" -N) == 200 ]] || fail "$scenario: status"
  [[ $(header content-type) == text/event-stream* ]] || fail "$scenario: content-type"
  [[ $(header transfer-encoding) == chunked ]] || fail "$scenario: not chunked"
  jq -j '.responses[0].sse[] | (if .event then "event: \(.event)\n" else "" end) + "data: "
    + (.data | if type == "string" then . else tojson end) + "\n\n"' "$caps/$scenario.json" \
    >"$tmp/want"
  cmp -s "$tmp/body" "$tmp/want" || fail "$scenario: SSE bytes differ from the capture's rendering"
done
[[ $(tail -n 3 "$tmp/body") == $'event: message_stop\ndata: {"type":"message_stop"}' ]] ||
  fail "anthropic-stream does not end with message_stop"

# --- split: every chunk of openai-stream-tools carries 7 bytes ------------------------------------
curl -sS --raw -o "$tmp/raw" -d '{}' "$u/openai-stream-tools/$chat"
curl -sS -o "$tmp/decoded" -d '{}' "$u/openai-stream-tools/$chat"
python3 - "$tmp/raw" "$tmp/decoded" <<'EOF' || fail "split pieces are wrong"
import sys
raw, decoded = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
sizes, body, at = [], b"", 0
while True:
    end = raw.index(b"\r\n", at)
    size = int(raw[at:end], 16)
    sizes.append(size)
    body += raw[end + 2 : end + 2 + size]
    at = end + 2 + size + 2
    if size == 0:
        break
assert at == len(raw), "bytes after the last chunk"
assert body == decoded, "chunks do not reassemble the body"
assert len(sizes) > 100 and set(sizes[:-2]) == {7} and 0 < sizes[-2] <= 7, sizes
EOF
# Reassembled, the two calls' argument pieces make the capture's JSON texts.
grep '^data: {' "$tmp/decoded" | cut -c7- | jq -sj '[.[].choices[0].delta.tool_calls // [] | .[]]
  | group_by(.index)[] | (map(.function.arguments // "") | add) + "\n"' >"$tmp/args"
[[ $(jq -c . "$tmp/args") == $'{"path":"src/lib.rs"}\n{"pattern":"panic!","path":"src"}' ]] ||
  fail "streamed tool arguments do not reassemble: $(cat "$tmp/args")"

# CRLF line endings and 3-byte pieces.
curl -sS -o "$tmp/awkward" -d '{}' "$u/openai-stream-awkward/$chat"
tail -c 16 "$tmp/awkward" | cmp -s - <(printf 'data: [DONE]\r\n\r\n') ||
  fail "awkward stream framing"
[[ $(grep -c $'\r$' "$tmp/awkward") -gt 20 ]] || fail "awkward stream lines do not end in CRLF"

# --- reset, stall, truncate, slow first byte ------------------------------------------------------
rc=0
curl -sS -o /dev/null -d '{}' "$u/openai-reset-then-ok/$chat" 2>"$tmp/err" || rc=$?
[[ $rc == 56 ]] || fail "reset: curl exited $rc, expected 56 ($(cat "$tmp/err"))"
[[ $(status "$u/openai-reset-then-ok/$chat") == 200 ]] || fail "reset: second attempt"
jq -e '.choices[0].message.content | length > 0' "$tmp/body" >/dev/null || fail "reset: reply"

rc=0
curl -sS -N --max-time 1 -o "$tmp/stall" -d '{}' "$u/openai-stall/$chat" 2>/dev/null || rc=$?
[[ $rc == 28 ]] || fail "stall: curl exited $rc, expected 28"
[[ $(grep -c '^data: ' "$tmp/stall") == 4 ]] || fail "stall: expected the 4 events before it"

# Chunked, the cut stream is still a well-formed HTTP message, and the connection is kept.
wire_reset
curl -sS -o "$tmp/body" -o /dev/null -d '{}' "$u/openai-truncated-stream/$chat" \
  "$u/openai-text/$chat" || fail "truncate: curl failed"
[[ $(wire_log | jq '.[0].conn == .[1].conn') == true ]] || fail "truncate: connection not kept"
grep -q 'DONE\|finish_reason":"stop' "$tmp/body" && fail "truncate: the stream was not cut"
[[ $(tail -c 1 "$tmp/body" | od -An -tx1) != *0a* ]] ||
  fail "truncate: the cut is not inside an event"

rc=0
curl -sS --max-time 1 -o /dev/null -d '{}' "$u/openai-slow-first-byte/$chat" 2>/dev/null || rc=$?
[[ $rc == 28 ]] || fail "slow first byte answered within 1 s (curl exited $rc)"

# --- huge: 64 MiB streamed without the server holding it ------------------------------------------
[[ $(curl -sS -o /dev/null -w '%{size_download}' -d '{}' "$u/openai-huge/$chat") == 67108864 ]] ||
  fail "huge: not 64 MiB"
want_tail=$(jq -j '.responses[0].huge.suffix' "$caps/openai-huge.json")
[[ $(curl -sS -d '{}' "$u/openai-huge/$chat" | tail -c ${#want_tail}) == "$want_tail" ]] ||
  fail "huge: wrong ending"
# A client that hangs up early must not hurt the server.
start=$( (curl -sS -d '{}' "$u/openai-huge/$chat" 2>/dev/null || true) | head -c 16)
[[ $start == '{"id":"chatcmpl-' ]] || fail "huge: wrong beginning"
hwm_kb=$(awk '/^VmHWM:/ { print $2 }' "/proc/$WIRE_PID/status")
((hwm_kb < 50 * 1024)) || fail "huge: the server's peak RSS reached $hwm_kb kB"

# --- the request log and connection reuse ---------------------------------------------------------
wire_reset
curl -sS -o /dev/null -o /dev/null -H 'X-Wire-Test: one' -d '{"n":1}' \
  "$u/openai-text/$chat" "$u/openai-text/$chat?x=1"
curl -sS -o /dev/null -d '{"n":2}' "$u/openai-text/$chat"
wire_log >"$tmp/log"
jq -e --arg chat "/openai-text/$chat" 'length == 3
  and ([.[].n] == [0, 1, 2]) and all(.scenario == "openai-text" and .method == "POST")
  and .[0].path == $chat and .[1].path == $chat + "?x=1"
  and .[0].headers["x-wire-test"] == "one" and .[0].headers["content-length"] == "7"
  and .[0].body == "{\"n\":1}" and .[2].body == "{\"n\":2}"
  and .[0].conn == .[1].conn and .[2].conn != .[0].conn' "$tmp/log" >/dev/null ||
  fail "request log: $(cat "$tmp/log")"
diff <(tail -n 3 "$WIRE_LOG" | jq -c .) <(jq -c '.[]' "$tmp/log") >/dev/null ||
  fail "--log file does not end with the logged requests"

# --- refusals -------------------------------------------------------------------------------------
[[ $(status "$u/no-such-scenario/$chat") == 404 ]] || fail "unknown scenario is not 404"
[[ $(status "$u/Openai-Text/$chat") == 404 ]] || fail "bad scenario name is not 404"
[[ $(status "$u/_nothing") == 404 ]] || fail "unknown control endpoint is not 404"
[[ $(curl -s -o /dev/null -w '%{http_code}' "$u/_reset") == 405 ]] || fail "GET /_reset is not 405"
main_pid=$WIRE_PID

# A second server over scenarios written here: bad files are 500s naming the problem.
mkdir "$tmp/caps"
printf 'payload\n' >"$tmp/caps/payload.txt"
echo '{"responses": [{"body_file": "payload.txt", "framing": "close"}]}' >"$tmp/caps/file.json"
echo '{"responses": [{"status": 200}, {"framing": "sideways"}]}' >"$tmp/caps/broken.json"
echo '{"responses": [{"body_file": "../wire-0.port"}]}' >"$tmp/caps/escape.json"
echo '{"responses": [' >"$tmp/caps/notjson.json"
wire_start "$tmp/caps"
[[ $WIRE_PID != "$main_pid" ]] || fail "second server has the same pid"
[[ $(status "$WIRE_URL/file/x") == 200 && $(<"$tmp/body") == payload ]] || fail "body_file"
[[ $(header connection) == close && -z $(header content-length) ]] || fail "close framing"
for case in "broken:broken.json.responses[1].framing: must be" \
  "escape:escape.json.responses[0].body_file: must stay inside" \
  "notjson:notjson.json: not valid JSON"; do
  [[ $(status "$WIRE_URL/${case%%:*}/x") == 500 ]] || fail "${case%%:*}: not 500"
  jq -e --arg m "${case#*:}" '.error.message | startswith($m)' "$tmp/body" >/dev/null ||
    fail "${case%%:*}: $(cat "$tmp/body")"
done
[[ $(curl -s -o /dev/null -w '%{http_code}' "$u/_health") == 200 ]] || fail "first server is gone"

# --- lifetime: SIGTERM, and the death of the parent -----------------------------------------------
gone() { # gone PID : true once PID has exited (or is only a zombie)
  local i
  for ((i = 0; i < 30; i++)); do
    [[ ! -e /proc/$1/stat || $(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) == Z ]] &&
      return 0
    sleep 0.1
  done
  return 1
}
second=$WIRE_PID
kill -TERM "$second"
rc=0
wait "$second" || rc=$?
[[ $rc == 0 ]] || fail "SIGTERM: the server exited $rc"

# The orphans' output does not go to this script's stdout and stderr: a server that outlived the
# test would otherwise hold the test runner's pipes open.
bash -c 'python3 "$1" --captures "$2" --port-file "$3" >/dev/null 2>&1 & echo $! >"$4"
  for _ in $(seq 100); do [[ -s $3 ]] && break; sleep 0.1; done
  curl -fsS -o /dev/null "http://127.0.0.1:$(<"$3")/_health"' \
  _ "$WIRE_SERVER" "$caps" "$tmp/orphan.port" "$tmp/orphan.pid" || fail "orphan: never served"
orphan=$(<"$tmp/orphan.pid")
if ! gone "$orphan"; then
  kill -TERM "$orphan"
  fail "the server outlived its parent"
fi
# A parent that is gone before Python has even started (as wire_start starts it: --parent-pid).
# The server must leave quietly, not crash.
bash -c 'me=$BASHPID
  python3 "$1" --captures "$2" --port-file "$3" --parent-pid "$me" >/dev/null 2>"$3.err" &
  echo $! >"$4"' _ "$WIRE_SERVER" "$caps" "$tmp/early.port" "$tmp/early.pid"
orphan=$(<"$tmp/early.pid")
if ! gone "$orphan"; then
  kill -TERM "$orphan"
  fail "the server outlived a parent that died while it started"
fi
[[ ! -s $tmp/early.port.err ]] || fail "early orphan: $(cat "$tmp/early.port.err")"
echo "ok"
