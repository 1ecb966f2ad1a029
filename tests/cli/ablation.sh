#!/usr/bin/env bash
# The offline guardrail ablation (docs/ablation.md): its compiled plans are what the compiler makes
# of the sources today, its suite is what the generator makes, every case passes with the same
# report for any -j, and the tables in the doc are the ones this run produces.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"

ab=fixtures/harness/ablation
h=fixtures/harness

# The committed plans equal a fresh compile.
run 0 "$MF_BIN/mf-compile" $h/golden.yaml --catalog $h/catalog.json --profiles $h/profiles.json -o -
cmp "$tmp/out" $ab/golden.plan.json || fail "golden.plan.json differs from a fresh compile"
run 0 "$MF_BIN/mf-compile" $h/read-submit.yaml -o -
cmp "$tmp/out" $ab/read-submit.plan.json || fail "read-submit.plan.json differs from a fresh compile"

# Every case passes: the pinned endings are today's, whatever the thread count.
run 0 "$MF_BIN/mf-eval" run --suite $ab/suite.json --output "$tmp/report.json" --fixed-clock -j 2
jq -e '.summary.failed == 0 and .summary.cases == 1080' "$tmp/report.json" >/dev/null ||
  fail "ablation summary: $(jq -c .summary "$tmp/report.json")"
run 0 "$MF_BIN/mf-eval" run --suite $ab/suite.json --output "$tmp/report-j1.json" --fixed-clock -j 1
cmp "$tmp/report.json" "$tmp/report-j1.json" || fail "-j 1 report differs from -j 2"

# The presets differ where they should: every guardrail on completes the most runs, none the fewest.
python3 - "$tmp/report.json" <<'PY' || fail "preset ordering"
import json, sys
cases = json.load(open(sys.argv[1]))["cases"]
def rate(preset):
    runs = [c for c in cases if c["id"].split(".")[1] == preset]
    return sum(c["terminal"] == "completed" for c in runs) / len(runs)
rates = {p: rate(p) for p in ["full", "no_rescue", "no_nudge", "no_steps", "no_recovery", "bare"]}
assert max(rates, key=rates.get) == "full" and min(rates, key=rates.get) == "bare", rates
assert rates["full"] - rates["bare"] > 0.25, rates
PY

# The doc's tables are generated from this report.
python3 scripts/ablation-table.py --suite $ab/suite.json --report "$tmp/report.json" >"$tmp/table.md"
sed -n '/^<!-- ablation-table:begin/,/^<!-- ablation-table:end/p' docs/ablation.md |
  sed '1d;$d' >"$tmp/doc-table.md"
[[ -s $tmp/doc-table.md ]] || fail "docs/ablation.md has no generated table block"
diff -u "$tmp/doc-table.md" "$tmp/table.md" ||
  fail "docs/ablation.md is out of date: regenerate its tables with scripts/ablation-table.py"

# The committed suite is what its generator makes.
python3 scripts/gen-ablation-suite.py --mf-eval "$MF_BIN/mf-eval" --output "$tmp/suite.json" ||
  fail "the suite generator failed"
cmp "$tmp/suite.json" $ab/suite.json ||
  fail "fixtures/harness/ablation/suite.json differs from scripts/gen-ablation-suite.py's output"

echo "ablation: ok"
