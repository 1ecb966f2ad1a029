#include "mf/json/jsonl.hpp"
#include "mf/store/plumbing.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <utility>

#include "mf/diag/codes.hpp"
#include "mf/hash/sha256.hpp"

namespace {

using mf::json::LineCanonicalizer;
namespace codes = mf::diag::codes;

// Feeds `input` in pieces of `piece` bytes, then finishes; returns the output so far and the
// status.
std::pair<std::string, mf::Status> canonicalize(std::string_view input, std::size_t piece,
                                                mf::json::ReadLimits limits = {}) {
  LineCanonicalizer lines(limits);
  std::string out;
  while (!input.empty()) {
    auto fed = lines.feed(input.substr(0, piece), out);
    if (!fed) return {out, std::move(fed)};
    input.remove_prefix(std::min(piece, input.size()));
  }
  return {out, lines.finish(out)};
}

TEST(LineCanonicalizer, SameOutputWhateverTheChunking) {
  const std::string input = "{\"b\":1, \"a\":[1.0,\"\\u00e9\"]}\r\n[ ]\n\"x\"";
  const std::string expected = "{\"a\":[1,\"\xc3\xa9\"],\"b\":1}\n[]\n\"x\"\n";
  for (std::size_t piece : {1u, 2u, 3u, 7u, 1000u}) {
    auto [out, status] = canonicalize(input, piece);
    EXPECT_TRUE(status.ok()) << "piece " << piece;
    EXPECT_EQ(out, expected) << "piece " << piece;
  }
}

TEST(LineCanonicalizer, EmptyStreamIsEmptyOutput) {
  auto [out, status] = canonicalize("", 4);
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(out, "");
}

TEST(LineCanonicalizer, StopsAtFirstInvalidLineWithItsNumber) {
  for (std::size_t piece : {1u, 5u, 100u}) {
    auto [out, status] = canonicalize("{\"a\":1}\n[2]\n{\"a\":\n[3]\n", piece);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(out, "{\"a\":1}\n[2]\n") << "piece " << piece;
    EXPECT_EQ(status.diagnostics().front().code, codes::kMalformed);
    EXPECT_EQ(status.diagnostics().front().line, 3);
  }
}

TEST(LineCanonicalizer, EmptyLineIsMalformed) {
  auto [out, status] = canonicalize("1\n\n2\n", 3);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(out, "1\n");
  EXPECT_EQ(status.diagnostics().front().line, 2);
}

TEST(LineCanonicalizer, DuplicateKeyOnALaterLine) {
  auto [out, status] = canonicalize("{}\n{\"k\":1,\"k\":2}\n", 4);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.diagnostics().front().code, codes::kDuplicateKey);
  EXPECT_EQ(status.diagnostics().front().line, 2);
}

TEST(LineCanonicalizer, UnterminatedLineOverTheLimitIsRefusedBeforeBuffering) {
  mf::json::ReadLimits limits;
  limits.max_bytes = 16;
  auto [out, status] = canonicalize("[1]\n\"" + std::string(40, 'x'), 8, limits);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(out, "[1]\n");
  EXPECT_EQ(status.diagnostics().front().code, codes::kTooLarge);
  EXPECT_EQ(status.diagnostics().front().line, 2);
}

// hash_input streams the raw bytes a chunk at a time (3 MiB is three chunks), and says which
// inputs it cannot read.
TEST(HashInput, StreamsFilesAndReportsMissingOnes) {
  const std::string path = testing::TempDir() + "/mf_hash_input_file";
  std::string data(3u << 20, 'a');
  data[12345] = 'b';
  std::ofstream(path, std::ios::binary) << data;
  auto r = mf::store::hash_input(path);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, mf::hash::sha256_hex(data));
  std::remove(path.c_str());
  auto missing = mf::store::hash_input(path);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.diagnostics()[0].code, codes::kMissing);
  EXPECT_EQ(missing.diagnostics()[0].message.rfind("cannot open " + path + ": ", 0), 0u);
  auto dir = mf::store::hash_input(testing::TempDir());
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.diagnostics()[0].code, codes::kNotRegularFile);
  EXPECT_EQ(dir.diagnostics()[0].message.rfind("cannot read " + testing::TempDir() + ": ", 0), 0u);
}

}  // namespace
