// Signed exit reports (docs/audit.md, "Signing"): an Ed25519 signature over an in-toto Statement
// about exit-report.json, inside a DSSE envelope, and an HMAC-SHA256 of the report's bytes under a
// shared key; and the offline check of both (`mf-audit verify`).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"

namespace mf::audit {

inline constexpr const char* kReportName = "exit-report.json";
inline constexpr const char* kEnvelopeName = "exit-report.dsse.json";  // DSSE, Ed25519
inline constexpr const char* kMacName = "exit-report.mac.json";        // HMAC-SHA256 sidecar
inline constexpr const char* kPayloadType = "application/vnd.in-toto+json";
inline constexpr const char* kStatementType = "https://in-toto.io/Statement/v1";
inline constexpr const char* kPredicateType = "https://millforge.dev/attestation/exit-report/v1";

// DSSE's pre-authentication encoding: "DSSEv1" SP len(type) SP type SP len(body) SP body, the
// lengths in ASCII decimal. This, not the payload, is what a DSSE signature signs.
std::string pae(std::string_view type, std::string_view body);

// Whether `pem` is an Ed25519 private key; else the one-line reason (never the key's bytes).
std::string signing_key_problem(std::string_view pem);

struct Sealing {
  std::string sign_key_pem{};  // PKCS#8 Ed25519 private key; empty: no envelope
  std::string mac_key{};       // empty: no MAC sidecar
};

// Writes DIR/exit-report.mac.json and DIR/exit-report.dsse.json (each atomically, each only when
// its key is given) for the report whose file holds `report_bytes`.
Status seal(const std::string& out_dir, std::string_view report_bytes, const json::Value& report,
            const Sealing& sealing);

struct VerifyRequest {
  std::string report_path{};
  std::string envelope_path{};   // empty: REPORT's sibling exit-report.dsse.json
  std::string public_key_pem{};  // empty: the signature is not checked
  std::string mac_key{};         // empty: the MAC is not checked
};

struct Verification {
  json::Value summary;              // one canonical line for stdout
  std::vector<std::string> failed;  // the checks that failed, in order; empty: verified
};

// Fails (exit 2) when an input is unreadable or malformed; a check that does not hold is a
// Verification with `failed` set.
Result<Verification> verify(const VerifyRequest& request);

}  // namespace mf::audit
