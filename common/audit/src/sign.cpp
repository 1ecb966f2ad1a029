// Signed exit reports of sign.hpp. The envelope signs a Statement that names the report's bytes by
// their SHA-256, so the report file stays exactly what mf-audit wrote and its own report_sha256
// keeps its meaning; the MAC sidecar covers the same bytes.
#include "mf/audit/sign.hpp"

#include <filesystem>

#include "mf/diag/codes.hpp"
#include "mf/hash/base64.hpp"
#include "mf/hash/ed25519.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"

namespace mf::audit {

namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxInput = 16u << 20;

json::Value statement(std::string_view report_bytes, const json::Value& report) {
  json::Value digest;
  digest.set("sha256", hash::sha256_hex(report_bytes));
  json::Value subject;
  subject.set("name", kReportName);
  subject.set("digest", std::move(digest));
  json::Value predicate;
  json::Array receipts;
  if (const json::Value* rs = report.find("receipts"); rs != nullptr && rs->is_array()) {
    for (const json::Value& r : rs->as_array()) {
      json::Value item;
      if (const json::Value* c = r.find("capability")) item.set("capability", *c);
      if (const json::Value* subject = r.find("subject")) item.set("subject", *subject);
      if (const json::Value* h = r.find("holds")) item.set("holds", *h);
      receipts.push_back(std::move(item));
    }
  }
  predicate.set("receipts", std::move(receipts));
  if (const json::Value* p = report.find("passed")) predicate.set("passed", *p);
  if (const json::Value* d = report.find("report_sha256")) predicate.set("report_sha256", *d);
  json::Value s;
  s.set("_type", kStatementType);
  s.set("subject", json::Array{std::move(subject)});
  s.set("predicateType", kPredicateType);
  s.set("predicate", std::move(predicate));
  return s;
}

diag::Diagnostic malformed(const std::string& source, const std::string& pointer,
                           const std::string& what) {
  diag::Diagnostic d = diag::error(diag::codes::kSchema, what, pointer);
  d.source = source;
  return d;
}

const std::string* string_member(const json::Value& v, std::string_view key) {
  const json::Value* m = v.find(key);
  return m != nullptr && m->is_string() ? &m->as_string() : nullptr;
}

// The report's own digest: the canonical digest of the report without its report_sha256 member.
Result<bool> report_digest_holds(const std::string& path, std::string_view bytes) {
  Result<json::Value> report = json::parse_object(bytes);
  if (!report) {
    diag::Diagnostics ds = report.take_diagnostics();
    for (auto& d : ds) d.source = path;
    return ds;
  }
  const std::string* claimed = string_member(*report, "report_sha256");
  if (claimed == nullptr) return malformed(path, "/report_sha256", "the report has no digest");
  json::Object rest;
  for (const json::Member& m : report->as_object()) {
    if (m.key != "report_sha256") rest.push_back(m);
  }
  return json::canonical_digest(json::Value(std::move(rest))) == *claimed;
}

struct Envelope {
  std::string payload_type;
  std::string payload;
  std::vector<std::string> sigs;
  std::string subject_sha256;
};

Result<Envelope> read_envelope(const std::string& path) {
  Result<std::string> bytes = io::read_input(path, kMaxInput);
  if (!bytes) return bytes.take_diagnostics();
  Result<json::Value> env = json::parse_object(*bytes);
  if (!env) {
    diag::Diagnostics ds = env.take_diagnostics();
    for (auto& d : ds) d.source = path;
    return ds;
  }
  Envelope e;
  const std::string* type = string_member(*env, "payloadType");
  if (type == nullptr || *type != kPayloadType) {
    return malformed(path, "/payloadType", std::string("payloadType is not ") + kPayloadType);
  }
  e.payload_type = *type;
  const std::string* payload = string_member(*env, "payload");
  if (payload == nullptr || !hash::base64_decode_lenient(*payload, e.payload)) {
    return malformed(path, "/payload", "payload is not a base64 string");
  }
  const json::Value* sigs = env->find("signatures");
  if (sigs == nullptr || !sigs->is_array() || sigs->as_array().empty()) {
    return malformed(path, "/signatures", "signatures is not a non-empty array");
  }
  for (std::size_t i = 0; i < sigs->as_array().size(); ++i) {
    const std::string* sig = string_member(sigs->as_array()[i], "sig");
    std::string raw;
    if (sig == nullptr || !hash::base64_decode_lenient(*sig, raw)) {
      return malformed(path, "/signatures/" + std::to_string(i) + "/sig",
                       "sig is not a base64 string");
    }
    e.sigs.push_back(std::move(raw));
  }
  Result<json::Value> st = json::parse_object(e.payload);
  if (!st) return malformed(path, "/payload", "the payload is not a strict JSON object");
  const std::string* st_type = string_member(*st, "_type");
  if (st_type == nullptr || *st_type != kStatementType) {
    return malformed(path, "/payload", std::string("the payload's _type is not ") + kStatementType);
  }
  const json::Value* subjects = st->find("subject");
  if (subjects != nullptr && subjects->is_array()) {
    for (const json::Value& s : subjects->as_array()) {
      const std::string* name = string_member(s, "name");
      const json::Value* digest = s.find("digest");
      const std::string* sha = digest != nullptr ? string_member(*digest, "sha256") : nullptr;
      if (name != nullptr && *name == kReportName && sha != nullptr) e.subject_sha256 = *sha;
    }
  }
  if (!hash::is_hex_digest(e.subject_sha256)) {
    return malformed(path, "/payload",
                     std::string("the Statement has no subject ") + kReportName + " with a sha256");
  }
  return e;
}

}  // namespace

std::string pae(std::string_view type, std::string_view body) {
  std::string out = "DSSEv1 " + std::to_string(type.size()) + " ";
  out.append(type);
  out += " " + std::to_string(body.size()) + " ";
  out.append(body);
  return out;
}

std::string signing_key_problem(std::string_view pem) {
  hash::Ed25519Private key;
  std::string error;
  return hash::ed25519_private_from_pem(pem, key, error) ? std::string() : error;
}

Status seal(const std::string& out_dir, std::string_view report_bytes, const json::Value& report,
            const Sealing& sealing) {
  const fs::path dir(out_dir);
  if (!sealing.mac_key.empty()) {
    json::Value mac;
    mac.set("algorithm", "hmac-sha256");
    mac.set("subject", kReportName);
    mac.set("hmac_sha256", hash::to_hex(hash::hmac_sha256(sealing.mac_key, report_bytes)));
    if (Status s = io::publish_atomic((dir / kMacName).string(), json::canonical_file(mac),
                                      io::Clobber::Replace);
        !s) {
      return s;
    }
  }
  if (!sealing.sign_key_pem.empty()) {
    hash::Ed25519Private key;
    std::string error;
    if (!hash::ed25519_private_from_pem(sealing.sign_key_pem, key, error)) {
      return diag::error(diag::codes::kUsage, "signing key: " + error);
    }
    const std::string payload = json::canonical(statement(report_bytes, report));
    json::Value sig;
    sig.set("keyid", hash::ed25519_keyid(hash::ed25519_public_of(key)));
    sig.set("sig", hash::base64_encode(hash::ed25519_sign(key, pae(kPayloadType, payload))));
    json::Value env;
    env.set("payloadType", kPayloadType);
    env.set("payload", hash::base64_encode(payload));
    env.set("signatures", json::Array{std::move(sig)});
    if (Status s = io::publish_atomic((dir / kEnvelopeName).string(), json::canonical_file(env),
                                      io::Clobber::Replace);
        !s) {
      return s;
    }
  }
  return {};
}

Result<Verification> verify(const VerifyRequest& req) {
  Result<std::string> report = io::read_input(req.report_path, kMaxInput);
  if (!report) return report.take_diagnostics();
  const fs::path dir = fs::path(req.report_path).parent_path();
  Verification v;
  json::Value checks;
  Result<bool> digest = report_digest_holds(req.report_path, *report);
  if (!digest) return digest.take_diagnostics();
  checks.set("report_digest", *digest ? "ok" : "failed");
  if (!*digest) v.failed.push_back("report digest");

  const std::string file_sha = hash::sha256_hex(*report);
  if (!req.public_key_pem.empty()) {
    hash::Ed25519Public key;
    std::string error;
    if (!hash::ed25519_public_from_pem(req.public_key_pem, key, error)) {
      return diag::error(diag::codes::kUsage, "--public-key: " + error);
    }
    const std::string env_path =
        req.envelope_path.empty() ? (dir / kEnvelopeName).string() : req.envelope_path;
    Result<Envelope> env = read_envelope(env_path);
    if (!env) return env.take_diagnostics();
    // Every signature is tried: the keyid is a hint that other signers compute their own way.
    const std::string signed_bytes = pae(env->payload_type, env->payload);
    bool good = false;
    for (const std::string& sig : env->sigs) {
      good = good || hash::ed25519_verify(key, signed_bytes, sig);
    }
    checks.set("signature", good ? "ok" : "failed");
    if (!good) v.failed.push_back("signature");
    const bool subject = env->subject_sha256 == file_sha;
    checks.set("subject_digest", subject ? "ok" : "failed");
    if (!subject) v.failed.push_back("subject digest");
    v.summary.set("keyid", hash::ed25519_keyid(key));
  }
  if (!req.mac_key.empty()) {
    const std::string mac_path = (dir / kMacName).string();
    Result<std::string> bytes = io::read_input(mac_path, kMaxInput);
    if (!bytes) return bytes.take_diagnostics();
    Result<json::Value> mac = json::parse_object(*bytes);
    const std::string* hex = mac ? string_member(*mac, "hmac_sha256") : nullptr;
    if (hex == nullptr || !hash::is_hex_digest(*hex)) {
      return malformed(mac_path, "/hmac_sha256", "the MAC sidecar has no hmac_sha256 digest");
    }
    const bool ok =
        hash::equal_constant_time(*hex, hash::to_hex(hash::hmac_sha256(req.mac_key, *report)));
    checks.set("mac", ok ? "ok" : "failed");
    if (!ok) v.failed.push_back("MAC");
  }
  v.summary.set("checks", std::move(checks));
  v.summary.set("report_file_sha256", file_sha);
  v.summary.set("verified", v.failed.empty());
  return v;
}

}  // namespace mf::audit
