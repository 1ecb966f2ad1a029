// The one-pass canonicalizer (Canonicalizer in mf/json/canonical.hpp, behind Tape::canonicalize)
// against the tree writer: the number, escape and member-order cases it writes its own way give the
// same bytes as canonical(parse(text)); what it declines leaves the output as it was; its buffers
// grow for output longer than the input and are reused between documents of any size.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"

namespace mf::json {
namespace {

// canonical(parse(text)), or "<rejected>".
std::string tree_form(std::string_view text, const ReadLimits& limits = {}) {
  const Result<Value> v = parse(text, limits);
  return v.ok() ? canonical(*v) : "<rejected>";
}

// What the canonicalizer appends after a kept prefix, or "<declined>" when it leaves `out` as it
// was.
std::string one_pass(Canonicalizer& c, std::string_view text, const ReadLimits& limits = {}) {
  std::string out = "kept";
  if (!c.append(text, limits, out)) {
    EXPECT_EQ(out, "kept") << "a decline changed the output: " << text;
    return "<declined>";
  }
  EXPECT_EQ(out.substr(0, 4), "kept");
  return out.substr(4);
}

TEST(Canonicalizer, WritesNumbersAsTheTreeWriterDoes) {
  Canonicalizer c;
  for (const char* n : {"0",
                        "-0",
                        "-0.0",
                        "0e5",
                        "-0E-3",
                        "1",
                        "-1",
                        "123456789012345",
                        "-123456789012345",
                        "1234567890123456",
                        "9007199254740993",
                        "12345678901234567890",
                        "1e20",
                        "1e21",
                        "1E21",
                        "1e+21",
                        "100000000000000000000",
                        "1000000000000000000000",
                        "0.1",
                        "0.30000000000000004",
                        "2.50",
                        "1.0",
                        "100e-2",
                        "5e-7",
                        "5E-7",
                        "1e-7",
                        "0.000001",
                        "0.0000001",
                        "-1.5e-10",
                        "123.456",
                        "6.02214076e23",
                        "1.7976931348623157e308",
                        "5e-324",
                        "4.9e-324",
                        "2.5e-8",
                        "1e308",
                        "0.1e1",
                        "10.0e-1",
                        "1e-6",
                        "-1e-7",
                        "9.999999999999999e20",
                        "1.2e-5"}) {
    const std::string doc = std::string("[") + n + "]";
    EXPECT_EQ(one_pass(c, doc), tree_form(doc)) << n;
  }
}

// Decimals of up to 15 significant digits are laid out from their own digits, without a double;
// longer ones, and exponents near the ends of the range, go through the double. Both agree with
// the tree writer across digit counts, zero padding, signs and exponents.
TEST(Canonicalizer, WritesRandomDecimalsAsTheTreeWriterDoes) {
  Canonicalizer c;
  std::mt19937_64 rng(20261205);
  const auto digits = [&](int count) {
    std::string s;
    for (int i = 0; i < count; ++i) s.push_back(static_cast<char>('0' + rng() % 10));
    return s;
  };
  for (int round = 0; round < 20000; ++round) {
    std::string n = rng() % 4 == 0 ? "-" : "";
    const int int_len = static_cast<int>(rng() % 18);
    n += int_len == 0 ? "0" : std::to_string(1 + rng() % 9) + digits(int_len - 1);
    if (rng() % 3 != 0)
      n += "." + std::string(rng() % 3 == 0 ? rng() % 8 : 0, '0') +
           digits(1 + static_cast<int>(rng() % 17));
    if (rng() % 2 == 0) {
      n += rng() % 2 == 0 ? "e" : "E";
      const int range = rng() % 8 == 0 ? 330 : 30;
      n += std::to_string(static_cast<int>(rng() % (2 * range + 1)) - range);
    }
    const std::string doc = "[" + n + "]";
    const std::string tree = tree_form(doc);
    if (tree == "<rejected>") continue;  // out of range: the strict reader's to judge
    const std::string got = one_pass(c, doc);
    if (got == "<declined>") {
      EXPECT_NE(n.find_first_of("eE"), std::string::npos)
          << "only a large exponent declines: " << n;
      continue;
    }
    ASSERT_EQ(got, tree) << n;
  }
}

TEST(Canonicalizer, RewritesOnlyTheEscapesJcsWritesOtherwise) {
  Canonicalizer c;
  for (const char* s : {
           R"("plain ascii, long enough to span more than one sixteen-byte block")",
           R"("\" \\ \b \f \n \r \t")",                           // JCS's own escapes, kept
           R"("\u0000\u0001\u001f\u000b")",                       // \u00xx lowercase, kept
           R"("\u001F\u000B\u00Ff")",                             // uppercase hex, lowercased
           R"("\u0008\u0009\u000a\u000C\u000d")",                 // short escapes for these five
           R"("\u0022\u005c\u005C\/")",                           // quote, backslash, solidus
           R"("\u0041\u007f\u00e9\u4E2D\u2028\uffff")",           // written raw
           R"("\ud83d\ude80\uD834\uDD1E")",                       // surrogate pairs to four bytes
           "\"caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80 \x7f\"",  // raw UTF-8 and DEL
           R"("\n\/\u00e9x\"\u0001\/")",                          // every kind in one string
           R"("0123456789abcde\n0123456789abcdef\/0123456789abcdefg\u00e9")",  // across blocks
       }) {
    EXPECT_EQ(one_pass(c, s), tree_form(s)) << s;
    const std::string in_array = std::string("[") + s + "," + s + "]";
    EXPECT_EQ(one_pass(c, in_array), tree_form(in_array)) << in_array;
  }
}

TEST(Canonicalizer, SortsMembersByDecodedKeysInUtf16Order) {
  Canonicalizer c;
  for (const char* doc : {
           R"({"b":1,"a":2,"c":3})",
           R"({ "z" : [ 3 , 2 ] , "y" : { "k2" : 1 , "k1" : { "n" : null , "m" : true } } })",
           R"({"\n":1,"\\":2,"a":3,"\"":4,"\u0001":5,"\u0000":6})",  // escaped keys sort decoded
           R"({"\u0061b":1,"aa":2,"a\/":3})",                        // rewritten escapes too
           "{\"\xef\xbd\xa1\":1,\"\xf0\x9f\x98\x80\":2,\"\xee\x80\x80\":3,\"z\":4}",  // astral
                                                                                      // first
           R"({"\ud83d\ude00":1,"\uff61":2})",
           R"({"a":{"d":{},"c":[]},"b":{"f":"x","e":"y"},"":0})",
           R"([{"b":1,"a":2},{"d":3,"c":4},{}])",
           R"({"ab":1,"a":2,"abc":3,"b":4})",  // prefixes
           R"({"x":{"k6":1,"k":1}})",          // in order at the root, not inside
           R"({"x":{"k6":1,"k":1},"y":[]})",
           R"({"b":{"d":1,"c":2},"a":{"f":1,"e":2}})",
           R"({"b":1,"a":{"d":1,"c":2}})",
       }) {
    EXPECT_EQ(one_pass(c, doc), tree_form(doc)) << doc;
  }
}

TEST(Canonicalizer, DeclinesWhatTheStrictReaderMustJudge) {
  Canonicalizer c;
  for (const char* doc : {
           R"({"a":1,"a":2})",
           R"({"a":1,"\u0061":2})",
           R"({"b":{"x":1,"x":1},"a":0})",
           R"({"\n":1,"\u000a":2})",
           R"(["\ud800"])",
           R"(["\udc00"])",
           R"(["\ud800\u0041"])",
           R"(["\x"])",
           R"(["\u12"])",
           "[\"\x01\"]",
           "[\"ab",
           "[1,]",
           "{\"a\"}",
           "[01]",
           "[1e400]",
           "[1] x",
           "[\"\xc3\"]",
           "{\"a\":1,}",
           "[-]",
           "[tru]",
           "",
       }) {
    EXPECT_EQ(one_pass(c, doc), "<declined>") << doc;
  }
}

TEST(Canonicalizer, DeclinesPastEachLimitAsTheTapeDoes) {
  Canonicalizer c;
  ReadLimits limits;
  limits.max_depth = 2;
  limits.max_entries = 2;
  limits.max_string_bytes = 3;
  limits.max_number_length = 4;
  EXPECT_EQ(one_pass(c, "[[1]]", limits), "[[1]]");
  EXPECT_EQ(one_pass(c, "[[[1]]]", limits), "<declined>");
  EXPECT_EQ(one_pass(c, "[1,2]", limits), "[1,2]");
  EXPECT_EQ(one_pass(c, "[1,2,3]", limits), "<declined>");
  EXPECT_EQ(one_pass(c, R"({"b":1,"a":2,"c":3})", limits), "<declined>");
  // The string bound counts decoded bytes: six source bytes of escapes are two decoded.
  EXPECT_EQ(one_pass(c, R"(["\n\u0041c"])", limits), "[\"\\nAc\"]");
  EXPECT_EQ(one_pass(c, R"(["abcd"])", limits), "<declined>");
  EXPECT_EQ(one_pass(c, "[1.25]", limits), "[1.25]");
  EXPECT_EQ(one_pass(c, "[1.125]", limits), "<declined>");
}

TEST(Canonicalizer, GrowsForNumbersLongerThanTheirLexemesAndReusesItsBuffers) {
  Canonicalizer c;
  // Each "1e20" (4 bytes) is written as 21 digits: the output is five times the input.
  std::string wide = "[";
  for (int i = 0; i < 5000; ++i) wide += i == 0 ? "1e20" : ",1e20";
  wide += "]";
  // Then a short document, a long one, and the wide one again, through the same scratch.
  std::string long_doc = "{";
  for (int i = 0; i < 3000; ++i) {
    if (i > 0) long_doc += ",";
    long_doc += "\"k" + std::to_string((i * 7919) % 3000) + "\":[\"\\u00e9\\/\",-0.0,5E-7]";
  }
  long_doc += "}";
  for (const std::string& doc : {wide, std::string(R"({"b":1,"a":1e21})"), long_doc, wide}) {
    const std::string expected = tree_form(doc);
    ASSERT_NE(expected, "<rejected>");
    EXPECT_EQ(one_pass(c, doc), expected) << doc.substr(0, 40);
  }
}

}  // namespace
}  // namespace mf::json
