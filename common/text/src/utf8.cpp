// UTF-8 (utf8.hpp): well-formedness, cutting at a boundary, counting and lossy decoding, from one
// table of lead bytes.
#include "mf/text/utf8.hpp"

#include <cstdint>

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

std::size_t utf8_error_offset(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;
  while (i < n) {
    // ASCII runs eight bytes at a time: the common case of every caller.
    while (i + 8 <= n) {
      std::uint64_t word = 0;
      for (std::size_t k = 0; k < 8; ++k) word |= std::uint64_t{p[i + k]} << (8 * k);
      if ((word & 0x8080808080808080ull) != 0) break;
      i += 8;
    }
    if (i >= n) break;
    if (p[i] < 0x80) {
      ++i;
      continue;
    }
    const std::size_t len = utf8_sequence_length(s, i);
    if (len == 0) return i;
    i += len;
  }
  return std::string_view::npos;
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

void append_utf8(char32_t c, std::string& out) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

}  // namespace mf::text
