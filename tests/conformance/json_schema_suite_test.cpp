// JSON-Schema-Test-Suite (json-schema-org, tests/draft2020-12/) run against the supported schema
// subset. Every group whose schema is admitted must agree with the suite on every case; a group
// that needs a keyword outside the subset is listed by name in kSkippedGroups, and the list is
// checked against the suite so it cannot go stale.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "mf/diag/codes.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"
#include "mf/schema/schema.hpp"
#include "suite.hpp"

namespace mf::schema {
namespace {

using namespace mf::conformance;

namespace fs = std::filesystem;
using json::Value;

const fs::path& suite_dir() {
  static const fs::path dir =
      fs::path(MF_CONFORMANCE_DIR) / "JSON-Schema-Test-Suite" / "tests" / "draft2020-12";
  return dir;
}

#define MF_REQUIRE_SUITE()                                   \
  MF_REQUIRE_SUITE_AT(suite_dir(), "JSON-Schema-Test-Suite", \
                      "expected ../shared/conformance/JSON-Schema-Test-Suite/tests/draft2020-12")

struct Skipped {
  const char* file;
  const char* description;  // the group's exact description
  const char* keyword;      // the keyword admission must name when it rejects the group
};

// Groups whose schema is outside the subset. Each must exist and be rejected at admission.
constexpr Skipped kSkippedGroups[] = {
    {"additionalProperties.json",
     "additionalProperties being false does not allow other properties", "patternProperties"},
    {"additionalProperties.json", "non-ASCII pattern with additionalProperties",
     "patternProperties"},
    {"additionalProperties.json", "additionalProperties does not look in applicators", "allOf"},
    {"additionalProperties.json", "additionalProperties with propertyNames", "propertyNames"},
    {"additionalProperties.json", "dependentSchemas with additionalProperties", "dependentSchemas"},
    // The subset asks for `false` instead of an empty enum.
    {"enum.json", "empty enum", "enum"},
    {"items.json", "items and subitems", "$defs"},
    {"items.json", "prefixItems with no additional items allowed", "prefixItems"},
    {"items.json", "items does not look in applicators, valid case", "allOf"},
    {"items.json", "prefixItems validation adjusts the starting index for items", "prefixItems"},
    {"items.json", "items with heterogeneous array", "prefixItems"},
    {"properties.json", "properties, patternProperties, additionalProperties interaction",
     "patternProperties"},
};

// The files this test expects; a new file in the suite shows up here first.
const std::set<std::string>& expected_files() {
  static const std::set<std::string> files = {"additionalProperties.json",
                                              "anyOf.json",
                                              "const.json",
                                              "enum.json",
                                              "items.json",
                                              "maxItems.json",
                                              "maxLength.json",
                                              "maximum.json",
                                              "minItems.json",
                                              "minLength.json",
                                              "minimum.json",
                                              "oneOf.json",
                                              "properties.json",
                                              "required.json",
                                              "type.json"};
  return files;
}

const Skipped* find_skipped(std::string_view file, std::string_view description) {
  for (const Skipped& s : kSkippedGroups) {
    if (file == s.file && description == s.description) return &s;
  }
  return nullptr;
}

std::vector<std::string> sorted_files() {
  std::vector<std::string> files;
  if (!fs::is_directory(suite_dir())) return files;
  for (const auto& entry : fs::directory_iterator(suite_dir())) {
    if (entry.is_regular_file() && entry.path().extension() == ".json") {
      files.push_back(entry.path().filename().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The file's groups. A file the strict reader rejects (e.g. a duplicate key) fails the test
// rather than being skipped: the suite is only useful if all of it runs.
Result<Value> load(const std::string& file) {
  std::ifstream in(suite_dir() / file, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return json::parse(text);
}

std::string describe(const diag::Diagnostics& ds) {
  std::string out;
  for (const auto& d : ds) out += "\n  " + d.code + " at '" + d.pointer + "': " + d.message;
  return out;
}

std::string describe(const std::vector<Violation>& vs) {
  std::string out;
  for (const auto& v : vs)
    out += "\n  [" + v.instance_pointer + "] " + v.keyword + ": " + v.message;
  return out;
}

bool names_keyword(const diag::Diagnostics& ds, std::string_view keyword) {
  const std::string quoted = "\"" + std::string(keyword) + "\"";
  return std::any_of(ds.begin(), ds.end(), [&](const diag::Diagnostic& d) {
    return d.message.find(quoted) != std::string::npos;
  });
}

struct Tally {
  std::size_t groups_run = 0;
  std::size_t cases_run = 0;
  std::size_t groups_skipped = 0;
};

// Runs every group of one file; failures are reported through gtest.
Tally run_file(const std::string& file) {
  Tally t;
  const Result<Value> doc = load(file);
  if (!doc.ok()) {
    ADD_FAILURE() << file << " is rejected by the strict reader:" << describe(doc.diagnostics());
    return t;
  }
  if (!doc->is_array()) {
    ADD_FAILURE() << file << " is not an array of groups";
    return t;
  }
  for (const Value& group : doc->as_array()) {
    const Value* description = group.find("description");
    const Value* schema = group.find("schema");
    const Value* tests = group.find("tests");
    if (description == nullptr || !description->is_string() || schema == nullptr ||
        tests == nullptr || !tests->is_array()) {
      ADD_FAILURE() << file << ": a group without description, schema or tests";
      continue;
    }
    SCOPED_TRACE(file + ": group \"" + description->as_string() + "\"");
    const Status admitted = admit(*schema, diag::codes::kUnsupportedSchema);
    if (const Skipped* skip = find_skipped(file, description->as_string())) {
      ++t.groups_skipped;
      EXPECT_FALSE(admitted.ok()) << "listed in kSkippedGroups but admitted; remove it";
      if (!admitted.ok()) {
        EXPECT_TRUE(names_keyword(admitted.diagnostics(), skip->keyword))
            << "rejected, but not for \"" << skip->keyword
            << "\":" << describe(admitted.diagnostics());
      }
      continue;
    }
    if (!admitted.ok()) {
      ADD_FAILURE() << "schema not admitted and not in kSkippedGroups:"
                    << describe(admitted.diagnostics());
      continue;
    }
    ++t.groups_run;
    // The normal form must stay inside the subset.
    EXPECT_TRUE(admit(normalize(*schema), diag::codes::kUnsupportedSchema).ok());
    for (const Value& test : tests->as_array()) {
      const Value* what = test.find("description");
      const Value* data = test.find("data");
      const Value* valid = test.find("valid");
      if (what == nullptr || !what->is_string() || data == nullptr || valid == nullptr ||
          !valid->is_bool()) {
        ADD_FAILURE() << "a test without description, data or valid";
        continue;
      }
      SCOPED_TRACE("case \"" + what->as_string() + "\"");
      ++t.cases_run;
      const std::vector<Violation> vs = validate(*schema, *data);
      EXPECT_EQ(vs.empty(), valid->as_bool()) << "data " << json::canonical(*data) << " against "
                                              << json::canonical(*schema) << describe(vs);
    }
  }
  return t;
}

class JsonSchemaSuite : public ::testing::TestWithParam<std::string> {};

TEST_P(JsonSchemaSuite, File) {
  run_file(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Draft202012, JsonSchemaSuite, ::testing::ValuesIn(sorted_files()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param.substr(0, info.param.size() - 5);
                           for (char& c : name) {
                             const bool alnum = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                                                (c >= '0' && c <= '9');
                             if (!alnum) c = '_';
                           }
                           return name;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(JsonSchemaSuite);

TEST(JsonSchemaSuiteInventory, HoldsTheExpectedFiles) {
  MF_REQUIRE_SUITE();
  const std::vector<std::string> files = sorted_files();
  EXPECT_EQ(std::set<std::string>(files.begin(), files.end()), expected_files());
}

// Every skip entry names a group that exists and that admission rejects for the stated keyword.
TEST(JsonSchemaSuiteInventory, SkippedGroupsExistAndAreRejected) {
  MF_REQUIRE_SUITE();
  for (const Skipped& s : kSkippedGroups) {
    SCOPED_TRACE(std::string(s.file) + ": group \"" + s.description + "\"");
    const Result<Value> doc = load(s.file);
    ASSERT_TRUE(doc.ok()) << describe(doc.diagnostics());
    ASSERT_TRUE(doc->is_array());
    std::size_t found = 0;
    for (const Value& group : doc->as_array()) {
      const Value* description = group.find("description");
      const Value* schema = group.find("schema");
      if (description == nullptr || !description->is_string() ||
          description->as_string() != s.description || schema == nullptr) {
        continue;
      }
      ++found;
      const Status admitted = admit(*schema, diag::codes::kUnsupportedSchema);
      ASSERT_FALSE(admitted.ok());
      EXPECT_TRUE(names_keyword(admitted.diagnostics(), s.keyword))
          << describe(admitted.diagnostics());
    }
    EXPECT_EQ(found, 1u) << "the group must appear exactly once";
  }
}

// Pins the totals so that a change in the subset or the suite is noticed, not absorbed.
TEST(JsonSchemaSuiteInventory, Totals) {
  MF_REQUIRE_SUITE();
  Tally total;
  for (const std::string& f : sorted_files()) {
    const Tally t = run_file(f);
    total.groups_run += t.groups_run;
    total.cases_run += t.cases_run;
    total.groups_skipped += t.groups_skipped;
  }
  EXPECT_EQ(total.groups_skipped, std::size(kSkippedGroups));
  EXPECT_EQ(total.groups_run, 92u);
  EXPECT_EQ(total.cases_run, 326u);
}

}  // namespace
}  // namespace mf::schema
