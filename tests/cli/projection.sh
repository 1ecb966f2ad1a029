#!/usr/bin/env bash
# mf-compile project: the projection of fixtures/projection/ (visible tools, reasons, ledger,
# determinism, both modes), and every refusal: exit 2, one MF-P diagnostic with its position,
# nothing on stdout.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"

compile="$MF_BIN/mf-compile"
units=fixtures/projection/units.json
review=fixtures/projection/review.json

# --- The review turn ---------------------------------------------------------------------------
run 0 "$compile" project --units "$units" --input "$review"
[[ ! -s $tmp/err ]] || fail "a projection wrote to stderr"
cp "$tmp/out" "$tmp/first.json"
[[ $(jq -c .visible_tools "$tmp/out") == '["block","grep","submit"]' ]] ||
  fail "visible tools: $(jq -c .visible_tools "$tmp/out")"
# Canonical bytes: what jq -S -c would not reorder, ending in one newline.
[[ $(tail -c 1 "$tmp/out" | od -An -c | tr -d ' ') == '\n' ]] || fail "no final newline"
[[ $(jq -r '.rejected[] | select(.unit == "tool:bash") | .reasons[0]' "$tmp/out") == text_negation ]] ||
  fail "'without shell' did not reject bash through its alias"
[[ $(jq -r '.selected[] | select(.unit == "tool:grep") | .reasons[0]' "$tmp/out") == suggested_by:skill:code_review ]] ||
  fail "grep is not the review skill's suggestion"
[[ $(jq -r '.selected[] | select(.unit == "instruction:style") | .reasons[0]' "$tmp/out") == required_by:skill:code_review ]] ||
  fail "style is not required by the review skill"
# The ledger charges exactly what is rendered: guidance bytes plus the schemas' canonical bytes.
guidance_bytes=$(jq -j .guidance "$tmp/out" | wc -c)
schema_bytes=0
for i in $(seq 0 $(($(jq '.tool_schemas | length' "$tmp/out") - 1))); do
  schema_bytes=$((schema_bytes + $(jq -j ".tool_schemas[$i]" "$tmp/out" | "$MF_BIN/mf-store" canon | head -c -1 | wc -c)))
done
[[ $(jq .ledger.bytes "$tmp/out") -eq $((guidance_bytes + schema_bytes)) ]] ||
  fail "ledger bytes $(jq .ledger.bytes "$tmp/out") != $guidance_bytes + $schema_bytes"
[[ $(jq '[.ledger.items[].tokens] | add' "$tmp/out") -eq $(jq .ledger.charged "$tmp/out") ]] ||
  fail "ledger charged is not the sum of its items"
# Every visible tool is an active unit; no capability-denied unit is active.
jq -e '(.visible_tools | map("tool:" + .)) - .active == []' "$tmp/out" >/dev/null ||
  fail "a visible tool is not active"

# Same input, written differently (members reordered, sets reordered and repeated): same bytes.
jq '{budget_tokens, text, capabilities: (.capabilities | reverse + .)}' "$review" >"$tmp/review2.json"
run 0 "$compile" project --units "$units" --input "$tmp/review2.json"
cmp -s "$tmp/out" "$tmp/first.json" || fail "an equivalent input gave a different projection"
# Another turn of the same catalog: the review tools go, the test runner comes.
echo '{"text":"run tests for the parser","capabilities":["unrestricted.filesystem.read","terminal.intent","unrestricted.process.execute"]}' >"$tmp/tests.json"
run 0 "$compile" project --units "$units" --input "$tmp/tests.json"
[[ $(jq -c .visible_tools "$tmp/out") == '["bash","block","submit"]' ]] ||
  fail "test turn: $(jq -c .visible_tools "$tmp/out")"
[[ $(jq -r .fingerprint "$tmp/out") != $(jq -r .fingerprint "$tmp/first.json") ]] ||
  fail "two different turns share a fingerprint"
# Without the process capability bash is never visible, in either mode.
for mode in compiled all_tools; do
  jq --arg m $mode '.mode = $m | .capabilities = ["terminal.intent"]' "$tmp/tests.json" >"$tmp/nocap.json"
  run 0 "$compile" project --units "$units" --input "$tmp/nocap.json"
  jq -e '.visible_tools | index("bash") == null' "$tmp/out" >/dev/null || fail "$mode shows bash without its capability"
done
# all_tools shows every capable tool the text does not deny: "without shell" still hides bash,
# and a host selection still overrides the text.
jq '.mode = "all_tools"' "$review" >"$tmp/all.json"
run 0 "$compile" project --units "$units" --input "$tmp/all.json"
[[ $(jq -c .visible_tools "$tmp/out") == '["block","escalate_terminal_intent","find","grep","ls","read","reject","reject_terminal_intent","submit","submit_terminal_intent"]' ]] ||
  fail "all_tools: $(jq -c .visible_tools "$tmp/out")"
[[ $(jq -r '.rejected[] | select(.unit == "tool:bash") | .reasons[0]' "$tmp/out") == text_negation ]] ||
  fail "all_tools ignored 'without shell'"
jq '.selected = ["tool:bash"]' "$tmp/all.json" >"$tmp/all-pinned.json"
run 0 "$compile" project --units "$units" --input "$tmp/all-pinned.json"
jq -e '.visible_tools | index("bash") != null' "$tmp/out" >/dev/null ||
  fail "all_tools: the text overrode the host's selection of bash"
# --explain adds a readable account on stderr; stdout keeps the same JSON. stdin works for input.
stdin=$review run 0 "$compile" project --units "$units" --input - --explain
cmp -s "$tmp/out" "$tmp/first.json" || fail "--explain changed stdout"
grep -q '^visible tools: block, grep, submit$' "$tmp/err" || fail "explain: $(cat "$tmp/err")"
grep -q 'rejected tool:bash: text_negation' "$tmp/err" || fail "explain lacks the negation"

# --- Refusals ----------------------------------------------------------------------------------
echo '{"text":"x","mode":"everything"}' >"$tmp/mode.json"
refuse 2 MF-P004 "$compile" project --units "$units" --input "$tmp/mode.json"
grep -q "mode.json:1:.*(at /mode)\|line 1, column" "$tmp/err" || fail "no position: $(cat "$tmp/err")"
echo '{"text":"x","budget":5}' >"$tmp/unknown.json"
refuse 2 MF-P004 "$compile" project --input "$tmp/unknown.json"
echo '{"text":"x","selected":["skill:nothing"]}' >"$tmp/sel.json"
refuse 2 MF-P004 "$compile" project --units "$units" --input "$tmp/sel.json"
# A mandatory unit that cannot fit is a structural failure, never a silent drop.
jq '.budget_tokens = 50' "$review" >"$tmp/tiny.json"
refuse 2 MF-P005 "$compile" project --units "$units" --input "$tmp/tiny.json"
grep -q "tool:submit" "$tmp/err" || fail "MF-P005 does not name the mandatory units"
# Malformed units, each pointing at the offending member with its line.
printf '{"schema_version":"1.0","kind":"millforge_prompt_units","units":[\n{"id":"skill:x",\n"priorty":5}]}\n' >"$tmp/u1.json"
refuse 2 MF-P001 "$compile" project --units "$tmp/u1.json" --input "$review"
grep -q "3:1\|line 3" "$tmp/err" || fail "no line for the unknown member: $(cat "$tmp/err")"
grep -q "/units/0/priorty" "$tmp/err" || fail "no pointer: $(cat "$tmp/err")"
echo '{"schema_version":"1.0","kind":"millforge_prompt_units","units":[{"id":"widget:x"}]}' >"$tmp/u2.json"
refuse 2 MF-P001 "$compile" project --units "$tmp/u2.json" --input "$review"
echo '{"schema_version":"1.0","kind":"millforge_prompt_units","units":[{"id":"skill:x","requires":["skill:y"]}]}' >"$tmp/u3.json"
refuse 2 MF-P002 "$compile" project --units "$tmp/u3.json" --input "$review"
echo '{"schema_version":"1.0","kind":"millforge_prompt_units","units":[{"id":"tool:nosuch"}]}' >"$tmp/u4.json"
refuse 2 MF-P002 "$compile" project --units "$tmp/u4.json" --input "$review"
echo '{"schema_version":"1.0","kind":"millforge_prompt_units","units":[{"id":"skill:a","supersedes":["skill:b"]},{"id":"skill:b","supersedes":["skill:a"]}]}' >"$tmp/u5.json"
refuse 2 MF-P003 "$compile" project --units "$tmp/u5.json" --input "$review"
echo '{"schema_version":"1.0","kind":"millforge_prompt_units","units":[{"id":"skill:a"},{"id":"skill:a"}]}' >"$tmp/u6.json"
refuse 2 MF-P003 "$compile" project --units "$tmp/u6.json" --input "$review"
echo '{"schema_version":"1.0","kind":"millforge_tool_catalog","units":[]}' >"$tmp/u7.json"
refuse 2 MF-P001 "$compile" project --units "$tmp/u7.json" --input "$review"
# Usage: --input is required; project takes no operand; a missing file is MF-S013.
run 2 "$compile" project --units "$units"
grep -q -- "--input" "$tmp/err" || fail "no usage error for a missing --input"
refuse 2 MF-S013 "$compile" project --units "$tmp/nonexistent.json" --input "$review"
# A huge input text stays bounded: refused, not read into memory without limit.
head -c 300000 /dev/zero | tr '\0' 'a' | jq -Rs '{text: .}' >"$tmp/big.json"
refuse 2 MF-P004 "$compile" project --input "$tmp/big.json"

echo "projection: ok"
