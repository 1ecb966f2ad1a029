#!/usr/bin/env bash
# mf-audit: reproducible report, pinned digest, and one attack per receipt (each must make it fail).
set -euo pipefail
bin=$(cd "${MF_BIN:?}" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# The report digest for the committed fixtures; any change to what the product does changes it.
PINNED=805a09f6be85d9919ca62a8d878bf51283e2476a07a48d1fb393dae80999076a

# --out-dir names a directory that exists (mf-audit never creates one it is given).
mkdir "$tmp/a" "$tmp/b" "$tmp/c" "$tmp/s"
"$bin/mf-audit" --fixtures fixtures --out-dir "$tmp/a" >"$tmp/a.json" 2>"$tmp/a.table"
cmp -s "$tmp/a.json" "$tmp/a/exit-report.json" || fail "stdout differs from exit-report.json"
grep -q 'capability receipts *18 / 18' "$tmp/a.table" || fail "table: $(cat "$tmp/a.table")"
jq -e '.passed and ([.receipts[] | select(.holds)] | length) == 18' "$tmp/a.json" >/dev/null ||
  fail "receipts do not hold"
digest=$(jq -r .report_sha256 "$tmp/a.json")
[ "$digest" = "$PINNED" ] || fail "report digest $digest differs from the pinned $PINNED"

# Identical inputs in another directory, from another working directory: identical bytes.
cp -r fixtures "$tmp/fx"
(cd "$tmp" && "$bin/mf-audit" --fixtures fx --out-dir b -q >/dev/null)
cmp -s "$tmp/a/exit-report.json" "$tmp/b/exit-report.json" || fail "report not reproducible"
"$bin/mf-audit" --fixtures fixtures --out-dir "$tmp/c" -q --expect-sha256 "$PINNED" >/dev/null ||
  fail "--expect-sha256 with the right digest"
wrong=${PINNED%?}$([[ ${PINNED: -1} == 0 ]] && echo 1 || echo 0)
rc=0; "$bin/mf-audit" --fixtures fixtures --out-dir "$tmp/c" -q --expect-sha256 "$wrong" \
  >/dev/null 2>&1 || rc=$?
[ $rc -eq 1 ] || fail "--expect-sha256 mismatch exited $rc"

# attack NAME RECEIPT: run the audit on $tmp/NAME/fixtures with $tmp/NAME/bin and require that
# exactly the named receipt fails and the audit exits 1.
fresh() {
  rm -rf "$tmp/$1"; mkdir -p "$tmp/$1/bin" "$tmp/$1/out"
  cp -r fixtures "$tmp/$1/fixtures"
  for t in mf-compile mf-run mf-replay mf-eval mf-toolread mf-store; do ln -s "$bin/$t" "$tmp/$1/bin/$t"; done
}
attack() {
  local rc=0
  "$bin/mf-audit" --fixtures "$tmp/$1/fixtures" --bin-dir "$tmp/$1/bin" --out-dir "$tmp/$1/out" -q \
    ${store:+--store "$tmp/$1/store"} \
    >"$tmp/$1/report.json" 2>/dev/null || rc=$?
  [ $rc -eq 1 ] || fail "attack $1: audit exited $rc"
  jq -e --arg c "$2" '.passed == false and
      ([.receipts[] | select(.holds | not) | .capability] | index($c)) != null' \
    "$tmp/$1/report.json" >/dev/null || fail "attack $1: receipt $2 still holds"
}

fresh task  # a different task is not the pinned one
sed -i 's/"risk": "low"/"risk": "high"/' "$tmp/task/fixtures/forge/task-valid.json"
attack task typed_task_and_output_contract

fresh repair  # a first answer that needs no repair proves nothing about repair
cp fixtures/forge/responses-valid.json "$tmp/repair/fixtures/forge/responses-repair.json"
attack repair bounded_targeted_repair

fresh replay  # a replayer that does not read the trace
rm "$tmp/replay/bin/mf-replay"
printf '#!/bin/sh\necho %s\n' \
  "'{\"model_calls\":2,\"repairs\":1,\"status\":\"ok\",\"terminal\":\"completed\",\"trace_sha256\":\"0\"}'" \
  >"$tmp/replay/bin/mf-replay"
chmod +x "$tmp/replay/bin/mf-replay"
attack replay provider_free_replay

fresh tool  # a reader that serves anything, including paths outside its root
rm "$tmp/tool/bin/mf-toolread"
printf '#!/bin/sh\necho %s\n' "'{\"file_sha256\":\"0\",\"text\":\"\"}'" >"$tmp/tool/bin/mf-toolread"
chmod +x "$tmp/tool/bin/mf-toolread"
attack tool capability_scoped_tool

fresh gate  # an expectation the product does not meet
jq '(.cases[] | select(.id | test("provider")) | .expect.terminal) = "completed"' \
  fixtures/forge/eval-suite.json >"$tmp/gate/fixtures/forge/eval-suite.json"
attack gate executable_evaluation_gate

fresh compiled  # a JSON source that no longer says what its YAML twin says
sed -i 's/second instruction/other instruction/' "$tmp/compiled/fixtures/harness/golden.json"
attack compiled compiled_harness

fresh guarded  # a conversation without a mistake proves nothing about the guardrails
cp fixtures/harness/runs/golden-ok.json "$tmp/guarded/fixtures/harness/runs/golden-recover.json"
attack guarded guarded_tool_run

fresh projected  # a projection that shows every tool hides nothing
sed -i 's/^  mode: compiled$/  mode: all_tools/' "$tmp/projected/fixtures/harness/projected/projected.yaml"
attack projected prompt_projection
fresh campaign  # a campaign trace edited after its report was written
sed -i '1s/"event":"run_started"/"event":"run_started" /' \
  "$tmp/campaign/fixtures/audit/forge-campaign/traces/provider-failure.jsonl"
attack campaign campaign_traces
jq -e '[.receipts[] | select(.capability == "campaign_traces") | .failures[]] |
    any(test("provider-failure"))' "$tmp/campaign/report.json" >/dev/null ||
  fail "attack campaign: the edited trace is not named"

# With a store: one more receipt, the round trip through export and import, and the report kept.
"$bin/mf-audit" --fixtures fixtures --out-dir "$tmp/s" --store "$tmp/s/store" -q >"$tmp/s.json"
jq -e '.passed and (.receipts | length) == 19 and .receipts[8].capability == "content_addressed_store"' \
  "$tmp/s.json" >/dev/null || fail "store receipt"
[ "$("$bin/mf-store" --store "$tmp/s/store" ref get audit/report)" = "$(sha256sum <"$tmp/s.json" | cut -d' ' -f1)" ] ||
  fail "report not kept under audit/report"
fresh store  # a store that hands back other bytes than it was given
rm "$tmp/store/bin/mf-store"
cat >"$tmp/store/bin/mf-store" <<SH
#!/bin/sh
for a in "\$@"; do [ "\$a" = get ] && { echo tampered; exit 0; }; done
exec "$bin/mf-store" "\$@"
SH
chmod +x "$tmp/store/bin/mf-store"
store=1 attack store content_addressed_store
# Each audit ends when its children do: no run may sleep to a child's timeout (a missed exit once
# cost 60 s in one run out of six). Twelve runs, each well under the 60 s child limit.
for i in $(seq 1 12); do
  mkdir "$tmp/t$i"
  start=$(date +%s%N)
  "$bin/mf-audit" --fixtures fixtures --out-dir "$tmp/t$i" -q >/dev/null || fail "timed run $i failed"
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  (( ms < 20000 )) || fail "audit run $i took ${ms} ms"
done
# A manifest is refused whole, every problem located, before anything runs: exit 2, no file.
mkdir -p "$tmp/m/out" "$tmp/m/ok" "$tmp/m/mac" && echo data >"$tmp/m/f.txt"
cat >"$tmp/m/m.yaml" <<'YAML'
v: 1
kind: millforge_audit_manifest
pins:
  - path: f.txt
    sha256: "ABCDEF1111111111111111111111111111111111111111111111111111111111"
  - path: missing.txt
    sha256: "abcdef1111111111111111111111111111111111111111111111111111111111"
    note: extra
traces:
  - path: /etc/passwd
    sha256: "abcdef111111111111111111111111111111111111111111111111111111111"
YAML
rc=0; (cd "$tmp" && "$bin/mf-audit" m/m.yaml --out-dir m/out) >"$tmp/m.out" 2>"$tmp/m.err" || rc=$?
[ $rc -eq 2 ] || fail "a bad manifest exited $rc"
[ -z "$(ls -A "$tmp/m/out")" ] && [ ! -s "$tmp/m.out" ] || fail "a refused manifest wrote something"
for want in "m.yaml:5:5: error MF-S020: must be a SHA-256 digest" \
  "m.yaml:6:5: error MF-S013: missing.txt is not a file" "MF-S021: unknown field \"note\"" \
  "MF-S020: must be a path relative to the manifest's directory (at /traces/0/path)" \
  "(at /traces/0/sha256)"; do
  grep -qF "$want" "$tmp/m.err" || fail "manifest refusal lacks '$want': $(cat "$tmp/m.err")"
done
# A pin that no longer matches fails its receipt, named, and the audit exits 1.
printf 'v: 1\nkind: millforge_audit_manifest\npins:\n  - path: f.txt\n    sha256: "%s"\n' \
  "$(sha256sum <"$tmp/m/f.txt" | cut -d' ' -f1)" >"$tmp/m/ok.yaml"
"$bin/mf-audit" "$tmp/m/ok.yaml" --out-dir "$tmp/m/ok" -q >/dev/null || fail "a holding pin failed"
echo changed >"$tmp/m/f.txt"
rc=0; "$bin/mf-audit" "$tmp/m/ok.yaml" --out-dir "$tmp/m/ok" -q >/dev/null 2>"$tmp/m.err" || rc=$?
[ $rc -eq 1 ] && grep -q "pinned_file f.txt does not hold: f.txt has SHA-256" "$tmp/m.err" ||
  fail "a changed pinned file: exit $rc, $(cat "$tmp/m.err")"
# A trace under a MAC key: it holds under the key, and under another key the cause is named.
export AUDIT_TRACE_KEY=0123456789abcdef0123
"$bin/mf-run" --task fixtures/forge/task-valid.json \
  --model scripted:fixtures/forge/responses-valid.json --mac-key-env AUDIT_TRACE_KEY --fixed-clock \
  --trace "$tmp/m/t.jsonl" >/dev/null || fail "signed run"
printf 'v: 1\nkind: millforge_audit_manifest\ntraces:\n  - path: t.jsonl\n    mac_key_env: AUDIT_TRACE_KEY\n' \
  >"$tmp/m/mac.yaml"
"$bin/mf-audit" "$tmp/m/mac.yaml" --out-dir "$tmp/m/mac" -q >/dev/null || fail "a MAC'd trace failed"
rc=0; AUDIT_TRACE_KEY=0123456789abcdef0124 "$bin/mf-audit" "$tmp/m/mac.yaml" --out-dir "$tmp/m/mac" -q \
  >/dev/null 2>"$tmp/m.err" || rc=$?
[ $rc -eq 1 ] && grep -q "replayed_trace t.jsonl does not hold: .*t.jsonl:4: error MF-E017" "$tmp/m.err" ||
  fail "a trace under another key: exit $rc, $(cat "$tmp/m.err")"
rc=0; AUDIT_TRACE_KEY= "$bin/mf-audit" "$tmp/m/mac.yaml" --out-dir "$tmp/m/mac" -q 2>"$tmp/m.err" || rc=$?
[ $rc -eq 2 ] && grep -q "MF-S013: the environment variable AUDIT_TRACE_KEY is not set" "$tmp/m.err" ||
  fail "an unset key variable: exit $rc, $(cat "$tmp/m.err")"
# A campaign whose traces are in a store: it holds; a report whose traces the store lacks names the
# attempt and the missing object.
mkdir -p "$tmp/st/o" && cp fixtures/forge/*.json "$tmp/st/"
(cd "$tmp/st" && "$bin/mf-eval" run --suite eval-suite.json --fixed-clock --store store \
  --output report.json -q && "$bin/mf-eval" run --suite eval-suite.json --fixed-clock \
  --run-id-prefix other- --output other.json --journal other.journal -q) || fail "store campaigns"
printf 'v: 1\nkind: millforge_audit_manifest\ncampaigns:\n  - report: %s\n    store: store\n    suite: eval-suite.json\n' \
  report.json >"$tmp/st/m.yaml"
"$bin/mf-audit" "$tmp/st/m.yaml" --out-dir "$tmp/st/o" -q >/dev/null || fail "a store campaign failed"
sed 's/report: report.json/report: other.json/' "$tmp/st/m.yaml" >"$tmp/st/other.yaml"
rc=0; "$bin/mf-audit" "$tmp/st/other.yaml" --out-dir "$tmp/st/o" -q >/dev/null 2>"$tmp/m.err" || rc=$?
[ $rc -eq 1 ] && grep -q "campaign_traces other.json does not hold: .*MF-K001: attempt invalid-without-repair" \
  "$tmp/m.err" || fail "traces missing from the store: exit $rc, $(cat "$tmp/m.err")"
echo "audit: ok"
