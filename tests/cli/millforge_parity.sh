#!/usr/bin/env bash
# Millforge parity end to end: `mf-compile --emit millforge-v1` reproduces the source and compiled
# digests Millforge's tests/compiler/test_service.py pins for its golden and representative
# fixtures (their twins here, against the Millforge catalog snapshot of its test catalog), names
# the catalog's snapshot identity in the report, and `mf-compile verify` accepts the plans and
# refuses them tampered with; the default form stays the product's own. Then the configured
# terminal vocabulary: --legal-terminals gives the built-in catalog one terminal_<token> control
# per result, and a plan bound to them runs.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"

mfc="$MF_BIN/mf-compile"
m=fixtures/harness/millforge
snap=(--catalog $m/golden-snapshot.json --profiles fixtures/harness/profiles.json)

# SOURCE SOURCE_SHA256 COMPILED_SHA256, as Millforge pins them.
while read -r src source_sha compiled_sha; do
  run 0 "$mfc" "$src" "${snap[@]}" --emit millforge-v1 -o -
  cp "$tmp/out" "$tmp/plan.json"
  [[ $(jq -r .source_sha256 "$tmp/plan.json") == "$source_sha" ]] || fail "$src: source_sha256"
  [[ $(jq -r .compiled_sha256 "$tmp/plan.json") == "$compiled_sha" ]] || fail "$src: compiled_sha256"
  [[ $(jq -r .compiler_identity.name "$tmp/plan.json") == millforge ]] || fail "$src: identity"
  [[ $(jq '.nodes[0] | has("output_schema") or has("timeout_ms") or has("output_policy")' \
    "$tmp/plan.json") == false ]] || fail "$src: plan carries members Millforge's has not"
  stdin="$tmp/plan.json" run 0 "$mfc" verify -
  [[ $(jq -r .form "$tmp/out") == millforge-v1 ]] || fail "$src: verify form"
  [[ $(jq -r .compiled_sha256 "$tmp/out") == "$compiled_sha" ]] || fail "$src: verify digest"
done <<'PINS'
fixtures/harness/golden.yaml 300d4655196b4d421a85969d4d381c07df70de9f92e12ee695a2f06ff04487b1 1d65583fe8bd8379d95f889fe0e889d9ee28ada85d912db9188191eb73bddc52
fixtures/harness/golden.json 300d4655196b4d421a85969d4d381c07df70de9f92e12ee695a2f06ff04487b1 1d65583fe8bd8379d95f889fe0e889d9ee28ada85d912db9188191eb73bddc52
fixtures/harness/millforge/simple.json cff26dee6692c2059385c24934042c51eb8719c638f578a6b869fca21cc627f2 29e604298ecf09500b092ff95a3ad96686a386c52bb2e3c4819a54d83454d78b
fixtures/harness/millforge/blocked.yaml b1fcca877db492fa8fa5ad834e9507546bc033d42c21278d93b9ce8195665318 9a68e99b7ce3185bd6a88724f40c4875ce5f4bd3836b691824e3564f42f58f4c
PINS

# Float literals in a snapshot's schema ("enum": [0.0, 0.5, 1.0]): Python reads 0.0 as a float
# and writes it back as 0.0, so Millforge's digests cover "0.0", not "0". These pins were computed
# by Millforge's own compiler (0.1.0, commit d660194), from the repository root:
#   git --git-dir=<millforge mirror> archive HEAD | tar -x -C /tmp/mf-ref
#   PYTHONPATH=/tmp/mf-ref/src:/usr/lib/python3/dist-packages python3 \
#     fixtures/harness/millforge/reference_digests.py fixtures/harness/millforge/simple.json \
#     fixtures/harness/millforge/float-literals-snapshot.json
# (the same command gives the simple.json pins above against golden-snapshot.json).
run 0 "$mfc" $m/simple.json --catalog $m/float-literals-snapshot.json \
  --profiles fixtures/harness/profiles.json --emit millforge-v1 -o -
cp "$tmp/out" "$tmp/floats.json"
[[ $(jq -r .source_sha256 "$tmp/floats.json") == \
  13982db46eef0c61e2c7a4bf80c4927c37b243d7c8ed06e2f075ec58265eaf52 ]] || fail "float literals: source_sha256"
[[ $(jq -r .compiled_sha256 "$tmp/floats.json") == \
  c9c7942406ca71f6dd18e15ad1243bd7f6d8d613c3a2a8973b0c0431abf624de ]] || fail "float literals: compiled_sha256"
grep -qF '"depth":{"enum":[0.0,0.5,1.0],"type":"number"},"limit":{"enum":[1,2],"type":"integer"}' \
  "$tmp/floats.json" || fail "float literals not written as Python floats"
stdin="$tmp/floats.json" run 0 "$mfc" verify -
[[ $(jq -r .compiled_sha256 "$tmp/out") == c9c7942406ca71f6dd18e15ad1243bd7f6d8d613c3a2a8973b0c0431abf624de ]] ||
  fail "float literals: verify digest"

# Published into a directory: Millforge's file name, and the report names the form and the
# snapshot identity Millforge's registry rule gives the catalog.
mkdir "$tmp/plans"
run 0 "$mfc" fixtures/harness/golden.yaml "${snap[@]}" --emit millforge-v1 --out-dir "$tmp/plans"
plan="$tmp/plans/millforge.test.golden.compiler.v1@1.1d65583fe8bd8379d95f889fe0e889d9ee28ada85d912db9188191eb73bddc52.compiled.json"
[[ -f $plan ]] || fail "plan file not published under its name"
[[ $(tail -c 1 "$plan" | od -An -c | tr -d ' ') == '\n' ]] || fail "plan file lacks its newline"
[[ $(jq -r .plan_form "$tmp/out") == millforge-v1 ]] || fail "report plan_form"
[[ $(jq -r '.catalog_snapshots[0].snapshot_id' "$tmp/out") == \
  ef6c9aa8bf947ed1291b737e1daef4932cf62e6ac3af2a214adea8be791257e7 ]] || fail "snapshot id"
[[ $(jq -r '.catalog_snapshots[0].snapshot_sha256' "$tmp/out") == \
  11e85baa85ced132ef3bce9acc1a9d16cef2105ad645f9d6c0ec436584a0100b ]] || fail "snapshot sha256"
run 0 "$mfc" verify "$plan"
# Verified, not run: the runtime loads only the product's form, and says so.
mkdir "$tmp/art0"
run 2 "$MF_BIN/mf-run" --plan "$plan" --model scripted:fixtures/harness/runs/golden-ok.json \
  --workspace fixtures/repository --artifacts "$tmp/art0" --trace "$tmp/never.jsonl"
grep -q "MF-L002.*Millforge's form" "$tmp/err" || fail "mf-run of a Millforge plan: $(cat "$tmp/err")"
[[ ! -e $tmp/never.jsonl ]] || fail "a refused plan left a trace"

# Tampered: one value changed (digest), or changed and rehashed by our rule (form), refused.
jq -c '.budgets.max_iterations = 7' "$plan" >"$tmp/changed.json"
run 1 "$mfc" verify "$tmp/changed.json"
grep -q MF-L002 "$tmp/err" || grep -q MF-L004 "$tmp/err" || fail "tampered plan: no L002/L004"
python3 - "$plan" "$tmp/rehashed.json" <<'PY'
import hashlib, json, sys
p = json.load(open(sys.argv[1]))
p["terminal_result_map"]["collect_context"] = "BLOCKED"
body = {k: v for k, v in p.items() if k != "compiled_sha256"}
form = lambda o: json.dumps(o, sort_keys=True, ensure_ascii=True, separators=(",", ":")) + "\n"
p["compiled_sha256"] = hashlib.sha256(form(body).encode()).hexdigest()
open(sys.argv[2], "w").write(form(p))
PY
run 1 "$mfc" verify "$tmp/rehashed.json"
grep -q MF-L002 "$tmp/err" || fail "rehashed plan with a broken invariant: $(cat "$tmp/err")"

# The default form is the product's own: other digests, our identity, our loader.
run 0 "$mfc" fixtures/harness/golden.yaml "${snap[@]}" -o -
[[ $(jq -r .compiler_identity.name "$tmp/out") == mf-compile ]] || fail "default identity"
[[ $(jq -r .compiled_sha256 "$tmp/out") != 1d65583f* ]] || fail "default form took Millforge's digest"
run 2 "$mfc" fixtures/harness/golden.yaml "${snap[@]}" --emit millforge-v2 -o -
grep -q MF-S018 "$tmp/err" || fail "unknown form: $(cat "$tmp/err")"
# A Millforge snapshot whose entries changed after it was taken.
jq '.tools[0].descriptor_sha256 = "'"$(printf 'e%.0s' {1..64})"'"' $m/golden-snapshot.json >"$tmp/drift.json"
run 2 "$mfc" fixtures/harness/golden.yaml --catalog "$tmp/drift.json" --profiles fixtures/harness/profiles.json -o -
grep -q MF-R008 "$tmp/err" || fail "snapshot drift: $(cat "$tmp/err")"

# Millforge's builtin harness fixtures (their twins in fixtures/harness/builtin/) against the
# built-in catalog, as tests/compiler/test_builtin_compiler_fixtures.py expects them: the
# capabilities they need, their artifact policy and which node produces what.
while read -r n caps produced; do
  run 0 "$mfc" fixtures/harness/builtin/$n.yaml --emit millforge-v1 -o -
  [[ $(jq -r '.required_capabilities | join(",")' "$tmp/out") == "$caps" ]] || fail "$n: capabilities"
  [[ $(jq -r '[.nodes[] | select(.produced_artifact_ids != []) |
      .node_id + "=" + (.produced_artifact_ids | join("+"))] | join(",")' "$tmp/out") == "$produced" ]] ||
    fail "$n: producers $(jq -c '[.nodes[] | {(.node_id): .produced_artifact_ids}]' "$tmp/out")"
done <<'BUILTINS'
planner artifact.write,request.read,terminal.intent write_plan=plan
builder artifact.read,artifact.write,process.static_check,process.test,request.read,terminal.intent,workspace.read,workspace.write write_patch_summary=patch_summary,write_test_results=test_results
checker artifact.read,artifact.write,terminal.intent write_checker_verdict=arbiter_verdict+checker_verdict
arbiter artifact.read,artifact.write,request.read,terminal.intent write_arbiter_verdict=arbiter_verdict+checker_verdict
BUILTINS
# The builder without process.test granted: MF-C001 alone.
run 2 "$mfc" fixtures/harness/builtin/builder.yaml -o - --capabilities \
  artifact.read,artifact.write,process.static_check,request.read,terminal.intent,workspace.read,workspace.write
[[ $(grep -o 'error MF-[A-Z0-9]*' "$tmp/err" | sort -u | tr '\n' ' ') == "error MF-C001 " ]] ||
  fail "builder without process.test: $(cat "$tmp/err")"
grep -q '"process.test"' "$tmp/err" || fail "C001 names the capability"
# Its patch summary node made to produce the plan instead: undeclared (A001), not what the tool
# lists (A002), and the summary then has no producer (A004) — Millforge's three.
sed 's/      produces: \[patch_summary\]/      produces: [plan]/' fixtures/harness/builtin/builder.yaml >"$tmp/builder.yaml"
run 2 "$mfc" "$tmp/builder.yaml" -o -
[[ $(grep -o 'error MF-[A-Z0-9]*' "$tmp/err" | sort | tr '\n' ' ') == "error MF-A001 error MF-A002 error MF-A004 " ]] ||
  fail "builder producing plan: $(cat "$tmp/err")"

# Configured terminals: present only with --legal-terminals, and they run.
run 2 "$mfc" $m/configured-terminals.yaml -o -
grep -q 'MF-R002.*builtin.pi_compat.terminal.done@1' "$tmp/err" || fail "configured tool without --legal-terminals"
run 0 "$mfc" $m/configured-terminals.yaml --legal-terminals DONE,NEEDS_REVIEW -o -
cp "$tmp/out" "$tmp/configured.plan"
[[ $(jq -r '[.nodes[].model_tool_name] | sort | join(",")' "$tmp/configured.plan") == \
  read,terminal_done,terminal_needs_review ]] || fail "configured model names"
mkdir "$tmp/art"
run 0 "$MF_BIN/mf-run" --plan "$tmp/configured.plan" --model scripted:$m/configured-terminals.run.json \
  --workspace fixtures/repository --artifacts "$tmp/art" --fixed-clock --trace "$tmp/configured.jsonl"
# The first terminal call gives its control another tool's result and is refused; the second ends.
[[ $(jq -r '.result.terminal_result + " " + .result.node_id' "$tmp/out") == "NEEDS_REVIEW needs_review" ]] ||
  fail "configured run: $(cat "$tmp/out")"
run 0 "$MF_BIN/mf-replay" "$tmp/configured.jsonl"

echo "millforge_parity: ok"
