#!/usr/bin/env bash
# mf-eval campaigns (docs/formats/eval.md, "Campaigns"): repeats as distinct samples with pass@k,
# pass^k and flaky cases; the journal, and a campaign killed with SIGKILL that resumes into the
# report an uninterrupted run writes; shards merged into that same report; --case; and every way
# a journal or a set of shards can be wrong.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/slow_shell.bash"

eval_bin="$MF_BIN/mf-eval"
fx=$MF_SOURCE_DIR/fixtures
ab=$fx/harness/ablation

# --- Repeats: each attempt its own sample ------------------------------------------------------
mkdir -p "$tmp/rep"
cp "$ab/golden.plan.json" "$tmp/rep/"
cp "$fx/harness/runs/golden-ok.json" "$tmp/rep/"
jq -n --arg ws "$fx/repository" '{suite_id: "repeats", cases: [
  {id: "sim", plan: "golden.plan.json", model: "sim:golden-ok.json?seed=3&faults=0.5",
   workspace: $ws, request: {instruction: "Report on src/lib.rs."},
   expect: {terminal: "completed"}},
  {id: "steady", plan: "golden.plan.json", model: "scripted:golden-ok.json", workspace: $ws,
   request: {instruction: "Report on src/lib.rs."}, expect: {terminal: "completed"}}]}' \
  >"$tmp/rep/suite.json"
mkdir -p "$tmp/rep/traces"
run_rep() { "$eval_bin" run --suite "$tmp/rep/suite.json" --repeat 6 --fixed-clock "$@"; }
rc=0
run_rep --output "$tmp/rep/r1.json" --traces "$tmp/rep/traces" -j 1 >/dev/null 2>&1 || rc=$?
[[ $rc -le 1 ]] || fail "repeat run exited $rc"
r=$tmp/rep/r1.json
jq -e '[.cases[] | .attempts | length] == [6, 6] and
       ([.cases[].attempts[] | .repeat] == [0,1,2,3,4,5,0,1,2,3,4,5])' "$r" >/dev/null ||
  fail "six attempts per case: $(jq -c '[.cases[] | .attempts | length]' "$r")"
# The sim's samples differ (its seed moves with the sample); the scripted one's cannot. The run
# ids differ by attempt, so the events are compared without the envelope.
events() { jq -c 'del(.prev, .run_id)' "$tmp/rep/traces/$1.jsonl" | sha256sum; }
[[ $(for n in 0 1 2 3 4 5; do events "sim.$n"; done | sort -u | wc -l) -gt 1 ]] ||
  fail "the sim's repeats are one sample"
[[ $(for n in 0 1 2 3 4 5; do events "steady.$n"; done | sort -u | wc -l) -eq 1 ]] ||
  fail "the scripted repeats differ"
# The summary follows from the attempts.
jq -e '.summary as $s | [.cases[] | [.attempts[] | .status == "passed"]] as $o |
  ($o | map(select(all)) | length) as $all | ($o | map(select(any)) | length) as $any |
  ($o | map(select(any and (all | not))) | length) as $mixed |
  $s.repeat == 6 and $s.attempts == 12 and
  $s.attempts_passed == ([$o[][] | select(.)] | length) and
  $s.passed == $all and $s.pass_hat_k == $all / 2 and $s.pass_at_k == $any / 2 and
  ($s.flaky | length) == $mixed and ($s.wilson95 | length) == 2 and
  $s.wilson95[0] <= $s.pass_rate and $s.pass_rate <= $s.wilson95[1]' "$r" >/dev/null ||
  fail "summary: $(jq -c .summary "$r")"
# Every attempt's trace, under its own name and run id, verifies.
for n in 0 5; do
  t=$tmp/rep/traces/sim.$n.jsonl
  [[ -s $t ]] || fail "no trace $t"
  run 0 "$MF_BIN/mf-replay" --expect-sha256 "$(jq -r ".cases[0].attempts[$n].trace_sha256" "$r")" "$t"
  [[ $(jq -r .run_id "$tmp/out") == "eval-sim.$n" ]] || fail "run id of attempt $n"
done
# Byte-identical for any -j, and compare reads repeated reports.
run_rep --output "$tmp/rep/r2.json" -j 2 >/dev/null 2>&1 || true
cmp -s "$r" "$tmp/rep/r2.json" || fail "repeats differ between -j 1 and -j 2"
run 0 "$eval_bin" compare --baseline "$r" --candidate "$tmp/rep/r2.json"
# A repeated report edited: one attempt's status flipped (its failures kept) is refused.
jq '.cases[1].attempts[2].status = "failed"' "$r" >"$tmp/rep/torn.json"
run 2 "$eval_bin" compare --baseline "$r" --candidate "$tmp/rep/torn.json"

# --- A matrix: cases x models x presets ------------------------------------------------------
g=$tmp/rep/golden-ok.json
matrix() {
  "$eval_bin" run --suite "$tmp/rep/suite.json" --fixed-clock \
    --model "calm=sim:$g?seed=1&faults=0" --model "noisy=sim:$g?seed=1&faults=0.6" \
    --guardrails full --guardrails bare "$@"
}
rc=0
matrix --output "$tmp/rep/m.json" -j 2 >/dev/null 2>&1 || rc=$?
[[ $rc -le 1 ]] || fail "matrix exited $rc"
m=$tmp/rep/m.json
[[ $(jq -c '[.cases[].id]' "$m") == \
   '["sim.calm.bare","sim.calm.full","sim.noisy.bare","sim.noisy.full","steady.calm.bare","steady.calm.full","steady.noisy.bare","steady.noisy.full"]' ]] ||
  fail "matrix ids: $(jq -c '[.cases[].id]' "$m")"
jq -e '(.summary.variants | keys) == ["calm.bare", "calm.full", "noisy.bare", "noisy.full"] and
       all(.summary.variants[]; .cases == 2) and
       (.cases[] | select(.id == "steady.noisy.bare") | .variant) ==
         {label: "noisy.bare", model: ("sim:'"$g"'?seed=1&faults=0.6"), guardrails: "bare"}' "$m" \
  >/dev/null || fail "matrix summary: $(jq -c .summary.variants "$m")"
# The column's model and preset really ran: a fault-free sim under full guardrails passes, and its
# traces record the preset.
jq -e '.cases[] | select(.id == "sim.calm.full") | .status == "passed"' "$m" >/dev/null ||
  fail "the calm column failed"
matrix --output - --traces "$tmp/rep/traces" --case steady >/dev/null 2>&1 || true
[[ $(head -1 "$tmp/rep/traces/steady.noisy.bare.jsonl" | jq -r .guardrails) == bare ]] ||
  fail "the preset did not reach the run"
# Byte-identical across -j, shards and merge; the columns are part of the campaign's identity.
matrix --output "$tmp/rep/m1.json" -j 1 >/dev/null 2>&1 || true
cmp -s "$m" "$tmp/rep/m1.json" || fail "the matrix differs between -j 1 and -j 2"
for i in 1 2 3; do matrix --output "$tmp/rep/ms$i.json" --shard "$i/3" >/dev/null 2>&1 || true; done
"$eval_bin" merge --output "$tmp/rep/mm.json" "$tmp/rep/ms"{1,2,3}.json >/dev/null 2>&1 || true
cmp -s "$m" "$tmp/rep/mm.json" || fail "merged matrix shards differ from one run"
run 2 "$eval_bin" run --suite "$tmp/rep/suite.json" --fixed-clock --output "$tmp/rep/m.json" --resume \
  --model "calm=sim:$g?seed=1&faults=0"
grep -q MF-V003 "$tmp/err" || fail "another matrix resumed this journal"
# Refusals: a bad label, a label twice, an unknown preset, presets for task cases, a sim for a task.
for bad in "=sim:$g" "a.b=sim:$g" "calm" "x y=sim:$g"; do
  run 2 "$eval_bin" run --suite "$tmp/rep/suite.json" --output - --model "$bad"
done
run 2 "$eval_bin" run --suite "$tmp/rep/suite.json" --output - --model "a=sim:$g" --model "a=sim:$g"
run 2 "$eval_bin" run --suite "$tmp/rep/suite.json" --output - --guardrails lax
run 2 "$eval_bin" run --suite "$fx/forge/eval-suite.json" --output - --guardrails bare
run 2 "$eval_bin" run --suite "$fx/forge/eval-suite.json" --output - --model "s=sim:$g"
run 2 "$eval_bin" run --suite "$tmp/rep/suite.json" --output - --model "x=sim:/nonexistent.json"
# A case id near the limit with a column label would make a report id no reader accepts.
jq --arg id "$(printf 'c%.0s' $(seq 1 124))" '.cases[0].id = $id' "$tmp/rep/suite.json" >"$tmp/rep/long.json"
run 2 "$eval_bin" run --suite "$tmp/rep/long.json" --output - --guardrails full
grep -q 'makes an id over 128 characters' "$tmp/err" || fail "a long id: $(cat "$tmp/err")"

# --- Evidence graders and Millforge's scoring --------------------------------------------------
draft=c10bfc6b322adf4f86ad81a8717f07f3005af87dad361676a63f273fc14d4c22  # the golden run's draft
jq -n --arg ws "$fx/repository" --arg draft "$draft" '{suite_id: "evidence", cases: [
  {id: "honest", plan: "golden.plan.json", model: "scripted:golden-ok.json", workspace: $ws,
   expect: {terminal: "completed", artifacts: {draft: $draft, report: true},
            pointers: {"/terminal_result": "BUILDER_COMPLETE", "/artifacts/0/artifact_id": "draft"},
            forbidden_tools: ["finish_blocked", "write_failure_report"]}},
  {id: "forbidden", plan: "golden.plan.json", model: "scripted:golden-ok.json", workspace: $ws,
   expect: {terminal: "completed", forbidden_tools: ["collect_context"]}},
  {id: "wrong-digest", plan: "golden.plan.json", model: "scripted:golden-ok.json", workspace: $ws,
   expect: {artifacts: {draft: ("0" * 64), failure_report: true}}},
  {id: "wrong-pointer", plan: "golden.plan.json", model: "scripted:golden-ok.json", workspace: $ws,
   expect: {pointers: {"/summary": "nothing", "/artifacts/9/sha256": "x"}}}]}' >"$tmp/rep/evidence.json"
run 1 "$eval_bin" run --suite "$tmp/rep/evidence.json" --output "$tmp/rep/ev.json" --fixed-clock
ev=$tmp/rep/ev.json
[[ $(jq -c '[.cases[] | {id, status, outcome}]' "$ev") == \
   '[{"id":"forbidden","status":"failed","outcome":"false_closure"},{"id":"honest","status":"passed","outcome":"valid_completion"},{"id":"wrong-digest","status":"failed","outcome":"false_closure"},{"id":"wrong-pointer","status":"failed","outcome":"false_closure"}]' ]] ||
  fail "evidence: $(jq -c '[.cases[] | {id, status, outcome, failures}]' "$ev")"
[[ $(jq -c '.cases[] | select(.id == "forbidden") | .failures' "$ev") == \
   '[{"actual":["collect_context"],"check":"forbidden_tools","expected":["collect_context"]}]' ]] ||
  fail "forbidden: $(jq -c '.cases[] | select(.id == "forbidden") | .failures' "$ev")"
[[ $(jq -c '[.cases[] | select(.id == "wrong-digest") | .failures[] | [.check, (.actual != null)]]' "$ev") == \
   '[["artifacts/draft",true],["artifacts/failure_report",false]]' ]] || fail "digests: $(jq -c .cases "$ev")"
[[ $(jq -c '[.cases[] | select(.id == "wrong-pointer") | .failures[] | .check]' "$ev") == \
   '["pointers/~1summary","pointers/~1artifacts~19~1sha256"]' ]] || fail "pointers: $(jq -c .cases "$ev")"
jq -e '.summary.outcomes == {false_closure: 3, valid_completion: 1} and .summary.false_closure_rate == 0.75' \
  "$ev" >/dev/null || fail "outcome summary: $(jq -c .summary "$ev")"
run 1 "$eval_bin" compare --baseline "$ev" --candidate "$ev" --max-false-closure-rate 0.5
grep -q 'false-closure rate 0.75 is above 0.5' "$tmp/err" || fail "false-closure gate: $(cat "$tmp/err")"
run 0 "$eval_bin" compare --baseline "$ev" --candidate "$ev" --max-false-closure-rate 0.8
for bad in '{"pointers": {"no-slash": 1}}' '{"artifacts": {"draft": "abc"}}' '{"forbidden_tools": [""]}' \
           '{"terminal": "model_failed", "pointers": {"/a": 1}}' '{"pointers": {}}'; do
  jq --argjson e "$bad" '.cases = [.cases[0] | .expect = $e]' "$tmp/rep/evidence.json" >"$tmp/rep/bad-ev.json"
  run 2 "$eval_bin" run --suite "$tmp/rep/bad-ev.json" --output -
  grep -q '/cases/0/expect' "$tmp/err" || fail "bad expectation $bad: $(cat "$tmp/err")"
done

# --- Journal, SIGKILL and resume ---------------------------------------------------------------
# Cases that take a moment each (a real shell call of 0.2 s), so a kill lands mid-campaign.
slow_shell_suite "$tmp/kill" 12 0.2 10 '{"terminal": "completed", "tools": ["bash", "submit"]}'
slow() { "$eval_bin" run --suite "$tmp/kill/suite.json" --fixed-clock "$@"; }
run 0 slow --output "$tmp/kill/whole.json" -j 1
[[ $(wc -l <"$tmp/kill/whole.json.journal") -eq 12 ]] || fail "the journal does not hold 12 attempts"
# Started directly (not through the function), so $! is mf-eval itself.
"$eval_bin" run --suite "$tmp/kill/suite.json" --fixed-clock --output "$tmp/kill/cut.json" -j 1 \
  >/dev/null 2>&1 &
pid=$!
disown "$pid"  # no job notice for the kill
for ((i = 0; i < 200; i++)); do
  [[ -f $tmp/kill/cut.json.journal && $(wc -l <"$tmp/kill/cut.json.journal") -ge 3 ]] && break
  sleep 0.05
done
kill -KILL "$pid" 2>/dev/null || true
while kill -0 "$pid" 2>/dev/null; do sleep 0.01; done
done_before=$(wc -l <"$tmp/kill/cut.json.journal")
[[ $done_before -ge 3 && $done_before -lt 12 ]] || fail "the kill did not land mid-campaign ($done_before)"
[[ ! -e $tmp/kill/cut.json ]] || fail "a killed campaign left a report"
# A kill mid-append leaves a torn last line: it is dropped on resume.
printf '{"v":1,"campaign":"' >>"$tmp/kill/cut.json.journal"
run 0 slow --output "$tmp/kill/cut.json" -j 2 --resume
cmp -s "$tmp/kill/whole.json" "$tmp/kill/cut.json" || fail "the resumed report differs from an uninterrupted one"
[[ $(wc -l <"$tmp/kill/cut.json.journal") -eq 12 ]] || fail "resume duplicated or lost attempts"
[[ $(jq -s '[.[].attempt] | unique | length' "$tmp/kill/cut.json.journal") -eq 12 ]] ||
  fail "an attempt was journaled twice"
# Resuming a finished campaign runs nothing (its journal is left as it was) and writes the same report.
cp "$tmp/kill/cut.json.journal" "$tmp/kill/finished.journal"
run 0 slow --output "$tmp/kill/cut.json" --resume
cmp -s "$tmp/kill/finished.journal" "$tmp/kill/cut.json.journal" || fail "a finished campaign ran again"
cmp -s "$tmp/kill/whole.json" "$tmp/kill/cut.json" || fail "a second resume changed the report"
# SIGTERM (a scheduler's requeue, a pod's end) stops the campaign without a report, which make, a
# job dependency or merge would take for the final one: exit 143, the finished attempts stay in
# the journal, and --resume finishes the campaign to the uninterrupted report.
"$eval_bin" run --suite "$tmp/kill/suite.json" --fixed-clock --output "$tmp/kill/term.json" -j 1 \
  >/dev/null 2>"$tmp/kill/term.err" &
pid=$!
for ((i = 0; i < 200; i++)); do
  [[ -f $tmp/kill/term.json.journal && $(wc -l <"$tmp/kill/term.json.journal") -ge 3 ]] && break
  sleep 0.05
done
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
[[ $rc -eq 143 ]] || fail "SIGTERM: exit $rc, expected 143: $(cat "$tmp/kill/term.err")"
[[ ! -e $tmp/kill/term.json ]] || fail "an interrupted campaign wrote a report"
grep -q '^mf-eval: interrupted: no report written; the journal keeps the finished attempts' \
  "$tmp/kill/term.err" || fail "SIGTERM: no interruption line: $(cat "$tmp/kill/term.err")"
[[ $(wc -l <"$tmp/kill/term.json.journal") -ge 3 ]] || fail "SIGTERM: the journal lost attempts"
run 0 slow --output "$tmp/kill/term.json" --resume
cmp -s "$tmp/kill/whole.json" "$tmp/kill/term.json" || fail "the resumed report differs after SIGTERM"
# The journal of another campaign (other --repeat), or one damaged before its end, is refused.
run 2 slow --output "$tmp/kill/cut.json" --resume --repeat 2
grep -q 'MF-V003' "$tmp/err" || fail "another campaign's journal was not refused: $(cat "$tmp/err")"
sed -i '2s/.*/garbage/' "$tmp/kill/cut.json.journal"
run 2 slow --output "$tmp/kill/cut.json" --resume
grep -q "cut.json.journal:2: error MF-V003" "$tmp/err" || fail "a damaged journal: $(cat "$tmp/err")"
# Without --resume the journal starts over.
run 0 slow --output "$tmp/kill/cut.json" --case slow-10
[[ $(wc -l <"$tmp/kill/cut.json.journal") -eq 1 ]] || fail "a fresh run kept the old journal"

# With --store the journal is in the store: killed and resumed the same way.
"$eval_bin" run --suite "$tmp/kill/suite.json" --fixed-clock --output "$tmp/kill/st.json" -j 1 \
  --store "$tmp/kill/store" >/dev/null 2>&1 &
pid=$!
disown "$pid"
for ((i = 0; i < 200; i++)); do
  [[ $("$MF_BIN/mf-store" --store "$tmp/kill/store" ls --refs 2>/dev/null | grep -c '/journal/' || true) -ge 3 ]] && break
  sleep 0.05
done
kill -KILL "$pid" 2>/dev/null || true
while kill -0 "$pid" 2>/dev/null; do sleep 0.01; done
kept=$("$MF_BIN/mf-store" --store "$tmp/kill/store" ls --refs | grep -c '/journal/' || true)
[[ $kept -ge 3 && $kept -lt 12 ]] || fail "the store journal kill did not land mid-campaign ($kept)"
[[ ! -e $tmp/kill/st.json.journal ]] || fail "a store campaign wrote a journal file"
run 0 slow --output "$tmp/kill/st.json" -j 2 --store "$tmp/kill/store" --resume
cmp -s "$tmp/kill/whole.json" "$tmp/kill/st.json" || fail "the store-resumed report differs"
[[ $("$MF_BIN/mf-store" --store "$tmp/kill/store" ls --refs | grep -c '/journal/') -eq 12 ]] ||
  fail "the store journal does not hold 12 attempts"
run 0 "$MF_BIN/mf-store" --store "$tmp/kill/store" verify

# --- Shards and merge --------------------------------------------------------------------------
shards=()
for i in 1 2 3 4 5; do
  run 0 slow --output "$tmp/kill/s$i.json" --shard "$i/5" -j 2
  jq -e --argjson i "$i" '(.shard | {index, count}) == {index: $i, count: 5}' "$tmp/kill/s$i.json" >/dev/null ||
    fail "shard $i does not say so"
  shards+=("$tmp/kill/s$i.json")
done
[[ $(jq -s '[.[].cases[].id] | length' "${shards[@]}") -eq 12 ]] || fail "the shards do not cover the cases once"
run 0 "$eval_bin" merge --output "$tmp/kill/merged.json" "${shards[@]}"
cmp -s "$tmp/kill/whole.json" "$tmp/kill/merged.json" || fail "merged shards differ from one run"
# Shards merge in any order; a repeat campaign's shards too.
run 0 "$eval_bin" merge --output - "${shards[4]}" "${shards[0]}" "${shards[2]}" "${shards[1]}" "${shards[3]}"
cmp -s "$tmp/kill/whole.json" "$tmp/out" || fail "merge depends on the order of its inputs"
for i in 1 2; do
  run_rep --output "$tmp/rep/s$i.json" --shard "$i/2" >/dev/null 2>&1 || true
done
run_rep --output - >"$tmp/rep/r3.json" 2>/dev/null || true
rc=0
"$eval_bin" merge --output "$tmp/rep/m.json" "$tmp/rep/s1.json" "$tmp/rep/s2.json" || rc=$?
[[ $rc -le 1 ]] || fail "merging repeat shards exited $rc"
cmp -s "$tmp/rep/r3.json" "$tmp/rep/m.json" || fail "merged repeat shards differ from one run"
# A shard missing, given twice, of another count, of another suite, or not a shard: exit 2.
run 2 "$eval_bin" merge --output - "${shards[@]:0:4}"
grep -q 'shard(s) 5 of 5 are missing' "$tmp/err" || fail "missing shard: $(cat "$tmp/err")"
run 2 "$eval_bin" merge --output - "${shards[@]}" "${shards[0]}"
run 2 "$eval_bin" merge --output - "${shards[@]:0:4}" "$tmp/rep/s2.json"
run 2 "$eval_bin" merge --output - "${shards[@]}" "$tmp/kill/whole.json"
[[ ! -s $tmp/out ]] || fail "a refused merge wrote a report"

# --- Per-case timeout: each attempt ends timed_out, its shell call stopped with it -------------
# Calls of 4.3 s each (the script's pid in the fraction tells them from another copy's): twelve of
# them on two workers would take 26 s if the timeout did not stop them; the bound is a quarter of
# that, and no such sleep is left behind.
long_sleep="sleep 4.3$$"
sed "s/sleep 0.2;/$long_sleep;/" "$tmp/kill/run.json" >"$tmp/kill/long.json"
sed 's/scripted:run.json/scripted:long.json/' "$tmp/kill/suite.json" >"$tmp/kill/long-suite.json"
start=$(date +%s%N)
run 1 "$eval_bin" run --suite "$tmp/kill/long-suite.json" --fixed-clock --output - --case-timeout-ms 50 -j 2
elapsed=$((($(date +%s%N) - start) / 1000000))
jq -e '[.cases[].terminal] | length == 12 and all(. == "timed_out")' "$tmp/out" >/dev/null ||
  fail "timeouts: $(jq -c '[.cases[].terminal]' "$tmp/out")"
(( elapsed < 26000 / 4 )) || fail "the timeout did not stop the 4.3 s calls (${elapsed} ms for 12)"
! pgrep -f "$long_sleep" >/dev/null || fail "a timed-out call left its shell running"
jq '(.cases[] | .expect) = {terminal: "timed_out"}' "$tmp/kill/suite.json" >"$tmp/kill/to.json"
run 0 "$eval_bin" run --suite "$tmp/kill/to.json" --output - --fixed-clock --case-timeout-ms 50
run 2 slow --output - --case-timeout-ms 0

# --- compare: paired statistics and gates -----------------------------------------------------
# Six of the twelve cases made to fail (kept consistent: failures, counts; the derived members
# dropped, as a report of an earlier version would lack them).
jq '(.cases[:6][]) |= (.status = "failed" | .failures = [{check: "terminal", expected: "completed",
      actual: "tool_failed"}]) | .summary = {cases: 12, passed: 6, failed: 6}' \
  "$tmp/kill/whole.json" >"$tmp/kill/worse.json"
run 1 "$eval_bin" compare --baseline "$tmp/kill/whole.json" --candidate "$tmp/kill/worse.json" \
  --max-regressions 10 --alpha 0.05
jq -e '.mcnemar_p == 0.03125 and .pass_rate_difference.estimate == -0.5 and
       .pass_rate_difference.ci95[1] < 0' "$tmp/out" >/dev/null || fail "statistics: $(cat "$tmp/out")"
grep -q 'a significant regression: 6 regressed against 0 improved, McNemar p = 0.03125 < 0.05' \
  "$tmp/err" || fail "alpha gate: $(cat "$tmp/err")"
run 0 "$eval_bin" compare --baseline "$tmp/kill/whole.json" --candidate "$tmp/kill/worse.json" \
  --max-regressions 10 --alpha 0.01
# Latency: a real (unfixed) clock, then every case three times slower, the summary recomputed
# (nearest rank: the 6th and 11th of 12 sorted values).
run 0 "$eval_bin" run --suite "$tmp/kill/suite.json" --output "$tmp/kill/timed.json" -j 2
jq -e '.summary.latency_ms.median >= 200' "$tmp/kill/timed.json" >/dev/null ||
  fail "no latency: $(jq -c .summary "$tmp/kill/timed.json")"
jq '.cases[].latency_ms *= 3 | ([.cases[].latency_ms] | sort) as $l |
    .summary.latency_ms = {median: $l[5], p90: $l[10]}' "$tmp/kill/timed.json" >"$tmp/kill/slower.json"
run 1 "$eval_bin" compare --baseline "$tmp/kill/timed.json" --candidate "$tmp/kill/slower.json" \
  --max-latency-ratio 2
jq -e '.latency_ratio == 3' "$tmp/out" >/dev/null || fail "latency ratio: $(cat "$tmp/out")"
grep -q 'median latency is 3 times the baseline' "$tmp/err" || fail "latency gate: $(cat "$tmp/err")"
run 0 "$eval_bin" compare --baseline "$tmp/kill/timed.json" --candidate "$tmp/kill/slower.json" \
  --max-latency-ratio 3.5
# A gate on what a report does not record fails: it cannot be checked.
run 1 "$eval_bin" compare --baseline "$tmp/kill/whole.json" --candidate "$tmp/kill/whole.json" \
  --max-cost-ratio 1.5
grep -q 'the cost gate cannot be checked' "$tmp/err" || fail "cost gate: $(cat "$tmp/err")"
# A doctored summary that contradicts its cases is refused.
jq '.summary.latency_ms.median = 1' "$tmp/kill/timed.json" >"$tmp/kill/lie.json"
run 2 "$eval_bin" compare --baseline "$tmp/kill/timed.json" --candidate "$tmp/kill/lie.json"
grep -q '/summary/latency_ms' "$tmp/err" || fail "a lying summary: $(cat "$tmp/err")"
for bad in 0 -1 x 1e99 ''; do
  run 2 "$eval_bin" compare --baseline "$tmp/kill/whole.json" --candidate "$tmp/kill/whole.json" \
    --alpha "$bad"
done

# --- examples/campaign: make targets per shard, then the merge and the renderings --------------
make -s -C "$MF_SOURCE_DIR/examples/campaign" -j2 campaign MF_BIN="$(cd "$MF_BIN" && pwd)" OUT="$tmp/make" \
  SUITE="$tmp/kill/suite.json" SHARDS=3 REPEAT=1 >/dev/null
cmp -s "$tmp/kill/whole.json" "$tmp/make/report.json" || fail "the make campaign differs from one run"
for f in report.md junit.xml report.html; do [[ -s $tmp/make/$f ]] || fail "make campaign: no $f"; done
# The gate: three of the twelve cases fail (pass rate 0.75). Below MIN_PASS_RATE make fails after
# the merge's summary line and the renderings; at it, the same report passes (the gate runs again
# on an up-to-date report).
jq '.cases |= (to_entries | map(if .key < 3 then .value.expect.tools = ["submit"] else . end | .value))' \
  "$tmp/kill/suite.json" >"$tmp/kill/three-fail.json"
make_low() {
  make -s -C "$MF_SOURCE_DIR/examples/campaign" -j2 campaign MF_BIN="$(cd "$MF_BIN" && pwd)" \
    OUT="$tmp/make-low" SUITE="$tmp/kill/three-fail.json" SHARDS=2 REPEAT=1 "$@"
}
run 2 make_low MIN_PASS_RATE=0.8
grep -qxF "mf-eval: 12 cases, 9 passed, 3 failed: slow-10, slow-11, slow-12 — report $tmp/make-low/report.json" \
  "$tmp/err" || fail "make campaign: no summary line: $(cat "$tmp/err")"
grep -qxF 'mf-eval: gate failed: pass rate 9/12 is below --min-pass-rate 0.8' "$tmp/err" ||
  fail "make campaign: no gate line: $(cat "$tmp/err")"
for f in report.md junit.xml report.html; do [[ -s $tmp/make-low/$f ]] || fail "make campaign: no $f"; done
run 0 make_low MIN_PASS_RATE=0.75
grep -qxF 'mf-eval: gate passed: pass rate 9/12 is at least --min-pass-rate 0.75' "$tmp/err" ||
  fail "make campaign at the rate: $(cat "$tmp/err")"

# --- --case ------------------------------------------------------------------------------------
run 0 slow --output - --case slow-11,slow-13 --case slow-20
[[ $(jq -c '[.cases[].id]' "$tmp/out") == '["slow-11","slow-13","slow-20"]' ]] || fail "--case: $(jq -c '[.cases[].id]' "$tmp/out")"
run 2 slow --output - --case slow-99
grep -q 'MF-V002' "$tmp/err" || fail "an unknown --case was not refused"

# --- Tags -------------------------------------------------------------------------------------
jq '.cases |= (to_entries | map(.value + {tags: (if .key % 3 == 0 then ["smoke", "shell"]
                                                 elif .key % 3 == 1 then ["shell"] else [] end)}))' \
  "$tmp/kill/suite.json" >"$tmp/kill/tagged.json"
run 0 "$eval_bin" run --suite "$tmp/kill/tagged.json" --output - --fixed-clock --tags smoke
[[ $(jq -c '[.cases[].id]' "$tmp/out") == '["slow-10","slow-13","slow-16","slow-19"]' ]] ||
  fail "--tags smoke: $(jq -c '[.cases[].id]' "$tmp/out")"
run 0 "$eval_bin" run --suite "$tmp/kill/tagged.json" --output - --fixed-clock --tags smoke,shell --case slow-11,slow-12
[[ $(jq -c '[.cases[].id]' "$tmp/out") == '["slow-11"]' ]] || fail "--tags with --case: $(jq -c '[.cases[].id]' "$tmp/out")"
run 2 "$eval_bin" run --suite "$tmp/kill/tagged.json" --output - --tags nightly
grep -q 'MF-V002' "$tmp/err" || fail "a tag no case has was not refused"
for bad in '["Smoke"]' '["a","a"]' '[""]' '[7]'; do
  jq --argjson t "$bad" '.cases[0].tags = $t' "$tmp/kill/suite.json" >"$tmp/kill/badtag.json"
  run 2 "$eval_bin" run --suite "$tmp/kill/badtag.json" --output -
  grep -q '/cases/0/tags' "$tmp/err" || fail "bad tags $bad: $(cat "$tmp/err")"
done

# --- Merge: shards of one campaign only ---------------------------------------------------------
# Each shard records every setting that changes what it holds; a shard whose suite or settings
# differ from the first's is refused, the setting named with both values.
base() { "$eval_bin" run --suite "$tmp/rep/suite.json" --fixed-clock --output "$@" >/dev/null 2>&1 || true; }
base "$tmp/rep/b1.json" --shard 1/2
base "$tmp/rep/b2.json" --shard 2/2
"$eval_bin" merge --output "$tmp/rep/b.json" "$tmp/rep/b1.json" "$tmp/rep/b2.json" >/dev/null 2>&1 || true
base "$tmp/rep/b0.json"
cmp -s "$tmp/rep/b0.json" "$tmp/rep/b.json" || fail "matching shards do not merge into one run's report"
mismatch() { # SETTING_TEXT RUN_OPTIONS...: the second shard run with other options is refused
  local want=$1
  shift
  "$eval_bin" run --suite "$tmp/rep/suite.json" --output "$tmp/rep/bx.json" --shard 2/2 "$@" \
    >/dev/null 2>&1 || true
  run 2 "$eval_bin" merge --output "$tmp/rep/bad-merge.json" "$tmp/rep/b1.json" "$tmp/rep/bx.json"
  grep -qF -- "$want" "$tmp/err" || fail "merge with $*: $(cat "$tmp/err")"
  grep -q 'MF-S020' "$tmp/err" || fail "merge with $*: no MF-S020"
  [[ ! -e $tmp/rep/bad-merge.json ]] || fail "a refused merge wrote a report"
}
mismatch '--case is ["steady"] here but [] in' --fixed-clock --case steady
mismatch '--repeat is 3 here but 1 in' --fixed-clock --repeat 3
mismatch '--case-timeout-ms is 60000 here but 0 in' --fixed-clock --case-timeout-ms 60000
mismatch '--run-id-prefix is "p-" here but "eval-" in' --fixed-clock --run-id-prefix p-
mismatch '--fixed-clock is false here but true in'
mismatch 'the matrix (--model, --guardrails) is [{"guardrails":"full","label":"full"}] here but [] in' \
  --fixed-clock --guardrails full
# A sim's seed is part of its model spec: in the matrix, or in what the suite's cases run.
mismatch 'the matrix (--model, --guardrails) is [{"label":"s","model":"sim:'"$g"'?seed=9"}] here' \
  --fixed-clock --model "s=sim:$g?seed=9"
MF_JOURNAL_KEY=0123456789abcdef0123 mismatch '--mac-key-env is true here but false in' \
  --fixed-clock --mac-key-env MF_JOURNAL_KEY
# The same suite bytes over other inputs (a case's script changed under it).
mkdir -p "$tmp/rep2"
cp "$tmp/rep/suite.json" "$tmp/rep/golden.plan.json" "$tmp/rep2/"
jq '.steps |= .[:1]' "$tmp/rep/golden-ok.json" >"$tmp/rep2/golden-ok.json"
"$eval_bin" run --suite "$tmp/rep2/suite.json" --fixed-clock --output "$tmp/rep/bx.json" --shard 2/2 \
  >/dev/null 2>&1 || true
run 2 "$eval_bin" merge --output - "$tmp/rep/b1.json" "$tmp/rep/bx.json"
grep -q 'inputs_sha256 (what the cases run) is "[0-9a-f]\{64\}" here but "[0-9a-f]\{64\}" in' "$tmp/err" ||
  fail "merge over other inputs: $(cat "$tmp/err")"

# --- One writer per campaign output ------------------------------------------------------------
# Slow attempts whose shell call also counts itself; a second run on the same output, started
# while the first writes its journal (a requeued job, a retried pod), is refused at once, and
# every attempt runs exactly once.
sed "s|sleep 0.2;|sleep 0.2; echo x >>$tmp/kill/ran;|" "$tmp/kill/run.json" >"$tmp/kill/count.json"
sed 's/scripted:run.json/scripted:count.json/' "$tmp/kill/suite.json" >"$tmp/kill/count-suite.json"
"$eval_bin" run --suite "$tmp/kill/count-suite.json" --fixed-clock --output "$tmp/kill/one.json" -j 1 \
  >/dev/null 2>&1 &
pid=$!
for ((i = 0; i < 200; i++)); do
  [[ -s $tmp/kill/ran ]] && break
  sleep 0.05
done
run 2 "$eval_bin" run --suite "$tmp/kill/count-suite.json" --fixed-clock --output "$tmp/kill/one.json" \
  -j 2 --resume
grep -q 'one.json.journal: error MF-V005: another process is running this campaign' "$tmp/err" ||
  fail "a second writer: $(cat "$tmp/err")"
kill -0 "$pid" 2>/dev/null || fail "the first run ended before the second started"
wait "$pid" || fail "the first run failed"
[[ $(wc -l <"$tmp/kill/ran") -eq 12 ]] || fail "attempts ran $(wc -l <"$tmp/kill/ran") times, not 12"
[[ $(wc -l <"$tmp/kill/one.json.journal") -eq 12 ]] || fail "the journal does not hold 12 attempts"
# With --store the campaign's lock is a file in the store, taken the same way.
rm -f "$tmp/kill/ran"
"$eval_bin" run --suite "$tmp/kill/count-suite.json" --fixed-clock --output "$tmp/kill/two.json" -j 1 \
  --store "$tmp/kill/lockstore" >/dev/null 2>&1 &
pid=$!
for ((i = 0; i < 200; i++)); do
  [[ -s $tmp/kill/ran ]] && break
  sleep 0.05
done
run 2 "$eval_bin" run --suite "$tmp/kill/count-suite.json" --fixed-clock --output "$tmp/kill/two.json" \
  -j 2 --resume --store "$tmp/kill/lockstore"
grep -q 'error MF-V005' "$tmp/err" || fail "a second store writer: $(cat "$tmp/err")"
wait "$pid" || fail "the first store run failed"
[[ $(wc -l <"$tmp/kill/ran") -eq 12 ]] || fail "store attempts ran $(wc -l <"$tmp/kill/ran") times, not 12"

# --- Journal integrity: a chain, the MAC, and each attempt against its trace ---------------------
# Two passing and two failing cases; the failing ones sort last, so the journal's last line is one.
mkdir -p "$tmp/int/traces"
cat >"$tmp/int/run.json" <<'JSON'
{"steps": [{"tool_calls": [{"name": "bash", "arguments": {"command": "echo done"}}]},
           {"tool_calls": [{"name": "submit", "arguments": {"terminal_result": "COMPLETE", "summary": "ok"}}]}]}
JSON
cp "$tmp/kill/slow.plan.json" "$tmp/int/"
jq -n --arg ws "$tmp/kill/ws" '{suite_id: "integrity", cases: ([
  (range(1; 3) | {id: "a-pass-\(.)", expect: {tools: ["bash", "submit"]}}),
  (range(1; 3) | {id: "b-fail-\(.)", expect: {tools: ["submit"]}})] |
  map(. + {plan: "slow.plan.json", model: "scripted:run.json", workspace: $ws}))}' >"$tmp/int/suite.json"
int_run() { "$eval_bin" run --suite "$tmp/int/suite.json" --fixed-clock --output "$tmp/int/r.json" "$@"; }
run 1 int_run --traces "$tmp/int/traces"
cp "$tmp/int/r.json" "$tmp/int/first.json"
cp "$tmp/int/r.json.journal" "$tmp/int/good.journal"
j=$tmp/int/r.json.journal
[[ $(wc -l <"$j") -eq 4 ]] || fail "the integrity journal holds $(wc -l <"$j") lines"
[[ $(sed -n 2p "$j" | jq -r .prev) == $(sed -n 1p "$j" | tr -d '\n' | sha256sum | cut -d' ' -f1) ]] ||
  fail "line 2 does not name line 1's digest"
# A forged last line: the failing attempt marked passed, well-formed and on the chain.
forge() {
  head -n 3 "$tmp/int/good.journal"
  tail -n 1 "$tmp/int/good.journal" |
    jq -c '.result |= (.status = "passed" | .failures = [] | .outcome = "valid_completion")' |
    "$MF_BIN/mf-store" canon
}
forge >"$j"
run 2 int_run --traces "$tmp/int/traces" --resume
grep -qF 'r.json.journal:4: error MF-V004: journaled attempt b-fail-2.0 disagrees with its trace: it says "status": "passed" but its trace gives "failed"' "$tmp/err" ||
  fail "a forged line: $(cat "$tmp/err")"
cmp -s "$tmp/int/first.json" "$tmp/int/r.json" || fail "a refused resume wrote a report"
# An edited line before the last breaks the chain at the line after it; so does a line moved or
# dropped.
sed '2s/"status":"passed"/"status":"failed"/' "$tmp/int/good.journal" >"$j"
run 2 int_run --resume
grep -q 'r.json.journal:3: error MF-V004: journal line does not name the SHA-256 of the line before it' "$tmp/err" ||
  fail "an edited line: $(cat "$tmp/err")"
for n in 1 3 2 4; do sed -n "${n}p" "$tmp/int/good.journal"; done >"$j"
run 2 int_run --resume
grep -q 'r.json.journal:2: error MF-V004' "$tmp/err" || fail "moved lines: $(cat "$tmp/err")"
sed '2d' "$tmp/int/good.journal" >"$j"
run 2 int_run --resume
grep -q 'r.json.journal:2: error MF-V004' "$tmp/err" || fail "a dropped line: $(cat "$tmp/err")"
sed '1d' "$tmp/int/good.journal" >"$j"
run 2 int_run --resume
grep -q 'r.json.journal:1: error MF-V004: the first journal line names a line before it' "$tmp/err" ||
  fail "a dropped first line: $(cat "$tmp/err")"
# A last line cut short (a kill mid-write) is still dropped, and its attempt runs again.
{
  head -n 3 "$tmp/int/good.journal"
  tail -n 1 "$tmp/int/good.journal" | head -c 100
} >"$j"
run 1 int_run --traces "$tmp/int/traces" --resume
cmp -s "$tmp/int/first.json" "$tmp/int/r.json" || fail "the resumed report differs"
cmp -s "$tmp/int/good.journal" "$j" || fail "the recovered journal differs"
# Signed: every line carries an HMAC under the key; a line forged without the key is refused even
# when no trace is at hand.
export MF_JOURNAL_KEY=0123456789abcdef0123
run 1 int_run --mac-key-env MF_JOURNAL_KEY
cp "$j" "$tmp/int/good.journal"
jq -e -s 'all(.[]; .hmac_sha256 | test("^[0-9a-f]{64}$"))' "$j" >/dev/null || fail "unsigned lines"
run 1 int_run --mac-key-env MF_JOURNAL_KEY --resume
forge >"$j"
run 2 int_run --mac-key-env MF_JOURNAL_KEY --resume
grep -q "r.json.journal:4: error MF-V004: journal line's hmac_sha256 is wrong under the key" "$tmp/err" ||
  fail "a forged signed line: $(cat "$tmp/err")"
unset MF_JOURNAL_KEY

# --- A journal line is read within a bound -----------------------------------------------------
# A 200 MB line: refused once it passes the 16 MiB bound, which is all of it that is held.
{
  printf '{"v":2,"campaign":"'
  head -c 200000000 /dev/zero | tr '\0' a
  printf '"}\n'
} >"$j"
rc=0
/usr/bin/time -f %M -o "$tmp/int/rss" "$eval_bin" run --suite "$tmp/int/suite.json" --fixed-clock \
  --output "$tmp/int/r.json" --resume >/dev/null 2>"$tmp/err" || rc=$?
[[ $rc -eq 2 ]] || fail "a 200 MB line: exit $rc"
grep -q 'r.json.journal:1: error MF-V003: journal line is longer than 16777216 bytes' "$tmp/err" ||
  fail "a long line: $(cat "$tmp/err")"
rss_kb=$(tail -n 1 "$tmp/int/rss")
# Under AddressSanitizer, whose shadow memory and quarantine make RSS say little, only the refusal.
grep -q __asan_init "$eval_bin" || ((rss_kb * 1024 * 4 < 200000000)) ||
  fail "a 200 MB line took ${rss_kb} KiB"
rm -f "$j"

echo "campaign: ok"
