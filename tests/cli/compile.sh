#!/usr/bin/env bash
# mf-compile end to end (docs/formats/harness.md, docs/formats/plan.md): compile | verify through a
# pipe, YAML/JSON twins and stdin give the same bytes, --out-dir DIR publishing (names, no-clobber,
# MF-O004, no temp files), request faults (MF-S017, MF-S018, usage errors), rejected sources (report
# only, nothing on stdout, file:line:column on stderr), verify of tampered plans (MF-L004, MF-L002),
# --store refs, credentials never repeated (MF-S026), the built-in catalog and profiles, --help, and
# the largest graph the format allows (512 nodes, 64 terminals, from bench/gen_harness.py).
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"

bin=$(cd "$MF_BIN" && pwd)
mfc=$bin/mf-compile
mfs=$bin/mf-store
root=${MF_SOURCE_DIR:-.}
h=$root/fixtures/harness
[[ -x $mfc ]] || fail "$mfc is not built"
command -v jq >/dev/null || fail "jq is not installed"
command -v python3 >/dev/null || fail "python3 is not installed"
unset MF_STORE

fx=(--catalog "$h/catalog.json" --profiles "$h/profiles.json")
id=millforge.test.golden.compiler.v1

out() { cat "$tmp/out"; }
expect_no_stdout() { [[ ! -s $tmp/out ]] || fail "$1: wrote to stdout: $(head -c 300 "$tmp/out")"; }
expect_err() { grep -Eq -- "$1" "$tmp/err" || fail "$2: stderr lacks /$1/: $(cat "$tmp/err")"; }
# Every stderr line of a failed compile is a tool-prefixed diagnostic.
expect_diag_lines() {
  [[ -s $tmp/err ]] || fail "$1: nothing on stderr"
  if grep -Ev '^mf-compile: .*error MF-[A-Z][0-9]{3}: ' "$tmp/err" >/dev/null; then
    fail "$1: stderr has lines that are not diagnostics: $(cat "$tmp/err")"
  fi
}
# expect_dir DIR NAME...: DIR holds exactly these entries (so no temporary files either).
expect_dir() {
  local dir=$1
  shift
  local want have
  want=$(printf '%s\n' "$@" | sort)
  have=$(ls -A "$dir" | sort)
  [[ $have == "$want" ]] || fail "$dir holds [${have//$'\n'/ }], expected [${want//$'\n'/ }]"
}

# --- compile | verify through a pipe ----------------------------------------------------------------
rc=0
"$mfc" "$h/golden.yaml" "${fx[@]}" -o - >"$tmp/plan" 2>"$tmp/err" || rc=$?
[[ $rc -eq 0 ]] || fail "golden.yaml exited $rc: $(cat "$tmp/err")"
[[ ! -s $tmp/err ]] || fail "a successful compile wrote to stderr: $(cat "$tmp/err")"
sha=$(jq -r .compiled_sha256 "$tmp/plan")
[[ $sha =~ ^[0-9a-f]{64}$ ]] || fail "plan has no compiled_sha256: $sha"
[[ $(jq -r .kind "$tmp/plan") == compiled_millforge_harness ]] || fail "plan kind"
"$bin/mf-store" canon "$tmp/plan" | cmp -s - "$tmp/plan" || fail "the plan is not canonical JSON"
set +e
"$mfc" "$h/golden.yaml" "${fx[@]}" -o - | "$mfc" verify - >"$tmp/out" 2>"$tmp/err"
status=("${PIPESTATUS[@]}")
set -e
[[ ${status[0]} -eq 0 && ${status[1]} -eq 0 ]] ||
  fail "compile | verify exited ${status[*]}: $(cat "$tmp/err")"
[[ $(jq -c .verified "$tmp/out") == true ]] || fail "verify did not say verified: $(out)"
grep -q '"verified":true' "$tmp/out" || fail "verify output is not compact JSON: $(out)"
[[ $(jq -r .compiled_sha256 "$tmp/out") == "$sha" ]] || fail "verify reports another digest: $(out)"
[[ $(jq -r .harness_id "$tmp/out") == "$id" ]] || fail "verify reports another harness_id"
[[ $(jq -r .nodes "$tmp/out") == 5 ]] || fail "verify reports $(jq -r .nodes "$tmp/out") nodes"
plan_name="$id@1.$sha.compiled.json"
[[ $(jq -r .file "$tmp/out") == "$plan_name" ]] || fail "verify names the file $(jq -r .file "$tmp/out")"
run 0 "$mfc" verify "$tmp/plan"
[[ $(jq -r .compiled_sha256 "$tmp/out") == "$sha" ]] || fail "verify FILE reports another digest"

# --- YAML and JSON twins, stdin ------------------------------------------------------------------
run 0 "$mfc" "$h/golden.json" "${fx[@]}" -o -
cmp -s "$tmp/plan" "$tmp/out" || fail "golden.yaml and golden.json compile to different bytes"
run 0 "$mfc" "$h/golden.yaml" "${fx[@]}" # -o - is the default
cmp -s "$tmp/plan" "$tmp/out" || fail "without -o the plan is not on stdout"
stdin=$h/golden.yaml run 0 "$mfc" - "${fx[@]}"
cmp -s "$tmp/plan" "$tmp/out" || fail "YAML on stdin compiles to other bytes"
stdin=$h/golden.json run 0 "$mfc" - "${fx[@]}" -o -
cmp -s "$tmp/plan" "$tmp/out" || fail "JSON on stdin (sniffed) compiles to other bytes"
stdin=$h/golden.json run 0 "$mfc" --format json "${fx[@]}" -
cmp -s "$tmp/plan" "$tmp/out" || fail "--format json on stdin compiles to other bytes"
stdin=$h/golden.yaml run 0 "$mfc" --format yaml "${fx[@]}" -
cmp -s "$tmp/plan" "$tmp/out" || fail "--format yaml on stdin compiles to other bytes"
cp "$h/golden.yaml" "$tmp/golden.txt"
run 2 "$mfc" "$tmp/golden.txt" "${fx[@]}"
expect_no_stdout "a source without a known extension"
run 0 "$mfc" --format yaml "$tmp/golden.txt" "${fx[@]}"
cmp -s "$tmp/plan" "$tmp/out" || fail "--format yaml on a .txt file compiles to other bytes"
run 2 "$mfc" --format toml "$h/golden.yaml" "${fx[@]}"
expect_no_stdout "--format toml"

# --- --out-dir DIR ------------------------------------------------------------------------------------
d=$tmp/plans
mkdir "$d"
run 0 "$mfc" "$h/golden.yaml" "${fx[@]}" --out-dir "$d"
# The report is named by the request that made it (the same plan can come from several requests).
report_name="$id@1.request-$(jq -r .request_sha256 "$tmp/out").diagnostics.json"
expect_dir "$d" "$plan_name" "$report_name"
cmp -s "$tmp/plan" "$d/$plan_name" || fail "--out-dir plan differs from the -o - plan"
cmp -s "$tmp/out" "$d/$report_name" || fail "stdout is not the report written beside the plan"
[[ $(jq -r .status "$tmp/out") == compiled ]] || fail "report status: $(out)"
[[ $(jq -r .plan_file "$tmp/out") == "$plan_name" ]] || fail "report plan_file: $(out)"
[[ $(jq -r .compiled_sha256 "$tmp/out") == "$sha" ]] || fail "report compiled_sha256: $(out)"
[[ $(jq -c .failure_phase "$tmp/out") == null ]] || fail "report failure_phase: $(out)"
[[ $(jq -c .diagnostics "$tmp/out") == '[]' ]] || fail "report diagnostics: $(out)"
"$mfs" canon "$d/$report_name" | cmp -s - "$d/$report_name" || fail "the report is not canonical"
cp "$tmp/out" "$tmp/report"
run 0 "$mfc" "$h/golden.yaml" "${fx[@]}" --out-dir "$d" # again: same bytes, nothing new
cmp -s "$tmp/report" "$tmp/out" || fail "a second --out-dir compile printed another report"
expect_dir "$d" "$plan_name" "$report_name"
cmp -s "$tmp/plan" "$d/$plan_name" || fail "a second --out-dir compile changed the plan"
mkdir "$tmp/twin"
run 0 "$mfc" "$h/golden.json" "${fx[@]}" --out-dir "$tmp/twin/" # the JSON twin: the same plan, same name
twin_report="$id@1.request-$(jq -r .request_sha256 "$tmp/out").diagnostics.json"
[[ $twin_report != "$report_name" ]] || fail "the JSON twin's request has the YAML request's digest"
expect_dir "$tmp/twin" "$plan_name" "$twin_report"
cmp -s "$tmp/plan" "$tmp/twin/$plan_name" || fail "the JSON twin published other plan bytes"
run 0 "$mfc" "$h/golden.json" "${fx[@]}" --out-dir "$d" # beside the YAML request's: both reports kept
expect_dir "$d" "$plan_name" "$report_name" "$twin_report"
rm "$d/$twin_report"

# An altered plan under the published name is never overwritten: MF-O004, exit 3.
sed 's/Preserve this first/Preserve this FIRST/' "$d/$plan_name" >"$tmp/altered"
cmp -s "$tmp/altered" "$d/$plan_name" && fail "sed did not alter the plan"
cp "$tmp/altered" "$d/$plan_name"
run 3 "$mfc" "$h/golden.yaml" "${fx[@]}" --out-dir "$d"
expect_err 'error MF-O004' "republishing over an altered plan"
expect_no_stdout "republishing over an altered plan"
cmp -s "$tmp/altered" "$d/$plan_name" || fail "the altered plan was touched"
cmp -s "$tmp/report" "$d/$report_name" || fail "the report beside an altered plan was touched"
expect_dir "$d" "$plan_name" "$report_name"
cp "$tmp/plan" "$d/$plan_name" # the original bytes back: publishing succeeds again
run 0 "$mfc" "$h/golden.yaml" "${fx[@]}" --out-dir "$d"
expect_dir "$d" "$plan_name" "$report_name"

# A missing --out-dir directory is a rejected request (MF-S017, exit 2); it is never created.
run 2 "$mfc" "$h/golden.yaml" "${fx[@]}" --out-dir "$tmp/missing"
expect_err '^mf-compile: .*error MF-S017: ' "--out-dir a missing directory"
expect_diag_lines "--out-dir a missing directory"
expect_no_stdout "--out-dir a missing directory"
[[ ! -e $tmp/missing ]] || fail "--out-dir created the missing directory"
: >"$tmp/a-file"
run 2 "$mfc" "$h/golden.yaml" "${fx[@]}" --out-dir "$tmp/a-file"
expect_err 'error MF-S017' "--out-dir a regular file"
[[ ! -s $tmp/a-file ]] || fail "--out-dir a regular file wrote into it"

# --- request faults ----------------------------------------------------------------------------------
for bad in lower COMPLETE,lower ' COMPLETE' COMPLETE,,BLOCKED ''; do
  run 2 "$mfc" "$h/golden.yaml" "${fx[@]}" --legal-terminals "$bad"
  expect_err '^mf-compile: .*error MF-S018: ' "--legal-terminals '$bad'"
  expect_diag_lines "--legal-terminals '$bad'"
  expect_no_stdout "--legal-terminals '$bad'"
done
run 2 "$mfc" "$h/golden.yaml" "${fx[@]}" --capabilities 'a b'
expect_err 'error MF-S018' "--capabilities 'a b'"
expect_no_stdout "--capabilities 'a b'"
run 2 "$mfc" "$h/golden.yaml" "${fx[@]}" --stage Builder
expect_err 'error MF-S018' "--stage Builder"
expect_no_stdout "--stage Builder"
run 0 "$mfc" "$h/golden.yaml" "${fx[@]}" --legal-terminals BUILDER_COMPLETE,BLOCKED --stage builder \
  --expect-harness-id "$id" --capabilities workspace.read,artifact.write,terminal.intent
cmp -s "$tmp/plan" "$tmp/out" || fail "request options that all pass changed the plan"

# A request fault with --out-dir DIR files a rejected report there and no plan.
mkdir "$tmp/req"
run 2 "$mfc" "$h/golden.yaml" "${fx[@]}" --legal-terminals lower --out-dir "$tmp/req"
expect_err 'error MF-S018' "--legal-terminals lower --out-dir DIR"
[[ $(ls -A "$tmp/req" | wc -l) -eq 1 ]] || fail "request fault with --out-dir: $(ls -A "$tmp/req")"
[[ $(ls -A "$tmp/req") =~ ^request-[0-9a-f]{64}\.diagnostics\.json$ ]] ||
  fail "request fault with --out-dir wrote $(ls -A "$tmp/req")"
cmp -s "$tmp/out" "$tmp/req/$(ls -A "$tmp/req")" || fail "stdout is not the request fault's report"
[[ $(jq -r .failure_phase "$tmp/out") == request ]] || fail "request fault phase: $(out)"

# Usage errors.
run 2 "$mfc" "$h/golden.yaml" "${fx[@]}" -o - --diagnostics -
expect_err 'usage error' "-o - with --diagnostics -"
expect_no_stdout "-o - with --diagnostics -"
run 2 "$mfc" "$h/golden.yaml" "${fx[@]}" --diagnostics -
expect_err 'usage error' "--diagnostics - with the plan on stdout by default"
expect_no_stdout "--diagnostics - with the plan on stdout by default"
run 2 "$mfc" "$h/golden.yaml" "$h/golden.json" "${fx[@]}"
expect_err 'usage error' "two HARNESS files"
run 2 "$mfc" "$tmp/no-such.yaml" "${fx[@]}"
expect_err 'error MF-S013' "a missing source"
expect_no_stdout "a missing source"
run 2 "$mfc" "$h/golden.yaml" --catalog "$tmp/no-such.json" --profiles "$h/profiles.json"
expect_err 'error MF-S013' "a missing catalog"
expect_no_stdout "a missing catalog"

# --- rejected sources ---------------------------------------------------------------------------------
bad=$h/invalid/MF-G001-unknown-prerequisite.yaml
run 2 "$mfc" "$bad" "${fx[@]}"
expect_no_stdout "a rejected source"
expect_diag_lines "a rejected source"
# The fault is at /graph/nodes/complete/prerequisites/0, line 41 of the fixture.
expect_err "^mf-compile: [^ ]*MF-G001-unknown-prerequisite\\.yaml:41:[0-9]+: error MF-G001: " \
  "a rejected source's diagnostic has no line:column"

mkdir "$tmp/rej"
run 2 "$mfc" "$bad" "${fx[@]}" --out-dir "$tmp/rej" --diagnostics "$tmp/rej.json"
expect_err 'error MF-G001' "a rejected source with --out-dir"
[[ $(ls -A "$tmp/rej" | wc -l) -eq 1 ]] || fail "rejected --out-dir wrote $(ls -A "$tmp/rej")"
rej_name=$(ls -A "$tmp/rej")
[[ $rej_name =~ ^request-([0-9a-f]{64})\.diagnostics\.json$ ]] || fail "rejected --out-dir wrote $rej_name"
request_sha=${BASH_REMATCH[1]}
cmp -s "$tmp/out" "$tmp/rej/$rej_name" || fail "stdout is not the rejected report"
cmp -s "$tmp/out" "$tmp/rej.json" || fail "--diagnostics FILE is not the rejected report"
[[ $(jq -r .status "$tmp/out") == rejected ]] || fail "rejected report status: $(out)"
[[ $(jq -r .failure_phase "$tmp/out") == graph ]] || fail "rejected report phase: $(out)"
[[ $(jq -r .request_sha256 "$tmp/out") == "$request_sha" ]] || fail "report name vs request_sha256"
[[ $(jq -c '.plan_file, .compiled_sha256' "$tmp/out" | tr -d '\n') == nullnull ]] ||
  fail "a rejected report names a plan: $(out)"
[[ $(jq -r '.diagnostics[0].code' "$tmp/out") == MF-G001 ]] || fail "rejected report code: $(out)"
# A rejected report still names the harness: the identity its source states.
[[ $(jq -c '[.harness_id, .harness_version]' "$tmp/out") == '["millforge.test.simple_success.v1",1]' ]] ||
  fail "a rejected report lost the source's identity: $(out)"
# ... as far as the source states it: a version that is not an integer is not an identity.
sed 's/^harness_version: 1$/harness_version: one/' "$bad" >"$tmp/bad-version.yaml"
run 2 "$mfc" "$tmp/bad-version.yaml" "${fx[@]}" -o "$tmp/never.plan"
[[ $(jq -r .failure_phase "$tmp/out") == schema ]] || fail "bad version phase: $(out)"
[[ $(jq -c '[.harness_id, .harness_version]' "$tmp/out") == '["millforge.test.simple_success.v1",null]' ]] ||
  fail "a rejected report with a malformed version: $(out)"
run 2 "$mfc" "$bad" "${fx[@]}" --out-dir "$tmp/rej" # again: same request, same name
[[ $(ls -A "$tmp/rej") == "$rej_name" ]] || fail "a repeated rejected request wrote another report"

# --diagnostics FILE with the plan on stdout.
run 0 "$mfc" "$h/golden.yaml" "${fx[@]}" --diagnostics "$tmp/diag.json"
cmp -s "$tmp/plan" "$tmp/out" || fail "--diagnostics FILE changed stdout"
cmp -s "$tmp/report" "$tmp/diag.json" || fail "--diagnostics FILE is not the compile report"
# With --out-dir DIR the report is stdout's one document; --diagnostics - does not print it twice.
run 0 "$mfc" "$h/golden.yaml" "${fx[@]}" --out-dir "$d" --diagnostics -
cmp -s "$tmp/report" "$tmp/out" || fail "--out-dir DIR --diagnostics - printed $(jq -s length "$tmp/out") reports"

# A JSON syntax error on stdin is located on <stdin>.
printf '{"schema_version": "1.0",\n  "kind": }\n' >"$tmp/broken.json"
stdin=$tmp/broken.json run 2 "$mfc" - "${fx[@]}"
expect_no_stdout "broken JSON on stdin"
expect_err '^mf-compile: <stdin>:2:[0-9]+: error MF-S011: ' "broken JSON on stdin"

# --- verify --------------------------------------------------------------------------------------
# One character of a string value flipped, the plan still canonical: MF-L004, exit 1.
sed 's/Preserve this second/Preserve this Second/' "$tmp/plan" >"$tmp/tampered"
cmp -s "$tmp/plan" "$tmp/tampered" && fail "sed did not tamper with the plan"
"$mfs" canon "$tmp/tampered" | cmp -s - "$tmp/tampered" || fail "the tampered plan is not canonical"
run 1 "$mfc" verify "$tmp/tampered"
expect_err 'error MF-L004' "verify of a tampered plan"
expect_no_stdout "verify of a tampered plan"
stdin=$tmp/tampered run 1 "$mfc" verify -
expect_err '^mf-compile: <stdin>.*error MF-L004' "verify - of a tampered plan"
# Re-indented: not canonical, MF-L002, exit 1.
jq . "$tmp/plan" >"$tmp/indented"
run 1 "$mfc" verify "$tmp/indented"
expect_err 'error MF-L002' "verify of a re-indented plan"
expect_no_stdout "verify of a re-indented plan"
# Canonical but missing its final newline: MF-L002.
head -c -1 "$tmp/plan" >"$tmp/no-newline"
run 1 "$mfc" verify "$tmp/no-newline"
expect_err 'error MF-L002' "verify of a plan without its newline"
# Not JSON, missing: rejected input, exit 2.
echo 'not json' >"$tmp/not-json"
run 2 "$mfc" verify "$tmp/not-json"
expect_err 'error MF-S' "verify of a non-JSON file"
expect_no_stdout "verify of a non-JSON file"
run 2 "$mfc" verify "$tmp/no-such-plan.json"
expect_err 'error MF-S013' "verify of a missing file"
expect_no_stdout "verify of a missing file"

# --- --store ----------------------------------------------------------------------------------------
s=$tmp/store
run 0 "$mfc" "$h/golden.yaml" "${fx[@]}" --store "$s"
cmp -s "$tmp/plan" "$tmp/out" || fail "--store changed the plan on stdout"
run 0 "$mfs" --store "$s" ref get "compile/$id/1/plan"
plan_digest=$(out)
run 0 "$mfs" --store "$s" get "$plan_digest"
cmp -s "$tmp/plan" "$tmp/out" || fail "the stored plan differs from the -o - plan"
run 0 "$mfs" --store "$s" ref get "compile/$id/1/diagnostics"
run 0 "$mfs" --store "$s" get "$(out)"
cmp -s "$tmp/report" "$tmp/out" || fail "the stored report differs from the compile report"
run 0 "$mfc" "$h/golden.yaml" "${fx[@]}" --store "$s" # idempotent
run 2 "$mfc" "$bad" "${fx[@]}" --store "$s"
expect_no_stdout "a rejected source with --store"
run 0 "$mfs" --store "$s" ls --refs
grep -q '"ref":"compile/rejected/[0-9a-f]\{64\}"' "$tmp/out" || fail "no rejected report ref: $(out)"

# --- credentials are refused and never repeated -------------------------------------------------------
secret="sk-$(printf 'abcdefghij%.0s' 1 2 3 4)" # sk- and 40 letters
sed "s/Preserve this second instruction./Use $secret to call./" "$h/golden.yaml" >"$tmp/secret.yaml"
grep -q -- "$secret" "$tmp/secret.yaml" || fail "the secret fixture lacks its secret"
mkdir "$tmp/sec"
run 2 "$mfc" "$tmp/secret.yaml" "${fx[@]}" --diagnostics "$tmp/secret-report.json"
expect_err 'error MF-S026' "a secret in system_instructions"
expect_no_stdout "a secret in system_instructions"
grep -q -- "$secret" "$tmp/err" && fail "the secret appears on stderr"
grep -q -- "$secret" "$tmp/secret-report.json" && fail "the secret appears in the report"
[[ $(jq -r '.diagnostics[0].code' "$tmp/secret-report.json") == MF-S026 ]] || fail "report code"
run 2 "$mfc" "$tmp/secret.yaml" "${fx[@]}" --out-dir "$tmp/sec"
grep -rq -- "$secret" "$tmp/sec" "$tmp/out" "$tmp/err" && fail "the secret appears in --out-dir's report"
# A secret used as a mapping key (a node id, an unknown field, a duplicate key) is refused too, and
# no diagnostic repeats it, not even in its JSON pointer.
for edit in "s/^    write_failure_report:/    $secret:/" \
  "s/^  max_tool_errors: 2/  max_tool_errors: 2\\n  $secret: 1/" \
  "s/^  max_tool_errors: 2/  $secret: 1\\n  $secret: 2/"; do
  sed "$edit" "$h/golden.yaml" >"$tmp/secret-key.yaml"
  grep -q -- "$secret" "$tmp/secret-key.yaml" || fail "sed '$edit' did not place the secret"
  run 2 "$mfc" "$tmp/secret-key.yaml" "${fx[@]}" --diagnostics "$tmp/secret-report.json"
  expect_no_stdout "a secret as a key ($edit)"
  grep -q -- "$secret" "$tmp/err" && fail "a secret as a key ($edit) appears on stderr: $(cat "$tmp/err")"
  grep -q -- "$secret" "$tmp/secret-report.json" && fail "a secret as a key ($edit) appears in the report"
done

# --- --help, built-in catalog and profiles ----------------------------------------------------------
run 0 "$mfc" --help
grep -q 'verify' "$tmp/out" || fail "--help does not mention verify"
grep -q '^Examples:$' "$tmp/out" || fail "--help has no examples"
# A long example is wrapped with trailing backslashes: joined again, it is one line.
sed -e ':a' -e '/ \\$/N; s/ \\\n */ /; ta' "$tmp/out" | grep -q '^  mf-compile .*| mf-compile verify -' ||
  fail "--help shows no compile | verify"
[[ ! -s $tmp/err ]] || fail "--help wrote to stderr"

cat >"$tmp/builtin.yaml" <<'EOF'
schema_version: "1.0"
kind: millforge_harness
harness_id: millforge.test.builtin_tools.v1
harness_version: 2
stage_scope:
  stage_kind_ids: [builder]
model_profile_id: profile.scripted
prompt:
  policy_id: millforge.test.builtin_tools.policy.v1
  system_instructions: |
    Read the file, then submit.
  include_request_context: false
budgets:
  max_iterations: 4
  max_validation_retries: 1
  max_tool_errors: 1
  max_prerequisite_violations: 1
  max_premature_terminal_attempts: 1
context:
  strategy_id: forge.tiered.v1
  budget_tokens: 4096
  keep_recent_iterations: 1
  phase_thresholds: [0.5, 0.75, 0.95]
graph:
  nodes:
    read:
      tool_ref: builtin.pi_compat.read@1
      required: true
    submit:
      tool_ref: builtin.pi_compat.submit@1
      terminal_result: COMPLETE
      prerequisites: [{node_id: read}]
EOF
run 0 "$mfc" --catalog builtin "$tmp/builtin.yaml"
cp "$tmp/out" "$tmp/builtin-plan"
[[ $(jq -r '.nodes | map(.binding.tool_id) | join(",")' "$tmp/builtin-plan") == \
  builtin.pi_compat.read,builtin.pi_compat.submit ]] || fail "built-in bindings: $(out)"
[[ $(jq -r .model_profile.profile_id "$tmp/builtin-plan") == profile.scripted ]] || fail "profile"
run 0 "$mfc" "$tmp/builtin.yaml" -o - # no --catalog: the built-in catalog is the default
cmp -s "$tmp/builtin-plan" "$tmp/out" || fail "no --catalog differs from --catalog builtin"
stdin=$tmp/builtin-plan run 0 "$mfc" verify -
[[ $(jq -r .file "$tmp/out") == millforge.test.builtin_tools.v1@2.*.compiled.json ]] ||
  fail "built-in plan file name: $(out)"
run 2 "$mfc" --catalog "$h/catalog.json" "$tmp/builtin.yaml" # the file replaces the built-ins
expect_err 'error MF-R002' "built-in tools without --catalog builtin"
expect_no_stdout "built-in tools without --catalog builtin"

# --- the largest graph: 512 nodes, 64 terminals -------------------------------------------------------
python3 "$root/bench/gen_harness.py" "$tmp/gen" 512
python3 "$root/bench/gen_harness.py" "$tmp/gen" 512 --json
g=(--catalog "$tmp/gen/catalog-512.json" --profiles "$tmp/gen/profiles.json")
run 0 "$mfc" "$tmp/gen/harness-512.yaml" "${g[@]}" -o -
cp "$tmp/out" "$tmp/big-plan"
[[ $(jq '.nodes | length' "$tmp/big-plan") -eq 512 ]] || fail "the generated plan lacks nodes"
[[ $(jq '.terminal_result_map | length' "$tmp/big-plan") -eq 64 ]] || fail "the plan lacks terminals"
[[ $(jq '[.nodes[].prerequisites[].argument_matches | length] | add' "$tmp/big-plan") -gt 0 ]] ||
  fail "the generated plan has no argument matches"
stdin=$tmp/big-plan run 0 "$mfc" verify -
[[ $(jq -r .nodes "$tmp/out") == 512 && $(jq -c .verified "$tmp/out") == true ]] ||
  fail "verify of the 512-node plan: $(out)"
run 0 "$mfc" "$tmp/gen/harness-512.json" "${g[@]}"
cmp -s "$tmp/big-plan" "$tmp/out" || fail "the 512-node YAML and JSON twins compile differently"

echo "compile: ok"
