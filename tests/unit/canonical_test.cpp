#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "mf/hash/sha256.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"

namespace mf::json {
namespace {

std::string canon(std::string_view text) {
  Result<Value> r = parse(text);
  EXPECT_TRUE(r.ok()) << text;
  return r.ok() ? canonical(*r) : std::string();
}

std::string number(double d) {
  std::string out;
  write_number(d, out);
  return out;
}

TEST(Canonical, SortsMembersRecursivelyAndDropsWhitespace) {
  EXPECT_EQ(canon(R"({ "b" : [ 1 , { "z":1, "a":2 } ], "a" : null })"),
            R"({"a":null,"b":[1,{"a":2,"z":1}]})");
}

TEST(Canonical, MemberOrderIsUtf16NotCodePoint) {
  // U+1F600 is D83D DE00 in UTF-16, so it sorts before U+FB33 although its code point is larger.
  EXPECT_EQ(canon("{\"\uFB33\":1,\"\U0001F600\":2,\"\u20AC\":3}"),
            "{\"\u20AC\":3,\"\U0001F600\":2,\"\uFB33\":1}");
  EXPECT_LT(compare_utf16("\U0001F600", "\uFB33"), 0);
  EXPECT_GT(compare_utf16("\uE000", "\U00010000"), 0);
  EXPECT_LT(compare_utf16("\uD7FF", "\U00010000"), 0);
  EXPECT_LT(compare_utf16("a", "ab"), 0);
  EXPECT_EQ(compare_utf16("ab", "ab"), 0);
}

TEST(Canonical, MinimalEscapes) {
  EXPECT_EQ(canon(R"(["\u0041\/\"\\\b\f\n\r\t\u0001\u001f\u007f\u2028é"])"),
            "[\"A/\\\"\\\\\\b\\f\\n\\r\\t\\u0001\\u001f\x7f\u2028\u00e9\"]");
  std::string out;
  write_string(std::string_view("\0", 1), out);
  EXPECT_EQ(out, "\"\\u0000\"");
}

TEST(Canonical, Es6Numbers) {
  EXPECT_EQ(number(0.0), "0");
  EXPECT_EQ(number(-0.0), "0");
  EXPECT_EQ(number(1), "1");
  EXPECT_EQ(number(-1.5), "-1.5");
  EXPECT_EQ(number(0.1), "0.1");
  EXPECT_EQ(number(1e21), "1e+21");
  EXPECT_EQ(number(1e20), "100000000000000000000");
  EXPECT_EQ(number(123456789012345680000.0), "123456789012345680000");
  EXPECT_EQ(number(1e-6), "0.000001");
  EXPECT_EQ(number(1e-7), "1e-7");
  EXPECT_EQ(number(1.5e-7), "1.5e-7");
  EXPECT_EQ(number(5e-324), "5e-324");
  EXPECT_EQ(number(1.7976931348623157e308), "1.7976931348623157e+308");
  EXPECT_EQ(number(9007199254740993.0), "9007199254740992");
  EXPECT_EQ(number(333333333.33333329), "333333333.3333333");
  EXPECT_EQ(number(std::numeric_limits<double>::quiet_NaN()), "null");
}

TEST(Canonical, FileFormEndsWithNewlineAndDigestExcludesIt) {
  const Value v = parse(R"({"b":2,"a":1})").value();
  EXPECT_EQ(canonical_file(v), "{\"a\":1,\"b\":2}\n");
  EXPECT_EQ(canonical_digest(v), hash::sha256_hex("{\"a\":1,\"b\":2}"));
}

TEST(Canonical, ReadingCanonicalBytesIsIdempotent) {
  const std::string once = canon(R"({"x":[1E2,-0.0,"\ud83d\ude00",{"b":{},"a":[]}],"€":true})");
  EXPECT_EQ(canon(once), once);
}

// Redaction reaches every string and member name at any depth, and keeps redacted names distinct.
TEST(RedactSecrets, EveryStringAndNameAtAnyDepth) {
  const std::string a = "sk-" + std::string(30, 'a') + "123";
  const std::string b = "sk-" + std::string(30, 'b') + "456";
  Value v = parse("{\"" + a + "\":1,\"" + b + "\":2,\"deep\":[[{\"x\":\"key=" + a +
                  "\"}]],\"plain\":\"nothing here\"}")
                .value();
  EXPECT_TRUE(redact_secrets(v));
  const std::string out = canonical(v);
  EXPECT_EQ(out.find("sk-aaa"), std::string::npos) << out;
  EXPECT_EQ(out.find("sk-bbb"), std::string::npos) << out;
  EXPECT_TRUE(parse(out).ok()) << out;  // no duplicate member names
  EXPECT_EQ(v.as_object().size(), 4u);
  EXPECT_EQ(v.find("plain")->as_string(), "nothing here");
  Value clean = parse(R"({"a":["b",{"c":"d"}]})").value();
  EXPECT_FALSE(redact_secrets(clean));
}

}  // namespace
}  // namespace mf::json
