#!/usr/bin/env bash
# mf-store's plumbing: `canon` (RFC 8785, documents and streamed JSONL) and `hash` (raw bytes and
# canonical JSON), their diagnostics and exit codes, and the pinned digest of the Forge task fixture.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"

store="$MF_BIN/mf-store"

expect_out() {  # expect_out FILE-WITH-EXPECTED-BYTES WHAT
  cmp -s "$1" "$tmp/out" || {
    echo "--- expected" >&2; od -c "$1" | head -20 >&2
    echo "--- actual" >&2; od -c "$tmp/out" | head -20 >&2
    fail "$2"
  }
}

sha() { sha256sum "$@" | cut -d' ' -f1; }

# --- canon: one document --------------------------------------------------------------------------
# Unsorted keys (UTF-16 order puts "A" < "a" < "z" < "é"), escapes that must be undone (\u00e9, \/),
# kept (\" \\ \t) or written in hex (\u001f), and numbers in ES6 form.
printf '%s' '{ "z": "\u20ac\t\"\/\\\u001f", "a": {"y": [1.50, -0.0, 1e21, 1E-7, 0.000001, 100],
  "b": "\u00e9"}, "\u00e9": true, "A": null }' >"$tmp/doc.json"
printf '%s\n' '{"A":null,"a":{"b":"é","y":[1.5,0,1e+21,1e-7,0.000001,100]},"z":"€\t\"/\\\u001f","é":true}' \
  >"$tmp/doc.expected"
run 0 "$store" canon "$tmp/doc.json"
expect_out "$tmp/doc.expected" "canon of a document"
[[ ! -s $tmp/err ]] || fail "canon wrote to stderr"

# The same from stdin, named '-' or omitted.
stdin="$tmp/doc.json" run 0 "$store" canon -
expect_out "$tmp/doc.expected" "canon - (stdin)"
stdin="$tmp/doc.json" run 0 "$store" canon
expect_out "$tmp/doc.expected" "canon (stdin by default)"

# Canonical form is a fixed point.
cp "$tmp/doc.expected" "$tmp/doc.canonical.json"
run 0 "$store" canon "$tmp/doc.canonical.json"
expect_out "$tmp/doc.expected" "canon of canonical bytes"

# --- canon --lines: a JSONL stream -----------------------------------------------------------------
# The last line has no '\n' and still comes out terminated; CRLF line ends are whitespace.
printf '{"b":1, "a":2}\r\n[ 1.0 , "x" ]\n"\\u0041"' >"$tmp/three.jsonl"
printf '{"a":2,"b":1}\n[1,"x"]\n"A"\n' >"$tmp/three.expected"
run 0 "$store" canon --lines "$tmp/three.jsonl"
expect_out "$tmp/three.expected" "canon --lines of a 3-line stream"
stdin="$tmp/three.jsonl" run 0 "$store" canon --lines -
expect_out "$tmp/three.expected" "canon --lines from stdin"

# A stream several times the 1 MiB read buffer, so lines straddle chunk boundaries.
awk 'BEGIN { for (i = 0; i < 100000; i++) printf "{ \"b\": %d, \"a\": \"%s\" }\n", i, "pad-" i "-xxxxxxxxxxxxxxxx" }' \
  >"$tmp/big.jsonl"
awk 'BEGIN { for (i = 0; i < 100000; i++) printf "{\"a\":\"%s\",\"b\":%d}\n", "pad-" i "-xxxxxxxxxxxxxxxx", i }' \
  >"$tmp/big.expected"
[[ $(wc -c <"$tmp/big.jsonl") -gt $((3 << 20)) ]] || fail "big stream is too small to span chunks"
stdin="$tmp/big.jsonl" run 0 "$store" canon --lines
expect_out "$tmp/big.expected" "canon --lines of a multi-chunk stream"

# --- canon --lines: failures -------------------------------------------------------------------------
# Invalid JSON on line 2: exit 2, the diagnostic names line 2, and only line 1 was printed.
printf '{"b":1,"a":2}\n{"a": tru}\n{"c":3}\n' >"$tmp/bad2.jsonl"
run 2 "$store" canon --lines "$tmp/bad2.jsonl"
printf '{"a":2,"b":1}\n' >"$tmp/bad2.expected"
expect_out "$tmp/bad2.expected" "canon --lines prints exactly the lines before the invalid one"
grep -Eq "^mf-store: .*bad2\.jsonl:2:[0-9]+: error MF-S011" "$tmp/err" ||
  fail "line-2 error does not name line 2 and MF-S011: $(cat "$tmp/err")"

# An invalid line after more than one flush of output: everything before it, nothing after it.
cp "$tmp/big.jsonl" "$tmp/bad-late.jsonl"
printf '{"ok":true}\n[1,,2]\n{"after":1}\n' >>"$tmp/bad-late.jsonl"
run 2 "$store" canon --lines "$tmp/bad-late.jsonl"
cp "$tmp/big.expected" "$tmp/bad-late.expected"
printf '{"ok":true}\n' >>"$tmp/bad-late.expected"
expect_out "$tmp/bad-late.expected" "late failure: output is the exact prefix before the bad line"
grep -q ":100002:[0-9]*: error MF-S011" "$tmp/err" || fail "late failure line number: $(cat "$tmp/err")"

# Empty lines are not JSON documents.
printf '{"a":1}\n\n' >"$tmp/blank.jsonl"
run 2 "$store" canon --lines "$tmp/blank.jsonl"
grep -q ":2:[0-9]*: error MF-S011" "$tmp/err" || fail "blank line: $(cat "$tmp/err")"

# Duplicate keys are rejected (a deliberate deviation from RFC 8259), in documents and streams.
printf '{"a":1,"b":{"k":1,"k":2}}' >"$tmp/dup.json"
run 2 "$store" canon "$tmp/dup.json"
[[ ! -s $tmp/out ]] || fail "canon of an invalid document wrote to stdout"
grep -q "error MF-S006" "$tmp/err" || fail "duplicate key: $(cat "$tmp/err")"
printf '{"a":1}\n{"a":1,"a":1}\n' >"$tmp/dup.jsonl"
run 2 "$store" canon --lines "$tmp/dup.jsonl"
grep -Eq ":2:[0-9]+: error MF-S006" "$tmp/err" || fail "duplicate key on line 2: $(cat "$tmp/err")"

# Missing inputs are rejected requests.
for args in "canon" "canon --lines" "hash" "hash --json"; do
  # shellcheck disable=SC2086  # $args is deliberately split into words
  run 2 "$store" $args "$tmp/no-such-file.json"
  [[ ! -s $tmp/out ]] || fail "$args of a missing file wrote to stdout"
  grep -q "error MF-S013" "$tmp/err" || fail "$args of a missing file: $(cat "$tmp/err")"
done

# Failing to write the output is an I/O error.
if [[ -w /dev/full ]]; then
  rc=0
  "$store" canon "$tmp/doc.json" >/dev/full 2>"$tmp/err" || rc=$?
  [[ $rc -eq 3 ]] || fail "canon >/dev/full exited $rc, expected 3"
fi

# Options of one command are refused on the other.
run 2 "$store" canon --json "$tmp/doc.json"
run 2 "$store" hash --lines "$tmp/doc.json"
run 2 "$store" hash "$tmp/doc.json" "$tmp/doc.json"

# --- hash ----------------------------------------------------------------------------------------------
printf '{"a":1}' >"$tmp/a.json"
stdin="$tmp/a.json" run 0 "$store" hash -
[[ $(cat "$tmp/out") == "$(printf '{"a":1}' | sha)" ]] || fail "hash - differs from sha256sum"
[[ $(wc -l <"$tmp/out") -eq 1 ]] || fail "hash does not print exactly one line"

# Raw bytes: whitespace matters. With --json, only the canonical form does.
printf '{ "b":2, "a":1 }' >"$tmp/ba.json"
run 0 "$store" hash "$tmp/ba.json"
[[ $(cat "$tmp/out") == "$(sha "$tmp/ba.json")" ]] || fail "hash of raw bytes"
run 0 "$store" hash --json "$tmp/ba.json"
[[ $(cat "$tmp/out") == "$(printf '{"a":1,"b":2}' | sha)" ]] || fail "hash --json is not over the canonical bytes"
stdin="$tmp/ba.json" run 0 "$store" hash --json
[[ $(cat "$tmp/out") == "$(printf '{"a":1,"b":2}' | sha)" ]] || fail "hash --json from stdin"

# The digest of a document is over its canonical bytes without the trailing newline.
run 0 "$store" hash --json "$tmp/doc.json"
[[ $(cat "$tmp/out") == "$(head -c -1 "$tmp/doc.expected" | sha)" ]] || fail "hash --json vs canon"

run 2 "$store" hash --json "$tmp/dup.json"
grep -q "error MF-S006" "$tmp/err" || fail "hash --json of a duplicate key: $(cat "$tmp/err")"

# --- the Forge task fixture (docs/formats/task.md): its bytes are pinned --------------------------------------
pinned=fc4aa5898f737ba4c5a8cb7b2c2c380e1e133e2696b7915a5a3907332ca840f6
fixture="${MF_SOURCE_DIR:-.}/fixtures/forge/task-valid.json"
[[ $(sha "$fixture") == "$pinned" ]] || fail "fixtures/forge/task-valid.json is not byte-exact"
run 0 "$store" hash "$fixture"
[[ $(cat "$tmp/out") == "$pinned" ]] || fail "mf-store hash of the task fixture: $(cat "$tmp/out")"

echo "store_plumbing: ok"
