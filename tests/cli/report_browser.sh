#!/usr/bin/env bash
# The report pages in a real browser (docs/reports.md): a campaign of two scripted models x two
# guardrail presets rendered as HTML and opened in headless chromium, whose DOM must hold the
# variant matrix with the campaign's numbers, an attempt's transcript (turns, tool calls with their
# arguments, guardrail decisions, corrections, the terminal and its artifacts' digests) with a
# reply written to break out of the page kept as text, the plots' axes and legends; the same
# transcript from the store with --trace-content store, and the digest-only note without it; the
# compare page with each gate's decision; the Markdown matrix. Screenshots go to
# target/ci-artifacts/.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"

eval_bin="$MF_BIN/mf-eval"
fx=$MF_SOURCE_DIR/fixtures
shots=$MF_SOURCE_DIR/target/ci-artifacts
mkdir -p "$tmp/s" "$tmp/trace dir" "$tmp/pages" "$shots"
cp "$fx/harness/ablation/golden.plan.json" "$fx/harness/runs/golden-ok.json" "$tmp/s/"
# The recovering model's second reply carries markup meant to end the page's script element.
hostile='</script><img src=x onerror=alert(1)> draft first.'
jq --arg h "$hostile" '.steps[1].content = ($h + "\n" + (.steps[1].content | split("\n")[1]))' \
  "$fx/harness/runs/golden-recover.json" >"$tmp/s/golden-recover.json"
jq -n --arg ws "$fx/repository" '{suite_id: "browser", cases: [
  {id: "report", plan: "golden.plan.json", model: "scripted:golden-ok.json", workspace: $ws,
   request: {instruction: "Report on src/lib.rs."}, expect: {terminal: "completed"}},
  {id: "strict", plan: "golden.plan.json", model: "scripted:golden-ok.json", workspace: $ws,
   request: {instruction: "Report on src/lib.rs."}, expect: {terminal: "completed", model_calls: 3}}]}' \
  >"$tmp/s/suite.json"
campaign() {
  "$eval_bin" run --suite "$tmp/s/suite.json" --fixed-clock --repeat 2 --guardrails full \
    --guardrails bare "$@"
}
run 1 campaign --output "$tmp/r.json" --traces "$tmp/trace dir" --trace-content inline \
  --model "ok=scripted:$tmp/s/golden-ok.json" --model "recover=scripted:$tmp/s/golden-recover.json"
r=$tmp/r.json
# The replies' recording is part of the campaign: its journal does not resume under another mode.
cp "$r" "$tmp/r.before"
run 2 campaign --output "$tmp/r.json" --resume --model "ok=scripted:$tmp/s/golden-ok.json" \
  --model "recover=scripted:$tmp/s/golden-recover.json"
grep -q MF-V003 "$tmp/err" || fail "a journal resumed under another --trace-content"
cmp -s "$r" "$tmp/r.before" || fail "a refused resume rewrote the report"
# Its shards record it, and merge into the report one run writes.
for i in 1 2; do
  run 1 campaign --output "$tmp/shard$i.json" --shard "$i/2" --trace-content inline \
    --model "ok=scripted:$tmp/s/golden-ok.json" --model "recover=scripted:$tmp/s/golden-recover.json"
done
jq -e '.shard.settings.trace_content == "inline"' "$tmp/shard1.json" >/dev/null || fail "shard settings"
run 1 "$eval_bin" merge --output "$tmp/merged.json" "$tmp/shard1.json" "$tmp/shard2.json"
cmp -s "$r" "$tmp/merged.json" || fail "the merged shards differ from one run"

# --- Markdown: the variant table and the cases across variants --------------------------------
run 0 "$eval_bin" report "$r" --format md
md=$tmp/out
grep -qF '| `recover.full` | `scripted:'"$tmp"'/s/golden-recover.json` | full | 2 | 1 | 50.0% | 9.5%–90.5% | 50.0% | 50.0% |' "$md" ||
  fail "md variant row: $(grep recover.full "$md")"
grep -qF '| `ok.bare` | `scripted:'"$tmp"'/s/golden-ok.json` | bare | 2 | 2 | 100.0% | 34.2%–100.0% | 100.0% | 100.0% |' "$md" ||
  fail "md variant row ok.bare"
grep -qx '| `strict` | passed 2/2 | passed 2/2 | failed 0/2 | failed 0/2 |' "$md" ||
  fail "md matrix row: $(grep '^| `strict`' "$md")"
grep -qx '| `report` | passed 2/2 | passed 2/2 | failed 0/2 | passed 2/2 |' "$md" || fail "md matrix row report"

# --- The HTML page in chromium ---------------------------------------------------------------
browser=$(command -v chromium || command -v chromium-browser || true)
[[ -n $browser ]] || fail "no chromium: scripts/install-deps.sh installs it"
# browser ARGS... URL: chromium headless in its own session and profile, the network refused;
# whatever it started is gone when it returns.
browser() {
  local pid rc=0
  setsid timeout --kill-after=5 60 "$browser" --headless --no-sandbox --disable-gpu \
    --disable-dev-shm-usage --no-first-run --user-data-dir="$tmp/profile" \
    --host-resolver-rules='MAP * ~NOTFOUND' --enable-logging=stderr --v=0 "$@" \
    2>>"$tmp/browser.err" &
  pid=$!
  wait "$pid" || rc=$?
  kill -KILL -- "-$pid" 2>/dev/null || true
  return "$rc"
}
# The page lives apart from the traces: its links lead there relative to itself.
run 0 "$eval_bin" report "$r" --format html --traces "$tmp/trace dir" --output "$tmp/pages/report.html"
page=$tmp/pages/report.html
grep -q 'href="../trace%20dir/strict.recover.full.0.jsonl"' "$page" || fail "trace link not relative"
# The address names one attempt: its transcript is drawn at load.
browser --dump-dom "file://$page#transcript-strict.recover.full.0" >"$tmp/dom.html"
browser --screenshot="$shots/report_browser.png" --window-size=1200,2000 "file://$page" >/dev/null
[[ $(head -c 8 "$shots/report_browser.png" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] ||
  fail "no PNG screenshot"
! grep -E 'CONSOLE|Uncaught|Refused to' "$tmp/browser.err" || fail "the page logged errors"
dom() { # dom FILE: the facts the assertions below read, one per line, from the browser's DOM.
  python3 - "$1" <<'PY'
import sys
from html.parser import HTMLParser
class P(HTMLParser):
    def __init__(self):
        super().__init__(); self.stack = []; self.out = []; self.row = None; self.text = []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tr" and "data-variant" in a: self.row = a["data-variant"]
        if tag == "tr" and "data-gate" in a: self.row = "gate " + a["data-gate"]
        if tag == "tr" and "data-change" in a: self.row = "change " + a["data-change"]
        key = None
        if tag == "td" and "data-metric" in a: key = "variant %s %s" % (self.row, a["data-metric"])
        elif tag == "td" and "data-case" in a: key = "cell %s %s" % (a["data-case"], a["data-variant"])
        elif tag == "tr" and ("data-gate" in a or "data-change" in a): key = self.row
        elif tag in ("h4", "figcaption", "pre") or (tag == "div" and a.get("class") in
                ("guardrail", "correction", "who", "result ok")) or tag == "text" or \
                (tag == "section" and a.get("class") == "turn") or tag == "p" and a.get("class") == "note":
            key = tag + "." + (a.get("class") or "")
        if tag in ("img", "script", "iframe"): self.out.append("element " + tag + " " + repr(sorted(a.items())))
        if tag in ("tr", "td", "h4", "figcaption", "pre", "div", "text", "p", "section"):
            self.stack.append((tag, key, len(self.text)))
    def handle_endtag(self, tag):
        if tag == "tr": self.row = None
        if self.stack and self.stack[-1][0] == tag:
            _, key, start = self.stack.pop()
            if key: self.out.append(key + ": " + " ".join(" ".join(self.text[start:]).split()))
    def handle_data(self, d): self.text.append(d)
p = P(); p.feed(open(sys.argv[1]).read()); print("\n".join(p.out))
PY
}
dom "$tmp/dom.html" >"$tmp/facts"
has() { grep -qxF -- "$1" "$tmp/facts" || fail "the DOM lacks '$1'"; }
# The variant matrix, with the campaign's numbers.
has "variant recover.full pass_rate: 50.0%"
has "variant recover.full wilson95: 9.5%–90.5%"
has "variant recover.bare pass_at_k: 0.0%"
has "variant ok.full pass_hat_k: 100.0%"
has "variant ok.bare input_tokens: 530"
has "cell strict recover.full: failed 0/2"
has "cell report recover.full: passed 2/2"
has "cell report ok.bare: passed 2/2"
# Every plot with its title, axis and legend.
has "figcaption.: Pass rate per variant (cases)"
has "text.axis: pass rate (%)"
has "text.: 95% Wilson interval"
has "text.axis: input tokens"
has "text.: median 530"
has "figcaption.: Outcome per case and attempt"
has "text.: attempt (repeat index) →"
# The transcript: six turns, the calls with their arguments, the guardrails' decisions and the
# corrections, the terminal with its artifacts' digests; the hostile reply as text.
[[ $(grep -c '^section.turn: ' "$tmp/facts") -eq 6 ]] || fail "turns: $(grep -c '^section.turn' "$tmp/facts")"
has "h4.: Turn 1 (initial)"
has "h4.: Turn 6 (turn)"
grep -q '^div.guardrail: Guardrail premature_terminal: \[StepEnforcementError\]' "$tmp/facts" ||
  fail "no guardrail decision"
grep -q '^div.guardrail: Denied collect_contexts (call-3-1): unknown_tool$' "$tmp/facts" ||
  fail "no denial"
grep -q '^div.correction: Correction sent (tool): \[PrerequisiteError\]' "$tmp/facts" ||
  fail "no correction"
has 'pre.args: { "body": "One panic path: parse() unwraps user input.", "path": "src/lib.rs" }'
has "h4.: Terminal: completed"
grep -q '^div.result ok: ← call-5-1 ok: Wrote artifact report (75 bytes) — output sha256 ' "$tmp/facts" ||
  fail "no tool result"
grep -q "9cb7d653900824484cd5f26c7a26d61bd243c2f6086f066f46e002a2d3518b58" "$tmp/dom.html" ||
  fail "no artifact digest"
has "pre.content: $hostile {\"name\": \"write_report\", \"arguments\": {\"path\": \"src/lib.rs\", \"body\": \"draft\"}}"
! grep -q '^element img' "$tmp/facts" || fail "a reply became markup"
[[ $(grep -c '^element script' "$tmp/facts") -eq 2 ]] || fail "a reply added a script"

# --- The store: replies kept there, the traces read from there; digests only say so -------------
run 1 campaign --output "$tmp/st.json" --store "$tmp/st" --trace-content store \
  --model "ok=scripted:$tmp/s/golden-ok.json" --model "recover=scripted:$tmp/s/golden-recover.json"
run 0 "$eval_bin" report "$tmp/st.json" --format html --store "$tmp/st" --output "$tmp/pages/st.html"
browser --dump-dom "file://$tmp/pages/st.html#transcript-strict.recover.full.1" >"$tmp/dom.html"
dom "$tmp/dom.html" >"$tmp/facts"
has "div.who: Model (reply from the store)"
has "pre.content: I will finish now."
[[ $(grep -c '^section.turn: ' "$tmp/facts") -eq 6 ]] || fail "store: turns"
run 1 campaign --output "$tmp/d.json" --traces "$tmp/trace dir" --model "ok=scripted:$tmp/s/golden-ok.json" \
  --model "recover=scripted:$tmp/s/golden-recover.json"
run 0 "$eval_bin" report "$tmp/d.json" --format html --traces "$tmp/trace dir" --output "$tmp/pages/d.html"
browser --dump-dom "file://$tmp/pages/d.html#transcript-report.ok.full.0" >"$tmp/dom.html"
dom "$tmp/dom.html" >"$tmp/facts"
grep -q '^p.note: The replies are recorded as digests only (--trace-content digest)' "$tmp/facts" ||
  fail "no digest-only note"
grep -q '^div.who: Model: reply of 0 bytes, sha256 e3b0c44298fc1c14… (text not recorded)$' "$tmp/facts" ||
  fail "no reply digest"
run 2 campaign --output - --trace-content store --model "ok=scripted:$tmp/s/golden-ok.json"
grep -q 'trace-content store needs --store' "$tmp/err" || fail "store mode without a store"

# --- compare: the models swapped between the columns -----------------------------------------
run 1 campaign --output "$tmp/swapped.json" --model "ok=scripted:$tmp/s/golden-recover.json" \
  --model "recover=scripted:$tmp/s/golden-ok.json"
run 1 "$eval_bin" compare --baseline "$r" --candidate "$tmp/swapped.json" --alpha 0.05 --format html
cp "$tmp/out" "$tmp/pages/compare.html"
browser --dump-dom "file://$tmp/pages/compare.html" >"$tmp/dom.html"
browser --screenshot="$shots/report_browser_compare.png" --window-size=1000,900 \
  "file://$tmp/pages/compare.html" >/dev/null
dom "$tmp/dom.html" >"$tmp/facts"
grep -q '^gate max-regressions: max-regressions 0 3 failed$' "$tmp/facts" ||
  fail "regressions gate: $(grep '^gate' "$tmp/facts")"
grep -q '^gate alpha (McNemar p): alpha (McNemar p) 0.05 1 passed$' "$tmp/facts" || fail "alpha gate"
grep -q '^change regressed: regressed (passed → failed) 3 report.ok.bare.0' "$tmp/facts" ||
  grep -q '^change regressed: regressed (passed → failed) 3 report.ok.bare ' "$tmp/facts" ||
  fail "regressed: $(grep '^change' "$tmp/facts")"
grep -q '^change improved: improved (failed → passed) 3 ' "$tmp/facts" || fail "improved"
grep -q '^change unchanged: unchanged 2 report.ok.full report.recover.full$' "$tmp/facts" ||
  fail "unchanged: $(grep '^change unchanged' "$tmp/facts")"
run 1 "$eval_bin" compare --baseline "$r" --candidate "$tmp/swapped.json" --alpha 0.05 --format md
grep -qx '| max-regressions | 0 | 3 | \*\*failed\*\* |' "$tmp/out" || fail "compare md gate row"
grep -qx '| alpha (McNemar p) | 0.05 | 1 | passed |' "$tmp/out" || fail "compare md alpha row"
grep -q '^| unchanged | `report.ok.full`, `report.recover.full` |$' "$tmp/out" || fail "compare md unchanged"

# Nothing the browser started outlives it.
! pgrep -f -- "--user-data-dir=$tmp/profile" >/dev/null || fail "a browser process outlived the test"
echo "report_browser: ok"
