// The YAML reader drives yaml-cpp's event parser, never YAML::Load: the node API would already have
// resolved aliases, merge keys and tags into a graph before we could refuse them, and would type
// scalars by its own (YAML 1.1-flavoured) rules. The handler builds Values on an explicit stack and
// checks each node as its event arrives. yaml-cpp cannot be asked to stop, so the handler throws a
// private exception at the first error: this keeps a rejected document from being parsed (and
// allocated) to the end, and bounds yaml-cpp's recursion by our max_depth instead of its own 500.
//
// yaml-cpp is more lenient than YAML 1.2 and misreads some of it, so the front end does part of
// the reading itself (lexical.hpp): a pre-pass over the raw text refuses what yaml-cpp would
// accept and normalises what it would misread, without moving any offset; quoted and block
// scalars are decoded from the text at the offset yaml-cpp reports, and the indentation of flow
// content in block context is checked there too. yaml-cpp still decides the structure. Control
// characters are checked twice: on the raw text before yaml-cpp sees it, and on every decoded
// scalar (an escape can produce any code point).
#include "mf/yaml/reader.hpp"

#include <yaml-cpp/anchor.h>
#include <yaml-cpp/emitterstyle.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <exception>
#include <istream>
#include <memory>
#include <optional>
#include <streambuf>
#include <string>
#include <unordered_map>
#include <vector>

#include "lexical.hpp"
#include "mf/diag/codes.hpp"
#include "mf/json/key_index.hpp"
#include "mf/json/pointer.hpp"
#include "mf/text/utf8.hpp"

namespace mf::yaml {

namespace {

using diag::Diagnostic;
using json::Value;
namespace codes = diag::codes;

constexpr std::string_view kBom = "\xEF\xBB\xBF";

// Integers beyond this magnitude would be rounded by the double in json::Value.
constexpr std::uint64_t kMaxExactInteger = std::uint64_t{1} << 53;

bool is_forbidden_control(unsigned char c) {
  return c < 0x20 && c != '\t' && c != '\n' && c != '\r';
}

// The first byte that is not valid UTF-8 or is a forbidden control character.
struct BadByte {
  std::size_t offset;
  bool control;  // otherwise invalid UTF-8
};

std::optional<BadByte> first_bad_byte(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (is_forbidden_control(c)) return BadByte{i, true};
    const std::size_t n = text::utf8_sequence_length(s, i);
    if (n == 0) return BadByte{i, false};
    i += n;
  }
  return std::nullopt;
}

// Lets yaml-cpp read the caller's bytes in place; the get area is never written through.
class ViewBuffer : public std::streambuf {
 public:
  explicit ViewBuffer(std::string_view s) {
    char* begin = const_cast<char*>(s.data());
    setg(begin, begin, begin + s.size());
  }
};

// YAML 1.2 core schema (spec §10.3.2) resolution of a plain scalar. Non-finite floats are a type
// of their own because they are refused, not read.
enum class PlainType { Null, Bool, Integer, Float, NonFinite, String };

std::string_view type_name(PlainType t) {
  switch (t) {
    case PlainType::Null:
      return "null";
    case PlainType::Bool:
      return "a bool";
    case PlainType::Integer:
      return "an integer";
    case PlainType::Float:
    case PlainType::NonFinite:
      return "a float";
    case PlainType::String:
      break;
  }
  return "a string";
}

bool all_digits(std::string_view s, int base) {
  if (s.empty()) return false;
  for (const char c : s) {
    const bool ok = base == 16  ? std::isxdigit(static_cast<unsigned char>(c)) != 0
                    : base == 8 ? c >= '0' && c <= '7'
                                : c >= '0' && c <= '9';
    if (!ok) return false;
  }
  return true;
}

std::size_t count_digits(std::string_view s, std::size_t i) {
  std::size_t n = 0;
  while (i + n < s.size() && s[i + n] >= '0' && s[i + n] <= '9') ++n;
  return n;
}

// (\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? with the sign already removed.
bool is_core_float(std::string_view s) {
  std::size_t i = count_digits(s, 0);
  const bool int_digits = i > 0;
  if (i < s.size() && s[i] == '.') {
    const std::size_t frac = count_digits(s, i + 1);
    if (!int_digits && frac == 0) return false;
    i += 1 + frac;
  } else if (!int_digits) {
    return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    const std::size_t exp = count_digits(s, i);
    if (exp == 0) return false;
    i += exp;
  }
  return i == s.size();
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != b[i]) return false;
  }
  return true;
}

std::string_view without_sign(std::string_view s) {
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.remove_prefix(1);
  return s;
}

PlainType classify(std::string_view s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return PlainType::Null;
  if (s == "true" || s == "True" || s == "TRUE" || s == "false" || s == "False" || s == "FALSE") {
    return PlainType::Bool;
  }
  const std::string_view body = without_sign(s);
  if (all_digits(body, 10)) return PlainType::Integer;
  if (s.size() > 2 && s[0] == '0' && s[1] == 'o' && all_digits(s.substr(2), 8)) {
    return PlainType::Integer;
  }
  if (s.size() > 2 && s[0] == '0' && s[1] == 'x' && all_digits(s.substr(2), 16)) {
    return PlainType::Integer;
  }
  if (is_core_float(body)) return PlainType::Float;
  // The core schema spells these .inf/.Inf/.INF and .nan/.NaN/.NAN; any case and sign is refused
  // so that a near-miss spelling does not quietly become a string where a number was meant.
  if (equals_ignoring_case(body, ".inf") || equals_ignoring_case(body, ".nan")) {
    return PlainType::NonFinite;
  }
  return PlainType::String;
}

// Why a number lexeme could not become a Value.
enum class NumberError { None, TooBig, OutOfRange };

// Integer lexemes are converted exactly or refused; from_chars on the digits alone would also
// accept the forms the core schema does not (a sign before 0x).
NumberError integer_value(std::string_view s, double& out) {
  int base = 10;
  bool negative = false;
  std::string_view digits = s;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'o' || s[1] == 'x')) {
    base = s[1] == 'o' ? 8 : 16;
    digits.remove_prefix(2);
  } else {
    negative = s[0] == '-';
    digits = without_sign(s);
  }
  while (digits.size() > 1 && digits[0] == '0') digits.remove_prefix(1);
  std::uint64_t magnitude = 0;
  const auto [end, ec] =
      std::from_chars(digits.data(), digits.data() + digits.size(), magnitude, base);
  if (ec == std::errc::result_out_of_range || magnitude > kMaxExactInteger) {
    return NumberError::TooBig;
  }
  if (ec != std::errc() || end != digits.data() + digits.size()) return NumberError::OutOfRange;
  const double d = static_cast<double>(magnitude);
  out = negative ? -d : d;  // "-0" reads as -0.0, as the JSON reader reads it
  return NumberError::None;
}

NumberError float_value(std::string_view s, double& out) {
  if (s[0] == '+') s.remove_prefix(1);  // from_chars takes no leading '+'
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(out)) {
    return NumberError::OutOfRange;
  }
  return NumberError::None;
}

// A scalar quoted in a message, cut short: a key may be 64 KiB long.
std::string excerpt(std::string_view s) {
  constexpr std::size_t kMax = 64;
  if (s.size() <= kMax) return std::string(s);
  return std::string(text::utf8_prefix(s, kMax)) + "...";
}

// Thrown by the handler to unwind out of yaml-cpp at the first error; the diagnostic stays in the
// handler. Not derived from std::exception so no handler on the way can mistake it for a failure
// of yaml-cpp's own.
struct Stop {};

class Builder final : public YAML::EventHandler {
 public:
  Builder(std::string_view text, const ReadLimits& limits,
          std::vector<std::pair<std::string, std::size_t>>* offsets = nullptr)
      : text_(text), limits_(limits), offsets_(offsets) {}

  void OnDocumentStart(const YAML::Mark& mark) override {
    note(mark);
    if (++documents_ > 1) {
      // yaml-cpp starts a new document at any token after a complete root node, but YAML only
      // does so after "..." or at "---"; anything else is trailing content, a syntax error.
      if (starts_explicit_document(mark)) {
        fail(codes::kYamlMultiDoc, "more than one YAML document in the stream", mark, "");
      }
      fail(codes::kMalformed, "trailing content after the document", mark, "");
    }
  }
  void OnDocumentEnd() override {}

  void OnAnchor(const YAML::Mark& mark, const std::string& name) override {
    note(mark);
    fail(codes::kYamlAlias, "anchor &" + name + " is not allowed", mark, current_pointer());
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
    note(mark);
    fail(codes::kYamlAlias, "aliases are not allowed", mark, current_pointer());
  }

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    begin_node(mark, anchor, "?");
    if (in_key_position()) {
      Frame& f = frames_.back();
      if (f.block) {
        fail(codes::kYamlUnsafe, "mapping key is null; keys must be strings", mark,
             current_pointer());
      }
      // yaml-cpp also reports a null key where it cannot read a flow mapping key that is
      // followed by a line break before its ':', and then throws a syntax error; refused when the
      // mapping closes, the null key is not mistaken for the cause.
      if (!f.null_key) {
        f.null_key = true;
        f.null_key_error = diag::error(
            codes::kYamlUnsafe, "mapping key is null; keys must be strings", current_pointer());
        f.null_key_mark = mark;
      }
      f.key.clear();
      f.key_pending = true;
      f.drop_value = true;
      return;
    }
    // yaml-cpp reads a block mapping line with no ':' ("b" after "a: 1") as a key with a null
    // value, which it reports at the key's own position; a written "b:" puts the null after the
    // ':', and an explicit "? b" key starts at the '?'.
    if (!frames_.empty() && frames_.back().block && frames_.back().key_pending &&
        frames_.back().key_pos == mark.pos) {
      fail(codes::kMalformed, "expected ':' after the mapping key", mark, current_pointer());
    }
    if (frames_.empty()) {
      // yaml-cpp reports an empty node (a document of only "---") as null too; only a null
      // that is written out makes a document that is not empty.
      root_empty_ = !written_null_at(mark);
    }
    add(Value(), mark);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& raw_value) override {
    begin_node(mark, anchor, tag);
    const bool key = in_key_position();
    // Quoted and block scalars are read from the text (lexical.hpp), not taken from yaml-cpp.
    std::string decoded;
    const char indicator = tag == "!" ? char_at(mark) : '\0';
    if (indicator == '"' || indicator == '\'' || indicator == '|' || indicator == '>') {
      detail::Decoded d =
          indicator == '|' || indicator == '>'
              ? detail::decode_block(text_, static_cast<std::size_t>(mark.pos), block_indent())
              : detail::decode_quoted(text_, static_cast<std::size_t>(mark.pos),
                                      block_indent() + 1);
      if (d.error) fail_at(*d.error);
      decoded = std::move(d.value);
    }
    const std::string& value = indicator != '\0' ? decoded : raw_value;
    if (value.size() > limits_.max_scalar_bytes) {
      fail(codes::kLimitExceeded,
           "scalar of " + std::to_string(value.size()) + " bytes exceeds the limit of " +
               std::to_string(limits_.max_scalar_bytes),
           mark, current_pointer());
    }
    // The raw text passed both checks, so a hit here came from an escape sequence.
    if (const auto bad = first_bad_byte(value)) {
      if (bad->control) {
        fail(codes::kMalformed, "scalar contains a control character (escaped)", mark,
             current_pointer());
      }
      fail(codes::kNotUtf8, "scalar is not valid UTF-8 (escaped)", mark, current_pointer());
    }
    // Only an untagged plain scalar ("?") is resolved; quoted and block scalars ("!") are strings.
    const PlainType type = tag == "?" ? classify(value) : PlainType::String;
    if (key) {
      if (type != PlainType::String) {
        fail(codes::kYamlUnsafe,
             "mapping key " + excerpt(value) + " is " + std::string(type_name(type)) +
                 " under the YAML 1.2 core schema; quote it to make it a string key",
             mark, current_pointer());
      }
      if (tag == "?" && value == "<<") {
        fail(codes::kYamlUnsafe, "merge keys (<<) are not allowed", mark, current_pointer());
      }
      set_key(value, mark);
      return;
    }
    add(scalar_value(type, value, mark), mark);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value style) override {
    open(mark, tag, anchor, style, Value(json::Array{}));
  }
  void OnSequenceEnd() override { close(); }

  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value style) override {
    open(mark, tag, anchor, style, Value(json::Object{}));
  }
  void OnMapEnd() override { close(); }

  // The pointer of the node being read: through every open collection to its current slot. While
  // a mapping waits for a key, this is the mapping itself.
  std::string current_pointer() const {
    std::string pointer;
    for (const Frame& f : frames_) {
      if (f.value.is_object()) {
        if (f.key_pending) json::append_token(pointer, f.key);
      } else {
        json::append_index(pointer, f.value.as_array().size());
      }
    }
    return pointer;
  }

  bool has_root() const { return has_root_; }
  bool root_empty() const { return root_empty_; }
  const YAML::Mark& root_mark() const { return root_mark_; }
  const YAML::Mark& last_mark() const { return last_mark_; }
  Value take_root() { return std::move(root_); }
  Diagnostic take_error() { return std::move(error_); }
  const YAML::Mark& error_mark() const { return error_mark_; }

 private:
  struct Frame {
    Value value;
    std::string key;
    bool key_pending = false;
    bool is_key = false;  // a collection used as a mapping key: refused when it closes
    bool block = false;   // block style (not flow)
    int key_pos = -1;     // where the pending key starts
    json::KeyIndex keys;
    int indent = -1;          // block style: the column of its keys or its '-'
    bool null_key = false;    // a flow mapping with a null key, refused when it closes
    bool drop_value = false;  // the next value belongs to that null key
    Diagnostic null_key_error;
    YAML::Mark null_key_mark;
  };

  [[noreturn]] void fail(const char* code, std::string message, const YAML::Mark& mark,
                         std::string pointer) {
    error_ = diag::error(code, std::move(message), std::move(pointer));
    error_mark_ = mark;
    throw Stop{};
  }

  [[noreturn]] void fail_at(const detail::LexError& e) {
    YAML::Mark mark;
    mark.pos = static_cast<int>(e.offset);
    fail(e.code, e.message, mark, current_pointer());
  }

  // The column of the innermost block collection (its keys or its '-'), -1 at the top level: what
  // block scalars and flow content are indented against.
  int block_indent() const {
    for (auto f = frames_.rbegin(); f != frames_.rend(); ++f) {
      if (f->block) return f->indent;
    }
    return -1;
  }

  void note(const YAML::Mark& mark) {
    if (!mark.is_null()) last_mark_ = mark;
  }

  char char_at(const YAML::Mark& mark) const {
    return mark.pos >= 0 && static_cast<std::size_t>(mark.pos) < text_.size() ? text_[mark.pos]
                                                                              : '\0';
  }

  // Whether the document starting at `mark` opens with "---" or follows a "..." line (ignoring
  // blank and comment lines in between).
  bool starts_explicit_document(const YAML::Mark& mark) const {
    if (mark.pos < 0 || static_cast<std::size_t>(mark.pos) > text_.size()) return false;
    if (text_.substr(mark.pos).starts_with("---")) return true;
    std::string_view before = text_.substr(0, mark.pos);
    while (!before.empty()) {
      const std::size_t nl = before.find_last_of('\n');
      std::string_view line = nl == std::string_view::npos ? before : before.substr(nl + 1);
      before = nl == std::string_view::npos ? std::string_view() : before.substr(0, nl);
      const std::size_t first = line.find_first_not_of(" \t\r");
      if (first == std::string_view::npos || line[first] == '#') continue;
      if (!line.starts_with("...")) return false;
      const std::size_t rest = line.find_first_not_of(" \t\r", 3);
      return rest == std::string_view::npos || line[rest] == '#';
    }
    return false;
  }

  bool written_null_at(const YAML::Mark& mark) const {
    if (mark.pos < 0 || static_cast<std::size_t>(mark.pos) >= text_.size()) return false;
    const std::string_view rest = text_.substr(mark.pos);
    return rest.starts_with('~') || rest.starts_with("null") || rest.starts_with("Null") ||
           rest.starts_with("NULL");
  }

  bool in_key_position() const {
    return !frames_.empty() && frames_.back().value.is_object() && !frames_.back().key_pending;
  }

  // Checks every node shares: anchors, tags and the node count. `tag_at_mark` says whether a '!'
  // at the mark can only be this node's tag: a block mapping's mark is its first key, so a '!'
  // there is that key's tag, which the key's own event reports.
  void begin_node(const YAML::Mark& mark, YAML::anchor_t anchor, const std::string& tag,
                  bool tag_at_mark = true) {
    note(mark);
    if (anchor != YAML::NullAnchor) {
      fail(codes::kYamlAlias, "anchors are not allowed", mark, current_pointer());
    }
    // yaml-cpp reports untagged plain nodes as "?" and quoted scalars as "!", but the explicit
    // non-specific tag "!" (and a verbatim !<?>) look the same; the node's first character tells
    // them apart, since a tag is the only property left once anchors are refused.
    if ((tag != "?" && tag != "!") || (tag_at_mark && char_at(mark) == '!')) {
      fail(codes::kYamlUnsafe,
           tag == "?" || tag == "!" ? std::string("explicit tags are not allowed")
                                    : "explicit tag " + tag + " is not allowed",
           mark, current_pointer());
    }
    if (++nodes_ > limits_.max_entries) {
      fail(codes::kLimitExceeded,
           "document has more than " + std::to_string(limits_.max_entries) + " nodes", mark,
           current_pointer());
    }
    if (offsets_ != nullptr && !in_key_position() && mark.pos >= 0) {
      const Frame* parent = frames_.empty() ? nullptr : &frames_.back();
      const int at =
          parent && parent->key_pending && parent->key_pos >= 0 ? parent->key_pos : mark.pos;
      offsets_->emplace_back(current_pointer(), static_cast<std::size_t>(at));
    }
  }

  Value scalar_value(PlainType type, const std::string& value, const YAML::Mark& mark) {
    switch (type) {
      case PlainType::Null:
        return Value();
      case PlainType::Bool:
        return Value(value[0] == 't' || value[0] == 'T');
      case PlainType::NonFinite:
        fail(codes::kMalformed, "non-finite number " + value + " is not allowed", mark,
             current_pointer());
      case PlainType::Integer:
      case PlainType::Float:
        break;
      case PlainType::String:
        return Value(value);
    }
    if (value.size() > limits_.max_number_length) {
      fail(codes::kLimitExceeded,
           "number lexeme of " + std::to_string(value.size()) +
               " characters exceeds the limit of " + std::to_string(limits_.max_number_length),
           mark, current_pointer());
    }
    double d = 0;
    const NumberError e =
        type == PlainType::Integer ? integer_value(value, d) : float_value(value, d);
    if (e == NumberError::TooBig) {
      fail(codes::kLimitExceeded,
           "integer " + value + " is beyond 2^53 and cannot be represented exactly", mark,
           current_pointer());
    }
    if (e == NumberError::OutOfRange) {
      fail(codes::kMalformed, "number " + value + " is not representable as a finite double", mark,
           current_pointer());
    }
    return Value(d);
  }

  void set_key(const std::string& key, const YAML::Mark& mark) {
    Frame& f = frames_.back();
    if (f.keys.contains(f.value.as_object(), key)) {
      std::string pointer = current_pointer();
      json::append_token(pointer, key);
      fail(codes::kDuplicateKey, "duplicate mapping key \"" + excerpt(key) + "\"", mark,
           std::move(pointer));
    }
    f.key = key;
    f.key_pending = true;
    f.key_pos = mark.pos;
  }

  void open(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
            YAML::EmitterStyle::value style, Value container) {
    begin_node(mark, anchor, tag, style == YAML::EmitterStyle::Flow);
    if (tag != "?") {  // "!" on a collection can only be the explicit non-specific tag
      fail(codes::kYamlUnsafe, "explicit tags are not allowed", mark, current_pointer());
    }
    if (frames_.size() >= limits_.max_depth) {
      fail(codes::kLimitExceeded,
           "nesting deeper than " + std::to_string(limits_.max_depth) + " levels", mark,
           current_pointer());
    }
    if (frames_.empty()) root_mark_ = mark;
    // A collection in key position is refused only once it is complete, so that a syntax error
    // inside it (yaml-cpp reads an unclosed "[a, b" as the key of a mapping) is reported as the
    // syntax error it is.
    const bool block = style != YAML::EmitterStyle::Flow;
    if (!block && block_indent() >= 0 && (frames_.empty() || frames_.back().block)) {
      if (const auto e = detail::check_flow_indentation(text_, static_cast<std::size_t>(mark.pos),
                                                        block_indent() + 1)) {
        fail_at(*e);
      }
    }
    const bool is_key = in_key_position();
    if (is_key) {
      key_error_ = diag::error(codes::kYamlUnsafe,
                               std::string("mapping key is a ") +
                                   (container.is_object() ? "mapping" : "sequence") +
                                   "; keys must be strings",
                               current_pointer());
      key_error_mark_ = mark;
    }
    Frame& f = frames_.emplace_back();
    f.value = std::move(container);
    f.is_key = is_key;
    f.block = block;
    if (block) f.indent = detail::column_of(text_, static_cast<std::size_t>(mark.pos));
  }

  void close() {
    if (frames_.back().null_key) {
      error_ = std::move(frames_.back().null_key_error);
      error_mark_ = frames_.back().null_key_mark;
      throw Stop{};
    }
    if (frames_.back().is_key) {
      error_ = std::move(key_error_);
      error_mark_ = key_error_mark_;
      throw Stop{};
    }
    Value done = std::move(frames_.back().value);
    frames_.pop_back();
    add(std::move(done), last_mark_);
  }

  void add(Value v, const YAML::Mark& mark) {
    if (frames_.empty()) {
      root_ = std::move(v);
      has_root_ = true;
      if (!root_.is_array() && !root_.is_object()) root_mark_ = mark;
      return;
    }
    Frame& f = frames_.back();
    if (f.drop_value) {
      f.drop_value = false;
      f.key_pending = false;
      return;
    }
    if (f.value.is_object()) {
      json::Object& members = f.value.as_object();
      f.keys.adding(f.key, members.size());
      members.push_back(json::Member{std::move(f.key), std::move(v)});
      f.key.clear();
      f.key_pending = false;
    } else {
      f.value.as_array().push_back(std::move(v));
    }
  }

  std::string_view text_;
  const ReadLimits& limits_;
  std::vector<Frame> frames_;
  Value root_;
  bool has_root_ = false;
  bool root_empty_ = false;
  YAML::Mark root_mark_;
  YAML::Mark last_mark_;
  std::size_t documents_ = 0;
  std::size_t nodes_ = 0;
  std::vector<std::pair<std::string, std::size_t>>* offsets_ = nullptr;  // source_map() only
  Diagnostic error_;
  YAML::Mark error_mark_;
  Diagnostic key_error_;
  YAML::Mark key_error_mark_;
};

struct Parsed {
  Result<Value> value;
  json::SourcePosition root;
};

Parsed parse_located(std::string_view text, const ReadLimits& limits, std::string& work,
                     std::vector<std::pair<std::string, std::size_t>>* offsets = nullptr) {
  if (text.size() > limits.max_bytes) {
    return {diag::error(codes::kTooLarge,
                        "document of " + std::to_string(text.size()) +
                            " bytes exceeds the limit of " + std::to_string(limits.max_bytes),
                        "", 1, 1),
            {}};
  }
  // Positions are reported against the text after the BOM, which is what yaml-cpp's marks count.
  std::string_view body = text.starts_with(kBom) ? text.substr(kBom.size()) : text;
  auto at = [&](Diagnostic d, std::size_t offset) -> Parsed {
    const json::SourcePosition p = json::position_at(body, offset);
    d.line = p.line;
    d.column = p.column;
    return {std::move(d), {}};
  };
  auto at_mark = [&](Diagnostic d, const YAML::Mark& mark) -> Parsed {
    return at(std::move(d), mark.pos >= 0 ? static_cast<std::size_t>(mark.pos) : 0);
  };

  if (const auto bad = detail::check_characters(body)) {
    return at(diag::error(bad->code, bad->message), bad->offset);
  }
  // The pre-pass keeps every offset, so marks into `work` are offsets into `body` too; positions
  // are counted on `work`, where a lone CR has become the line break it is.
  work = std::string(body);
  const std::optional<detail::LexError> lexical = detail::prepass(work);
  body = work;
  if (lexical) return at(diag::error(lexical->code, lexical->message), lexical->offset);

  Builder builder(body, limits, offsets);
  ViewBuffer buffer(body);
  std::istream in(&buffer);
  auto fallback_mark = [&](const YAML::Mark& mark) {
    return mark.is_null() || mark.pos < 0 ? builder.last_mark() : mark;
  };
  // Everything yaml-cpp throws is a malformed document; its exceptions must never leave parse().
  try {
    YAML::Parser parser(in);
    if (!parser.HandleNextDocument(builder)) {
      return at(diag::error(codes::kMalformed, "the YAML stream holds no document"), body.size());
    }
    // The handler refuses a second document at its start; this covers one it never announced.
    if (parser.HandleNextDocument(builder)) {
      return at(diag::error(codes::kYamlMultiDoc, "more than one YAML document in the stream"),
                body.size());
    }
  } catch (const Stop&) {
    const YAML::Mark mark = fallback_mark(builder.error_mark());
    return at_mark(builder.take_error(), mark);
  } catch (const YAML::Exception& e) {
    const char* code = codes::kMalformed;
    std::string message = "YAML syntax error: " + e.msg;
    if (std::string_view(e.msg).starts_with(YAML::ErrorMsg::UNKNOWN_ANCHOR)) {
      code = codes::kYamlAlias;  // an alias without its anchor is still an alias
      message = "aliases are not allowed";
    } else if (std::string_view(e.msg).starts_with(YAML::ErrorMsg::INVALID_UNICODE)) {
      code = codes::kNotUtf8;  // an escape naming a surrogate or a code point past U+10FFFF
      message = "escape does not encode a Unicode scalar value: " + e.msg;
    }
    return at_mark(diag::error(code, std::move(message), builder.current_pointer()),
                   fallback_mark(e.mark));
  } catch (const std::exception& e) {
    return at_mark(diag::error(codes::kMalformed, std::string("YAML parser failed: ") + e.what(),
                               builder.current_pointer()),
                   builder.last_mark());
  } catch (...) {
    return at_mark(diag::error(codes::kMalformed, "YAML parser failed", builder.current_pointer()),
                   builder.last_mark());
  }
  if (!builder.has_root() || builder.root_empty()) {
    return at_mark(diag::error(codes::kMalformed, "the YAML document is empty"),
                   builder.root_mark());
  }
  const YAML::Mark root = builder.root_mark();
  return {builder.take_root(), json::position_at(body, root.pos >= 0 ? std::size_t(root.pos) : 0)};
}

}  // namespace

Result<Value> parse(std::string_view text, const ReadLimits& limits) {
  std::string work;
  return std::move(parse_located(text, limits, work).value);
}

Result<Value> parse_object(std::string_view text, const ReadLimits& limits) {
  std::string work;
  Parsed p = parse_located(text, limits, work);
  if (p.value.ok() && !p.value->is_object()) {
    return diag::error(codes::kNotObject,
                       "top-level value is " + std::string(json::kind_name(p.value->kind())) +
                           ", expected a mapping",
                       "", p.root.line, p.root.column);
  }
  return std::move(p.value);
}

json::SourceMap source_map(std::string_view text, const ReadLimits& limits) {
  std::vector<std::pair<std::string, std::size_t>> offsets;
  std::string work;  // the normalised text, whose lines the positions count
  if (!parse_located(text, limits, work, &offsets).value.ok()) return {};
  return json::map_offsets(work, std::move(offsets));
}

}  // namespace mf::yaml
