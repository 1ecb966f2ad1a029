// The RFC 8785 writer (canonical.hpp): members sorted by UTF-16 code units, ES6 number form; plain
// runs of a string are copied eight bytes at a time because every digest goes through here.
#include "mf/json/canonical.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "mf/hash/sha256.hpp"
#include "mf/text/utf8.hpp"
#include "number_lexeme.hpp"
#include "plain_run.hpp"

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

// The longest ES6 form of a double: sign, then 17 digits with "0." and five zeros before them.
constexpr std::size_t kMaxNumber = 32;

// The ES6 layout (ECMA-262 7.1.12.1) of the value digits[0, k) x 10^(n-k), the digits the shortest
// that round-trip, the first not zero; writes at most kMaxNumber - 1 bytes at out.
char* layout_es6(const char* digits, int k, int n, char* out) {
  const auto copy = [&](const char* from, int count) {
    std::memcpy(out, from, static_cast<std::size_t>(count));
    out += count;
  };
  const auto zeros = [&](int count) {
    std::memset(out, '0', static_cast<std::size_t>(count));
    out += count;
  };
  if (k <= n && n <= 21) {
    copy(digits, k);
    zeros(n - k);
  } else if (0 < n && n <= 21) {
    copy(digits, n);
    *out++ = '.';
    copy(digits + n, k - n);
  } else if (-6 < n && n <= 0) {
    copy("0.", 2);
    zeros(-n);
    copy(digits, k);
  } else {
    *out++ = digits[0];
    if (k > 1) {
      *out++ = '.';
      copy(digits + 1, k - 1);
    }
    *out++ = 'e';
    *out++ = n - 1 < 0 ? '-' : '+';
    out = std::to_chars(out, out + 8, std::abs(n - 1)).ptr;
  }
  return out;
}

// The ES6 form of a number lexeme whose significant digits, leading and trailing zeros dropped,
// number 15 at most, written without a double: any decimal of 15 digits survives the trip through
// the nearest double and back, so no other decimal of 15 digits or fewer reaches that double, and
// these digits are its shortest round-trip digits. Limited to decimal exponents well inside the
// normal range (subnormals keep fewer digits). nullptr when the lexeme is not such a number.
char* format_short_decimal(const char* lexeme, const char* int_end, const char* frac_begin,
                           const char* frac_end, int exp10, char* out) {
  const bool negative = *lexeme == '-';
  const char* d = lexeme + (negative ? 1 : 0);
  char digits[16];
  int k = 0, zeros = 0;  // digits kept, and zeros seen after them not yet kept
  const auto take = [&](char c) {
    if (c == '0') {
      if (k > 0) ++zeros;
      return true;
    }
    if (k + zeros + 1 > 15) return false;
    std::memset(digits + k, '0', static_cast<std::size_t>(zeros));
    k += zeros;
    zeros = 0;
    digits[k++] = c;
    return true;
  };
  for (const char* c = d; c < int_end; ++c) {
    if (!take(*c)) return nullptr;
  }
  for (const char* c = frac_begin; c < frac_end; ++c) {
    if (!take(*c)) return nullptr;
  }
  if (k == 0) {  // a zero, either sign
    *out = '0';
    return out + 1;
  }
  // value = digits x 10^(n-k): the kept digits end `zeros` digits before the mantissa's last.
  const int n = k + exp10 - static_cast<int>(frac_end - frac_begin) + zeros;
  if (n < -290 || n > 290) return nullptr;
  if (negative) *out++ = '-';
  return layout_es6(digits, k, n, out);
}

// ES6 Number::toString of d into out[0, kMaxNumber); returns the end of what it wrote.
char* format_number(double d, char* out) {
  if (!std::isfinite(d)) {
    std::memcpy(out, "null", 4);
    return out + 4;
  }
  if (d == 0) {  // both zeros
    *out = '0';
    return out + 1;
  }
  // Below 2^53 every integer is a double, so the shortest digits that single one out are all of
  // its own, and ES6 writes an integer below 10^21 in full: its decimal digits are the form.
  if (std::abs(d) < 0x1p53) {
    if (const auto i = static_cast<std::int64_t>(d); static_cast<double>(i) == d) {
      return std::to_chars(out, out + kMaxNumber, i).ptr;
    }
  }
  if (d < 0) {
    *out++ = '-';
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
  return layout_es6(digits, k, exp10 + 1, out);
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
  char buf[kMaxNumber];
  const char* const end = format_number(d, buf);
  out.append(buf, static_cast<std::size_t>(end - buf));
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
  const auto ca = static_cast<unsigned char>(a[i]), cb = static_cast<unsigned char>(b[i]);
  if (ca < 0x80 && cb < 0x80) return ca < cb ? -1 : 1;  // ASCII, the usual key: one code unit each
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

// --- Canonicalizer ---------------------------------------------------------------------------

namespace {

bool is_ws(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The text of a key written with JCS's escapes (\" \\ \b \f \n \r \t \u00xx), decoded.
void unescape_key(std::string_view written, std::string& out) {
  for (std::size_t i = 0; i < written.size(); ++i) {
    if (written[i] != '\\') {
      out.push_back(written[i]);
      continue;
    }
    const char e = written[++i];
    switch (e) {
      case 'b':
        out.push_back('\b');
        break;
      case 'f':
        out.push_back('\f');
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'u':
        out.push_back(
            static_cast<char>(hex_digit(written[i + 3]) * 16 + hex_digit(written[i + 4])));
        i += 4;
        break;
      default:  // '"' or '\\'
        out.push_back(e);
    }
  }
}

// Writes the rest of a JSON string, from after its opening quote, in canonical form: the source is
// copied as it stands, escapes JCS writes the same way included; the other escapes are rewritten.
// On success p_io is at the closing quote, w_io past what was written (never more bytes than were
// read), and `escaped` tells whether the written text holds an escape. False to decline. The
// pointers are worked on as locals: written bytes may alias anything, so they would be reloaded
// after each store were they written through the references.
bool transcode_string(const char*& p_io, const char* end, char*& w_io, std::size_t max_bytes,
                      bool& escaped) {
  static constexpr char kHex[] = "0123456789abcdef";
  const char* p = p_io;
  char* w = w_io;
  const char* const start = p;
  std::size_t shrink = 0;  // source bytes beyond the decoded text's
  bool backslashes = false;
  const auto quad = [&](const char* q) {
    if (end - q < 4) return -1;
    int v = 0;
    for (int i = 0; i < 4; ++i) {
      const int d = hex_digit(q[i]);
      if (d < 0) return -1;
      v = v * 16 + d;
    }
    return v;
  };
  for (;;) {
    const char* stop = detail::copy_plain(p, end, w);
    w += stop - p;
    p = stop;
    if (p == end) return false;
    if (*p == '"') break;
    if (*p != '\\' || end - p < 2) return false;  // a raw control character, or a cut escape
    const char* const escape = p;
    switch (p[1]) {
      case '"':
      case '\\':
      case 'b':
      case 'f':
      case 'n':
      case 'r':
      case 't':  // JCS writes these the same way
        w[0] = '\\';
        w[1] = p[1];
        w += 2;
        p += 2;
        ++shrink;
        backslashes = true;
        continue;
      case '/':
        *w++ = '/';
        p += 2;
        ++shrink;
        continue;
      case 'u':
        break;
      default:
        return false;
    }
    int cp = quad(p + 2);
    if (cp < 0) return false;
    p += 6;
    if (cp < 0x20 || cp == '"' || cp == '\\') {  // one byte, written escaped
      shrink += 5;
      backslashes = true;
      *w++ = '\\';
      if (const char letter = short_escape(static_cast<unsigned char>(cp)); letter != 0) {
        *w++ = letter;
      } else {  // \u00xx with lowercase hex
        std::memcpy(w, "u00", 3);
        w[3] = kHex[cp >> 4];
        w[4] = kHex[cp & 0xF];
        w += 5;
      }
      continue;
    }
    if (cp >= 0xDC00 && cp <= 0xDFFF) return false;  // a lone low surrogate
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      if (end - p < 6 || p[0] != '\\' || p[1] != 'u') return false;
      const int low = quad(p + 2);
      if (low < 0xDC00 || low > 0xDFFF) return false;
      p += 6;
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    const std::size_t n = text::encode_utf8(static_cast<char32_t>(cp), w);
    w += n;
    shrink += static_cast<std::size_t>(p - escape) - n;
  }
  if (static_cast<std::size_t>(p - start) - shrink > max_bytes) return false;
  p_io = p;
  w_io = w;
  escaped = backslashes;
  return true;
}

}  // namespace

std::string_view Canonicalizer::key_text(const Member& m) const {
  return m.decoded ? std::string_view(keys_).substr(m.key, m.size)
                   : std::string_view(buf_.data() + m.key, m.size);
}

// Members of the object closing now are members_[first, end): false for a duplicate key; else
// order_ is left empty when they are in order already, or holds their indices in key order.
bool Canonicalizer::sort_members(std::uint32_t first) {
  order_.clear();
  const auto n = static_cast<std::uint32_t>(members_.size()) - first;
  bool ordered = true;  // strictly increasing, so equal neighbours are out of order too
  for (std::uint32_t i = first + 1; i < first + n && ordered; ++i) {
    ordered = compare_utf16(key_text(members_[i - 1]), key_text(members_[i])) < 0;
  }
  if (ordered) return true;
  order_.resize(n);
  for (std::uint32_t i = 0; i < n; ++i) order_[i] = first + i;
  std::sort(order_.begin(), order_.end(), [&](std::uint32_t a, std::uint32_t b) {
    return compare_utf16(key_text(members_[a]), key_text(members_[b])) < 0;
  });
  for (std::uint32_t i = 1; i < n; ++i) {
    if (key_text(members_[order_[i - 1]]) == key_text(members_[order_[i]])) return false;
  }
  return true;
}

bool Canonicalizer::append(std::string_view doc, const ReadLimits& limits, std::string& out) {
  if (doc.size() > limits.max_bytes || doc.size() >= std::numeric_limits<std::uint32_t>::max()) {
    return false;
  }
  // Outside strings any byte >= 0x80 is a syntax error, so one check of the whole document lets
  // the string loop below treat such bytes as plain.
  if (!text::valid_utf8(doc)) return false;
  open_.clear();
  members_.clear();
  keys_.clear();
  const char* p = doc.data();
  const char* const end = p + doc.size();

  // Every token but a number is written in at most as many bytes as it is read (whitespace is
  // dropped, escapes only shorten), so the buffer holds the rest of the input plus kSlack; a
  // number may write kMaxNumber bytes more than it reads, so room is checked before each one.
  constexpr std::size_t kSlack = 2 * kMaxNumber;
  if (buf_.size() < doc.size() + kSlack) buf_.resize(doc.size() + kSlack);
  char* w = buf_.data();
  const auto at = [&]() { return static_cast<std::uint32_t>(w - buf_.data()); };
  const auto make_room = [&]() {
    const std::size_t used = at();
    const std::size_t need = used + static_cast<std::size_t>(end - p) + kSlack;
    if (need > buf_.size()) {
      buf_.resize(std::max(need, 2 * buf_.size()));
      w = buf_.data() + used;
    }
  };
  const auto skip_ws = [&]() {
    while (p < end && is_ws(*p)) ++p;
  };
  const auto copy = [&](const char* from, const char* to) {
    std::memcpy(w, from, static_cast<std::size_t>(to - from));
    w += to - from;
  };

  // The string at p (its opening quote), written in canonical form: the source is copied as it
  // stands, escapes JCS writes the same way included; the other escapes are rewritten. `m`, for a
  // key, gets where its decoded text is. False to decline.
  const auto string = [&](Member* m) {
    const std::uint32_t opened = at();
    *w++ = '"';
    ++p;
    bool backslashes = false;
    if (!transcode_string(p, end, w, limits.max_string_bytes, backslashes)) return false;
    ++p;  // the closing quote
    if (m != nullptr) {
      const std::string_view written(buf_.data() + opened + 1, at() - opened - 1);
      m->decoded = backslashes;
      if (backslashes) {
        m->key = static_cast<std::uint32_t>(keys_.size());
        unescape_key(written, keys_);
        m->size = static_cast<std::uint32_t>(keys_.size()) - m->key;
      } else {
        m->key = opened + 1;
        m->size = static_cast<std::uint32_t>(written.size());
      }
    }
    *w++ = '"';
    return true;
  };

  const auto number = [&]() {
    detail::NumberLexeme lexeme;
    if (!detail::lex_number(p, end, lexeme)) return false;
    const char* q = lexeme.end;
    const std::size_t int_digits = lexeme.int_digits();
    const bool integer = lexeme.integer;
    if (static_cast<std::size_t>(q - p) > limits.max_number_length) return false;
    make_room();
    if (integer && int_digits <= 15) {
      // Exact in a double, and ES6 writes it as these digits; "-0" it writes "0".
      if (q - p == 2 && *p == '-' && p[1] == '0') {
        *w++ = '0';
      } else {
        copy(p, q);
      }
    } else if (char* written = format_short_decimal(p, lexeme.int_end, lexeme.frac_begin,
                                                    lexeme.frac_end, lexeme.exp10, w)) {
      w = written;
    } else {
      double d = 0;
      auto [stop, ec] = std::from_chars(p, q, d);
      if (ec != std::errc() || stop != q || !std::isfinite(d)) return false;
      w = format_number(d, w);
    }
    p = q;
    return true;
  };

  const auto literal = [&](std::string_view word) {
    if (static_cast<std::size_t>(end - p) < word.size() ||
        std::memcmp(p, word.data(), word.size()) != 0) {
      return false;
    }
    copy(p, p + word.size());
    p += word.size();
    return true;
  };

  const auto key = [&]() {
    if (p == end || *p != '"') return false;
    if (++open_.back().count > limits.max_entries) return false;
    Member m;
    m.begin = at();
    if (!string(&m)) return false;
    members_.push_back(m);
    skip_ws();
    if (p == end || *p != ':') return false;
    ++p;
    *w++ = ':';
    skip_ws();
    return true;
  };

  const auto open = [&](bool object) {
    if (open_.size() >= limits.max_depth) return false;
    open_.push_back({object, 0, static_cast<std::uint32_t>(members_.size())});
    *w++ = *p++;
    skip_ws();
    return true;
  };

  // p is at the closing bracket. False for a duplicate key. Members out of order are moved into
  // order here, but for the root object's: those are copied to `out` in order at the end, which
  // saves moving the whole document once more.
  bool root_unsorted = false;
  const auto close = [&]() {
    const Frame f = open_.back();
    open_.pop_back();
    if (f.object && f.count > 0) {
      members_.back().end = at();
      if (f.count > 1) {
        if (!sort_members(f.members)) return false;
        if (!order_.empty() && open_.empty()) {
          root_unsorted = true;
        } else if (!order_.empty()) {
          const std::uint32_t from = members_[f.members].begin;
          moved_.assign(buf_.data() + from, w);
          char* to = buf_.data() + from;
          for (std::size_t i = 0; i < order_.size(); ++i) {
            if (i > 0) *to++ = ',';
            const Member& m = members_[order_[i]];
            std::memcpy(to, moved_.data() + (m.begin - from), m.end - m.begin);
            to += m.end - m.begin;
          }
        }
      }
      if (!root_unsorted) members_.resize(f.members);
    }
    *w++ = *p++;
    return true;
  };

  skip_ws();
  for (;;) {
    // A value starts at p.
    if (p == end) return false;
    if (!open_.empty()) {
      Frame& parent = open_.back();
      if (!parent.object && ++parent.count > limits.max_entries) return false;
    }
    switch (*p) {
      case '{':
        if (!open(true)) return false;
        if (p < end && *p == '}') {
          if (!close()) return false;
          break;
        }
        if (!key()) return false;
        continue;
      case '[':
        if (!open(false)) return false;
        if (p < end && *p == ']') {
          if (!close()) return false;
          break;
        }
        continue;
      case '"':
        if (!string(nullptr)) return false;
        break;
      case 't':
        if (!literal("true")) return false;
        break;
      case 'f':
        if (!literal("false")) return false;
        break;
      case 'n':
        if (!literal("null")) return false;
        break;
      default:
        if (!number()) return false;
    }
    // After a value: the next entry, the end of containers, or the end of the document.
    for (;;) {
      skip_ws();
      if (open_.empty()) {
        if (p != end) return false;
        if (!root_unsorted) {
          out.append(buf_.data(), at());
          return true;
        }
        out.reserve(out.size() + at());
        out.push_back('{');
        for (std::size_t i = 0; i < order_.size(); ++i) {
          if (i > 0) out.push_back(',');
          const Member& m = members_[order_[i]];
          out.append(buf_.data() + m.begin, m.end - m.begin);
        }
        out.push_back('}');
        return true;
      }
      if (p == end) return false;
      const bool object = open_.back().object;
      if (*p == ',') {
        if (object) members_.back().end = at();
        *w++ = *p++;
        skip_ws();
        if (object && !key()) return false;
        break;
      }
      if (*p != (object ? '}' : ']')) return false;
      if (!close()) return false;
    }
  }
}

}  // namespace mf::json
