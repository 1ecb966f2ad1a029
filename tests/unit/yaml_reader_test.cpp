#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "mf/json/reader.hpp"
#include "mf/yaml/reader.hpp"

namespace mf::yaml {
namespace {

using json::Value;

diag::Diagnostic reject(std::string_view text, const ReadLimits& limits = {}) {
  Result<Value> r = parse(text, limits);
  EXPECT_FALSE(r.ok()) << "accepted: " << text;
  if (r.ok()) return {};
  EXPECT_EQ(r.diagnostics().size(), 1u);
  return r.diagnostics().front();
}

Value accept(std::string_view text, const ReadLimits& limits = {}) {
  Result<Value> r = parse(text, limits);
  EXPECT_TRUE(r.ok()) << text << ": " << (r.ok() ? "" : r.diagnostics().front().message);
  return r.ok() ? std::move(r).value() : Value();
}

Value json_twin(std::string_view text) {
  Result<Value> r = json::parse(text);
  EXPECT_TRUE(r.ok()) << text;
  return r.ok() ? std::move(r).value() : Value();
}

void expect_diag(const diag::Diagnostic& d, std::string_view code, std::string_view pointer,
                 std::int64_t line, std::int64_t column) {
  EXPECT_EQ(d.code, code) << d.message;
  EXPECT_EQ(d.pointer, pointer) << d.message;
  EXPECT_EQ(d.line, line) << d.message;
  EXPECT_EQ(d.column, column) << d.message;
}

std::string repeat(std::string_view unit, std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s += unit;
  return s;
}

// --- accepted documents -------------------------------------------------------------------------

TEST(YamlReader, EqualsItsJsonTwin) {
  EXPECT_EQ(accept("a: 1\nb: [x, \"y\", 2.5, true, null]"),
            json_twin(R"({"a":1,"b":["x","y",2.5,true,null]})"));
  // Members keep document order, not sorted order.
  const Value v = accept("z: 1\na: 2\nm: 3\n");
  ASSERT_TRUE(v.is_object());
  EXPECT_EQ(v.as_object()[0].key, "z");
  EXPECT_EQ(v.as_object()[2].key, "m");
}

TEST(YamlReader, BlockScalars) {
  EXPECT_EQ(accept("system_instructions: |\n  line one\n  line two\n"),
            json_twin(R"({"system_instructions":"line one\nline two\n"})"));
  EXPECT_EQ(accept("a: >\n  folded\n  text\n\n  para\n"),
            json_twin(R"({"a":"folded text\npara\n"})"));
  EXPECT_EQ(accept("a: |-\n  strip\n\n"), json_twin(R"({"a":"strip"})"));
  EXPECT_EQ(accept("a: |+\n  keep\n\n"), json_twin(R"({"a":"keep\n\n"})"));
  // A block scalar is never typed, whatever it holds.
  EXPECT_EQ(accept("a: |-\n  123\n"), json_twin(R"({"a":"123"})"));
}

TEST(YamlReader, FlowCollections) {
  EXPECT_EQ(accept("{a: [1, {b: [], c: {}}], d: 'x', e}"),
            json_twin(R"({"a":[1,{"b":[],"c":{}}],"d":"x","e":null})"));
  EXPECT_EQ(accept("[a, b: c]"), json_twin(R"(["a",{"b":"c"}])"));
  EXPECT_EQ(accept("- [1, 2]\n- {x: y}\n"), json_twin(R"([[1,2],{"x":"y"}])"));
}

TEST(YamlReader, QuotedScalarsAreStringsAndUnescaped) {
  EXPECT_EQ(accept("[\"true\", 'null', \"1\", '0x1F', \"~\", \"\"]"),
            json_twin(R"(["true","null","1","0x1F","~",""])"));
  EXPECT_EQ(accept("a: 'it''s'\nb: \"\\u00e9\\t\\n\\r\"\n"),
            json_twin(R"({"a":"it's","b":"\u00e9\t\n\r"})"));
}

TEST(YamlReader, CoreSchemaIntegers) {
  EXPECT_EQ(accept("[0x1F, 0o17, +1, -7, 007, 0, 0xff]"), json_twin("[31,15,1,-7,7,0,255]"));
  EXPECT_EQ(accept("9007199254740992"), Value(9007199254740992.0));
  EXPECT_EQ(accept("-9007199254740992"), Value(-9007199254740992.0));
  EXPECT_TRUE(std::signbit(accept("-0").as_number()));
  // Forms outside the core schema stay strings.
  EXPECT_EQ(accept("[-0x1, 0b101, 1_000, 0x, 0o8, 0X1F, 012e]"),
            json_twin(R"(["-0x1","0b101","1_000","0x","0o8","0X1F","012e"])"));
}

TEST(YamlReader, CoreSchemaFloats) {
  EXPECT_EQ(accept("[1e3, .5, -.5, +.5e+3, 1., 2.5E-1, -1.5, 0.0]"),
            json_twin("[1000,0.5,-0.5,500,1,0.25,-1.5,0]"));
  EXPECT_EQ(accept("[1e, e3, ., +, 1.2.3, Infinity, inf, nan, NaN]"),
            json_twin(R"(["1e","e3",".","+","1.2.3","Infinity","inf","nan","NaN"])"));
}

TEST(YamlReader, CoreSchemaNullAndBool) {
  EXPECT_EQ(accept("[~, null, Null, NULL, true, True, TRUE, false, False, FALSE]"),
            json_twin("[null,null,null,null,true,true,true,false,false,false]"));
  EXPECT_EQ(accept("a:\nb: ~\n"), json_twin(R"({"a":null,"b":null})"));
  // YAML 1.1 spellings are plain strings under the 1.2 core schema.
  EXPECT_EQ(accept("[yes, no, on, off, y, n, Yes, NO, tRUE, nULL]"),
            json_twin(R"(["yes","no","on","off","y","n","Yes","NO","tRUE","nULL"])"));
}

TEST(YamlReader, ExplicitDocumentMarkersAndDirectives) {
  EXPECT_EQ(accept("---\na: 1\n"), json_twin(R"({"a":1})"));
  EXPECT_EQ(accept("--- a\n...\n"), Value("a"));
  EXPECT_EQ(accept("%YAML 1.2\n---\na: 1\n...\n"), json_twin(R"({"a":1})"));
  EXPECT_EQ(accept("--- ~\n"), Value());
}

TEST(YamlReader, LeadingBomIsSkippedAndNotCounted) {
  EXPECT_EQ(accept("\xEF\xBB\xBF"
                   "a: 1\n"),
            json_twin(R"({"a":1})"));
  expect_diag(reject("\xEF\xBB\xBF"
                     "a: .nan\n"),
              "MF-S011", "/a", 1, 4);
}

TEST(YamlReader, CrLfLineEndings) {
  EXPECT_EQ(accept("a:\r\n  b: 1\r\n  c: \"x\"\r\n"), json_twin(R"({"a":{"b":1,"c":"x"}})"));
  expect_diag(reject("a: 1\r\nb: .inf\r\n"), "MF-S011", "/b", 2, 4);
}

// --- size and limits
// ------------------------------------------------------------------------------

TEST(YamlReader, RejectsDocumentOverMaxBytesBeforeParsing) {
  ReadLimits limits;
  limits.max_bytes = 8;
  EXPECT_TRUE(parse("a: 12345", limits).ok());  // exactly at the limit
  // Over the limit even with content that would not parse: the size check comes first.
  expect_diag(reject("a: [1, 2, 3", limits), "MF-S003", "", 1, 1);
  expect_diag(reject(std::string((1u << 20) + 1, ' ')), "MF-S003", "", 1, 1);
}

TEST(YamlReader, DepthLimit) {
  EXPECT_TRUE(parse(repeat("[", 32) + repeat("]", 32)).ok());
  const auto d = reject(repeat("[", 33) + repeat("]", 33));
  EXPECT_EQ(d.code, "MF-S010");
  EXPECT_EQ(d.pointer, repeat("/0", 32));
  EXPECT_EQ(d.line, 1);
  EXPECT_EQ(d.column, 33);
  // Block nesting counts the same way.
  std::string block;
  for (int i = 0; i < 3; ++i) block += std::string(2 * i, ' ') + "k:\n";
  block += "      - x\n";
  ReadLimits limits;
  limits.max_depth = 3;
  expect_diag(reject(block, limits), "MF-S010", "/k/k/k", 4, 7);
  limits.max_depth = 4;
  EXPECT_TRUE(parse(block, limits).ok());
}

TEST(YamlReader, DeepNestingFloodIsRefusedNotOverflowed) {
  EXPECT_EQ(reject(repeat("[", 200000)).code, "MF-S010");
  EXPECT_EQ(reject(repeat("- ", 200000)).code, "MF-S010");
  // With our limit lifted, yaml-cpp's own recursion guard still answers with a diagnostic.
  ReadLimits limits;
  limits.max_depth = 1u << 30;
  EXPECT_EQ(reject(repeat("[", 100000), limits).code, "MF-S011");
}

TEST(YamlReader, EntryLimitCountsEveryNode) {
  ReadLimits limits;
  limits.max_entries = 4;  // the sequence and its three scalars
  EXPECT_TRUE(parse("[1, 2, 3]", limits).ok());
  expect_diag(reject("[1, 2, 3, 4]", limits), "MF-S010", "/3", 1, 11);
  // Keys are nodes too: a mapping, two keys and two values make five.
  expect_diag(reject("a: 1\nb: 2\n", limits), "MF-S010", "/b", 2, 4);
  std::string many = "a:\n";
  for (int i = 0; i < 10000; ++i) many += "  - " + std::to_string(i) + "\n";
  EXPECT_EQ(reject(many).code, "MF-S010");
}

TEST(YamlReader, ScalarSizeLimit) {
  ReadLimits limits;
  limits.max_scalar_bytes = 4;
  EXPECT_TRUE(parse("abcd: wxyz", limits).ok());
  expect_diag(reject("a: abcde", limits), "MF-S010", "/a", 1, 4);
  expect_diag(reject("a: \"ab\\u00e9cd\"", limits), "MF-S010", "/a", 1, 4);  // decoded bytes
  expect_diag(reject("a: |\n  abcde\n", limits), "MF-S010", "/a", 1, 4);
  expect_diag(reject("ok: 1\nabcde: 1", limits), "MF-S010", "", 2, 1);  // a key
  EXPECT_EQ(reject("a: " + std::string(70000, 'x')).code, "MF-S010");
}

TEST(YamlReader, NumberLexemeLimit) {
  EXPECT_EQ(accept("a: " + std::string(127, '0') + "1"), json_twin(R"({"a":1})"));
  expect_diag(reject("a: " + std::string(129, '1')), "MF-S010", "/a", 1, 4);
  expect_diag(reject("a: 0." + std::string(127, '1')), "MF-S010", "/a", 1, 4);
  // The limit is on number lexemes: a long plain string is not one.
  EXPECT_TRUE(parse("a: " + std::string(129, '1') + "x").ok());
}

TEST(YamlReader, IntegersBeyondTwoToThe53AreLimitErrors) {
  expect_diag(reject("a: 9007199254740993"), "MF-S010", "/a", 1, 4);
  EXPECT_EQ(reject("a: -9007199254740993").code, "MF-S010");
  EXPECT_EQ(reject("a: 0x20000000000001").code, "MF-S010");
  EXPECT_EQ(reject("a: 0xFFFFFFFFFFFFFFFFFFFFFFFF").code, "MF-S010");
  EXPECT_EQ(reject("a: 0o400000000000000001").code, "MF-S010");
  EXPECT_EQ(reject("a: 99999999999999999999999999").code, "MF-S010");
  // As a float lexeme the same magnitude rounds like any JSON number.
  EXPECT_TRUE(parse("a: 9007199254740993.0").ok());
}

TEST(YamlReader, NumbersOutOfDoubleRange) {
  expect_diag(reject("a: 1e400"), "MF-S011", "/a", 1, 4);
  EXPECT_EQ(reject("[-1e999]").code, "MF-S011");
}

// --- bytes
// ----------------------------------------------------------------------------------------

TEST(YamlReader, InvalidUtf8RawBytes) {
  expect_diag(reject("a: ok\nb: \"x\xC3(\"\n"), "MF-S004", "", 2, 6);
  expect_diag(reject("\xC3\xA9: [x, y\xFF]"), "MF-S004", "", 1, 9);  // columns count code points
  EXPECT_EQ(reject("a: \xC0\x80").code, "MF-S004");                  // overlong
  EXPECT_EQ(reject("a: \xED\xA0\x80").code, "MF-S004");              // UTF-16 surrogate
  EXPECT_EQ(reject("a: \xF4\x90\x80\x80").code, "MF-S004");          // past U+10FFFF
  EXPECT_EQ(reject("a: \xE2\x82").code, "MF-S004");                  // truncated at the end
  EXPECT_EQ(reject("# comment \xFE\na: 1").code, "MF-S004");         // in a comment too
  EXPECT_EQ(reject("\xFF\xFE"
                   "a\0:\0")
                .code,
            "MF-S004");  // UTF-16 is not accepted
  EXPECT_EQ(accept("\xE2\x82\xAC\xF0\x9F\x98\x80"), Value("\xE2\x82\xAC\xF0\x9F\x98\x80"));
}

TEST(YamlReader, EscapeOutsideUnicodeIsNotUtf8) {
  expect_diag(reject("a: \"\\uD800\""), "MF-S004", "/a", 1, 11);
  EXPECT_EQ(reject("a: \"\\U00110000\"").code, "MF-S004");
}

TEST(YamlReader, RawControlCharacters) {
  expect_diag(reject("a:\n  b: \x01"), "MF-S011", "", 2, 6);
  expect_diag(reject(std::string("a: x\0y", 6)), "MF-S011", "", 1, 5);
  EXPECT_EQ(reject("a: \"\x1B[31m\"").code, "MF-S011");
  EXPECT_EQ(reject("# \x07\na: 1").code, "MF-S011");
  EXPECT_EQ(accept("a: \"x\ty\"\n"), json_twin(R"({"a":"x\ty"})"));
}

TEST(YamlReader, EscapedControlCharacters) {
  expect_diag(reject("a: \"\\x01\""), "MF-S011", "/a", 1, 4);
  expect_diag(reject("a: [ok, \"\\0\"]"), "MF-S011", "/a/1", 1, 9);
  EXPECT_EQ(reject("a: \"\\e[31m\"").code, "MF-S011");
  EXPECT_EQ(reject("a: \"\\u0007\"").code, "MF-S011");
  EXPECT_EQ(reject("\"k\\x1F\": 1").code, "MF-S011");  // in a key
  EXPECT_EQ(accept(R"(a: "\t\r\n")"), json_twin(R"({"a":"\t\r\n"})"));
}

// --- malformed documents ------------------------------------------------------------------------

TEST(YamlReader, NonFiniteNumbers) {
  expect_diag(reject("a: .inf"), "MF-S011", "/a", 1, 4);
  expect_diag(reject("a: [1, -.Inf]"), "MF-S011", "/a/1", 1, 8);
  expect_diag(reject("x:\n  y: .nan\n"), "MF-S011", "/x/y", 2, 6);
  for (const char* text : {".INF", "+.inf", ".NaN", ".NAN", "-.nan", ".iNf"}) {
    EXPECT_EQ(reject(text).code, "MF-S011") << text;
  }
  EXPECT_EQ(accept("a: \".inf\""), json_twin(R"({"a":".inf"})"));
}

TEST(YamlReader, MultipleDocuments) {
  expect_diag(reject("a: 1\n---\nb: 2\n"), "MF-S009", "", 2, 1);
  expect_diag(reject("a: 1\n...\nb: 2\n"), "MF-S009", "", 3, 1);
  EXPECT_EQ(reject("---\na: 1\n--- b\n").code, "MF-S009");
  EXPECT_EQ(reject("a: 1\n---\n").code, "MF-S009");  // an explicit empty second document
  EXPECT_EQ(reject("a: 1\n... # end\n\n# c\nb\n").code, "MF-S009");
  EXPECT_TRUE(parse("a: 1\n...\n# trailing comment\n").ok());
}

TEST(YamlReader, TrailingContent) {
  expect_diag(reject("\"a\" \"b\""), "MF-S011", "", 1, 5);
  expect_diag(reject("[a]\n[b]\n"), "MF-S011", "", 2, 1);
  // A line without ':' is not a key with a null value.
  expect_diag(reject("a: 1\nb\n"), "MF-S011", "/b", 2, 1);
  expect_diag(reject("a:\n  b: 1\n  c\n"), "MF-S011", "/a/c", 3, 3);
}

TEST(YamlReader, EmptyStreamAndEmptyDocument) {
  for (const char* text : {"", "   \n", "# only a comment\n", "---\n", "---\n...\n"}) {
    EXPECT_EQ(reject(text).code, "MF-S011") << text;
  }
  EXPECT_EQ(accept("~"), Value());
  EXPECT_EQ(accept("null\n"), Value());
}

TEST(YamlReader, SyntaxErrorsCarryYamlCppLocation) {
  expect_diag(reject("a: b: c"), "MF-S011", "", 1, 5);
  expect_diag(reject("a:\n\t- b"), "MF-S011", "/a", 2, 2);
  expect_diag(reject("[a, b"), "MF-S011", "/2", 1, 6);
  EXPECT_EQ(reject("{a: 1").code, "MF-S011");
  EXPECT_EQ(reject("a: 'unterminated").code, "MF-S011");
  EXPECT_EQ(reject("a: [1, 2]]").code, "MF-S011");
  EXPECT_EQ(reject("a: &").code, "MF-S011");
}

TEST(YamlReader, ParseObjectRequiresMapping) {
  expect_diag(parse_object("- a\n- b\n").diagnostics().front(), "MF-S012", "", 1, 1);
  expect_diag(parse_object("# header\n\n  hello\n").diagnostics().front(), "MF-S012", "", 3, 3);
  expect_diag(parse_object("[1]").diagnostics().front(), "MF-S012", "", 1, 1);
  EXPECT_EQ(parse_object("42").diagnostics().size(), 1u);
  EXPECT_EQ(parse_object("a: 1").value(), json_twin(R"({"a":1})"));
  // Earlier errors pass through unchanged.
  expect_diag(parse_object("a: .nan").diagnostics().front(), "MF-S011", "/a", 1, 4);
}

// --- YAML features that are refused
// ---------------------------------------------------------------

TEST(YamlReader, Anchors) {
  expect_diag(reject("a: &x 1\n"), "MF-S007", "/a", 1, 4);
  expect_diag(reject("base: &b {x: 1}\n"), "MF-S007", "/base", 1, 7);
  expect_diag(reject("- ok\n- &s [1]\n"), "MF-S007", "/1", 2, 3);
  EXPECT_EQ(reject("&r a: 1").code, "MF-S007");
}

TEST(YamlReader, Aliases) {
  // The anchor is refused before its alias is reached.
  expect_diag(reject("a: &x 1\nb: *x\n"), "MF-S007", "/a", 1, 4);
  // An alias to an anchor that does not exist is still an alias.
  expect_diag(reject("a: 1\nb: *x\n"), "MF-S007", "/b", 2, 4);
  EXPECT_EQ(reject("[*a]").code, "MF-S007");
  // A billion-laughs document stops at the first anchor.
  EXPECT_EQ(reject("a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n").code, "MF-S007");
}

TEST(YamlReader, Tags) {
  expect_diag(reject("a: !!str x"), "MF-S008", "/a", 1, 4);
  expect_diag(reject("a: !foo x"), "MF-S008", "/a", 1, 4);
  expect_diag(reject("a:\n  - !!binary aGVsbG8=\n"), "MF-S008", "/a/0", 2, 5);
  EXPECT_NE(reject("a: !!binary aGVsbG8=").message.find("tag:yaml.org,2002:binary"),
            std::string::npos);
  for (const char* text :
       {"a: ! x", "a: !<!> x", "a: !<?> [x]", "a: !!int \"1\"", "!!map {a: 1}", "a: !!seq [1]",
        "a: !!null", "!!str a: 1", "%TAG !e! tag:e.com,2000:\n---\na: !e!x 1"}) {
    EXPECT_EQ(reject(text).code, "MF-S008") << text;
  }
}

TEST(YamlReader, MergeKeys) {
  expect_diag(reject("defaults: {a: 1}\nx:\n  <<: {a: 2}\n"), "MF-S008", "/x", 3, 3);
  EXPECT_EQ(reject("{<<: {a: 1}}").code, "MF-S008");
  // Quoted, it is an ordinary key; as a value, an ordinary string.
  EXPECT_EQ(accept("\"<<\": 1\nv: <<\n"), json_twin(R"({"<<":1,"v":"<<"})"));
}

TEST(YamlReader, DuplicateKeys) {
  expect_diag(reject("a: 1\na: 2\n"), "MF-S006", "/a", 2, 1);
  expect_diag(reject("a: 1\n\"a\": 2\n"), "MF-S006", "/a", 2, 1);
  expect_diag(reject("x: {k: 1, 'k': 2}"), "MF-S006", "/x/k", 1, 11);
  EXPECT_EQ(reject("\"\\u0061\": 1\na: 2").code, "MF-S006");  // compared decoded
  EXPECT_EQ(reject("a/b: 1\n\"a/b\": 2\n").pointer, "/a~1b");
  std::string big;
  for (int i = 0; i < 100; ++i) big += "k" + std::to_string(i) + ": " + std::to_string(i) + "\n";
  EXPECT_TRUE(parse(big + "last: 0\n").ok());
  expect_diag(reject(big + "k57: 0\n"), "MF-S006", "/k57", 101, 1);
}

TEST(YamlReader, NonStringKeys) {
  expect_diag(reject("1: x"), "MF-S008", "", 1, 1);
  expect_diag(reject("a:\n  true: x\n"), "MF-S008", "/a", 2, 3);
  expect_diag(reject("null: x"), "MF-S008", "", 1, 1);
  expect_diag(reject("[a]: x"), "MF-S008", "", 1, 1);
  expect_diag(reject("? {a: 1}: x"), "MF-S008", "", 1, 3);
  for (const char* text : {"~: x", "1.5: x", "0x1F: x", ".inf: x", "{: x}", "? [a]\n: x\n",
                           "? - a\n: x\n", "{[a]: x}", "[{a: 1}: x]", "k: 1\n? \n: x\n"}) {
    EXPECT_EQ(reject(text).code, "MF-S008") << text;
  }
  EXPECT_EQ(accept("\"1\": x\n'true': y\n\"null\": z\nyes: w\n"),
            json_twin(R"({"1":"x","true":"y","null":"z","yes":"w"})"));
}

TEST(YamlReader, PointersEscapeTildeAndSlash) {
  expect_diag(reject("a/b~c: {x: [1, .nan]}"), "MF-S011", "/a~1b~0c/x/1", 1, 16);
}

TEST(YamlReader, ColumnsCountCodePoints) {
  expect_diag(reject("\xC3\xA9: [\xC3\xBC, \"\xC3\xB6\", !x y]"), "MF-S008", "/\xC3\xA9/2", 1, 13);
}

// --- whole documents
// --------------------------------------------------------------------------------

TEST(YamlReader, HarnessEqualsJsonTwin) {
  const std::string yaml = R"(# A Millforge-style harness.
schema_version: "1.0"
kind: millforge_harness
harness_id: millforge.test.golden.compiler.v1
harness_version: 1
stage_scope:
  stage_kind_ids:
    - builder
    - checker
model_profile_id: profile.golden
prompt:
  policy_id: millforge.test.golden.policy.v1
  system_instructions: |
    Preserve this first instruction.
    Preserve this second instruction.
  include_request_context: true
budgets:
  max_iterations: 6
  max_validation_retries: 2
context:
  strategy_id: forge.tiered.v1
  budget_tokens: 0x2000
  phase_thresholds: [0.5, 0.75, .95]
graph:
  nodes:
    collect_context:
      tool_ref: tools.collect_context@1
      required: true
      produces: ["draft"]
    write_report:
      tool_ref: 'tools.write_report@1'
      prerequisites:
        - node_id: collect_context
          argument_matches:
            path: path
      produces: [report]
    complete:
      tool_ref: tools.finish_success@1
      terminal_result: BUILDER_COMPLETE
      prerequisites:
        - {node_id: collect_context}
        - node_id: write_report
artifacts:
  declared_artifact_ids: ["report", "draft"]
  required_by_terminal:
    BUILDER_COMPLETE: ["report", "draft"]
    BLOCKED: []
)";
  const std::string json = R"({
  "schema_version": "1.0",
  "kind": "millforge_harness",
  "harness_id": "millforge.test.golden.compiler.v1",
  "harness_version": 1,
  "stage_scope": {"stage_kind_ids": ["builder", "checker"]},
  "model_profile_id": "profile.golden",
  "prompt": {
    "policy_id": "millforge.test.golden.policy.v1",
    "system_instructions": "Preserve this first instruction.\nPreserve this second instruction.\n",
    "include_request_context": true
  },
  "budgets": {"max_iterations": 6, "max_validation_retries": 2},
  "context": {"strategy_id": "forge.tiered.v1", "budget_tokens": 8192,
              "phase_thresholds": [0.5, 0.75, 0.95]},
  "graph": {"nodes": {
    "collect_context": {"tool_ref": "tools.collect_context@1", "required": true,
                        "produces": ["draft"]},
    "write_report": {"tool_ref": "tools.write_report@1",
                     "prerequisites": [{"node_id": "collect_context",
                                        "argument_matches": {"path": "path"}}],
                     "produces": ["report"]},
    "complete": {"tool_ref": "tools.finish_success@1", "terminal_result": "BUILDER_COMPLETE",
                 "prerequisites": [{"node_id": "collect_context"}, {"node_id": "write_report"}]}
  }},
  "artifacts": {"declared_artifact_ids": ["report", "draft"],
                "required_by_terminal": {"BUILDER_COMPLETE": ["report", "draft"], "BLOCKED": []}}
})";
  Result<Value> y = parse_object(yaml);
  ASSERT_TRUE(y.ok()) << y.diagnostics().front().message;
  EXPECT_EQ(*y, json_twin(json));

  // A mistake deep inside reports where it is.
  std::string bad = yaml;
  bad.replace(bad.find("tools.finish_success@1"), 22, "!!str x");
  expect_diag(reject(bad), "MF-S008", "/graph/nodes/complete/tool_ref", 38, 17);
}

TEST(YamlReader, NeverThrowsOnArbitraryInput) {
  // A deterministic smoke fuzz over YAML's indicator alphabet; the real fuzzer comes later.
  const std::string alphabet = "ab1.-+:?,[]{}&*!|>'\"#%@`~ \n\t\\xe0o";
  std::mt19937 rng(12345);
  for (int i = 0; i < 3000; ++i) {
    std::string text;
    const std::size_t n = rng() % 40;
    for (std::size_t k = 0; k < n; ++k) text += alphabet[rng() % alphabet.size()];
    Result<Value> r = Value();
    ASSERT_NO_THROW(r = parse(text)) << text;
    if (!r.ok()) {
      ASSERT_EQ(r.diagnostics().size(), 1u) << text;
      EXPECT_EQ(r.diagnostics().front().code.rfind("MF-S0", 0), 0u) << text;
    }
  }
}

// --- YAML 1.2 where yaml-cpp is lenient or misreads (each found against the YAML test suite) -----

struct Where {
  std::string code;
  std::int64_t line;
  std::int64_t column;
};

Where where(std::string_view text) {
  const diag::Diagnostic d = reject(text);
  return Where{d.code, d.line, d.column};
}

void expect_refused(std::string_view text, const std::string& code, std::int64_t line,
                    std::int64_t column) {
  const Where w = where(text);
  EXPECT_EQ(w.code, code) << text;
  EXPECT_EQ(w.line, line) << text;
  EXPECT_EQ(w.column, column) << text;
}

TEST(YamlStrict, UnterminatedQuotedScalarsAreRefusedAtTheirQuote) {
  expect_refused("key: \"abc\n", "MF-S011", 1, 6);
  expect_refused("key: 'abc\n", "MF-S011", 1, 6);
  expect_refused("a: 1\nkey: \"abc", "MF-S011", 2, 6);
  expect_refused("- 'it''s\n", "MF-S011", 1, 3);
}

TEST(YamlStrict, EmptyFlowEntriesAreRefused) {
  expect_refused("[ , a]\n", "MF-S011", 1, 3);
  expect_refused("[a, , ]\n", "MF-S011", 1, 5);
  expect_refused("{a: 1, , b: 2}\n", "MF-S011", 1, 8);
  expect_refused("[a,\n  # note\n  , b]\n", "MF-S011", 3, 3);
  EXPECT_EQ(accept("[a, b, ]\n"), json_twin(R"(["a","b"])"));  // one trailing comma is allowed
}

TEST(YamlStrict, CommentsMustBeSeparatedFromTheTokenBefore) {
  expect_refused("key: \"value\"# c\n", "MF-S011", 1, 13);
  expect_refused("key: 'value'# c\n", "MF-S011", 1, 13);
  expect_refused("[a, b]# c\n", "MF-S011", 1, 7);
  expect_refused("[a,# c\n]\n", "MF-S011", 1, 4);
  expect_refused("block: >#c\n  text\n", "MF-S011", 1, 9);
  expect_refused("block: |-#c\n  text\n", "MF-S011", 1, 10);
  // In a plain scalar a '#' after a non-space character is content, not a comment.
  EXPECT_EQ(accept("a: b#c\nd: \"e\" # f\n"), json_twin(R"({"a":"b#c","d":"e"})"));
}

TEST(YamlStrict, FlowContentInBlockContextIsIndentedPastItsCollection) {
  expect_refused("flow: [a,\nb]\n", "MF-S011", 2, 1);
  expect_refused("quoted: \"a\nb\"\n", "MF-S011", 2, 1);
  expect_refused("- [\n\tfoo]\n", "MF-S011", 2, 2);  // a tab is not indentation
  expect_refused("foo: \"bar\n\tbaz\"\n", "MF-S011", 2, 2);
  EXPECT_EQ(accept("flow: [a,\n b]\nq: \"a\n  b\"\n"),
            json_twin(R"({"flow":["a","b"],"q":"a b"})"));
  EXPECT_EQ(accept("[a,\nb]\n"), json_twin(R"(["a","b"])"));  // at the top level, column 0 is in
  EXPECT_EQ(accept("\"a\n\tb\"\n"), Value("a b"));
}

TEST(YamlStrict, BlockSequenceEntryInsideAFlowIsRefused) {
  expect_refused("[-]\n", "MF-S011", 1, 2);
  expect_refused("- [-, -]\n", "MF-S011", 1, 4);
  EXPECT_EQ(accept("[-1, -a]\n"), json_twin(R"([-1,"-a"])"));
}

TEST(YamlStrict, EscapesAreYaml12s) {
  expect_refused("double: \"quoted \\' scalar\"\n", "MF-S011", 1, 17);
  EXPECT_EQ(where("a: \"\\q\"\n").code, "MF-S011");  // refused by yaml-cpp's scanner
  EXPECT_EQ(accept("a: \"\\N\\_\\L\\P\\/\\ \"\n"),
            json_twin(R"({"a":"\u0085\u00a0\u2028\u2029/ "})"));
  EXPECT_EQ(accept("a: \"\\x41\\u00e9\\U0001F600\"\n"),
            json_twin(R"({"a":"A\u00e9\ud83d\ude00"})"));
  EXPECT_EQ(where("a: \"\\uD800\"\n").code, "MF-S004");  // yaml-cpp's scanner finds it first
}

TEST(YamlStrict, MultiLineQuotedScalarsFold) {
  EXPECT_EQ(accept("a: '\n  '\nb: '  \n  '\nc: \"\n  \"\ne: '\n\n  '\n"),
            json_twin(R"({"a":" ","b":" ","c":" ","e":"\n"})"));
  EXPECT_EQ(accept("a: \"x \\\n  y\"\nb: \"x\\t\n  y\"\n"),
            json_twin(R"({"a":"x y","b":"x\t y"})"));
  EXPECT_EQ(accept("a: 'one\n\n  two'\n"), json_twin(R"({"a":"one\ntwo"})"));
}

TEST(YamlStrict, BlockScalarsChompAndFold) {
  // A last line of spaces without a final line break is content of the literal scalar.
  EXPECT_EQ(accept("foo: |\n  x\n   "), json_twin(R"({"foo":"x\n \n"})"));
  EXPECT_EQ(accept("a: >\n  one\n  two\n\n  three\n   more\n  four\n"),
            json_twin(R"({"a":"one two\nthree\n more\nfour\n"})"));
  EXPECT_EQ(accept("a: |+\n  x\n\nb: |-\n  y\n\nc: >2\n   z\n"),
            json_twin(R"({"a":"x\n\n","b":"y","c":" z\n"})"));
  expect_refused("a: >\n \n  \n   \n # text\n", "MF-S011", 4, 1);  // leading blank over-indented
}

TEST(YamlStrict, LineBreaksAndBlankLines) {
  EXPECT_EQ(accept("a: 1\rb: 2\r"), json_twin(R"({"a":1,"b":2})"));  // CR alone is a break
  EXPECT_EQ(accept("a: 1\r\nb: 2\r\n"), json_twin(R"({"a":1,"b":2})"));
  expect_refused("a: 1\rb: [\r", "MF-S011", 3, 1);  // lines counted at CR
  EXPECT_EQ(accept("foo: 1\n\t\nbar: 2\n"), json_twin(R"({"foo":1,"bar":2})"));  // tab-only line
}

TEST(YamlStrict, CharactersYamlForbidsAreRefused) {
  expect_refused("a: \"\xC2\x80\"\n", "MF-S011", 1, 5);  // C1 control U+0080
  expect_refused("a: b\x7F\n", "MF-S011", 1, 5);         // DEL
  expect_refused("# \xEF\xBF\xBE\n", "MF-S011", 1, 3);   // U+FFFE, even in a comment
  expect_refused("a: \xEF\xBF\xBF\n", "MF-S011", 1, 4);  // U+FFFF
  EXPECT_EQ(accept("a: \"x\xC2\x85y\"\n"), json_twin(R"({"a":"x\u0085y"})"));  // NEL is printable
}

TEST(YamlStrict, NullKeyOfAFlowMappingKeepsItsCode) {
  expect_refused("{ : a }\n", "MF-S008", 1, 3);
  // yaml-cpp cannot read a key followed by a line break before its ':'; that is a syntax error
  // from the parser, not a null key (a limitation: docs/formats/harness.md).
  EXPECT_EQ(where("{\"foo\"\n: \"bar\"}\n").code, "MF-S011");
}

}  // namespace
}  // namespace mf::yaml
