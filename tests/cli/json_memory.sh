#!/usr/bin/env bash
# The JSON tree costs memory in proportion to its input (docs/json.md, "Memory per value"): 15 MB
# documents of empty containers, the cheapest values to write and once the dearest to hold, keep
# each command's peak RSS under 32 times the input, through local files (mf-compile verify and
# project), a model reply from the loopback wire server (mf-run --task), a tool call's arguments in
# that reply (mf-run --plan), and a strict replay of that run (mf-replay --strict). Under
# AddressSanitizer RSS says little about the program; only the behaviour is checked.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/wire.bash"
[[ -x /usr/bin/time ]] || { echo "SKIP: /usr/bin/time is not installed" >&2; exit 77; }
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY

fx=$MF_SOURCE_DIR/fixtures
ratio=32
asan=
grep -q __asan_init "$MF_BIN/mf-run" && asan=1

# doc KIND BYTES : about BYTES of JSON on stdout, grouped 1000 to a container so that no container
# reaches the entry limit: objects  [[{},{},...],...]   arrays  [[[],[],...],...]
#                                  members  {"g0":{"a0":{},"a1":{},...},...}
doc() {
  python3 - "$@" <<'PY'
import sys
kind, size = sys.argv[1], int(sys.argv[2])
if kind == "members":
    groups, n, g = [], 0, 0
    while n < size:
        body = "{" + ",".join('"a%d":{}' % i for i in range(1000)) + "}"
        groups.append('"g%d":%s' % (g, body)); n += len(groups[-1]) + 1; g += 1
    sys.stdout.write("{" + ",".join(groups) + "}")
else:
    unit = {"objects": "{}", "arrays": "[]"}[kind]
    group = "[" + ",".join([unit] * 1000) + "]"
    sys.stdout.write("[" + ",".join([group] * (size // (len(group) + 1))) + "]")
PY
}

# peak NAME INPUT_BYTES EXPECTED_RC CMD... : runs CMD, checks its exit code and that its peak RSS
# is under $ratio times INPUT_BYTES.
peak() {
  local name=$1 bytes=$2 expected=$3 rc=0 kib
  shift 3
  /usr/bin/time -o "$tmp/time" -f %M "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  [[ $rc -eq $expected ]] || { cat "$tmp/err" >&2; fail "$name: $* exited $rc, expected $expected"; }
  kib=$(tail -1 "$tmp/time")  # the last line: time notes a non-zero exit on a line of its own
  echo "json_memory: $name: $kib KiB peak for $bytes bytes ($((kib * 1024 / bytes))x)" >&2
  [[ -n $asan ]] || ((kib * 1024 < ratio * bytes)) ||
    fail "$name peaked at $kib KiB, over $ratio times its $bytes bytes of input"
}

size=$((15 * 1000 * 1000))  # under the 16 MiB a plan file may have

# --- a local file: mf-compile verify parses the whole plan before judging it
for kind in objects arrays members; do
  doc "$kind" "$size" >"$tmp/$kind.json"
  if [[ $kind == members ]]; then
    peak "verify $kind" "$size" 1 "$MF_BIN/mf-compile" verify "$tmp/$kind.json"
    grep -q "error MF-L002" "$tmp/err" || fail "verify $kind: $(cat "$tmp/err")"
  else
    peak "verify $kind" "$size" 2 "$MF_BIN/mf-compile" verify "$tmp/$kind.json"
    grep -q "error MF-S012" "$tmp/err" || fail "verify $kind: $(cat "$tmp/err")"
  fi
done

# A document refused for an unknown member after parsing: the diagnostic's line and column come
# from a second pass that maps only the pointer it names, not every value of the document.
python3 -c 'import sys; d = open(sys.argv[1]).read(); sys.stdout.write("{\"zzz\":" + d[:-1] + "]}")' \
  "$tmp/objects.json" >"$tmp/input.json"
peak "project --input" "$size" 2 "$MF_BIN/mf-compile" project --input "$tmp/input.json"
grep -q 'input.json:1:2: error MF-P004: unknown field "zzz"' "$tmp/err" ||
  fail "project --input: $(cat "$tmp/err")"

# --- a model reply: the reply body carries the document beside a valid task output, and a tool
# call carries it in its arguments
captures=$tmp/captures
mkdir -p "$captures"
python3 - "$tmp/objects.json" "$captures" <<'PY'
import json, sys
doc = open(sys.argv[1]).read()
out = sys.argv[2]
def capture(name, message, finish, pad=""):
    body = ('{"id":"chatcmpl-1","object":"chat.completion","model":"local","choices":[{"index":0,'
            '"message":' + message + ',"finish_reason":"' + finish + '"}],'
            '"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}' + pad + '}')
    open(f"{out}/{name}.body", "w").write(body)
    json.dump({"description": "a 15 MB reply of empty objects",
               "responses": [{"body_file": f"{name}.body"}]}, open(f"{out}/{name}.json", "w"))
answer = json.dumps({"risk": "r", "evidence": "src/lib.rs:12"})
capture("reply-pad", json.dumps({"role": "assistant", "content": answer}), "stop", ',"pad":' + doc)
args = '{"path":"src/lib.rs","pad":' + doc + '}'
call = {"id": "call_1", "type": "function", "function": {"name": "read", "arguments": args}}
capture("call-args", json.dumps({"role": "assistant", "content": None, "tool_calls": [call]}),
        "tool_calls")
PY
wire_start "$captures"
base=$tmp/base.json
jq '.timeouts_ms = {connect: 2000, first_byte: 20000, idle: 20000, total: 60000}
    | .retry = {max_attempts: 1, initial_backoff_ms: 20, max_backoff_ms: 100}' \
  "$fx/profiles/local.json" >"$base"

wire_profile reply-pad "$base" "$tmp/reply-pad.profile.json"
peak "mf-run reply" "$size" 0 "$MF_BIN/mf-run" --task "$fx/forge/task-valid.json" \
  --model "openai:$tmp/reply-pad.profile.json" --trace "$tmp/t1.jsonl"
[[ $(jq -r .risk "$tmp/out") == r ]] || fail "mf-run reply: $(cat "$tmp/out")"

run 0 "$MF_BIN/mf-compile" "$fx/harness/read-submit.yaml" -o -
cp "$tmp/out" "$tmp/rs.plan.json"
wire_profile call-args "$base" "$tmp/call-args.profile.json"
# The read tool refuses the unknown member "pad", twice (the reply is served again), and the run
# ends over its tool-error budget.
peak "mf-run tool call" "$size" 1 "$MF_BIN/mf-run" --plan "$tmp/rs.plan.json" \
  --model "openai:$tmp/call-args.profile.json" --workspace "$fx/repository" --trace "$tmp/t2.jsonl"
grep -q '"event":"tool_denied"' "$tmp/t2.jsonl" || fail "mf-run tool call: the call was not judged"

# --- strict replay of that run recorded inline: the recorded and replayed traces are held as bytes
# and their events parsed one at a time, so the replay stays under the same ratio of the trace.
run 1 "$MF_BIN/mf-run" --plan "$tmp/rs.plan.json" --model "openai:$tmp/call-args.profile.json" \
  --workspace "$fx/repository" --trace-content inline --trace "$tmp/t3.jsonl"
peak "mf-replay --strict" "$(stat -c %s "$tmp/t3.jsonl")" 0 "$MF_BIN/mf-replay" --strict \
  --plan "$tmp/rs.plan.json" --workspace "$fx/repository" "$tmp/t3.jsonl"
[[ $(jq -r .status "$tmp/out") == identical ]] || fail "mf-replay --strict: $(cat "$tmp/out")"
