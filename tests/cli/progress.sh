#!/usr/bin/env bash
# Progress lines (docs/cli.md, "Progress"): on a terminal, long work draws one line labelled with
# what it works on (mf-eval's shard, mf-replay's traces, mf-store import's stream), redrawn in
# place and ended once; nothing is drawn when stderr is a file, nor with --quiet. The work lasts
# past the line's delay (0.5 s) because its input takes that long to arrive (cases that sleep, a
# writer that pauses), not by a clock bound in the test.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/slow_shell.bash"
command -v script >/dev/null || { echo "progress: script(1) (util-linux) is not installed"; exit 77; }

fx=$MF_SOURCE_DIR/fixtures
trace=$fx/traces/valid.jsonl

# on_tty CMD: runs the shell command CMD with stdin, stdout and stderr on a pseudo-terminal; what
# the terminal showed is in $tmp/tty.
on_tty() {
  local rc=0
  script -qec "$1" /dev/null </dev/null >"$tmp/tty" 2>&1 || rc=$?
  [[ $rc -eq 0 ]] || { cat "$tmp/tty" >&2; fail "on a terminal: $1 exited $rc"; }
}
# drawn TEXT: the terminal showed TEXT as a progress line (after a carriage return).
drawn() { grep -qF $'\r'"$1" "$tmp/tty" || fail "no progress line '$1': $(cat -v "$tmp/tty")"; }

# --- mf-eval run: four cases of 0.3 s each in shard 1/2 ------------------------------------------
slow_shell_suite "$tmp/eval" 8 0.3 0 '{"terminal": "completed"}'
eval_run="$MF_BIN/mf-eval run --suite $tmp/eval/suite.json --shard 1/2 --fixed-clock --output $tmp/eval/s1.json"
summary="mf-eval: 4 cases, 4 passed, 0 failed — report $tmp/eval/s1.json"
on_tty "$eval_run"
drawn "mf-eval shard 1/2: attempt 4/4, 4 passed (100%)"$'\e[K\r\n'"$summary"
# Stderr a file: only the summary line.
run 0 $eval_run
[[ $(cat "$tmp/err") == "$summary" ]] || fail "mf-eval into a file: $(cat -v "$tmp/err")"
# --quiet on a terminal: only the summary line.
on_tty "$eval_run --quiet"
! grep -q 'attempt' "$tmp/tty" || fail "mf-eval --quiet drew progress: $(cat -v "$tmp/tty")"
grep -qF "$summary" "$tmp/tty" || fail "mf-eval --quiet: no summary line: $(cat -v "$tmp/tty")"

# --- mf-replay: one trace from a pipe that pauses; many traces, one of them a FIFO written late ---
slow_trace="{ head -n 3 $trace; sleep 0.7; tail -n +4 $trace; }"
on_tty "$slow_trace | $MF_BIN/mf-replay -"
drawn "mf-replay <stdin>: 0.0 MiB"$'\e[K\r\n'
grep -q '"status":"ok"' "$tmp/tty" || fail "mf-replay -: $(cat -v "$tmp/tty")"
cp "$trace" "$tmp/a.jsonl"
cp "$trace" "$tmp/c.jsonl"
mkfifo "$tmp/late.jsonl"
(sleep 0.7 && cat "$trace" >"$tmp/late.jsonl") &
on_tty "$MF_BIN/mf-replay -j 1 $tmp/a.jsonl $tmp/late.jsonl $tmp/c.jsonl"
wait
drawn "mf-replay $tmp/a.jsonl and 2 more: 3/3 traces"$'\e[K\r\n'
[[ $(grep -c '"status":"ok"' "$tmp/tty") -eq 3 ]] || fail "mf-replay many: $(cat -v "$tmp/tty")"
# Stderr a file: nothing drawn, nothing said.
stdin=<(eval "$slow_trace") run 0 "$MF_BIN/mf-replay" -
[[ ! -s $tmp/err ]] || fail "mf-replay into a file drew: $(cat -v "$tmp/err")"

# --- mf-store import: an export stream from a pipe that pauses ---------------------------------
run 0 "$MF_BIN/mf-store" --store "$tmp/st" put "$trace" "$fx/forge/task-valid.json"
run 0 "$MF_BIN/mf-store" --store "$tmp/st" export $(cat "$tmp/out") -o "$tmp/export.jsonl"
slow_export="{ head -n 1 $tmp/export.jsonl; sleep 0.7; tail -n +2 $tmp/export.jsonl; }"
on_tty "$slow_export | $MF_BIN/mf-store --store $tmp/st2 import -"
drawn "mf-store import <stdin>: 0.0 MiB"$'\e[K\r\n'
grep -q '"added":2' "$tmp/tty" || fail "mf-store import: $(cat -v "$tmp/tty")"
stdin=<(eval "$slow_export") run 0 "$MF_BIN/mf-store" --store "$tmp/st3" import -
[[ ! -s $tmp/err ]] || fail "mf-store import into a file drew: $(cat -v "$tmp/err")"

echo "progress: ok"
