#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"
#include "unit/json_windows.hpp"

namespace mf::json {
namespace {

diag::Diagnostic reject(std::string_view text, const ReadLimits& limits = {}) {
  Result<Value> r = parse(text, limits);
  EXPECT_FALSE(r.ok()) << "accepted: " << text;
  if (r.ok()) return {};
  EXPECT_EQ(r.diagnostics().size(), 1u);
  return r.diagnostics().front();
}

// The streamed array's elements arrive one at a time with their exact bytes and are not kept;
// everything else, and every error, is parse_object()'s.
TEST(JsonReader, StreamsTheElementsOfOneTopLevelArray) {
  const std::string text =
      "{\"a\":[{\"x\":[1]}],\"cases\": [ {\"id\":\"p\",\"n\":[2,{}]} ,7,\n[ ] ],\"z\":1}";
  std::vector<std::string> seen;
  auto doc = parse_object_streaming(
      text, {}, "cases", [&](Value&& v, std::size_t i, std::size_t begin, std::size_t end) {
        seen.push_back(std::to_string(i) + " " + canonical(v) + " " +
                       std::string(text.substr(begin, end - begin)));
      });
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(canonical(*doc), R"({"a":[{"x":[1]}],"cases":[],"z":1})");
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0], R"(0 {"id":"p","n":[2,{}]} {"id":"p","n":[2,{}]})");
  EXPECT_EQ(seen[1].substr(0, 4), "1 7 ");
  EXPECT_EQ(seen[2], "2 [] [ ]");
  // The callback may parse (a suite's case loads its task): the outer parse is not disturbed.
  std::vector<std::string> inner;
  auto outer =
      parse_object_streaming("{\"cases\":[\n{\"a\":\"x\"},\n{\"b\":[1,2]}\n]}", {}, "cases",
                             [&](Value&& v, std::size_t, std::size_t, std::size_t) {
                               inner.push_back(canonical(*parse("{\"in\":" + canonical(v) + "}")));
                             });
  ASSERT_TRUE(outer.ok()) << outer.diagnostics()[0].message;
  EXPECT_EQ(inner, (std::vector<std::string>{R"({"in":{"a":"x"}})", R"({"in":{"b":[1,2]}})"}));
  // A nested "cases" is not the top level's.
  std::size_t calls = 0;
  auto nested =
      parse_object_streaming(R"({"b":{"cases":[1,2]}})", {}, "cases",
                             [&](Value&&, std::size_t, std::size_t, std::size_t) { ++calls; });
  ASSERT_TRUE(nested.ok());
  EXPECT_EQ(calls, 0u);
  // The same diagnostic as parse_object(), pointer, line and column.
  const std::string bad = "{\"cases\":[{\"id\":1},\n{\"id\":2,\"id\":3}]}";
  auto streamed = parse_object_streaming(bad, {}, "cases",
                                         [](Value&&, std::size_t, std::size_t, std::size_t) {});
  auto whole = parse_object(bad);
  ASSERT_FALSE(streamed.ok());
  ASSERT_FALSE(whole.ok());
  EXPECT_EQ(streamed.diagnostics(), whole.diagnostics());
  EXPECT_EQ(streamed.diagnostics()[0].pointer, "/cases/1/id");
  EXPECT_EQ(streamed.diagnostics()[0].line, 2);
}

// A text read in windows (a suite file) is accepted and refused as the whole text is: the same
// value, the same diagnostics with their lines, columns and pointers, the same elements at the
// same offsets, whatever the windows' size and wherever a token, a line or a UTF-8 sequence is cut.
TEST(JsonReader, WindowsReadAsTheWholeText) {
  using mf::test::expect_same_through_windows;
  const std::string long_string(5000, 'x');
  const std::string documents[] = {
      "{\"a\":[{\"x\":[1]}],\"cases\": [ {\"id\":\"p\",\"n\":[2,{}]} ,7,\n[ ] ],\"z\":1}",
      "{\"cases\":[\"\u00e9\u20ac\",\"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\",\"\\uD83D\\uDE00\",-0."
      "5e-3,true,null]}",
      "{\n  \"suite_id\": \"\xC3\xA9\xE2\x82\xAC\",\n  \"cases\": [\n    {\"id\": \"a\", \"long\": "
      "\"" +
          long_string + "\"},\n    {\"id\": \"b\", \"id\": \"c\"}\n  ]\n}",
      "{\"cases\":[{\"" + long_string + "\":1,\"" + long_string + "\":2}]}",  // duplicate long key
      "{\"cases\":[1],\"cases\":[2]}",
      "{\"b\":{\"cases\":[1,2]},\"cases\":{\"x\":[3]}}",
      "{\"cases\":[{\"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\": x}]}",
      "{\"cases\":[1,,2]}",
      "{\"cases\":[1]} {}",
      "{\"cases\":[1]}  \n x",
      std::string("{\"cases\":[1]}\n\0 ", 16),
      std::string("{\"cases\":[1,\0]}", 16),
      std::string("{\"cases\":[\"a\0b\"]}", 18),
      "{\"cases\":[NaN]}",
      "{\"cases\":[1,\n-Infinity]}",
      "{\"cases\":[Infinity]}",
      "{\"cases\":[-NaN]}",
      "{\"cases\":[nul]}",
      "{\"cases\":[1e400]}",
      "{\"cases\":[1" + std::string(3000, '0') + "]}",
      "{\"cases\":[\"\xC3\x28\"]}",
      "{\"cases\":[\"\xED\xA0\x80\"]}",
      "{\"cases\":[\"\\uDC00\"]}",
      "{\"cases\":[{\"\\uD800x\":1}]}",
      "{\"cases\":[\"\\u12G4\"]}",
      "{\"cases\":[\"\\q\"]}",
      "{\"cases\":[\"unterminated",
      "{\"cases\":[1.]}",
      "{\"cases\":[1e]}",
      "{\"cases\":[{\"a\" 1}]}",
      "{\"cases\":[{1:1}]}",
      "{\"cases\":[{\"a\":1 \"b\":2}]}",
      "{\"cases\":[1 2]}",
      "{\"cases\":[" + std::string(70, '[') + std::string(70, ']') + "]}",
      "{\"cases\":[" + std::string(100000, '[') + "]}",
      "[1,2]",
      "\"text\"",
      "",
      "   \n ",
      "{}",
      " \t\r\n{\"cases\":[]}\n ",
  };
  for (const std::string& text : documents) expect_same_through_windows(text);
  // The limits, each hit through windows as in the whole text.
  ReadLimits limits;
  limits.max_bytes = 20;
  EXPECT_NE(expect_same_through_windows("{\"cases\":[1,2,3,4,5,6,7]}", limits).find("MF-S003"),
            std::string::npos);
  limits = {};
  limits.max_entries = 3;
  expect_same_through_windows("{\"cases\":[[1,2,3],[1,2,3,4]]}", limits);
  expect_same_through_windows("{\"cases\":[1,2,3,4]}", limits);
  limits = {};
  limits.max_string_bytes = 4;
  expect_same_through_windows("{\"cases\":[\"abcd\",\"abcde\"]}", limits);
  expect_same_through_windows("{\"cases\":[{\"abcde\":1}]}", limits);
  limits = {};
  limits.max_number_length = 5;
  expect_same_through_windows("{\"cases\":[12345,\n123456]}", limits);
  limits = {};
  limits.max_depth = 3;
  expect_same_through_windows("{\"cases\":[[1],[[2]]]}", limits);
  // A document of many elements: each one's bytes are where the whole text has them.
  std::string many = "{\"suite_id\":\"s\",\"cases\":[";
  for (int i = 0; i < 300; ++i) {
    many += (i > 0 ? ",\n" : "") + std::string("{\"id\":\"c-") + std::to_string(i) +
            "\",\"tags\":[\"t\xC3\xA9\"],\"n\":" + std::to_string(i * 7) + "}";
  }
  EXPECT_NE(expect_same_through_windows(many + "]}").find("element 299 ["), std::string::npos);
  expect_same_through_windows(many + ",{\"id\":1,\"id\":2}]}");
}

// A window read short (a file that shrank while it was read) ends the text there, as a whole text
// of those bytes would.
TEST(JsonReader, AWindowReadShortEndsTheText) {
  const std::string text = "{\"cases\":[1,2,3]}";
  for (std::size_t cut : {std::size_t{0}, std::size_t{5}, std::size_t{13}}) {
    WindowedText w;
    w.size = text.size();
    w.window_bytes = 4;
    w.read_at = [&](char* into, std::size_t n, std::size_t offset) {
      const std::size_t have = offset < cut ? std::min(n, cut - offset) : 0;
      std::copy_n(text.data() + offset, have, into);
      return have;
    };
    Result<Value> windowed = parse_object_streaming(
        w, {}, "cases", [](Value&&, std::size_t, std::size_t, std::size_t) {});
    Result<Value> whole = parse_object(text.substr(0, cut));
    ASSERT_FALSE(windowed.ok());
    EXPECT_EQ(windowed.diagnostics(), whole.diagnostics()) << cut;
  }
}

TEST(JsonReader, BuildsValuesInInputOrder) {
  Result<Value> r = parse(R"({"b":[true,null,"x"],"a":-1.5})");
  ASSERT_TRUE(r.ok());
  const Object& o = r->as_object();
  ASSERT_EQ(o.size(), 2u);
  EXPECT_EQ(o[0].key, "b");
  EXPECT_EQ(o[1].key, "a");
  EXPECT_EQ(o[1].value.as_number(), -1.5);
  const Array& b = o[0].value.as_array();
  ASSERT_EQ(b.size(), 3u);
  EXPECT_TRUE(b[0].as_bool());
  EXPECT_TRUE(b[1].is_null());
  EXPECT_EQ(b[2].as_string(), "x");
}

// Each container holds exactly its entries, and an empty one allocates nothing: the tree costs
// memory in proportion to the document (docs/json.md, "Memory per value").
TEST(JsonReader, ContainersAreSizedExactly) {
  Result<Value> r = parse(R"([[],{},[1,2,3],{"a":1,"b":[{}]}])");
  ASSERT_TRUE(r.ok());
  const Array& root = r->as_array();
  EXPECT_EQ(root.capacity(), 4u);
  EXPECT_EQ(root[0].as_array().capacity(), 0u);
  EXPECT_EQ(root[1].as_object().capacity(), 0u);
  EXPECT_EQ(root[2].as_array().capacity(), 3u);
  const Object& o = root[3].as_object();
  EXPECT_EQ(o.capacity(), 2u);
  EXPECT_EQ(o[1].value.as_array().capacity(), 1u);
  EXPECT_EQ(o[1].value.as_array()[0].as_object().capacity(), 0u);
  EXPECT_EQ(canonical(*r), R"([[],{},[1,2,3],{"a":1,"b":[{}]}])");
}

// Arrays and objects nested in each other keep their entries apart while they are open, and a
// diagnostic's pointer runs through every open container to the entry being read.
TEST(JsonReader, PointersThroughNestedContainers) {
  EXPECT_EQ(reject(R"({"a":[1,{"b":[true,{"c":1,"c":2}]}]})").pointer, "/a/1/b/1/c");
  EXPECT_EQ(reject(R"({"x":[{"y":[1,2,}]})").pointer, "/x/0/y/2");
  EXPECT_EQ(reject(R"([[],{"k":[0,{"z":1e999}]}])").pointer, "/1/k/1/z");
  EXPECT_EQ(reject(R"({"a":{"b":[[],[{"c":"\ud800"}]]}})").pointer, "/a/b/1/0/c");
  // A key may repeat in different objects, including an enclosing one after the inner closes.
  Result<Value> r = parse(R"({"k":{"k":{"k":[{"k":1},{"k":2}]}},"j":{"k":0}})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(canonical(*r), R"({"j":{"k":0},"k":{"k":{"k":[{"k":1},{"k":2}]}}})");
  EXPECT_EQ(reject(R"({"k":{"k":{"k":[]}},"j":1,"k":2})").pointer, "/k");
}

TEST(JsonReader, DuplicateKeyHasPointerLineAndColumn) {
  const auto d = reject("{\n  \"a\": {\"k\": 1,\n        \"k\": 2}\n}");
  EXPECT_EQ(d.code, "MF-S006");
  EXPECT_EQ(d.pointer, "/a/k");
  EXPECT_EQ(d.line, 3);
  EXPECT_EQ(d.column, 9);
}

TEST(JsonReader, DuplicateKeyInLargeObjectUsesIndex) {
  std::string text = "{";
  for (int i = 0; i < 100; ++i) text += "\"k" + std::to_string(i) + "\":" + std::to_string(i) + ",";
  EXPECT_TRUE(parse(text + "\"last\":0}").ok());
  const auto d = reject(text + "\"k57\":0}");
  EXPECT_EQ(d.code, "MF-S006");
  EXPECT_EQ(d.pointer, "/k57");
}

TEST(JsonReader, EscapedKeysAreComparedDecoded) {
  EXPECT_EQ(reject(R"({"a":1,"\u0061":2})").code, "MF-S006");
  EXPECT_EQ(reject(R"({"a/b":1,"a\/b":2})").pointer, "/a~1b");
}

TEST(JsonReader, RejectsNonFiniteAndOutOfRangeNumbers) {
  for (const char* text : {"[NaN]", "[Infinity]", "[-Infinity]", "[1e400]", "[-1e999]"}) {
    EXPECT_EQ(reject(text).code, "MF-S011") << text;
  }
  EXPECT_NE(reject("{\"x\": NaN}").message.find("NaN"), std::string::npos);
  EXPECT_EQ(reject("[1e400]").pointer, "/0");
}

TEST(JsonReader, RejectsTrailingContentIncludingNul) {
  EXPECT_EQ(reject("{} {}").code, "MF-S011");
  EXPECT_EQ(reject(std::string_view("{}\0", 3)).code, "MF-S011");
  EXPECT_EQ(reject(std::string_view("[1]\n\0 ", 6)).line, 2);
  EXPECT_TRUE(parse(" \t\r\n{}\n ").ok());
}

TEST(JsonReader, RejectsInvalidUtf8AndLoneSurrogates) {
  EXPECT_EQ(reject("[\"\xC3\x28\"]").code, "MF-S004");
  EXPECT_EQ(reject("[\"\xED\xA0\x80\"]").code, "MF-S004");  // raw encoded surrogate
  EXPECT_EQ(reject(R"(["\uDC00"])").code, "MF-S004");       // lone low surrogate escape
  EXPECT_EQ(reject(R"(["\uD800x"])").code, "MF-S004");      // high surrogate without low
  EXPECT_EQ(reject(R"({"\uDFFF":1})").code, "MF-S004");     // in a key
  Result<Value> ok = parse(R"(["\uD83D\uDE00"])");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->as_array()[0].as_string(), "\xF0\x9F\x98\x80");
}

TEST(JsonReader, DepthLimitWithoutStackOverflow) {
  ReadLimits limits;
  limits.max_depth = 3;
  EXPECT_TRUE(parse("[[[1]]]", limits).ok());
  const auto d = reject("[[[[1]]]]", limits);
  EXPECT_EQ(d.code, "MF-S010");
  EXPECT_EQ(d.pointer, "/0/0/0");
  // 100 000 open brackets with the default limit: a diagnostic, not a crash.
  EXPECT_EQ(reject(std::string(100000, '[')).code, "MF-S010");
  EXPECT_EQ(reject(std::string(100000, '{')).code, "MF-S011");  // '{' needs a key first
}

TEST(JsonReader, SizeEntryStringAndLexemeLimits) {
  ReadLimits limits;
  limits.max_bytes = 8;
  EXPECT_EQ(reject("[1,2,3,4,5]", limits).code, "MF-S003");
  limits = {};
  limits.max_entries = 3;
  EXPECT_TRUE(parse("[1,2,3]", limits).ok());
  EXPECT_EQ(reject("[1,2,3,4]", limits).code, "MF-S010");
  EXPECT_EQ(reject(R"({"a":1,"b":2,"c":3,"d":{}})", limits).code, "MF-S010");
  limits = {};
  limits.max_string_bytes = 4;
  EXPECT_EQ(reject(R"(["abcde"])", limits).code, "MF-S010");
  EXPECT_EQ(reject(R"({"abcde":1})", limits).code, "MF-S010");
  limits = {};
  limits.max_number_length = 5;
  EXPECT_TRUE(parse("[12345]", limits).ok());
  const auto d = reject("[1, 123456]", limits);
  EXPECT_EQ(d.code, "MF-S010");
  EXPECT_EQ(d.pointer, "/1");
}

TEST(JsonReader, ColumnsCountCodePoints) {
  const auto d = reject("{\"é€😀\": x}");
  EXPECT_EQ(d.code, "MF-S011");
  EXPECT_EQ(d.line, 1);
  EXPECT_EQ(d.column, 9);
}

TEST(JsonReader, LineOffsetShiftsLines) {
  Result<Value> r = parse("[1,,2]", {}, 41);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.diagnostics()[0].line, 42);
}

TEST(JsonReader, ExactIntegers) {
  auto number = [](const char* text) { return parse(text).value().as_array()[0]; };
  EXPECT_EQ(number("[9007199254740991]").as_exact_int(), 9007199254740991);
  EXPECT_EQ(number("[-9007199254740991]").as_exact_int(), -9007199254740991);
  EXPECT_EQ(number("[2.0e3]").as_exact_int(), 2000);
  EXPECT_FALSE(number("[9007199254740993]").as_exact_int());  // rounds to 2^53
  EXPECT_FALSE(number("[9007199254740992]").as_exact_int());
  EXPECT_FALSE(number("[1.5]").as_exact_int());
  EXPECT_FALSE(Value("1").as_exact_int());
}

TEST(JsonReader, ParseObjectRequiresObject) {
  Result<Value> r = parse_object("[1]");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.diagnostics()[0].code, "MF-S012");
  EXPECT_TRUE(parse_object("{}").ok());
}

TEST(JsonReader, EmptyDocumentIsMalformed) {
  EXPECT_EQ(reject("").code, "MF-S011");
  EXPECT_EQ(reject("   ").code, "MF-S011");
}

}  // namespace
}  // namespace mf::json
