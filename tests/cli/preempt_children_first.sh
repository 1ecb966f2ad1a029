#!/usr/bin/env bash
# A shard pre-empted the way Slurm's proctrack/linuxproc stops a task: SIGTERM to every process of
# it, children first, so the running attempt's shell call and its reaper get the signal before
# mf-eval does, and on a loaded machine a while before. The test makes that while long (it signals
# the call's processes, waits until mf-eval has journaled that attempt, then signals it), resumes
# the shard, and checks that the report is byte-identical to an uninterrupted run's: the signal
# the call ignores must not end it (the reaper takes orders from mf-eval alone), so the attempt
# mf-eval finishes and journals before its own signal arrives is the one an uninterrupted run makes.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/slow_shell.bash"
bin=$(cd "$MF_BIN" && pwd)

c=$tmp/campaign
slow_shell_suite "$c" 3 1 1 '{"terminal": "completed", "tools": ["bash", "submit"]}'
# Each call notes its shell's pid and its reaper's (the shell's parent) before it sleeps.
sed -i "s/sleep 1; echo done/trap '' TERM; echo \$\$ \$PPID >>pids; sleep 1; echo ran >>attempts.log; echo ran/" \
  "$c/run.json"
grep -q "trap '' TERM; echo \$\$ \$PPID >>pids;" "$c/run.json" || fail "run.json: $(cat "$c/run.json")"
run 0 "$bin/mf-eval" run --suite "$c/suite.json" --fixed-clock --quiet --output "$tmp/whole.json"
: >"$c/ws/attempts.log"
: >"$c/ws/pids"

"$bin/mf-eval" run --suite "$c/suite.json" --fixed-clock --quiet -j 1 --output "$tmp/shard.json" \
  >"$tmp/first.out" 2>"$tmp/first.err" &
eval_pid=$!

# The second attempt's shell call, while it sleeps: its `sleep`, its shell and its reaper.
sleeper=""
for ((i = 0; i < 500; i++)); do
  if [[ $(wc -l <"$c/ws/pids") -ge 2 ]]; then
    read -r shell reaper < <(sed -n 2p "$c/ws/pids")
    sleeper=$(pgrep -P "$shell" -x sleep || true)
    [[ -n $sleeper ]] && break
  fi
  sleep 0.02
done
[[ -n $sleeper ]] || fail "the second attempt's shell call was not seen sleeping"
[[ $(awk '{print $4}' "/proc/$reaper/stat") == "$eval_pid" ]] && kill -TERM "$sleeper" "$shell" "$reaper" ||
  fail "the second attempt's call ended before it could be signalled"
# mf-eval's own signal comes once it has journaled the second attempt.
for ((i = 0; i < 500; i++)); do
  [[ $(wc -l <"$tmp/shard.json.journal") -ge 2 ]] && break
  sleep 0.02
done
[[ $(wc -l <"$tmp/shard.json.journal") -eq 2 ]] || fail "the journal holds $(wc -l <"$tmp/shard.json.journal") attempts, not 2"
kill -TERM "$eval_pid"
rc=0
wait "$eval_pid" || rc=$?
[[ $rc -ne 0 ]] || fail "the pre-empted run ran to its end"

run 0 "$bin/mf-eval" run --suite "$c/suite.json" --fixed-clock --quiet -j 1 --output "$tmp/shard.json" \
  --resume
cmp -s "$tmp/whole.json" "$tmp/shard.json" ||
  fail "the resumed report differs from the uninterrupted run: $(diff <(jq -S . "$tmp/whole.json") <(jq -S . "$tmp/shard.json") | head -n 20)"
echo "preempt_children_first: the call ran on through the signal; $(wc -l <"$c/ws/attempts.log") tool calls for 3 attempts"
