#include "mf/json/pointer.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mf/diag/codes.hpp"

namespace {

using mf::json::Array;
using mf::json::Object;
using mf::json::Value;
namespace codes = mf::diag::codes;
using Tokens = std::vector<std::string>;

// The example document of RFC 6901 §5, built directly so these tests do not depend on the reader.
Value rfc6901_document() {
  return Value(Object{
      {"foo", Value(Array{"bar", "baz"})},
      {"", 0},
      {"a/b", 1},
      {"c%d", 2},
      {"e^f", 3},
      {"g|h", 4},
      {"i\\j", 5},
      {"k\"l", 6},
      {" ", 7},
      {"m~n", 8},
  });
}

// A document with nesting and every scalar kind, for the failure paths.
Value nested_document() {
  return Value(Object{
      {"list", Value(Array{10, Value(Object{{"deep", true}}), "s"})},
      {"scalar", "text"},
      {"nothing", nullptr},
      {"01", "key that looks like an index"},
  });
}

const mf::diag::Diagnostic& only_error(const mf::diag::Diagnostics& ds) {
  EXPECT_EQ(ds.size(), 1u);
  return ds.front();
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(PointerEscape, EscapesTildeBeforeSlash) {
  EXPECT_EQ(mf::json::escape_token("a/b~c"), "a~1b~0c");
  EXPECT_EQ(mf::json::escape_token("~1"), "~01");  // not "~1" again: '~' is escaped first
  EXPECT_EQ(mf::json::escape_token("/~"), "~1~0");
  EXPECT_EQ(mf::json::escape_token(""), "");
  EXPECT_EQ(mf::json::escape_token("plain"), "plain");
}

TEST(PointerEscape, AppendTokenAndIndex) {
  std::string p;
  mf::json::append_token(p, "graph");
  mf::json::append_token(p, "a/b");
  mf::json::append_index(p, 0);
  mf::json::append_index(p, 12);
  mf::json::append_token(p, "");
  EXPECT_EQ(p, "/graph/a~1b/0/12/");
}

TEST(PointerParse, EmptyPointerHasNoTokens) {
  auto r = mf::json::parse_pointer("");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->empty());
}

TEST(PointerParse, SplitsAndUnescapes) {
  struct Case {
    const char* pointer;
    Tokens tokens;
  };
  const Case cases[] = {
      {"/", {""}},        {"//", {"", ""}},   {"/a~1b/0", {"a/b", "0"}},
      {"/m~0n", {"m~n"}}, {"/~01", {"~1"}},  // unescape ~1 only after ~0 would wrongly give "/"
      {"/~10", {"/0"}},   {"/a/", {"a", ""}}, {"/ ", {" "}},
  };
  for (const Case& c : cases) {
    auto r = mf::json::parse_pointer(c.pointer);
    ASSERT_TRUE(r.ok()) << c.pointer;
    EXPECT_EQ(*r, c.tokens) << c.pointer;
  }
}

TEST(PointerParse, FormatRoundTrips) {
  for (const char* p : {"", "/", "//", "/a~1b/0", "/m~0n", "/~01", "/x/ /y"}) {
    auto r = mf::json::parse_pointer(p);
    ASSERT_TRUE(r.ok()) << p;
    EXPECT_EQ(mf::json::format_pointer(*r), p);
  }
  EXPECT_EQ(mf::json::format_pointer({"a/b", "~", ""}), "/a~1b/~0/");
}

TEST(PointerParse, MissingLeadingSlashIsS030) {
  for (const char* p : {"a", "a/b", "~0", "#/a"}) {
    auto r = mf::json::parse_pointer(p);
    ASSERT_FALSE(r.ok()) << p;
    const auto& d = only_error(r.diagnostics());
    EXPECT_EQ(d.code, codes::kBadPointer);
    EXPECT_TRUE(contains(d.message, "start with '/'")) << d.message;
  }
}

TEST(PointerParse, BadEscapeIsS030NamingTokenAndPrefix) {
  auto r = mf::json::parse_pointer("/x/a~2/y");
  ASSERT_FALSE(r.ok());
  const auto& d = only_error(r.diagnostics());
  EXPECT_EQ(d.code, codes::kBadPointer);
  EXPECT_TRUE(contains(d.message, "'a~2'")) << d.message;
  EXPECT_TRUE(contains(d.message, "'/x'")) << d.message;

  for (const char* p : {"/~", "/a~", "/~a", "/~~0", "/~/"}) {
    auto bad = mf::json::parse_pointer(p);
    ASSERT_FALSE(bad.ok()) << p;
    EXPECT_EQ(only_error(bad.diagnostics()).code, codes::kBadPointer) << p;
  }
}

TEST(PointerResolve, Rfc6901Section5Examples) {
  const Value doc = rfc6901_document();
  struct Case {
    const char* pointer;
    Value expected;
  };
  const Case cases[] = {
      {"", doc},         {"/foo", Value(Array{"bar", "baz"})},
      {"/foo/0", "bar"}, {"/", 0},
      {"/a~1b", 1},      {"/c%d", 2},
      {"/e^f", 3},       {"/g|h", 4},
      {"/i\\j", 5},      {"/k\"l", 6},
      {"/ ", 7},         {"/m~0n", 8},
  };
  for (const Case& c : cases) {
    auto r = mf::json::resolve(doc, c.pointer);
    ASSERT_TRUE(r.ok()) << c.pointer << ": " << r.diagnostics().front().message;
    EXPECT_EQ(**r, c.expected) << c.pointer;
  }
  // The whole-document pointer names the root itself, not a copy.
  EXPECT_EQ(*mf::json::resolve(doc, ""), &doc);
}

TEST(PointerResolve, NestedValues) {
  const Value doc = nested_document();
  auto deep = mf::json::resolve(doc, "/list/1/deep");
  ASSERT_TRUE(deep.ok());
  EXPECT_EQ(**deep, Value(true));
  auto last = mf::json::resolve(doc, "/list/2");
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(**last, Value("s"));
  // Object members are looked up by name even when the name looks like a non-canonical index.
  auto key = mf::json::resolve(doc, "/01");
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(**key, Value("key that looks like an index"));
}

struct Failure {
  const char* pointer;
  const char* failed_at;  // the prefix that resolved, reported as the diagnostic's pointer
  const char* token;      // as it appears (escaped) in the message
  const char* reason;     // a fragment of the explanation
};

TEST(PointerResolve, FailuresAreS030NamingTokenAndPrefix) {
  const Value doc = nested_document();
  const Failure cases[] = {
      {"/absent", "", "absent", "no such member"},
      {"/list/1/absent", "/list/1", "absent", "no such member"},
      {"/list/1/deep/x", "/list/1/deep", "x", "boolean"},
      {"/scalar/0", "/scalar", "0", "string"},
      {"/nothing/a", "/nothing", "a", "null"},
      {"/list/0/x", "/list/0", "x", "number"},
      {"/list/01", "/list", "01", "leading zeros"},
      {"/list/00", "/list", "00", "leading zeros"},
      {"/list/-", "/list", "-", "after the last"},
      {"/list/3", "/list", "3", "out of range for an array of 3 elements"},
      {"/list/+1", "/list", "+1", "decimal"},
      {"/list/-1", "/list", "-1", "decimal"},
      {"/list/1e0", "/list", "1e0", "decimal"},
      {"/list/ 1", "/list", " 1", "decimal"},
      {"/list/", "/list", "", "decimal"},
      {"/list/99999999999999999999999", "/list", "99999999999999999999999", "out of range"},
      {"/list/18446744073709551616", "/list", "18446744073709551616", "out of range"},
      {"/a~1b", "", "a~1b", "no such member"},
  };
  for (const Failure& c : cases) {
    auto r = mf::json::resolve(doc, c.pointer);
    ASSERT_FALSE(r.ok()) << c.pointer;
    const auto& d = only_error(r.diagnostics());
    EXPECT_EQ(d.code, codes::kBadPointer) << c.pointer;
    EXPECT_EQ(d.pointer, c.failed_at) << c.pointer;
    EXPECT_TRUE(contains(d.message, std::string("token '") + c.token + "'")) << d.message;
    EXPECT_TRUE(contains(d.message, c.reason)) << d.message;
    if (*c.failed_at != '\0') {
      EXPECT_TRUE(contains(d.message, std::string("at '") + c.failed_at + "'")) << d.message;
    } else {
      EXPECT_TRUE(contains(d.message, "document root")) << d.message;
    }
  }
}

TEST(PointerResolve, SingleElementArrayMessageIsSingular) {
  const Value doc(Array{1});
  auto r = mf::json::resolve(doc, "/1");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.diagnostics().front().message, "array of 1 element"))
      << r.diagnostics().front().message;
}

TEST(PointerResolve, MalformedPointerIsS030) {
  const Value doc = rfc6901_document();
  for (const char* p : {"foo", "/m~2n"}) {
    auto r = mf::json::resolve(doc, p);
    ASSERT_FALSE(r.ok()) << p;
    EXPECT_EQ(only_error(r.diagnostics()).code, codes::kBadPointer) << p;
  }
}

TEST(PointerResolve, ScalarRootResolvesOnlyTheEmptyPointer) {
  const Value doc(42);
  auto whole = mf::json::resolve(doc, "");
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(**whole, Value(42));
  auto r = mf::json::resolve(doc, "/");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(only_error(r.diagnostics()).code, codes::kBadPointer);
}

// find_at answers exactly where resolve does, and nullptr where resolve has a diagnostic.
TEST(PointerFindAt, AgreesWithResolve) {
  const Value doc = Object{{"a", Array{Value(1), Object{{"b/c", Value("x")}}}}, {"", Value(2)}};
  for (const char* p : {"", "/a", "/a/0", "/a/1/b~1c", "/", "/a/2", "/a/01", "/a/-", "/a/0/z",
                        "/nope", "a", "/a/1/b~2"}) {
    auto resolved = mf::json::resolve(doc, p);
    const Value* found = mf::json::find_at(doc, p);
    EXPECT_EQ(found, resolved ? *resolved : nullptr) << p;
  }
}

}  // namespace
