// The lexeme of a JSON number as the two tree-less writers of canonical JSON read it (tape.cpp,
// canonical.cpp): one grammar, one set of numbers left to the strict reader.
#pragma once

#include <algorithm>
#include <cstddef>

namespace mf::json::detail {

struct NumberLexeme {
  const char* end = nullptr;        // one past the number
  const char* int_begin = nullptr;  // the integer part's digits, without the sign
  const char* int_end = nullptr;
  const char* frac_begin = nullptr;  // the fraction's digits; empty without one
  const char* frac_end = nullptr;
  int exp10 = 0;        // the exponent, its magnitude clamped to 100000
  bool integer = true;  // neither a fraction nor an exponent

  std::size_t int_digits() const { return static_cast<std::size_t>(int_end - int_begin); }
};

// The number at [p, end) by RFC 8259's grammar, into `n`. False when there is none, and for the
// numbers the fast paths leave to the strict reader: a positive exponent past 308 (RapidJSON
// refuses one, plus the fraction's digits, even for a zero, before from_chars sees it) and an
// integer part of more than 300 digits (its running double would overflow).
inline bool lex_number(const char* p, const char* end, NumberLexeme& n) {
  const char* q = p;
  if (q < end && *q == '-') ++q;
  if (q == end) return false;
  n.int_begin = q;
  if (*q == '0') {
    ++q;
  } else if (*q >= '1' && *q <= '9') {
    while (q < end && *q >= '0' && *q <= '9') ++q;
  } else {
    return false;
  }
  n.int_end = n.frac_begin = n.frac_end = q;
  n.exp10 = 0;
  n.integer = true;
  if (q < end && *q == '.') {
    n.integer = false;
    n.frac_begin = ++q;
    while (q < end && *q >= '0' && *q <= '9') ++q;
    if (q == n.frac_begin) return false;
    n.frac_end = q;
  }
  if (q < end && (*q == 'e' || *q == 'E')) {
    n.integer = false;
    ++q;
    const bool negative = q < end && *q == '-';
    if (q < end && (*q == '+' || *q == '-')) ++q;
    const char* x = q;
    int exponent = 0;
    while (q < end && *q >= '0' && *q <= '9') {
      exponent = std::min(exponent * 10 + (*q - '0'), 100000);
      ++q;
    }
    if (q == x) return false;
    if (!negative && exponent > 308) return false;
    n.exp10 = negative ? -exponent : exponent;
  }
  if (n.int_digits() > 300) return false;
  n.end = q;
  return true;
}

}  // namespace mf::json::detail
