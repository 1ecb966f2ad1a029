#!/usr/bin/env bash
# mf-store put on a file system that fills up mid-put (a 16 MiB tmpfs, mounted for the test): a
# file written straight into data.mdb and stdin through a spool both fail with one diagnostic and
# exit 3, give back every page they wrote (the file system's usage is what it was) and leave a
# store that verifies and takes the next put.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"
mnt=$tmp/small
mkdir "$mnt"
mount -t tmpfs -o size=16m mf-store-full "$mnt" 2>/dev/null || {
  echo "SKIP: cannot mount a tmpfs here (needs root)"
  exit 77
}
trap 'umount "$mnt"; [[ -n ${KEEP_TMP:-} ]] || rm -rf "$tmp"' EXIT
store=$mnt/store
used() { df --output=used -k "$mnt" | tail -n 1; }

echo "a first object" >"$tmp/first"
stdin=$tmp/first run 0 "$MF_BIN/mf-store" --store "$store" put
head -c $((24 << 20)) /dev/urandom >"$tmp/big"
before=$(used)
refuse 3 MF-K007 "$MF_BIN/mf-store" --store "$store" put "$tmp/big"
grep -q "No space left on device" "$tmp/err" || fail "put FILE: $(cat "$tmp/err")"
[[ $(wc -l <"$tmp/err") -eq 1 ]] || fail "put FILE: more than one line on stderr: $(cat "$tmp/err")"
after=$(used)
((after <= before + 256)) || fail "put FILE left $((after - before)) KiB written on a full disk"

stdin=$tmp/big refuse 3 MF-O003 "$MF_BIN/mf-store" --store "$store" put -
grep -q "No space left on device" "$tmp/err" || fail "put -: $(cat "$tmp/err")"
after=$(used)
((after <= before + 256)) || fail "put - left $((after - before)) KiB written on a full disk"
[[ -z $(find "$store" -name '.spool-*') ]] || fail "put - left a spool file"

run 0 "$MF_BIN/mf-store" --store "$store" verify
head -c $((3 << 20)) /dev/urandom >"$tmp/fits"
run 0 "$MF_BIN/mf-store" --store "$store" put "$tmp/fits"
[[ $(cat "$tmp/out") == "$(sha256sum "$tmp/fits" | cut -d' ' -f1)" ]] || fail "put after a full disk"
run 0 "$MF_BIN/mf-store" --store "$store" verify
