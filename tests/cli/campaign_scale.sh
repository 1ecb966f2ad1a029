#!/usr/bin/env bash
# A suite's memory grows with its distinct files, not with its cases: cases that name the same plan
# or script share one loaded copy (docs/formats/eval.md). Loading a suite of 2,000 plan cases over
# one plan takes about the peak memory of one of 50; before the copies were shared, every case held
# its own plan tree. Measured as a ratio of peak RSS (/usr/bin/time), the run limited to one case
# (--case) so that what differs is the load. Then a whole campaign, every case run and reported:
# 20,000 scripted task cases take little more peak memory than 2,000: the suite file is read in
# windows and nothing is kept in memory a case (docs/campaigns.md, "Memory"). Nothing is left behind.
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

# The whole campaign at N and 10 N cases: the suite read in one pass through windows of its file,
# each case read again when it runs, each finished entry written to an unlinked temporary file, and
# everything kept per case and per attempt (the index, the chosen cases, each attempt's place and
# facts, the summary's numbers) in temporary record files read back through small windows
# (docs/campaigns.md, "Memory"). The load alone (the run limited to one case) may grow by 48 bytes
# a case and 256 KiB, 1,099 KiB (when the suite's bytes were in memory while it was read: 1,984-2,336
# KiB); the whole campaign, each case run 4 times (--repeat 4), by a fixed 2 MiB for the record
# files' buffers, one external sort's budget and the second thread's allocations (measured:
# 308-1,248 KiB; with the suite's bytes and an index entry, each attempt's offset, size and facts
# and the summary's numbers in memory, 5,496-5,900 KiB).
cp "$MF_SOURCE_DIR/fixtures/forge/task-valid.json" "$tmp/task.json"
cp "$MF_SOURCE_DIR/fixtures/forge/responses-valid.json" "$tmp/responses.json"
mkdir "$tmp/tmpdir" "$tmp/reports"
export TMPDIR=$tmp/tmpdir
campaign_suite() { # N [PREFIX]: N Forge task cases, ids PREFIX-0 .. PREFIX-(N-1), on one line
  jq -cn --argjson n "$1" --arg p "${2:-t}" '{suite_id: "scale", cases: [range(0; $n) | {
    id: "\($p)-\(.)", task: "task.json", model: "scripted:responses.json",
    expect: {terminal: "completed"}}]}'
}
campaign_rss() { # N REPEAT [OPTIONS...]: peak RSS of a campaign of N cases, each run REPEAT times
  local n=$1 repeat=$2
  shift 2
  campaign_suite "$n" >"$tmp/t$n.json"
  rm -f "$tmp/reports/r$n.json"*
  /usr/bin/time -f %M -o "$tmp/rss" "$eval_bin" run --suite "$tmp/t$n.json" --fixed-clock -j 2 \
    --repeat "$repeat" --output "$tmp/reports/r$n.json" --quiet "$@" 2>"$tmp/err" ||
    fail "the campaign of $n cases: $(cat "$tmp/err")"
  local want=$n
  (($#)) && want=1
  [[ $(jq -c '[.summary.cases, .summary.passed, .summary.attempts // .summary.cases]' "$tmp/reports/r$n.json") == \
    "[$want,$want,$((want * repeat))]" ]] ||
    fail "the campaign of $n cases did not pass: $(jq -c .summary "$tmp/reports/r$n.json")"
  cat "$tmp/rss"
}
small=$(campaign_rss 2000 1 --case t-1)
large=$(campaign_rss 20000 1 --case t-1)
bound=$((18000 * 48 / 1024 + 256))
((large - small <= bound)) ||
  fail "loading a suite's peak RSS grows by $((large - small)) KiB from 2000 to 20000 cases, over" \
    "48 bytes a case and 256 KiB ($bound KiB): $small KiB, $large KiB"
echo "campaign_scale: a suite's load peak RSS $small KiB at 2000 cases, $large KiB at 20000" \
  "(bound $((small + bound)) KiB)"
small=$(campaign_rss 2000 4)
large=$(campaign_rss 20000 4)
bound=2048
((large - small <= bound)) ||
  fail "a campaign's peak RSS grows by $((large - small)) KiB from 2000 to 20000 cases (4 attempts" \
    "each), over 2 MiB: $small KiB, $large KiB"
echo "campaign_scale: campaign peak RSS $small KiB at 2000 cases, $large KiB at 20000" \
  "(bound $((small + bound)) KiB)"

# The entries' temporary file has no name: nothing is left in TMPDIR or beside the report after a
# run, a run refused because the suite changed under it (MF-I001), or a SIGTERM mid-run.
leftovers() { # DIR EXPECTED...: DIR holds exactly these names
  local have
  have=$(cd "$1" && ls -A | tr '\n' ' ')
  shift
  [[ $have == "$*${*:+ }" ]] || fail "left behind in the temporary or output directory: '$have' (expected '$*')"
}
leftovers "$tmp/tmpdir"
leftovers "$tmp/reports" r2000.json r2000.json.journal r20000.json r20000.json.journal
rm "$tmp/reports/"*
# pid's journal (FILE.journal) has at least N lines, or the process has ended
journal_reaches() {
  for ((i = 0; i < 400; i++)); do
    [[ -f $2 && $(wc -l <"$2") -ge $3 ]] && return 0
    kill -0 "$1" 2>/dev/null || return 0
    sleep 0.02
  done
}
"$eval_bin" run --suite "$tmp/t20000.json" --fixed-clock -j 1 --output "$tmp/reports/term.json" \
  >/dev/null 2>"$tmp/term.err" &
pid=$!
journal_reaches "$pid" "$tmp/reports/term.json.journal" 200
kill -TERM "$pid" 2>/dev/null || true
rc=0
wait "$pid" || rc=$?
[[ $rc -eq 143 ]] || fail "SIGTERM mid-campaign: exit $rc, expected 143: $(cat "$tmp/term.err")"
leftovers "$tmp/tmpdir"
leftovers "$tmp/reports" term.json.journal
rm "$tmp/reports/"*
# Rewritten in place (the same file, other ids) while the campaign runs.
campaign_suite 20000 >"$tmp/changing.json"
"$eval_bin" run --suite "$tmp/changing.json" --fixed-clock -j 1 --output "$tmp/reports/changed.json" \
  >/dev/null 2>"$tmp/changed.err" &
pid=$!
journal_reaches "$pid" "$tmp/reports/changed.json.journal" 200
campaign_suite 20000 u >"$tmp/changing.json"
rc=0
wait "$pid" || rc=$?
[[ $rc -eq 3 ]] || fail "a suite changed mid-campaign: exit $rc, expected 3: $(cat "$tmp/changed.err")"
grep -q 'MF-I001.*the file changed during the campaign' "$tmp/changed.err" ||
  fail "a suite changed mid-campaign: $(cat "$tmp/changed.err")"
leftovers "$tmp/tmpdir"
leftovers "$tmp/reports" changed.json.journal
rm "$tmp/reports/"*

# With a matrix, the report's order is its ids' order, not the cases': "a-b.x" sorts before "a.x"
# (and "a.c.x" between them), so the entries are sorted by their ids; compared here with a sort.
jq -cn '{suite_id: "order", cases: [("b", "a_b", "a.c", "a-b", "a", "a-c.d") | {id: ., task: "task.json",
  model: "scripted:responses.json", expect: {terminal: "completed"}}]}' >"$tmp/order.json"
for repeat in 1 2; do
  for j in 1 2; do
    "$eval_bin" run --suite "$tmp/order.json" --fixed-clock -j "$j" --repeat "$repeat" --quiet \
      --model "x=scripted:$tmp/responses.json" --model "y-z=scripted:$tmp/responses.json" \
      --output "$tmp/reports/order.json" 2>"$tmp/err" || fail "the matrix campaign: $(cat "$tmp/err")"
    ids=$(jq -c '[.cases[].id]' "$tmp/reports/order.json")
    [[ $ids == "$(jq -c '[.cases[].id] | sort' "$tmp/reports/order.json")" ]] ||
      fail "-j $j --repeat $repeat: the entries are not in id order: $ids"
    [[ $(jq -c '[.cases[].id] | length' "$tmp/reports/order.json") == 12 ]] || fail "missing entries: $ids"
    [[ $ids == '["a-b.x","a-b.y-z","a-c.d.x",'* ]] || fail "the matrix's order: $ids"
  done
done
leftovers "$tmp/tmpdir"
echo "campaign_scale: nothing left behind; a matrix's entries in id order"
