// Ed25519 against RFC 8032's first test vector, base64, and DSSE's pre-authentication encoding
// (the byte string every envelope signature covers).
#include <gtest/gtest.h>

#include "mf/audit/sign.hpp"
#include "mf/hash/base64.hpp"
#include "mf/hash/ed25519.hpp"
#include "mf/hash/sha256.hpp"

namespace {

using namespace mf;

std::string unhex(std::string_view hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

std::string hex(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 0xF]);
  }
  return out;
}

// RFC 8032 section 7.1, TEST 1 (the empty message).
constexpr std::string_view kSecret =
    "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
constexpr std::string_view kPublic =
    "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
constexpr std::string_view kSignature =
    "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
    "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b";

hash::Ed25519Private rfc_key() {
  hash::Ed25519Private key;
  const std::string seed = unhex(kSecret);
  std::copy(seed.begin(), seed.end(), key.seed.begin());
  return key;
}

TEST(Ed25519, Rfc8032Test1SignsTheEmptyMessage) {
  const hash::Ed25519Private key = rfc_key();
  const hash::Ed25519Public pub = hash::ed25519_public_of(key);
  EXPECT_EQ(hex(std::string_view(reinterpret_cast<const char*>(pub.key.data()), 32)), kPublic);
  const std::string sig = hash::ed25519_sign(key, "");
  EXPECT_EQ(hex(sig), kSignature);
  EXPECT_TRUE(hash::ed25519_verify(pub, "", sig));
  EXPECT_FALSE(hash::ed25519_verify(pub, "x", sig));
  std::string flipped = sig;
  flipped[0] ^= 1;
  EXPECT_FALSE(hash::ed25519_verify(pub, "", flipped));
  EXPECT_FALSE(hash::ed25519_verify(pub, "", sig.substr(1)));
}

TEST(Ed25519, PemRoundTripAndKeyId) {
  const hash::Ed25519Public pub = hash::ed25519_public_of(rfc_key());
  const std::string pem = hash::ed25519_public_pem(pub);
  hash::Ed25519Public back;
  std::string error;
  ASSERT_TRUE(hash::ed25519_public_from_pem(pem, back, error)) << error;
  EXPECT_EQ(back.key, pub.key);
  // SubjectPublicKeyInfo of an Ed25519 key: the fixed 12-byte prefix of RFC 8410, then the key.
  EXPECT_EQ(hash::ed25519_keyid(pub),
            hash::sha256_hex(unhex("302a300506032b6570032100") + unhex(kPublic)));
  hash::Ed25519Private none;
  EXPECT_FALSE(hash::ed25519_private_from_pem(pem, none, error));  // a public key signs nothing
  EXPECT_EQ(error, "not a PEM private key");
  EXPECT_FALSE(hash::ed25519_public_from_pem("garbage", back, error));
}

TEST(Base64, RoundTripsAndRefusesOtherCharacters) {
  for (std::string s : {"", "f", "fo", "foo", "foob", "fooba", "foobar"}) {
    std::string back;
    ASSERT_TRUE(hash::base64_decode_lenient(hash::base64_encode(s), back)) << s;
    EXPECT_EQ(back, s);
  }
  EXPECT_EQ(hash::base64_encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(hash::base64_encode("fo"), "Zm8=");
  std::string out;
  EXPECT_TRUE(hash::base64_decode_lenient("Zm8", out));  // unpadded
  EXPECT_EQ(out, "fo");
  EXPECT_TRUE(hash::base64_decode_lenient("-_8=", out));  // URL-safe alphabet
  EXPECT_EQ(out, "\xfb\xff");
  EXPECT_FALSE(hash::base64_decode_lenient("Zm8=Zm8=", out));  // data after padding
  EXPECT_FALSE(hash::base64_decode_lenient("Zm 8", out));
  EXPECT_FALSE(hash::base64_decode_lenient("Zm9", out));   // non-zero leftover bits
  EXPECT_FALSE(hash::base64_decode_lenient("Zh==", out));  // non-zero leftover bits
}

TEST(Dsse, PreAuthenticationEncoding) {
  // The DSSE spec's own example (protocol.md, "Test vectors").
  EXPECT_EQ(audit::pae("http://example.com/HelloWorld", "hello world"),
            "DSSEv1 29 http://example.com/HelloWorld 11 hello world");
  EXPECT_EQ(audit::pae("", ""), "DSSEv1 0  0 ");
  EXPECT_EQ(audit::pae(audit::kPayloadType, "{}"), "DSSEv1 28 application/vnd.in-toto+json 2 {}");
}

}  // namespace
