// Ed25519 and base64 of ed25519.hpp through OpenSSL's EVP_PKEY interface (one-shot
// EVP_DigestSign, as Ed25519 hashes the message itself).
#include "mf/hash/ed25519.hpp"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <memory>
#include <stdexcept>

#include "mf/hash/sha256.hpp"

namespace mf::hash {

namespace {

struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;

const unsigned char* bytes_of(std::string_view s) {
  static const unsigned char kEmpty = 0;
  return s.empty() ? &kEmpty : reinterpret_cast<const unsigned char*>(s.data());
}

// An encrypted key is refused rather than prompted for: OpenSSL's default callback reads a
// passphrase from the terminal.
extern "C" int no_passphrase(char*, int, int, void*) {
  return 0;
}

// The first PEM block of `pem` as a key: a private key when `want_private`, else a public key or
// the public half of a private one.
Pkey read_pem(std::string_view pem, bool want_private) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
  if (!bio) throw std::runtime_error("OpenSSL BIO allocation failed");
  Pkey key(PEM_read_bio_PrivateKey(bio.get(), nullptr, no_passphrase, nullptr));
  if (!key && !want_private) {
    BIO_reset(bio.get());
    key.reset(PEM_read_bio_PUBKEY(bio.get(), nullptr, no_passphrase, nullptr));
  }
  ERR_clear_error();  // a refused key leaves nothing behind in the thread's error queue
  return key;
}

Pkey public_pkey(const Ed25519Public& key) {
  Pkey p(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, key.key.data(), key.key.size()));
  if (!p) throw std::runtime_error("OpenSSL Ed25519 public key failed");
  return p;
}

}  // namespace

bool ed25519_private_from_pem(std::string_view pem, Ed25519Private& out, std::string& error) {
  Pkey key = read_pem(pem, true);
  if (!key) {
    error = "not a PEM private key";
    return false;
  }
  if (EVP_PKEY_id(key.get()) != EVP_PKEY_ED25519) {
    error = "the private key is not an Ed25519 key";
    return false;
  }
  std::size_t len = out.seed.size();
  if (EVP_PKEY_get_raw_private_key(key.get(), out.seed.data(), &len) != 1 || len != 32) {
    error = "the Ed25519 private key cannot be read";
    return false;
  }
  return true;
}

bool ed25519_public_from_pem(std::string_view pem, Ed25519Public& out, std::string& error) {
  Pkey key = read_pem(pem, false);
  if (!key) {
    error = "not a PEM public or private key";
    return false;
  }
  if (EVP_PKEY_id(key.get()) != EVP_PKEY_ED25519) {
    error = "the key is not an Ed25519 key";
    return false;
  }
  std::size_t len = out.key.size();
  if (EVP_PKEY_get_raw_public_key(key.get(), out.key.data(), &len) != 1 || len != 32) {
    error = "the Ed25519 public key cannot be read";
    return false;
  }
  return true;
}

Ed25519Public ed25519_public_of(const Ed25519Private& key) {
  Pkey p(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, key.seed.data(), key.seed.size()));
  Ed25519Public out;
  std::size_t len = out.key.size();
  if (!p || EVP_PKEY_get_raw_public_key(p.get(), out.key.data(), &len) != 1) {
    throw std::runtime_error("OpenSSL Ed25519 public key derivation failed");
  }
  return out;
}

std::string ed25519_sign(const Ed25519Private& key, std::string_view message) {
  Pkey p(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, key.seed.data(), key.seed.size()));
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  std::string sig(64, '\0');
  std::size_t len = sig.size();
  if (!p || !ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, p.get()) != 1 ||
      EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len,
                     bytes_of(message), message.size()) != 1 ||
      len != 64) {
    throw std::runtime_error("OpenSSL Ed25519 signing failed");
  }
  return sig;
}

bool ed25519_verify(const Ed25519Public& key, std::string_view message, std::string_view sig) {
  if (sig.size() != 64) return false;
  Pkey p = public_pkey(key);
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (!ctx || EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, p.get()) != 1) {
    throw std::runtime_error("OpenSSL Ed25519 verification failed to start");
  }
  return EVP_DigestVerify(ctx.get(), bytes_of(sig), sig.size(), bytes_of(message),
                          message.size()) == 1;
}

std::string ed25519_keyid(const Ed25519Public& key) {
  Pkey p = public_pkey(key);
  unsigned char* der = nullptr;
  const int len = i2d_PUBKEY(p.get(), &der);
  if (len <= 0) throw std::runtime_error("OpenSSL SubjectPublicKeyInfo encoding failed");
  std::string hex = sha256_hex(std::string_view(reinterpret_cast<char*>(der), len));
  OPENSSL_free(der);
  return hex;
}

std::string ed25519_public_pem(const Ed25519Public& key) {
  Pkey p = public_pkey(key);
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), &BIO_free);
  if (!bio || PEM_write_bio_PUBKEY(bio.get(), p.get()) != 1) {
    throw std::runtime_error("OpenSSL PEM encoding failed");
  }
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(len));
}

std::string base64_encode(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes_of(bytes),
                                static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

bool base64_decode(std::string_view text, std::string& out) {
  // Decoded by hand: EVP_DecodeBlock accepts whitespace and does not say how much padding it read.
  out.clear();
  std::uint32_t acc = 0;
  int bits = 0;
  std::size_t pad = 0;
  for (char c : text) {
    int v;
    if (c >= 'A' && c <= 'Z')
      v = c - 'A';
    else if (c >= 'a' && c <= 'z')
      v = c - 'a' + 26;
    else if (c >= '0' && c <= '9')
      v = c - '0' + 52;
    else if (c == '+' || c == '-')
      v = 62;
    else if (c == '/' || c == '_')
      v = 63;
    else if (c == '=') {
      ++pad;
      continue;
    } else
      return false;
    if (pad != 0) return false;  // data after padding
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  // Leftover bits must be zero padding of a valid length (2 or 4 bits), padding at most 2.
  if (bits >= 6 || pad > 2 || (acc & ((1u << bits) - 1)) != 0) return false;
  if (pad != 0 && (text.size() % 4) != 0) return false;
  return true;
}

}  // namespace mf::hash
