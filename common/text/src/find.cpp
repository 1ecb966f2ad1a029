// LiteralFinder (find.hpp).
#include "mf/text/find.hpp"

#include <cstring>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define MF_FIND_AVX2 1
#endif

namespace mf::text {

namespace {

// How common a byte is in source text, most common first; bytes not listed are rarer than all.
constexpr std::string_view kCommonBytes =
    " etaoinsrlhdcu\nmpfgybw.,_vk=()-;\"'/:0x1{}*>2<#[]\tE3STAIRCLNOP4D5M9867FBjz!|+&qHGUWV$%@K?"
    "YJXQZ\\^`~";

std::size_t rarity(char c, bool fold) {
  std::size_t rank = kCommonBytes.find(c);
  if (rank == std::string_view::npos) rank = kCommonBytes.size();
  if (fold && c >= 'a' && c <= 'z') {  // either case may occur: as common as the commoner one
    const std::size_t upper = kCommonBytes.find(static_cast<char>(c - 'a' + 'A'));
    if (upper != std::string_view::npos && upper < rank) rank = upper;
  }
  return rank;
}

bool is_lower(char c) {
  return c >= 'a' && c <= 'z';
}

char lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

}  // namespace

LiteralFinder::LiteralFinder(std::string needle, bool ascii_case_insensitive)
    : needle_(std::move(needle)), fold_(ascii_case_insensitive) {
  if (fold_) {
    for (char& c : needle_) c = lower(c);
  }
#if defined(MF_FIND_AVX2)
  avx2_ = __builtin_cpu_supports("avx2") != 0;
#endif
  // The two rarest bytes, by their offsets (the same one twice for a one-byte needle).
  for (std::size_t i = 1; i < needle_.size(); ++i) {
    if (rarity(needle_[i], fold_) > rarity(needle_[first_], fold_)) first_ = i;
  }
  second_ = first_;
  for (std::size_t i = 0; i < needle_.size(); ++i) {
    if (i == first_) continue;
    if (second_ == first_ || rarity(needle_[i], fold_) > rarity(needle_[second_], fold_)) {
      second_ = i;
    }
  }
}

bool LiteralFinder::equal_at(const char* p) const {
  if (!fold_) return std::memcmp(p, needle_.data(), needle_.size()) == 0;
  for (std::size_t i = 0; i < needle_.size(); ++i) {
    if (lower(p[i]) != needle_[i]) return false;
  }
  return true;
}

#if defined(MF_FIND_AVX2)
// The loop below, 32 starts at a time, on CPUs with AVX2 (picked at run time). Returns the match,
// or nullptr with `p` moved past the starts it ruled out.
__attribute__((target("avx2"))) const char* LiteralFinder::find_avx2(const char*& p,
                                                                     const char* last) const {
  const bool fold1 = fold_ && is_lower(needle_[first_]);
  const bool fold2 = fold_ && is_lower(needle_[second_]);
  const __m256i b1 = _mm256_set1_epi8(needle_[first_]);
  const __m256i b2 = _mm256_set1_epi8(needle_[second_]);
  const __m256i m1 = _mm256_set1_epi8(fold1 ? 0x20 : 0);
  const __m256i m2 = _mm256_set1_epi8(fold2 ? 0x20 : 0);
  while (last - p >= 31) {
    const __m256i v1 =
        _mm256_or_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + first_)), m1);
    const __m256i v2 =
        _mm256_or_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + second_)), m2);
    auto mask = static_cast<unsigned>(_mm256_movemask_epi8(
        _mm256_and_si256(_mm256_cmpeq_epi8(v1, b1), _mm256_cmpeq_epi8(v2, b2))));
    while (mask != 0) {
      const char* s = p + __builtin_ctz(mask);
      if (equal_at(s)) return s;
      mask &= mask - 1;
    }
    p += 32;
  }
  return nullptr;
}
#endif

const char* LiteralFinder::find(const char* from, const char* end) const {
  const std::size_t n = needle_.size();
  if (n == 0) return from;
  if (from > end || static_cast<std::size_t>(end - from) < n) return nullptr;
  const char* p = from;
  const char* last = end - n;  // the last possible start
#if defined(MF_FIND_AVX2)
  if (avx2_) {
    if (const char* found = find_avx2(p, last)) return found;
  }
#endif
#if defined(__SSE2__)
  // A folded letter is compared with its case bit set: (b | 0x20) == lowercase. That also lets a
  // few non-letters through (as '@' for '`'), which the whole comparison then rejects.
  const bool fold1 = fold_ && is_lower(needle_[first_]);
  const bool fold2 = fold_ && is_lower(needle_[second_]);
  const __m128i b1 = _mm_set1_epi8(needle_[first_]);
  const __m128i b2 = _mm_set1_epi8(needle_[second_]);
  const __m128i m1 = _mm_set1_epi8(fold1 ? 0x20 : 0);
  const __m128i m2 = _mm_set1_epi8(fold2 ? 0x20 : 0);
  while (last - p >= 15) {  // the 16 starts p .. p + 15 all leave room for the needle
    const __m128i v1 =
        _mm_or_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + first_)), m1);
    const __m128i v2 =
        _mm_or_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + second_)), m2);
    auto mask = static_cast<unsigned>(
        _mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(v1, b1), _mm_cmpeq_epi8(v2, b2))));
    while (mask != 0) {
      const char* s = p + __builtin_ctz(mask);
      if (equal_at(s)) return s;
      mask &= mask - 1;
    }
    p += 16;
  }
#endif
  for (; p <= last; ++p) {
    if (lower(p[first_]) == needle_[first_] || p[first_] == needle_[first_]) {
      if (equal_at(p)) return p;
    }
  }
  return nullptr;
}

}  // namespace mf::text
