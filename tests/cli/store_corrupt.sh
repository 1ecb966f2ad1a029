#!/usr/bin/env bash
# A corrupted store never kills a command with a signal (docs/store.md, "Corruption"): a matrix of
# damaged data.mdb files — truncated at many lengths, pages overwritten with zeros, ones or noise,
# single bytes flipped — under every read command and a write. Each command must end with an exit
# code (0-3, never a signal or a hang), and a `get` that succeeds must return the object's exact
# bytes. A truncated file is named as such before it is mapped.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"

mf="$(cd "$MF_BIN" && pwd)/mf-store"
unset MF_STORE
command -v python3 >/dev/null || fail "python3 is required"

# A store with small objects, one large object (LMDB overflow pages) and refs.
s="$tmp/s"
for i in $(seq 1 150); do printf 'object %d of the corruption matrix\n' "$i"; done >"$tmp/lines"
split -l 1 "$tmp/lines" "$tmp/obj."
head -c 300000 < <(yes 'a large object that spans many overflow pages') >"$tmp/large"
"$mf" --store "$s" put "$tmp"/obj.* "$tmp/large" >"$tmp/digests"
small=$(head -1 "$tmp/digests")
large=$(tail -1 "$tmp/digests")
"$mf" --store "$s" ref set keep/small "$small"
"$mf" --store "$s" ref set keep/large "$large"
# The used part of the file (a writer extends it to the map's size): the newest meta page's last
# page, plus one, times the page size.
size=$(python3 - "$s/data.mdb" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read(8192)
metas = [struct.unpack_from("<QQ", data, at + 136) for at in (0, 4096)]
last_page, _ = max(metas, key=lambda m: m[1])
print((last_page + 1) * 4096)
PY
)
page=4096
pages=$((size / page))

# corrupt KIND ARG: writes the damaged copy of the store to $tmp/c.
corrupt() {
  rm -rf "$tmp/c" && cp -r "$s" "$tmp/c"
  python3 - "$tmp/c/data.mdb" "$1" "$2" <<'PY'
import random, sys
path, kind, arg = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(path, "r+b") as f:
    if kind == "truncate":
        f.truncate(arg)
    elif kind in ("zeros", "ones", "noise"):
        fill = {"zeros": b"\0" * 4096, "ones": b"\xff" * 4096,
                "noise": random.Random(arg).randbytes(4096)}[kind]
        f.seek(arg * 4096)
        f.write(fill)
    elif kind == "flip":
        data = bytearray(f.read())
        rng = random.Random(arg)
        for _ in range(8):
            at = rng.randrange(len(data))
            data[at] ^= 1 << rng.randrange(8)
        f.seek(0)
        f.write(data)
PY
}

# check LABEL: every command on $tmp/c ends with an exit code, and a successful get is exact.
checked=0
check() {
  local label=$1 cmd rc
  for cmd in "ls" "ls --refs" "stat" "verify" "gc --dry-run" "has $small $large" \
             "get $small" "get $large" "export --ref keep/small --ref keep/large" \
             "ref get keep/large" "put $tmp/lines"; do
    rc=0
    # shellcheck disable=SC2086 # the command's words
    timeout 30 "$mf" --store "$tmp/c" $cmd >"$tmp/out" 2>"$tmp/err" || rc=$?
    if ((rc > 3)); then
      fail "$label: mf-store $cmd ended with $rc ($( ((rc > 128)) && kill -l $((rc - 128)) ))" \
           "$(head -c 300 "$tmp/err")"
    fi
    if [[ $cmd == get* && $rc -eq 0 ]]; then
      [[ $(sha256sum <"$tmp/out" | cut -d' ' -f1) == "${cmd#get }" ]] ||
        fail "$label: get returned other bytes"
    fi
    checked=$((checked + 1))
  done
}

# Truncations: the meta pages, the first data pages, halfway, one page or one byte short.
for len in 0 100 4096 8191 8192 12288 $((size / 2)) $((size - page)) $((size - 1)); do
  corrupt truncate "$len"
  check "truncated to $len"
done
# A truncated store is named before LMDB maps it.
corrupt truncate $((size / 2))
rc=0; "$mf" --store "$tmp/c" ls >/dev/null 2>"$tmp/err" || rc=$?
[[ $rc -eq 3 ]] || fail "a truncated store exited $rc, expected 3"
grep -q "MF-K003.*truncated" "$tmp/err" || fail "truncation not named: $(cat "$tmp/err")"

# Pages overwritten: both meta pages, and pages spread over the file.
for p in 0 1 2 3 4 $((pages / 4)) $((pages / 2)) $((pages - 2)) $((pages - 1)); do
  for kind in zeros ones noise; do
    corrupt "$kind" "$p"
    check "page $p overwritten with $kind"
  done
done
# Bytes flipped at random places (seeded).
for seed in $(seq 1 24); do
  corrupt flip "$seed"
  check "8 bits flipped (seed $seed)"
done

echo "store_corrupt: ok ($checked commands on damaged stores)"
