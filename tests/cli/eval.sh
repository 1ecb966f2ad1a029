#!/usr/bin/env bash
# mf-eval end to end: the Forge suite, deterministic reports for any -j, compare and its gate,
# invalid suites and reports.
set -euo pipefail
bin=${MF_BIN:?set MF_BIN to the bin directory of a build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
suite=fixtures/forge/eval-suite.json

# The four Forge cases pass; the report is canonical JSON with one trailing newline.
"$bin/mf-eval" run --suite $suite --output "$tmp/report.json" --fixed-clock
jq -e '.summary.passed == 4 and .summary.failed == 0' "$tmp/report.json" >/dev/null ||
  fail "summary: $(jq -c .summary "$tmp/report.json")"
jq -e '[.cases[].id] == ["invalid-without-repair","one-targeted-repair","provider-failure","valid-first-response"]' \
  "$tmp/report.json" >/dev/null || fail "case ids not sorted"
jq -e '[.cases[] | has("latency_ms")] | any | not' "$tmp/report.json" >/dev/null ||
  fail "latency_ms under --fixed-clock"
[ "$(jq -r .suite_sha256 "$tmp/report.json")" = "$(sha256sum $suite | cut -d' ' -f1)" ] ||
  fail "suite_sha256"
"$bin/mf-store" canon "$tmp/report.json" | cmp - "$tmp/report.json" || fail "report not canonical"

# Byte-identical for any -j under the fixed clock (also via MF_FIXED_CLOCK=1), on stdout too.
"$bin/mf-eval" run --suite $suite --output "$tmp/report-j4.json" --fixed-clock -j 4
cmp "$tmp/report.json" "$tmp/report-j4.json" || fail "-j 4 report differs from -j 1"
MF_FIXED_CLOCK=1 "$bin/mf-eval" run --suite $suite --output - -j 3 | cmp - "$tmp/report.json" ||
  fail "MF_FIXED_CLOCK=1 report on stdout differs"

# Without the fixed clock every case has its latency; traces land in --traces DIR.
mkdir "$tmp/traces"
"$bin/mf-eval" run --suite $suite --output "$tmp/timed.json" -j 2 --traces "$tmp/traces" \
  --run-id-prefix ci-
jq -e '[.cases[] | has("latency_ms")] | all' "$tmp/timed.json" >/dev/null || fail "no latency_ms"
for id in $(jq -r '.cases[].id' "$tmp/timed.json"); do
  t="$tmp/traces/$id.jsonl"
  [ "$(sha256sum "$t" | cut -d' ' -f1)" = "$(jq -r --arg id "$id" '.cases[] | select(.id==$id) | .trace_sha256' "$tmp/timed.json")" ] ||
    fail "$id: trace digest"
  [ "$(head -n1 "$t" | jq -r .run_id)" = "ci-$id" ] || fail "$id: run id"
done

# compare with itself: exit 0, four unchanged.
"$bin/mf-eval" compare --baseline "$tmp/report.json" --candidate "$tmp/report.json" >"$tmp/cmp.json"
jq -e '(.unchanged | length) == 4 and .regressed == [] and .missing == [] and .new == []' \
  "$tmp/cmp.json" >/dev/null || fail "self-compare: $(cat "$tmp/cmp.json")"

# A doctored candidate in which one case failed (status, failures and summary kept consistent,
# as compare reads reports strictly): exit 1, that id regressed, the gate says why on stderr.
jq '(.cases[] | select(.id=="provider-failure")) |= (.status="failed" |
      .failures=[{"check":"terminal","expected":"model_failed","actual":"completed"}]) |
    .summary.passed=3 | .summary.failed=1 | del(.summary.pass_rate, .summary.wilson95)' \
  "$tmp/report.json" >"$tmp/doctored.json"
rc=0
"$bin/mf-eval" compare --baseline "$tmp/report.json" --candidate "$tmp/doctored.json" \
  >"$tmp/cmp.json" 2>"$tmp/err" || rc=$?
[ $rc -eq 1 ] || fail "regression: exit $rc"
jq -e '.regressed == ["provider-failure"] and .candidate_pass_rate == 0.75' "$tmp/cmp.json" \
  >/dev/null || fail "regression: $(cat "$tmp/cmp.json")"
grep -q 'gate failed: 1 case(s) regressed' "$tmp/err" || fail "gate reason: $(cat "$tmp/err")"
"$bin/mf-eval" compare --baseline "$tmp/report.json" --candidate "$tmp/doctored.json" \
  --max-regressions 1 >/dev/null || fail "--max-regressions 1 should pass"
# ...and the reverse direction is an improvement, which passes.
"$bin/mf-eval" compare --baseline "$tmp/doctored.json" --candidate "$tmp/report.json" |
  jq -e '.improved == ["provider-failure"]' >/dev/null || fail "improvement"

# A baseline case missing from the candidate fails the gate too.
jq 'del(.cases[0]) | .summary = {cases: 3, passed: 3, failed: 0}' "$tmp/report.json" >"$tmp/fewer.json"
rc=0
"$bin/mf-eval" compare --baseline "$tmp/report.json" --candidate "$tmp/fewer.json" \
  >"$tmp/cmp.json" 2>/dev/null || rc=$?
[ $rc -eq 1 ] || fail "missing: exit $rc"
jq -e '.missing == ["invalid-without-repair"]' "$tmp/cmp.json" >/dev/null || fail "missing ids"

# A report contradicting itself (status changed, summary not) is rejected: exit 2, empty stdout.
jq '.cases[0].status="failed"' "$tmp/report.json" >"$tmp/torn.json"
rc=0
"$bin/mf-eval" compare --baseline "$tmp/report.json" --candidate "$tmp/torn.json" \
  >"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -eq 2 ] || fail "inconsistent report: exit $rc"
[ ! -s "$tmp/out" ] || fail "inconsistent report: stdout not empty"
grep -q 'MF-S020' "$tmp/err" || fail "inconsistent report: no diagnostic"

# A failing case: exit 1, and the report is still written with the precise failure entry.
mkdir "$tmp/forge"
cp fixtures/forge/*.json "$tmp/forge/"
sed 's/"src\/lib.rs:12"/"src\/lib.rs:99"/' $suite >"$tmp/forge/wrong.json"
rc=0
"$bin/mf-eval" run --suite "$tmp/forge/wrong.json" --output "$tmp/wrong.json" --fixed-clock \
  2>/dev/null || rc=$?
[ $rc -eq 1 ] || fail "failing case: exit $rc"
jq -e '.summary.failed == 2 and (.cases[] | select(.id=="valid-first-response") | .failures) ==
       [{"actual":"src/lib.rs:12","check":"output/evidence","expected":"src/lib.rs:99"}]' \
  "$tmp/wrong.json" >/dev/null || fail "failure entry: $(jq -c .cases "$tmp/wrong.json")"

# Invalid suites are rejected before any work: exit 2, nothing on stdout, a pointer on stderr.
check_invalid() {
  local name=$1 pointer=$2
  rc=0
  "$bin/mf-eval" run --suite "$tmp/$name.json" --output - >"$tmp/out" 2>"$tmp/err" || rc=$?
  [ $rc -eq 2 ] || fail "$name: exit $rc"
  [ ! -s "$tmp/out" ] || fail "$name: stdout not empty"
  grep -q "at $pointer" "$tmp/err" || fail "$name: no pointer $pointer: $(cat "$tmp/err")"
}
jq '.cases[1].id = "valid-first-response"' $suite >"$tmp/duplicate.json"
check_invalid duplicate /cases/1/id
jq '.cases[0].expect.calls = 1' $suite >"$tmp/bad-expect.json"
check_invalid bad-expect /cases/0/expect/calls
jq '.cases[2].id = ""' $suite >"$tmp/empty-id.json"
check_invalid empty-id /cases/2/id
cp $suite "$tmp/no-task.json"  # relative task paths now resolve under $tmp, where there are none
check_invalid no-task /cases/0/task

# Usage errors.
rc=0
"$bin/mf-eval" run --suite $suite >/dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || fail "run without --output: exit $rc"
rc=0
"$bin/mf-eval" run --suite $suite --output - -j 0 >/dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || fail "-j 0: exit $rc"
rc=0
"$bin/mf-eval" compare --baseline "$tmp/report.json" >/dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || fail "compare without --candidate: exit $rc"

# --- plan cases: compiled plans through the guarded loop, in process -----------------------------
ab=$PWD/fixtures/harness/ablation
runs=$PWD/fixtures/harness/runs
repo=$PWD/fixtures/repository
mkdir "$tmp/plan"
cp "$ab/golden.plan.json" "$ab/read-submit.plan.json" "$runs/golden-ok.json" \
  "$runs/read-submit.json" "$tmp/plan/"
# Relative to the suite's directory: the plans and trajectories beside it, the workspace elsewhere.
jq -n --arg repo "$repo" '{suite_id: "plan-cases", cases: [
  {id: "golden-ok", plan: "golden.plan.json", model: "scripted:golden-ok.json", workspace: $repo,
   expect: {terminal: "completed", disposition: "success", model_calls: 3, tool_calls: 3,
            violations: {rescue: 0}, tools: ["collect_context", "write_report", "finish_success"]}},
  {id: "golden-sim-bare", plan: "golden.plan.json", model: "sim:golden-ok.json?seed=6&faults=0.5",
   workspace: $repo, guardrails: "bare",
   expect: {terminal: "budget_exhausted", model_calls: 2, tool_calls: 1,
            violations: {text_response: 1, rescue: 0}, tools: ["collect_context"]}},
  {id: "golden-sim-full", plan: "golden.plan.json", model: "sim:golden-ok.json?seed=6&faults=0.5",
   workspace: $repo, expect: {terminal: "completed", disposition: "success", violations: {rescue: 1}}},
  {id: "read-submit", plan: "read-submit.plan.json", model: "scripted:read-submit.json",
   workspace: $repo, request: {instruction: "Read src/lib.rs."},
   expect: {terminal: "completed", tools: ["read", "submit"]}}]}' >"$tmp/plan/suite.json"
"$bin/mf-eval" run --suite "$tmp/plan/suite.json" --output "$tmp/plan-j1.json" --fixed-clock -j 1 ||
  fail "plan suite: $(jq -c '.cases[] | {id, failures}' "$tmp/plan-j1.json")"
"$bin/mf-eval" run --suite "$tmp/plan/suite.json" --output "$tmp/plan-j2.json" --fixed-clock -j 2
cmp "$tmp/plan-j1.json" "$tmp/plan-j2.json" || fail "plan suite: -j 2 report differs from -j 1"
"$bin/mf-store" canon "$tmp/plan-j1.json" | cmp - "$tmp/plan-j1.json" || fail "plan report not canonical"
jq -e '(.cases[] | select(.id=="golden-ok")) as $c | $c.tool_calls == 3 and
       $c.disposition == "success" and $c.violations == {} and $c.repairs == 0' "$tmp/plan-j1.json" \
  >/dev/null || fail "plan report members: $(jq -c .cases[0] "$tmp/plan-j1.json")"
jq -e '(.cases[] | select(.id=="golden-sim-bare")) | has("disposition") | not' "$tmp/plan-j1.json" \
  >/dev/null || fail "a failed plan run has a disposition"
# The same sim seed with and without the guardrails: a call written as text is rescued, or (bare)
# ends the run. Each trace is the one the report names and verifies; the scratch artifact directories are gone afterwards.
mkdir "$tmp/plan-traces" "$tmp/plan-tmp"
TMPDIR="$tmp/plan-tmp" "$bin/mf-eval" run --suite "$tmp/plan/suite.json" --output "$tmp/plan-t.json" \
  --fixed-clock --traces "$tmp/plan-traces"
cmp "$tmp/plan-t.json" "$tmp/plan-j1.json" || fail "--traces changed the plan report"
for id in $(jq -r '.cases[].id' "$tmp/plan-t.json"); do
  [ "$(sha256sum "$tmp/plan-traces/$id.jsonl" | cut -d' ' -f1)" = \
    "$(jq -r --arg id "$id" '.cases[] | select(.id==$id) | .trace_sha256' "$tmp/plan-t.json")" ] ||
    fail "$id: plan trace digest"
  "$bin/mf-replay" "$tmp/plan-traces/$id.jsonl" >/dev/null || fail "$id: trace does not verify"
done
[ "$(head -n1 "$tmp/plan-traces/golden-sim-bare.jsonl" | jq -r .guardrails)" = bare ] ||
  fail "preset not recorded"
[ -z "$(ls -A "$tmp/plan-tmp")" ] || fail "scratch artifact directories left: $(ls "$tmp/plan-tmp")"
"$bin/mf-eval" compare --baseline "$tmp/plan-j1.json" --candidate "$tmp/plan-t.json" >/dev/null ||
  fail "plan reports do not compare"

# A failing plan expectation: exit 1, the report written with the exact entry.
jq '.cases[1].expect.violations = {"text_response": 2}' "$tmp/plan/suite.json" >"$tmp/plan/wrong.json"
rc=0
"$bin/mf-eval" run --suite "$tmp/plan/wrong.json" --output "$tmp/plan-wrong.json" --fixed-clock \
  2>/dev/null || rc=$?
[ $rc -eq 1 ] || fail "failing plan case: exit $rc"
jq -e '.summary.failed == 1 and (.cases[] | select(.id=="golden-sim-bare") | .failures) ==
       [{"actual":1,"check":"violations/text_response","expected":2}]' "$tmp/plan-wrong.json" \
  >/dev/null || fail "plan failure entry: $(jq -c .cases "$tmp/plan-wrong.json")"

# Invalid plan cases are rejected before any run: exit 2, nothing on stdout, the pointer named.
check_invalid_plan() {
  local name=$1 pointer=$2 filter=$3
  jq "$filter" "$tmp/plan/suite.json" >"$tmp/plan/$name.json"
  rc=0
  "$bin/mf-eval" run --suite "$tmp/plan/$name.json" --output - >"$tmp/out" 2>"$tmp/err" || rc=$?
  [ $rc -eq 2 ] || fail "$name: exit $rc"
  [ ! -s "$tmp/out" ] || fail "$name: stdout not empty"
  grep -q "at $pointer" "$tmp/err" || fail "$name: no pointer $pointer: $(cat "$tmp/err")"
}
sed 's/Preserve this first/Ignore this first/' "$tmp/plan/golden.plan.json" >"$tmp/plan/tampered.json"
check_invalid_plan tampered-plan /cases/0/plan '.cases[0].plan = "tampered.json"'
grep -q MF-L004 "$tmp/err" || fail "tampered plan: not MF-L004: $(cat "$tmp/err")"
check_invalid_plan bad-preset /cases/1/guardrails '.cases[1].guardrails = "off"'
check_invalid_plan bad-sim /cases/1/model '.cases[1].model = "sim:golden-ok.json?seed=-1"'
check_invalid_plan no-trajectory /cases/2/model '.cases[2].model = "sim:absent.json?seed=1"'
check_invalid_plan no-workspace /cases/3/workspace '.cases[3].workspace = "absent"'
check_invalid_plan bad-request /cases/3/request/prompt '.cases[3].request = {"prompt": "x"}'
check_invalid_plan task-check /cases/0/expect/repairs '.cases[0].expect.repairs = 0'
check_invalid_plan bad-kind /cases/0/expect/violations/retry '.cases[0].expect.violations = {"retry": 1}'
check_invalid_plan task-and-plan /cases/0/task '.cases[0].task = "t.json"'

echo "eval: ok"
