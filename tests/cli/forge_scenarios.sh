#!/usr/bin/env bash
# forge's plumbing and model-quality eval scenarios as harness fixtures (fixtures/harness/forge/,
# docs/forge-scenarios.md): each scenario's harness compiles with its catalog, whose tools run the
# Pi pack's read/grep/ls/find or the artifact producer on a small workspace. Each trajectory — the
# ideal one and the ones with the mistakes the scenario is about — is run, replayed, re-run
# strictly, and checked for its terminal, the guardrail violations by kind and the call counts;
# the final answers are checked as forge's validators check them.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"

mfc="$MF_BIN/mf-compile"
mfr="$MF_BIN/mf-run"
rep="$MF_BIN/mf-replay"
f=fixtures/harness/forge

# has_event TRACE FILTER: some event of TRACE satisfies FILTER (jq 1.6's -e judges only the last
# input's output, so the trace is read as one array).
has_event() {
  jq -se "any(.[]; $2)" "$1" >/dev/null
}

# scenario SCENARIO RUN TERMINAL MODEL_CALLS TOOL_CALLS VIOLATIONS [mf-run options]: runs
# SCENARIO's runs/RUN.json and checks the result and the replay summary; the result is left in
# $tmp/SCENARIO-RUN.result, the trace in $tmp/SCENARIO-RUN.jsonl. With HARNESS=NAME.yaml the
# scenario's harness is that file instead of harness.yaml, and the run is named SCENARIO-RUN-NAME.
scenario() {
  local s=$1 r=$2 terminal=$3 model_calls=$4 tool_calls=$5 violations=$6
  shift 6
  local h=${HARNESS:-harness.yaml}
  local n=$s-$r plan=$tmp/$s-${h%.yaml}.plan
  [[ $h == harness.yaml ]] || n=$s-$r-${h%.yaml}
  if [[ ! -f $plan ]]; then
    run 0 "$mfc" $f/$s/$h --catalog $f/$s/catalog.json -o -
    cp "$tmp/out" "$plan"
  fi
  local rc=0
  [[ $terminal == completed ]] || rc=1
  rm -rf "$tmp/$n.art" && mkdir "$tmp/$n.art"
  run $rc "$mfr" --plan "$plan" --model scripted:$f/$s/runs/$r.json --workspace $f/$s/workspace \
    --artifacts "$tmp/$n.art" --request $f/$s/request.json --fixed-clock --run-id "r-$n" \
    --trace-content inline --trace "$tmp/$n.jsonl" "$@"
  cp "$tmp/out" "$tmp/$n.result"
  [[ $(jq -r .terminal "$tmp/$n.result") == "$terminal" ]] || fail "$n: $(cat "$tmp/$n.result")"
  [[ $(jq -r .model_calls "$tmp/$n.result") == "$model_calls" ]] ||
    fail "$n: $(jq .model_calls "$tmp/$n.result") model calls, expected $model_calls"
  [[ $(jq -r .tool_calls "$tmp/$n.result") == "$tool_calls" ]] ||
    fail "$n: $(jq .tool_calls "$tmp/$n.result") tool calls, expected $tool_calls"
  run 0 "$rep" "$tmp/$n.jsonl"
  [[ $(jq -r .status "$tmp/out") == ok ]] || fail "$n: trace not ok"
  [[ $(jq -r .tool_calls "$tmp/out") == "$tool_calls" ]] || fail "$n: the trace counts other tool calls"
  [[ $(jq -cS .violations_by_kind "$tmp/out") == $(jq -cS . <<<"$violations") ]] ||
    fail "$n: violations $(jq -c .violations_by_kind "$tmp/out"), expected $violations"
  # The workspace is only read (send_email and analyze_sales write artifacts, in a scratch dir).
  run 0 "$rep" --strict --plan "$plan" --workspace $f/$s/workspace "$tmp/$n.jsonl"
  [[ $(jq -r .status "$tmp/out") == identical ]] || fail "$n: strict replay: $(cat "$tmp/out")"
}

# answer N: the accepted terminal's summary, lowercased, commas removed (forge's _check).
answer() { jq -r .result.summary "$tmp/$1.result" | tr '[:upper:]' '[:lower:]' | tr -d ,; }
# answer_has N TERM...: every TERM is in the answer.
answer_has() {
  local n=$1 a t
  shift
  a=$(answer "$n")
  for t in "$@"; do [[ $a == *"$t"* ]] || fail "$n: the answer lacks '$t': $a"; done
}
# nudge N KIND PREFIX: a correction of KIND whose message starts with PREFIX was sent.
nudge() {
  has_event "$tmp/$1.jsonl" ".event == \"nudge_sent\" and .kind == \"$2\" and
    (.message | startswith(\"$3\"))" || fail "$1: no $2 correction starting '$3'"
}
# exhausted N BUDGET LIMIT: the run ended on BUDGET with that limit.
exhausted() {
  has_event "$tmp/$1.jsonl" ".event == \"budget_exhausted\" and .budget == \"$2\" and
    .limit == $3" || fail "$1: not exhausted on $2 (limit $3)"
}

# --- basic_2step: does the model call tools at all? -------------------------------------------
scenario basic_2step ideal completed 2 2 '{}'
answer_has basic_2step-ideal paris capital
# An answer in prose is nudged (user channel); a call written as text is rescued; then it finishes.
scenario basic_2step no-function-calling completed 3 2 '{"text_response":1,"rescue":1}'
has_event "$tmp/basic_2step-no-function-calling.jsonl" '.event == "nudge_sent" and
  .kind == "text_response" and .channel == "user"' || fail "the text reply was not nudged as user"
has_event "$tmp/basic_2step-no-function-calling.jsonl" '.event == "guardrail_violation" and
  .kind == "rescue" and (.message | contains("fenced_json"))' || fail "no fenced-JSON rescue"
answer_has basic_2step-no-function-calling paris
# Ablations (one mechanism off each): without nudges the prose answer ends the run; without
# rescue the call in text is one more text reply, and the terminal comes too early.
scenario basic_2step no-function-calling budget_exhausted 1 0 '{"text_response":1}' \
  --guardrails no_nudge
exhausted basic_2step-no-function-calling max_validation_retries 0
scenario basic_2step no-function-calling model_failed 4 0 \
  '{"text_response":2,"premature_terminal":1,"tool_denied":1}' --guardrails no_rescue

# --- basic_2step_tre: a lookup of something that does not exist is a resolution error ------------
scenario basic_2step_tre ideal completed 2 2 '{}'
answer_has basic_2step_tre-ideal paris capital
# Three misses in a row (forge's ToolResolutionError: fed back, no tool-error budget spent, the
# count of consecutive errors reset), then the right country: completed, where three tool errors
# would spend max_tool_errors of 2 on the third call.
scenario basic_2step_tre wrong-keys completed 5 5 '{"soft_tool_error":3}'
[[ $(jq -s '[.[] | select(.event == "tool_completed" and .ok == false and .error_kind == "soft")]
  | length' "$tmp/basic_2step_tre-wrong-keys.jsonl") == 3 ]] || fail "the misses are not soft"
! has_event "$tmp/basic_2step_tre-wrong-keys.jsonl" '.event == "budget_exhausted"' ||
  fail "a miss spent a budget"
answer_has basic_2step_tre-wrong-keys paris capital
# Decisions per model call, as forge's runner takes them on this conversation (bench/forge_runner.py
# --scenario basic_2step_tre --decisions): a resolution error on calls 1-3, then nothing.
[[ $(jq -sc '[.[] | select(.event == "guardrail_violation") | {call, kind}]' \
  "$tmp/basic_2step_tre-wrong-keys.jsonl") == \
  '[{"call":1,"kind":"soft_tool_error"},{"call":2,"kind":"soft_tool_error"},{"call":3,"kind":"soft_tool_error"}]' ]] ||
  fail "basic_2step_tre-wrong-keys: the decisions per call differ from forge's"

# --- sequential_3step: required steps, in order -------------------------------------------------
scenario sequential_3step ideal completed 3 3 '{}'
answer_has sequential_3step-ideal 23 "widget pro" apac
# The report rests on the analysis artifact: the producer wrote the findings the model gave.
jq -e '.result.artifacts | map(.artifact_id) == ["analysis"]' "$tmp/sequential_3step-ideal.result" \
  >/dev/null || fail "the report does not name the analysis artifact"
jq -e '.findings | startswith("Revenue rose 23%")' "$tmp/sequential_3step-ideal.art/analysis" \
  >/dev/null || fail "the analysis artifact is not the model's findings"
scenario sequential_3step out-of-order completed 5 3 \
  '{"premature_terminal":1,"prerequisite":1,"tool_denied":2}'
nudge sequential_3step-out-of-order premature_terminal \
  "[StepEnforcementError] 'report' cannot be called yet: these required steps have not succeeded: analyze_sales, fetch_sales_data."
nudge sequential_3step-out-of-order prerequisite \
  "[PrerequisiteError] 'analyze_sales' cannot be called yet: it needs a successful call of 'fetch_sales_data' first."
# Four premature terminals in a row: three escalating corrections, then the budget is spent and
# the fifth reply is never asked for.
scenario sequential_3step stubborn budget_exhausted 4 0 '{"premature_terminal":4,"tool_denied":4}'
nudge sequential_3step-stubborn premature_terminal "[StepEnforcementError] 'report' cannot be called yet"
nudge sequential_3step-stubborn premature_terminal "[StepEnforcementError] Call one of these tools now:"
nudge sequential_3step-stubborn premature_terminal "[StepEnforcementError] STOP. Do not call 'report'."
exhausted sequential_3step-stubborn max_premature_terminal_attempts 3

# --- error_recovery: a failed call is fed back and corrected ------------------------------------
scenario error_recovery ideal completed 2 2 '{}'
answer_has error_recovery-ideal 10 record
# A count not in four digits (refused by the path's schema at the boundary: a tool error, as
# forge's TypeError), then arguments that are not JSON (the same budget), then the right call:
# two consecutive errors are within forge's max_tool_errors of 2.
scenario error_recovery recover completed 4 3 '{"tool_error":1,"malformed_arguments":1,"tool_denied":2}'
has_event "$tmp/error_recovery-recover.jsonl" '.event == "tool_denied" and .tool == "fetch" and
  (.reason | startswith("error: Validation failed for tool \"fetch\""))' ||
  fail "the count in two digits was not refused by the schema"
nudge error_recovery-recover malformed_arguments "[ToolArgValidationError] The arguments of 'fetch' must be one JSON object"
# Three wrong paths in a row: the third error spends the budget.
scenario error_recovery give-up budget_exhausted 3 3 '{"tool_error":3,"tool_denied":3}'
exhausted error_recovery-give-up max_tool_errors 2

# --- tool_selection: two right tools among eight ------------------------------------------------
scenario tool_selection ideal completed 3 3 '{}'
answer_has tool_selection-ideal read write admin
# A tool that does not exist, the right tool before its prerequisite, a distractor that runs (and
# counts), then the right sequence.
scenario tool_selection distracted completed 6 4 '{"unknown_tool":1,"prerequisite":1,"tool_denied":2}'
nudge tool_selection-distracted unknown_tool \
  "[UnknownTool] There is no tool named 'get_user_permissions'. The tools are: "
has_event "$tmp/tool_selection-distracted.jsonl" '.event == "tool_completed" and .ok and
  .record.model_tool_name == "list_directory"' || fail "the distractor did not run"
answer_has tool_selection-distracted read write admin
# A distractor called with empty arguments ("") is a call without arguments, as in forge: it runs
# (listing the workspace root) and draws no malformed_arguments correction.
scenario tool_selection no-arguments completed 4 4 '{}'
has_event "$tmp/tool_selection-no-arguments.jsonl" '.event == "tool_called" and
  .tool == "list_directory" and .arguments == {}' || fail "list_directory did not run with {}"
has_event "$tmp/tool_selection-no-arguments.jsonl" '.event == "tool_completed" and .ok and
  .record.model_tool_name == "list_directory"' || fail "list_directory did not succeed"
answer_has tool_selection-no-arguments read write admin

# --- argument_fidelity: the ID comes from the lookup's result -----------------------------------
scenario argument_fidelity ideal completed 3 3 '{}'
answer_has argument_fidelity-ideal "widget pro" 1500
# The name where the ID belongs: there is no such file, a resolution error that spends nothing;
# the model uses the ID.
scenario argument_fidelity name-for-id completed 4 4 '{"soft_tool_error":1}'
has_event "$tmp/argument_fidelity-name-for-id.jsonl" '.event == "tool_completed" and
  .ok == false and .error_kind == "soft" and .record.model_tool_name == "fetch_details"' ||
  fail "the name was not a resolution error"
answer_has argument_fidelity-name-for-id 1500
# An ID that exists but belongs to another row passes every guardrail: only an answer check such
# as forge's validator (widget pro + 1500) sees that the run answered the wrong entity.
scenario argument_fidelity wrong-row completed 3 3 '{}'
[[ $(answer argument_fidelity-wrong-row) != *1500* ]] || fail "wrong-row answered the right entity"

# --- sequential_reasoning: each call needs the result of the one before -------------------------
scenario sequential_reasoning ideal completed 4 4 '{}'
answer_has sequential_reasoning-ideal lisinopril kidney hyperkalemia
# The medication guessed instead of read (prerequisite), then a recommendation before the chain
# is done (premature terminal), then the chain.
scenario sequential_reasoning skipped-step completed 6 4 \
  '{"prerequisite":1,"premature_terminal":1,"tool_denied":2}'
nudge sequential_reasoning-skipped-step prerequisite \
  "[PrerequisiteError] 'check_interactions' cannot be called yet: it needs a successful call of 'get_records' first."
nudge sequential_reasoning-skipped-step premature_terminal \
  "[StepEnforcementError] 'recommend' cannot be called yet: these required steps have not succeeded: check_interactions, get_records."
answer_has sequential_reasoning-skipped-step lisinopril kidney hyperkalemia

# --- conditional_routing: the evidence decides, the action is one of a closed set ---------------
scenario conditional_routing ideal completed 3 4 '{}'
answer_has conditional_routing-ideal sdk "roll back" schema
has_event "$tmp/conditional_routing-ideal.jsonl" '.event == "tool_called" and .tool == "diagnose"
  and .arguments.action == "rollback"' || fail "the diagnosis did not choose rollback"
# A diagnosis before the metrics (premature terminal), then one whose action is not in the set
# (refused by the closed schema at the boundary: a tool error), then the deployment, then the
# right diagnosis.
scenario conditional_routing jump-to-conclusion completed 6 6 \
  '{"premature_terminal":1,"tool_error":1,"tool_denied":2}'
has_event "$tmp/conditional_routing-jump-to-conclusion.jsonl" '.event == "tool_denied" and
  .tool == "diagnose" and (.reason | startswith("error: Validation failed for tool \"diagnose\""))' ||
  fail "the action outside the set was not refused by the schema"
answer_has conditional_routing-jump-to-conclusion sdk "roll back" schema
# Context warnings (harness-warnings.yaml: budget 530, warning_thresholds [0.25, 0.65]): the ideal
# run's history crosses 25% before call 2 and 65% before call 3, so those two requests carry a
# warning, as forge's ContextManager(context_thresholds=[0.25, 0.65]) gives them on this
# conversation (bench/forge_compare.sh compares the two call by call). Nothing else changes.
HARNESS=harness-warnings.yaml scenario conditional_routing ideal completed 3 4 '{}'
[[ $(jq -sc '[.[] | select(.event == "model_requested" and .context_warning) |
  {call, threshold: .context_warning.threshold, tokens: .context_warning.tokens}]' \
  "$tmp/conditional_routing-ideal-harness-warnings.jsonl") == \
  '[{"call":2,"threshold":0.25,"tokens":154},{"call":3,"threshold":0.65,"tokens":358}]' ]] ||
  fail "the context warnings are not on calls 2 and 3 (forge's)"
has_event "$tmp/conditional_routing-ideal-harness-warnings.jsonl" '.event == "model_requested" and
  .call == 2 and .context_warning.message ==
  "[Context usage: 29% (154 / 530 tokens). Be mindful of context usage.]"' ||
  fail "call 2's warning is not forge's text"
has_event "$tmp/conditional_routing-ideal-harness-warnings.jsonl" '.event == "model_requested" and
  .call == 3 and (.context_warning.message | startswith("[Context usage: 68% (358 / 530 tokens). " +
  "Context is filling up."))' || fail "call 3's warning is not forge's second tier"
answer_has conditional_routing-ideal-harness-warnings sdk "roll back" schema

echo "forge_scenarios: ok"
