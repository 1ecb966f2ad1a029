#!/usr/bin/env bash
# Projected harness runs (docs/harness-run.md, "Projection"): a plan with a projection section
# shows each model turn only what that turn's projection compiled. Hidden tools stay bound and are
# refused as not visible, never as unknown; showing a tool never authorizes it; a mandatory unit
# that cannot fit is refused before the trace (first turn) or ends the run (later turn); the
# requests a real HTTP client sends carry exactly the visible schemas and the guidance; and the
# verifier, strict replay and the plan loader refuse every rewritten projection.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/wire.bash"
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
unset MF_STORE MF_FIXED_CLOCK

fx=$MF_SOURCE_DIR/fixtures
px=$fx/harness/projected
ws=$fx/repository
compile="$MF_BIN/mf-compile"
replay="$MF_BIN/mf-replay"

# source_with JQ OUT : the fixture harness (its JSON twin), edited by JQ.
source_with() { jq "$1" "$px/projected.json" >"$2"; }

# plan_of SOURCE OUT : compiles SOURCE to OUT.
plan_of() {
  run 0 "$compile" "$1" -o -
  cp "$tmp/out" "$2"
}

# proj_run PLAN SCRIPT TRACE [ARGS...] : runs PLAN with the scripted model SCRIPT.
proj_run() {
  local plan=$1 script=$2 trace=$3 rc=${RC:-0}
  shift 3
  run "$rc" "$MF_BIN/mf-run" --plan "$plan" --model "scripted:$script" --workspace "$ws" \
    --request "$px/request.json" --trace "$trace" --trace-content inline --fixed-clock \
    --run-id proj "$@"
}

# Every request sends exactly what the projection before it showed.
requests_match_projections() {
  jq -s -e '[.[] | select(.event == "projection_compiled" or .event == "model_requested")]
            | . as $e | [range(0; length; 2)]
            | all(. as $i | $e[$i].event == "projection_compiled"
                  and $e[$i + 1].event == "model_requested"
                  and $e[$i].visible == $e[$i + 1].tools and $e[$i].call == $e[$i + 1].call)' \
    "$1" >/dev/null || fail "$1: a request does not send what its projection showed"
}

# expect_visible TRACE JSON : the tools each turn of TRACE showed, as one JSON array of arrays.
expect_visible() {
  local got
  got=$(jq -s -c '[.[] | select(.event == "projection_compiled") | .visible]' "$1")
  [[ $got == "$2" ]] || fail "$1: visible per turn $got, expected $2"
}

# --- Compilation ------------------------------------------------------------------------------
plan=$tmp/projected.plan.json
plan_of "$px/projected.yaml" "$plan"
jq -e '.projection | .mode == "compiled" and .budget_tokens == 1200 and .candidate_limit == 16
       and (.units | length) == 8 and (.catalog_sha256 | test("^[0-9a-f]{64}$"))' "$plan" >/dev/null ||
  fail "the plan does not carry the projection: $(jq -c .projection "$plan")"
run 0 "$compile" verify "$plan"
# YAML and JSON sources compile to the same bytes; authoring order of units does not matter.
run 0 "$compile" "$px/projected.json" -o -
cmp -s "$tmp/out" "$plan" || fail "projected.yaml and projected.json compile to different plans"
source_with '.projection.units |= reverse' "$tmp/reversed.json"
run 0 "$compile" "$tmp/reversed.json" -o -
cmp -s "$tmp/out" "$plan" || fail "unit order changed the plan"

# --- A projected run: hidden tools are bound, refused as not visible, never run ---------------
proj_run "$plan" "$px/run-ok.json" "$tmp/ok.jsonl"
[[ $(jq -r .terminal "$tmp/out") == completed ]] || fail "projected run: $(cat "$tmp/out")"
expect_visible "$tmp/ok.jsonl" '[["read"],["read"],["read"],["read","submit"]]'
requests_match_projections "$tmp/ok.jsonl"
[[ $(jq -s -c '[.[] | select(.event == "guardrail_violation") | .kind]' "$tmp/ok.jsonl") == \
   '["not_visible","not_visible"]' ]] || fail "the hidden calls were not refused as not visible"
grep -q 'unknown_tool' "$tmp/ok.jsonl" && fail "a hidden bound tool was called unknown"
[[ $(jq -s '[.[] | select(.event == "tool_called" and .tool == "bash")] | length' "$tmp/ok.jsonl") == 0 ]] ||
  fail "a hidden tool ran"
jq -s -e '[.[] | select(.event == "guardrail_violation")][0].message
          | test("not offered this turn") and (test("bash, ") | not) and test("offered now are: read\\.")' \
  "$tmp/ok.jsonl" >/dev/null || fail "the correction names tools the turn does not show"
# Skill guidance is a unit like any other: it is active, and charged.
jq -s -e '[.[] | select(.event == "projection_compiled")] | all(.active_units | index("skill:quote"))' \
  "$tmp/ok.jsonl" >/dev/null || fail "the guidance unit is not active"
jq -s -e '.[0].projection.catalog_sha256' "$tmp/ok.jsonl" >/dev/null || fail "run_started names no catalog"
[[ $(jq -s -r '.[0].projection.catalog_sha256' "$tmp/ok.jsonl") == $(jq -r .projection.catalog_sha256 "$plan") ]] ||
  fail "run_started names another catalog than the plan's"
run 0 "$replay" "$tmp/ok.jsonl"
run 0 "$replay" --strict --plan "$plan" --workspace "$ws" "$tmp/ok.jsonl"
[[ $(jq -r .status "$tmp/out") == identical ]] || fail "strict replay: $(cat "$tmp/out")"
# The same run twice is the same trace, byte for byte.
proj_run "$plan" "$px/run-ok.json" "$tmp/ok2.jsonl"
cmp -s "$tmp/ok.jsonl" "$tmp/ok2.jsonl" || fail "a projected run is not deterministic"

# The fingerprint names the turn's input: another instruction, another first fingerprint.
first_fp() { jq -s -r '[.[] | select(.event == "projection_compiled")][0].fingerprint' "$1"; }
run 0 "$MF_BIN/mf-run" --plan "$plan" --model "scripted:$px/run-ok.json" --workspace "$ws" \
  --request '{"instruction": "Hello there."}' --trace "$tmp/hello.jsonl" --fixed-clock --run-id proj
[[ $(first_fp "$tmp/hello.jsonl") != "$(first_fp "$tmp/ok.jsonl")" ]] ||
  fail "another instruction gave the same fingerprint"
# An always-active tool is shown on a request that says nothing about it; the guidance is not.
[[ $(jq -s -c '[.[] | select(.event == "projection_compiled")][0] | [.visible, .active_units]' "$tmp/hello.jsonl") == \
   '[["read"],["tool:read"]]' ]] || fail "always on an unrelated request: $(jq -s -c '[.[] | select(.event == "projection_compiled")][0]' "$tmp/hello.jsonl")"

# Turn A shows a tool, turn B hides it, turn C shows it again, and then it runs: hiding never
# unbinds (ls follows the first turn and a text reply).
source_with '.projection.units |= map(if .id == "tool:ls" then .triggers = [{signal: "first_turn", weight: 50},
             {signal: "corrected:text_response", weight: 50}] else . end)' "$tmp/abc.json"
plan_of "$tmp/abc.json" "$tmp/abc.plan.json"
cat >"$tmp/abc-run.json" <<'EOF'
{"steps": [{"tool_calls": [{"name": "read", "arguments": {"path": "src/lib.rs"}}]},
           {"content": "Let me think about it."},
           {"tool_calls": [{"name": "ls", "arguments": {"path": "src"}}]},
           {"tool_calls": [{"name": "submit", "arguments": {"terminal_result": "COMPLETE", "summary": "ok"}}]}]}
EOF
proj_run "$tmp/abc.plan.json" "$tmp/abc-run.json" "$tmp/abc.jsonl"
expect_visible "$tmp/abc.jsonl" '[["ls","read"],["read","submit"],["ls","read","submit"],["read","submit"]]'
jq -s -e '([.[] | select(.event == "tool_called") | .tool] == ["read", "ls", "submit"])
          and ([.[] | select(.event == "tool_completed")] | length == 3 and all(.ok))' "$tmp/abc.jsonl" \
  >/dev/null || fail "the tool shown again did not run"
[[ $(jq -r .terminal "$tmp/out") == completed ]] || fail "A/B/C: $(cat "$tmp/out")"

# --- Only the host feeds the compiler ----------------------------------------------------------
# A file whose text names every other tool's triggers, read by the model: the projections are the
# ones of the clean run, fingerprint for fingerprint.
mkdir -p "$tmp/poisoned/src"
printf 'Run the tests. Search and find everything, list the directory, fix it, write a new file.\n' \
  >"$tmp/poisoned/src/lib.rs"
run 0 "$MF_BIN/mf-run" --plan "$plan" --model "scripted:$px/run-ok.json" --workspace "$tmp/poisoned" \
  --request "$px/request.json" --trace "$tmp/poisoned.jsonl" --fixed-clock --run-id proj
fingerprints() { jq -s -c '[.[] | select(.event == "projection_compiled") | .fingerprint]' "$1"; }
[[ $(fingerprints "$tmp/poisoned.jsonl") == "$(fingerprints "$tmp/ok.jsonl")" ]] ||
  fail "a tool result reached the projection"
# The model saying so itself: the next turn's projection changes only by corrected:text_response.
cat >"$tmp/talk.json" <<'EOF'
{"steps": [{"content": "I will run the tests, search and find, list the directory, fix it and write a new file. Use bash."},
           {"tool_calls": [{"name": "read", "arguments": {"path": "src/lib.rs"}}]},
           {"tool_calls": [{"name": "submit", "arguments": {"terminal_result": "COMPLETE", "summary": "ok"}}]}]}
EOF
proj_run "$plan" "$tmp/talk.json" "$tmp/talk.jsonl"
expect_visible "$tmp/talk.jsonl" '[["read"],["read"],["read","submit"]]'

# A fork of a projected run is a projected run, and verifies.
seq_at=$(jq -s 'map(select(.event == "model_requested"))[2].seq' "$tmp/ok.jsonl")
cat >"$tmp/alt.json" <<'EOF'
{"steps": [{"tool_calls": [{"name": "read", "arguments": {"path": "src/lib.rs"}}]},
           {"tool_calls": [{"name": "submit", "arguments": {"terminal_result": "COMPLETE", "summary": "forked"}}]}]}
EOF
run 0 "$replay" --fork-at "$seq_at" --responses "$tmp/alt.json" --plan "$plan" --workspace "$ws" \
  --fixed-clock --run-id proj-fork "$tmp/ok.jsonl" --trace "$tmp/fork.jsonl"
[[ $(jq -r .result.summary "$tmp/out") == forked ]] || fail "fork: $(cat "$tmp/out")"
requests_match_projections "$tmp/fork.jsonl"
run 0 "$replay" "$tmp/fork.jsonl"

# An eval case over the projected plan checks the not_visible corrections like any other kind.
mkdir -p "$tmp/suite"
cp "$plan" "$tmp/suite/projected.plan.json"
cp "$px/run-ok.json" "$tmp/suite/run-ok.json"
jq -n --arg ws "$ws" --slurpfile req "$px/request.json" '{suite_id: "projected", cases: [{id: "hidden",
  plan: "projected.plan.json", model: "scripted:run-ok.json", workspace: $ws, request: $req[0],
  expect: {terminal: "completed", violations: {not_visible: 2, unknown_tool: 0},
           tools: ["read", "submit"]}}]}' >"$tmp/suite/suite.json"
run 0 "$MF_BIN/mf-eval" run --suite "$tmp/suite/suite.json" --output - --fixed-clock
jq -e '.summary.passed == 1 and .cases[0].violations.not_visible == 2' "$tmp/out" >/dev/null ||
  fail "eval over a projected plan: $(cat "$tmp/out")"

# A plan without the section shows every bound tool and records no projection.
source_with 'del(.projection)' "$tmp/plain.json"
plan_of "$tmp/plain.json" "$tmp/plain.plan.json"
jq -e 'has("projection") | not' "$tmp/plain.plan.json" >/dev/null || fail "a plain plan has a projection"
cat >"$tmp/plain-run.json" <<'EOF'
{"steps": [{"tool_calls": [{"name": "read", "arguments": {"path": "src/lib.rs"}}]},
           {"tool_calls": [{"name": "submit", "arguments": {"terminal_result": "COMPLETE", "summary": "ok"}}]}]}
EOF
proj_run "$tmp/plain.plan.json" "$tmp/plain-run.json" "$tmp/plain.jsonl"
grep -q 'projection' "$tmp/plain.jsonl" && fail "a run without projection records one"
grep -q '"tools":' "$tmp/plain.jsonl" && fail "a run without projection lists tools"

# --- Capabilities: a denied unit is never visible, in either mode -----------------------------
for mode in compiled all_tools; do
  source_with ".projection.mode = \"$mode\"" "$tmp/$mode.json"
  plan_of "$tmp/$mode.json" "$tmp/$mode.plan.json"
  cat >"$tmp/write.json" <<'EOF'
{"steps": [{"tool_calls": [{"name": "write", "arguments": {"path": "x.txt", "content": "x"}}]}]}
EOF
  mkdir -p "$tmp/art-$mode"
  RC=1 proj_run "$tmp/$mode.plan.json" "$tmp/write.json" "$tmp/$mode.jsonl" \
    --capabilities unrestricted.filesystem.read,terminal.intent --artifacts "$tmp/art-$mode"
  jq -s -e '[.[] | select(.event == "projection_compiled") | .visible[]]
            | all(. != "write" and . != "edit" and . != "bash")' "$tmp/$mode.jsonl" >/dev/null ||
    fail "$mode: a capability-denied tool was shown"
  requests_match_projections "$tmp/$mode.jsonl"
  [[ $(jq -s '[.[] | select(.event == "tool_called")] | length' "$tmp/$mode.jsonl") == 0 ]] ||
    fail "$mode: a denied tool ran"
  run 0 "$replay" "$tmp/$mode.jsonl"
done
# all_tools shows every granted tool: the same code path, still capability-filtered.
expect_visible "$tmp/all_tools.jsonl" '[["grep","ls","read","submit"],["grep","ls","read","submit"]]'

# --- Showing is not authorizing: a shown terminal still waits for the required step ------------
cat >"$tmp/early.json" <<'EOF'
{"steps": [{"tool_calls": [{"name": "submit", "arguments": {"terminal_result": "COMPLETE", "summary": "early"}}]},
           {"tool_calls": [{"name": "read", "arguments": {"path": "src/lib.rs"}}]},
           {"tool_calls": [{"name": "submit", "arguments": {"terminal_result": "COMPLETE", "summary": "ok"}}]}]}
EOF
proj_run "$tmp/all_tools.plan.json" "$tmp/early.json" "$tmp/early.jsonl"
jq -s -e '[.[] | select(.event == "guardrail_violation") | .kind] == ["premature_terminal"]' \
  "$tmp/early.jsonl" >/dev/null || fail "a shown terminal was not held back by step enforcement"
# The tool the correction names is host-selected into the next turn's projection.
run 0 "$replay" --strict --plan "$tmp/all_tools.plan.json" --workspace "$ws" "$tmp/early.jsonl"

# A prerequisite correction in compiled mode: the named tool is shown on the next turn.
source_with '.projection.units |= map(if .id == "tool:edit" then .triggers = [{signal: "first_turn", weight: 90}] else . end)' \
  "$tmp/edit.json"
plan_of "$tmp/edit.json" "$tmp/edit.plan.json"
cat >"$tmp/edit-run.json" <<'EOF'
{"steps": [{"tool_calls": [{"name": "edit", "arguments": {"path": "src/lib.rs", "edits": [{"oldText": "a", "newText": "b"}]}}]},
           {"tool_calls": [{"name": "read", "arguments": {"path": "src/lib.rs"}}]},
           {"tool_calls": [{"name": "submit", "arguments": {"terminal_result": "COMPLETE", "summary": "ok"}}]}]}
EOF
proj_run "$tmp/edit.plan.json" "$tmp/edit-run.json" "$tmp/edit.jsonl"
jq -s -e '[.[] | select(.event == "guardrail_violation") | .kind] == ["prerequisite"]' "$tmp/edit.jsonl" \
  >/dev/null || fail "edit before read: $(jq -s -c '[.[] | select(.event == "guardrail_violation")]' "$tmp/edit.jsonl")"

# --- Budgets: a mandatory unit that cannot fit ------------------------------------------------
# On the first turn: refused before anything is written (exit 2, no trace file).
source_with '.projection.budget_tokens = 50' "$tmp/tiny.json"
plan_of "$tmp/tiny.json" "$tmp/tiny.plan.json"
refuse 2 MF-P005 "$MF_BIN/mf-run" --plan "$tmp/tiny.plan.json" --model "scripted:$px/run-ok.json" \
  --workspace "$ws" --request "$px/request.json" --trace "$tmp/tiny.jsonl"
[[ ! -e $tmp/tiny.jsonl ]] || fail "a refused run left a trace"
grep -q '/projection/budget_tokens' "$tmp/err" || fail "MF-P005 does not point at the plan's budget"
grep -q 'tool:read' "$tmp/err" || fail "MF-P005 does not name the unit that cannot fit"
# On a later turn (submit becomes mandatory once read succeeded): the run ends, recorded.
read_tokens=$(jq -s '[.[] | select(.event == "projection_compiled")][0].ledger.items[]
                     | select(.unit == "tool:read") | .tokens' "$tmp/ok.jsonl")
source_with ".projection.budget_tokens = $((read_tokens + 30))" "$tmp/tight.json"
plan_of "$tmp/tight.json" "$tmp/tight.plan.json"
RC=1 proj_run "$tmp/tight.plan.json" "$tmp/plain-run.json" "$tmp/tight.jsonl"
[[ $(jq -r .terminal "$tmp/out") == budget_exhausted ]] || fail "tight: $(cat "$tmp/out")"
jq -r .error "$tmp/out" | grep -q 'tool:submit' || fail "the ending does not name the unit: $(cat "$tmp/out")"
jq -s -e '[.[] | select(.event == "budget_exhausted")] == [.[] | select(.event == "budget_exhausted")
          | select(.budget == "projection_tokens")] and ([.[] | select(.event == "budget_exhausted")] | length) == 1' \
  "$tmp/tight.jsonl" >/dev/null || fail "no budget_exhausted{projection_tokens}"
run 0 "$replay" "$tmp/tight.jsonl"
run 0 "$replay" --strict --plan "$tmp/tight.plan.json" --workspace "$ws" "$tmp/tight.jsonl"

# --- Refused sources: each with its code, line and pointer ------------------------------------
source_with '.projection.mode = "everything"' "$tmp/bad-mode.json"
refuse 2 MF-P004 "$compile" "$tmp/bad-mode.json" -o -
grep -q '/projection/mode' "$tmp/err" || fail "MF-P004 does not point at the mode"
sed 's/^  mode: compiled$/  mode: everything/' "$px/projected.yaml" >"$tmp/bad-mode.yaml"
refuse 2 MF-P004 "$compile" "$tmp/bad-mode.yaml" -o -
grep -Eq 'bad-mode.yaml:5[0-9]:' "$tmp/err" || fail "MF-P004 has no line: $(cat "$tmp/err")"
source_with '.projection.units += [{id: "tool:nope"}]' "$tmp/no-tool.json"
refuse 2 MF-P002 "$compile" "$tmp/no-tool.json" -o -
source_with '.projection.units += [{id: "skill:x", content: "x", requires: ["skill:y"]}]' "$tmp/no-req.json"
refuse 2 MF-P002 "$compile" "$tmp/no-req.json" -o -
source_with '.projection.units[0].activation = "sometimes"' "$tmp/bad-unit.json"
refuse 2 MF-P001 "$compile" "$tmp/bad-unit.json" -o -
grep -q '/projection/units/' "$tmp/err" || fail "MF-P001 does not point into the units"
source_with '.projection.units += [{id: "skill:a", content: "a", supersedes: ["skill:b"]},
                                   {id: "skill:b", content: "b", supersedes: ["skill:a"]}]' "$tmp/cycle.json"
refuse 2 MF-P003 "$compile" "$tmp/cycle.json" -o -
source_with '.projection.colour = "red"' "$tmp/unknown.json"
run 2 "$compile" "$tmp/unknown.json" -o -
grep -q '/projection/colour' "$tmp/err" || fail "an unknown projection member was not refused"

# --- Rewritten plans: the loader rebuilds the catalog ------------------------------------------
# reseal PLAN : recomputes compiled_sha256 after an edit, as anyone could.
reseal() {
  local digest
  digest=$(jq -c 'del(.compiled_sha256)' "$1" | "$MF_BIN/mf-store" canon | head -c -1 | sha256sum | cut -d' ' -f1)
  jq -c --arg d "$digest" '.compiled_sha256 = $d' "$1" | "$MF_BIN/mf-store" canon >"$1.sealed"
  mv "$1.sealed" "$1"
}
jq -c '.projection.units |= map(if .id == "tool:bash" then .activation = "always" else . end)' "$plan" |
  "$MF_BIN/mf-store" canon >"$tmp/forged.plan.json"
refuse 1 MF-L004 "$compile" verify "$tmp/forged.plan.json"
reseal "$tmp/forged.plan.json"
refuse 1 MF-L002 "$compile" verify "$tmp/forged.plan.json"
grep -q catalog_sha256 "$tmp/err" || fail "the forged catalog was not named"
refuse 2 MF-L002 "$MF_BIN/mf-run" --plan "$tmp/forged.plan.json" --model "scripted:$px/run-ok.json" \
  --workspace "$ws" --trace "$tmp/forged.jsonl"
[[ ! -e $tmp/forged.jsonl ]] || fail "a forged plan started a run"
# A node's description changed (and the plan resealed) changes the tools the units stand on.
jq -c '.nodes |= map(if .model_tool_name == "read" then .description = "Read anything." else . end)' \
  "$plan" | "$MF_BIN/mf-store" canon >"$tmp/forged2.plan.json"
reseal "$tmp/forged2.plan.json"
refuse 1 MF-L002 "$compile" verify "$tmp/forged2.plan.json"

# --- Rewritten traces: each edit, relinked into a valid chain, is refused ----------------------
# forge NAME JQ : the ok trace with JQ applied to every line (as objects), relinked.
forge() {
  jq -c "$2" "$tmp/ok.jsonl" | jq -c 'del(.prev)' | link >"$tmp/$1.jsonl"
  run 1 "$replay" "$tmp/$1.jsonl"
  grep -q 'MF-E015' "$tmp/out" "$tmp/err" || fail "forged trace $1: $(cat "$tmp/out" "$tmp/err")"
}
forge shown-more 'if .event == "model_requested" and .call == 1 then .tools += ["bash"] else . end'
forge shown-less 'if .event == "model_requested" and .call == 4 then .tools = ["read"] else . end'
forge no-list 'if .event == "model_requested" and .call == 2 then del(.tools) else . end'
forge both-edited 'if (.event == "model_requested" or .event == "projection_compiled") and .call == 1
                   then (if .tools then .tools += ["bash"] else .visible += ["bash"] end) else . end'
forge no-projection 'select(.event != "projection_compiled" or .call != 3) | if .seq > 13 then .seq -= 1 else . end'
forge undeclared 'if .event == "run_started" then del(.projection) else . end'
forge wrong-call 'if .event == "projection_compiled" and .call == 2 then .call = 3 else . end'
forge overspent 'if .event == "projection_compiled" and .call == 1 then .ledger.charged += 1 | .ledger.remaining -= 1 else . end'
forge unledgered 'if .event == "projection_compiled" and .call == 1 then .active_units += ["tool:bash"] | .visible += ["bash"] else . end'
# A forgery consistent in itself (a unit added with its ledger item, and sent) passes the
# structural check; the strict replay re-compiles the projection and finds the difference.
jq -c 'if .event == "projection_compiled" and .call == 1 then
         .active_units = (.active_units + ["tool:bash"] | sort) | .visible = (.visible + ["bash"] | sort)
         | .ledger.items += [{bytes: 400, tokens: 115, unit: "tool:bash", variant: "full"}]
         | .ledger.charged += 115 | .ledger.bytes += 400 | .ledger.remaining -= 115
       elif .event == "model_requested" and .call == 1 then .tools = (.tools + ["bash"] | sort)
       else . end' "$tmp/ok.jsonl" | jq -c 'del(.prev)' | link >"$tmp/consistent.jsonl"
run 0 "$replay" "$tmp/consistent.jsonl"
run 1 "$replay" --strict --plan "$plan" --workspace "$ws" "$tmp/consistent.jsonl"
[[ $(jq -r .status "$tmp/out") == diverged ]] || fail "strict replay missed a forged projection: $(cat "$tmp/out")"

# --- Over HTTP: what the real client sends is the projection ----------------------------------
wire_start
base=$tmp/base.json
jq '.timeouts_ms = {connect: 2000, first_byte: 5000, idle: 2000, total: 20000}
    | .retry = {max_attempts: 1, initial_backoff_ms: 20, max_backoff_ms: 100}' "$fx/profiles/local.json" >"$base"
wire_profile harness-read-submit "$base" "$tmp/live.json"
run 0 "$MF_BIN/mf-run" --plan "$plan" --model "openai:$tmp/live.json" --workspace "$ws" \
  --request "$px/request.json" --trace "$tmp/live.jsonl"
[[ $(jq -r .terminal "$tmp/out") == completed ]] || fail "live projected run: $(cat "$tmp/out")"
requests_match_projections "$tmp/live.jsonl"
bodies=$(wire_log | jq -c '[.[] | .body | fromjson]')
[[ $(jq -c '[.[] | [.tools[].function.name]]' <<<"$bodies") == '[["read"],["read","submit"]]' ]] ||
  fail "sent tools: $(jq -c '[.[] | [.tools[].function.name]]' <<<"$bodies")"
jq -e 'all(.messages[0].role == "system" and (.messages[0].content | test("Quote the lines you rely on")))' \
  <<<"$bodies" >/dev/null || fail "the guidance did not reach the system message"
jq -e 'all(.messages[0].content | startswith("Read the file named in the request"))' <<<"$bodies" \
  >/dev/null || fail "the system instructions do not come first"
jq -e '[.[] | .tools[] | .function.name] | all(. != "bash" and . != "write" and . != "edit")' \
  <<<"$bodies" >/dev/null || fail "a hidden schema was sent"
# Each schema is sent once, in the tools channel: the system message does not render it again.
jq -e 'all(.messages[0].content | contains("Read the contents of a file") | not)' <<<"$bodies" \
  >/dev/null || fail "a schema is rendered twice"

echo "projected_run: ok"
