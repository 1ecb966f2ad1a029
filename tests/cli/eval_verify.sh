#!/usr/bin/env bash
# mf-eval verify (docs/formats/eval.md, "`mf-eval verify`"): a campaign's report derived again from
# its traces holds for task and plan cases, repeats, a matrix, signed traces and the store; each
# way of tampering with the report or its traces is caught and named; what only the expectations
# show (a status flipped) is caught only with --suite.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"

eval_bin="$MF_BIN/mf-eval"
fx=$MF_SOURCE_DIR/fixtures
ab=$fx/harness/ablation

# holds ARGS...: verify exits 0 and prints only its summary line, which says it holds.
holds() {
  run 0 "$eval_bin" verify "$@"
  [[ $(wc -l <"$tmp/out") -eq 1 ]] || fail "verify $* listed failures: $(cat "$tmp/out")"
  jq -e '.holds and .failed == 0 and .statistics_failed == 0' "$tmp/out" >/dev/null ||
    fail "verify $*: $(cat "$tmp/out")"
}
# caught CHECK NAME ARGS...: verify exits 1; a failure line of that check names NAME (the attempt,
# or for a statistic the member), and so does a stderr line; the summary line says it does not hold.
caught() {
  local check=$1 name=$2
  shift 2
  run 1 "$eval_bin" verify "$@"
  [[ -n $(jq -c --arg c "$check" --arg n "$name" \
    'select(.check == $c and (.attempt // .member // .check) == $n)' "$tmp/out") ]] ||
    fail "verify $* did not report $check for $name: $(cat "$tmp/out")"
  tail -1 "$tmp/out" | jq -e '.holds == false' >/dev/null || fail "verify $* holds"
  local prefix="attempt "
  [[ $check != statistic && $check != suite ]] || prefix=""
  grep -qF "mf-eval: verify: $prefix$name: " "$tmp/err" ||
    fail "no stderr line names $name: $(cat "$tmp/err")"
}
# failures: how many failure lines the last verify printed.
failures() { echo $(($(wc -l <"$tmp/out") - 1)); }

# --- Task cases: a campaign with a failed case ---------------------------------------------------
t=$tmp/task
mkdir -p "$t/traces"
cp -r "$fx/forge/." "$t/"
# One case expects a repair its run does not skip, so the report holds a failed case as well.
jq '(.cases[] | select(.id == "one-targeted-repair") | .expect.repairs) = 0' \
  "$fx/forge/eval-suite.json" >"$t/suite.json"
run 1 "$eval_bin" run --suite "$t/suite.json" --output "$t/r.json" --fixed-clock --traces "$t/traces"
holds "$t/r.json" --traces "$t/traces"
jq -e '.attempts == 4 and .graded == false and .mac == false and (has("suite_sha256") | not)' \
  "$tmp/out" >/dev/null || fail "summary line: $(cat "$tmp/out")"
[[ $(jq -r .report_sha256 "$tmp/out") == $(sha256sum "$t/r.json" | cut -d' ' -f1) ]] ||
  fail "report_sha256 is not the report's digest"
holds "$t/r.json" --traces "$t/traces" --suite "$t/suite.json" -j 3
jq -e --arg s "$(sha256sum "$t/suite.json" | cut -d' ' -f1)" '.graded and .suite_sha256 == $s' \
  "$tmp/out" >/dev/null || fail "graded summary line: $(cat "$tmp/out")"

# A trace edited: one byte changed.
cp -r "$t/traces" "$t/edited"
sed -i '1s/"eval-valid/"eval-valiD/' "$t/edited/valid-first-response.jsonl"
caught trace_sha256 valid-first-response "$t/r.json" --traces "$t/edited"
[[ $(failures) -eq 1 ]] || fail "one edited trace, $(failures) failures"
# ... and its digest written into the report too: the trace itself no longer verifies.
jq --arg d "$(sha256sum "$t/edited/valid-first-response.jsonl" | cut -d' ' -f1)" \
  '(.cases[] | select(.id == "valid-first-response") | .trace_sha256) = $d' "$t/r.json" \
  >"$t/edited.json"
caught trace valid-first-response "$t/edited.json" --traces "$t/edited"
grep -q 'MF-E0' "$tmp/out" || fail "the broken rule is not named: $(cat "$tmp/out")"

# A trace missing.
cp -r "$t/traces" "$t/missing"
rm "$t/missing/provider-failure.jsonl"
caught trace_missing provider-failure "$t/r.json" --traces "$t/missing"

# Two traces swapped between cases: both are named.
cp -r "$t/traces" "$t/swapped"
mv "$t/swapped/valid-first-response.jsonl" "$t/swapped/x"
mv "$t/swapped/one-targeted-repair.jsonl" "$t/swapped/valid-first-response.jsonl"
mv "$t/swapped/x" "$t/swapped/one-targeted-repair.jsonl"
caught trace_sha256 valid-first-response "$t/r.json" --traces "$t/swapped"
caught trace_sha256 one-targeted-repair "$t/r.json" --traces "$t/swapped"
[[ $(failures) -eq 2 ]] || fail "two swapped traces, $(failures) failures"

# An entry's model_calls edited (the summary does not count them, so it stays consistent).
jq '(.cases[] | select(.id == "invalid-without-repair") | .model_calls) = 2' "$t/r.json" \
  >"$t/calls.json"
run 0 "$eval_bin" report "$t/calls.json" --format json  # still a consistent report
caught entry invalid-without-repair "$t/calls.json" --traces "$t/traces"
[[ -n $(jq -c 'select(.member == "model_calls")' "$tmp/out") ]] || fail "member: $(cat "$tmp/out")"

# A status flipped both ways, each with its failures, so the counts and the summary stay the same:
# only the expectations show it.
jq '(.cases[] | select(.id == "one-targeted-repair")) |= (.status = "passed" | .failures = []) |
    (.cases[] | select(.id == "valid-first-response")) |=
      (.status = "failed" | .failures = [{check: "repairs", expected: 1, actual: 0}])' \
  "$t/r.json" >"$t/flipped.json"
run 0 "$eval_bin" report "$t/flipped.json" --format json
holds "$t/flipped.json" --traces "$t/traces"
caught entry one-targeted-repair "$t/flipped.json" --traces "$t/traces" --suite "$t/suite.json"
caught entry valid-first-response "$t/flipped.json" --traces "$t/traces" --suite "$t/suite.json"
[[ $(jq -sc '[.[] | select(.attempt) | .member]' "$tmp/out") == '["status","status"]' ]] ||
  fail "flipped statuses: $(cat "$tmp/out")"

# A summary statistic edited: compare refuses the report; verify names the statistic.
jq '.summary.pass_rate = 1' "$t/r.json" >"$t/stat.json"
run 2 "$eval_bin" compare --baseline "$t/r.json" --candidate "$t/stat.json"
caught statistic summary/pass_rate "$t/stat.json" --traces "$t/traces"
jq -e '.statistics_failed == 1 and .failed == 0' <(tail -1 "$tmp/out") >/dev/null ||
  fail "statistic summary: $(tail -1 "$tmp/out")"

# A suite that is not the report's: named, and nothing is graded against it.
caught suite suite "$t/r.json" --traces "$t/traces" --suite "$fx/forge/eval-suite.json"
tail -1 "$tmp/out" | jq -e '.graded == false' >/dev/null || fail "graded against another suite"

# Refusals (exit 2, nothing on stdout): not a report, another kind, no such file, bad usage.
echo 'not json' >"$t/junk.json"
refuse 2 MF-S011 "$eval_bin" verify "$t/junk.json" --traces "$t/traces"
jq '.kind = "millforge_other"' "$t/r.json" >"$t/kind.json"
refuse 2 MF-S020 "$eval_bin" verify "$t/kind.json" --traces "$t/traces"
refuse 2 MF-S013 "$eval_bin" verify "$t/none.json" --traces "$t/traces"
refuse 2 MF-S013 "$eval_bin" verify "$t/r.json" --traces "$t/nowhere"
refuse 2 MF-K005 "$eval_bin" verify "$t/r.json" --store "$t/nostore"
run 2 "$eval_bin" verify "$t/r.json"
run 2 "$eval_bin" verify "$t/r.json" --traces "$t/traces" --store "$t/st"
run 2 "$eval_bin" verify --traces "$t/traces"
if [[ -w /dev/full ]]; then
  rc=0
  "$eval_bin" verify "$t/r.json" --traces "$t/traces" >/dev/full 2>"$tmp/err" || rc=$?
  [[ $rc -eq 3 ]] || fail "verify to /dev/full exited $rc, expected 3"
fi
echo '{"suite_id":"s","cases":[]}' >"$t/bad-suite.json"
refuse 2 MF-S020 "$eval_bin" verify "$t/r.json" --traces "$t/traces" --suite "$t/bad-suite.json"

# --- Repeats: two attempts of one scripted case differ only in their run id ----------------------
r=$tmp/rep
mkdir -p "$r/traces"
run 1 "$eval_bin" run --suite "$t/suite.json" --output "$r/r.json" --fixed-clock --repeat 2 \
  --traces "$r/traces" -j 2
holds "$r/r.json" --traces "$r/traces" --suite "$t/suite.json" -j 2
jq -e '.attempts == 8' "$tmp/out" >/dev/null || fail "repeat attempts: $(cat "$tmp/out")"
# Swapped, traces and digests both: every member agrees; the run ids do not.
cp -r "$r/traces" "$r/swapped"
mv "$r/swapped/provider-failure.0.jsonl" "$r/swapped/x"
mv "$r/swapped/provider-failure.1.jsonl" "$r/swapped/provider-failure.0.jsonl"
mv "$r/swapped/x" "$r/swapped/provider-failure.1.jsonl"
jq '(.cases[] | select(.id == "provider-failure") | .attempts) |=
      (.[0].trace_sha256 as $a | .[0].trace_sha256 = .[1].trace_sha256 | .[1].trace_sha256 = $a)' \
  "$r/r.json" >"$r/swapped.json"
caught run_id provider-failure.0 "$r/swapped.json" --traces "$r/swapped" --suite "$t/suite.json"
caught run_id provider-failure.1 "$r/swapped.json" --traces "$r/swapped" --suite "$t/suite.json"

# --- Plan cases (the guardrail ablation), repeated and signed ------------------------------------
p=$tmp/plan
mkdir -p "$p/traces"
export MF_VERIFY_KEY=0123456789abcdef-verify MF_OTHER_KEY=0123456789abcdef-other
ids=golden.full.mixed.s01,golden.no_rescue.text_instead_of_call.s03,read-submit.bare.unknown_tool.s02
rc=0
"$eval_bin" run --suite "$ab/suite.json" --case "$ids" --repeat 2 --output "$p/r.json" \
  --fixed-clock --traces "$p/traces" --mac-key-env MF_VERIFY_KEY >/dev/null 2>&1 || rc=$?
[[ $rc -le 1 ]] || fail "plan campaign exited $rc"
jq -e '[.cases[].attempts[] | has("tool_calls") and has("violations") and has("outcome")] | all' \
  "$p/r.json" >/dev/null || fail "not plan entries"
holds "$p/r.json" --traces "$p/traces" --suite "$ab/suite.json" --mac-key-env MF_VERIFY_KEY -j 4
jq -e '.attempts == 6 and .graded and .mac' "$tmp/out" >/dev/null || fail "plan: $(cat "$tmp/out")"
caught trace golden.full.mixed.s01.1 "$p/r.json" --traces "$p/traces" --mac-key-env MF_OTHER_KEY
grep -q MF-E017 "$tmp/out" || fail "the MAC is not named: $(cat "$tmp/out")"
# A plan member edited is caught from the trace alone.
jq '.cases[0].attempts[1].tool_calls += 1' "$p/r.json" >"$p/calls.json"
caught entry "$(jq -r '.cases[0].id' "$p/r.json").1" "$p/calls.json" --traces "$p/traces"
[[ -n $(jq -c 'select(.member == "tool_calls")' "$tmp/out") ]] || fail "member: $(cat "$tmp/out")"

# --- A matrix: each entry <case>.<column> graded against its case ------------------------------
m=$tmp/matrix
mkdir -p "$m/traces"
cp "$ab/golden.plan.json" "$fx/harness/runs/golden-ok.json" "$m/"
jq -n --arg ws "$fx/repository" '{suite_id: "matrix", cases: [
  {id: "sim", plan: "golden.plan.json", model: "sim:golden-ok.json?seed=3&faults=0.5",
   workspace: $ws, request: {instruction: "Report on src/lib.rs."},
   expect: {terminal: "completed", model_calls: 3}}]}' >"$m/suite.json"
rc=0
"$eval_bin" run --suite "$m/suite.json" --output "$m/r.json" --fixed-clock --traces "$m/traces" \
  --model "calm=sim:$m/golden-ok.json?seed=1&faults=0" \
  --model "noisy=sim:$m/golden-ok.json?seed=1&faults=0.6" --guardrails full --guardrails bare \
  >/dev/null 2>&1 || rc=$?
[[ $rc -le 1 ]] || fail "matrix exited $rc"
[[ $(jq -c '[.cases[].id]' "$m/r.json") == \
   '["sim.calm.bare","sim.calm.full","sim.noisy.bare","sim.noisy.full"]' ]] ||
  fail "matrix ids: $(jq -c '[.cases[].id]' "$m/r.json")"
holds "$m/r.json" --traces "$m/traces" --suite "$m/suite.json" -j 2
jq '(.cases[] | select(.id == "sim.calm.full") | .model_calls) += 1' "$m/r.json" >"$m/calls.json"
caught entry sim.calm.full "$m/calls.json" --traces "$m/traces" --suite "$m/suite.json"

# --- The store: each trace by its digest -------------------------------------------------------
s=$tmp/store
mkdir -p "$s"
run 1 "$eval_bin" run --suite "$t/suite.json" --output "$s/r.json" --fixed-clock --store "$s/st"
holds "$s/r.json" --store "$s/st" --suite "$t/suite.json"
# A report naming a trace the store does not hold.
jq '(.cases[] | select(.id == "provider-failure") | .trace_sha256) = ("0" * 64)' "$s/r.json" \
  >"$s/absent.json"
caught trace_missing provider-failure "$s/absent.json" --store "$s/st"
# Another attempt's trace, which the store holds: a member its trace gives differs.
other=$(jq -r '.cases[] | select(.id == "valid-first-response") | .trace_sha256' "$s/r.json")
jq --arg d "$other" '(.cases[] | select(.id == "provider-failure") | .trace_sha256) = $d' \
  "$s/r.json" >"$s/other.json"
caught entry provider-failure "$s/other.json" --store "$s/st"

# --- Memory: one trace per thread, whatever the number of attempts ------------------------------
# A task whose output is 1 MB makes each trace about 1 MB (the terminal event holds the output).
b=$tmp/big
mkdir -p "$b/two" "$b/forty"
jq --arg repo "$fx/repository" '.budget.max_output_bytes = 4194304 | .input.repository = $repo' \
  "$fx/forge/task-valid.json" >"$b/task.json"
python3 -c 'import json; print(json.dumps({"steps": [{"content": json.dumps(
  {"risk": "a" * 1000000, "evidence": "src/lib.rs:12"})}]}))' >"$b/big.json"
jq -n '{suite_id: "big", cases: [{id: "big", task: "task.json", model: "scripted:big.json",
  expect: {terminal: "completed"}}]}' >"$b/suite.json"
for k in two:2 forty:40; do
  run 0 "$eval_bin" run --suite "$b/suite.json" --output "$b/${k%:*}.json" --fixed-clock \
    --traces "$b/${k%:*}" --repeat "${k#*:}" -j 2
done
holds "$b/forty.json" --traces "$b/forty" --suite "$b/suite.json" -j 2
rss() { /usr/bin/time -f %M "$eval_bin" verify "$@" -j 2 2>&1 >/dev/null | tail -1; }
small=$(rss "$b/two.json" --traces "$b/two")
large=$(rss "$b/forty.json" --traces "$b/forty")
# Under AddressSanitizer, whose quarantine keeps freed memory, RSS says little: not checked there.
grep -q __asan_init "$eval_bin" || ((large * 10 < small * 13)) ||
  fail "peak RSS grew from $small KiB (2 traces of 1 MB) to $large KiB (40)"

echo "eval_verify: ok"
