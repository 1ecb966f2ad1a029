// The scanner is one loop over the bytes with an explicit stack (no recursion: depth is bounded by
// the limits, not the C++ stack). The document is checked to be UTF-8 first, in one pass; plain
// string bytes are then skipped 16 at a time. Anything the strict reader would refuse, and
// anything this path does not handle, is a decline.
#include "mf/json/tape.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "mf/json/canonical.hpp"
#include "mf/text/utf8.hpp"
#include "number_lexeme.hpp"
#include "plain_run.hpp"

namespace mf::json {

namespace {

bool is_ws(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

int hex_digit(char c, bool lower_only) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (!lower_only && c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The byte a two-character escape stands for, by its second character; 0 for the others ('/'
// and 'u' are read apart, anything else is not an escape).
constexpr auto kUnescape = [] {
  std::array<char, 256> t{};
  t['"'] = '"';
  t['\\'] = '\\';
  t['b'] = '\b';
  t['f'] = '\f';
  t['n'] = '\n';
  t['r'] = '\r';
  t['t'] = '\t';
  return t;
}();

}  // namespace

bool Tape::scan(std::string_view doc, const ReadLimits& limits, bool canonical) {
  nodes_.clear();
  open_.clear();
  source_ = doc;
  if (doc.size() > limits.max_bytes || doc.size() >= std::numeric_limits<std::uint32_t>::max()) {
    return false;
  }
  // UTF-8 is checked once, over the whole document: outside strings any byte >= 0x80 is a
  // syntax error anyway, so the string scanner below treats such bytes as plain.
  if (!text::valid_utf8(doc)) return false;
  const char* const begin = doc.data();
  const char* const end = begin + doc.size();
  const char* p = begin;
  const auto offset = [&](const char* q) { return static_cast<std::uint32_t>(q - begin); };
  // Escaped strings are decoded into decoded_, sized once per document to hold all of it and 16
  // bytes more (copy_plain's last store): a decoded string is never longer than its source, so
  // the writes need no capacity checks.
  // `used` is how much of it this document's strings fill.
  std::size_t used = 0;
  char* out = nullptr;
  const auto skip_ws = [&]() {
    if (!canonical) {
      while (p < end && is_ws(*p)) ++p;
    }
  };

  // A string at p (the opening quote) into a new node; false to decline. A string without escapes
  // is viewed in the source; one with escapes is decoded into `out`, its plain runs copied 16
  // bytes at a time as they are scanned.
  const auto string = [&]() {
    // Each node is built in place: built on the stack and copied in, its narrow stores were
    // read back at once as wide loads, a store-forwarding stall per value.
    Node& n = nodes_.emplace_back();
    n.kind = Kind::String;
    n.src_begin = offset(p);
    ++p;
    n.offset = offset(p);
    p = detail::skip_plain(p, end);
    if (p == end) return false;
    if (*p == '"') {
      n.size = offset(p) - n.offset;
    } else {
      if (*p != '\\') return false;  // a raw control character
      if (out == nullptr) {          // the document's first escape
        if (decoded_.size() < doc.size() + 16) decoded_.resize(doc.size() + 16);
        out = decoded_.data();
      }
      n.escaped = true;
      const char* const plain_begin = begin + n.offset;
      n.offset = static_cast<std::uint32_t>(used);
      std::memcpy(out + used, plain_begin, static_cast<std::size_t>(p - plain_begin));
      used += static_cast<std::size_t>(p - plain_begin);
      for (;;) {  // p is at a backslash
        if (end - p < 2) return false;
        const char e = p[1];
        if (const char plain = kUnescape[static_cast<unsigned char>(e)]; plain != 0) {
          out[used++] = plain;
          p += 2;
        } else if (e == '/') {
          if (canonical) return false;
          n.canonical_escapes = false;
          out[used++] = '/';
          p += 2;
        } else if (e == 'u') {
          p += 2;
          const auto quad = [&](const char* q) {
            if (end - q < 4) return -1;
            int v = 0;
            for (int i = 0; i < 4; ++i) {
              const int d = hex_digit(q[i], canonical);
              if (d < 0) return -1;
              v = v * 16 + d;
            }
            return v;
          };
          int cp = quad(p);
          if (cp < 0) return false;
          // JCS writes a character above U+001F raw and five controls with short escapes; the
          // others as \u00xx with lowercase hex.
          if (cp >= 0x20 || short_escape(static_cast<unsigned char>(cp)) != 0 ||
              std::any_of(p, p + 4, [](char h) { return h >= 'A' && h <= 'F'; })) {
            if (canonical) return false;
            n.canonical_escapes = false;
          }
          p += 4;
          if (cp >= 0xDC00 && cp <= 0xDFFF) return false;  // a lone low surrogate
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (end - p < 6 || p[0] != '\\' || p[1] != 'u') return false;
            const int low = quad(p + 2);
            if (low < 0xDC00 || low > 0xDFFF) return false;
            p += 6;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          used += text::encode_utf8(static_cast<char32_t>(cp), out + used);
        } else {
          return false;
        }
        const char* const run = p;
        p = detail::copy_plain(p, end, out + used);
        used += static_cast<std::size_t>(p - run);
        if (p == end) return false;
        if (*p == '"') break;
        if (*p != '\\') return false;  // a raw control character
      }
      n.size = static_cast<std::uint32_t>(used - n.offset);
    }
    ++p;  // the closing quote
    n.src_end = offset(p);
    if (n.size > limits.max_string_bytes) return false;
    n.end = static_cast<std::uint32_t>(nodes_.size());
    return true;
  };

  const auto number = [&]() {
    Node& n = nodes_.emplace_back();
    n.kind = Kind::Number;
    n.src_begin = offset(p);
    detail::NumberLexeme lexeme;
    if (!detail::lex_number(p, end, lexeme)) return false;
    const char* q = lexeme.end;
    const char* digits = lexeme.int_begin;
    const std::size_t int_digits = lexeme.int_digits();
    const bool integer = lexeme.integer;
    const std::size_t len = static_cast<std::size_t>(q - p);
    if (len > limits.max_number_length) return false;
    if (integer && int_digits <= 15) {  // exact in a double: no rounding to do
      std::int64_t v = 0;
      for (const char* d = digits; d < q; ++d) v = v * 10 + (*d - '0');
      n.number = static_cast<double>(*p == '-' ? -v : v);
      if (v == 0 && *p == '-') n.number = -0.0;
    } else {
      auto [stop, ec] = std::from_chars(p, q, n.number);
      if (ec != std::errc() || stop != q || !std::isfinite(n.number)) return false;
    }
    // Up to 15 digits an integer is exact and ES6 writes it as these digits; "-0" it writes "0".
    n.simple_integer = integer && int_digits <= 15 && !(n.number == 0 && *p == '-');
    if (canonical && !n.simple_integer) {
      std::string form;
      write_number(n.number, form);
      if (form != std::string_view(p, len)) return false;
    }
    p = q;
    n.src_end = offset(p);
    n.end = static_cast<std::uint32_t>(nodes_.size());
    return true;
  };

  const auto literal = [&](std::string_view word, Kind kind, double value) {
    if (static_cast<std::size_t>(end - p) < word.size() ||
        std::memcmp(p, word.data(), word.size()) != 0) {
      return false;
    }
    Node& n = nodes_.emplace_back();
    n.kind = kind;
    n.number = value;
    n.src_begin = offset(p);
    p += word.size();
    n.src_end = offset(p);
    n.end = static_cast<std::uint32_t>(nodes_.size());
    return true;
  };

  // In canonical mode each member's key must sort strictly after the one before (which also
  // rules out duplicates); in the other mode duplicates are found when the members are sorted.
  const auto key = [&]() {
    if (p == end || *p != '"') return false;
    Frame& f = open_.back();
    if (++nodes_[f.node].count > limits.max_entries) return false;
    if (!string()) return false;
    const auto k = static_cast<std::uint32_t>(nodes_.size() - 1);
    if (canonical && f.last_key != 0 &&
        compare_utf16(text(nodes_[f.last_key]), text(nodes_[k])) >= 0) {
      return false;
    }
    f.last_key = k;
    skip_ws();
    if (p == end || *p != ':') return false;
    ++p;
    skip_ws();
    return true;
  };

  const auto open = [&](Kind kind) {
    if (open_.size() >= limits.max_depth) return false;
    Node& n = nodes_.emplace_back();
    n.kind = kind;
    n.src_begin = offset(p);
    ++p;
    open_.push_back({static_cast<std::uint32_t>(nodes_.size() - 1), 0});
    skip_ws();
    return true;
  };

  const auto close = [&]() {  // p is at the closing bracket
    Node& n = nodes_[open_.back().node];
    ++p;
    n.src_end = offset(p);
    n.end = static_cast<std::uint32_t>(nodes_.size());
    open_.pop_back();
  };

  skip_ws();
  for (;;) {
    // A value starts at p.
    if (p == end) return false;
    if (!open_.empty()) {
      Node& parent = nodes_[open_.back().node];
      if (parent.kind == Kind::Array && ++parent.count > limits.max_entries) return false;
    }
    switch (*p) {
      case '{':
        if (!open(Kind::Object)) return false;
        if (p < end && *p == '}') {
          close();
          break;
        }
        if (!key()) return false;
        continue;
      case '[':
        if (!open(Kind::Array)) return false;
        if (p < end && *p == ']') {
          close();
          break;
        }
        continue;
      case '"':
        if (!string()) return false;
        break;
      case 't':
        if (!literal("true", Kind::Bool, 1)) return false;
        break;
      case 'f':
        if (!literal("false", Kind::Bool, 0)) return false;
        break;
      case 'n':
        if (!literal("null", Kind::Null, 0)) return false;
        break;
      default:
        if (!number()) return false;
    }
    // After a value: the next entry, the end of containers, or the end of the document.
    for (;;) {
      skip_ws();
      if (open_.empty()) return p == end;
      if (p == end) return false;
      const Kind kind = nodes_[open_.back().node].kind;
      if (*p == ',') {
        ++p;
        skip_ws();
        if (kind == Kind::Object && !key()) return false;
        break;
      }
      if (*p != (kind == Kind::Object ? '}' : ']')) return false;
      close();
    }
  }
}

bool Tape::read_canonical(std::string_view text, const ReadLimits& limits) {
  return scan(text, limits, true);
}

// --- View -----------------------------------------------------------------------------------

std::uint32_t View::child(std::size_t i) const {
  const auto& nodes = tape_->nodes_;
  const bool object = nodes[node_].kind == Kind::Object;
  std::uint32_t c = node_ + 1;
  for (std::size_t k = 0; k < i; ++k) c = nodes[object ? c + 1 : c].end;
  return c;
}

View View::find(std::string_view key) const {
  if (!is_object()) return {};
  const auto& nodes = tape_->nodes_;
  std::uint32_t c = node_ + 1;
  for (std::uint32_t k = 0; k < nodes[node_].count; ++k) {
    if (tape_->text(nodes[c]) == key) return {tape_, c + 1};
    c = nodes[c + 1].end;
  }
  return {};
}

View View::at(std::size_t i) const {
  const std::uint32_t c = child(i);
  return {tape_, kind() == Kind::Object ? c + 1 : c};
}

std::string_view View::key_at(std::size_t i) const {
  return tape_->text(tape_->nodes_[child(i)]);
}

std::string_view View::raw() const {
  if (!*this) return {};
  const auto& n = tape_->nodes_[node_];
  return tape_->source_.substr(n.src_begin, n.src_end - n.src_begin);
}

Value View::to_value() const {
  switch (kind()) {
    case Kind::Null:
      return Value();
    case Kind::Bool:
      return Value(as_bool());
    case Kind::Number:
      return Value(as_number());
    case Kind::String:
      return Value(as_string());
    case Kind::Array: {
      Array a;
      a.reserve(size());
      each([&](std::string_view, View v) {
        a.push_back(v.to_value());
        return true;
      });
      return Value(std::move(a));
    }
    case Kind::Object:
      break;
  }
  Object o;
  o.reserve(size());
  each([&](std::string_view k, View v) {
    o.push_back(Member{std::string(k), v.to_value()});
    return true;
  });
  return Value(std::move(o));
}

Status canonicalize_line(Tape& tape, std::string_view text, const ReadLimits& limits,
                         std::string& out, std::int64_t line_offset) {
  if (!tape.canonicalize(text, limits, out)) {
    auto value = parse(text, limits, line_offset);
    if (!value) return value.take_diagnostics();
    write_canonical(*value, out);
  }
  out.push_back('\n');
  return {};
}

}  // namespace mf::json
