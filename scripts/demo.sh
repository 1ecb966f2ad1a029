#!/usr/bin/env bash
# The main job on the embedded default (scripted model): compile Millforge's golden harness, run it
# through the guarded loop with real tools and replay it strictly, then the Forge vertical slice end to
# end: run -> replay -> eval -> compare -> confined read -> exit audit, composed only through files.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${MF_BIN:-build/bin}
out=target
mkdir -p "$out"
step() { printf '\n== %s\n' "$*" >&2; }

step "mf-compile: the golden harness into a content-addressed plan (report on stdout)"
mkdir -p "$out/plans"
"$bin/mf-compile" fixtures/harness/golden.yaml --catalog fixtures/harness/catalog.json \
  --profiles fixtures/harness/profiles.json --out-dir "$out/plans" | jq -c '{status, plan_file}'
"$bin/mf-compile" fixtures/harness/golden.json --catalog fixtures/harness/catalog.json \
  --profiles fixtures/harness/profiles.json -o - | "$bin/mf-compile" verify - | jq -c .

step "mf-run --plan: the golden harness, a model that makes every mistake the guardrails correct"
"$bin/mf-compile" fixtures/harness/golden.yaml --catalog fixtures/harness/catalog.json \
  --profiles fixtures/harness/profiles.json -o - >"$out/golden.plan.json"
rm -rf "$out/artifacts" && mkdir -p "$out/artifacts"
"$bin/mf-run" --plan "$out/golden.plan.json" \
  --model scripted:fixtures/harness/runs/golden-recover.json --workspace fixtures/repository \
  --artifacts "$out/artifacts" --trace-content inline --run-id demo-plan --fixed-clock \
  --trace "$out/golden-run.jsonl" | jq -c '{terminal, result: .result.terminal_result, tool_calls}'
jq -c 'select(.event == "guardrail_violation") | {kind, message}' "$out/golden-run.jsonl"
"$bin/mf-replay" "$out/golden-run.jsonl" | jq -c '{status, terminal, tool_calls, violations_by_kind}'
"$bin/mf-replay" --strict --plan "$out/golden.plan.json" --workspace fixtures/repository \
  "$out/golden-run.jsonl"

step "mf-run: valid first response (result on stdout, trace in $out/forge-valid.jsonl)"
"$bin/mf-run" --task fixtures/forge/task-valid.json \
  --model scripted:fixtures/forge/responses-valid.json --trace "$out/forge-valid.jsonl" | jq .risk

step "mf-run: one targeted repair, deterministic (fixed run id and clock)"
"$bin/mf-run" --task fixtures/forge/task-valid.json \
  --model scripted:fixtures/forge/responses-repair.json --run-id demo-repair --fixed-clock \
  --trace "$out/forge-repair.jsonl"
jq -c '{seq, event}' "$out/forge-repair.jsonl"

step "mf-replay: integrity and summary without a model"
"$bin/mf-replay" "$out/forge-valid.jsonl"
"$bin/mf-replay" "$out/forge-repair.jsonl"

step "mf-eval: the four-case conformance suite, then a compare gate"
"$bin/mf-eval" run --suite fixtures/forge/eval-suite.json --output "$out/forge-eval.json" -j 2
jq -c '.summary' "$out/forge-eval.json"
"$bin/mf-eval" compare --baseline "$out/forge-eval.json" --candidate "$out/forge-eval.json"

step "mf-eval campaign: three samples per case in two shards, merged into one report, rendered"
for i in 1 2; do
  "$bin/mf-eval" run --suite fixtures/forge/eval-suite.json --output "$out/s$i.json" \
    --shard "$i/2" --repeat 3 --fixed-clock --quiet
done
"$bin/mf-eval" merge --output "$out/forge-repeat.json" "$out/s1.json" "$out/s2.json"
jq -c '.summary | {cases, attempts, pass_at_k, pass_hat_k, wilson95}' "$out/forge-repeat.json"
"$bin/mf-eval" report "$out/forge-repeat.json" --format html --output "$out/forge-repeat.html"

step "mf-toolread: a root-confined slice of the task fixture"
"$bin/mf-toolread" --root fixtures --path forge/task-valid.json --start-line 1 --end-line 20 |
  jq -c '{path, start_line, end_line, total_lines, file_sha256}'

step "mf-audit: execute everything again and hash the receipts"
mkdir -p "$out/audit"
"$bin/mf-audit" --fixtures fixtures --out-dir "$out/audit" >/dev/null
echo "demo: ok (report in $out/audit/exit-report.json)" >&2
