// ES6 number serialization vectors (json-canonicalization/generated, produced by the upstream
// numgen.js) against write_number (docs/json.md). Line format: "<hex IEEE-754 bits>,<expected>\n".
#include <gtest/gtest.h>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "mf/json/canonical.hpp"

namespace mf::json {
namespace {

namespace fs = std::filesystem;

const fs::path& generated_dir() {
  static const fs::path dir = fs::path(MF_CONFORMANCE_DIR) / "json-canonicalization" / "generated";
  return dir;
}

#define MF_REQUIRE_GENERATED()                                                            \
  do {                                                                                    \
    if (!fs::is_directory(generated_dir()))                                               \
      GTEST_SKIP() << "ES6 number vectors not found at " << generated_dir().string()      \
                   << " (expected ../shared/conformance/json-canonicalization/generated)" \
                   << "; skipped";                                                        \
  } while (0)

struct Tally {
  std::size_t lines = 0;
  std::size_t checked = 0;
  std::size_t skipped_non_finite = 0;
  std::size_t mismatches = 0;
  std::size_t malformed = 0;
  std::string report;  // the first 10 mismatches or malformed lines
};

void note(Tally& t, const std::string& line) {
  if (t.mismatches + t.malformed <= 10) t.report += "  " + line + "\n";
}

void check_line(std::string line, Tally& t) {
  if (!line.empty() && line.back() == '\n') line.pop_back();
  ++t.lines;
  const std::size_t comma = line.find(',');
  if (comma == std::string::npos || comma == 0 || comma > 16) {
    ++t.malformed;
    note(t, "malformed line " + std::to_string(t.lines) + ": " + line);
    return;
  }
  const std::string expected = line.substr(comma + 1);
  if (expected == "NaN" || expected == "Infinity" || expected == "-Infinity") {
    ++t.skipped_non_finite;  // JSON has no such numbers; the reader never produces them
    return;
  }
  std::uint64_t bits = 0;
  const auto [end, ec] = std::from_chars(line.data(), line.data() + comma, bits, 16);
  if (ec != std::errc() || end != line.data() + comma) {
    ++t.malformed;
    note(t, "malformed hex on line " + std::to_string(t.lines) + ": " + line);
    return;
  }
  double d = 0;
  static_assert(sizeof d == sizeof bits);
  std::memcpy(&d, &bits, sizeof d);
  std::string got;
  write_number(d, got);
  ++t.checked;
  if (got != expected) {
    ++t.mismatches;
    note(t, "line " + std::to_string(t.lines) + " bits " + line.substr(0, comma) + ": expected " +
                expected + ", got " + got);
  }
}

void expect_clean(const Tally& t, std::size_t lines) {
  EXPECT_EQ(t.lines, lines);
  EXPECT_EQ(t.malformed, 0u) << t.report;
  EXPECT_EQ(t.mismatches, 0u) << "first mismatches:\n" << t.report;
  // numgen.js emits finite values only; pin that so a changed file is noticed.
  EXPECT_EQ(t.skipped_non_finite, 0u);
  EXPECT_EQ(t.checked + t.skipped_non_finite, t.lines);
}

TEST(Es6Numbers, HundredThousandGzipped) {
  MF_REQUIRE_GENERATED();
  const fs::path file = generated_dir() / "es6testfile_100k.txt.gz";
  ASSERT_TRUE(fs::is_regular_file(file)) << file.string();
  const std::string command = "gzip -dc '" + file.string() + "'";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr) << "cannot run " << command;
  Tally t;
  std::string line;
  char buf[256];
  while (std::fgets(buf, sizeof buf, pipe) != nullptr) {
    line += buf;
    if (!line.empty() && line.back() == '\n') {
      check_line(line, t);
      line.clear();
    }
  }
  if (!line.empty()) check_line(line, t);
  const int status = pclose(pipe);
  EXPECT_EQ(status, 0) << command << " failed";
  expect_clean(t, 100000);
}

TEST(Es6Numbers, TenThousandPlain) {
  MF_REQUIRE_GENERATED();
  const fs::path file = generated_dir() / "es6testfile_10k.txt";
  if (!fs::exists(file)) GTEST_SKIP() << file.string() << " not present";
  std::ifstream in(file, std::ios::binary);
  ASSERT_TRUE(in.good());
  Tally t;
  std::string line;
  while (std::getline(in, line)) check_line(line, t);
  expect_clean(t, 10000);
}

// The sample lines of the upstream testdata README, independent of the files.
TEST(Es6Numbers, ReadmeSamples) {
  Tally t;
  for (const char* line : {"4340000000000001,9007199254740994", "4340000000000002,9007199254740996",
                           "444b1ae4d6e2ef50,1e+21", "3eb0c6f7a0b5ed8d,0.000001",
                           "3eb0c6f7a0b5ed8c,9.999999999999997e-7", "8000000000000000,0", "0,0"}) {
    check_line(line, t);
  }
  expect_clean(t, 7);
}

}  // namespace
}  // namespace mf::json
