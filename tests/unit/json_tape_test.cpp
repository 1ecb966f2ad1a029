// The reader's fast path (mf/json/tape.hpp) against the strict reader: hand-picked edges, the
// fuzz seeds, and a deterministic mutation run over them (the tape_differential fuzz target
// explores further). The View accessors the trace verifier relies on.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "fuzz/tape_oracle.hpp"

namespace mf::json {
namespace {

using oracle::tape_disagreement;

ReadLimits small_limits() {
  ReadLimits limits;
  limits.max_bytes = 1u << 16;
  limits.max_depth = 4;
  limits.max_number_length = 12;
  limits.max_string_bytes = 8;
  limits.max_entries = 3;
  return limits;
}

const std::vector<std::string>& edges() {
  static const std::vector<std::string> cases = {
      "",
      " ",
      "{}",
      "[]",
      "[ ]",
      "{ }",
      " {} ",
      "{}\n",
      "0",
      "-0",
      "-0.0",
      "1",
      "01",
      "1.",
      ".5",
      "1e5",
      "1E+5",
      "1e400",
      "1e-400",
      "100000000000000000000",
      "123456789012345",
      "1234567890123456",
      "12345678901234567890",
      "0.1",
      "1.0",
      "5e-324",
      "-",
      "--1",
      "+1",
      "1.5e+2x",
      "true",
      "tru",
      "falsey",
      "null",
      "nul",
      "\"\"",
      "\"a\"",
      "\"\\u0000\"",
      "\"\\u001f\"",
      "\"\\u001F\"",
      "\"\\u0020\"",
      "\"\\n\"",
      "\"\\u000a\"",
      "\"\\/\"",
      "\"/\"",
      "\"\\ud83d\\ude00\"",
      "\"\\ud83d\"",
      "\"\\ude00\"",
      "\"\\ud83d\\u0041\"",
      "\"\\x\"",
      "\"\x7f\"",
      "\"\xc3\xa9\"",
      "\"\xc0\xaf\"",
      "\"\xed\xa0\x80\"",
      "\"\xf4\x90\x80\x80\"",
      "\"\xe2\x82\"",
      "\"\t\"",
      "\"abc",
      "{\"a\":1,\"a\":2}",
      "{\"b\":1,\"a\":2}",
      "{\"a\":1,\"b\":2}",
      "{\"a\" : 1}",
      "{\"a\":1,}",
      "[1,]",
      "[1 2]",
      "{\"a\"}",
      "{1:2}",
      "[[[[]]]]",
      "[[[[[]]]]]",
      "[1,2,3]",
      "[1,2,3,4]",
      "{\"a\":1,\"b\":2,\"c\":3,\"d\":4}",
      "\"123456789\"",
      "\"12345678\"",
      "1234567890123",
      "{\"\xef\xbd\xa1\":1,\"\xf0\x9f\x98\x80\":2}",
      "{\"\xf0\x9f\x98\x80\":2,\"\xef\xbd\xa1\":1}",
      "[\"a\\\"b\"]",
      "{\"\":0}",
      "[1]x",
      "[1]\x00",
      std::string("\"a\0b\"", 5),
      std::string("[\0]", 3),
  };
  return cases;
}

TEST(Tape, AgreesWithTheStrictReaderOnEdges) {
  for (const std::string& text : edges()) {
    EXPECT_EQ(tape_disagreement(text, {}), "") << "input: " << text;
    EXPECT_EQ(tape_disagreement(text, small_limits()), "") << "input (small limits): " << text;
  }
}

TEST(Tape, LeavesAnExponentPast308ToTheStrictReader) {
  // RapidJSON's bound on a positive exponent counts the fraction's digits: it reads
  // -0.0623157e309 as -6.23157e307. The tape declines any exponent past 308 (the caller then reads
  // the strict way), and the oracle allows exactly that decline.
  const std::string text = "[-0.0623157e309]";
  ASSERT_TRUE(parse(text).ok());
  Tape tape;
  std::string out;
  EXPECT_FALSE(tape.canonicalize(text, {}, out));
  EXPECT_EQ(tape_disagreement(text, {}), "");
  EXPECT_TRUE(oracle::has_exponent_past_308(text));
  EXPECT_TRUE(oracle::has_exponent_past_308("[1.5E+400]"));
  EXPECT_FALSE(oracle::has_exponent_past_308("[1e308,1e-400]"));
  EXPECT_FALSE(oracle::has_exponent_past_308("[\"1e309\",\"\\\"2e999\"]"));
  EXPECT_FALSE(oracle::has_exponent_past_308("[true,false]"));
}

// An escaped string is decoded with its plain runs copied 16 bytes at a time and the last bytes
// one at a time: every escape after plain runs of 0..40 bytes, so each lands at every offset of a
// block and near the end of the document, in values and in keys, closed, unclosed, or cut by a
// raw control character.
TEST(Tape, AgreesWithTheStrictReaderOnEscapesAtEveryOffset) {
  const std::vector<std::string> escapes = {
      "\\\"",    "\\\\", "\\n",     "\\t",     "\\b",      "\\f",
      "\\r",     "\\/",  "\\u001f", "\\u00e9", "\\u00E9",  "\\ud83d\\ude00",
      "\\ud83d", "\\x",  "\\u12",   "\\",      "\xc3\xa9", "\x1f"};
  for (const std::string& escape : escapes) {
    for (std::size_t before = 0; before <= 40; ++before) {
      for (const std::size_t after : {std::size_t{0}, std::size_t{1}, std::size_t{15},
                                      std::size_t{16}, std::size_t{17}, std::size_t{33}}) {
        const std::string body =
            std::string(before, 'a') + escape + std::string(after, 'b') + escape + "c";
        for (const std::string& text :
             {"[\"" + body + "\"]", "\"" + body + "\"", "\"" + body, "{\"" + body + "\":1}",
              "{\"k\":\"" + body + "\",\"l\":\"" + escape + "\"}", "[\"" + body + "\x01\"]"}) {
          ASSERT_EQ(tape_disagreement(text, {}), "") << "input: " << text;
        }
      }
    }
  }
}

std::vector<std::string> seeds() {
  std::vector<std::string> out = edges();
  const auto dir = std::filesystem::path(MF_SOURCE_DIR) / "tests/fuzz/corpus/tape_differential";
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(e.path(), std::ios::binary);
    out.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return out;
}

TEST(Tape, AgreesWithTheStrictReaderUnderMutation) {
  const std::vector<std::string> base = seeds();
  ASSERT_GT(base.size(), edges().size()) << "the fuzz corpus is missing";
  static const char kBytes[] =
      "{}[]\",:\\u0123456789abcdefABCDEF.eE+- \t\ntrufalsn\x7f\xc3\xa9\xed\xf0";
  std::mt19937_64 rng(20261204);
  for (int round = 0; round < 40000; ++round) {
    std::string text = base[rng() % base.size()];
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const std::size_t at = text.empty() ? 0 : rng() % (text.size() + 1);
      const char c = kBytes[rng() % (sizeof kBytes - 1)];
      switch (rng() % 3) {
        case 0:
          text.insert(text.begin() + static_cast<std::ptrdiff_t>(at), c);
          break;
        case 1:
          if (at < text.size()) text.erase(at, 1);
          break;
        default:
          if (at < text.size()) text[at] = c;
      }
    }
    const std::string why = tape_disagreement(text, round % 2 == 0 ? ReadLimits{} : small_limits());
    ASSERT_EQ(why, "") << "input: " << text;
  }
}

TEST(Tape, ViewReadsMembersElementsAndRawBytes) {
  Tape tape;
  const std::string text =
      R"({"a":[1,"x\ny",{"k":true}],"b":null,"c":-2.5,"d":"\u001f","e":9007199254740992})";
  ASSERT_TRUE(tape.read_canonical(text));
  const View root = tape.root();
  ASSERT_TRUE(root.is_object());
  EXPECT_EQ(root.size(), 5u);
  EXPECT_EQ(root.key_at(2), "c");
  const View a = root.find("a");
  ASSERT_TRUE(a.is_array());
  EXPECT_EQ(a.size(), 3u);
  EXPECT_EQ(a.at(0).as_exact_int(), 1);
  EXPECT_EQ(a.at(1).as_string(), "x\ny");
  EXPECT_EQ(a.at(1).raw(), R"("x\ny")");
  EXPECT_TRUE(a.at(2).find("k").as_bool());
  EXPECT_EQ(a.at(2).raw(), R"({"k":true})");
  EXPECT_TRUE(root.find("b").is_null());
  EXPECT_EQ(root.find("c").as_number(), -2.5);
  EXPECT_EQ(root.find("c").as_exact_int(), std::nullopt);
  EXPECT_EQ(root.find("d").as_string(), "\x1f");
  EXPECT_EQ(root.find("e").as_exact_int(), std::nullopt) << "beyond 2^53-1";
  EXPECT_FALSE(root.find("z"));
  EXPECT_FALSE(root.find("z").is_string());
  EXPECT_FALSE(a.find("a")) << "find on an array";
  std::string keys;
  root.each([&](std::string_view k, View) {
    keys += k;
    return k != "c";
  });
  EXPECT_EQ(keys, "abc");
}

TEST(Tape, CanonicalizeDeclinesADuplicateLeavingTheOutput) {
  Tape tape;
  std::string out = "x";
  EXPECT_FALSE(tape.canonicalize(R"({"b":{"y":1,"x":2,"y":3},"a":1})", {}, out));
  EXPECT_EQ(out, "x");
  EXPECT_TRUE(
      tape.canonicalize(R"({ "b" : { "y" : 1e2, "x" : "\u00e9\/" }, "a" : [ 1.50 ] })", {}, out));
  EXPECT_EQ(out, "x{\"a\":[1.5],\"b\":{\"x\":\"\xc3\xa9/\",\"y\":100}}");
}

}  // namespace
}  // namespace mf::json
