#!/usr/bin/env bash
# The streaming commands hold one bounded line or document at a time: on a 2 GB pipe their peak RSS
# stays under 32 MiB, whether the pipe carries many lines or one endless line, and the endless line
# is refused with its limit named. Under AddressSanitizer, whose shadow memory and quarantine make
# RSS say little about the program, the pipes are 64 MB and only the behaviour is checked.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"
[[ -x /usr/bin/time ]] || { echo "SKIP: /usr/bin/time is not installed" >&2; exit 77; }

mf_store=$MF_BIN/mf-store
replay=$MF_BIN/mf-replay
compile=$MF_BIN/mf-compile

if grep -q __asan_init "$mf_store"; then
  bytes=$((64 * 1000 * 1000)) limit_kib=""
else
  bytes=$((2000 * 1000 * 1000)) limit_kib=$((32 * 1024))
fi

# peak OUT PRODUCER EXPECTED_RC CMD...: runs `PRODUCER | CMD > OUT`, checks CMD's exit code, and
# prints its peak RSS in KiB.
peak() {
  local out=$1 producer=$2 expected=$3
  shift 3
  set +e +o pipefail
  bash -c "$producer" |
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:detect_leaks=0 \
      /usr/bin/time -o "$tmp/time" -f %M "$@" >"$out" 2>"$tmp/err"
  local rc=${PIPESTATUS[1]}
  set -e -o pipefail
  [[ $rc -eq $expected ]] || { cat "$tmp/err" >&2; fail "$* exited $rc on the pipe, expected $expected"; }
  tail -1 "$tmp/time"  # the last line: time notes a non-zero exit on a line of its own
}
check() {  # check NAME KIB
  [[ -z $limit_kib ]] || (($2 < limit_kib)) || fail "$1 peaked at $2 KiB (limit $limit_kib KiB)"
  echo "stream_memory: $1: $2 KiB" >&2
}

line='{"b":[1,2.50,"x\u00e9"],"a":{"z":null,"y":true}}'
lines="yes '$line' | head -n $((bytes / (${#line} + 1)))"
endless="head -c $bytes /dev/zero | tr '\\0' '7'"
quoted="{ printf '\"'; head -c $bytes /dev/zero | tr '\\0' 'q'; }"

# Many lines: canon --lines canonicalizes them all; hash streams the bytes.
kb=$(peak /dev/null "$lines" 0 "$mf_store" canon --lines -)
check "canon --lines, many lines" "$kb"
run 0 "$mf_store" canon --lines <(bash -c "$lines" | head -3)
[[ $(sort -u "$tmp/out") == '{"a":{"y":true,"z":null},"b":[1,2.5,"xé"]}' ]] ||
  fail "canon --lines wrote $(cat "$tmp/out")"
kb=$(peak "$tmp/out" "$lines" 0 "$mf_store" hash -)
check "hash, many lines" "$kb"

# One endless line: refused at the bound, which the message names; nothing is written.
for args in "canon --lines -" "canon -" "hash --json -"; do
  kb=$(peak "$tmp/out" "$endless" 2 "$mf_store" $args)
  check "$args, one endless line" "$kb"
  [[ ! -s $tmp/out ]] || fail "$args wrote output for a refused line"
  grep -q '16777216' "$tmp/err" || fail "$args does not name the limit: $(cat "$tmp/err")"
done
kb=$(peak "$tmp/out" "$quoted" 2 "$mf_store" canon -)
check "canon -, one endless string" "$kb"
kb=$(peak "$tmp/out" "$endless" 2 "$compile" verify -)
check "mf-compile verify -, one endless line" "$kb"

# mf-replay: the endless line is a corrupt trace (MF-E001) whose digest still covers every byte.
kb=$(peak "$tmp/out" "$endless" 1 "$replay" -)
check "mf-replay, one endless line" "$kb"
[[ $(jq -r .first_error.code "$tmp/out") == MF-E001 ]] || fail "mf-replay: $(cat "$tmp/out")"
jq -r .first_error.message "$tmp/out" | grep -q 16777216 || fail "mf-replay does not name the limit"
want=$(bash -c "$endless" | sha256sum | cut -d' ' -f1)
[[ $(jq -r .trace_sha256 "$tmp/out") == "$want" ]] || fail "mf-replay's digest is not of all the bytes"
# ... and many lines after a first bad one are still read to the end, in flat memory.
kb=$(peak "$tmp/out" "$lines" 1 "$replay" -)
check "mf-replay, many lines" "$kb"

# Strict replay and forks hold the recorded trace whole, but never one line past the bound: the
# endless line is refused where it passes it (two copies of at most 16 MiB: the line and the
# verifier's).
run 0 "$compile" "$MF_SOURCE_DIR/fixtures/harness/read-submit.yaml" -o -
cp "$tmp/out" "$tmp/rs.plan.json"
for args in "--strict" "--fork-at 2 --responses sim:ok --trace $tmp/fork.jsonl"; do
  kb=$(peak "$tmp/out" "$endless" 2 "$replay" $args --plan "$tmp/rs.plan.json" -)
  [[ -z $limit_kib ]] || ((kb < 2 * limit_kib)) || fail "mf-replay $args peaked at $kb KiB"
  echo "stream_memory: mf-replay $args, one endless line: $kb KiB" >&2
  grep -q 'stdin>:1: error MF-E001: .*16777216 bytes' "$tmp/err" ||
    fail "mf-replay $args: $(cat "$tmp/err")"
done
# mf-store import: a line over 8 MiB that is not an object line as the export writes it (which it
# streams) is refused there.
kb=$(peak "$tmp/out" "$endless" 2 "$mf_store" --store "$tmp/st" import -)
check "mf-store import, one endless line" "$kb"
grep -q 'stdin>:1: error MF-K008: export stream line 1: a line over 8 MiB' "$tmp/err" ||
  fail "mf-store import: $(cat "$tmp/err")"

# The bound is the user's to raise: a 20 MiB document is refused by default and read with more room.
big=$tmp/big.json
python3 -c 'import sys; sys.stdout.write("[" + ",".join(["\"" + "b" * (1 << 20) + "\""] * 20) + "]")' >"$big"
run 2 "$mf_store" canon "$big"
run 2 "$mf_store" canon --max-bytes 16777216 "$big"
run 0 "$mf_store" canon --max-bytes 33554432 "$big"
cmp -s <(cat "$big"; echo) "$tmp/out" || fail "canon --max-bytes changed a canonical document"
run 0 "$mf_store" hash --json --max-bytes 33554432 "$big"
run 2 "$mf_store" canon --max-bytes 0 "$big"
echo "stream_memory: ok" >&2
