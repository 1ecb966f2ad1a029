// cyberphone/json-canonicalization testdata (RFC 8785 reference cases) against the reader and the
// canonical writer (docs/json.md): input/<name>.json canonicalizes to output/<name>.json byte for
// byte, and to the bytes listed in outhex/<name>.txt.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz/tape_oracle.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"

namespace mf::json {
namespace {

namespace fs = std::filesystem;

const fs::path& testdata_dir() {
  static const fs::path dir = fs::path(MF_CONFORMANCE_DIR) / "json-canonicalization" / "testdata";
  return dir;
}

#define MF_REQUIRE_TESTDATA()                                                                   \
  do {                                                                                          \
    if (!fs::is_directory(testdata_dir()))                                                      \
      GTEST_SKIP() << "json-canonicalization testdata not found at " << testdata_dir().string() \
                   << " (expected ../shared/conformance/json-canonicalization); skipped";       \
  } while (0)

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << p.string();
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// outhex files list the bytes as two-digit hex tokens separated by spaces and newlines.
bool decode_hex(const std::string& text, std::string& out) {
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::size_t i = 0;
  while (i < text.size()) {
    if (std::isspace(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    if (i + 1 >= text.size()) return false;
    const int hi = nibble(text[i]);
    const int lo = nibble(text[i + 1]);
    if (hi < 0 || lo < 0) return false;
    if (i + 2 < text.size() && !std::isspace(static_cast<unsigned char>(text[i + 2]))) {
      return false;
    }
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return true;
}

const std::vector<std::string>& case_names() {
  static const std::vector<std::string> names = {"arrays",  "french", "structures",
                                                 "unicode", "values", "weird"};
  return names;
}

TEST(Rfc8785Testdata, HoldsExactlySixCases) {
  MF_REQUIRE_TESTDATA();
  for (const char* sub : {"input", "output", "outhex"}) {
    std::vector<std::string> stems;
    for (const auto& e : fs::directory_iterator(testdata_dir() / sub)) {
      if (e.is_regular_file()) stems.push_back(e.path().stem().string());
    }
    std::sort(stems.begin(), stems.end());
    EXPECT_EQ(stems, case_names()) << sub;
  }
}

class Rfc8785 : public ::testing::TestWithParam<std::string> {};

TEST_P(Rfc8785, CanonicalMatchesOutputAndOuthex) {
  MF_REQUIRE_TESTDATA();
  const std::string& name = GetParam();
  const std::string input = read_bytes(testdata_dir() / "input" / (name + ".json"));
  const std::string expected = read_bytes(testdata_dir() / "output" / (name + ".json"));
  const std::string hex = read_bytes(testdata_dir() / "outhex" / (name + ".txt"));
  ASSERT_FALSE(expected.empty());
  // The reference output files have no trailing newline: they are bare canonical bytes.
  ASSERT_NE(expected.back(), '\n') << "output/" << name << ".json unexpectedly ends with a newline";

  std::string from_hex;
  ASSERT_TRUE(decode_hex(hex, from_hex)) << "outhex/" << name << ".txt is not hex byte tokens";
  EXPECT_EQ(from_hex, expected) << "outhex and output disagree for " << name;

  const Result<Value> parsed = parse(input);
  ASSERT_TRUE(parsed.ok()) << name << ": " << parsed.diagnostics().front().message;
  const std::string got = canonical(*parsed);
  EXPECT_EQ(got, expected);
  EXPECT_EQ(got, from_hex);
  EXPECT_EQ(canonical_file(*parsed), expected + "\n");

  // Canonical output is a fixed point.
  const Result<Value> again = parse(expected);
  ASSERT_TRUE(again.ok()) << name;
  EXPECT_EQ(canonical(*again), expected);

  // The tree-less path writes the same bytes, reads the output as canonical and the input not,
  // and agrees with the strict reader throughout.
  Tape tape;
  std::string fast;
  ASSERT_TRUE(tape.canonicalize(input, {}, fast)) << name;
  EXPECT_EQ(fast, expected);
  EXPECT_TRUE(tape.read_canonical(expected)) << name;
  EXPECT_FALSE(tape.read_canonical(input)) << name;
  EXPECT_EQ(oracle::tape_disagreement(input, {}), "");
  EXPECT_EQ(oracle::tape_disagreement(expected, {}), "");
}

INSTANTIATE_TEST_SUITE_P(Testdata, Rfc8785, ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

// RFC 8785 §3.2.3 sorting example: member names ordered by UTF-16 code units.
TEST(Rfc8785Sorting, CompareUtf16OrdersTheRfcExample) {
  // Expected order; the keys as JSON escapes: "\r", "1", "</script>", "\u0080", "\u00f6",
  // "\u20ac", "\ud83d\ude00", "\ufb33".
  const std::vector<std::string> expected = {
      "\r",           "1", "</script>", "\xC2\x80", "\xC3\xB6", "\xE2\x82\xAC", "\xF0\x9F\x98\x80",
      "\xEF\xAC\xB3",
  };
  // The input order of the RFC example.
  std::vector<std::string> keys = {
      "\xE2\x82\xAC",     "\r",       "\xEF\xAC\xB3", "1",
      "\xF0\x9F\x98\x80", "\xC2\x80", "\xC3\xB6",     "</script>",
  };
  std::sort(keys.begin(), keys.end(),
            [](const std::string& a, const std::string& b) { return compare_utf16(a, b) < 0; });
  EXPECT_EQ(keys, expected);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(compare_utf16(expected[i], expected[i]), 0) << i;
    for (std::size_t j = i + 1; j < expected.size(); ++j) {
      EXPECT_LT(compare_utf16(expected[i], expected[j]), 0) << i << " vs " << j;
      EXPECT_GT(compare_utf16(expected[j], expected[i]), 0) << j << " vs " << i;
    }
  }
  // U+1F600 (surrogates D83D DE00) sorts before U+FB33 in UTF-16, though not in UTF-8 bytes.
  EXPECT_GT(std::string("\xF0\x9F\x98\x80").compare("\xEF\xAC\xB3"), 0);
  EXPECT_LT(compare_utf16("\xF0\x9F\x98\x80", "\xEF\xAC\xB3"), 0);
  // A prefix sorts first.
  EXPECT_LT(compare_utf16("1", "10"), 0);
  EXPECT_LT(compare_utf16("", "\r"), 0);
}

TEST(Rfc8785Sorting, WeirdOutputMembersAreInUtf16Order) {
  MF_REQUIRE_TESTDATA();
  const Result<Value> r = parse(read_bytes(testdata_dir() / "output" / "weird.json"));
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->is_object());
  const Object& members = r->as_object();
  ASSERT_EQ(members.size(), 9u);
  for (std::size_t i = 1; i < members.size(); ++i) {
    EXPECT_LT(compare_utf16(members[i - 1].key, members[i].key), 0) << "member " << i;
  }
}

}  // namespace
}  // namespace mf::json
