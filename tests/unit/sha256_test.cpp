#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "mf/hash/sha256.hpp"

namespace mf::hash {
namespace {

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, IncrementalEqualsOneShot) {
  std::string data(1000003, 'x');
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 131 % 251);
  Sha256 h;
  for (std::size_t i = 0; i < data.size(); i += 4099)
    h.update(std::string_view(data).substr(i, 4099));
  EXPECT_EQ(to_hex(h.finish()), sha256_hex(data));
}

TEST(Sha256, HexRoundTripAndRejects) {
  const Digest d = sha256("abc");
  Digest back{};
  ASSERT_TRUE(from_hex(to_hex(d), back));
  EXPECT_EQ(back, d);
  EXPECT_FALSE(from_hex("abc", back));
  EXPECT_FALSE(from_hex(std::string(64, 'G'), back));
  EXPECT_FALSE(from_hex(std::string(64, 'A'), back));  // digests are lowercase
}

TEST(Sha256, FromHexTakesExactlyTheLowercaseDigitsAtEveryPosition) {
  const Digest abc = sha256("abc");
  const std::string hex = to_hex(abc);
  for (std::size_t at = 0; at < 64; ++at) {
    for (int b = 0; b < 256; ++b) {
      std::string s = hex;
      s[at] = static_cast<char>(b);
      const bool digit = (b >= '0' && b <= '9') || (b >= 'a' && b <= 'f');
      Digest d{};
      ASSERT_EQ(from_hex(s, d), digit) << "byte " << b << " at " << at;
      ASSERT_EQ(is_hex_digest(s), digit) << "byte " << b << " at " << at;
      if (!digit) continue;
      // The digit's value lands in its nibble, and nothing else changes.
      const unsigned value =
          b <= '9' ? static_cast<unsigned>(b - '0') : static_cast<unsigned>(b - 'a' + 10);
      Digest want = abc;
      const unsigned shift = at % 2 == 0 ? 4 : 0;
      want[at / 2] = static_cast<std::uint8_t>((want[at / 2] & ~(0xFu << shift)) | value << shift);
      ASSERT_EQ(d, want) << "byte " << b << " at " << at;
    }
  }
  Digest d{};
  for (const int n : {0, 1, 62, 63, 65, 66, 128}) {
    EXPECT_FALSE(from_hex(std::string(static_cast<std::size_t>(n), 'a'), d)) << n << " characters";
  }
  EXPECT_FALSE(from_hex(hex + "0", d));
  EXPECT_FALSE(is_hex_digest(hex + "0"));
  EXPECT_FALSE(is_hex_digest(hex.substr(1)));
  EXPECT_FALSE(from_hex(std::string(64, '\0'), d));
  EXPECT_FALSE(from_hex(std::string(64, '\xFF'), d));
  EXPECT_FALSE(from_hex(std::string(64, static_cast<char>('0' | 0x80)), d));
  ASSERT_TRUE(from_hex(std::string(64, 'f'), d));
  Digest ones{};
  ones.fill(0xFF);
  EXPECT_EQ(d, ones);
}

}  // namespace
}  // namespace mf::hash

namespace mf::hash {
namespace {

// RFC 4231 test cases 1, 2 and 6 (a key longer than the block size).
TEST(HmacSha256, Rfc4231Vectors) {
  EXPECT_EQ(to_hex(hmac_sha256(std::string(20, '\x0b'), "Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(to_hex(hmac_sha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(to_hex(hmac_sha256(std::string(131, '\xaa'),
                               "Test Using Larger Than Block-Size Key - Hash Key First")),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST(HmacSha256, ConstantTimeEquality) {
  EXPECT_TRUE(equal_constant_time("abc", "abc"));
  EXPECT_FALSE(equal_constant_time("abc", "abd"));
  EXPECT_FALSE(equal_constant_time("abc", "ab"));
  EXPECT_TRUE(equal_constant_time("", ""));
}

TEST(Sha256, FinishAndRestartDigestsEachMessageOnItsOwn) {
  Sha256 h;
  h.update("ab");
  h.update("c");
  EXPECT_EQ(to_hex(h.finish_and_restart()), sha256_hex("abc"));
  EXPECT_EQ(to_hex(h.finish_and_restart()), sha256_hex(""));
  h.update("line two");
  EXPECT_EQ(to_hex(h.finish()), sha256_hex("line two"));
}

}  // namespace
}  // namespace mf::hash
