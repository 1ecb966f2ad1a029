#!/usr/bin/env bash
# Failures a person can read (docs/diagnostics.md, "On stderr"): every line on stderr is one
# write(2), so eight processes sharing one stderr never tear each other's lines; the file prefix
# names the file the diagnostic is about, once, redacted, and nothing for an option value; a
# refused name gets the closest known one ("did you mean"); a harness source given where a
# compiled plan belongs says so and gives the mf-compile command.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"

mfc=$MF_BIN/mf-compile
mfr=$MF_BIN/mf-run
fx=$MF_SOURCE_DIR/fixtures
h=$fx/harness
plan=$h/ablation/golden.plan.json
command -v jq >/dev/null || fail "jq is not installed"

# line EXPECTED : stderr is exactly the line EXPECTED.
line() {
  [[ $(cat "$tmp/err") == "$1" ]] || fail "stderr: $(cat "$tmp/err")
expected: $1"
}

# --- The file prefix ----------------------------------------------------------------------------
# A bad --model value is about the command line, not the plan: no prefix.
run 2 "$mfr" --plan "$plan" --model bad --trace "$tmp/t.jsonl"
line 'mf-run: error MF-U001: unsupported model "bad" (scripted:FILE, sim:FILE?seed=S&faults=R[&kinds=a,b], openai:PROFILE.json, anthropic:PROFILE.json)'
# A missing model script is about that file, not the plan.
run 2 "$mfr" --plan "$plan" --model "scripted:$tmp/nope.json" --trace "$tmp/t.jsonl"
line "mf-run: $tmp/nope.json: error MF-S013: no such input file"
# A missing source names its path once.
(cd "$tmp" && run 2 "$mfc" summarize.yml)
line 'mf-compile: summarize.yml: error MF-S013: no such input file'
# A secret-looking path is redacted wherever it would appear.
key=sk-ant-api03-$(printf 'A%.0s' {1..40})
(cd "$tmp" && run 2 "$mfc" "$key.yml")
line 'mf-compile: [REDACTED].yml: error MF-S013: no such input file'
# A catalog's problem is named after the catalog, once, and kept in the JSON report's "source".
printf '{"kind": 1' >"$tmp/cat.json"
refuse 2 MF-S011 "$mfc" "$h/golden.yaml" --catalog "$tmp/cat.json" -o - \
  --diagnostics "$tmp/report.json"
[[ $(grep -o "$tmp/cat.json" "$tmp/err" | wc -l) -eq 1 ]] || fail "catalog named: $(cat "$tmp/err")"
grep -q "^mf-compile: $tmp/cat.json:1:11: error MF-S011" "$tmp/err" || fail "prefix: $(cat "$tmp/err")"
jq -e --arg s "$tmp/cat.json" '.diagnostics[0].source == $s' "$tmp/report.json" >/dev/null ||
  fail "the report's source: $(cat "$tmp/report.json")"

# --- Did you mean -------------------------------------------------------------------------------
sed 's/^  max_iterations:/  max_iteration:/' "$h/golden.yaml" >"$tmp/typo.yaml"
refuse 2 MF-S021 "$mfc" "$tmp/typo.yaml" -o -
grep -qF 'unknown field "max_iteration" (did you mean "max_iterations"?)' "$tmp/err" ||
  fail "member: $(cat "$tmp/err")"
sed 's/^model_profile_id: profile.golden/model_profile_id: profile.goldne/' "$h/simple-success.yaml" \
  >"$tmp/profile.yaml"
refuse 2 MF-R001 "$mfc" "$tmp/profile.yaml" --catalog "$h/catalog.json" --profiles "$h/profiles.json" -o -
grep -qF 'model profile "profile.goldne" is in no profiles file (did you mean "profile.golden"?)' \
  "$tmp/err" || fail "profile: $(cat "$tmp/err")"
sed 's/tools.write_report@1/tools.write_reprt@1/' "$h/simple-success.yaml" >"$tmp/tool.yaml"
refuse 2 MF-R002 "$mfc" "$tmp/tool.yaml" --catalog "$h/catalog.json" --profiles "$h/profiles.json" -o -
grep -qF '"tools.write_reprt@1" is in no catalog (did you mean "tools.write_report@1"?)' "$tmp/err" ||
  fail "tool_ref: $(cat "$tmp/err")"
refuse 2 MF-R002 "$mfr" tool builtin.pi_compat.raed@1 --workspace "$tmp" --args '{}'
grep -qF '(did you mean "builtin.pi_compat.read@1"?)' "$tmp/err" || fail "tool: $(cat "$tmp/err")"
# A namespace left out: the ids that end in the same name.
refuse 2 MF-R002 "$mfr" tool builtin.read@1 --workspace "$tmp" --args '{}'
line 'mf-run: error MF-R002: no built-in tool is named "builtin.read@1" (did you mean "builtin.artifact.read@1" or "builtin.pi_compat.read@1"?)'
sed 's/tools.write_report@1/builtin.read@1/' "$h/simple-success.yaml" >"$tmp/ns.yaml"
refuse 2 MF-R002 "$mfc" "$tmp/ns.yaml" --profiles "$h/profiles.json" -o -
grep -qF 'tool_ref "builtin.read@1" is in no catalog (did you mean "builtin.artifact.read@1" or "builtin.pi_compat.read@1"?)' \
  "$tmp/err" || fail "namespace: $(cat "$tmp/err")"
# A profile nothing is close to: the profiles there are.
sed 's/^model_profile_id: profile.golden/model_profile_id: profile.gpt/' "$h/simple-success.yaml" \
  >"$tmp/gpt.yaml"
refuse 2 MF-R001 "$mfc" "$tmp/gpt.yaml" --catalog "$h/catalog.json" --profiles "$h/profiles.json" -o -
grep -qF 'model profile "profile.gpt" is in no profiles file (profiles: profile.golden, profile.scripted)' \
  "$tmp/err" || fail "profiles: $(cat "$tmp/err")"
# A misspelt model kind.
run 2 "$mfr" --plan "$plan" --model "opneai:$tmp/p.json" --trace "$tmp/t.jsonl"
grep -qF "unsupported model \"opneai:$tmp/p.json\" (did you mean \"openai:$tmp/p.json\"?)" "$tmp/err" ||
  fail "model kind: $(cat "$tmp/err")"
run 2 "$mfr" --plan "$plan" --trce "$tmp/t.jsonl"
grep -qF "unrecognised option '--trce' (did you mean \"--trace\"?)" "$tmp/err" ||
  fail "option: $(cat "$tmp/err")"
run 2 "$mfr" tol
grep -qF "unknown command 'tol' (did you mean \"tool\"?)" "$tmp/err" || fail "command: $(cat "$tmp/err")"
run 2 "$MF_BIN/mf-store" --store "$tmp/s" gett
grep -qF "unknown command 'gett' (did you mean \"get\"?)" "$tmp/err" || fail "store: $(cat "$tmp/err")"
# mf-compile's first operand is a subcommand or a harness: no file, close to a subcommand.
(cd "$tmp" && run 2 "$mfc" verfy plan.json)
grep -qF "unknown command 'verfy' (did you mean \"verify\"?)" "$tmp/err" || fail "compile: $(cat "$tmp/err")"
(cd "$tmp" && run 2 "$mfc" verfy.yaml)
line 'mf-compile: verfy.yaml: error MF-S013: no such input file'
# Nothing close: no suggestion, the commands listed.
run 2 "$mfr" xyzzy
grep -qF "unknown command 'xyzzy' (commands: tool, rescue)" "$tmp/err" || fail "list: $(cat "$tmp/err")"

# --- How a run ended: its first cause, in one line ------------------------------------------------
# A loopback port nothing listens on (bound, then closed): refused on each of three attempts.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
jq --arg u "http://127.0.0.1:$port/v1" '.base_url = $u
  | .retry = {max_attempts: 3, initial_backoff_ms: 10, max_backoff_ms: 20}' \
  "$fx/profiles/local.json" >"$tmp/refused.json"
# --quiet silences progress, never the line that says why the run failed.
run 1 "$mfr" --task "$fx/forge/task-valid.json" --model "openai:$tmp/refused.json" \
  --trace "$tmp/c1.jsonl" --fixed-clock --quiet
line "mf-run: run ended model_failed after 1 model call(s) and 0 repair(s): connection refused by 127.0.0.1:$port (after 3 attempts) (trace $tmp/c1.jsonl, event 2)"
# A reply the verifier refuses, then a provider failure: the refusal is the first cause, and the
# trace's name is redacted like any other output.
run 1 "$mfr" --task "$fx/forge/task-valid.json" --model "scripted:$fx/forge/responses-invalid.json" \
  --trace "$tmp/$key.jsonl" --fixed-clock
line "mf-run: run ended model_failed after 2 model call(s) and 1 repair(s): output refused at \$: output is not strict JSON: invalid value (line 1, column 1) (trace $tmp/[REDACTED].jsonl, event 3)"
[[ $(jq -c 'select(.seq == 3) | .event' "$tmp/$key.jsonl") == '"verification_failed"' ]] ||
  fail "event 3 is not the refusal"
# A plan run: the output schema a tool's result failed, by pointer; a capability not granted.
ws=$fx/repository
jq '.tools[0].output_schema.properties.status.enum = ["collected"]' "$h/catalog.json" >"$tmp/cat2.json"
run 0 "$mfc" "$h/golden.yaml" --catalog "$tmp/cat2.json" --profiles "$h/profiles.json" -o -
mv "$tmp/out" "$tmp/strict.plan.json"
mkdir -p "$tmp/art"
run 1 "$mfr" --plan "$tmp/strict.plan.json" --model "scripted:$h/runs/golden-ok.json" --workspace "$ws" \
  --request '{"instruction": "Report on src/lib.rs."}' --artifacts "$tmp/art" --trace "$tmp/c3.jsonl"
line "mf-run: run ended model_failed after 4 model call(s) and 1 tool call(s): tool collect_context failed: Tool \"collect_context\" returned output that fails its schema: /status value is not one of the allowed values [\"collected\"] (trace $tmp/c3.jsonl, event 4)"
run 1 "$mfr" --plan "$plan" --model "scripted:$h/runs/golden-ok.json" --workspace "$ws" \
  --request '{"instruction": "Report on src/lib.rs."}' --artifacts "$tmp/art" --trace - \
  --output "$tmp/result.json" --capabilities workspace.read,terminal.intent
line 'mf-run: run ended tool_failed after 1 model call(s) and 1 tool call(s): tool collect_context refused: Tool "collect_context" needs capabilities that were not granted: artifact.write (trace on stdout, event 4)'
# A plan whose tools write artifacts, run without --artifacts: refused before the model is called or
# the trace exists, naming the node and the fix.
run 2 "$mfr" --plan "$plan" --model "scripted:$h/runs/golden-ok.json" --workspace "$ws" \
  --trace "$tmp/c5.jsonl"
line 'mf-run: error MF-U001: the plan needs an artifact directory: node "collect_context" (tools.collect_context@1) requires artifact.write; give --artifacts DIR'
[[ ! -e $tmp/c5.jsonl && ! -s $tmp/out ]] || fail "a refused run left a trace or a result"

# --- A terminal its tool can never return: refused at compile time, at its line --------------------
g14=$h/invalid/MF-G014-unreturnable-terminal.yaml
refuse 2 MF-G014 "$mfc" "$g14" --catalog "$h/catalog.json" \
  --catalog "$h/invalid/catalogs/MF-G014-fixed-terminals.json" --profiles "$h/profiles.json" -o -
grep -qxF "mf-compile: $g14:46:7: error MF-G014: terminal result BUILDER_COMPLETE can never be returned by tools.submit_complete@1, whose terminal_result is one of: COMPLETE (at /graph/nodes/complete/terminal_result)" \
  "$tmp/err" || fail "MF-G014: $(cat "$tmp/err")"

# --- A harness source where a plan belongs --------------------------------------------------------
cp "$h/golden.yaml" "$tmp/h.yaml"
cp "$h/golden.json" "$tmp/h.json"
cp "$h/golden.yaml" "$tmp/h-noext"
for src in h.yaml h.json h-noext; do
  (cd "$tmp" && run 2 "$mfr" --plan "$src" --model scripted:x.json --trace t.jsonl)
  line "mf-run: $src: error MF-L002: this is a harness source, not a compiled plan: compile it first with \`mf-compile $src -o -\` (or \`--out-dir DIR\`) and give the plan it prints"
done
# mf-replay --strict re-runs from the plan it is given.
ws=$fx/repository
# Any complete trace will do.
rm -rf "$tmp/art" && mkdir "$tmp/art"
run 0 "$mfr" --plan "$plan" --model "scripted:$h/runs/golden-ok.json" --workspace "$ws" \
  --request '{"instruction": "Report on src/lib.rs."}' --trace "$tmp/run.jsonl" --fixed-clock \
  --trace-content inline --artifacts "$tmp/art"
run 2 "$MF_BIN/mf-replay" --strict --plan "$tmp/h.yaml" --workspace "$ws" "$tmp/run.jsonl"
grep -qF "$tmp/h.yaml: error MF-L002: this is a harness source, not a compiled plan: compile it first with \`mf-compile $tmp/h.yaml -o -\`" \
  "$tmp/err" || fail "replay: $(cat "$tmp/err")"
# A suite case's plan member.
jq -n --arg ws "$ws" '{suite_id: "s", cases: [{id: "c", plan: "h.json", model: "scripted:x.json",
  workspace: $ws, request: {instruction: "i"}, expect: {terminal: "completed"}}]}' >"$tmp/suite.json"
run 2 "$MF_BIN/mf-eval" run --suite "$tmp/suite.json" --output "$tmp/r.json"
grep -qF "this is a harness source, not a compiled plan: compile it first with \`mf-compile $tmp/h.json -o -\`" \
  "$tmp/err" || fail "suite: $(cat "$tmp/err")"

# --- One line, one write --------------------------------------------------------------------------
# Eight processes at a time share one stderr (as under make -j), forty rounds: every line is one
# whole diagnostic of one of them.
: >"$tmp/shared"
for round in $(seq 40); do
  for k in 1 2 3 4; do
    "$mfr" --plan "$plan" --model bad --trace "$tmp/t.jsonl" 2>>"$tmp/shared" &
    "$mfc" "$tmp/missing-$k.yml" 2>>"$tmp/shared" &
  done
  wait
done
bad=$(grep -cvE '^mf-run: error MF-U001: unsupported model "bad" \(scripted:FILE, sim:FILE\?seed=S&faults=R\[&kinds=a,b\], openai:PROFILE\.json, anthropic:PROFILE\.json\)$|^mf-compile: '"$tmp"'/missing-[1-4]\.yml: error MF-S013: no such input file$' \
  "$tmp/shared" || true)
[[ $bad -eq 0 ]] || fail "$bad torn lines: $(grep -vE '^mf-(run|compile): ' "$tmp/shared" | head -3)"
[[ $(wc -l <"$tmp/shared") -eq 320 ]] || fail "$(wc -l <"$tmp/shared") lines, expected 320"

# Counted exactly where strace runs: one write(2) to stderr per diagnostic, usage error (two
# lines) included. Not under the sanitizers: LeakSanitizer refuses to run under ptrace and says so
# on stderr in writes of its own.
if ! grep -q __asan_init "$MF_BIN/mf-run" && command -v strace >/dev/null && strace -f -qq -e trace=write -o /dev/null true 2>/dev/null; then
  writes() {
    strace -f -qq -e trace=write -o "$tmp/strace" "$@" >/dev/null 2>&1 || true
    grep -c '^[0-9]* *write(2,' "$tmp/strace" || true
  }
  for cmd in "$mfr --plan $plan --model bad --trace $tmp/t.jsonl" "$mfc $tmp/missing.yml" \
    "$mfr --trce x" "$mfr tol" "$MF_BIN/mf-eval nope"; do
    # shellcheck disable=SC2086
    n=$(writes $cmd)
    [[ $n -eq 1 ]] || fail "$cmd: $n writes to stderr, expected 1"
  done
fi

echo "readable_failures: ok"
