// SHA-256 and HMAC-SHA-256 through OpenSSL EVP (sha256.hpp), with an incremental hasher for
// inputs streamed by the caller.
#include "mf/hash/sha256.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <array>
#include <cstdint>
#include <stdexcept>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

namespace {

#if defined(__SSE2__)
// 16 hex characters: their values in `values`, and a bit set for each that is a lowercase hex
// digit (bytes >= 0x80 are negative as signed bytes, below '0').
int hex16(const unsigned char* p, __m128i& values) {
  const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(x, _mm_set1_epi8('0' - 1)),
                                      _mm_cmpgt_epi8(_mm_set1_epi8('9' + 1), x));
  const __m128i lower = _mm_and_si128(_mm_cmpgt_epi8(x, _mm_set1_epi8('a' - 1)),
                                      _mm_cmpgt_epi8(_mm_set1_epi8('f' + 1), x));
  values = _mm_sub_epi8(_mm_sub_epi8(x, _mm_set1_epi8('0')),
                        _mm_and_si128(lower, _mm_set1_epi8('a' - '0' - 10)));
  return _mm_movemask_epi8(_mm_or_si128(digit, lower));
}

// The byte each pair of digit values (high nibble first) stands for, in the low half of each
// 16-bit lane.
__m128i nibble_pairs(__m128i values) {
  return _mm_or_si128(_mm_slli_epi16(_mm_and_si128(values, _mm_set1_epi16(0x00FF)), 4),
                      _mm_srli_epi16(values, 8));
}
#else
// The value of each lowercase hex digit, 0xFF for every other byte: one load per character where
// the comparisons cost a branch each (the verifier parses a digest on every trace line).
constexpr std::array<std::uint8_t, 256> kNibble = [] {
  std::array<std::uint8_t, 256> t{};
  t.fill(0xFF);
  for (int c = '0'; c <= '9'; ++c)
    t[static_cast<std::size_t>(c)] = static_cast<std::uint8_t>(c - '0');
  for (int c = 'a'; c <= 'f'; ++c)
    t[static_cast<std::size_t>(c)] = static_cast<std::uint8_t>(c - 'a' + 10);
  return t;
}();
#endif

}  // namespace

// 16 characters at a time with SSE2 (the verifier reads a digest or two on every trace line); one
// table load per character elsewhere.
bool is_hex_digest(std::string_view hex) {
  if (hex.size() != 64) return false;
#if defined(__SSE2__)
  const auto* p = reinterpret_cast<const unsigned char*>(hex.data());
  __m128i v;
  return (hex16(p, v) & hex16(p + 16, v) & hex16(p + 32, v) & hex16(p + 48, v)) == 0xFFFF;
#else
  unsigned bad = 0;
  for (const char c : hex) bad |= kNibble[static_cast<unsigned char>(c)];
  return (bad & 0xF0) == 0;
#endif
}

bool from_hex(std::string_view hex, Digest& out) {
  if (hex.size() != 64) return false;
  const auto* p = reinterpret_cast<const unsigned char*>(hex.data());
#if defined(__SSE2__)
  __m128i v[4];
  const int digits =
      hex16(p, v[0]) & hex16(p + 16, v[1]) & hex16(p + 32, v[2]) & hex16(p + 48, v[3]);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out.data()),
                   _mm_packus_epi16(nibble_pairs(v[0]), nibble_pairs(v[1])));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out.data() + 16),
                   _mm_packus_epi16(nibble_pairs(v[2]), nibble_pairs(v[3])));
  return digits == 0xFFFF;
#else
  unsigned bad = 0;  // any 0xFF lookup sets the high bit; checked once, after the loop
  for (std::size_t i = 0; i < 32; ++i) {
    const unsigned hi = kNibble[p[2 * i]], lo = kNibble[p[2 * i + 1]];
    bad |= hi | lo;
    out[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  return (bad & 0xF0) == 0;
#endif
}

}  // namespace mf::hash
