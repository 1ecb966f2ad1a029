// SHA-256 over OpenSSL's EVP interface (uses the CPU's SHA extensions where present).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "mf/diag/diagnostic.hpp"

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
// An incremental hasher that hashes large inputs on a second thread, so that a caller which
// also reads the bytes (the trace verifier) overlaps the two. update() returns at once for a large
// input; the bytes must stay valid and unchanged until wait() or the next update(). Small inputs
// are hashed in the calling thread. The thread starts with the first large input and is joined by
// finish() or the destructor.
class BackgroundSha256 {
 public:
  BackgroundSha256();
  ~BackgroundSha256();
  BackgroundSha256(const BackgroundSha256&) = delete;
  BackgroundSha256& operator=(const BackgroundSha256&) = delete;

  void update(std::string_view bytes);
  void wait();  // until every byte handed to update() is hashed
  Digest finish();

 private:
  struct Worker;
  Sha256 sha_;
  std::unique_ptr<Worker> worker_;
};

Digest hmac_sha256(std::string_view key, std::string_view message);
// Compares in time independent of where the two differ (for MACs).
bool equal_constant_time(std::string_view a, std::string_view b);

// Streams a file (or stdin for "-") through SHA-256 without loading it whole.
Result<Digest> sha256_file(const std::string& path);

}  // namespace mf::hash
