#!/usr/bin/env bash
# mf-run task mode end to end: results on stdout, traces, exit codes, rejections and cancellation.
set -euo pipefail
bin=${MF_BIN:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
f=fixtures/forge
events() { jq -r .event "$1" | paste -sd, -; }

# Valid first response: the result on stdout works with jq, four events.
risk=$("$bin/mf-run" --task $f/task-valid.json --model scripted:$f/responses-valid.json \
        --trace "$tmp/valid.jsonl" | jq -r .risk)
[ "$risk" = "A user-controlled value reaches panic!." ] || fail "risk: $risk"
[ "$(events "$tmp/valid.jsonl")" = "run_started,model_requested,model_responded,run_completed" ] ||
  fail "valid events: $(events "$tmp/valid.jsonl")"

# One targeted repair adds verification_failed, model_requested, model_responded.
"$bin/mf-run" --task $f/task-valid.json --model scripted:$f/responses-repair.json \
  --trace "$tmp/repair.jsonl" >/dev/null
[ "$(events "$tmp/repair.jsonl")" = "run_started,model_requested,model_responded,verification_failed,model_requested,model_responded,run_completed" ] ||
  fail "repair events"
jq -se 'map(select(.event=="model_requested" and .call==2))[0].violations[0].path == "$.evidence"' \
  "$tmp/repair.jsonl" >/dev/null || fail "repair request lacks the exact violation"

# Failed outcomes exit 1 with nothing on stdout and a terminal event in the trace.
for case in "task-no-repair.json responses-invalid.json invalid_output" \
            "task-valid.json responses-provider-failure.json model_failed"; do
  set -- $case
  rc=0
  out=$("$bin/mf-run" --task $f/$1 --model scripted:$f/$2 --trace "$tmp/t.jsonl" 2>"$tmp/err") || rc=$?
  [ $rc -eq 1 ] || fail "$3: exit $rc"
  [ -z "$out" ] || fail "$3: stdout not empty"
  [ "$(tail -n1 "$tmp/t.jsonl" | jq -r .terminal)" = "$3" ] || fail "$3: terminal"
  grep -q "$3" "$tmp/err" || fail "$3: stderr does not name the terminal state"
done

# An invalid task is a rejected request: exit 2, a diagnostic with its pointer, no trace file.
for bad in $f/invalid/*.json; do
  rc=0
  "$bin/mf-run" --task "$bad" --model scripted:$f/responses-valid.json \
    --trace "$tmp/never.jsonl" >"$tmp/out" 2>"$tmp/err" || rc=$?
  [ $rc -eq 2 ] || fail "$bad: exit $rc"
  [ ! -e "$tmp/never.jsonl" ] || fail "$bad: a trace was written"
  [ ! -s "$tmp/out" ] || fail "$bad: stdout not empty"
  grep -q 'MF-S0' "$tmp/err" || fail "$bad: no diagnostic code"
done
rc=0; "$bin/mf-run" --task $f/task-valid.json --model scripted:/nonexistent.json \
  --trace "$tmp/never.jsonl" 2>/dev/null || rc=$?
[ $rc -eq 2 ] && [ ! -e "$tmp/never.jsonl" ] || fail "missing script: exit $rc"
# An invalid responses file is named in its diagnostics, not the task file.
printf '{"steps":[{"bogus":1}]}\n' >"$tmp/bad-responses.json"
rc=0; "$bin/mf-run" --task $f/task-valid.json --model "scripted:$tmp/bad-responses.json" \
  --trace "$tmp/never.jsonl" 2>"$tmp/err" || rc=$?
[ $rc -eq 2 ] || fail "invalid script: exit $rc"
grep -q "^mf-run: $tmp/bad-responses.json: error MF-S02" "$tmp/err" ||
  fail "the responses file's error does not name it: $(cat "$tmp/err")"
! grep -q "task-valid.json" "$tmp/err" || fail "the responses file's error names the task"
rc=0; "$bin/mf-run" --task $f/task-valid.json --model openai:x.json --trace "$tmp/never.jsonl" \
  2>/dev/null || rc=$?
[ $rc -eq 2 ] || fail "unsupported model: exit $rc"

# Deterministic mode: identical bytes from two runs; the trace on stdout feeds a pipe.
for i in 1 2; do
  "$bin/mf-run" --task $f/task-valid.json --model scripted:$f/responses-repair.json \
    --run-id run-fixed --fixed-clock --trace - --output "$tmp/result$i.json" >"$tmp/trace$i.jsonl"
done
cmp -s "$tmp/trace1.jsonl" "$tmp/trace2.jsonl" || fail "fixed-clock traces differ"
jq -se 'all(.t_ms == 0 and .run_id == "run-fixed")' "$tmp/trace1.jsonl" >/dev/null || fail "fixed clock"
jq -e '.evidence == "src/lib.rs:12"' "$tmp/result1.json" >/dev/null || fail "--output result"
rc=0; "$bin/mf-run" --task $f/task-valid.json --model scripted:$f/responses-valid.json \
  --trace - --output - 2>/dev/null >/dev/null || rc=$?
[ $rc -eq 2 ] || fail "--trace - with --output - must be a usage error"
# --trace - alone: stdout is the trace, which holds the result.
"$bin/mf-run" --task $f/task-valid.json --model scripted:$f/responses-repair.json --fixed-clock \
  --run-id run-fixed --trace - >"$tmp/piped.jsonl" || fail "--trace - without --output"
cmp -s "$tmp/piped.jsonl" "$tmp/trace1.jsonl" || fail "--trace - printed more or less than the trace"

# --trace-content inline keeps the raw response; the default keeps only size and digest.
"$bin/mf-run" --task $f/task-valid.json --model scripted:$f/responses-valid.json \
  --trace-content inline --trace "$tmp/inline.jsonl" >/dev/null
jq -se 'map(select(.event=="model_responded"))[0].content | contains("src/lib.rs:12")' \
  "$tmp/inline.jsonl" >/dev/null || fail "inline content"
if jq -se 'map(select(.event=="model_responded"))[0] | has("content")' "$tmp/valid.jsonl" >/dev/null; then
  fail "default trace holds raw content"
fi

# --check-evidence resolves the cited lines beneath input.repository and repairs a bad range.
"$bin/mf-run" --task $f/task-valid.json --model scripted:$f/responses-bad-evidence.json \
  --check-evidence --trace "$tmp/evidence.jsonl" >/dev/null
jq -se 'map(select(.event=="verification_failed"))[0].violations[0] | .code == "bad_range" and .layer == "semantic"' \
  "$tmp/evidence.jsonl" >/dev/null || fail "semantic evidence violation"
rc=0; "$bin/mf-run" --task $f/task-no-repair.json --model scripted:$f/responses-bad-evidence.json \
  --check-evidence --trace "$tmp/evidence2.jsonl" >/dev/null 2>&1 || rc=$?
[ $rc -eq 1 ] || fail "bad evidence without repair: exit $rc"

# SIGTERM or SIGINT mid-call: the run ends cancelled and the trace still ends with its terminal event.
cat >"$tmp/slow.json" <<'JSON'
{"steps": [{"content": "{}", "delay_ms": 20000}]}
JSON
for sig in TERM INT; do
  rm -f "$tmp/cancel.jsonl"
  "$bin/mf-run" --task $f/task-valid.json --model scripted:"$tmp/slow.json" \
    --trace "$tmp/cancel.jsonl" >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 100); do
    grep -q model_requested "$tmp/cancel.jsonl" 2>/dev/null && break
    sleep 0.05
  done
  kill -$sig $pid
  rc=0; wait $pid || rc=$?
  [ $rc -eq 1 ] || fail "SIG$sig: cancelled run exit $rc"
  [ "$(tail -n1 "$tmp/cancel.jsonl" | jq -r .terminal)" = "cancelled" ] || fail "SIG$sig terminal"
done
echo "run: ok"
