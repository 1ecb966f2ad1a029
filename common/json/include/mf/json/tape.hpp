// The tree-less fast path of the strict reader (docs/json.md, "Fast path"): one pass over the bytes
// records each value as a node of a flat, reused array, with no allocation per value. It accepts
// only what parse() accepts, under the same limits, and declines everything else, so a caller
// that falls back to parse() on a decline gets the strict reader's answer and diagnostics. What it
// accepts it reads as parse() does (tests/fuzz/tape_differential.cpp holds the two together).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"
#include "mf/json/value.hpp"

namespace mf::json {

class Tape;

// One value of a Tape. A default View is "absent" (what find() returns for a missing member).
class View {
 public:
  View() = default;

  explicit operator bool() const { return tape_ != nullptr; }
  Kind kind() const;
  bool is_null() const { return *this && kind() == Kind::Null; }
  bool is_bool() const { return *this && kind() == Kind::Bool; }
  bool is_number() const { return *this && kind() == Kind::Number; }
  bool is_string() const { return *this && kind() == Kind::String; }
  bool is_array() const { return *this && kind() == Kind::Array; }
  bool is_object() const { return *this && kind() == Kind::Object; }

  // The accessors answer for any View: false, 0, "", 0 entries when it is absent or of another
  // kind, so a check reads a member without first asking whether it is there.
  bool as_bool() const;
  double as_number() const;
  std::string_view as_string() const;  // decoded
  std::size_t string_size() const;     // as_string().size(), without decoding the escapes
  // As Value::as_exact_int.
  std::optional<std::int64_t> as_exact_int() const;
  // Entries of an array or members of an object.
  std::size_t size() const;

  // Object member by key (keys are unique), or an absent View.
  View find(std::string_view key) const;
  // The i-th element of an array, or the i-th member's value of an object (i < size()).
  View at(std::size_t i) const;
  // The i-th member's key of an object.
  std::string_view key_at(std::size_t i) const;

  // The value's bytes in the source document; in a canonical document, its canonical form.
  std::string_view raw() const;
  // The value as a tree, for the rare caller that keeps it.
  Value to_value() const;

  // Calls f(key, value) for each member of an object, or f("", element) for each element of an
  // array, in order, until f returns false; false when it did.
  template <class F>
  bool each(F&& f) const;

 private:
  friend class Tape;
  View(const Tape* tape, std::uint32_t node) : tape_(tape), node_(node) {}
  std::uint32_t child(std::size_t i) const;  // node of the i-th entry (an object's: its key)

  const Tape* tape_ = nullptr;
  std::uint32_t node_ = 0;
};

class Tape {
 public:
  // True when `text` is one strict JSON document within `limits` (parse() accepts it) that is
  // already in RFC 8785 canonical form (canonical(parse(text)) == text). The tape then views
  // `text`, which must outlive it. `known`: a string of `text` that canonical_string_at() has read,
  // taken as read.
  bool read_canonical(std::string_view text, const ReadLimits& limits = {},
                      const struct KnownString* known = nullptr);

  // Appends canonical(parse(text)) to `out` and returns true; or returns false with `out`
  // unchanged, declining. A decline is not a verdict: the strict reader decides. It writes as it
  // reads (Canonicalizer) and leaves the tape as it was.
  bool canonicalize(std::string_view text, const ReadLimits& limits, std::string& out) {
    return canonicalizer_.append(text, limits, out);
  }

  View root() const { return {this, 0}; }

 private:
  friend class View;
  struct Node {
    std::uint32_t end = 0;     // one past the last node of this value's subtree
    std::uint32_t count = 0;   // containers: entries; escaped strings: see decode()
    std::uint32_t offset = 0;  // strings: the text in the source, after the opening quote
    std::uint32_t size = 0;    // strings: the decoded text's bytes
    std::uint32_t src_begin = 0, src_end = 0;  // the value's bytes in the source
    double number = 0;                         // numbers; bools: 0 or 1
    Kind kind = Kind::Null;
    bool escaped = false;         // strings: decoded text differs from the source
    bool simple_integer = false;  // numbers: the lexeme is its own canonical form
  };

  std::string_view text(const Node& n) const {
    return n.escaped ? decode(n) : source_.substr(n.offset, n.size);
  }
  // The text of a string with escapes, decoded into decoded_ the first time it is asked for (most
  // escaped strings of a trace line are only checked, never read).
  std::string_view decode(const Node& n) const;

  std::string_view source_;
  std::vector<Node> nodes_;
  // Decoded strings of the document, sized once per document to hold all of it and 16 bytes more
  // (copy_plain's last store): a decoded string is never longer than its source, so the writes
  // need no capacity checks and the views handed out stay valid.
  mutable std::string decoded_;
  mutable std::size_t decoded_used_ = 0;
  struct Frame {
    std::uint32_t node;      // the open container
    std::uint32_t last_key;  // objects: the node of the last key read, 0 before the first
  };
  std::vector<Frame> open_;
  Canonicalizer canonicalizer_;
};

// A string of a document: its opening quote at `open`, its closing one at `close`, and its decoded
// text's size.
struct KnownString {
  std::size_t open = 0, close = 0, size = 0;
};

// The decoded text of the string whose opening quote is doc[at], when it is one a canonical
// document may hold there (its escapes the ones JCS writes, no raw control character, closed
// before the end of `doc`), for a reader that wants one string of a document without reading the
// rest; else nothing. Escaped text is decoded into `scratch`; the result views `doc` or `scratch`.
// As Tape reads the string when the document is read_canonical() (which may then be given
// `where`, filled in here, to take the string as read).
std::optional<std::string_view> canonical_string_at(std::string_view doc, std::size_t at,
                                                    std::string& scratch, KnownString& where);

// Appends canonical(parse(text)) + '\n' to `out`: through the tape where it reads the text, else
// through the strict reader, whose diagnostics (lines offset by line_offset) are returned with
// `out` unchanged. `tape` is scratch, reused between calls.
Status canonicalize_line(Tape& tape, std::string_view text, const ReadLimits& limits,
                         std::string& out, std::int64_t line_offset = 0);

// The accessors the trace verifier calls per member, inline.
inline Kind View::kind() const {
  return tape_->nodes_[node_].kind;
}

inline bool View::as_bool() const {
  return is_bool() && tape_->nodes_[node_].number != 0;
}

inline double View::as_number() const {
  return is_number() ? tape_->nodes_[node_].number : 0;
}

inline std::string_view View::as_string() const {
  return is_string() ? tape_->text(tape_->nodes_[node_]) : std::string_view();
}

inline std::size_t View::string_size() const {
  return is_string() ? tape_->nodes_[node_].size : 0;
}

// Always inlined: returned from a call, the optional is stored and at once reread wider (a
// store-forwarding stall on every member the verifier reads as a count).
[[gnu::always_inline]] inline std::optional<std::int64_t> View::as_exact_int() const {
  if (!is_number()) return std::nullopt;
  const Tape::Node& n = tape_->nodes_[node_];
  if (n.simple_integer) return static_cast<std::int64_t>(n.number);  // 15 digits at most
  return exact_int(n.number);
}

inline std::size_t View::size() const {
  return is_array() || is_object() ? tape_->nodes_[node_].count : 0;
}

template <class F>
bool View::each(F&& f) const {
  if (!is_array() && !is_object()) return true;
  const auto& nodes = tape_->nodes_;
  const bool object = nodes[node_].kind == Kind::Object;
  std::uint32_t c = node_ + 1;
  for (std::uint32_t k = 0; k < nodes[node_].count; ++k) {
    if (object) {
      if (!f(tape_->text(nodes[c]), View(tape_, c + 1))) return false;
      c = nodes[c + 1].end;
    } else {
      if (!f(std::string_view(), View(tape_, c))) return false;
      c = nodes[c].end;
    }
  }
  return true;
}

}  // namespace mf::json
