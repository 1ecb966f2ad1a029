// Ed25519 of ed25519.hpp through OpenSSL's EVP_PKEY interface (one-shot
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

// The Ed25519 key `pem` holds (a private key, or with `private_key` false a public or private
// one); null with `error` set otherwise.
Pkey read_ed25519_pem(std::string_view pem, bool private_key, std::string& error) {
  Pkey key = read_pem(pem, private_key);
  if (!key) {
    error = private_key ? "not a PEM private key" : "not a PEM public or private key";
  } else if (EVP_PKEY_id(key.get()) != EVP_PKEY_ED25519) {
    error = private_key ? "the private key is not an Ed25519 key" : "the key is not an Ed25519 key";
    key.reset();
  }
  return key;
}

}  // namespace

namespace {

// The raw 32 bytes of the Ed25519 key in `pem`, its private seed or its public key.
bool raw_from_pem(std::string_view pem, bool private_key, std::uint8_t* out, std::string& error) {
  const Pkey key = read_ed25519_pem(pem, private_key, error);
  if (!key) return false;
  std::size_t len = 32;
  const auto raw = private_key ? EVP_PKEY_get_raw_private_key : EVP_PKEY_get_raw_public_key;
  if (raw(key.get(), out, &len) != 1 || len != 32) {
    error = private_key ? "the Ed25519 private key cannot be read"
                        : "the Ed25519 public key cannot be read";
    return false;
  }
  return true;
}

}  // namespace

bool ed25519_private_from_pem(std::string_view pem, Ed25519Private& out, std::string& error) {
  return raw_from_pem(pem, true, out.seed.data(), error);
}

bool ed25519_public_from_pem(std::string_view pem, Ed25519Public& out, std::string& error) {
  return raw_from_pem(pem, false, out.key.data(), error);
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

}  // namespace mf::hash
