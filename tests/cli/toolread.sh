#!/usr/bin/env bash
# mf-toolread: a SourceSlice of the Forge task fixture (pinned digest), every refusal (exit 2, a
# MF-T diagnostic on stderr, nothing on stdout), and a bounded, symlink-skipping search.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"

toolread="$MF_BIN/mf-toolread"

# --- The task fixture, as the audit reads it --------------------------------------------------------
run 0 "$toolread" --root fixtures --path forge/task-valid.json --start-line 1 --end-line 20
[[ ! -s $tmp/err ]] || fail "a successful read wrote to stderr"
[[ $(wc -l <"$tmp/out") -eq 1 ]] || fail "the slice is not one line"
jq -e '.text | contains("max_model_calls")' "$tmp/out" >/dev/null || fail "text lacks max_model_calls"
[[ $(jq -r .file_sha256 "$tmp/out") == fc4aa5898f737ba4c5a8cb7b2c2c380e1e133e2696b7915a5a3907332ca840f6 ]] ||
  fail "file_sha256 of the task fixture changed"
# The end line is clamped to the file's 18 lines; the slice is then the whole file, byte for byte.
[[ $(jq -c '[.path, .start_line, .end_line, .total_lines]' "$tmp/out") == '["forge/task-valid.json",1,18,18]' ]] ||
  fail "range: $(cat "$tmp/out")"
jq -j .text "$tmp/out" | cmp -s - fixtures/forge/task-valid.json || fail "text differs from the file"
[[ $(jq .bytes "$tmp/out") -eq $(wc -c <fixtures/forge/task-valid.json) ]] || fail "bytes"
# Canonical: re-canonicalizing changes nothing.
"$MF_BIN/mf-store" canon "$tmp/out" | cmp -s - "$tmp/out" || fail "the slice is not canonical JSON"

run 0 "$toolread" --root fixtures/forge/../forge --path ./task-valid.json --start-line 13 --end-line 13
[[ $(jq -c '[.path, .text]' "$tmp/out") == '["task-valid.json","    \"max_model_calls\": 2,\n"]' ]] ||
  fail "single line: $(cat "$tmp/out")"

# --- Refusals -----------------------------------------------------------------------------------------
root="$tmp/safe-root"
mkdir -p "$root/sub" "$tmp/safe-root-other" "$tmp/outside"
printf 'secret other\n' >"$tmp/safe-root-other/f"
printf 'secret outside\n' >"$tmp/outside/secret.txt"
printf 'one\ntwo\nthree\n' >"$root/f.txt"
seq 1 201 >"$root/long.txt"
head -c 1048577 /dev/zero | tr '\0' x >"$root/big.txt"
printf 'caf\xe9\n' >"$root/latin1.txt"
ln -s ../outside/secret.txt "$root/leak.txt"
ln -s ../outside "$root/outdir"
ln -s f.txt "$root/alias.txt"
mkfifo "$root/pipe"

refuse 2 MF-T001 "$toolread" --root "$root" --path /etc/passwd
refuse 2 MF-T001 "$toolread" --root "$root" --path ''
refuse 2 MF-T002 "$toolread" --root "$root" --path ../outside/secret.txt
refuse 2 MF-T002 "$toolread" --root "$root" --path ../safe-root-other/f  # shares the root's name as a prefix
refuse 2 MF-T002 "$toolread" --root "$root" --path leak.txt
refuse 2 MF-T002 "$toolread" --root "$root" --path outdir/secret.txt
refuse 2 MF-T003 "$toolread" --root "$root" --path sub
refuse 2 MF-T004 "$toolread" --root "$root" --path pipe
refuse 2 MF-T005 "$toolread" --root "$root" --path big.txt --start-line 1 --end-line 1
refuse 2 MF-T006 "$toolread" --root "$root" --path f.txt --start-line 0 --end-line 2
refuse 2 MF-T006 "$toolread" --root "$root" --path f.txt --start-line 3 --end-line 2
refuse 2 MF-T006 "$toolread" --root "$root" --path f.txt --start-line 4
refuse 2 MF-T007 "$toolread" --root "$root" --path long.txt
refuse 2 MF-T007 "$toolread" --root "$root" --path long.txt --start-line 1 --end-line 201
refuse 2 MF-T008 "$toolread" --root "$root" --path latin1.txt
refuse 2 MF-T009 "$toolread" --root "$tmp/missing" --path f.txt
refuse 2 MF-T010 "$toolread" --root "$root" --path nope.txt
grep -q secret "$tmp/err" && fail "a refusal leaked file content"

# A symlink that stays inside the root is read, under the name it was asked by.
run 0 "$toolread" --root "$root" --path alias.txt
[[ $(jq -c '[.path, .text]' "$tmp/out") == '["alias.txt","one\ntwo\nthree\n"]' ]] || fail "alias"
run 0 "$toolread" --root "$root" --path long.txt --start-line 2 --end-line 201
[[ $(jq .end_line "$tmp/out") -eq 201 ]] || fail "200-line read"

# Usage errors are exit 2 too.
run 2 "$toolread" --path f.txt
run 2 "$toolread" --root "$root"
run 2 "$toolread" --root "$root" --path f.txt --query x
run 2 "$toolread" --root "$root" --path f.txt --start-line x
run 2 "$toolread" frobnicate --root "$root"
[[ ! -s $tmp/out ]] || fail "usage error wrote to stdout"

# An output that cannot be written is an I/O error: exit 3.
rc=0
"$toolread" --root "$root" --path f.txt >/dev/full 2>/dev/null || rc=$?
[[ $rc -eq 3 ]] || fail "writing to a full device exited $rc, expected 3"

# --- Search -------------------------------------------------------------------------------------------
printf 'needle one\n' >"$root/a.txt"
mkdir -p "$root/a"
printf 'x\nneedle two\n' >"$root/a/b.txt"
printf 'needle secret\n' >>"$tmp/outside/secret.txt"
run 0 "$toolread" search --root "$root" --query needle
[[ $(jq -c '[.matches[] | [.path, .line, .text]]' "$tmp/out") == '[["a.txt",1,"needle one"],["a/b.txt",2,"needle two"]]' ]] ||
  fail "search matches: $(cat "$tmp/out")"
[[ $(jq -c '[.root_relative, .query, .truncated]' "$tmp/out") == '[".","needle",false]' ]] ||
  fail "search header: $(cat "$tmp/out")"
"$MF_BIN/mf-store" canon "$tmp/out" | cmp -s - "$tmp/out" || fail "search output is not canonical"

run 0 "$toolread" search --root "$root" --query needle --max-matches 1
[[ $(jq -c '[(.matches | length), .truncated]' "$tmp/out") == '[1,true]' ]] || fail "max-matches"
run 0 "$toolread" search --root "$root" --query needle --max-files 1
[[ $(jq -c '[.files_scanned, .truncated]' "$tmp/out") == '[1,true]' ]] || fail "max-files"
run 0 "$toolread" search --root "$root" --query needle --max-bytes 11
[[ $(jq -c '[.files_scanned, .truncated]' "$tmp/out") == '[1,true]' ]] || fail "max-bytes"
run 0 "$toolread" search --root "$root" --path a --query needle
[[ $(jq -c '[.root_relative, (.matches | length)]' "$tmp/out") == '["a",1]' ]] || fail "--path"

# Many files in many directories: the same bytes on one thread and on several, at every bound.
for d in $(seq 1 30); do
  mkdir -p "$root/many/d$d/e"
  for f in $(seq 1 12); do printf 'x\nneedle %s %s\nneedle again\n' "$d" "$f" >"$root/many/d$d/f$f.txt"; done
  printf 'needle\0binary\n' >"$root/many/d$d/bin.dat"
  printf 'needle caf\xe9\n' >"$root/many/d$d/latin1.txt"
  printf 'needle deep\n' >"$root/many/d$d/e/deep.txt"
done
for bounds in "--max-matches 100000" "--max-matches 37" "--max-files 101" "--max-bytes 5000"; do
  # shellcheck disable=SC2086 # the bounds are two words
  "$toolread" search --root "$root" --path many --query needle $bounds --jobs 1 >"$tmp/one" ||
    fail "search --jobs 1 $bounds"
  for jobs in 2 5; do
    # shellcheck disable=SC2086
    "$toolread" search --root "$root" --path many --query needle $bounds -j "$jobs" >"$tmp/many" ||
      fail "search -j $jobs $bounds"
    cmp -s "$tmp/one" "$tmp/many" || fail "search -j $jobs $bounds differs from --jobs 1"
  done
done
[[ $(jq '.matches | length' "$tmp/one") -gt 0 ]] || fail "the many-file search found nothing"
run 2 "$toolread" search --root "$root" --query needle --jobs 0

refuse 2 MF-T002 "$toolread" search --root "$root" --path outdir --query needle
refuse 2 MF-T004 "$toolread" search --root "$root" --path f.txt --query needle
refuse 2 MF-T011 "$toolread" search --root "$root" --query ''
run 2 "$toolread" search --root "$root" --query needle --max-matches 0
run 2 "$toolread" search --root "$root" --query needle --start-line 1

echo "toolread: ok"
