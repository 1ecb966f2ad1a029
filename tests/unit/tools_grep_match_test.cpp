// grep's prefilter: the literals read from a regex (every match starts with one of them), and a
// differential check that the prefiltered search finds the very same match starts as the DFA
// alone over random patterns and texts (case folding, anchors, classes, alternations with and
// without a literal); and text::LiteralFinder against a plain search.
#include <cstddef>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "grep_match.hpp"
#include "mf/text/find.hpp"

namespace mf::tools {
namespace {

using Prefixes = std::optional<std::vector<std::string>>;

Prefixes prefixes(const std::string& pattern, bool ignore_case = false) {
  return grep_match::prefixes(pattern, false, ignore_case);
}

TEST(GrepPrefilter, LiteralsEveryMatchStartsWith) {
  EXPECT_EQ(prefixes(R"(fn [a-z]+_[a-z]+\(|Err(or)?\b)"), (Prefixes{{"Err", "fn "}}));
  EXPECT_EQ(prefixes("abc?"), (Prefixes{{"ab"}}));
  EXPECT_EQ(prefixes("ab*c"), (Prefixes{{"a"}}));
  EXPECT_EQ(prefixes("ab+c"), (Prefixes{{"ab"}}));
  EXPECT_EQ(prefixes(R"(\bfoo\(x)"), (Prefixes{{"foo(x"}}));
  EXPECT_EQ(prefixes("^foo$"), (Prefixes{{"foo"}}));
  EXPECT_EQ(prefixes("foo|foobar|fo"), (Prefixes{{"fo"}}));
  EXPECT_EQ(prefixes("caf\xC3\xA9 x|y(?:z)"), (Prefixes{{"caf\xC3\xA9 x", "y"}}));
  EXPECT_EQ(prefixes(R"(a\.b\d)"), (Prefixes{{"a.b"}}));
  // Case-insensitive: folded, and cut before k, s and non-ASCII, whose folds leave ASCII.
  EXPECT_EQ(prefixes("Hello World", true), (Prefixes{{"hello world"}}));
  EXPECT_EQ(prefixes("ask", true), (Prefixes{{"a"}}));
  EXPECT_EQ(prefixes("x\xC3\xA9", true), (Prefixes{{"x"}}));
  EXPECT_EQ(grep_match::prefixes("a.b", true, true), (Prefixes{{"a.b"}}));
  // No literal starts every match: the DFA alone.
  for (const char* p : {"a{2}b", "(?i)abc", "(foo|bar)", "x|", "|x", "[ab]c", ".foo", R"(\Qa|b\E)",
                        R"(\d+x)", "a?b", "(?m:x)y", "k", "a|b|c|d|e|f|g|h|i"}) {
    EXPECT_EQ(prefixes(p), std::nullopt) << p;
  }
  EXPECT_EQ(prefixes("sk", true), std::nullopt);
  // A plain literal is searched for as one, without a regex.
  EXPECT_EQ(prefixes("plain"), std::nullopt);
}

// Random patterns from pieces that exercise the reading above, over random texts of the same
// alphabet (with the Kelvin sign, the long s and an ill-formed byte among it).
TEST(GrepPrefilter, FindsWhatTheDfaAloneFinds) {
  std::mt19937 rng(20240601);
  const std::vector<std::string> atoms = {"a",          "b",
                                          "k",          "s",
                                          "K",          "S",
                                          "ab",         "ka",
                                          "Err",        "fn ",
                                          " ",          ".",
                                          "\\.",        "\\(",
                                          "[a-c]",      "[^a]",
                                          "[kK]",       "\\d",
                                          "\\w",        "\\b",
                                          "^",          "$",
                                          "(?:ab|s)",   "(a|k)",
                                          "\xC3\xA9",   "\xE2\x84\xAA",
                                          "(?i)",       "(?i:a)",
                                          "x",          "\\bx",
                                          "[[:alpha:]]"};
  const std::vector<std::string> quantifiers = {"", "", "", "?", "*", "+", "{2}", "{0,1}"};
  const std::vector<std::string> text_pieces = {"a",        "b",
                                                "k",        "K",
                                                "s",        "S",
                                                "Err",      "err",
                                                "fn ",      "fn",
                                                "x",        "X",
                                                " ",        ".",
                                                "(",        "1",
                                                "\n",       "\n",
                                                "\r\n",     "\xC3\xA9",
                                                "\xC3\x89", "\xE2\x84\xAA",
                                                "\xC5\xBF", "\xFF",
                                                "ab",       "ka"};
  auto pick = [&](const std::vector<std::string>& v) {
    return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)];
  };
  int prefiltered = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string pattern;
    const int branches = std::uniform_int_distribution<int>(1, 3)(rng);
    for (int b = 0; b < branches; ++b) {
      if (b > 0) pattern += "|";
      const int pieces = std::uniform_int_distribution<int>(1, 4)(rng);
      for (int p = 0; p < pieces; ++p) {
        const std::string atom = pick(atoms);
        pattern += atom;
        if (atom != "(?i)" && atom != "^" && atom != "$" && atom != "\\b") {
          pattern += pick(quantifiers);
        }
      }
    }
    std::string text;
    const int pieces = std::uniform_int_distribution<int>(0, 120)(rng);
    for (int p = 0; p < pieces; ++p) text += pick(text_pieces);
    for (const bool ignore_case : {false, true}) {
      const auto dfa = grep_match::line_matches(pattern, false, ignore_case, false, text);
      const auto pre = grep_match::line_matches(pattern, false, ignore_case, true, text);
      ASSERT_EQ(dfa.has_value(), pre.has_value()) << pattern;
      if (!dfa) continue;
      EXPECT_EQ(*pre, *dfa) << "pattern " << pattern << (ignore_case ? " (ignoreCase)" : "")
                            << " text \"" << text << "\"";
      if (grep_match::prefixes(pattern, false, ignore_case)) ++prefiltered;
    }
  }
  EXPECT_GT(prefiltered, 500);  // the prefilter was exercised, not skipped
}

// A long text, so the literals are found by the 16-byte loop and its tail alike.
TEST(GrepPrefilter, LongTextsAndLiteralMode) {
  std::string text;
  for (int i = 0; i < 2000; ++i) {
    text += (i % 7 == 0 ? "  fn run_it(x) Error\n" : i % 5 == 0 ? "ERRor err\r\n" : "plain line\n");
  }
  for (const char* pattern : {R"(fn [a-z]+_[a-z]+\(|Err(or)?\b)", "err", "Err|plain l", "e\\b"}) {
    for (const bool ignore_case : {false, true}) {
      EXPECT_EQ(grep_match::line_matches(pattern, false, ignore_case, true, text),
                grep_match::line_matches(pattern, false, ignore_case, false, text))
          << pattern;
    }
  }
  EXPECT_EQ(grep_match::line_matches("ERR", true, true, true, text),
            grep_match::line_matches("ERR", true, true, false, text));
  // A literal met every few bytes: past 1 MiB the DFA takes over, mid-text, with the same result.
  std::string dense;
  for (int i = 0; i < 40000; ++i)
    dense +=
        i % 1000 == 0 ? "ex ex ex ex e9 ex ex ex\n" : "ex ex ex ex ex ex ex ex ex ex ex ex ex ex\n";
  const auto dfa = grep_match::line_matches("e[0-9]", false, false, false, dense);
  ASSERT_TRUE(dfa.has_value());
  EXPECT_EQ(dfa->size(), 40u);
  EXPECT_EQ(grep_match::line_matches("e[0-9]", false, false, true, dense), dfa);
}

TEST(LiteralFinder, AgreesWithAPlainSearch) {
  std::mt19937 rng(7);
  const std::string alphabet = "aAbBzZ_ \n@`";
  for (int round = 0; round < 4000; ++round) {
    std::string hay(std::uniform_int_distribution<std::size_t>(0, 80)(rng), ' ');
    for (char& c : hay) c = alphabet[rng() % alphabet.size()];
    std::string needle(std::uniform_int_distribution<std::size_t>(0, 4)(rng), ' ');
    for (char& c : needle) c = alphabet[rng() % alphabet.size()];
    const std::size_t from = std::uniform_int_distribution<std::size_t>(0, hay.size())(rng);
    const text::LiteralFinder exact(needle);
    const char* got = exact.find(hay.data() + from, hay.data() + hay.size());
    const std::size_t want = hay.find(needle, from);
    EXPECT_EQ(got == nullptr ? std::string::npos : static_cast<std::size_t>(got - hay.data()), want)
        << "'" << needle << "' in '" << hay << "' from " << from;
    // Folded: the same search over both sides lowercased.
    auto lower = [](std::string s) {
      for (char& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
      return s;
    };
    const text::LiteralFinder folded(needle, true);
    got = folded.find(hay.data() + from, hay.data() + hay.size());
    EXPECT_EQ(got == nullptr ? std::string::npos : static_cast<std::size_t>(got - hay.data()),
              lower(hay).find(lower(needle), from))
        << "'" << needle << "' in '" << hay << "' folded";
  }
}

}  // namespace
}  // namespace mf::tools
