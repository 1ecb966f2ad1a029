#!/usr/bin/env bash
# mf-audit signing: the DSSE envelope (Ed25519 over an in-toto Statement) and the HMAC sidecar are
# written beside the report; `mf-audit verify` accepts them and names the check each tampering
# breaks; securesystemslib verifies our envelope and signs one that we verify.
set -euo pipefail
bin=$(cd "${MF_BIN:?}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# expect RC NEEDLE -- ARGS...: mf-audit ARGS exits RC and its stderr contains NEEDLE (is empty
# when NEEDLE is).
expect() {
  local want=$1 needle=$2 rc=0; shift 3
  "$bin/mf-audit" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  [ $rc -eq "$want" ] || fail "mf-audit $* exited $rc, not $want: $(cat "$tmp/err")"
  if [ -z "$needle" ]; then
    [ ! -s "$tmp/err" ] || fail "mf-audit $*: stderr: $(cat "$tmp/err")"
  else
    grep -qF -- "$needle" "$tmp/err" || fail "mf-audit $*: stderr lacks '$needle': $(cat "$tmp/err")"
  fi
  [ "$(wc -l <"$tmp/err")" -le 2 ] || fail "mf-audit $*: more than one diagnostic: $(cat "$tmp/err")"
}

openssl genpkey -algorithm ed25519 -out "$tmp/key.pem" 2>/dev/null
openssl pkey -in "$tmp/key.pem" -pubout -out "$tmp/pub.pem"
openssl genpkey -algorithm ed25519 -out "$tmp/other.pem" 2>/dev/null
openssl pkey -in "$tmp/other.pem" -pubout -out "$tmp/other.pub.pem"
export AUDIT_MAC=0123456789abcdef-shared-audit-key AUDIT_OTHER_MAC=another-shared-key-0123456
export AUDIT_PEM; AUDIT_PEM=$(cat "$tmp/key.pem")

# A key that is not an Ed25519 private key is refused before any work: exit 2, no files.
head -c 64 /dev/urandom | base64 >"$tmp/bad.pem"
mkdir "$tmp/bad" "$tmp/a" "$tmp/unsigned" "$tmp/e"
expect 2 "signing key: not a PEM private key" -- --fixtures fixtures --out-dir "$tmp/bad" -q \
  --sign-key "$tmp/bad.pem"
[ -z "$(ls -A "$tmp/bad")" ] || fail "a refused key left files"
# An encrypted key is refused, never prompted for; an RSA key is not an Ed25519 key.
openssl genpkey -algorithm ed25519 -aes256 -pass pass:secret -out "$tmp/enc.pem" 2>/dev/null
expect 2 "signing key: not a PEM private key" -- --fixtures fixtures --out-dir "$tmp/bad" -q \
  --sign-key "$tmp/enc.pem"
openssl genpkey -algorithm rsa -pkeyopt rsa_keygen_bits:1024 -out "$tmp/rsa.pem" 2>/dev/null
expect 2 "signing key: the private key is not an Ed25519 key" -- --fixtures fixtures \
  --out-dir "$tmp/bad" -q --sign-key "$tmp/rsa.pem"
[ -z "$(ls -A "$tmp/bad")" ] || fail "a refused key left files"

"$bin/mf-audit" --fixtures fixtures --out-dir "$tmp/a" -q --sign-key "$tmp/key.pem" \
  --mac-key-env AUDIT_MAC >"$tmp/a.json" 2>"$tmp/a.err" || fail "signed audit: $(cat "$tmp/a.err")"
report=$tmp/a/exit-report.json
cmp -s "$tmp/a.json" "$report" || fail "stdout differs from exit-report.json"
for f in exit-report.dsse.json exit-report.mac.json; do [ -s "$tmp/a/$f" ] || fail "no $f"; done
# The report is the unsigned run's report, byte for byte; the key never reaches any output.
"$bin/mf-audit" --fixtures fixtures --out-dir "$tmp/unsigned" -q >/dev/null || fail "unsigned audit"
cmp -s "$tmp/unsigned/exit-report.json" "$report" || fail "signing changed the report"
! grep -rqF -e "$AUDIT_MAC" -e "$(sed -n 2p "$tmp/key.pem")" "$tmp/a" "$tmp/a.json" "$tmp/a.err" ||
  fail "a key reached an output"
payload=$(jq -r .payload "$tmp/a/exit-report.dsse.json" | base64 -d)
jq -e --arg d "$(sha256sum <"$report" | cut -d' ' -f1)" '
  ._type == "https://in-toto.io/Statement/v1" and
  .predicateType == "https://millforge.dev/attestation/exit-report/v1" and
  .subject == [{name: "exit-report.json", digest: {sha256: $d}}] and
  (.predicate.receipts | length) == 18 and .predicate.passed and
  .predicate.receipts[8] == {capability: "compiled_harness", subject: "../harness/golden.yaml",
                             holds: true}' <<<"$payload" >/dev/null ||
  fail "statement: $payload"
keyid=$(openssl pkey -pubin -in "$tmp/pub.pem" -outform DER | sha256sum | cut -d' ' -f1)
jq -e --arg k "$keyid" '.payloadType == "application/vnd.in-toto+json" and
  .signatures[0].keyid == $k' "$tmp/a/exit-report.dsse.json" >/dev/null || fail "envelope keyid"
# The same key from the environment signs the same bytes (Ed25519 is deterministic).
"$bin/mf-audit" --fixtures fixtures --out-dir "$tmp/e" -q --sign-key-env AUDIT_PEM >/dev/null ||
  fail "--sign-key-env"
cmp -s "$tmp/a/exit-report.dsse.json" "$tmp/e/exit-report.dsse.json" || fail "env key differs"

# Verifies: exit 0 and one canonical summary line.
expect 0 "" -- verify "$report" --public-key "$tmp/pub.pem" --mac-key-env AUDIT_MAC
jq -e '.verified and .checks == {mac: "ok", report_digest: "ok", signature: "ok",
  subject_digest: "ok"}' "$tmp/out" >/dev/null || fail "summary: $(cat "$tmp/out")"
[ "$(wc -l <"$tmp/out")" -eq 1 ] || fail "summary is not one line"

# One report byte changed (a digest character): the report's digest and the subject's fail.
mkdir "$tmp/t"; cp "$tmp/a"/exit-report* "$tmp/t/"
sed -i 's/"task_sha256":"f/"task_sha256":"0/' "$tmp/t/exit-report.json"
cmp -s "$report" "$tmp/t/exit-report.json" && fail "tampering changed nothing"
expect 1 "does not verify: report digest, subject digest" -- verify "$tmp/t/exit-report.json" \
  --public-key "$tmp/pub.pem"
expect 1 "does not verify: report digest, MAC" -- verify "$tmp/t/exit-report.json" \
  --mac-key-env AUDIT_MAC
# The signature changed: signature.
jq -c '.signatures[0].sig |= (if startswith("A") then "B" else "A" end + .[1:])' \
  "$tmp/a/exit-report.dsse.json" >"$tmp/badsig.json"
expect 1 "does not verify: signature" -- verify "$report" --envelope "$tmp/badsig.json" \
  --public-key "$tmp/pub.pem"
# Another key, another MAC key.
expect 1 "does not verify: signature" -- verify "$report" --public-key "$tmp/other.pub.pem"
expect 1 "does not verify: MAC" -- verify "$report" --mac-key-env AUDIT_OTHER_MAC

# Malformed or missing inputs: exit 2 with a precise diagnostic.
jq -c '.payloadType = "text/plain"' "$tmp/a/exit-report.dsse.json" >"$tmp/type.json"
expect 2 "error MF-S020: payloadType is not application/vnd.in-toto+json (at /payloadType)" -- \
  verify "$report" --envelope "$tmp/type.json" --public-key "$tmp/pub.pem"
jq -c '.payload = "not base64!"' "$tmp/a/exit-report.dsse.json" >"$tmp/payload.json"
expect 2 "payload is not a base64 string (at /payload)" -- \
  verify "$report" --envelope "$tmp/payload.json" --public-key "$tmp/pub.pem"
head -c 40 "$tmp/a/exit-report.dsse.json" >"$tmp/cut.json"
expect 2 "MF-S011" -- verify "$report" --envelope "$tmp/cut.json" --public-key "$tmp/pub.pem"
expect 2 "MF-S013" -- verify "$report" --envelope "$tmp/none.json" --public-key "$tmp/pub.pem"
expect 2 "verify needs --public-key or --mac-key-env" -- verify "$report"
expect 2 "--envelope applies to 'verify' only" -- --envelope x
expect 2 "--sign-key does not apply to 'verify'" -- verify "$report" --sign-key "$tmp/key.pem"
expect 2 "unexpected argument" -- check "$report"
expect 2 "MF-S013" -- "$tmp/no-such-manifest.yaml"

# Interop with securesystemslib (Debian's python3-securesystemslib, its Ed25519 keys): it verifies
# our envelope, refuses the tampered signature, and signs an envelope over our report that we verify.
py=/usr/bin/python3
"$py" "$here/lib/dsse_sslib.py" verify "$tmp/key.pem" "$tmp/a/exit-report.dsse.json" "$report" \
  >/dev/null || fail "securesystemslib does not verify our envelope"
rc=0; "$py" "$here/lib/dsse_sslib.py" verify "$tmp/key.pem" "$tmp/badsig.json" "$report" \
  >/dev/null || rc=$?
[ $rc -eq 1 ] || fail "securesystemslib accepted a tampered signature ($rc)"
"$py" "$here/lib/dsse_sslib.py" sign "$tmp/key.pem" "$report" "$tmp/sslib.json" ||
  fail "securesystemslib signing"
expect 0 "" -- verify "$report" --envelope "$tmp/sslib.json" --public-key "$tmp/pub.pem"
expect 1 "does not verify: signature" -- verify "$report" --envelope "$tmp/sslib.json" \
  --public-key "$tmp/other.pub.pem"
echo "audit_sign: ok"
