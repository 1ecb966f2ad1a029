#!/usr/bin/env bash
# A suite's memory grows with its distinct files, not with its cases: cases that name the same plan
# or script share one loaded copy (docs/formats/eval.md). Loading a suite of 2,000 plan cases over
# one plan takes about the peak memory of one of 50; before the copies were shared, every case held
# its own plan tree. Measured as a ratio of peak RSS (/usr/bin/time), the run limited to one case
# (--case) so that what differs is the load. Not under AddressSanitizer, whose RSS says little.
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
