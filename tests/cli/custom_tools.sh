#!/usr/bin/env bash
# mf-compile custom-tools (docs/custom-tools.md): the fixture manifest compiles to a catalog that
# the catalog reader and the harness compiler accept, the same bytes through stdin, stdout and
# -o FILE; refusals are MF-CT diagnostics naming their file, with nothing on stdout and nothing
# written; duplicate keys stay the strict reader's MF-S006.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"
unset MF_STORE MF_FIXED_CLOCK

ct=$MF_SOURCE_DIR/fixtures/custom_tools
compile="$MF_BIN/mf-compile"

# refuse_clean CODE CMD... : `refuse 2 CODE CMD...`, and every line on stderr is a diagnostic.
refuse_clean() {
  refuse 2 "$@"
  if grep -Ev '^mf-compile: .*error MF-(CT[0-9]{3}|[A-Z][0-9]{3}): ' "$tmp/err" >/dev/null; then
    fail "${*:2}: stderr has lines that are not diagnostics: $(cat "$tmp/err")"
  fi
}

# --- The fixture: a catalog on stdout, canonical, two tools sorted, the artifact list kept.
run 0 "$compile" custom-tools "$ct/two-tools.manifest.json" --policy "$ct/policy.json"
cp "$tmp/out" "$tmp/catalog.json"
"$MF_BIN/mf-store" canon <"$tmp/catalog.json" | cmp -s - "$tmp/catalog.json" ||
  fail "the catalog is not canonical JSON"
jq -e '.kind == "millforge_tool_catalog" and ([.tools[].tool_id] == ["custom.echo","custom.list"])
       and (.tools[1].produced_artifact_ids == ["custom_list_report"])
       and (.tools[0] | has("produced_artifact_ids") | not)
       and (.tools[1].timeout_ms == 30000)' "$tmp/catalog.json" >/dev/null ||
  fail "catalog of the fixture: $(cat "$tmp/catalog.json")"

# The manifest on stdin gives the same bytes; -o FILE writes them and prints the records.
stdin=$ct/two-tools.manifest.json run 0 "$compile" custom-tools - --policy "$ct/policy.json" -o -
cmp -s "$tmp/out" "$tmp/catalog.json" || fail "stdin and -o - differ from the file form"
run 0 "$compile" custom-tools "$ct/two-tools.manifest.json" --policy "$ct/policy.json" \
  -o "$tmp/written.json"
cp "$tmp/out" "$tmp/records.json"
cmp -s "$tmp/written.json" "$tmp/catalog.json" || fail "-o FILE holds other bytes"
jq -e '.kind == "millforge_custom_tool_compilation"
       and .source_sha256 == "5fb85466038490596a54ebf0d4daa94f8cb7424b7599162f7ffb4e5f5eae238a"
       and ([.records[].tool_id] == ["custom.echo","custom.list"])
       and (.records | all(.compilation_record_sha256 | test("^[0-9a-f]{64}$")))' "$tmp/out" \
  >/dev/null || fail "compilation report: $(cat "$tmp/out")"

# --- A harness against the catalog: the plan binds the custom tools with the catalog's digests.
run 0 "$compile" "$ct/harness.yaml" --catalog builtin --catalog "$tmp/catalog.json" -o -
cp "$tmp/out" "$tmp/plan.json"
jq -e --slurpfile r "$tmp/records.json" '
  ([.nodes[] | select(.binding.tool_id | startswith("custom."))
     | {(.binding.tool_id): .binding.descriptor_sha256}] | add) ==
  ([$r[0].records[] | {(.tool_id): .catalog_descriptor_sha256}] | add)' "$tmp/plan.json" >/dev/null ||
  fail "the plan does not pin the catalog digests of the records: $(jq -c '.nodes' "$tmp/plan.json")"
stdin=$tmp/plan.json run 0 "$compile" verify -
# Without the catalog the harness does not resolve.
refuse_clean MF-R002 "$compile" "$ct/harness.yaml" --catalog builtin -o -

# --- Refusals: each one diagnostic family, the file named, nothing printed or written.
mkdir -p "$tmp/bad"
jq '.tools[0].description = "Run rm -rf /tmp/work"' "$ct/two-tools.manifest.json" >"$tmp/bad/shell.json"
refuse_clean MF-CT004 "$compile" custom-tools "$tmp/bad/shell.json" --policy "$ct/policy.json" \
  -o "$tmp/bad/out.json"
grep -q "shell.json:[0-9]*:[0-9]*: error" "$tmp/err" || fail "the diagnostic does not name the manifest"
[[ ! -e $tmp/bad/out.json ]] || fail "a refused manifest wrote its catalog"

secret=OPENAI_API_KEY=abcdefghijklmnopqrstuvwxyz
jq --arg s "$secret" '.policy_metadata.token = $s' "$ct/two-tools.manifest.json" >"$tmp/bad/secret.json"
refuse_clean MF-CT002 "$compile" custom-tools "$tmp/bad/secret.json" --policy "$ct/policy.json"
! grep -q abcdefghijklmnopqrstuvwxyz "$tmp/err" || fail "the secret was repeated"

jq '.tools[1].tool_id = "custom.echo"' "$ct/two-tools.manifest.json" >"$tmp/bad/dup.json"
refuse_clean MF-CT005 "$compile" custom-tools "$tmp/bad/dup.json" --policy "$ct/policy.json"
grep -q '/tools/1/tool_id' "$tmp/err" || fail "the duplicate's pointer"

jq '.allowed_capability_ids = ["cap.custom.echo"]' "$ct/policy.json" >"$tmp/bad/policy.json"
refuse_clean MF-CT012 "$compile" custom-tools "$ct/two-tools.manifest.json" --policy "$tmp/bad/policy.json"
grep -q "two-tools.manifest.json:[0-9]*:[0-9]*: error" "$tmp/err" ||
  fail "a capability the policy lacks is a fault of the manifest's declaration"
jq '.side_effect_approval_matrix = {"read_only": ["forbidden"]}' "$ct/policy.json" >"$tmp/bad/matrix.json"
refuse_clean MF-CT015 "$compile" custom-tools "$ct/two-tools.manifest.json" --policy "$tmp/bad/matrix.json"
grep -q "bad/matrix.json:[0-9]*:[0-9]*: error MF-CT015: .*(at /side_effect_approval_matrix/read_only/0)" \
  "$tmp/err" || fail "the diagnostic does not name the policy: $(cat "$tmp/err")"

# Several faults, all reported, each on its own line.
jq '.package_version = 0 | .tools[0].timeout_policy.timeout_seconds = 0
    | .tools[1].approval_policy = "forbidden"' "$ct/two-tools.manifest.json" >"$tmp/bad/three.json"
refuse_clean MF-CT001 "$compile" custom-tools "$tmp/bad/three.json" --policy "$ct/policy.json"
grep -q "error MF-CT016:" "$tmp/err" && grep -q "error MF-CT015:" "$tmp/err" ||
  fail "not every fault was reported: $(cat "$tmp/err")"
[[ $(wc -l <"$tmp/err") -eq 3 ]] || fail "three faults, $(wc -l <"$tmp/err") lines"

# The strict reader refuses a duplicate key before the compiler sees the manifest.
printf '{"package_id":"a","package_id":"b"}' >"$tmp/bad/dupkey.json"
refuse_clean MF-S006 "$compile" custom-tools "$tmp/bad/dupkey.json" --policy "$ct/policy.json"
refuse_clean MF-S013 "$compile" custom-tools "$tmp/bad/missing.json" --policy "$ct/policy.json"
# Over the 16 MiB a catalog-sized document may have.
{ printf '{"package_id":"'; head -c $((17 << 20)) /dev/zero | tr '\0' a; printf '"}'; } >"$tmp/bad/big.json"
refuse_clean MF-S003 "$compile" custom-tools "$tmp/bad/big.json" --policy "$ct/policy.json"

# Usage: the policy is required, one operand, not both on stdin.
run 2 "$compile" custom-tools "$ct/two-tools.manifest.json"
grep -q -- "--policy" "$tmp/err" || fail "a missing --policy is not named"
run 2 "$compile" custom-tools --policy "$ct/policy.json"
stdin=$ct/policy.json run 2 "$compile" custom-tools - --policy -
run 2 "$compile" custom-tools "$ct/two-tools.manifest.json" --policy "$ct/policy.json" \
  --catalog x.json
run 0 "$compile" --help
grep -q "mf-compile custom-tools MANIFEST.json|- --policy" "$tmp/out" || fail "--help lacks custom-tools"

echo "custom_tools: ok"
