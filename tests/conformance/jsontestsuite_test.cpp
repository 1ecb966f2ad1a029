// JSONTestSuite (nst/JSONTestSuite, test_parsing/) run against the strict reader (docs/json.md).
// n_ files must be rejected, y_ files accepted (except the duplicate-key deviation), and every i_
// file has a pinned outcome below; docs/json.md explains each one. The tree-less fast path is held
// to the same verdicts on every file, and so is every file read in windows.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "fuzz/tape_oracle.hpp"
#include "mf/json/reader.hpp"
#include "suite.hpp"
#include "unit/json_windows.hpp"

namespace mf::json {
namespace {

using namespace mf::conformance;

namespace fs = std::filesystem;

const fs::path& suite_dir() {
  static const fs::path dir = fs::path(MF_CONFORMANCE_DIR) / "JSONTestSuite" / "test_parsing";
  return dir;
}

#define MF_REQUIRE_SUITE()                          \
  MF_REQUIRE_SUITE_AT(suite_dir(), "JSONTestSuite", \
                      "expected ../shared/conformance/JSONTestSuite/test_parsing")

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

struct Case {
  std::string file;  // e.g. "n_number_1.0e+.json"
  std::string name;  // gtest-safe: [A-Za-z0-9_] only, unique
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.file;
}

std::string sanitize(std::string_view file) {
  if (file.ends_with(".json")) file.remove_suffix(5);
  std::string out;
  for (char ch : file) {
    const bool alnum =
        (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
    if (alnum || ch == '_') {
      out += ch;
    } else if (ch == '+') {
      out += "plus";
    } else if (ch == '#') {
      out += "hash";
    } else {
      out += '_';
    }
  }
  return out;
}

std::vector<std::string> sorted_files() {
  std::vector<std::string> files;
  if (!fs::is_directory(suite_dir())) return files;
  for (const auto& entry : fs::directory_iterator(suite_dir())) {
    if (entry.is_regular_file()) files.push_back(entry.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  std::set<std::string> used;
  for (const std::string& f : sorted_files()) {
    std::string name = sanitize(f);
    // Names that still collide after sanitizing get a numeric suffix.
    for (int i = 2; used.contains(name); ++i) name = sanitize(f) + "_" + std::to_string(i);
    used.insert(name);
    out.push_back(Case{f, name});
  }
  return out;
}

struct Pinned {
  const char* outcome;  // kAccept or the expected diagnostic code
  const char* reason;
};

// Every i_ file's outcome. Keep in step with the table in docs/json.md.
const std::map<std::string, Pinned>& pinned() {
  static const std::map<std::string, Pinned> table = {
      // Numbers: out of the double range -> MF-S011; finite but inexact -> accepted.
      {"i_number_double_huge_neg_exp.json", {"MF-S011", "123.456e-789 underflows to zero"}},
      {"i_number_huge_exp.json", {"MF-S011", "0.4e0066999...969 overflows a double"}},
      {"i_number_neg_int_huge_exp.json", {"MF-S011", "-1e+9999 overflows a double"}},
      {"i_number_pos_double_huge_exp.json", {"MF-S011", "1.5e+9999 overflows a double"}},
      {"i_number_real_neg_overflow.json", {"MF-S011", "-123123e100000 overflows a double"}},
      {"i_number_real_pos_overflow.json", {"MF-S011", "123123e100000 overflows a double"}},
      {"i_number_real_underflow.json", {"MF-S011", "123e-10000000 underflows to zero"}},
      {"i_number_too_big_neg_int.json", {kAccept, "30-digit integer is a finite double"}},
      {"i_number_too_big_pos_int.json", {kAccept, "1e20 is a finite double"}},
      {"i_number_very_big_negative_int.json", {kAccept, "48-digit integer is a finite double"}},
      // Unpaired or invalid surrogates through \u escapes -> MF-S004.
      {"i_object_key_lone_2nd_surrogate.json", {"MF-S004", "key holds a lone low surrogate"}},
      {"i_string_1st_surrogate_but_2nd_missing.json", {"MF-S004", "high surrogate, no low"}},
      {"i_string_1st_valid_surrogate_2nd_invalid.json",
       {"MF-S004", "high surrogate followed by a non-surrogate escape"}},
      {"i_string_incomplete_surrogate_and_escape_valid.json",
       {"MF-S004", "high surrogate followed by \\n"}},
      {"i_string_incomplete_surrogate_pair.json", {"MF-S004", "lone low surrogate \\uDd1e"}},
      {"i_string_incomplete_surrogates_escape_valid.json",
       {"MF-S004", "two high surrogates in a row"}},
      {"i_string_invalid_lonely_surrogate.json", {"MF-S004", "lone high surrogate"}},
      {"i_string_invalid_surrogate.json", {"MF-S004", "high surrogate followed by text"}},
      {"i_string_inverted_surrogates_U+1D11E.json", {"MF-S004", "low surrogate before high"}},
      {"i_string_lone_second_surrogate.json", {"MF-S004", "lone low surrogate"}},
      // Invalid UTF-8 bytes inside strings -> MF-S004.
      {"i_string_UTF-8_invalid_sequence.json", {"MF-S004", "byte FA cannot start a sequence"}},
      {"i_string_UTF8_surrogate_U+D800.json", {"MF-S004", "ED A0 80 encodes a surrogate"}},
      {"i_string_invalid_utf-8.json", {"MF-S004", "byte FF is never UTF-8"}},
      {"i_string_iso_latin_1.json", {"MF-S004", "Latin-1 E9 is a truncated sequence"}},
      {"i_string_lone_utf8_continuation_byte.json", {"MF-S004", "lone continuation byte 81"}},
      {"i_string_not_in_unicode_range.json", {"MF-S004", "F4 BF BF BF is above U+10FFFF"}},
      {"i_string_overlong_sequence_2_bytes.json", {"MF-S004", "overlong C0 AF"}},
      {"i_string_overlong_sequence_6_bytes.json", {"MF-S004", "6-byte overlong form"}},
      {"i_string_overlong_sequence_6_bytes_null.json", {"MF-S004", "6-byte overlong NUL"}},
      {"i_string_truncated-utf-8.json", {"MF-S004", "E0 followed by FF"}},
      // Not UTF-8 documents: bytes outside strings -> MF-S011.
      {"i_string_UTF-16LE_with_BOM.json", {"MF-S011", "UTF-16 BOM FF FE is not a JSON value"}},
      {"i_string_utf16BE_no_BOM.json", {"MF-S011", "UTF-16BE: leading NUL byte"}},
      {"i_string_utf16LE_no_BOM.json", {"MF-S011", "UTF-16LE: NUL after '['"}},
      {"i_structure_UTF-8_BOM_empty_object.json", {"MF-S011", "a UTF-8 BOM is not accepted"}},
      // Limits.
      {"i_structure_500_nested_arrays.json", {"MF-S010", "500 levels exceed the depth limit 64"}},
  };
  return table;
}

// y_ files the reader rejects on purpose: duplicate keys (docs/json.md deviation from RFC 8259).
const std::set<std::string>& rejected_y() {
  static const std::set<std::string> files = {"y_object_duplicated_key.json",
                                              "y_object_duplicated_key_and_value.json"};
  return files;
}

class JsonTestSuite : public ::testing::TestWithParam<Case> {};

TEST_P(JsonTestSuite, File) {
  const Case& c = GetParam();
  const std::string text = read_bytes(suite_dir() / c.file);
  const Result<Value> r = parse(text);
  switch (c.file.front()) {
    case 'n':
      EXPECT_FALSE(r.ok()) << c.file << " must be rejected";
      if (!r.ok()) expect_good_diagnostic(r);
      break;
    case 'y':
      if (rejected_y().contains(c.file)) {
        EXPECT_EQ(outcome(r), "MF-S006") << c.file << ": " << describe(r);
        if (!r.ok()) expect_good_diagnostic(r);
      } else {
        EXPECT_TRUE(r.ok()) << c.file << " must be accepted: " << describe(r);
      }
      break;
    case 'i': {
      const auto it = pinned().find(c.file);
      ASSERT_NE(it, pinned().end()) << c.file << " has no pinned outcome; add it to the table";
      EXPECT_EQ(outcome(r), it->second.outcome)
          << c.file << " (" << it->second.reason << "): " << describe(r);
      if (!r.ok()) expect_good_diagnostic(r);
      break;
    }
    default:
      ADD_FAILURE() << "unexpected file " << c.file;
  }
  // The tree-less path (mf/json/tape.hpp) holds to the same verdicts: it accepts only what the
  // strict reader accepts, reads it the same, and declines nothing the strict reader accepts.
  EXPECT_EQ(oracle::tape_disagreement(text, {}), "") << c.file;
  // Read in windows (a suite file), the file alone and as the element of a streamed array gives
  // what the whole text gives: the value, or the diagnostics with their lines and columns.
  mf::test::expect_same_through_windows(text);
  mf::test::expect_same_through_windows("{\"cases\":[\n" + text + "\n]}");
}

INSTANTIATE_TEST_SUITE_P(TestParsing, JsonTestSuite, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(JsonTestSuite);

TEST(JsonTestSuiteInventory, HoldsAllFiles) {
  MF_REQUIRE_SUITE();
  const std::vector<std::string> files = sorted_files();
  std::size_t y = 0, n = 0, i = 0;
  for (const std::string& f : files) {
    EXPECT_TRUE(f.ends_with(".json")) << f;
    if (f.starts_with("y_")) ++y;
    if (f.starts_with("n_")) ++n;
    if (f.starts_with("i_")) ++i;
  }
  EXPECT_EQ(files.size(), 318u);
  EXPECT_EQ(y, 95u);
  EXPECT_EQ(n, 188u);
  EXPECT_EQ(i, 35u);
  EXPECT_EQ(cases().size(), files.size());
}

TEST(JsonTestSuiteInventory, PinnedTableMatchesTheIFiles) {
  MF_REQUIRE_SUITE();
  std::set<std::string> on_disk;
  for (const std::string& f : sorted_files()) {
    if (f.starts_with("i_")) on_disk.insert(f);
  }
  std::set<std::string> in_table;
  for (const auto& [file, pin] : pinned()) in_table.insert(file);
  EXPECT_EQ(in_table, on_disk);
  for (const std::string& f : rejected_y()) {
    EXPECT_TRUE(fs::is_regular_file(suite_dir() / f)) << f;
  }
}

TEST(JsonTestSuiteInventory, HundredThousandOpeningArraysHitTheDepthLimit) {
  MF_REQUIRE_SUITE();
  const std::string text = read_bytes(suite_dir() / "n_structure_100000_opening_arrays.json");
  ASSERT_EQ(text.size(), 100000u);
  const Result<Value> r = parse(text);
  ASSERT_FALSE(r.ok());
  expect_good_diagnostic(r);
  EXPECT_EQ(r.diagnostics().front().code, "MF-S010") << describe(r);
  EXPECT_EQ(r.diagnostics().front().line, 1);
}

TEST(JsonTestSuiteInventory, DuplicateKeyDiagnosticPointsAtTheKey) {
  MF_REQUIRE_SUITE();
  const Result<Value> r = parse(read_bytes(suite_dir() / "y_object_duplicated_key.json"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.diagnostics().front().code, "MF-S006");
  EXPECT_EQ(r.diagnostics().front().pointer, "/a") << describe(r);
}

}  // namespace
}  // namespace mf::json
