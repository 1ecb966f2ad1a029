// Ed25519 signatures (RFC 8032) over OpenSSL, for signed reports: keys are
// read from PEM (PKCS#8 private keys as `openssl genpkey -algorithm ed25519` writes them, and
// SubjectPublicKeyInfo public keys) and kept as their raw 32-byte forms.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace mf::hash {

struct Ed25519Private {
  std::array<std::uint8_t, 32> seed{};  // the RFC 8032 private key
};
struct Ed25519Public {
  std::array<std::uint8_t, 32> key{};
};

// Reads a PEM key; false with a one-line `error` (never the key's bytes) when it is not one.
bool ed25519_private_from_pem(std::string_view pem, Ed25519Private& out, std::string& error);
// A public key's PEM, or a private key's (whose public half is taken).
bool ed25519_public_from_pem(std::string_view pem, Ed25519Public& out, std::string& error);

Ed25519Public ed25519_public_of(const Ed25519Private& key);
// The 64-byte signature of `message`.
std::string ed25519_sign(const Ed25519Private& key, std::string_view message);
bool ed25519_verify(const Ed25519Public& key, std::string_view message, std::string_view sig);
// The key's id: SHA-256 hex of its DER SubjectPublicKeyInfo (`openssl pkey -pubin -outform DER`).
std::string ed25519_keyid(const Ed25519Public& key);
std::string ed25519_public_pem(const Ed25519Public& key);

}  // namespace mf::hash
