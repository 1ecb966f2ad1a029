#!/usr/bin/env bash
# mf-eval's JUnit XML (docs/formats/eval.md, "Rendering"): a campaign of two models, two presets
# and two attempts per case whose attempts disagree, validated with xmllint against the Jenkins
# xUnit plugin's JUnit schema (tests/schema/junit-10.xsd); the campaign's identity as properties;
# attempts that disagree as Surefire's flakyFailure, a case that failed every attempt as a failure
# and rerunFailure; each attempt's trace as a GitLab attachment; when and where it was rendered
# unless the clock is fixed.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"
unset MF_FIXED_CLOCK

command -v xmllint >/dev/null || fail "no xmllint: scripts/install-deps.sh installs libxml2-utils"
xsd=$MF_SOURCE_DIR/tests/schema/junit-10.xsd
eval_bin="$MF_BIN/mf-eval"
fx=$MF_SOURCE_DIR/fixtures
cd "$tmp"
cp "$fx/harness/ablation/golden.plan.json" "$fx/harness/runs/golden-ok.json" .
jq -n --arg ws "$fx/repository" '{suite_id: "matrix", cases: [{id: "report",
  plan: "golden.plan.json", model: "sim:golden-ok.json?seed=3&faults=0.5", workspace: $ws,
  request: {instruction: "Report on src/lib.rs."}, expect: {terminal: "completed"}}]}' >suite.json
mkdir traces
# Seeds chosen so the noisy model fails both attempts under bare and one of two under full.
run 1 "$eval_bin" run --suite suite.json --fixed-clock --repeat 2 --traces traces --output r.json \
  --model "calm=sim:golden-ok.json?seed=1&faults=0" --model "noisy=sim:golden-ok.json?seed=5&faults=0.5" \
  --guardrails full --guardrails bare
jq -e '[.cases[] | [.attempts[].status]] == [["passed","passed"], ["passed","passed"],
  ["failed","failed"], ["failed","passed"]]' r.json >/dev/null ||
  fail "the attempts are not the mix this test needs: $(jq -c '[.cases[] | [.attempts[].status]]' r.json)"

# Rendered now: validates, and says when and where.
before=$(date -u +%Y-%m-%dT%H:%M:%S)
run 0 "$eval_bin" report r.json --format junit --traces traces --output junit.xml
after=$(date -u +%Y-%m-%dT%H:%M:%S)
xmllint --noout --schema "$xsd" junit.xml 2>"$tmp/xmllint.err" || fail "junit.xml: $(cat "$tmp/xmllint.err")"
python3 - junit.xml "$before" "$after" "$(hostname)" "$(sha256sum suite.json | cut -c1-64)" <<'EOF' || fail "junit.xml"
import sys, xml.etree.ElementTree as ET
path, before, after, host, digest = sys.argv[1:]
root = ET.parse(path).getroot()
(suite,) = root.findall("testsuite")
assert before <= suite.get("timestamp") <= after, suite.get("timestamp")
assert suite.get("hostname") == host, suite.get("hostname")
props = [(p.get("name"), p.get("value")) for p in suite.find("properties")]
assert props == [("suite_sha256", digest),
                 ("model", "calm=sim:golden-ok.json?seed=1&faults=0"),
                 ("model", "noisy=sim:golden-ok.json?seed=5&faults=0.5"),
                 ("preset", "bare"), ("preset", "full"), ("seed", "1"), ("seed", "5"),
                 ("repeat", "2")], props
cases = {c.get("name"): c for c in suite.findall("testcase")}
assert sorted(cases) == ["report.calm.bare", "report.calm.full", "report.noisy.bare",
                         "report.noisy.full"], sorted(cases)
kids = {n: [k.tag for k in c] for n, c in cases.items()}
assert kids["report.calm.bare"] == ["system-out"] and kids["report.calm.full"] == ["system-out"]
# Failed every time: the first attempt is the failure, the second a rerun that failed too.
assert kids["report.noisy.bare"] == ["failure", "rerunFailure", "system-out"], kids
rerun = cases["report.noisy.bare"].find("rerunFailure")
assert rerun.get("message").startswith("attempt 1: terminal: expected completed")
assert rerun.find("system-out").text == "[[ATTACHMENT|traces/report.noisy.bare.1.jsonl]]\n"
# Passed eventually: flaky, no failure.
assert kids["report.noisy.full"] == ["flakyFailure", "system-out"], kids
flaky = cases["report.noisy.full"].find("flakyFailure")
assert flaky.get("type") == "expectation" and flaky.get("message").startswith("attempt 0: ")
assert flaky.find("stackTrace").text.startswith("[{")
assert suite.get("tests") == "4" and suite.get("failures") == "1" and suite.get("errors") == "0"
for name, c in cases.items():
    assert c.find("system-out").text == "".join(
        f"[[ATTACHMENT|traces/{name}.{n}.jsonl]]\n" for n in (0, 1)), c.find("system-out").text
EOF
for n in 0 1; do [[ -s traces/report.noisy.full.$n.jsonl ]] || fail "an attached trace is missing"; done

# Under the fixed clock (the flag or MF_FIXED_CLOCK=1) the XML is a function of the report alone.
run 0 "$eval_bin" report r.json --format junit --traces traces --fixed-clock
cp out fixed.xml
! grep -Eq 'timestamp=|hostname=' fixed.xml || fail "a fixed-clock rendering says when or where"
xmllint --noout --schema "$xsd" fixed.xml 2>/dev/null || fail "fixed.xml does not validate"
MF_FIXED_CLOCK=1 run 0 "$eval_bin" report r.json --format junit --traces traces
cmp -s out fixed.xml || fail "MF_FIXED_CLOCK=1 renders differently from --fixed-clock"
# run --format junit under --fixed-clock prints the same XML; without --traces no attachments.
rm -f traces/* r2.json
run 1 "$eval_bin" run --suite suite.json --fixed-clock --repeat 2 --traces traces --output r2.json \
  --model "calm=sim:golden-ok.json?seed=1&faults=0" --model "noisy=sim:golden-ok.json?seed=5&faults=0.5" \
  --guardrails full --guardrails bare --format junit
cmp -s out fixed.xml || fail "run --format junit differs from report --format junit"
run 0 "$eval_bin" report r.json --format junit --fixed-clock
! grep -q ATTACHMENT out || fail "attachments without --traces"
xmllint --noout --schema "$xsd" out 2>/dev/null || fail "the XML without traces does not validate"

echo "eval_junit: ok"
