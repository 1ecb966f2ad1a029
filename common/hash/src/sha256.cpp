// SHA-256 and HMAC-SHA-256 through OpenSSL EVP (sha256.hpp), with an incremental hasher for
// inputs streamed by the caller.
#include "mf/hash/sha256.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <stdexcept>

namespace mf::hash {

namespace {
EVP_MD_CTX* ctx_of(void* p) {
  return static_cast<EVP_MD_CTX*>(p);
}

// The SHA-256 implementation, fetched once: OpenSSL 3 otherwise looks it up in its provider
// tables (under a lock) on every EVP_DigestInit_ex, which costs more than hashing a trace line.
const EVP_MD* sha256_md() {
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
  static EVP_MD* const md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  return md != nullptr ? md : EVP_sha256();
#else
  return EVP_sha256();
#endif
}
}  // namespace

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (ctx_ == nullptr || EVP_DigestInit_ex(ctx_of(ctx_), sha256_md(), nullptr) != 1) {
    throw std::runtime_error("OpenSSL SHA-256 initialisation failed");
  }
}

Sha256::~Sha256() {
  EVP_MD_CTX_free(ctx_of(ctx_));
}

void Sha256::update(const void* data, std::size_t size) {
  EVP_DigestUpdate(ctx_of(ctx_), data, size);
}

void Sha256::update(std::string_view bytes) {
  update(bytes.data(), bytes.size());
}

Digest Sha256::finish() {
  Digest d{};
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx_of(ctx_), d.data(), &len);
  return d;
}

Digest Sha256::finish_and_restart() {
  const Digest d = finish();
  EVP_DigestInit_ex(ctx_of(ctx_), nullptr, nullptr);  // the same digest, a new message
  return d;
}

Digest sha256(std::string_view bytes) {
  Sha256 h;
  h.update(bytes);
  return h.finish();
}

Digest hmac_sha256(std::string_view key, std::string_view message) {
  Digest d{};
  unsigned int len = 0;
  static const unsigned char kEmpty = 0;
  const auto* k = key.empty() ? &kEmpty : reinterpret_cast<const unsigned char*>(key.data());
  const auto* m =
      message.empty() ? &kEmpty : reinterpret_cast<const unsigned char*>(message.data());
  if (HMAC(sha256_md(), k, static_cast<int>(key.size()), m, message.size(), d.data(), &len) ==
      nullptr) {
    throw std::runtime_error("OpenSSL HMAC-SHA256 failed");
  }
  return d;
}

bool equal_constant_time(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string to_hex(const Digest& d) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(64, '0');
  for (std::size_t i = 0; i < d.size(); ++i) {
    out[2 * i] = kHex[d[i] >> 4];
    out[2 * i + 1] = kHex[d[i] & 0xF];
  }
  return out;
}

std::string sha256_hex(std::string_view bytes) {
  return to_hex(sha256(bytes));
}

bool is_hex_digest(std::string_view hex) {
  return hex.size() == 64 && std::all_of(hex.begin(), hex.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

bool from_hex(std::string_view hex, Digest& out) {
  if (hex.size() != 64) return false;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  for (std::size_t i = 0; i < 32; ++i) {
    const int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  return true;
}

}  // namespace mf::hash
