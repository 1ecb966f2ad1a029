#!/usr/bin/env bash
# System calls counted with strace (counts, never times): the read tool opens a file once and reads
# a small one with one pread(2) of its size, `mf-store put` reads its input once, and a whole
# `mf-run --plan` under --durability batch syncs once, where event durability syncs every event
# and each artifact; the live reply cache (over the loopback wire server) commits once per model
# call under event durability and once at the run's end under batch.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/wire.bash"
command -v strace >/dev/null || {
  echo "SKIP: strace is not installed (scripts/install-deps.sh installs it)"
  exit 77
}
strace -o /dev/null true 2>/dev/null || {
  echo "SKIP: strace cannot trace here (ptrace is not permitted)"
  exit 77
}
src=${MF_SOURCE_DIR:-.}

# --- the read tool on a 615-byte file -------------------------------------------------------------
mkdir -p "$tmp/ws"
head -c 615 "$src/fixtures/repository/src/lib.rs" >"$tmp/ws/a.txt"
strace -f -y -e trace=open,openat,openat2,read,pread64,readv,preadv,preadv2 -o "$tmp/read.st" \
  "$MF_BIN/mf-run" tool read --workspace "$tmp/ws" --args '{"path":"a.txt"}' >"$tmp/read.json"
[[ $(jq -r '.content[0].text' "$tmp/read.json") == "$(cat "$tmp/ws/a.txt")" ]] ||
  fail "read did not return the file"
opens=$(grep -cE '^[0-9]+ +open(at2?)?\(.*= [0-9]+</[^>]*/ws/a\.txt>$' "$tmp/read.st" || true)
reads=$(grep -E '^[0-9]+ +p?readv?2?(64)?\([0-9]+</[^>]*/ws/a\.txt>' "$tmp/read.st" || true)
[[ $opens -eq 1 ]] || { grep a.txt "$tmp/read.st" >&2; fail "read opened a.txt $opens times, not once"; }
[[ $(grep -c . <<<"$reads") -eq 1 ]] || { echo "$reads" >&2; fail "read read a.txt more than once"; }
grep -qE ', 615, 0\) = 615$' <<<"$reads" || fail "the one read is not of the file's 615 bytes: $reads"

# --- mf-store put: the input is read once and its bytes written once ------------------------------
# 3 MiB and a few bytes: over the 1 MiB kept in memory. A file's bytes go straight into data.mdb
# (hashed on a second thread meanwhile); stdin's through a spool file, read back (copied into
# data.mdb) once.
head -c $(((3 << 20) + 5)) /dev/urandom >"$tmp/put.bin"
size=$(stat -c %s "$tmp/put.bin")
# io_bytes TRACE CALLS PATTERN: the bytes returned by the system calls CALLS (an ERE alternation)
# whose first descriptor strace shows as PATTERN (after its number: <path>, and "(deleted)" for an
# unlinked file).
# LMDB's reads of its two meta pages (offsets 0 and 4096 of data.mdb) are not counted.
io_bytes() {
  awk -v calls="^[0-9]+ +($2)\\([0-9]+$3" '$0 ~ calls && !/pread64\([0-9]+<[^>]*data\.mdb>, .*, (0|4096)\) = [0-9]+$/ {
    n += $NF
  } END { print n + 0 }' "$1"
}
reads='p?readv?2?(64)?'
writes='p?writev?2?(64)?'
for how in file stdin; do
  rm -rf "$tmp/put-store"
  # The store exists before (its creation writes LMDB's first pages).
  echo first | "$MF_BIN/mf-store" --store "$tmp/put-store" put >/dev/null
  trace=(strace -f -y -e trace=read,pread64,readv,preadv,preadv2,write,pwrite64,writev,pwritev,pwritev2,copy_file_range -o "$tmp/put.st")
  if [[ $how == file ]]; then
    "${trace[@]}" "$MF_BIN/mf-store" --store "$tmp/put-store" put "$tmp/put.bin" >"$tmp/put.out"
  else
    "${trace[@]}" "$MF_BIN/mf-store" --store "$tmp/put-store" put - <"$tmp/put.bin" >"$tmp/put.out"
  fi
  [[ $(cat "$tmp/put.out") == "$(sha256sum "$tmp/put.bin" | cut -d' ' -f1)" ]] ||
    fail "put ($how) printed $(cat "$tmp/put.out")"
  n=$(io_bytes "$tmp/put.st" "$reads" '<[^>]*/put\.bin>')
  [[ $n -eq $size ]] || fail "put ($how) read $n bytes of its $size-byte input, not $size"
  # Bytes written to the store's directory (data.mdb, the spool): once for a file, twice for stdin.
  n=$(io_bytes "$tmp/put.st" "$writes|copy_file_range" '<[^>]*/put-store/')
  want=$size spooled=0
  [[ $how == file ]] || want=$((2 * size)) spooled=$size
  [[ $n -eq $want ]] || fail "put ($how) wrote $n bytes into its store, not $want"
  # Read back from the store's directory: nothing for a file, the spool once for stdin.
  n=$(io_bytes "$tmp/put.st" "$reads|copy_file_range" '<[^>]*/put-store/')
  [[ $n -eq $spooled ]] || fail "put ($how) read $n bytes back from its store, not $spooled"
  run 0 "$MF_BIN/mf-store" --store "$tmp/put-store" verify
done

# --- a golden plan run: syncs per durability ------------------------------------------------------
h=$src/fixtures/harness
"$MF_BIN/mf-compile" "$h/golden.yaml" --catalog "$h/catalog.json" --profiles "$h/profiles.json" \
  -o - >"$tmp/plan.json"
mkdir -p "$tmp/gws/src" "$tmp/art"
cp "$src/fixtures/repository/src/lib.rs" "$tmp/gws/src/"
syncs() { # syncs DURABILITY: the sync calls of one golden run on disk
  strace -f -c -e trace=fsync,fdatasync,syncfs,sync,msync,sync_file_range -o "$tmp/sync.st" \
    "$MF_BIN/mf-run" --plan "$tmp/plan.json" --model "scripted:$h/runs/golden-ok.json" \
    --workspace "$tmp/gws" --artifacts "$tmp/art" --fixed-clock --run-id syscalls \
    --trace "$tmp/t.jsonl" --durability "$1" >"$tmp/run.json"
  [[ $(jq -r .terminal "$tmp/run.json") == completed ]] || fail "the $1 run did not complete"
  run 0 "$MF_BIN/mf-replay" "$tmp/t.jsonl"
  awk '$NF ~ /^(fsync|fdatasync|syncfs|sync|msync|sync_file_range)$/ { n += $4 } END { print n + 0 }' \
    "$tmp/sync.st"
}
n=$(syncs batch)
[[ $n -eq 1 ]] || { cat "$tmp/sync.st" >&2; fail "a batch run made $n syncs, not 1"; }
# Event: the trace's directory, each of the 14 events, and each artifact's file and directory.
n=$(syncs event)
[[ $n -eq 19 ]] || { cat "$tmp/sync.st" >&2; fail "an event run made $n syncs, not 19"; }
# --- the live reply cache: its store commits per durability -----------------------------------------
# A store commit is two msyncs (LMDB's data, then its meta page); a new store's first commit
# creates its databases. Event keeps each reply durable before the run records it: one commit per
# model call. Batch holds them and commits once at the end, and in between at most once per 250 ms
# of the run (the trace's interval), so the count allowed grows with the run's elapsed time.
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY MF_STORE
wire_start
"$MF_BIN/mf-compile" "$src/fixtures/harness/read-submit.yaml" -o - >"$tmp/rs.plan.json"
wire_profile harness-read-submit "$src/fixtures/profiles/local.json" "$tmp/rs.profile.json"
cache_commits() { # cache_commits DURABILITY: the store commits of one recorded run, and its ms
  rm -rf "$tmp/cache-store"
  wire_reset
  local start end
  start=$(date +%s%N)
  strace -f -c -e trace=msync -o "$tmp/cache.st" "$MF_BIN/mf-run" --plan "$tmp/rs.plan.json" \
    --model "openai:$tmp/rs.profile.json" --workspace "$src/fixtures/repository" \
    --cache write --store "$tmp/cache-store" --fixed-clock --run-id cache \
    --trace "$tmp/cache.jsonl" --durability "$1" >"$tmp/cache.json"
  end=$(date +%s%N)
  [[ $(jq -r .terminal "$tmp/cache.json") == completed ]] || fail "the $1 cache run did not complete"
  calls=$(jq -s '[.[] | select(.event == "model_responded")] | length' "$tmp/cache.jsonl")
  [[ $calls -eq 2 ]] || fail "the $1 cache run made $calls model calls, not 2"
  # Both replies were recorded, whatever the durability.
  [[ $("$MF_BIN/mf-store" --store "$tmp/cache-store" ls --refs | grep -c '"cache/model/') -eq 2 ]] ||
    fail "the $1 cache run did not record its 2 replies"
  awk -v ms=$(((end - start) / 1000000)) '$NF == "msync" { n += $4 } END { print n / 2, ms }' \
    "$tmp/cache.st"
}
read -r n elapsed_ms < <(cache_commits event)
[[ $n -eq 3 ]] || { cat "$tmp/cache.st" >&2; fail "an event cache run made $n store commits, not 3"; }
read -r n elapsed_ms < <(cache_commits batch)
allowed=$((2 + elapsed_ms / 250))
((n >= 2 && n <= allowed)) || {
  cat "$tmp/cache.st" >&2
  fail "a batch cache run made $n store commits in $elapsed_ms ms, not 2 (at most $allowed)"
}
wire_stop
echo "ok"
