// The order ls lists names in (collation.hpp): sort keys that approximate ICU's root collation
// closely enough to match Pi's localeCompare on the names it meets.
#include "collation.hpp"

#include <utf8proc.h>

namespace mf::tools::collation {
namespace {

// JavaScript's localeCompare is ICU's root collation; this approximates it. Exact for ASCII names
// once lowercased (Pi lowercases both sides first): each character has a primary weight in ICU's
// order -- whitespace, punctuation and symbols in the order below, currency, digits, letters --
// and names compare weight by weight, a prefix first. Beyond ASCII, names are decomposed (NFKD):
// accents only weigh at the secondary level, in ICU's order for U+0300..U+036F; ø đ ł ħ are their
// base letter with a stroke, æ œ ß the two letters they stand for; other characters rank by class
// (space, punctuation, currency, digit, letter) and then by code point, which is where this stops
// being ICU. Equal weights fall back to the canonically decomposed code points, and names equal
// even there keep Node's readdir order (bytewise), as V8's stable sort does.
constexpr std::string_view kAsciiWhitespace = "\t\n\v\f\r ";
constexpr std::string_view kAsciiPunctuation = "_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~";

// ICU's secondary order of the combining marks U+0300..U+036F (1 = lightest), read off ICU 74.
constexpr std::uint8_t kMarkRank[] = {
    6,  5,  8,  15, 20, 25, 7,  16, 12, 26, 10, 14, 9,  21, 21, 27, 28, 29, 21, 3,  4,  21, 22,
    22, 22, 22, 21, 30, 22, 22, 22, 22, 22, 31, 32, 33, 34, 35, 36, 18, 19, 22, 22, 22, 22, 37,
    38, 22, 39, 40, 2,  22, 41, 24, 23, 23, 17, 42, 22, 22, 22, 21, 21, 21, 6,  5,  11, 3,  13,
    43, 21, 22, 22, 22, 21, 21, 21, 22, 22, 1,  21, 21, 21, 22, 22, 22, 22, 21, 44, 22, 22, 21,
    22, 21, 21, 22, 45, 46, 22, 47, 50, 52, 54, 57, 48, 49, 51, 53, 55, 56, 58, 59};
constexpr std::uint32_t kBaseSecondary = 0;  // what every base character carries
constexpr std::uint32_t kLigatureSecondary = 0xF0;

std::uint32_t mark_rank(std::int32_t cp) {
  if (cp >= 0x300 && cp <= 0x36F) return kMarkRank[cp - 0x300];
  return 0x100 + static_cast<std::uint32_t>(cp);
}

enum Band : std::uint64_t {
  kWhitespace = 1,
  kPunctuation = 2,
  kCurrency = 3,
  kDigit = 4,
  kLatin = 5,
  kOtherLetter = 6,
};

void add_weight(SortKey& key, Band band, std::uint64_t sub) {
  key.primary.push_back((static_cast<std::uint64_t>(band) << 32) | sub);
  key.secondary.push_back(kBaseSecondary);
}

void add_latin(SortKey& key, char letter, std::uint64_t step = 0) {
  add_weight(key, kLatin, static_cast<std::uint64_t>(letter - 'a') * 4 + step);
}

// ASCII: the listed whitespace and punctuation, '$', digits and letters; other control characters
// are ignorable.
void add_ascii(SortKey& key, char c) {
  if (const auto at = kAsciiWhitespace.find(c); at != std::string_view::npos) {
    add_weight(key, kWhitespace, at);
  } else if (const auto p = kAsciiPunctuation.find(c); p != std::string_view::npos) {
    add_weight(key, kPunctuation, p);
  } else if (c == '$') {
    add_weight(key, kCurrency, 0);
  } else if (c >= '0' && c <= '9') {
    add_weight(key, kDigit, static_cast<std::uint64_t>(c - '0'));
  } else if (c >= 'a' && c <= 'z') {
    add_latin(key, c);
  } else if (c >= 'A' && c <= 'Z') {
    add_latin(key, static_cast<char>(c - 'A' + 'a'));
  }
}

// Latin letters without a canonical decomposition; false for any other code point.
bool add_undecomposed_latin(SortKey& key, std::int32_t cp) {
  switch (cp) {
    case 0xDF:  // ß, æ, œ: their two letters, heavier than any accent in between
    case 0xE6:
    case 0x153:
      add_latin(key, cp == 0xDF ? 's' : cp == 0xE6 ? 'a' : 'o');
      key.secondary.push_back(kLigatureSecondary);
      add_latin(key, cp == 0xDF ? 's' : 'e');
      return true;
    case 0xF8:  // ø: o with a long solidus overlay
      add_latin(key, 'o');
      key.secondary.push_back(mark_rank(0x338));
      return true;
    case 0x111:  // đ, ł, ħ: the letter with a short stroke overlay
    case 0x142:
    case 0x127:
      add_latin(key, cp == 0x111 ? 'd' : cp == 0x142 ? 'l' : 'h');
      key.secondary.push_back(mark_rank(0x335));
      return true;
    case 0x131:  // dotless i sorts after i
      add_latin(key, 'i', 1);
      return true;
    case 0xFE:  // þ after z
      add_weight(key, kLatin, 26 * 4);
      return true;
    default:
      return false;
  }
}

// Everything else by its general category, then by code point.
void add_by_category(SortKey& key, std::int32_t cp) {
  const auto sub = static_cast<std::uint64_t>(cp);
  switch (utf8proc_category(cp)) {
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
      key.secondary.push_back(mark_rank(cp));
      return;
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CF:
      return;  // format characters are ignorable
    case UTF8PROC_CATEGORY_ZS:
    case UTF8PROC_CATEGORY_ZL:
    case UTF8PROC_CATEGORY_ZP:
      add_weight(key, kWhitespace, 0x100 + sub);
      return;
    case UTF8PROC_CATEGORY_SC:
      add_weight(key, kCurrency, 0x100 + sub);
      return;
    case UTF8PROC_CATEGORY_PC:
    case UTF8PROC_CATEGORY_PD:
    case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE:
    case UTF8PROC_CATEGORY_PI:
    case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO:
    case UTF8PROC_CATEGORY_SM:
    case UTF8PROC_CATEGORY_SK:
    case UTF8PROC_CATEGORY_SO:
      add_weight(key, kPunctuation, 0x100 + sub);
      return;
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
      add_weight(key, kDigit, 0x100 + sub);
      return;
    default:
      add_weight(key, kOtherLetter, sub);
      return;
  }
}

void add_character(SortKey& key, std::int32_t cp) {
  if (cp < 0x80) {
    add_ascii(key, static_cast<char>(cp));
  } else if (!add_undecomposed_latin(key, cp)) {
    add_by_category(key, cp);
  }
}

}  // namespace

SortKey sort_key(std::string_view name) {
  SortKey key;
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(name.data());
  auto left = static_cast<utf8proc_ssize_t>(name.size());
  while (left > 0) {
    utf8proc_int32_t cp = 0;
    const auto n = utf8proc_iterate(p, left, &cp);
    if (n <= 0) {  // cannot happen for decoded names; skip a byte rather than loop
      ++p;
      --left;
      continue;
    }
    p += n;
    left -= n;
    // Weights come from the compatibility decomposition (U+00A0 weighs as a space); the last
    // resort compares canonical decompositions, so canonically equal names stay equal.
    for (const bool compat : {true, false}) {
      utf8proc_int32_t parts[18];
      int last_boundary = 0;
      const auto options = static_cast<utf8proc_option_t>(
          compat ? UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT : UTF8PROC_DECOMPOSE);
      auto count = utf8proc_decompose_char(cp, parts, 18, options, &last_boundary);
      if (count < 0 || count > 18) {
        parts[0] = cp;
        count = 1;
      }
      for (utf8proc_ssize_t i = 0; i < count; ++i) {
        const std::int32_t c = utf8proc_tolower(parts[i]);
        if (compat) {
          add_character(key, c);
        } else {
          key.tie.push_back(c);
        }
      }
    }
  }
  return key;
}

bool key_less(const SortKey& a, const SortKey& b) {
  if (a.primary != b.primary) return a.primary < b.primary;
  if (a.secondary != b.secondary) return a.secondary < b.secondary;
  return a.tie < b.tie;
}

std::string lowercase(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(s.data());
  auto left = static_cast<utf8proc_ssize_t>(s.size());
  while (left > 0) {
    utf8proc_int32_t cp = 0;
    const auto n = utf8proc_iterate(p, left, &cp);
    if (n <= 0) {
      out.push_back(static_cast<char>(*p));
      ++p;
      --left;
      continue;
    }
    utf8proc_uint8_t buf[4];
    const auto w = utf8proc_encode_char(utf8proc_tolower(cp), buf);
    out.append(reinterpret_cast<const char*>(buf), static_cast<std::size_t>(w));
    p += n;
    left -= n;
  }
  return out;
}

}  // namespace mf::tools::collation
