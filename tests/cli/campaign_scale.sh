#!/usr/bin/env bash
# A suite's memory grows with its distinct files, not with its cases: cases that name the same plan
# or script share one loaded copy (docs/formats/eval.md). Loading a suite of 2,000 plan cases over
# one plan takes about the peak memory of one of 50; before the copies were shared, every case held
# its own plan tree. Measured as a ratio of peak RSS (/usr/bin/time), the run limited to one case
# (--case) so that what differs is the load. Then a whole campaign, every case run and reported:
# 20,000 scripted task cases take little more peak memory than 2,000 (docs/campaigns.md, "Memory").
# Not under AddressSanitizer, whose RSS says little.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"

eval_bin="$MF_BIN/mf-eval"
if grep -q __asan_init "$eval_bin"; then
  echo "campaign_scale: skipped under AddressSanitizer"
  exit 0
fi
fx=$MF_SOURCE_DIR/fixtures
cp "$fx/harness/ablation/read-submit.plan.json" "$tmp/plan.json"
cp "$fx/harness/runs/read-submit.json" "$tmp/run.json"
cp -r "$fx/repository" "$tmp/ws"
rss() {
  jq -n --argjson n "$1" '{suite_id: "scale", cases: [range(0; $n) | {id: ("c-\(.)"),
    plan: "plan.json", model: "scripted:run.json", workspace: "ws", expect: {terminal: "completed"}}]}' \
    >"$tmp/s$1.json"
  /usr/bin/time -f %M -o "$tmp/rss" "$eval_bin" run --suite "$tmp/s$1.json" --fixed-clock --output - \
    --case c-1 --quiet >"$tmp/out" 2>"$tmp/err" || fail "the suite of $1 cases: $(cat "$tmp/err")"
  [[ $(jq -r '.cases[0].status' "$tmp/out") == passed ]] || fail "case c-1 of $1: $(cat "$tmp/out")"
  cat "$tmp/rss"
}
small=$(rss 50)
large=$(rss 2000)
# Shared: ~1.2; one plan tree per case: ~2.5.
((large * 10 < small * 16)) || fail "peak RSS grows with the cases: $small KiB at 50, $large KiB at 2000"
echo "campaign_scale: peak RSS $small KiB at 50 cases, $large KiB at 2000"

# The whole campaign at N and 10 N cases: the suite read in one pass that keeps an index, each case
# read again when it runs, each finished entry kept as its canonical bytes, the report written from
# them: ~1.8x, what grows being the index and the entries' bytes (~0.45 KiB a case). Before, the
# suite's tree, every Case and every entry's tree were held: ~4.0x (15.3 and 61.6 MB).
cp "$MF_SOURCE_DIR/fixtures/forge/task-valid.json" "$tmp/task.json"
cp "$MF_SOURCE_DIR/fixtures/forge/responses-valid.json" "$tmp/responses.json"
campaign_rss() {
  jq -n --argjson n "$1" '{suite_id: "scale", cases: [range(0; $n) | {id: ("t-\(.)"),
    task: "task.json", model: "scripted:responses.json", expect: {terminal: "completed"}}]}' \
    >"$tmp/t$1.json"
  /usr/bin/time -f %M -o "$tmp/rss" "$eval_bin" run --suite "$tmp/t$1.json" --fixed-clock -j 2 \
    --output "$tmp/r$1.json" --quiet 2>"$tmp/err" || fail "the campaign of $1 cases: $(cat "$tmp/err")"
  [[ $(jq -c '[.summary.cases, .summary.passed]' "$tmp/r$1.json") == "[$1,$1]" ]] ||
    fail "the campaign of $1 cases did not pass every case: $(jq -c .summary "$tmp/r$1.json")"
  cat "$tmp/rss"
}
small=$(campaign_rss 2000)
large=$(campaign_rss 20000)
((large * 10 < small * 25)) ||
  fail "a campaign's peak RSS grows with its cases: $small KiB at 2000, $large KiB at 20000"
echo "campaign_scale: campaign peak RSS $small KiB at 2000 cases, $large KiB at 20000"
