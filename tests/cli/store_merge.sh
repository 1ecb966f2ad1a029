#!/usr/bin/env bash
# mf-store merge (docs/store.md): the stores of a campaign's shards become one store, every object
# checked on the way in. Merging unions the objects and refs and is idempotent; a ref two stores
# bind to different objects, a store merged into itself, a missing store and a corrupt object are
# refused with nothing written to the target.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"

mf="$(cd "$MF_BIN" && pwd)/mf-store"
unset MF_STORE

# Two shard-like stores: objects of their own, one object in both, refs of their own.
for i in 1 2 3; do printf 'shard a object %d\n' "$i" >"$tmp/a$i"; printf 'shard b object %d\n' "$i" >"$tmp/b$i"; done
printf 'in both stores\n' >"$tmp/both"
head -c 3000000 < <(yes 'a large object, LMDB overflow pages') >"$tmp/large"
run 0 "$mf" --store "$tmp/a" put "$tmp/a1" "$tmp/a2" "$tmp/a3" "$tmp/both" "$tmp/large"
mapfile -t a <"$tmp/out"
run 0 "$mf" --store "$tmp/b" put "$tmp/b1" "$tmp/b2" "$tmp/b3" "$tmp/both"
mapfile -t b <"$tmp/out"
"$mf" --store "$tmp/a" ref set campaign/s/case/x/trace "${a[0]}"
"$mf" --store "$tmp/a" ref set campaign/s/shard/1-of-2/report "${a[4]}"
"$mf" --store "$tmp/b" ref set campaign/s/case/y/trace "${b[0]}"
"$mf" --store "$tmp/b" ref set campaign/s/shard/2-of-2/report "${b[1]}"
"$mf" --store "$tmp/b" ref set shared/both "${b[3]}"
"$mf" --store "$tmp/a" ref set shared/both "${a[3]}"   # the same object in both: no conflict

run 0 "$mf" --store "$tmp/all" merge "$tmp/a" "$tmp/b"
[[ $(cat "$tmp/out") == '{"added":8,"refs":5,"stores":2}' ]] || fail "merge: $(cat "$tmp/out")"
# The union, exactly: objects and refs.
LC_ALL=C sort -u <("$mf" --store "$tmp/a" ls) <("$mf" --store "$tmp/b" ls) >"$tmp/want.objects"
"$mf" --store "$tmp/all" ls >"$tmp/got.objects"
cmp -s "$tmp/want.objects" "$tmp/got.objects" || fail "merged objects: $(diff "$tmp/want.objects" "$tmp/got.objects")"
cat <("$mf" --store "$tmp/a" ls --refs) <("$mf" --store "$tmp/b" ls --refs) |
  jq -s -c 'unique_by(.ref)[]' >"$tmp/want.refs"
"$mf" --store "$tmp/all" ls --refs >"$tmp/got.refs"
cmp -s "$tmp/want.refs" "$tmp/got.refs" || fail "merged refs: $(diff "$tmp/want.refs" "$tmp/got.refs")"
run 0 "$mf" --store "$tmp/all" get "${a[4]}"
cmp -s "$tmp/out" "$tmp/large" || fail "the large object changed in the merge"
run 0 "$mf" --store "$tmp/all" verify
[[ $(jq -r .ok "$tmp/out") == true ]] || fail "the merged store does not verify"
ls -A "$tmp/all" | grep -q merge && fail "merge left a spool file: $(ls -A "$tmp/all")"
# Idempotent.
run 0 "$mf" --store "$tmp/all" merge "$tmp/b" "$tmp/a"
[[ $(cat "$tmp/out") == '{"added":0,"refs":5,"stores":2}' ]] || fail "second merge: $(cat "$tmp/out")"

snapshot() { { "$mf" --store "$tmp/all" ls; "$mf" --store "$tmp/all" ls --refs; } >"$tmp/$1"; }
snapshot before
# A ref bound to another object: between a source and the target, and between two sources.
printf 'another campaign\n' >"$tmp/other"
run 0 "$mf" --store "$tmp/c" put "$tmp/other" "$tmp/b2"
mapfile -t c <"$tmp/out"
"$mf" --store "$tmp/c" ref set campaign/s/case/x/trace "${c[0]}"
"$mf" --store "$tmp/c" ref set campaign/s/case/z/trace "${c[1]}"
refuse 2 MF-K009 "$mf" --store "$tmp/all" merge "$tmp/c"
grep -qF "ref campaign/s/case/x/trace names one object in $tmp/all and another in $tmp/c" "$tmp/err" ||
  fail "the conflict is not named: $(cat "$tmp/err")"
refuse 2 MF-K009 "$mf" --store "$tmp/new" merge "$tmp/a" "$tmp/c"
[[ ! -e $tmp/new ]] || fail "a refused merge created its target"
# Into itself, from nowhere.
refuse 2 MF-K009 "$mf" --store "$tmp/all" merge "$tmp/a" "$tmp/all"
refuse 2 MF-K005 "$mf" --store "$tmp/all" merge "$tmp/nothing-here"
run 2 "$mf" --store "$tmp/all" merge
grep -q "'merge' takes one or more STORE directories" "$tmp/err" || fail "merge without stores: $(cat "$tmp/err")"
snapshot after
cmp -s "$tmp/before" "$tmp/after" || fail "a refused merge changed the target"

# A corrupt object in a source: the merge fails (exit 3) and adds nothing of that store.
cp -r "$tmp/b" "$tmp/bad"
python3 - "$tmp/bad/data.mdb" <<'PY'
import sys
path = sys.argv[1]
data = bytearray(open(path, "rb").read())
at = data.find(b"shard b object 3")
assert at >= 0
data[at] ^= 0x01
open(path, "wb").write(data)
PY
run 0 "$mf" --store "$tmp/fresh" put "$tmp/other"
run 3 "$mf" --store "$tmp/fresh" merge "$tmp/bad"
grep -q 'MF-K003' "$tmp/err" || fail "corrupt source: $(cat "$tmp/err")"
[[ $("$mf" --store "$tmp/fresh" ls | wc -l) -eq 1 ]] || fail "a failed merge added objects"
echo "store_merge: ok"
