#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "mf/hash/line_hasher.hpp"
#include "mf/hash/sha256.hpp"

namespace mf::hash {
namespace {

// Lines of every length around the block and padding boundaries (0..200 bytes, 55/56/63/64/119/
// 120 among them), longer ones, and a last line without '\n'.
std::string sample_stream() {
  std::mt19937 rng(7);
  std::string s;
  for (int len = 0; len <= 200; ++len) {
    for (int i = 0; i < len; ++i) s.push_back(static_cast<char>('a' + rng() % 26));
    s.push_back('\n');
  }
  for (int len : {1000, 4096, 70001}) {
    for (int i = 0; i < len; ++i) {
      const auto c = static_cast<char>(rng() % 255 + 1);
      s.push_back(c == '\n' ? 'x' : c);
    }
    s.push_back('\n');
  }
  s += "\n\n";
  s += std::string(77, 'z');  // not terminated: no digest of its own
  return s;
}

std::vector<Digest> expected_lines(std::string_view s) {
  std::vector<Digest> out;
  for (std::size_t nl; (nl = s.find('\n')) != std::string_view::npos; s.remove_prefix(nl + 1)) {
    out.push_back(sha256(s.substr(0, nl)));
  }
  return out;
}

TEST(LineHasher, StreamAndLineDigestsEqualOneShotSha256InAnyChunking) {
  const std::string s = sample_stream();
  const auto lines = expected_lines(s);
  for (bool sha_extensions : {true, false}) {
    for (std::size_t chunk : {std::size_t{1}, std::size_t{7}, std::size_t{63}, std::size_t{64},
                              std::size_t{65}, std::size_t{4096}, s.size()}) {
      SCOPED_TRACE(::testing::Message() << "extensions " << sha_extensions << ", chunk " << chunk);
      LineHasher h(sha_extensions);
      std::vector<Digest> got;
      for (std::size_t i = 0; i < s.size(); i += chunk) {
        std::vector<Digest> part;
        h.update(std::string_view(s).substr(i, chunk), part);
        got.insert(got.end(), part.begin(), part.end());
      }
      EXPECT_EQ(to_hex(h.finish()), sha256_hex(s));
      ASSERT_EQ(got.size(), lines.size());
      for (std::size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], lines[i]) << "line " << i;
    }
  }
}

TEST(LineHasher, StreamOnlyAfterLinesStillDigestsTheWholeStream) {
  const std::string s = sample_stream();
  for (bool sha_extensions : {true, false}) {
    LineHasher h(sha_extensions);
    std::vector<Digest> got;
    h.update(std::string_view(s).substr(0, 3001), got);
    h.update_stream(std::string_view(s).substr(3001, 5));
    h.update_stream(std::string_view(s).substr(3006));
    EXPECT_EQ(to_hex(h.finish()), sha256_hex(s));
    EXPECT_EQ(to_hex(LineHasher(sha_extensions).finish()), sha256_hex(""));
  }
}

}  // namespace
}  // namespace mf::hash
