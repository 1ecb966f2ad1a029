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
    .summary.passed=3 | .summary.failed=1' "$tmp/report.json" >"$tmp/doctored.json"
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
jq 'del(.cases[0]) | .summary.cases=3 | .summary.passed=3' "$tmp/report.json" >"$tmp/fewer.json"
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

echo "eval: ok"
