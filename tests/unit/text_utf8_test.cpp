// The UTF-8 check (mf/text/utf8.hpp) against the byte-by-byte validator it replaced (one
// utf8_sequence_length per character) and against a plain decoder of RFC 3629: exhaustively over
// short strings, and for every boundary case at every offset around the 8- and 16-byte chunks of
// the fast path. Also the JSON tape, which checks a document's UTF-8 once before scanning.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/tape_oracle.hpp"
#include "mf/text/utf8.hpp"

namespace mf::text {
namespace {

// The validator as it was: one character at a time, through utf8_sequence_length.
std::size_t byte_by_byte(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t len = utf8_sequence_length(s, i);
    if (len == 0) return i;
    i += len;
  }
  return std::string_view::npos;
}

// RFC 3629 decoded literally: the code point is computed and then refused when overlong, a
// surrogate or above U+10FFFF. Independent of the lead-byte table both others share.
std::size_t decoder(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  for (std::size_t i = 0; i < s.size();) {
    const unsigned b = p[i];
    std::size_t len = 0;
    std::uint32_t cp = 0, min = 0;
    if (b < 0x80) {
      ++i;
      continue;
    } else if ((b & 0xE0) == 0xC0) {
      len = 2, cp = b & 0x1F, min = 0x80;
    } else if ((b & 0xF0) == 0xE0) {
      len = 3, cp = b & 0x0F, min = 0x800;
    } else if ((b & 0xF8) == 0xF0) {
      len = 4, cp = b & 0x07, min = 0x10000;
    } else {
      return i;
    }
    if (s.size() - i < len) return i;
    for (std::size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return i;
      cp = cp << 6 | (p[i + k] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += len;
  }
  return std::string_view::npos;
}

void expect_agree(std::string_view s) {
  const std::size_t fast = utf8_error_offset(s);
  ASSERT_EQ(fast, byte_by_byte(s)) << testing::PrintToString(std::string(s));
  ASSERT_EQ(fast, decoder(s)) << testing::PrintToString(std::string(s));
}

TEST(Utf8, AgreesOnEveryStringOfUpToThreeBytes) {
  std::string s;
  for (unsigned a = 0; a < 256; ++a) {
    expect_agree(std::string(1, static_cast<char>(a)));
    for (unsigned b = 0; b < 256; ++b) {
      s = {static_cast<char>(a), static_cast<char>(b)};
      expect_agree(s);
      if (a < 0xC0 && b < 0x80) continue;  // the third byte is checked alone above
      for (unsigned c = 0; c < 256; ++c) {
        s = {static_cast<char>(a), static_cast<char>(b), static_cast<char>(c)};
        expect_agree(s);
      }
    }
  }
}

TEST(Utf8, AgreesOnEveryFourByteLeadAndSecondByte) {
  const unsigned tails[] = {0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0xBF, 0xC0, 0xFF};
  for (unsigned a = 0xC0; a < 256; ++a) {
    for (unsigned b = 0; b < 256; ++b) {
      for (const unsigned c : tails) {
        for (const unsigned d : tails) {
          const char s[] = {static_cast<char>(a), static_cast<char>(b), static_cast<char>(c),
                            static_cast<char>(d)};
          expect_agree(std::string_view(s, 4));
        }
      }
    }
  }
}

// Sequences at the edges of Table 3-7, well-formed and not.
const std::vector<std::string>& boundary_cases() {
  static const std::vector<std::string> cases = {
      "\xC2\x80",
      "\xDF\xBF",  // the 2-byte range
      "\xE0\xA0\x80",
      "\xEF\xBF\xBF",  // the 3-byte range
      "\xED\x9F\xBF",
      "\xEE\x80\x80",  // around the surrogates
      "\xF0\x90\x80\x80",
      "\xF4\x8F\xBF\xBF",  // the 4-byte range, up to U+10FFFF
      "\xC0\x80",
      "\xC1\xBF",  // overlong 2-byte
      "\xE0\x80\x80",
      "\xE0\x9F\xBF",  // overlong 3-byte
      "\xF0\x80\x80\x80",
      "\xF0\x8F\xBF\xBF",  // overlong 4-byte
      "\xED\xA0\x80",
      "\xED\xBF\xBF",  // surrogates
      "\xF4\x90\x80\x80",
      "\xF7\xBF\xBF\xBF",  // above U+10FFFF
      "\xF5\x80\x80\x80",
      "\xF8\x88\x80\x80\x80",  // leads that never start a sequence
      "\xFE",
      "\xFF",
      "\x80",
      "\xBF",  // stray bytes
      "\xC3\x28",
      "\xE2\x82\x28",
      "\xF0\x9F\x98\x28",  // a continuation replaced by ASCII
  };
  return cases;
}

TEST(Utf8, AgreesOnBoundaryCasesAtEveryOffsetAndTruncation) {
  std::vector<std::string> pieces = boundary_cases();
  // Every proper prefix of every sequence: a sequence cut short, in the middle or at the end.
  for (const std::string& c : boundary_cases()) {
    for (std::size_t k = 1; k < c.size(); ++k) pieces.push_back(c.substr(0, k));
  }
  for (const std::string& piece : pieces) {
    for (std::size_t before = 0; before <= 40; ++before) {
      for (const std::size_t after :
           {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{15}, std::size_t{33}}) {
        std::string s(before, 'a');
        s += piece;
        s.append(after, 'z');
        expect_agree(s);
        // The same behind a valid multi-byte run, so the check is not in its ASCII loop there.
        expect_agree("\xC3\xA9\xE6\x97\xA5" + s);
        expect_agree(s + "\xF0\x9F\x98\x80");
      }
    }
  }
}

TEST(Utf8, AgreesOnRandomMixtures) {
  static const char* const kAtoms[] = {"a",
                                       "0123456789abcdef",
                                       "\n",
                                       "\xC3\xA9",
                                       "\xE6\x97\xA5",
                                       "\xF0\x9F\x98\x80",
                                       "\xED\xA0\x80",
                                       "\xC0\xAF",
                                       "\x80",
                                       "\xF4\x90\x80\x80",
                                       "\xE2\x82",
                                       "\x7F"};
  std::mt19937_64 rng(20261205);
  for (int round = 0; round < 20000; ++round) {
    std::string s;
    const std::size_t atoms = rng() % 24;
    for (std::size_t k = 0; k < atoms; ++k) {
      // Mostly valid atoms, so an error often sits far into the string.
      const std::size_t i = rng() % 4 == 0 ? rng() % std::size(kAtoms) : rng() % 6;
      s += kAtoms[i];
    }
    expect_agree(s);
  }
}

TEST(Utf8, SkipSequencesStopsAtAsciiOrTheFirstBadSequence) {
  const std::string s = "\xC3\xA9\xE6\x97\xA5z\xF0\x9F\x98\x80\xED\xA0\x80";
  EXPECT_EQ(utf8_skip_sequences(s, 0), 5u);               // at 'z'
  EXPECT_EQ(utf8_skip_sequences(s, 5), 5u);               // already at ASCII
  EXPECT_EQ(utf8_skip_sequences(s, 6), 10u);              // at the surrogate
  EXPECT_EQ(utf8_skip_sequences(s, 1), 1u);               // a continuation starts nothing
  EXPECT_EQ(utf8_skip_sequences(s.substr(0, 5), 0), 5u);  // at the end
  EXPECT_EQ(utf8_skip_sequences(s.substr(0, 4), 2), 2u);  // a truncated sequence
}

// The tape checks a document's UTF-8 once and then treats bytes >= 0x80 inside strings as plain:
// it must still decline every ill-formed sequence, and raw control characters, wherever they fall
// against its 16-byte string scan, and agree with the strict reader on everything else.
TEST(Utf8, TapeAgreesWithTheStrictReaderOnEveryCaseAtEveryOffset) {
  std::vector<std::string> pieces = boundary_cases();
  for (const std::string& c : boundary_cases()) {
    for (std::size_t k = 1; k < c.size(); ++k) pieces.push_back(c.substr(0, k));
  }
  for (int c = 0; c < 0x20; ++c) pieces.emplace_back(1, static_cast<char>(c));
  pieces.emplace_back("\x7F");
  pieces.emplace_back("\\\"");
  pieces.emplace_back("\\u00e9");
  for (const std::string& piece : pieces) {
    for (std::size_t before = 0; before <= 34; ++before) {
      for (const std::size_t after : {std::size_t{0}, std::size_t{5}, std::size_t{17}}) {
        const std::string body = std::string(before, 'a') + piece + std::string(after, 'z');
        for (const std::string& doc :
             {"\"" + body + "\"", "{\"" + body + "\":1}", "[\"\xC3\xA9\",\"" + body + "\"]"}) {
          ASSERT_EQ(json::oracle::tape_disagreement(doc, {}), "") << testing::PrintToString(doc);
          json::Tape tape;
          const bool valid = utf8_error_offset(doc) == std::string_view::npos;
          if (!valid) {
            EXPECT_FALSE(tape.read_canonical(doc, {})) << testing::PrintToString(doc);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace mf::text
