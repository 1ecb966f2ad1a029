// SHA-256 over OpenSSL's EVP interface (uses the CPU's SHA extensions where present).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace mf::hash {

using Digest = std::array<std::uint8_t, 32>;

// Incremental hasher: update() any number of times, then finish() once.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(std::string_view bytes);
  void update(const void* data, std::size_t size);
  Digest finish();
  // finish(), then ready for another message (one hasher for many short ones).
  Digest finish_and_restart();

 private:
  void* ctx_;  // EVP_MD_CTX, kept opaque so OpenSSL stays inside this module
};

Digest sha256(std::string_view bytes);
std::string sha256_hex(std::string_view bytes);
std::string to_hex(const Digest& d);
// Parses 64 lowercase hex characters; false otherwise.
bool from_hex(std::string_view hex, Digest& out);
// Whether `hex` is a digest's form: 64 lowercase hex characters.
bool is_hex_digest(std::string_view hex);

// HMAC-SHA256 (RFC 2104) of `message` under `key`.
Digest hmac_sha256(std::string_view key, std::string_view message);
// Compares in time independent of where the two differ (for MACs).
bool equal_constant_time(std::string_view a, std::string_view b);

}  // namespace mf::hash
