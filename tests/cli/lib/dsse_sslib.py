"""DSSE over securesystemslib's Ed25519 (tests/cli/audit_sign.sh): an independent signer and
verifier for mf-audit's envelopes. securesystemslib 0.26 (Debian) has Ed25519 keys and signatures
but no DSSE module, so DSSE's pre-authentication encoding is written here from the DSSE spec.

  dsse_sslib.py verify KEY.pem ENVELOPE REPORT   exit 0 when it verifies, 1 otherwise
  dsse_sslib.py sign KEY.pem REPORT ENVELOPE     write an envelope for REPORT
"""
import base64
import hashlib
import json
import sys

from cryptography.hazmat.primitives import serialization
from securesystemslib import keys

PAYLOAD_TYPE = "application/vnd.in-toto+json"


def pae(payload_type: bytes, body: bytes) -> bytes:
    return b"DSSEv1 %d %s %d %s" % (len(payload_type), payload_type, len(body), body)


def sslib_key(pem_path: str) -> dict:
    private = serialization.load_pem_private_key(open(pem_path, "rb").read(), password=None)
    raw = serialization.Encoding.Raw
    public_hex = private.public_key().public_bytes(raw, serialization.PublicFormat.Raw).hex()
    private_hex = private.private_bytes(
        raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()).hex()
    key, _ = keys.format_metadata_to_key({
        "keytype": "ed25519", "scheme": "ed25519",
        "keyval": {"public": public_hex, "private": private_hex}})
    return key


def verify(key: dict, envelope_path: str, report_path: str) -> int:
    env = json.load(open(envelope_path))
    payload = base64.b64decode(env["payload"])
    signed = pae(env["payloadType"].encode(), payload)
    good = any(keys.verify_signature(
        key, {"keyid": key["keyid"], "sig": base64.b64decode(s["sig"]).hex()}, signed)
        for s in env["signatures"])
    statement = json.loads(payload)
    digest = hashlib.sha256(open(report_path, "rb").read()).hexdigest()
    subject = [s for s in statement["subject"] if s["name"] == "exit-report.json"]
    ok = (good and env["payloadType"] == PAYLOAD_TYPE
          and statement["_type"] == "https://in-toto.io/Statement/v1"
          and subject and subject[0]["digest"]["sha256"] == digest)
    print("sslib: signature %s, subject %s" % (good, bool(subject) and subject[0]["digest"]))
    return 0 if ok else 1


def sign(key: dict, report_path: str, envelope_path: str) -> int:
    report = open(report_path, "rb").read()
    statement = {
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [{"name": "exit-report.json",
                     "digest": {"sha256": hashlib.sha256(report).hexdigest()}}],
        "predicateType": "https://millforge.dev/attestation/exit-report/v1",
        "predicate": {"report_sha256": json.loads(report)["report_sha256"]},
    }
    payload = json.dumps(statement, indent=2).encode()  # not canonical: bytes are what is signed
    sig = keys.create_signature(key, pae(PAYLOAD_TYPE.encode(), payload))
    envelope = {
        "payload": base64.b64encode(payload).decode(),
        "payloadType": PAYLOAD_TYPE,
        "signatures": [{"keyid": sig["keyid"], "sig": base64.b64encode(bytes.fromhex(sig["sig"])).decode()}],
    }
    with open(envelope_path, "w") as f:
        json.dump(envelope, f)
    return 0


if __name__ == "__main__":
    mode, pem, a, b = sys.argv[1:5]
    sys.exit(verify(sslib_key(pem), a, b) if mode == "verify" else sign(sslib_key(pem), a, b))
