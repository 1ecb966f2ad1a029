#include "mf/schema/schema.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "mf/diag/codes.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/pointer.hpp"
#include "mf/json/reader.hpp"

namespace {

using mf::json::Value;
using mf::schema::admit;
using mf::schema::normalize;
using mf::schema::validate;
using mf::schema::Violation;
namespace codes = mf::diag::codes;

// Test documents are written as JSON text so they read like the schemas users write.
Value J(std::string_view text) {
  auto r = mf::json::parse(text);
  if (!r.ok()) {
    ADD_FAILURE() << "bad test JSON: " << text << ": " << r.diagnostics().front().message;
    return Value();
  }
  return std::move(r).value();
}

std::vector<std::string> pointers(const mf::Status& s) {
  std::vector<std::string> out;
  for (const auto& d : s.diagnostics()) out.push_back(d.pointer);
  return out;
}

std::string describe(const std::vector<Violation>& vs) {
  std::string out;
  for (const Violation& v : vs)
    out += "[" + v.instance_pointer + "] " + v.keyword + ": " + v.message + "\n";
  return out;
}

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// ---------------------------------------------------------------------------------------------
// Admission

TEST(SchemaAdmit, AcceptsEverySupportedKeyword) {
  const Value s = J(R"({
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$comment": "why this schema exists",
    "title": "Edit", "description": "Edits a file", "default": {}, "examples": [{"path": "a"}],
    "type": "object",
    "required": ["path", "edits"],
    "additionalProperties": {"type": ["string", "null"]},
    "properties": {
      "path": {"type": "string", "minLength": 1, "maxLength": 4096},
      "count": {"type": "integer", "minimum": 0, "maximum": 10.5},
      "mode": {"enum": ["a", 1, null, {"x": [1]}]},
      "kind": {"const": {"k": true}},
      "edits": {"type": "array", "minItems": 1, "maxItems": 2.0, "items": {
        "anyOf": [{"type": "string"}, true],
        "oneOf": [{"type": "boolean"}, false]
      }},
      "free": {"additionalProperties": true, "properties": {}},
      "never": false
    }
  })");
  const mf::Status st = admit(s, codes::kUnsupportedSchema);
  EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.diagnostics().front().message);
}

TEST(SchemaAdmit, AcceptsBooleanSchemas) {
  EXPECT_TRUE(admit(Value(true), "MF-X000").ok());
  EXPECT_TRUE(admit(Value(false), "MF-X000").ok());
  EXPECT_TRUE(admit(J(R"({"items": false, "additionalProperties": true})"), "MF-X000").ok());
  EXPECT_TRUE(admit(J("{}"), "MF-X000").ok());
}

struct Rejection {
  const char* schema;
  const char* pointer;  // relative to the base pointer
  const char* mention;  // text the message must contain (the keyword)
};

// Every keyword outside the subset is rejected where it appears, nested or not.
TEST(SchemaAdmit, RejectsKeywordsOutsideTheSubset) {
  const std::vector<std::pair<std::string, std::string>> outside = {
      {"format", R"("date")"},    {"pattern", R"("^a")"},
      {"$ref", R"("#/x")"},       {"allOf", R"([{}])"},
      {"not", R"({})"},           {"if", R"({})"},
      {"prefixItems", R"([{}])"}, {"minProperties", "1"},
      {"exclusiveMinimum", "0"},  {"patternProperties", R"({"^a": {}})"},
      {"$defs", R"({"a": {}})"},  {"frobnicate", "1"},
      {"definitions", R"({})"},   {"uniqueItems", "true"},
      {"contains", "{}"},         {"dependentRequired", "{}"},
      {"propertyNames", "{}"},    {"multipleOf", "2"},
      {"$id", R"("urn:x")"},      {"unevaluatedProperties", "false"},
  };
  for (const auto& [keyword, value] : outside) {
    SCOPED_TRACE(keyword);
    const Value s = J(R"({"type": "object", "properties": {"x": {"type": "string", ")" + keyword +
                      R"(": )" + value + "}}}");
    const mf::Status st = admit(s, codes::kUnsupportedSchema, "/tools/0/input_schema");
    ASSERT_FALSE(st.ok());
    ASSERT_EQ(st.diagnostics().size(), 1u);
    const auto& d = st.diagnostics().front();
    EXPECT_EQ(d.code, "MF-R007");
    EXPECT_EQ(d.severity, mf::diag::Severity::Error);
    EXPECT_EQ(d.pointer, "/tools/0/input_schema/properties/x/" + mf::json::escape_token(keyword));
    EXPECT_TRUE(contains(d.message, "\"" + keyword + "\"")) << d.message;
    EXPECT_EQ(d.line, 0);
  }
}

TEST(SchemaAdmit, RejectsMalformedKeywordValues) {
  const std::vector<Rejection> cases = {
      {R"({"type": "int"})", "/type", "\"type\""},
      {R"({"type": ["string", "int"]})", "/type/1", "\"type\""},
      {R"({"type": ["string", "string"]})", "/type/1", "\"type\""},
      {R"({"type": []})", "/type", "\"type\""},
      {R"({"type": 1})", "/type", "\"type\""},
      {R"({"required": [1]})", "/required/0", "\"required\""},
      {R"({"required": ["a", "a"]})", "/required/1", "\"required\""},
      {R"({"required": "a"})", "/required", "\"required\""},
      {R"({"minItems": -1})", "/minItems", "\"minItems\""},
      {R"({"minItems": 1.5})", "/minItems", "\"minItems\""},
      {R"({"maxItems": "2"})", "/maxItems", "\"maxItems\""},
      {R"({"minLength": 1e300})", "/minLength", "\"minLength\""},
      {R"({"maxLength": null})", "/maxLength", "\"maxLength\""},
      {R"({"minimum": "0"})", "/minimum", "\"minimum\""},
      {R"({"maximum": true})", "/maximum", "\"maximum\""},
      {R"({"enum": []})", "/enum", "\"enum\""},
      {R"({"enum": "a"})", "/enum", "\"enum\""},
      {R"({"anyOf": []})", "/anyOf", "\"anyOf\""},
      {R"({"oneOf": {}})", "/oneOf", "\"oneOf\""},
      {R"({"anyOf": [true, 3]})", "/anyOf/1", "schema"},
      {R"({"properties": []})", "/properties", "\"properties\""},
      {R"({"properties": {"a": 1}})", "/properties/a", "schema"},
      {R"({"properties": {"a/b~": "x"}})", "/properties/a~1b~0", "schema"},
      {R"({"items": [{}]})", "/items", "\"items\""},
      {R"({"items": null})", "/items", "schema"},
      {R"({"additionalProperties": "no"})", "/additionalProperties", "schema"},
      {R"({"description": 1})", "/description", "\"description\""},
      {R"({"title": []})", "/title", "\"title\""},
      {R"({"$comment": {}})", "/$comment", "\"$comment\""},
      {R"({"examples": {}})", "/examples", "\"examples\""},
      {R"({"$schema": "http://json-schema.org/draft-07/schema#"})", "/$schema", "\"$schema\""},
      {R"({"items": {"$schema": "https://json-schema.org/draft/2020-12/schema"}})",
       "/items/$schema", "\"$schema\""},
      {"3", "", "schema"},
      {R"("object")", "", "schema"},
      {"null", "", "schema"},
  };
  for (const Rejection& c : cases) {
    SCOPED_TRACE(c.schema);
    const mf::Status st = admit(J(c.schema), "MF-T999", "/in");
    ASSERT_FALSE(st.ok());
    ASSERT_EQ(st.diagnostics().size(), 1u) << st.diagnostics()[1].message;
    const auto& d = st.diagnostics().front();
    EXPECT_EQ(d.code, "MF-T999");
    EXPECT_EQ(d.pointer, std::string("/in") + c.pointer);
    EXPECT_TRUE(contains(d.message, c.mention)) << d.message;
  }
}

TEST(SchemaAdmit, IntegerValuedBoundsWithAFractionPartOfZeroAreAccepted) {
  // 2020-12 defines an integer by value, so 2.0 is a valid count.
  EXPECT_TRUE(admit(J(R"({"minItems": 2.0, "maxLength": 0})"), "MF-R007").ok());
}

TEST(SchemaAdmit, ReportsEveryProblemInDocumentOrderWithTheBasePointer) {
  const Value s = J(R"({"format": "x", "type": "int", "properties": {"a": {"pattern": "y"}},
                        "anyOf": [{"not": {}}, {"$ref": "#"}]})");
  const mf::Status st = admit(s, codes::kUnsupportedSchema, "/tools/3/input_schema");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(pointers(st), (std::vector<std::string>{
                              "/tools/3/input_schema/format",
                              "/tools/3/input_schema/type",
                              "/tools/3/input_schema/properties/a/pattern",
                              "/tools/3/input_schema/anyOf/0/not",
                              "/tools/3/input_schema/anyOf/1/$ref",
                          }));
  for (const auto& d : st.diagnostics()) EXPECT_EQ(d.code, "MF-R007");
}

TEST(SchemaAdmit, RejectsSchemasNestedDeeperThanTheLimit) {
  // Only a constructed Value can get here: the strict reader stops at JSON depth 64 first.
  Value s(true);
  for (int i = 0; i < 70; ++i) s = Value(mf::json::Object{{"items", s}});
  const mf::Status st = admit(s, "MF-R007");
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(contains(st.diagnostics().front().message, "nesting"))
      << st.diagnostics().front().message;
  // Validating against such a value stops at the same limit instead of recursing without bound.
  Value deep(0);
  for (int i = 0; i < 70; ++i) deep = Value(mf::json::Array{deep});
  const std::vector<Violation> vs = validate(s, deep);
  ASSERT_EQ(vs.size(), 1u) << describe(vs);
  EXPECT_EQ(vs.front().keyword, "depth");
}

// ---------------------------------------------------------------------------------------------
// Normalization

TEST(SchemaNormalize, ClosesEveryObjectSchemaRecursively) {
  const Value s = J(R"({
    "type": "object",
    "properties": {
      "a": {"type": "object"},
      "b": {"type": "array", "items": {"properties": {"c": {"type": ["object", "null"]}}}},
      "d": {"anyOf": [{"type": "object"}, {"type": "string"}]},
      "e": {"oneOf": [{"properties": {}}]},
      "f": {"type": "string"}
    },
    "additionalProperties": {"type": "object"}
  })");
  const Value expected = J(R"({
    "type": "object",
    "properties": {
      "a": {"type": "object", "additionalProperties": false},
      "b": {"type": "array", "items": {"properties": {
        "c": {"type": ["object", "null"], "additionalProperties": false}},
        "additionalProperties": false}},
      "d": {"anyOf": [{"type": "object", "additionalProperties": false}, {"type": "string"}]},
      "e": {"oneOf": [{"properties": {}, "additionalProperties": false}]},
      "f": {"type": "string"}
    },
    "additionalProperties": {"type": "object", "additionalProperties": false}
  })");
  const Value n = normalize(s);
  EXPECT_EQ(mf::json::canonical(n), mf::json::canonical(expected));
  EXPECT_TRUE(admit(n, "MF-R007").ok());
  EXPECT_EQ(normalize(n), n);  // idempotent
}

TEST(SchemaNormalize, KeepsExplicitAdditionalPropertiesAndEverythingElse) {
  const Value open = J(R"({"type": "object", "additionalProperties": true, "description": "d",
                           "properties": {"x": {"type": "object", "additionalProperties": true}}})");
  EXPECT_EQ(normalize(open), open);
  // Values of const/enum/default are data, not schemas: they are never "closed".
  const Value data = J(R"({"const": {"type": "object"}, "enum": [{"properties": {}}],
                           "default": {"type": "object"}, "examples": [{"type": "object"}]})");
  EXPECT_EQ(normalize(data), data);
}

TEST(SchemaNormalize, LeavesBooleanAndNonObjectSchemasUnchanged) {
  EXPECT_EQ(normalize(Value(true)), Value(true));
  EXPECT_EQ(normalize(Value(false)), Value(false));
  const Value s = J(R"({"type": "string", "items": false, "additionalProperties": false})");
  EXPECT_EQ(normalize(s), s);
  EXPECT_EQ(normalize(J("{}")), J("{}"));
}

// ---------------------------------------------------------------------------------------------
// Validation

// The single violation for `instance`, or a failure naming what came back.
Violation one(const Value& schema, const Value& instance) {
  const std::vector<Violation> vs = validate(schema, instance);
  EXPECT_EQ(vs.size(), 1u) << describe(vs);
  return vs.empty() ? Violation{} : vs.front();
}

TEST(SchemaValidate, TypeNamesAndIntegerMeansZeroFraction) {
  struct Case {
    const char* type;
    const char* instance;
    bool valid;
  };
  const std::vector<Case> cases = {
      {"null", "null", true},      {"null", "0", false},       {"boolean", "false", true},
      {"boolean", "0", false},     {"object", "{}", true},     {"object", "[]", false},
      {"array", "[]", true},       {"array", "{}", false},     {"number", "1.5", true},
      {"number", "1", true},       {"number", "\"1\"", false}, {"string", "\"\"", true},
      {"string", "null", false},   {"integer", "1", true},     {"integer", "1.0", true},
      {"integer", "-0", true},     {"integer", "1e300", true}, {"integer", "1.5", false},
      {"integer", "\"1\"", false}, {"integer", "true", false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.type) + " vs " + c.instance);
    const std::vector<Violation> vs =
        validate(J(std::string(R"({"type": ")") + c.type + "\"}"), J(c.instance));
    EXPECT_EQ(vs.empty(), c.valid) << describe(vs);
    if (!c.valid && !vs.empty()) {
      EXPECT_EQ(vs.front().keyword, "type");
      EXPECT_EQ(vs.front().instance_pointer, "");
    }
  }
  EXPECT_TRUE(validate(J(R"({"type": ["integer", "null"]})"), J("null")).empty());
  const Violation v = one(J(R"({"type": ["integer", "null"]})"), J("2.5"));
  EXPECT_EQ(v.keyword, "type");
  EXPECT_TRUE(contains(v.message, "integer")) << v.message;
  EXPECT_TRUE(contains(v.message, "2.5")) << v.message;
}

TEST(SchemaValidate, EnumAndConstUseJsonEquality) {
  const Value e = J(R"({"enum": [1, "a", {"x": 1, "y": [true]}]})");
  EXPECT_TRUE(validate(e, J("1.0")).empty());
  EXPECT_TRUE(validate(e, J("1")).empty());
  EXPECT_TRUE(validate(e, J(R"({"y": [true], "x": 1.0})")).empty());
  EXPECT_EQ(one(e, J("true")).keyword, "enum");
  EXPECT_EQ(one(e, J(R"({"x": 1})")).keyword, "enum");
  EXPECT_EQ(one(e, J(R"({"x": 1, "y": [true], "z": 0})")).keyword, "enum");
  EXPECT_EQ(one(e, J(R"("A")")).keyword, "enum");

  const Value c = J(R"({"const": {"a": [1, 2.0]}})");
  EXPECT_TRUE(validate(c, J(R"({"a": [1.0, 2]})")).empty());
  EXPECT_EQ(one(c, J(R"({"a": [2, 1]})")).keyword, "const");
  EXPECT_EQ(one(J(R"({"const": false})"), J("0")).keyword, "const");
  EXPECT_EQ(one(J(R"({"const": null})"), J("{}")).keyword, "const");
}

TEST(SchemaValidate, LengthsCountCodePoints) {
  const Value s = J(R"({"minLength": 2, "maxLength": 2})");
  EXPECT_TRUE(validate(s, J(R"("ab")")).empty());
  EXPECT_TRUE(validate(s, J(R"("éé")")).empty());             // 4 bytes, 2 code points
  EXPECT_TRUE(validate(s, J(R"("😀😀")")).empty());             // 8 bytes, 2 code points
  EXPECT_TRUE(validate(s, J(R"("\ud83d\ude00x")")).empty());  // surrogate pair = one code point
  EXPECT_EQ(one(s, J(R"("é")")).keyword, "minLength");
  EXPECT_EQ(one(s, J(R"("😀")")).keyword, "minLength");
  EXPECT_EQ(one(s, J(R"("abc")")).keyword, "maxLength");
  EXPECT_TRUE(validate(J(R"({"maxLength": 1})"), J(R"("é")")).empty());
  EXPECT_TRUE(validate(J(R"({"maxLength": 1})"), J(R"("😀")")).empty());
  EXPECT_TRUE(validate(s, J("12345")).empty());  // length keywords ignore non-strings
}

TEST(SchemaValidate, ItemCountsAndNumericBoundsAreInclusive) {
  const Value items = J(R"({"minItems": 1, "maxItems": 2})");
  EXPECT_TRUE(validate(items, J("[1]")).empty());
  EXPECT_TRUE(validate(items, J("[1, 2]")).empty());
  EXPECT_EQ(one(items, J("[]")).keyword, "minItems");
  EXPECT_EQ(one(items, J("[1, 2, 3]")).keyword, "maxItems");
  EXPECT_TRUE(validate(items, J(R"("")")).empty());

  const Value num = J(R"({"minimum": -1.5, "maximum": 3})");
  EXPECT_TRUE(validate(num, J("-1.5")).empty());
  EXPECT_TRUE(validate(num, J("3.0")).empty());
  const Violation low = one(num, J("-2"));
  EXPECT_EQ(low.keyword, "minimum");
  EXPECT_EQ(low.message, "-2 is less than the minimum -1.5");
  EXPECT_EQ(one(num, J("3.0001")).keyword, "maximum");
  EXPECT_TRUE(validate(num, J(R"("100")")).empty());
}

TEST(SchemaValidate, ObjectKeywordsReportExactPointers) {
  const Value s = J(R"({
    "type": "object",
    "required": ["path", "edits"],
    "properties": {
      "path": {"type": "string"},
      "edits": {"type": "array", "items": {
        "type": "object",
        "required": ["oldText", "newText"],
        "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}},
        "additionalProperties": false
      }}
    }
  })");
  EXPECT_TRUE(validate(s, J(R"({"path": "a", "edits": [], "other": 1})")).empty());
  const Value bad = J(R"({"path": "a", "edits": [
    {"oldText": "x", "newText": "y"},
    {"oldText": 5, "extra/~": 1, "newText": "z"},
    {"newText": "w"}
  ]})");
  const std::vector<Violation> expected = {
      {"/edits/1/oldText", "type", "expected string, got number 5"},
      {"/edits/1/extra~1~0", "additionalProperties", "property \"extra/~\" is not allowed"},
      {"/edits/2", "required", "missing required property \"oldText\""},
  };
  EXPECT_EQ(validate(s, bad), expected) << describe(validate(s, bad));
  const Violation missing = one(s, J(R"({"edits": []})"));
  EXPECT_EQ(missing.instance_pointer, "");
  EXPECT_EQ(missing.keyword, "required");
}

TEST(SchemaValidate, AdditionalPropertiesSchemaAppliesToUnlistedMembersOnly) {
  const Value s = J(R"({"properties": {"a": {"type": "string"}},
                        "additionalProperties": {"type": "integer"}})");
  EXPECT_TRUE(validate(s, J(R"({"a": "x", "b": 1, "c": 2.0})")).empty());
  const std::vector<Violation> vs = validate(s, J(R"({"b": "no", "a": 1})"));
  ASSERT_EQ(vs.size(), 2u) << describe(vs);
  // Instance member order, not schema order.
  EXPECT_EQ(vs[0].instance_pointer, "/b");
  EXPECT_EQ(vs[1].instance_pointer, "/a");
  EXPECT_EQ(vs[0].keyword, "type");
}

TEST(SchemaValidate, BooleanSchemas) {
  EXPECT_TRUE(validate(Value(true), J(R"({"anything": [1]})")).empty());
  const Violation v = one(Value(false), J("1"));
  EXPECT_EQ(v.keyword, "false");
  EXPECT_EQ(v.instance_pointer, "");
  const Violation item = one(J(R"({"items": false})"), J("[1]"));
  EXPECT_EQ(item.keyword, "false");
  EXPECT_EQ(item.instance_pointer, "/0");
  const Violation prop = one(J(R"({"properties": {"a": false}})"), J(R"({"a": 1})"));
  EXPECT_EQ(prop.keyword, "false");
  EXPECT_EQ(prop.instance_pointer, "/a");
  EXPECT_TRUE(validate(J(R"({"properties": {"a": false}})"), J(R"({"b": 1})")).empty());
}

TEST(SchemaValidate, AnyOfAndOneOfReportOnlyTheKeyword) {
  const Value any = J(R"({"anyOf": [{"type": "string", "minLength": 3},
                                    {"type": "object", "required": ["a"]}]})");
  EXPECT_TRUE(validate(any, J(R"("abc")")).empty());
  EXPECT_TRUE(validate(any, J(R"({"a": 1})")).empty());
  const Violation a = one(any, J(R"({"b": 1})"));
  EXPECT_EQ(a.keyword, "anyOf");
  EXPECT_EQ(a.instance_pointer, "");

  const Value oneof = J(R"({"oneOf": [{"type": "integer"}, {"minimum": 2}]})");
  EXPECT_TRUE(validate(oneof, J("1")).empty());
  EXPECT_TRUE(validate(oneof, J("2.5")).empty());
  const Violation both = one(oneof, J("3"));
  EXPECT_EQ(both.keyword, "oneOf");
  EXPECT_TRUE(contains(both.message, "more than one")) << both.message;
  const Violation none = one(oneof, J("1.5"));
  EXPECT_EQ(none.keyword, "oneOf");
  EXPECT_TRUE(contains(none.message, "none")) << none.message;

  const std::vector<Violation> vs = validate(J(R"({"items": {"anyOf": [false]}})"), J("[0, 1]"));
  ASSERT_EQ(vs.size(), 2u);
  EXPECT_EQ(vs[0], (Violation{"/0", "anyOf", "value matches none of the 1 anyOf schemas"}));
  EXPECT_EQ(vs[1].instance_pointer, "/1");
}

TEST(SchemaValidate, AnnotationsHaveNoEffect) {
  const Value s = J(R"({"title": "t", "description": "d", "default": 5, "examples": [1],
                        "$comment": "c", "$schema": "https://json-schema.org/draft/2020-12/schema"})");
  EXPECT_TRUE(validate(s, J(R"("anything")")).empty());
}

TEST(SchemaValidate, KeywordsAreCheckedInAFixedOrder) {
  // Document order of the schema does not matter; the fixed keyword order does.
  const Value s = J(R"({"oneOf": [false], "anyOf": [false], "maxLength": 1, "minLength": 5,
                        "const": "x", "enum": ["y"], "type": "integer"})");
  std::vector<std::string> keywords;
  for (const Violation& v : validate(s, J(R"("ab")"))) keywords.push_back(v.keyword);
  EXPECT_EQ(keywords, (std::vector<std::string>{"type", "enum", "const", "minLength", "maxLength",
                                                "anyOf", "oneOf"}));
}

TEST(SchemaValidate, StopsAtMaxViolations) {
  const Value s = J(R"({"items": {"type": "string"}})");
  Value many(mf::json::Array{});
  for (int i = 0; i < 100; ++i) many.push_back(Value(i));
  EXPECT_EQ(validate(s, many).size(), 64u);
  const std::vector<Violation> three = validate(s, many, 3);
  ASSERT_EQ(three.size(), 3u);
  EXPECT_EQ(three[0].instance_pointer, "/0");
  EXPECT_EQ(three[2].instance_pointer, "/2");
  // Zero would make an invalid instance look valid.
  EXPECT_EQ(validate(s, many, 0).size(), 1u);
  EXPECT_EQ(validate(s, many, 1000).size(), 100u);
}

TEST(SchemaValidate, MessagesDoNotEchoLongValues) {
  const std::string long_text(500, 'q');
  const Value s = J(R"({"additionalProperties": false, "properties": {"a": {"const": ")" +
                    long_text + R"("}}})");
  const Value inst = J(R"({"a": ")" + std::string(400, 'z') + R"(", ")" + long_text + R"(": 1})");
  const std::vector<Violation> vs = validate(s, inst);
  ASSERT_EQ(vs.size(), 2u) << describe(vs);
  for (const Violation& v : vs) {
    EXPECT_LT(v.message.size(), 140u) << v.message;
    EXPECT_FALSE(contains(v.message, std::string(65, 'q'))) << v.message;
    EXPECT_FALSE(contains(v.message, std::string(65, 'z'))) << v.message;
  }
  EXPECT_EQ(vs[0].keyword, "const");
  EXPECT_EQ(vs[1].keyword, "additionalProperties");
  EXPECT_EQ(vs[1].instance_pointer, "/" + long_text);
  // Cutting never splits a code point.
  const Value e = J(R"({"enum": [")" + std::string(61, 'a') + R"(éééééééé"]})");
  const Violation v = one(e, J("1"));
  EXPECT_TRUE(mf::json::parse(mf::json::canonical(Value(v.message))).ok());
}

}  // namespace
