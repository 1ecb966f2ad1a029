#!/usr/bin/env bash
# One plan loader: each tampering of a compiled plan, sealed anew where the plan format lets anyone
# (compiled_sha256 recomputed over the canonical plan), is refused by `mf-compile verify` and by
# `mf-run --plan` with the same diagnostic line (code, pointer, message), and leaves no trace. The
# first row is a tool description edited and resealed: the node's descriptor no longer gives its
# binding's descriptor_sha256 (MF-R003).
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/golden_plan.bash"

golden_plan
common=(--model scripted:$h/runs/golden-ok.json --workspace "$ws" --artifacts "$tmp/art" --fixed-clock)

# The untouched plan verifies and runs.
run 0 "$mfc" verify "$plan"
run 0 "$mfr" --plan "$plan" "${common[@]}" --trace "$tmp/ok.jsonl"

# reseal FILTER OUT: the plan changed by the jq FILTER and sealed anew: compiled_sha256 is the
# SHA-256 of the canonical plan without it (docs/formats/plan.md), the file canonical.
reseal() {
  local body digest
  body=$(jq -c "$1 | del(.compiled_sha256)" "$plan" | "$MF_BIN/mf-store" canon)
  digest=$(printf '%s' "$body" | sha256sum | cut -d' ' -f1)
  jq -c --arg d "$digest" '. + {compiled_sha256: $d}' <<<"$body" | "$MF_BIN/mf-store" canon >"$2"
}

# The diagnostic line without the program's name.
diagnostic() { sed -E 's/^mf-(compile|run): //' "$tmp/err"; }

# CODE POINTER RESEAL FILTER: the expected code, the pointer the line names, whether the plan is
# sealed anew, and the change.
n=0
while IFS='|' read -r code pointer sealed filter; do
  n=$((n + 1))
  t=$tmp/tampered-$n.json
  if [[ $sealed == yes ]]; then
    reseal "$filter" "$t"
  else
    jq -c "$filter" "$plan" | "$MF_BIN/mf-store" canon >"$t"
  fi
  run 1 "$mfc" verify "$t"
  verify_line=$(diagnostic)
  run 2 "$mfr" --plan "$t" "${common[@]}" --trace "$tmp/never-$n.jsonl"
  run_line=$(diagnostic)
  [[ $verify_line == "$run_line" ]] ||
    fail "row $n ($filter): verify and mf-run differ:"$'\n'"$verify_line"$'\n'"$run_line"
  grep -qF "error $code:" <<<"$verify_line" || fail "row $n ($filter): not $code: $verify_line"
  grep -qF "$pointer" <<<"$verify_line" || fail "row $n ($filter): not at $pointer: $verify_line"
  [[ ! -e $tmp/never-$n.jsonl ]] || fail "row $n: a refused plan left a trace"
done <<'ROWS'
MF-R003|/nodes/0/binding/descriptor_sha256|yes|.nodes[0].description = "Collects everything, then uploads it."
MF-R003|/nodes/1/binding/descriptor_sha256|yes|.nodes[1].input_schema.properties.extra = {"type": "string"}
MF-R003|/nodes/0/binding/descriptor_sha256|yes|.nodes[0].timeout_ms = 600000
MF-R003|/nodes/0/binding/descriptor_sha256|yes|.nodes[0].output_policy.max_output_bytes = 65536
MF-R003|/nodes/0/binding/descriptor_sha256|yes|.nodes[0].binding.implementation_id = "impl.builtin.pi_compat.bash.v1"
MF-R003|/nodes/0/binding/descriptor_sha256|yes|.nodes[0].side_effect_class = "read_only"
MF-R003|/nodes/0/binding/descriptor_sha256|yes|.nodes[0].model_tool_name = "collect"
MF-R003|/nodes/0/binding/descriptor_sha256|yes|.nodes[0].binding.descriptor_sha256 = "not a digest"
MF-L002|/nodes/0/side_effect_class|yes|.nodes[0].side_effect_class = "explosive"
MF-L004|/compiled_sha256|no|.nodes[0].description = "Collects everything, then uploads it."
MF-L002|/budgets/max_iterations|yes|.budgets.max_iterations = 100000
MF-L002|/terminal_result_map|yes|.terminal_result_map = {}
MF-L002|/required_capabilities|yes|.required_capabilities += ["process.exec"]
ROWS
echo "plan_tampering: $n tamperings refused alike"
