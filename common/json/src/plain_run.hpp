// Runs of plain string bytes (no quote, backslash or control character), found and copied 16
// bytes at a time, as the two tree-less JSON writers read strings (tape.cpp, canonical.cpp).
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace mf::json::detail {

// The first byte in [p, end) that ends a run of plain string bytes: a quote, a backslash or a
// control character (the document is valid UTF-8, checked before the scan, so bytes >= 0x80 are
// plain). 16 bytes at a time with SSE2, 8 at a time (one word) elsewhere.
#if defined(__SSE2__)
// Bit i set where byte i of x ends a plain run: a quote, a backslash, or x <= 0x1F unsigned (the
// minimum of x and 0x1F is x).
inline int special_bytes(__m128i x) {
  const __m128i special = _mm_or_si128(
      _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')), _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'))),
      _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(0x1F)), x));
  return _mm_movemask_epi8(special);
}
#endif

inline const char* skip_plain(const char* p, const char* end) {
#if defined(__SSE2__)
  while (end - p >= 16) {
    const int mask = special_bytes(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    if (mask != 0) return p + __builtin_ctz(static_cast<unsigned>(mask));
    p += 16;
  }
#else
  // Per byte of the word, the high bit set where it is zero (after the xor) or below 0x20; the
  // lowest flagged byte is exact (a borrow only runs towards higher bytes).
  constexpr std::uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
  const auto zero = [&](std::uint64_t v) { return (v - kOnes) & ~v & kHigh; };
  while (end - p >= 8) {
    std::uint64_t w = 0;
    std::memcpy(&w, p, 8);
    const std::uint64_t hit =
        zero(w ^ (kOnes * '"')) | zero(w ^ (kOnes * '\\')) | ((w - kOnes * 0x20) & ~w & kHigh);
    if (hit != 0) {
      if constexpr (std::endian::native == std::endian::little) {
        return p + __builtin_ctzll(hit) / 8;
      }
      break;
    }
    p += 8;
  }
#endif
  while (p < end) {
    const auto c = static_cast<unsigned char>(*p);
    if (c < 0x20 || c == '"' || c == '\\') break;
    ++p;
  }
  return p;
}

// skip_plain() that also copies the bytes it skips to `to`, which has room for 16 bytes past them
// (whole blocks are stored before they are looked at).
inline const char* copy_plain(const char* p, const char* end, char* to) {
#if defined(__SSE2__)
  while (end - p >= 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(to), x);
    const int mask = special_bytes(x);
    if (mask != 0) return p + __builtin_ctz(static_cast<unsigned>(mask));
    p += 16;
    to += 16;
  }
#endif
  const char* stop = skip_plain(p, end);
  std::memcpy(to, p, static_cast<std::size_t>(stop - p));
  return stop;
}

}  // namespace mf::json::detail
