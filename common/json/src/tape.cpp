// The scanner is one loop over the bytes with an explicit stack (no recursion: depth is bounded by
// the limits, not the C++ stack). The document is checked to be UTF-8 first, in one pass; strings
// are then scanned, their plain runs 16 bytes at a time and each escape checked as it is met, and
// decoded only when their text is asked for. Anything the strict reader would refuse, anything not
// in canonical form, and anything this path does not handle, is a decline.
#include "mf/json/tape.hpp"

#include <array>
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

// The byte a two-character escape stands for, by its second character; 0 for the others ('u' is
// read apart; '/' and anything else is not a canonical escape).
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

// The source length of a canonical escape by its second character: 2, 6 for \u00xx, or 0.
constexpr auto kEscapeLength = [] {
  std::array<std::uint8_t, 256> t{};
  for (const char c : {'"', '\\', 'b', 'f', 'n', 'r', 't'}) t[static_cast<unsigned char>(c)] = 2;
  t['u'] = 6;
  return t;
}();

int lower_hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// The four characters after a "\u" at h: the escape JCS writes, \u00xx in lowercase hex for a
// control character that has no two-character escape. Anything else (other code points, uppercase
// hex, surrogates) is not canonical.
bool canonical_u(const char* h, const char* end) {
  if (end - h < 4 || h[0] != '0' || h[1] != '0' || (h[2] != '0' && h[2] != '1')) return false;
  const int low = lower_hex(h[3]);
  if (low < 0) return false;
  return short_escape(static_cast<unsigned char>((h[2] - '0') * 16 + low)) == 0;
}

// The string whose first byte (after the opening quote) is at p: moves p to its closing quote and
// counts in `removed` the bytes its escapes take beyond their decoded bytes (one for "\n", five
// for "\u001f"). False for a raw control character, an escape JCS does not write, or no closing
// quote. Plain runs are skipped 16 bytes at a time; an escape is checked by one table load (a
// \u escape read apart), and nothing is copied.
bool scan_string(const char*& p, const char* end, std::size_t& removed) {
  for (;;) {
    p = detail::skip_plain(p, end);
    if (p == end) return false;
    if (*p == '"') return true;
    if (*p != '\\' || end - p < 2) return false;  // a raw control character, or the end
    const int length = kEscapeLength[static_cast<unsigned char>(p[1])];
    if (length == 0 || (length == 6 && !canonical_u(p + 2, end))) return false;
    removed += static_cast<std::size_t>(length - 1);
    p += length;
  }
}

// Decodes the text of a string the scan accepted, [p, stop) up to its closing quote, to `out`,
// which has room for 16 bytes more (copy_plain's last store); returns the end of the text written.
char* decode_escaped(const char* p, const char* stop, char* out) {
  for (;;) {
    const char* const run = p;
    p = detail::copy_plain(p, stop, out);
    out += p - run;
    if (p == stop) return out;
    if (p[1] == 'u') {  // \u00xx
      *out++ = static_cast<char>((p[4] - '0') * 16 + lower_hex(p[5]));
      p += 6;
    } else {
      *out++ = kUnescape[static_cast<unsigned char>(p[1])];
      p += 2;
    }
  }
}

}  // namespace

std::optional<std::string_view> canonical_string_at(std::string_view doc, std::size_t at,
                                                    std::string& scratch, KnownString& where) {
  if (at >= doc.size() || doc[at] != '"') return std::nullopt;
  // The scan and the decoding in one pass: the text is copied as it is read.
  const char* p = doc.data() + at + 1;
  const char* const end = doc.data() + doc.size();
  if (scratch.size() < doc.size() + 16) scratch.resize(doc.size() + 16);
  char* const first = scratch.data();
  char* out = first;
  for (;;) {
    const char* const run = p;
    p = detail::copy_plain(p, end, out);
    out += p - run;
    if (p == end) return std::nullopt;
    if (*p == '"') {
      where = {at, static_cast<std::size_t>(p - doc.data()), static_cast<std::size_t>(out - first)};
      return std::string_view(first, where.size);
    }
    if (*p != '\\' || end - p < 2) return std::nullopt;  // a raw control character, or the end
    const int length = kEscapeLength[static_cast<unsigned char>(p[1])];
    if (length == 0) return std::nullopt;
    if (length == 6) {
      if (!canonical_u(p + 2, end)) return std::nullopt;
      *out++ = static_cast<char>((p[4] - '0') * 16 + lower_hex(p[5]));
    } else {
      *out++ = kUnescape[static_cast<unsigned char>(p[1])];
    }
    p += length;
  }
}

bool Tape::read_canonical(std::string_view doc, const ReadLimits& limits,
                          const KnownString* known) {
  nodes_.clear();
  open_.clear();
  source_ = doc;
  decoded_used_ = 0;
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
  const char* const known_open =
      known != nullptr && known->close < doc.size() ? begin + known->open : nullptr;

  // A string at p (the opening quote) into a new node; false to decline. Its text stays in the
  // source; one with escapes is decoded when its text is first asked for (text()).
  const auto string = [&]() {
    // Each node is built in place: built on the stack and copied in, its narrow stores were
    // read back at once as wide loads, a store-forwarding stall per value.
    Node& n = nodes_.emplace_back();
    n.kind = Kind::String;
    n.src_begin = offset(p);
    ++p;
    n.offset = offset(p);
    std::size_t removed = 0;
    if (p - 1 == known_open) {  // read already: its text ends at the closing quote
      p = begin + known->close;
      removed = known->close - known->open - 1 - known->size;
    } else if (!scan_string(p, end, removed)) {
      return false;
    }
    n.escaped = removed != 0;
    const std::size_t size = static_cast<std::size_t>(offset(p) - n.offset) - removed;
    n.size = static_cast<std::uint32_t>(size);
    ++p;  // the closing quote
    n.src_end = offset(p);
    if (size > limits.max_string_bytes) return false;
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
    if (!n.simple_integer) {
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

  // Each member's key must sort strictly after the one before (which also rules out duplicates).
  const auto key = [&]() {
    if (p == end || *p != '"') return false;
    Frame& f = open_.back();
    if (++nodes_[f.node].count > limits.max_entries) return false;
    if (!string()) return false;
    const auto k = static_cast<std::uint32_t>(nodes_.size() - 1);
    if (f.last_key != 0 && compare_utf16(text(nodes_[f.last_key]), text(nodes_[k])) >= 0) {
      return false;
    }
    f.last_key = k;
    if (p == end || *p != ':') return false;
    ++p;
    return true;
  };

  const auto open = [&](Kind kind) {
    if (open_.size() >= limits.max_depth) return false;
    Node& n = nodes_.emplace_back();
    n.kind = kind;
    n.src_begin = offset(p);
    ++p;
    open_.push_back({static_cast<std::uint32_t>(nodes_.size() - 1), 0});
    return true;
  };

  const auto close = [&]() {  // p is at the closing bracket
    Node& n = nodes_[open_.back().node];
    ++p;
    n.src_end = offset(p);
    n.end = static_cast<std::uint32_t>(nodes_.size());
    open_.pop_back();
  };

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
      if (open_.empty()) return p == end;
      if (p == end) return false;
      const Kind kind = nodes_[open_.back().node].kind;
      if (*p == ',') {
        ++p;
        if (kind == Kind::Object && !key()) return false;
        break;
      }
      if (*p != (kind == Kind::Object ? '}' : ']')) return false;
      close();
    }
  }
}

std::string_view Tape::decode(const Node& n) const {
  if (n.count == 0) {  // not decoded yet: its escapes were checked by the scan
    if (decoded_used_ == 0 && decoded_.size() < source_.size() + 16) {
      decoded_.resize(source_.size() + 16);  // the document's first: no view of decoded_ is held
    }
    char* const first = decoded_.data() + decoded_used_;
    const char* const out =
        decode_escaped(source_.data() + n.offset, source_.data() + n.src_end - 1, first);
    // Strings have no member count: it holds where the decoded text starts, plus one.
    const_cast<Node&>(n).count = static_cast<std::uint32_t>(decoded_used_ + 1);
    decoded_used_ += static_cast<std::size_t>(out - first);
  }
  return std::string_view(decoded_).substr(n.count - 1, n.size);
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
