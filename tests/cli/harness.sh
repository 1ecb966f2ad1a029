#!/usr/bin/env bash
# Harness mode end to end through the real binaries (docs/harness-run.md, docs/replay.md): compile
# the golden harness, run it with real tools, replay it, re-run it strictly, fork it, cancel it,
# kill it, and attack the inputs.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/golden_plan.bash"

golden_plan
rep="$MF_BIN/mf-replay"
runs=$h/runs
common=(--workspace "$ws" --artifacts "$tmp/art" --fixed-clock --trace-content inline)

# --- a clean run: tools really executed, artifacts with their digests ---------------------------
run 0 "$mfr" --plan "$plan" --model scripted:$runs/golden-ok.json "${common[@]}" --run-id r-ok \
  --trace "$tmp/ok.jsonl"
cp "$tmp/out" "$tmp/ok.result"
[[ $(jq -r .terminal "$tmp/ok.result") == completed ]] || fail "golden-ok did not complete"
[[ $(jq -r .result.disposition "$tmp/ok.result") == success ]] || fail "disposition not success"
[[ $(jq -r .tool_calls "$tmp/ok.result") == 3 ]] || fail "expected 3 tool calls"
for id in draft report; do
  want=$(jq -r --arg id $id '.result.artifacts[] | select(.artifact_id == $id) | .sha256' \
    "$tmp/ok.result")
  [[ -f $tmp/art/$id ]] || fail "artifact $id was not written"
  [[ $(sha256sum <"$tmp/art/$id" | cut -d' ' -f1) == "$want" ]] || fail "artifact $id digest differs"
done
run 0 "$rep" "$tmp/ok.jsonl"
[[ $(jq -r .status "$tmp/out") == ok ]] || fail "replay status not ok"
[[ $(jq -r .tool_calls "$tmp/out") == 3 ]] || fail "replay counts tool calls wrong"

# The same inputs give the same bytes (fixed clock and run id).
rm -rf "$tmp/art2" && mkdir "$tmp/art2"
run 0 "$mfr" --plan "$plan" --model scripted:$runs/golden-ok.json --workspace "$ws" \
  --artifacts "$tmp/art2" --fixed-clock --trace-content inline --run-id r-ok --trace "$tmp/ok2.jsonl"
cmp -s "$tmp/ok.jsonl" "$tmp/ok2.jsonl" || fail "the same run gave different trace bytes"

# A plan from stdin and the trace on stdout.
stdin=$plan run 0 "$mfr" --plan - --model scripted:$runs/golden-ok.json "${common[@]}" \
  --trace - --output "$tmp/stdin.result"
cp "$tmp/out" "$tmp/stdin.jsonl"
stdin=$tmp/stdin.jsonl run 0 "$rep" -
[[ $(jq -r .terminal "$tmp/stdin.result") == completed ]] || fail "plan from stdin did not complete"

# --- recovery: every correction answered, run completes; summary counts them -------------------
run 0 "$mfr" --plan "$plan" --model scripted:$runs/golden-recover.json "${common[@]}" \
  --run-id r-rec --trace "$tmp/rec.jsonl"
run 0 "$rep" "$tmp/rec.jsonl"
for kind in premature_terminal prerequisite unknown_tool rescue; do
  [[ $(jq -r --arg k $kind '.violations_by_kind[$k] // 0' "$tmp/out") -ge 1 ]] ||
    fail "replay summary lacks $kind: $(cat "$tmp/out")"
done

# --- strict replay: identical, then a changed workspace diverges -------------------------------
run 0 "$rep" --strict --plan "$plan" --workspace "$ws" "$tmp/rec.jsonl"
[[ $(jq -r .status "$tmp/out") == identical ]] || fail "strict replay not identical"
# The plan on stdin is read once.
stdin=$plan run 0 "$rep" --strict --plan - --workspace "$ws" "$tmp/rec.jsonl"
# A run whose tool reads the workspace: replayed over other bytes, the read's result differs.
run 0 "$mfc" $h/read-submit.yaml -o -
cp "$tmp/out" "$tmp/rs.plan"
run 0 "$mfr" --plan "$tmp/rs.plan" --model scripted:$runs/read-submit.json --workspace "$ws" \
  --fixed-clock --trace-content inline --trace "$tmp/rs.jsonl"
run 0 "$rep" --strict --plan "$tmp/rs.plan" --workspace "$ws" "$tmp/rs.jsonl"
ws2=$tmp/ws2
mkdir -p "$ws2/src"
echo "fn other() {}" >"$ws2/src/lib.rs"
run 1 "$rep" --strict --plan "$tmp/rs.plan" --workspace "$ws2" "$tmp/rs.jsonl"
[[ $(jq -r .status "$tmp/out") == diverged ]] || fail "strict replay did not diverge"
[[ $(jq -r .first_difference.actual "$tmp/out") == tool_completed ]] ||
  fail "divergence not at the read: $(cat "$tmp/out")"
grep -q "diverges at seq" "$tmp/err" || fail "divergence not named on stderr"
# A digest-only trace cannot be replayed strictly; a plan that is not the recorded one is refused.
run 0 "$mfr" --plan "$plan" --model scripted:$runs/golden-ok.json --workspace "$ws" \
  --artifacts "$tmp/art" --trace "$tmp/digest.jsonl"
run 2 "$rep" --strict --plan "$plan" --workspace "$ws" "$tmp/digest.jsonl"
grep -q "trace-content inline" "$tmp/err" || fail "digest-only trace: unclear refusal"
run 0 "$mfc" $h/simple-success.yaml --catalog $h/catalog.json --profiles $h/profiles.json -o -
cp "$tmp/out" "$tmp/other.plan"
run 2 "$rep" --strict --plan "$tmp/other.plan" --workspace "$ws" "$tmp/ok.jsonl"
grep -q "recorded from plan" "$tmp/err" || fail "wrong plan: unclear refusal"
# Strict replay of an edited trace is refused before anything runs.
sed '3s/"call":1/"call":2/' "$tmp/ok.jsonl" >"$tmp/edited.jsonl"
run 2 "$rep" --strict --plan "$plan" --workspace "$ws" "$tmp/edited.jsonl"

# --- fork: a new run from event 9 on, the original untouched -----------------------------------
before=$(sha256sum <"$tmp/rec.jsonl")
cat >"$tmp/alt.json" <<'EOF'
{"steps": [
  {"tool_calls": [{"name": "write_failure_report", "arguments": {"reason": "no access"}}]},
  {"tool_calls": [{"name": "finish_blocked", "arguments": {"summary": "blocked"}}]}
]}
EOF
seq_at=$(jq -s 'map(select(.event == "model_requested"))[4].seq' "$tmp/rec.jsonl")
run 1 "$rep" --fork-at "$seq_at" --responses "$tmp/alt.json" --plan "$plan" --workspace "$ws" \
  --artifacts "$tmp/art" --fixed-clock --run-id r-fork "$tmp/rec.jsonl" --trace "$tmp/fork.jsonl"
[[ $(jq -r .result.disposition "$tmp/out") == blocked ]] || fail "fork did not end blocked: $(cat "$tmp/out")"
[[ $(sha256sum <"$tmp/rec.jsonl") == "$before" ]] || fail "the fork changed the original trace"
head -1 "$tmp/fork.jsonl" | jq -e --arg s "$seq_at" \
  '.parent_run_id == "r-rec" and .fork_seq == ($s | tonumber) and .run_id == "r-fork"' >/dev/null ||
  fail "fork's run_started lacks parent_run_id/fork_seq"
run 0 "$rep" "$tmp/fork.jsonl"
run 2 "$rep" --fork-at "$seq_at" --responses "$tmp/alt.json" --plan "$plan" "$tmp/rec.jsonl" \
  --trace "$tmp/rec.jsonl"
[[ $(sha256sum <"$tmp/rec.jsonl") == "$before" ]] || fail "a fork onto the original changed it"
run 2 "$rep" --fork-at 100000 --responses "$tmp/alt.json" --plan "$plan" "$tmp/rec.jsonl" \
  --trace "$tmp/f2.jsonl"

# --- cancellation and SIGKILL -------------------------------------------------------------------
cat >"$tmp/slow.json" <<'EOF'
{"steps": [{"tool_calls": [{"name": "collect_context", "arguments": {"path": "src/lib.rs"}}],
            "delay_ms": 20000}]}
EOF
"$mfr" --plan "$plan" --model scripted:"$tmp/slow.json" "${common[@]}" --trace "$tmp/cancel.jsonl" \
  >"$tmp/cancel.out" 2>/dev/null &
pid=$!
for _ in $(seq 100); do [[ -s $tmp/cancel.jsonl ]] && break; sleep 0.05; done
kill -TERM $pid
rc=0
wait $pid || rc=$?
[[ $rc -eq 1 ]] || fail "a cancelled plan run exited $rc"
[[ $(jq -r .terminal "$tmp/cancel.out") == cancelled ]] || fail "cancelled run: wrong result"
run 0 "$rep" "$tmp/cancel.jsonl"
[[ $(jq -r .terminal "$tmp/out") == cancelled ]] || fail "cancelled trace lacks its terminal"

# A deadline ends a run timed_out, even while the model is still answering.
run 1 "$mfr" --plan "$plan" --model scripted:"$tmp/slow.json" "${common[@]}" --deadline-ms 200 \
  --trace "$tmp/deadline.jsonl"
[[ $(jq -r .terminal "$tmp/out") == timed_out ]] || fail "deadline: $(cat "$tmp/out")"
run 0 "$rep" "$tmp/deadline.jsonl"

"$mfr" --plan "$plan" --model scripted:"$tmp/slow.json" "${common[@]}" --trace "$tmp/killed.jsonl" \
  >/dev/null 2>&1 &
pid=$!
for _ in $(seq 100); do [[ -s $tmp/killed.jsonl ]] && break; sleep 0.05; done
kill -KILL $pid
wait $pid || true
run 1 "$rep" "$tmp/killed.jsonl"
[[ $(jq -r .status "$tmp/out") == incomplete ]] || fail "a killed run's trace is not incomplete"

# --- rejected before the trace exists ------------------------------------------------------------
# A tampered plan (one byte of a description) is refused by the loader.
sed 's/Declare the stage blocked./Declare the stage blocked!/' "$plan" >"$tmp/tampered.json"
run 2 "$mfr" --plan "$tmp/tampered.json" --model scripted:$runs/golden-ok.json "${common[@]}" \
  --trace "$tmp/t.jsonl"
grep -q "MF-L004" "$tmp/err" || fail "tampered plan: expected MF-L004"
[[ ! -e $tmp/t.jsonl ]] || fail "a rejected run wrote a trace"
run 2 "$mfr" --plan "$plan" --model scripted:$runs/golden-ok.json --workspace "$tmp/nope" \
  --trace "$tmp/t.jsonl"
run 2 "$mfr" --plan "$plan" --model scripted:$runs/golden-ok.json "${common[@]}" \
  --request '{"instruction": 3}' --trace "$tmp/t.jsonl"
run 2 "$mfr" --plan "$plan" --task fixtures/forge/task-valid.json --model scripted:x --trace x
run 2 "$mfr" --plan "$plan" --model scripted:$runs/golden-ok.json --guardrails most --trace x
[[ ! -e $tmp/t.jsonl ]] || fail "a rejected run wrote a trace"

# --- a request's context reaches the model and the trace; a secret in it does not -------------
canary=sk-proj-4f9Xa8Qm2LwZ7bT1cV0dE3Kp
run 0 "$mfr" --plan "$plan" --model scripted:$runs/golden-ok.json "${common[@]}" \
  --request "{\"instruction\": \"Review it.\", \"context\": {\"token\": \"$canary\"}}" \
  --trace "$tmp/req.jsonl"
head -1 "$tmp/req.jsonl" | jq -e '.request.instruction == "Review it."' >/dev/null ||
  fail "run_started does not record the request"
! grep -q "$canary" "$tmp/req.jsonl" "$tmp/out" || fail "a secret in the request reached the trace"

# --- rescue plumbing ---------------------------------------------------------------------------
printf '%s\n' '"{\"name\": \"read\", \"arguments\": {\"path\": \"a\"}}"' '"plain text"' \
  >"$tmp/texts"
stdin=$tmp/texts run 0 "$mfr" rescue --tools read,ls
[[ $(sed -n 1p "$tmp/out" | jq -r '.calls[0].name') == read ]] || fail "rescue missed a call"
[[ $(sed -n 2p "$tmp/out") == null ]] || fail "rescue invented a call"
printf '%s\n' '"ok"' 'not json' >"$tmp/texts"
stdin=$tmp/texts run 2 "$mfr" rescue --tools read
[[ $(wc -l <"$tmp/out") -eq 1 ]] || fail "rescue wrote past a bad line"

# --- help no longer says "not built" for the built modes --------------------------------------
for b in "$mfr" "$rep"; do
  run 0 "$b" --help
  ! grep -qi "not built" "$tmp/out" || fail "$b --help still says not built"
done
echo "harness: ok"
