#!/usr/bin/env bash
# mf-store's store commands end to end (docs/store.md): put/get byte-exact round trips, idempotent
# put, has, ls, refs, verify (and what it finds in a damaged store), gc's reachability rule, export
# → import between stores (and a tampered stream), read commands on a missing store, stat, and
# where the store is (--store, MF_STORE, ./.mf/store).
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"

mf="$(cd "$MF_BIN" && pwd)/mf-store"
unset MF_STORE

sha() { sha256sum "$@" | cut -d' ' -f1; }
out() { cat "$tmp/out"; }
expect_no_stdout() { [[ ! -s $tmp/out ]] || fail "$1: wrote to stdout: $(head -c 300 "$tmp/out")"; }
expect_err() { grep -q -- "$1" "$tmp/err" || fail "$2: stderr lacks '$1': $(cat "$tmp/err")"; }
count_objects() { "$mf" --store "$1" ls | wc -l; }

s="$tmp/s"
zero=0000000000000000000000000000000000000000000000000000000000000000

# --- put / get: byte-exact round trips --------------------------------------------------------------
printf 'hello, store\n' >"$tmp/text"
# shellcheck disable=SC2059 # the format is the point: one octal escape per byte value
for i in $(seq 0 255); do printf "\\$(printf %03o "$i")"; done >"$tmp/binary"
[[ $(wc -c <"$tmp/binary") -eq 256 ]] || fail "binary fixture is not 256 bytes"
head -c $((5 * 1024 * 1024)) \
  < <(yes 'a line of a five megabyte trace, repeated until the file is large enough') >"$tmp/big"
cat "$tmp/binary" >>"$tmp/big"
: >"$tmp/empty"

run 0 "$mf" --store "$s" put "$tmp/text"
[[ $(out) == "$(sha "$tmp/text")" ]] || fail "put printed $(out), not the file's SHA-256"
[[ -f $s/data.mdb ]] || fail "put did not create the store"
run 0 "$mf" --store "$s" put "$tmp/binary" "$tmp/big" "$tmp/empty"
printf '%s\n' "$(sha "$tmp/binary")" "$(sha "$tmp/big")" "$(sha "$tmp/empty")" >"$tmp/expected"
cmp -s "$tmp/expected" "$tmp/out" || fail "put of three files: $(out)"
stdin="$tmp/binary" run 0 "$mf" --store "$s" put -
[[ $(out) == "$(sha "$tmp/binary")" ]] || fail "put - (stdin)"
stdin="$tmp/text" run 0 "$mf" --store "$s" put
[[ $(out) == "$(sha "$tmp/text")" ]] || fail "put with no FILE reads stdin"

for f in text binary big empty; do
  run 0 "$mf" --store "$s" get "$(sha "$tmp/$f")"
  cmp -s "$tmp/$f" "$tmp/out" || fail "get of $f is not byte-exact"
  [[ ! -s $tmp/err ]] || fail "get of $f wrote to stderr"
done

# Idempotent: the same bytes again give the same digest and no new object.
before=$(count_objects "$s")
[[ $before -eq 4 ]] || fail "ls shows $before objects, expected 4"
run 0 "$mf" --store "$s" put "$tmp/big" "$tmp/text"
printf '%s\n' "$(sha "$tmp/big")" "$(sha "$tmp/text")" >"$tmp/expected"
cmp -s "$tmp/expected" "$tmp/out" || fail "second put printed other digests"
[[ $(count_objects "$s") -eq $before ]] || fail "a second put of the same bytes added objects"

# A put that cannot read its input is a rejected request and prints nothing for it.
run 2 "$mf" --store "$s" put "$tmp/no-such-file"
expect_no_stdout "put of a missing file"
expect_err MF-S013 "put of a missing file"

# --- get / has failures -----------------------------------------------------------------------------
run 2 "$mf" --store "$s" get "$zero"
expect_no_stdout "get of a missing object"
expect_err MF-K001 "get of a missing object"
run 2 "$mf" --store "$s" get not-a-digest
expect_err 'usage error' "get of a malformed digest"
run 2 "$mf" --store "$s" get "$(sha "$tmp/text" | tr a-f A-F)"
expect_err 'usage error' "get of an upper-case digest"
run 2 "$mf" --store "$s" get "$zero" "$zero"
expect_err 'usage error' "get of two digests"

run 0 "$mf" --store "$s" has "$(sha "$tmp/text")" "$(sha "$tmp/big")"
expect_no_stdout "has of present objects"
run 1 "$mf" --store "$s" has "$(sha "$tmp/text")" "$zero"
[[ $(out) == "$zero" ]] || fail "has prints the missing digests only, got: $(out)"
run 2 "$mf" --store "$s" has
expect_err 'usage error' "has without a digest"
run 2 "$mf" --store "$s" has "$zero" xyz
expect_err 'usage error' "has with a malformed digest"

# --- ls ---------------------------------------------------------------------------------------------
run 0 "$mf" --store "$s" ls
cp "$tmp/out" "$tmp/ls"
"$mf" canon --lines "$tmp/ls" | cmp -s - "$tmp/ls" || fail "ls lines are not canonical JSON"
for f in text binary big empty; do
  printf '{"digest":"%s","size":%d}\n' "$(sha "$tmp/$f")" "$(wc -c <"$tmp/$f")"
done | sort >"$tmp/expected"
cmp -s "$tmp/expected" "$tmp/ls" || fail "ls is not the sorted {digest,size} lines: $(cat "$tmp/ls")"
run 2 "$mf" --store "$s" ls extra
expect_err 'usage error' "ls with an operand"
run 2 "$mf" --store "$s" put --refs "$tmp/text"
expect_err "usage error: --refs applies to 'ls' only" "--refs on put"

# --- refs -------------------------------------------------------------------------------------------
text=$(sha "$tmp/text")
big=$(sha "$tmp/big")
run 0 "$mf" --store "$s" ref set run/r1/trace "$big"
expect_no_stdout "ref set"
run 0 "$mf" --store "$s" ref set audit/report "$text"
run 0 "$mf" --store "$s" ref get run/r1/trace
[[ $(out) == "$big" ]] || fail "ref get printed $(out)"
run 0 "$mf" --store "$s" ref set run/r1/trace "$text" # a ref moves
run 0 "$mf" --store "$s" ref get run/r1/trace
[[ $(out) == "$text" ]] || fail "ref set did not move the ref"
run 0 "$mf" --store "$s" ls --refs
printf '{"digest":"%s","ref":"audit/report"}\n{"digest":"%s","ref":"run/r1/trace"}\n' "$text" "$text" \
  >"$tmp/expected"
cmp -s "$tmp/expected" "$tmp/out" || fail "ls --refs: $(out)"
run 2 "$mf" --store "$s" ref set run/r1/result "$zero"
expect_err MF-K001 "ref set to a missing object"
run 2 "$mf" --store "$s" ref set ../escape "$text"
expect_err MF-K004 "ref set with a bad name"
run 2 "$mf" --store "$s" ref set run/r1/trace nope
expect_err 'usage error' "ref set with a malformed digest"
run 2 "$mf" --store "$s" ref get run/none
expect_no_stdout "ref get of an unknown ref"
expect_err MF-K001 "ref get of an unknown ref"
run 0 "$mf" --store "$s" ref rm run/r1/trace
run 1 "$mf" --store "$s" ref rm run/r1/trace
expect_err 'does not exist' "ref rm of an unknown ref"
run 2 "$mf" --store "$s" ref
expect_err 'usage error' "ref without a subcommand"
run 2 "$mf" --store "$s" ref move a b
expect_err 'usage error' "ref with an unknown subcommand"

# --- verify -----------------------------------------------------------------------------------------
run 0 "$mf" --store "$s" verify
[[ $(out) == '{"checked":4,"corrupt":[],"dangling_refs":[],"ok":true}' ]] || fail "verify: $(out)"
[[ ! -s $tmp/err ]] || fail "verify drew progress into a file: $(cat "$tmp/err")"

# A damaged store: flip one byte of an object inside data.mdb (every copy LMDB left in the file).
d="$tmp/damaged"
marker=CORRUPTION-MARKER-0123456789abcdefghijklmnopqrstuvwxyz
printf '%s' "$marker" >"$tmp/victim"
victim=$(sha "$tmp/victim")
run 0 "$mf" --store "$d" put "$tmp/victim" "$tmp/text"
run 0 "$mf" --store "$d" ref set run/r1/trace "$victim"
offsets=$(grep -obUa "$marker" "$d/data.mdb" | cut -d: -f1)
[[ -n $offsets ]] || fail "the marker is not in data.mdb"
for offset in $offsets; do
  printf 'X' | dd of="$d/data.mdb" bs=1 seek="$offset" conv=notrunc status=none
done
run 1 "$mf" --store "$d" verify
[[ $(out) == "{\"checked\":2,\"corrupt\":[\"$victim\"],\"dangling_refs\":[],\"ok\":false}" ]] ||
  fail "verify of a damaged store: $(out)"
run 3 "$mf" --store "$d" get "$victim"
expect_no_stdout "get of a corrupt object" # corrupt bytes are never returned as data
expect_err MF-K003 "get of a corrupt object"
run 3 "$mf" --store "$d" export --ref run/r1/trace
expect_err MF-K003 "export of a corrupt object"
run 0 "$mf" --store "$d" get "$text" # the rest of the store still serves
cmp -s "$tmp/text" "$tmp/out" || fail "get beside a corrupt object"

# --- gc: what a ref reaches through the digests its documents mention survives ------------------------
g="$tmp/gc"
put() { "$mf" --store "$g" put "$@"; }
printf 'leaf-one' >"$tmp/leaf"
leaf=$(put "$tmp/leaf")
mid=$(printf '{"child":"%s","note":"mid"}' "$leaf" | put -)
root=$(printf '{"kind":"report","parts":[{"at":"%s"}]}' "$mid" | put -)
step=$(printf 'response body' | put -)
trace=$(printf '{"event":"run_started"}\n{"event":"model_responded","response_sha256":"%s"}\n' "$step" | put -)
junk=$(printf 'junk' | put -)
junk_doc=$(printf '{"mentions":"%s"}' "$leaf" | put -) # unreachable, though it names a kept object
"$mf" --store "$g" ref set campaign/c1/report "$root"
"$mf" --store "$g" ref set run/r1/trace "$trace"
run 0 "$mf" --store "$g" gc --dry-run
[[ $(out) == '{"kept":5,"removed":2}' ]] || fail "gc --dry-run: $(out)"
[[ $(count_objects "$g") -eq 7 ]] || fail "gc --dry-run removed objects"
run 0 "$mf" --store "$g" gc
[[ $(out) == '{"kept":5,"removed":2}' ]] || fail "gc: $(out)"
run 0 "$mf" --store "$g" has "$root" "$mid" "$leaf" "$trace" "$step"
run 1 "$mf" --store "$g" has "$junk" "$junk_doc"
printf '%s\n' "$junk" "$junk_doc" >"$tmp/expected"
cmp -s "$tmp/expected" "$tmp/out" || fail "gc kept garbage: $(out)"
run 0 "$mf" --store "$g" verify
# Dropping a ref lets gc take its whole closure, and only it.
"$mf" --store "$g" ref rm run/r1/trace
run 0 "$mf" --store "$g" gc
[[ $(out) == '{"kept":3,"removed":2}' ]] || fail "gc after ref rm: $(out)"
run 1 "$mf" --store "$g" has "$trace" "$step"
run 0 "$mf" --store "$g" has "$root" "$mid" "$leaf"
run 2 "$mf" --store "$g" gc --dry-run now
expect_err 'usage error' "gc with an operand"

# --- export → import --------------------------------------------------------------------------------
printf 'unrelated' | "$mf" --store "$g" put - >/dev/null
run 0 "$mf" --store "$g" export --ref campaign/c1/report
cp "$tmp/out" "$tmp/export.jsonl"
[[ $(wc -l <"$tmp/export.jsonl") -eq 4 ]] || fail "export: 3 objects and 1 ref expected: $(out)"
"$mf" canon --lines "$tmp/export.jsonl" | cmp -s - "$tmp/export.jsonl" ||
  fail "export lines are not canonical JSON"
head -n 3 "$tmp/export.jsonl" | grep -o '"digest":"[0-9a-f]*"' >"$tmp/order"
sort -c "$tmp/order" || fail "export objects are not sorted by digest"
tail -n 1 "$tmp/export.jsonl" | grep -qx "{\"digest\":\"$root\",\"ref\":\"campaign/c1/report\"}" ||
  fail "export does not end with the ref line"
run 0 "$mf" --store "$g" export --ref campaign/c1/report -o "$tmp/export-o.jsonl"
expect_no_stdout "export -o"
cmp -s "$tmp/export.jsonl" "$tmp/export-o.jsonl" || fail "export -o differs from export to stdout"
run 0 "$mf" --store "$g" export "$root"
head -n 3 "$tmp/export.jsonl" | cmp -s - "$tmp/out" || fail "export DIGEST: $(out)"

f="$tmp/fresh"
run 0 "$mf" --store "$f" import "$tmp/export.jsonl"
[[ $(out) == '{"added":3}' ]] || fail "import: $(out)"
run 0 "$mf" --store "$f" verify
"$mf" --store "$g" ls | grep -v "$(sha <(printf unrelated))" >"$tmp/expected"
run 0 "$mf" --store "$f" ls
cmp -s "$tmp/expected" "$tmp/out" || fail "the imported store lacks objects of the closure"
run 0 "$mf" --store "$f" ref get campaign/c1/report
[[ $(out) == "$root" ]] || fail "import did not set the ref"
stdin="$tmp/export.jsonl" run 0 "$mf" --store "$f" import -
[[ $(out) == '{"added":0}' ]] || fail "a second import is not idempotent: $(out)"

run 2 "$mf" --store "$g" export "$zero"
expect_err MF-K001 "export of a missing object"
run 2 "$mf" --store "$g" export --ref run/none
expect_err MF-K001 "export of an unknown ref"
run 2 "$mf" --store "$g" export
expect_err 'usage error' "export of nothing"
refuse 2 MF-S017 "$mf" --store "$g" export "$root" -o "$tmp/no-such-dir/x.jsonl"
[[ ! -e $tmp/no-such-dir ]] || fail "export -o created a directory"

# A tampered stream: the leaf's bytes are changed under its digest (same size). The import fails,
# the fresh store gains nothing from that line or after it, and no ref is set.
tampered_bytes="leaf-onE"
tampered_b64=$(printf '%s' "$tampered_bytes" | base64 -w0)
sed "s|\"data_b64\":\"[^\"]*\",\"digest\":\"$leaf\"|\"data_b64\":\"$tampered_b64\",\"digest\":\"$leaf\"|" \
  "$tmp/export.jsonl" >"$tmp/tampered.jsonl"
! cmp -s "$tmp/export.jsonl" "$tmp/tampered.jsonl" || fail "the tampering did not change the stream"
bad_line=$(grep -n "\"digest\":\"$leaf\"" "$tmp/tampered.jsonl" | cut -d: -f1)
t="$tmp/tamper-target"
run 2 "$mf" --store "$t" import "$tmp/tampered.jsonl"
expect_no_stdout "import of a tampered stream"
expect_err MF-K002 "import of a tampered stream"
expect_err ":$bad_line:" "import names the bad line"
run 1 "$mf" --store "$t" has "$leaf" "$(printf '%s' "$tampered_bytes" | sha256sum | cut -d' ' -f1)"
[[ $(out | wc -l) -eq 2 ]] || fail "the tampered object (or its bytes) reached the store"
run 0 "$mf" --store "$t" ls --refs
expect_no_stdout "a ref was set by a failed import"
run 0 "$mf" --store "$t" verify

# A truncated stream is malformed (MF-K008).
head -c 40 "$tmp/export.jsonl" >"$tmp/truncated.jsonl"
run 2 "$mf" --store "$tmp/trunc-target" import "$tmp/truncated.jsonl"
expect_err MF-K008 "import of a truncated stream"

# --- only put and import create a store: reads, and writes that only change what is there, do not ---
missing="$tmp/missing/store"
while IFS= read -r command; do
  # shellcheck disable=SC2086
  run 2 "$mf" --store "$missing" $command
  expect_no_stdout "$command on a missing store"
  expect_err MF-K005 "$command on a missing store"
  [[ ! -e $tmp/missing ]] || fail "$command created $tmp/missing"
done <<EOF
get $text
has $text
ls
ls --refs
ref get run/r1/trace
verify
gc --dry-run
export $text
export --ref run/r1/trace
stat
ref set run/r1/trace $text
ref rm run/r1/trace
gc
EOF

# --- stat -------------------------------------------------------------------------------------------
run 0 "$mf" --store "$s" stat
jq -e 'keys == ["file_bytes","map_bytes","object_bytes","objects","refs"]' "$tmp/out" >/dev/null ||
  fail "stat fields: $(out)"
bytes=$(cat "$tmp/text" "$tmp/binary" "$tmp/big" "$tmp/empty" | wc -c)
jq -e --argjson bytes "$bytes" \
  '.objects == 4 and .refs == 1 and .object_bytes == $bytes and .file_bytes > $bytes
   and .map_bytes >= .file_bytes' "$tmp/out" >/dev/null || fail "stat figures: $(out)"
"$mf" canon "$tmp/out" | cmp -s - "$tmp/out" || fail "stat is not canonical JSON"

# --- several processes on one store at once -----------------------------------------------------------
c="$tmp/concurrent"
"$mf" --store "$c" put "$tmp/text" >/dev/null
mkdir "$tmp/objs"
for w in 1 2 3 4; do
  for i in $(seq 1 25); do printf 'writer %d object %d\n' "$w" "$i" >"$tmp/objs/$w-$i"; done
done
pids=()
for w in 1 2 3 4; do
  "$mf" --store "$c" put "$tmp/objs/$w"-* >"$tmp/put-$w" 2>"$tmp/put-$w.err" &
  pids+=($!)
done
for r in 1 2; do
  (for _ in 1 2 3 4 5; do "$mf" --store "$c" verify >/dev/null || exit 1; done) 2>"$tmp/verify-$r.err" &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || fail "a concurrent writer or reader failed: $(cat "$tmp"/*.err)"; done
[[ $(cat "$tmp"/put-? | wc -l) -eq 100 ]] || fail "concurrent writers printed $(cat "$tmp"/put-? | wc -l) digests"
# shellcheck disable=SC2046
run 0 "$mf" --store "$c" has $(cat "$tmp"/put-?)
[[ $(count_objects "$c") -eq 101 ]] || fail "concurrent writers left $(count_objects "$c") objects"
run 0 "$mf" --store "$c" verify

# A full stdout is an I/O error (exit 3), not a success.
if [[ -w /dev/full ]]; then
  rc=0
  "$mf" --store "$s" get "$text" >/dev/full 2>"$tmp/err" || rc=$?
  [[ $rc -eq 3 ]] || fail "get >/dev/full exited $rc, expected 3"
fi

# --- where the store is: --store, else MF_STORE, else ./.mf/store --------------------------------------
MF_STORE="$tmp/env-store" run 0 "$mf" put "$tmp/text"
[[ -f $tmp/env-store/data.mdb ]] || fail "MF_STORE is not honoured by put"
MF_STORE="$tmp/env-store" run 0 "$mf" get "$text"
cmp -s "$tmp/text" "$tmp/out" || fail "MF_STORE is not honoured by get"
MF_STORE="$tmp/env-store" run 0 "$mf" --store "$tmp/flag-store" put "$tmp/binary"
[[ -f $tmp/flag-store/data.mdb ]] || fail "--store does not win over MF_STORE"
MF_STORE="$tmp/env-store" run 1 "$mf" has "$(sha "$tmp/binary")"
mkdir "$tmp/cwd"
(cd "$tmp/cwd" && "$mf" put "$tmp/text" >/dev/null) || fail "put into the default store"
[[ -f $tmp/cwd/.mf/store/data.mdb ]] || fail "the default store is not ./.mf/store"

# --- memory does not grow with the object ----------------------------------------------------------
# A 300 MB object put from a file and from a pipe, then got: peak RSS stays far below its size
# (values are filled and read through the map chunk by chunk; a pipe is spooled to disk first).
if [[ -x /usr/bin/time ]]; then
  head -c $((300 * 1024 * 1024)) /dev/zero | tr '\0' 'm' >"$tmp/huge"
  # Under AddressSanitizer freed chunks wait in its quarantine and would count as peak memory, and
  # LeakSanitizer's scan at exit adds tens of MB of its own (every other run here is leak-checked).
  peak() {
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:detect_leaks=0 \
      /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1
  }
  limit=$((96 * 1024))  # KiB
  kb=$(peak "$mf" --store "$tmp/m1" put "$tmp/huge")
  ((kb < limit)) || fail "put FILE of 300 MB peaked at $kb KiB"
  kb=$(peak sh -c "cat '$tmp/huge' | '$mf' --store '$tmp/m2' put -")
  ((kb < limit)) || fail "put - of 300 MB peaked at $kb KiB"
  big_digest=$(sha "$tmp/huge")
  kb=$(peak "$mf" --store "$tmp/m1" get "$big_digest")
  ((kb < limit)) || fail "get of 300 MB peaked at $kb KiB"
  "$mf" --store "$tmp/m2" get "$big_digest" | cmp -s - "$tmp/huge" || fail "the piped object differs"
  # Export and import: the object's line (400 MB of base64) is decoded as it arrives.
  "$mf" --store "$tmp/m1" ref set keep/huge "$big_digest"
  kb=$(peak "$mf" --store "$tmp/m1" export --ref keep/huge -o "$tmp/huge.jsonl")
  ((kb < limit)) || fail "export of 300 MB peaked at $kb KiB"
  kb=$(peak "$mf" --store "$tmp/m3" import "$tmp/huge.jsonl")
  ((kb < limit)) || fail "import of 300 MB peaked at $kb KiB"
  "$mf" --store "$tmp/m3" get "$big_digest" | cmp -s - "$tmp/huge" || fail "the imported object differs"
  [[ $("$mf" --store "$tmp/m3" ref get keep/huge) == "$big_digest" ]] || fail "the ref after a streamed line"
  rm -f "$tmp/huge" "$tmp/huge.jsonl"
fi

# --- a streamed object line (over 8 MiB) is as strict as a line read whole -------------------------
head -c $((12 * 1024 * 1024)) /dev/urandom >"$tmp/twelve"
twelve=$("$mf" --store "$tmp/t1" put "$tmp/twelve")
"$mf" --store "$tmp/t1" export "$twelve" -o "$tmp/twelve.jsonl"
# tamper KIND: a damaged copy of the stream in $tmp/bad.jsonl.
tamper() {
  python3 - "$tmp/twelve.jsonl" "$tmp/bad.jsonl" "$1" <<'PY'
import sys
line = open(sys.argv[1], "rb").read()
kind = sys.argv[3]
head, tail = line.rsplit(b'","digest":', 1)
if kind == "digest":
    tail = tail.replace(tail[1:3], b"00" if tail[1:3] != b"00" else b"11", 1)
elif kind == "size":
    tail = tail.replace(b'"size":', b'"size":1', 1)
elif kind == "char":
    head = head[:5_000_000] + b"*" + head[5_000_001:]
elif kind == "padding":
    head = head[:5_000_000] + b"=" + head[5_000_001:]
elif kind == "tail":
    tail = tail.replace(b'"size":', b'"size" :', 1)
elif kind == "extra":
    tail = tail.replace(b"}\n", b',"x":1}\n', 1)
elif kind == "unterminated":
    head, tail = head[:9_000_000], b""
open(sys.argv[2], "wb").write(head + (b'","digest":' + tail if tail else b""))
PY
}
for kind in digest size char padding tail extra unterminated; do
  tamper "$kind"
  rm -rf "$tmp/t2"
  code=MF-K008
  [[ $kind == digest ]] && code=MF-K002
  run 2 "$mf" --store "$tmp/t2" import "$tmp/bad.jsonl"
  expect_err "$code" "a streamed line with a bad $kind"
  expect_err "line 1" "a streamed line with a bad $kind"
  [[ $(count_objects "$tmp/t2" 2>/dev/null || echo 0) -eq 0 ]] || fail "a bad $kind stored something"
done
run 0 "$mf" --store "$tmp/t2" import "$tmp/twelve.jsonl"
[[ $(out) == '{"added":1}' ]] || fail "the streamed import: $(out)"
"$mf" --store "$tmp/t2" get "$twelve" | cmp -s - "$tmp/twelve" || fail "the streamed object differs"

echo "store: ok"
