#!/usr/bin/env bash
# mf-eval report (docs/formats/eval.md, "Rendering"): Markdown, JUnit XML read back by a real XML
# parser, and the HTML page opened in a real headless browser (Debian's chromium) with the network
# refused: it renders, its plots are there, and nothing it holds is read as markup — an expected
# value written to break out of every format comes back inert.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"

eval_bin="$MF_BIN/mf-eval"
fx=$MF_SOURCE_DIR/fixtures/forge
mkdir -p "$tmp/s"
cp "$fx"/task-*.json "$fx"/responses-*.json "$tmp/s/"
hostile='<script>alert(1)</script> | `tick` ]]> & "q" '"'"'a'"'"' '$'\x01'
jq --arg h "$hostile" '.cases += [{id: "hostile", task: "task-valid.json",
  model: "scripted:responses-valid.json", expect: {terminal: "completed", output: {risk: $h}}}]' \
  "$fx/eval-suite.json" >"$tmp/s/suite.json"
run 1 "$eval_bin" run --suite "$tmp/s/suite.json" --output "$tmp/r.json" --repeat 2 --traces "$tmp/s"
r=$tmp/r.json

# --- Markdown --------------------------------------------------------------------------------
run 0 "$eval_bin" report "$r" --format md
md=$tmp/out
grep -q '^# Eval report: forge-seed$' "$md" || fail "md title"
grep -q '^| 5 | 4 | 1 | 80.0% (' "$md" || fail "md summary: $(cat "$md")"
grep -q 'Each case ran 2 times' "$md" || fail "md repeats"
# Both attempts of the failing case, one table row each, the table never broken by the value.
[[ $(grep -c '^| `hostile\.[01]` | completed | output/risk: expected ' "$md") -eq 2 ]] ||
  fail "md failures: $(cat "$md")"
grep '^| `hostile' "$md" | grep -q '\\|' || fail "a pipe in a value was not escaped"
! grep -q '<script' "$md" || fail "markup in a value reached the Markdown"
grep -q '&lt;script&gt;' "$md" || fail "the Markdown lost the value"
! grep -q $'\x01' "$md" || fail "a control character reached the Markdown"
[[ $(grep '^| `hostile' "$md" | head -1 | sed 's/\\|//g' | tr -cd '|' | wc -c) -eq 4 ]] ||
  fail "a value broke the table's columns"

# --- JUnit -----------------------------------------------------------------------------------
run 0 "$eval_bin" report "$r" --format junit --output "$tmp/junit.xml"
python3 - "$tmp/junit.xml" "$hostile" <<'EOF' || fail "junit"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
suite = root.find("testsuite")
assert root.tag == "testsuites" and suite.get("tests") == "5" and suite.get("failures") == "1"
cases = {c.get("name"): c for c in suite.findall("testcase")}
assert sorted(cases) == ["hostile", "invalid-without-repair", "one-targeted-repair",
                         "provider-failure", "valid-first-response"], sorted(cases)
failure = cases["hostile"].find("failure")
assert failure is not None and failure.get("message").startswith("attempt 0: output/risk: expected ")
assert "<script>alert(1)</script>" in failure.get("message")  # the text, read back as text
assert "\ufffd" in failure.get("message")  # the control character XML cannot hold
assert all(c.find("failure") is None for n, c in cases.items() if n != "hostile")
EOF

# --- HTML in a real browser ------------------------------------------------------------------
# --traces names the directory as given on the command line (here from the source tree); the page
# links the traces relative to itself.
run 0 "$eval_bin" report "$r" --format html --output "$tmp/report.html" --traces "$tmp/s"
html=$tmp/report.html
# Two script elements, the page's own: the transcripts as JSON data and the code drawing them,
# which the page's Content-Security-Policy allows by its digest (no other script can run).
[[ $(grep -o '<script' "$html" | wc -l) -eq 2 ]] || fail "the page carries a foreign script element"
grep -q "script-src 'sha256-" "$html" || fail "no Content-Security-Policy"
grep -q '&lt;script&gt;alert(1)&lt;/script&gt;' "$html" || fail "the hostile value is not escaped"
! grep -Eq '(src|href)="(https?:)?//' "$html" || fail "the page refers to the network"
[[ $(grep -o '<svg' "$html" | wc -l) -ge 4 ]] || fail "plots missing"
grep -q 'href="s/hostile.1.jsonl"' "$html" || fail "no link to an attempt's trace"
[[ -s $tmp/s/hostile.1.jsonl ]] || fail "the linked trace is not there"
browser=$(command -v chromium || command -v chromium-browser || true)
[[ -n $browser ]] || fail "no chromium: scripts/install-deps.sh installs it"
shot() {
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --no-first-run --user-data-dir="$tmp/profile" --host-resolver-rules='MAP * ~NOTFOUND' \
    --enable-logging=stderr --v=0 "$@" "file://$html"
}
shot --screenshot="$tmp/shot.png" --window-size=1000,1400 >/dev/null 2>"$tmp/browser.err" ||
  fail "chromium failed: $(tail -5 "$tmp/browser.err")"
[[ $(head -c 8 "$tmp/shot.png" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] ||
  fail "no PNG screenshot"
[[ $(stat -c %s "$tmp/shot.png") -gt 10000 ]] || fail "the screenshot is empty"
! grep -E 'CONSOLE|Uncaught|net::ERR' "$tmp/browser.err" || fail "the page logged errors"
# The DOM the browser built: the plots as SVG, the hostile value as text, no element from it.
shot --dump-dom >"$tmp/dom.html" 2>/dev/null
[[ $(grep -o '<svg' "$tmp/dom.html" | wc -l) -ge 4 ]] || fail "the browser built no plots"
[[ $(grep -o '<script' "$tmp/dom.html" | wc -l) -eq 2 ]] || fail "the browser found a foreign script"
! grep -q '<script>alert' "$tmp/dom.html" || fail "the hostile value became markup"
grep -q 'Outcome per case and attempt' "$tmp/dom.html" || fail "no outcome matrix"

# --- --format on run and compare ------------------------------------------------------------
run 1 "$eval_bin" run --suite "$tmp/s/suite.json" --output "$tmp/r2.json" --repeat 2 --format junit
python3 -c 'import sys, xml.etree.ElementTree as ET; ET.parse(sys.argv[1])' "$tmp/out" ||
  fail "run --format junit printed no XML"
jq -e '.kind == "millforge_eval_report"' "$tmp/r2.json" >/dev/null || fail "run --format wrote no report"
run 2 "$eval_bin" run --suite "$tmp/s/suite.json" --output - --format md
jq '(.cases[] | select(.id == "provider-failure")) |= (.status = "failed" |
      .attempts[0].status = "failed" | .attempts[0].failures = [{check: "terminal",
      expected: "model_failed", actual: "completed"}]) | .summary = {cases: 5, passed: 3, failed: 2}' \
  "$r" >"$tmp/worse.json"
run 1 "$eval_bin" compare --baseline "$r" --candidate "$tmp/worse.json" --format md
grep -q '^# Eval comparison: gate failed$' "$tmp/out" || fail "compare md: $(cat "$tmp/out")"
grep -q '^| regressed | `provider-failure` |$' "$tmp/out" || fail "compare md regressed row"
grep -q '^- 1 case(s) regressed' "$tmp/out" || fail "compare md reasons"
run 0 "$eval_bin" compare --baseline "$r" --candidate "$r" --format html
grep -q '<h1 id="verdict">Eval comparison: gate passed</h1>' "$tmp/out" || fail "compare html"
run 2 "$eval_bin" compare --baseline "$r" --candidate "$r" --alpha nope
[[ ! -s $tmp/out ]] || fail "a usage error after the comparison was printed"

# --- Refusals --------------------------------------------------------------------------------
run 2 "$eval_bin" report "$r" --format pdf
run 2 "$eval_bin" report "$r"
jq '.summary.passed = 5' "$r" >"$tmp/lie.json"
run 2 "$eval_bin" report "$tmp/lie.json" --format md
[[ ! -s $tmp/out ]] || fail "a refused report rendered"

echo "eval_report: ok"
