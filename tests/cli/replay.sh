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
start='{"event":"run_started","mode":"task",'$R',"seq":0,"t_ms":0,"task_id":"t","v":1}'
req1='{"call":1,"event":"model_requested","kind":"initial",'$R',"seq":1,"t_ms":0,"v":1}'
resp1='{"call":1,"content_bytes":2,"event":"model_responded",'$R',"seq":2,"t_ms":0,"v":1}'
done3='{"event":"run_completed","model_calls":1,"repairs":0,'$R',"seq":3,"t_ms":0,"terminal":"completed","v":1}'
after4='{"event":"context_compacted",'$R',"seq":4,"t_ms":0,"v":1}'
printf '%s\n' "$start" "$req1" "$resp1" "$done3" >"$tmp/valid.jsonl"
printf '%s\n' "$start" "$req1" "$resp1" "$done3" "$after4" >"$tmp/after.jsonl"
printf '%s\n%s\n%s' "$start" "$req1" "${resp1:0:30}" >"$tmp/truncated.jsonl"
printf '%s\n' "$start" "$req1" "$resp1" >"$tmp/noterminal.jsonl"
printf '%s\n' "$start" "$req1" "$done3" >"$tmp/gap.jsonl"
printf '%s\n' "$start" "not json" >"$tmp/malformed.jsonl"
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
field '[.status, .model_calls, .repairs, .violations_by_kind]' '["ok",2,1,{"required_field":1}]'
run 1 "$replay" fixtures/traces/event-after-terminal.jsonl
field '[.status, .first_error.code]' '["corrupt","MF-E009"]'
run 1 "$replay" fixtures/traces/truncated.jsonl
field '[.status, .first_error.code]' '["incomplete","MF-E013"]'

# --- rejected requests and unbuilt modes: exit 2, nothing on stdout --------------------------------
run 2 "$replay" "$tmp/nope.jsonl"
grep -q MF-S013 "$tmp/err" || fail "missing trace is not MF-S013"
[[ ! -s $tmp/out ]] || fail "missing trace printed a summary"
run 2 "$replay" "$tmp"
grep -q MF-S014 "$tmp/err" || fail "directory is not MF-S014"
run 2 "$replay" "$tmp/valid.jsonl" "$tmp/valid.jsonl"
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
