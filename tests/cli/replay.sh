#!/usr/bin/env bash
# mf-replay: trace verification and the summary (docs/formats/trace.md) — exit codes, the
# summary on stdout (also for broken traces), the first offending line on stderr, stdin as '-'.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"

replay="$MF_BIN/mf-replay"
command -v jq >/dev/null || { echo "jq is required" >&2; exit 1; }

# field JQ-FILTER EXPECTED : checks one value of the summary in $tmp/out.
field() {
  local got
  got=$(jq -c "$1" "$tmp/out")
  [[ $got == "$2" ]] || fail "summary $1 is $got, expected $2 ($(cat "$tmp/out"))"
}

sha() { sha256sum "$1" | cut -d' ' -f1; }

# --- fixture traces -------------------------------------------------------------------------------
R='"run_id":"r1"'
B='"budget":{"max_model_calls":1,"max_repairs":0},"durability":"event","model":"scripted:r.json"'
start='{'$B',"event":"run_started","mode":"task",'$R',"seq":0,"t_ms":0,"task_id":"t","trace_content":"digest","v":2}'
req1='{"call":1,"event":"model_requested","kind":"initial",'$R',"seq":1,"t_ms":0,"v":2}'
resp1='{"call":1,"content_bytes":2,"event":"model_responded",'$R',"seq":2,"t_ms":0,"v":2}'
done3='{"event":"run_completed","model_calls":1,"output":{},"repairs":0,'$R',"seq":3,"t_ms":0,"terminal":"completed","v":2}'
after4='{"event":"context_compacted",'$R',"seq":4,"t_ms":0,"v":2}'
printf '%s\n' "$start" "$req1" "$resp1" "$done3" | link >"$tmp/valid.jsonl"
printf '%s\n' "$start" "$req1" "$resp1" "$done3" "$after4" | link >"$tmp/after.jsonl"
{ head -2 "$tmp/valid.jsonl"; sed -n 3p "$tmp/valid.jsonl" | head -c 30; } >"$tmp/truncated.jsonl"
head -3 "$tmp/valid.jsonl" >"$tmp/noterminal.jsonl"
printf '%s\n' "$start" "$req1" "$done3" | link >"$tmp/gap.jsonl"
{ head -1 "$tmp/valid.jsonl"; echo "not json"; } >"$tmp/malformed.jsonl"
: >"$tmp/empty.jsonl"

# --- a valid trace ----------------------------------------------------------------------------------
run 0 "$replay" "$tmp/valid.jsonl"
[[ $(wc -l <"$tmp/out") -eq 1 ]] || fail "summary is not one line"
field .status '"ok"'
field .run_id '"r1"'
field .terminal '"completed"'
field .events 4
field .model_calls 1
field .repairs 0
field .tool_calls 0
field .violations_by_kind '{}'
field .first_error null
field .trace_sha256 "\"$(sha "$tmp/valid.jsonl")\""
[[ ! -s $tmp/err ]] || fail "a valid trace wrote to stderr"
# The summary is canonical JSON.
[[ $(jq -cS . "$tmp/out") == "$(cat "$tmp/out")" ]] || fail "summary is not sorted compact JSON"
cp "$tmp/out" "$tmp/valid.summary"

# Stdin, named '-' or omitted, gives the same summary.
stdin="$tmp/valid.jsonl" run 0 "$replay" -
cmp -s "$tmp/out" "$tmp/valid.summary" || fail "'-' summary differs"
stdin="$tmp/valid.jsonl" run 0 "$replay"
cmp -s "$tmp/out" "$tmp/valid.summary" || fail "stdin summary differs"
# Through a pipe, as after `mf-run ... --trace -`.
cat "$tmp/valid.jsonl" | "$replay" - >"$tmp/out" || fail "pipe into mf-replay - failed"
cmp -s "$tmp/out" "$tmp/valid.summary" || fail "piped summary differs"

# --- corrupt traces: exit 1, summary on stdout, first offending line on stderr --------------------
run 1 "$replay" "$tmp/after.jsonl"
field .status '"corrupt"'
field .first_error.code '"MF-E009"'
field .first_error.line 5
field .terminal '"completed"'
field .events 4
field .trace_sha256 "\"$(sha "$tmp/after.jsonl")\""
grep -q "after.jsonl:5: error MF-E009" "$tmp/err" || fail "stderr does not name line 5: $(cat "$tmp/err")"

run 1 "$replay" "$tmp/gap.jsonl"
field .status '"corrupt"'
field '.first_error | [.code, .line]' '["MF-E006",3]'

stdin="$tmp/malformed.jsonl" run 1 "$replay" -
field '.first_error | [.code, .line]' '["MF-E001",2]'
grep -q "<stdin>:2:" "$tmp/err" || fail "stdin diagnostic does not name <stdin>:2"

# --- incomplete traces: exit 1, reported as incomplete, not corrupt -------------------------------
run 1 "$replay" "$tmp/truncated.jsonl"
field .status '"incomplete"'
field '.first_error | [.code, .line]' '["MF-E013",3]'
field .events 2
field .terminal null

run 1 "$replay" "$tmp/noterminal.jsonl"
field .status '"incomplete"'
field '.first_error | [.code, .line]' '["MF-E014",4]'
field .events 3

run 1 "$replay" "$tmp/empty.jsonl"
field .status '"incomplete"'
field .run_id null

# --- the committed fixtures -------------------------------------------------------------------------
run 0 "$replay" fixtures/traces/valid.jsonl
field '[.status, .model_calls, .repairs, .violations_by_kind]' '["ok",2,1,{"missing_required_field":1}]'
run 1 "$replay" fixtures/traces/event-after-terminal.jsonl
field '[.status, .first_error.code]' '["corrupt","MF-E009"]'
run 1 "$replay" fixtures/traces/truncated.jsonl
field '[.status, .first_error.code]' '["incomplete","MF-E013"]'

# --- tampering: the chain, the anchor and the MAC ----------------------------------------------------
# An edit that leaves the line valid on its own breaks the chain at the next line.
sed '3s/"content_bytes":2/"content_bytes":3/' "$tmp/valid.jsonl" >"$tmp/edited.jsonl"
run 1 "$replay" "$tmp/edited.jsonl"
field '[.status, .first_error.code, .first_error.line]' '["corrupt","MF-E016",4]'
# Rewritten and re-chained, it passes every rule of its own: only an anchor or the MAC tells.
jq -c 'del(.prev)' "$tmp/edited.jsonl" | link >"$tmp/rechained.jsonl"
run 0 "$replay" "$tmp/rechained.jsonl"
digest=$(sha "$tmp/valid.jsonl")
run 0 "$replay" --expect-sha256 "$digest" "$tmp/valid.jsonl"
run 1 "$replay" --expect-sha256 "$digest" "$tmp/rechained.jsonl"
field '[.status, .first_error.code]' '["corrupt","MF-E018"]'
run 2 "$replay" --expect-sha256 "${digest^^}" "$tmp/valid.jsonl"
grep -q "64 lowercase hex" "$tmp/err" || fail "a bad --expect-sha256 is not explained"

# A keyed run signs its terminal event; the key never appears anywhere.
key='trace-key-0123456789abcdef-CANARY'
MF_TRACE_KEY=$key "$MF_BIN/mf-run" --task fixtures/forge/task-valid.json \
  --model scripted:fixtures/forge/responses-repair.json --fixed-clock --run-id keyed \
  --mac-key-env MF_TRACE_KEY --trace "$tmp/keyed.jsonl" >"$tmp/result.json" 2>"$tmp/err" ||
  fail "keyed mf-run failed: $(cat "$tmp/err")"
! grep -q CANARY "$tmp/keyed.jsonl" "$tmp/result.json" "$tmp/err" || fail "the key leaked"
MF_TRACE_KEY=$key run 0 "$replay" --mac-key-env MF_TRACE_KEY "$tmp/keyed.jsonl"
field .mac '"verified"'
run 0 "$replay" "$tmp/keyed.jsonl"
field .mac '"unchecked"'
MF_OTHER_KEY=${key/CANARY/OTHER} run 1 "$replay" --mac-key-env MF_OTHER_KEY "$tmp/keyed.jsonl"
field '[.status, .first_error.code]' '["corrupt","MF-E017"]'
! grep -q OTHER "$tmp/out" "$tmp/err" || fail "the key leaked"
# Its output forged and re-chained by someone without the key.
jq -c 'del(.prev) | if .event == "run_completed" then .output.risk = "none" else . end' \
  "$tmp/keyed.jsonl" | link >"$tmp/forged.jsonl"
MF_TRACE_KEY=$key run 1 "$replay" --mac-key-env MF_TRACE_KEY "$tmp/forged.jsonl"
field '[.status, .first_error.code]' '["corrupt","MF-E017"]'
# An unsigned trace offered as signed; a missing or short key is a usage error.
MF_TRACE_KEY=$key run 1 "$replay" --mac-key-env MF_TRACE_KEY "$tmp/valid.jsonl"
field '.first_error.code' '"MF-E017"'
run 2 "$replay" --mac-key-env MF_UNSET_KEY_NAME "$tmp/valid.jsonl"
MF_SHORT=QzX9wK run 2 "$replay" --mac-key-env MF_SHORT "$tmp/valid.jsonl"
! grep -q QzX9wK "$tmp/err" || fail "the short key was echoed"

# --- rejected requests and unbuilt modes: exit 2, nothing on stdout --------------------------------
run 2 "$replay" "$tmp/nope.jsonl"
grep -q MF-S013 "$tmp/err" || fail "missing trace is not MF-S013"
[[ ! -s $tmp/out ]] || fail "missing trace printed a summary"
# A directory, or several operands, are many traces (replay_many.sh).
run 2 "$replay" --fork-at 2 --responses r.json "$tmp/valid.jsonl"
grep -q "usage error" "$tmp/err" || fail "an option that does not exist is not a usage error"
[[ ! -s $tmp/out ]] || fail "--fork-at printed something"

# --- I/O errors: exit 3 -------------------------------------------------------------------------------
if [[ -w /dev/full ]]; then
  rc=0
  "$replay" "$tmp/valid.jsonl" >/dev/full 2>"$tmp/err" || rc=$?
  [[ $rc -eq 3 ]] || fail "summary to /dev/full exited $rc, expected 3"
fi

# --- help ------------------------------------------------------------------------------------------
run 0 "$replay" --help
grep -q -- "--trace - | mf-replay -" "$tmp/out" || fail "--help lacks the pipe example"

echo "replay: ok"
