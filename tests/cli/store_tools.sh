#!/usr/bin/env bash
# --store in mf-run and mf-eval: what they keep, under which refs, and nothing without a store.
set -euo pipefail
bin=$(cd "${MF_BIN:?}" && pwd)
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
f=$root/fixtures/forge
S=$tmp/store
get_ref() { "$bin/mf-store" --store "$S" ref get "$1"; }

# mf-run keeps the trace and the result under run/<id>/..., byte for byte.
"$bin/mf-run" --task $f/task-valid.json --model scripted:$f/responses-repair.json --run-id r1 \
  --store "$S" --trace "$tmp/r1.jsonl" >"$tmp/r1.json"
"$bin/mf-store" --store "$S" get "$(get_ref run/r1/trace)" | cmp -s - "$tmp/r1.jsonl" ||
  fail "stored trace differs"
"$bin/mf-store" --store "$S" get "$(get_ref run/r1/result)" | cmp -s - "$tmp/r1.json" ||
  fail "stored result differs"

# --trace-content store: each raw response is in the store under the digest the trace records.
"$bin/mf-run" --task $f/task-valid.json --model scripted:$f/responses-repair.json --run-id r2 \
  --store "$S" --trace-content store --trace "$tmp/r2.jsonl" >/dev/null
[ "$(head -n1 "$tmp/r2.jsonl" | jq -r .trace_content)" = store ] || fail "run_started.trace_content"
for call in 1 2; do
  recorded=$(jq -r "select(.event==\"model_responded\" and .call==$call) | .content_sha256" "$tmp/r2.jsonl")
  [ "$(get_ref run/r2/response/$call)" = "$recorded" ] || fail "response $call digest"
  jq -e 'has("content") | not' <(jq -c "select(.event==\"model_responded\" and .call==$call)" "$tmp/r2.jsonl") \
    >/dev/null || fail "response $call inline in the trace"
done
expected=$(jq -r '.steps[1].content' $f/responses-repair.json)
[ "$("$bin/mf-store" --store "$S" get "$(get_ref run/r2/response/2)")" = "$expected" ] ||
  fail "stored response bytes"
"$bin/mf-store" --store "$S" verify >/dev/null || fail "store does not verify"

# A failed run still keeps its trace, and no result.
rc=0; "$bin/mf-run" --task $f/task-valid.json --model scripted:$f/responses-provider-failure.json \
  --run-id r3 --store "$S" --trace "$tmp/r3.jsonl" 2>/dev/null >/dev/null || rc=$?
[ $rc -eq 1 ] || fail "failed run exit $rc"
get_ref run/r3/trace >/dev/null || fail "failed run trace not kept"
if get_ref run/r3/result >/dev/null 2>&1; then fail "failed run kept a result"; fi

# Refusals: the trace on stdout cannot be kept; content in the store needs a store.
rc=0; "$bin/mf-run" --task $f/task-valid.json --model scripted:$f/responses-valid.json \
  --store "$S" --trace - --output "$tmp/x.json" >/dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || fail "--store with --trace - exit $rc"
rc=0; (cd "$tmp" && env -u MF_STORE "$bin/mf-run" --task $f/task-valid.json \
  --model scripted:$f/responses-valid.json --trace-content store --trace t.jsonl >/dev/null 2>&1) || rc=$?
[ $rc -eq 2 ] || fail "--trace-content store without a store exit $rc"

# Without --store nothing is written to any store.
(cd "$tmp" && env -u MF_STORE "$bin/mf-run" --task $f/task-valid.json \
  --model scripted:$f/responses-valid.json --trace plain.jsonl >/dev/null)
[ ! -e "$tmp/.mf" ] || fail "a store appeared without --store"

# mf-eval keeps every case trace and the report under campaign/<suite_id>/...
"$bin/mf-eval" run --suite $f/eval-suite.json --output "$tmp/eval.json" --fixed-clock \
  --store "$S" --traces "$tmp"
"$bin/mf-store" --store "$S" get "$(get_ref campaign/forge-seed/report)" | cmp -s - "$tmp/eval.json" ||
  fail "stored report differs"
for id in $(jq -r '.cases[].id' "$tmp/eval.json"); do
  digest=$(get_ref "campaign/forge-seed/case/$id/trace")
  [ "$digest" = "$(jq -r --arg id "$id" '.cases[] | select(.id==$id) | .trace_sha256' "$tmp/eval.json")" ] ||
    fail "case $id trace digest"
  "$bin/mf-store" --store "$S" get "$digest" | cmp -s - "$tmp/$id.jsonl" || fail "case $id trace bytes"
done
echo "store_tools: ok"
