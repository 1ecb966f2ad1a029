// The RFC 8785 writer (canonical.hpp): members sorted by UTF-16 code units, ES6 number form; plain
// runs of a string are copied eight bytes at a time because every digest goes through here.
#include "mf/json/canonical.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "mf/hash/sha256.hpp"
#include "mf/text/utf8.hpp"

namespace mf::json {

namespace {

// True for bytes that JCS writes unescaped inside a string.
constexpr bool plain_byte(unsigned char c) {
  return c >= 0x20 && c != '"' && c != '\\';
}

// True when none of the eight bytes of w needs escaping (SWAR: no byte < 0x20, '"' or '\\').
inline bool plain_word(std::uint64_t w) {
  constexpr std::uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
  auto has_zero = [](std::uint64_t x) { return (x - ones) & ~x & highs; };
  const std::uint64_t below_space = (w - ones * 0x20) & ~w & highs;
  return (below_space | has_zero(w ^ (ones * '"')) | has_zero(w ^ (ones * '\\'))) == 0;
}

void write_value(const Value& v, std::string& out);

void write_member(const Member& m, std::string& out) {
  write_string(m.key, out);
  out.push_back(':');
  write_value(m.value, out);
}

void write_object(const Object& members, std::string& out) {
  out.push_back('{');
  const auto less = [](const Member& a, const Member& b) {
    return compare_utf16(a.key, b.key) < 0;
  };
  if (std::is_sorted(members.begin(), members.end(), less)) {  // canonical input: no sort needed
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (i > 0) out.push_back(',');
      write_member(members[i], out);
    }
  } else {
    // Sort pointers, on the stack for the usual small object.
    constexpr std::size_t kInline = 32;
    const Member* inline_order[kInline];
    std::vector<const Member*> heap_order;
    const Member** order = inline_order;
    if (members.size() > kInline) {
      heap_order.resize(members.size());
      order = heap_order.data();
    }
    for (std::size_t i = 0; i < members.size(); ++i) order[i] = &members[i];
    std::sort(order, order + members.size(),
              [&](const Member* a, const Member* b) { return less(*a, *b); });
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (i > 0) out.push_back(',');
      write_member(*order[i], out);
    }
  }
  out.push_back('}');
}

void write_value(const Value& v, std::string& out) {
  switch (v.kind()) {
    case Kind::Null:
      out.append("null");
      break;
    case Kind::Bool:
      out.append(v.as_bool() ? "true" : "false");
      break;
    case Kind::Number:
      write_number(v.as_number(), out);
      break;
    case Kind::String:
      write_string(v.as_string(), out);
      break;
    case Kind::Array: {
      out.push_back('[');
      bool first = true;
      for (const Value& e : v.as_array()) {
        if (!first) out.push_back(',');
        first = false;
        write_value(e, out);
      }
      out.push_back(']');
      break;
    }
    case Kind::Object:
      write_object(v.as_object(), out);
      break;
  }
}

}  // namespace

void write_number(double d, std::string& out) {
  if (!std::isfinite(d)) {
    out.append("null");
    return;
  }
  if (d == 0) {  // both zeros
    out.push_back('0');
    return;
  }
  if (d < 0) {
    out.push_back('-');
    d = -d;
  }
  // Shortest round-trip digits, then laid out by ES6 Number::toString (ECMA-262 7.1.12.1).
  char buf[32];
  const auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  const char* e = static_cast<const char*>(std::memchr(buf, 'e', res.ptr - buf));
  char digits[20];
  int k = 0;
  for (const char* p = buf; p < e; ++p) {
    if (*p != '.') digits[k++] = *p;
  }
  int exp10 = 0;
  std::from_chars(e + (e[1] == '+' ? 2 : 1), res.ptr, exp10);
  const int n = exp10 + 1;  // value = digits x 10^(n-k)
  if (k <= n && n <= 21) {
    out.append(digits, k);
    out.append(n - k, '0');
  } else if (0 < n && n <= 21) {
    out.append(digits, n);
    out.push_back('.');
    out.append(digits + n, k - n);
  } else if (-6 < n && n <= 0) {
    out.append("0.");
    out.append(-n, '0');
    out.append(digits, k);
  } else {
    out.push_back(digits[0]);
    if (k > 1) {
      out.push_back('.');
      out.append(digits + 1, k - 1);
    }
    out.push_back('e');
    out.push_back(n - 1 < 0 ? '-' : '+');
    char ebuf[8];
    const auto er = std::to_chars(ebuf, ebuf + sizeof ebuf, std::abs(n - 1));
    out.append(ebuf, er.ptr);
  }
}

void write_string(std::string_view s, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  std::size_t run = 0;  // start of the pending run of plain bytes
  for (std::size_t i = 0; i < s.size(); ++i) {
    while (s.size() - i >= 8) {
      std::uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      if (!plain_word(w)) break;
      i += 8;
    }
    if (i == s.size()) break;
    const auto c = static_cast<unsigned char>(s[i]);
    if (plain_byte(c)) continue;
    out.append(s.data() + run, i - run);
    run = i + 1;
    out.push_back('\\');
    if (const char letter = short_escape(c); letter != 0) {
      out.push_back(letter);
    } else {
      out.append("u00");
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xF]);
    }
  }
  out.append(s.data() + run, s.size() - run);
  out.push_back('"');
}

char short_escape(unsigned char c) {
  switch (c) {
    case '"':
      return '"';
    case '\\':
      return '\\';
    case '\b':
      return 'b';
    case '\t':
      return 't';
    case '\n':
      return 'n';
    case '\f':
      return 'f';
    case '\r':
      return 'r';
    default:
      return 0;
  }
}

int compare_utf16(std::string_view a, std::string_view b) {
  const std::size_t n = std::min(a.size(), b.size());
  std::size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  if (i == n) return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
  // UTF-8 byte order is code point order. UTF-16 differs only between a supplementary character
  // (a surrogate pair, D800..DBFF first) and a BMP character in E000..FFFF: there the pair sorts
  // first.
  const std::size_t j = text::utf8_floor(a, i);
  const auto la = static_cast<unsigned char>(a[j]);
  const auto lb = static_cast<unsigned char>(b[j]);
  const bool a_astral = la >= 0xF0, b_astral = lb >= 0xF0;
  const bool a_high_bmp = la == 0xEE || la == 0xEF, b_high_bmp = lb == 0xEE || lb == 0xEF;
  if (a_astral && b_high_bmp) return -1;
  if (b_astral && a_high_bmp) return 1;
  return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[i]) ? -1 : 1;
}

void write_canonical(const Value& v, std::string& out) {
  write_value(v, out);
}

std::string canonical(const Value& v) {
  std::string out;
  write_value(v, out);
  return out;
}

std::string canonical_file(const Value& v) {
  std::string out = canonical(v);
  out.push_back('\n');
  return out;
}

std::string canonical_digest(const Value& v) {
  return hash::sha256_hex(canonical(v));
}

}  // namespace mf::json
