// UTF-8 (utf8.hpp): well-formedness, cutting at a boundary, counting and lossy decoding, from one
// table of lead bytes.
#include "mf/text/utf8.hpp"

#include <bit>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define MF_UTF8_SSSE3 1
#endif

namespace mf::text {

namespace {

// What a lead byte allows (RFC 3629, Table 3-7 of Unicode): the total sequence length (0 for a
// byte that cannot start one) and the range of the second byte, which excludes overlong forms,
// surrogates and code points above U+10FFFF.
struct Lead {
  std::size_t length = 0;
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;
};

constexpr Lead lead(unsigned char b) {
  if (b < 0x80) return {1};
  if (b >= 0xC2 && b <= 0xDF) return {2};
  if (b == 0xE0) return {3, 0xA0, 0xBF};
  if (b == 0xED) return {3, 0x80, 0x9F};
  if (b >= 0xE1 && b <= 0xEF) return {3};
  if (b == 0xF0) return {4, 0x90, 0xBF};
  if (b == 0xF4) return {4, 0x80, 0x8F};
  if (b >= 0xF1 && b <= 0xF3) return {4};
  return {0};
}

}  // namespace

std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  const Lead l = lead(static_cast<unsigned char>(s[i]));
  if (l.length <= 1) return l.length;
  if (s.size() - i < l.length) return 0;
  const auto b1 = static_cast<unsigned char>(s[i + 1]);
  if (b1 < l.lo || b1 > l.hi) return 0;
  for (std::size_t k = 2; k < l.length; ++k) {
    if (!is_continuation(static_cast<unsigned char>(s[i + k]))) return 0;
  }
  return l.length;
}

namespace {

// The length of the run of ASCII bytes at the start of p[0, n): 16 bytes at a time with SSE2,
// 8 at a time (one word, its high bits masked) elsewhere, the tail byte by byte.
std::size_t ascii_run(const unsigned char* p, std::size_t n) {
  std::size_t i = 0;
#if defined(__SSE2__)
  while (n - i >= 16) {
    const int mask = _mm_movemask_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i)));
    if (mask != 0) return i + static_cast<std::size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
    i += 16;
  }
#endif
  while (n - i >= 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, p + i, 8);
    word &= 0x8080808080808080ull;
    if (word != 0) {
      if constexpr (std::endian::native == std::endian::little) {
        return i + static_cast<std::size_t>(__builtin_ctzll(word)) / 8;
      }
      break;
    }
    i += 8;
  }
  while (i < n && p[i] < 0x80) ++i;
  return i;
}

#if defined(MF_UTF8_SSSE3)
// Whether p[0, n) is well-formed, 16 bytes at a time: the look-up algorithm of Keiser and Lemire
// ("Validating UTF-8 in less than one instruction per byte", 2021). Three 16-entry tables, indexed
// by the high and low nibble of each byte's predecessor and the high nibble of the byte itself,
// each give the set of errors that pair could be; their intersection is the pair's error. What a
// pair cannot show (a third or fourth byte that is not a continuation, or a continuation too many)
// is found by comparing the bytes two and three back with the 3- and 4-byte leads, and a block
// that ends inside a sequence carries that to the next. SSSE3's byte shuffle is the look-up; the
// target attribute compiles it for any x86-64 and the caller checks the CPU has it.
__attribute__((target("ssse3"))) bool valid_utf8_ssse3(const unsigned char* p, std::size_t n) {
  constexpr char kTooShort = 1 << 0;                     // a lead, then no continuation
  constexpr char kTooLong = 1 << 1;                      // ASCII, then a continuation
  constexpr char kOverlong3 = 1 << 2;                    // E0 80..9F
  constexpr char kTooLarge = 1 << 3;                     // F4 90..BF, F5..FF and a continuation
  constexpr char kSurrogate = 1 << 4;                    // ED A0..BF
  constexpr char kOverlong2 = 1 << 5;                    // C0, C1
  constexpr char kTooLarge1000 = 1 << 6;                 // F5..FF 80..8F
  constexpr char kOverlong4 = 1 << 6;                    // F0 80..8F
  constexpr char kTwoConts = static_cast<char>(1 << 7);  // two continuations, unless a 3- or 4-byte
  // What the first byte's low nibble cannot rule out: the errors its high nibble alone decides.
  constexpr char kCarry = kTooShort | kTooLong | kTwoConts;
  constexpr char kLarge = kCarry | kTooLarge | kTooLarge1000;
  const __m128i first_high = _mm_setr_epi8(
      kTooLong, kTooLong, kTooLong, kTooLong, kTooLong, kTooLong, kTooLong, kTooLong,  // 0_______
      kTwoConts, kTwoConts, kTwoConts, kTwoConts,                                      // 10______
      kTooShort | kOverlong2, kTooShort, kTooShort | kOverlong3 | kSurrogate,  // 1100 1101 1110
      kTooShort | kTooLarge | kTooLarge1000 | kOverlong4);                     // 1111____
  const __m128i first_low = _mm_setr_epi8(kCarry | kOverlong3 | kOverlong2 | kOverlong4,
                                          kCarry | kOverlong2, kCarry, kCarry,  // ____00__
                                          kCarry | kTooLarge, kLarge, kLarge, kLarge, kLarge,
                                          kLarge, kLarge, kLarge, kLarge,        // 0100..1100
                                          kLarge | kSurrogate, kLarge, kLarge);  // 1101..1111
  constexpr char kCont = kTooLong | kOverlong2 | kTwoConts;
  const __m128i second_high =
      _mm_setr_epi8(kTooShort, kTooShort, kTooShort, kTooShort, kTooShort, kTooShort, kTooShort,
                    kTooShort,                                                       // ASCII
                    kCont | kOverlong3 | kTooLarge1000 | kOverlong4,                 // 1000____
                    kCont | kOverlong3 | kTooLarge,                                  // 1001____
                    kCont | kSurrogate | kTooLarge, kCont | kSurrogate | kTooLarge,  // 101_____
                    kTooShort, kTooShort, kTooShort, kTooShort);                     // 11______
  const __m128i nibble = _mm_set1_epi8(0x0F);
  // A block's last three bytes may start a sequence the next block ends: above these, they do.
  const __m128i incomplete_above =
      _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, static_cast<char>(0xF0 - 1),
                    static_cast<char>(0xE0 - 1), static_cast<char>(0xC0 - 1));
  __m128i prev = _mm_setzero_si128(), incomplete = _mm_setzero_si128(), error = _mm_setzero_si128();
  alignas(16) unsigned char tail[16] = {};  // the last partial block, padded with ASCII
  for (std::size_t i = 0; i < n; i += 16) {
    __m128i in;
    if (n - i >= 16) {
      in = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    } else {
      std::memcpy(tail, p + i, n - i);
      in = _mm_load_si128(reinterpret_cast<const __m128i*>(tail));
    }
    if (_mm_movemask_epi8(in) == 0) {  // ASCII: only a sequence the last block left open is wrong
      error = _mm_or_si128(error, incomplete);
      incomplete = _mm_setzero_si128();
    } else {
      const __m128i prev1 = _mm_alignr_epi8(in, prev, 15);
      const __m128i high1 = _mm_and_si128(_mm_srli_epi16(prev1, 4), nibble);
      const __m128i high0 = _mm_and_si128(_mm_srli_epi16(in, 4), nibble);
      const __m128i pair =
          _mm_and_si128(_mm_and_si128(_mm_shuffle_epi8(first_high, high1),
                                      _mm_shuffle_epi8(first_low, _mm_and_si128(prev1, nibble))),
                        _mm_shuffle_epi8(second_high, high0));
      // A 3-byte lead two back or a 4-byte lead three back wants a continuation here: 0x80 set.
      const __m128i third =
          _mm_subs_epu8(_mm_alignr_epi8(in, prev, 14), _mm_set1_epi8(0xE0 - 0x80));
      const __m128i fourth =
          _mm_subs_epu8(_mm_alignr_epi8(in, prev, 13), _mm_set1_epi8(0xF0 - 0x80));
      const __m128i wanted =
          _mm_and_si128(_mm_or_si128(third, fourth), _mm_set1_epi8(static_cast<char>(0x80)));
      error = _mm_or_si128(error, _mm_xor_si128(wanted, pair));
      incomplete = _mm_subs_epu8(in, incomplete_above);
    }
    prev = in;
  }
  error = _mm_or_si128(error, incomplete);
  return _mm_movemask_epi8(_mm_cmpeq_epi8(error, _mm_setzero_si128())) == 0xFFFF;
}
#endif

}  // namespace

std::size_t utf8_skip_sequences(std::string_view s, std::size_t i) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  // Each branch is one row of Table 3-7: the lead's range fixes the length and the second
  // byte's range; the later bytes are plain continuations.
  while (i < n) {
    const unsigned b0 = p[i];
    if (b0 < 0xC2) return i;  // ASCII, a continuation, or an overlong 2-byte lead
    const std::size_t left = n - i;
    if (b0 < 0xE0) {
      if (left < 2 || !is_continuation(p[i + 1])) return i;
      i += 2;
    } else if (b0 < 0xF0) {
      if (left < 3) return i;
      const unsigned b1 = p[i + 1];
      const unsigned lo = b0 == 0xE0 ? 0xA0 : 0x80, hi = b0 == 0xED ? 0x9F : 0xBF;
      if (b1 < lo || b1 > hi || !is_continuation(p[i + 2])) return i;
      i += 3;
    } else if (b0 < 0xF5) {
      if (left < 4) return i;
      const unsigned b1 = p[i + 1];
      const unsigned lo = b0 == 0xF0 ? 0x90 : 0x80, hi = b0 == 0xF4 ? 0x8F : 0xBF;
      if (b1 < lo || b1 > hi || !is_continuation(p[i + 2]) || !is_continuation(p[i + 3])) {
        return i;
      }
      i += 4;
    } else {
      return i;
    }
  }
  return n;
}

std::size_t utf8_error_offset(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = ascii_run(p, n);
  if (i == n) return std::string_view::npos;
#if defined(MF_UTF8_SSSE3)
  // Past the first non-ASCII byte, one 16-byte pass proves the rest well-formed (several times
  // the loop below on mixed text); only ill-formed text is walked again, for the offset.
  static const bool ssse3 = __builtin_cpu_supports("ssse3");
  if (ssse3 && valid_utf8_ssse3(p + i, n - i)) return std::string_view::npos;
#endif
  for (;;) {
    i = utf8_skip_sequences(s, i);
    if (i == n) return std::string_view::npos;
    if (p[i] >= 0x80) return i;
    i += ascii_run(p + i, n - i);
    if (i == n) return std::string_view::npos;
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
namespace {
// The ASCII run free of NUL at the start of p[0, n), 32 bytes at a time (a multiple of 32).
__attribute__((target("avx2"))) std::size_t text_run_avx2(const unsigned char* p, std::size_t n) {
  const __m256i one = _mm256_set1_epi8(1);
  std::size_t i = 0;
  while (n - i >= 32) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
    if (_mm256_movemask_epi8(_mm256_sub_epi8(v, one)) != 0) break;
    i += 32;
  }
  return i;
}
const bool kHasAvx2 = __builtin_cpu_supports("avx2") != 0;
}  // namespace
#endif

bool utf8_text(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;
#if defined(__x86_64__) && defined(__GNUC__)
  if (kHasAvx2) i = text_run_avx2(p, n);
#endif
#if defined(__SSE2__)
  // A byte >= 0x80 or a NUL stops the ASCII run: (b - 1) as signed is negative for both.
  const __m128i one = _mm_set1_epi8(1);
  while (n - i >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    if (_mm_movemask_epi8(_mm_sub_epi8(v, one)) != 0) break;
    i += 16;
  }
#endif
  const std::string_view rest = s.substr(i);
  return std::memchr(rest.data(), 0, rest.size()) == nullptr && valid_utf8(rest);
}

std::size_t utf8_floor(std::string_view s, std::size_t n) {
  if (n >= s.size()) return s.size();
  while (n > 0 && is_continuation(static_cast<unsigned char>(s[n]))) --n;
  return n;
}

std::size_t utf8_count(std::string_view s) {
  std::size_t n = 0;
  for (const char c : s) n += is_continuation(static_cast<unsigned char>(c)) ? 0 : 1;
  return n;
}

std::string decode_utf8_lossy(std::string_view bytes) {
  if (valid_utf8(bytes)) return std::string(bytes);
  // The WHATWG decoder: a sequence stops at the first byte that cannot continue it, that byte is
  // looked at again, and each stopped or stray piece becomes one U+FFFD.
  constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
  std::string out;
  out.reserve(bytes.size() + bytes.size() / 8);
  std::size_t i = 0;
  while (i < bytes.size()) {
    Lead l = lead(static_cast<unsigned char>(bytes[i]));
    if (l.length == 1) {
      out.push_back(bytes[i++]);
      continue;
    }
    if (l.length == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    std::size_t j = i + 1;
    while (j - i < l.length && j < bytes.size()) {
      const auto c = static_cast<unsigned char>(bytes[j]);
      if (c < l.lo || c > l.hi) break;
      l.lo = 0x80;
      l.hi = 0xBF;
      ++j;
    }
    if (j - i == l.length) {
      out.append(bytes.substr(i, j - i));
    } else {
      out += kReplacement;
    }
    i = j;
  }
  return out;
}

std::size_t encode_utf8(char32_t c, char* out) {
  if (c < 0x80) {
    out[0] = static_cast<char>(c);
    return 1;
  }
  if (c < 0x800) {
    out[0] = static_cast<char>(0xC0 | (c >> 6));
    out[1] = static_cast<char>(0x80 | (c & 0x3F));
    return 2;
  }
  if (c < 0x10000) {
    out[0] = static_cast<char>(0xE0 | (c >> 12));
    out[1] = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out[2] = static_cast<char>(0x80 | (c & 0x3F));
    return 3;
  }
  out[0] = static_cast<char>(0xF0 | (c >> 18));
  out[1] = static_cast<char>(0x80 | ((c >> 12) & 0x3F));
  out[2] = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
  out[3] = static_cast<char>(0x80 | (c & 0x3F));
  return 4;
}

void append_utf8(char32_t c, std::string& out) {
  char bytes[4];
  out.append(bytes, encode_utf8(c, bytes));
}

}  // namespace mf::text
