// Millforge's hashing form of JSON (millforge_form.hpp): Python's json.dumps output, number forms
// included, written here so the digests match Millforge's byte for byte.
#include "mf/json/millforge_form.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

#include "mf/hash/sha256.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/pointer.hpp"

namespace mf::json {
namespace {

constexpr char kHex[] = "0123456789abcdef";

void write_escape(std::uint32_t unit, std::string& out) {
  out.append("\\u");
  for (int shift = 12; shift >= 0; shift -= 4) out.push_back(kHex[(unit >> shift) & 0xF]);
}

// A string as Python's ensure_ascii encoder writes it. The input is valid UTF-8 (every Value the
// strict readers build is).
void write_ascii_string(std::string_view s, std::string& out) {
  out.push_back('"');
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7F) {
      if (c == '"' || c == '\\') out.push_back('\\');
      out.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    switch (c) {
      case '\n':
        out.append("\\n");
        ++i;
        continue;
      case '\r':
        out.append("\\r");
        ++i;
        continue;
      case '\t':
        out.append("\\t");
        ++i;
        continue;
      case '\b':
        out.append("\\b");
        ++i;
        continue;
      case '\f':
        out.append("\\f");
        ++i;
        continue;
      default:
        break;
    }
    std::uint32_t cp = c;
    std::size_t len = 1;
    if (c >= 0xF0) {
      cp = c & 0x07U;
      len = 4;
    } else if (c >= 0xE0) {
      cp = c & 0x0FU;
      len = 3;
    } else if (c >= 0xC0) {
      cp = c & 0x1FU;
      len = 2;
    }
    for (std::size_t k = 1; k < len && i + k < s.size(); ++k) {
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3FU);
    }
    i += len;
    if (cp >= 0x10000) {
      cp -= 0x10000;
      write_escape(0xD800 + (cp >> 10), out);
      write_escape(0xDC00 + (cp & 0x3FF), out);
    } else {
      write_escape(cp, out);
    }
  }
  out.push_back('"');
}

struct Writer {
  const std::vector<std::string>& float_members;
  std::string out;

  bool is_float_member(const std::string& at) const {
    return std::find(float_members.begin(), float_members.end(), at) != float_members.end();
  }

  void number(double d, bool as_float) {
    if (!as_float && !(d == 0 && std::signbit(d))) {  // -0.0 has no int form
      if (auto i = exact_int(d)) {
        out.append(std::to_string(*i));
        return;
      }
    }
    write_python_float(d, out);
  }

  void value(const Value& v, std::string& at, bool in_float) {
    in_float = in_float || is_float_member(at);
    switch (v.kind()) {
      case Kind::Null:
        out.append("null");
        break;
      case Kind::Bool:
        out.append(v.as_bool() ? "true" : "false");
        break;
      case Kind::Number:
        number(v.as_number(), in_float || v.is_float_lexeme());
        break;
      case Kind::String:
        write_ascii_string(v.as_string(), out);
        break;
      case Kind::Array: {
        out.push_back('[');
        for (std::size_t i = 0; i < v.as_array().size(); ++i) {
          if (i != 0) out.push_back(',');
          const std::size_t mark = at.size();
          append_index(at, i);
          value(v.as_array()[i], at, in_float);
          at.resize(mark);
        }
        out.push_back(']');
        break;
      }
      case Kind::Object: {
        // Code point order is UTF-8 byte order, which std::string's comparison gives.
        std::vector<const Member*> members;
        for (const Member& m : v.as_object()) members.push_back(&m);
        std::sort(members.begin(), members.end(),
                  [](const Member* a, const Member* b) { return a->key < b->key; });
        out.push_back('{');
        for (std::size_t i = 0; i < members.size(); ++i) {
          if (i != 0) out.push_back(',');
          write_ascii_string(members[i]->key, out);
          out.push_back(':');
          const std::size_t mark = at.size();
          append_token(at, members[i]->key);
          value(members[i]->value, at, in_float);
          at.resize(mark);
        }
        out.push_back('}');
        break;
      }
    }
  }
};

}  // namespace

void write_python_float(double d, std::string& out) {
  if (!std::isfinite(
          d)) {  // Python refuses these (allow_nan=False); the strict readers never make one
    out.append("null");
    return;
  }
  if (std::signbit(d)) {
    out.push_back('-');
    d = -d;
  }
  if (d == 0) {
    out.append("0.0");
    return;
  }
  char buf[32];
  const auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  const char* e = static_cast<const char*>(std::memchr(buf, 'e', res.ptr - buf));
  std::string digits;
  for (const char* p = buf; p < e; ++p) {
    if (*p != '.') digits.push_back(*p);
  }
  int exp10 = 0;
  std::from_chars(e + (e[1] == '+' ? 2 : 1), res.ptr, exp10);
  const int point = exp10 + 1;  // value = 0.digits x 10^point
  const int n = static_cast<int>(digits.size());
  if (point <= -4 || point > 16) {  // Python's repr switches to exponent form here
    out.push_back(digits[0]);
    if (n > 1) {
      out.push_back('.');
      out.append(digits, 1);
    }
    out.push_back('e');
    out.push_back(exp10 < 0 ? '-' : '+');
    const int mag = exp10 < 0 ? -exp10 : exp10;
    if (mag < 10) out.push_back('0');
    out.append(std::to_string(mag));
  } else if (point <= 0) {
    out.append("0.");
    out.append(static_cast<std::size_t>(-point), '0');
    out.append(digits);
  } else if (point < n) {
    out.append(digits, 0, static_cast<std::size_t>(point));
    out.push_back('.');
    out.append(digits, static_cast<std::size_t>(point));
  } else {
    out.append(digits);
    out.append(static_cast<std::size_t>(point - n), '0');
    out.append(".0");
  }
}

std::string millforge_form(const Value& v, const std::vector<std::string>& float_members) {
  Writer w{float_members, {}};
  std::string at;
  w.value(v, at, false);
  w.out.push_back('\n');
  return std::move(w.out);
}

std::string millforge_digest(const Value& v, const std::vector<std::string>& float_members) {
  return hash::sha256_hex(millforge_form(v, float_members));
}

}  // namespace mf::json
