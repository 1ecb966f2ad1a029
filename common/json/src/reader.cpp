// The strict reader drives RapidJSON's iterative SAX parser (no recursion, so 100 000 open brackets
// cannot overflow the stack) in situ on a private copy of the input, with RapidJSON's UTF-8
// validation on, and builds Values in a handler that enforces what RapidJSON does not: duplicate
// keys, depth, entry and lexeme limits, and lone surrogates smuggled in through \u escapes.
#include "mf/json/reader.hpp"

#include "mf/json/key_index.hpp"
#include "mf/json/source_map.hpp"

#include <rapidjson/reader.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "mf/diag/codes.hpp"
#include "mf/json/pointer.hpp"

namespace mf::json {

namespace {

using diag::Diagnostic;
namespace codes = diag::codes;

constexpr unsigned kParseFlags =
    rapidjson::kParseInsituFlag | rapidjson::kParseValidateEncodingFlag |
    rapidjson::kParseIterativeFlag | rapidjson::kParseNumbersAsStringsFlag;

// RapidJSON reads each token from a local copy of an in-situ stream and advances the caller's
// stream only after the token's handler returns: inside String, Key and RawNumber, Tell() is the
// offset where the token starts, which is where a diagnostic about it should point.
using Stream = rapidjson::InsituStringStream;

// RapidJSON encodes a lone surrogate escape such as \uDC00 as the bytes ED B0 80, which are not
// UTF-8; validated input never holds ED followed by A0..BF otherwise.
bool has_encoded_surrogate(const char* s, std::size_t n) {
  const auto* p = reinterpret_cast<const unsigned char*>(s);
  const auto* end = p + n;
  while ((p = static_cast<const unsigned char*>(std::memchr(p, 0xED, end - p))) != nullptr) {
    if (p + 1 < end && p[1] >= 0xA0) return true;
    ++p;
  }
  return false;
}

std::string_view parse_error_message(rapidjson::ParseErrorCode code) {
  switch (code) {
    case rapidjson::kParseErrorDocumentEmpty:
      return "the document is empty";
    case rapidjson::kParseErrorDocumentRootNotSingular:
      return "trailing content after the value";
    case rapidjson::kParseErrorValueInvalid:
      return "invalid value";
    case rapidjson::kParseErrorObjectMissName:
      return "expected a member name string";
    case rapidjson::kParseErrorObjectMissColon:
      return "expected ':' after the member name";
    case rapidjson::kParseErrorObjectMissCommaOrCurlyBracket:
      return "expected ',' or '}'";
    case rapidjson::kParseErrorArrayMissCommaOrSquareBracket:
      return "expected ',' or ']'";
    case rapidjson::kParseErrorStringUnicodeEscapeInvalidHex:
      return "invalid \\u escape";
    case rapidjson::kParseErrorStringUnicodeSurrogateInvalid:
      return "invalid UTF-16 surrogate pair";
    case rapidjson::kParseErrorStringEscapeInvalid:
      return "invalid escape";
    case rapidjson::kParseErrorStringMissQuotationMark:
      return "unterminated string";
    case rapidjson::kParseErrorStringInvalidEncoding:
      return "invalid UTF-8";
    case rapidjson::kParseErrorNumberTooBig:
      return "number out of the double range";
    case rapidjson::kParseErrorNumberMissFraction:
      return "expected digits after '.'";
    case rapidjson::kParseErrorNumberMissExponent:
      return "expected digits in the exponent";
    default:
      return "malformed JSON";
  }
}

// An open container: its entries so far are elements or members [begin, begin + count); an
// object's member whose value is being read waits just past them (key_pending).
struct Frame {
  bool object = false;
  bool key_pending = false;
  std::size_t begin = 0;
  std::size_t count = 0;
  KeyIndex keys;
};

// The entries of the open containers, innermost last. Kept per thread from one parse to the next,
// so that a stream of small documents does not regrow them each time.
struct Stacks {
  std::vector<Frame> frames;
  std::vector<Value> elements;  // of the open arrays
  std::vector<Member> members;  // of the open objects

  void clear() {
    frames.clear();
    elements.clear();
    members.clear();
  }
};

// Builds the tree bottom-up, the way RapidJSON's own Document does: the entries of every open
// container wait on one of two shared stacks (array elements, object members), and a container
// that closes moves exactly its entries into a vector of exactly that size. No container reserves
// room it may not use, so an empty one allocates nothing and the tree costs sizeof(Value) per
// element and sizeof(Member) per member plus what long strings and non-empty containers allocate
// (docs/json.md, "Memory per value").
class Builder {
 public:
  Builder(std::string_view text, const ReadLimits& limits, Stream& stream, Stacks& stacks,
          std::string_view streamed_key = {}, const OnElement* each = nullptr)
      : limits_(limits),
        stream_(stream),
        frames_(stacks.frames),
        elements_(stacks.elements),
        members_(stacks.members),
        streamed_key_(streamed_key),
        each_(each),
        // Only a \u escape can produce a surrogate; most documents have none.
        may_hold_surrogates_(text.find("\\u") != std::string_view::npos) {}

  // RapidJSON SAX interface.
  bool Null() { return add(Value()); }
  bool Bool(bool b) { return add(Value(b)); }
  bool Int(int) { return false; }  // never called: numbers arrive as raw lexemes
  bool Uint(unsigned) { return false; }
  bool Int64(std::int64_t) { return false; }
  bool Uint64(std::uint64_t) { return false; }
  bool Double(double) { return false; }

  bool RawNumber(const char* s, rapidjson::SizeType n, bool) {
    if (n > limits_.max_number_length) {
      return fail(codes::kLimitExceeded, "number lexeme of " + std::to_string(n) +
                                             " characters exceeds the limit of " +
                                             std::to_string(limits_.max_number_length));
    }
    double d = 0;
    auto [end, ec] = std::from_chars(s, s + n, d);
    if (ec != std::errc() || end != s + n || !std::isfinite(d)) {
      return fail(codes::kMalformed,
                  "number " + std::string(s, n) + " is not representable as a finite double");
    }
    const bool fraction_or_exponent =
        std::string_view(s, n).find_first_of(".eE") != std::string_view::npos;
    return add(fraction_or_exponent ? Value::float_lexeme(d) : Value(d));
  }

  bool String(const char* s, rapidjson::SizeType n, bool) {
    if (!check_string(s, n)) return false;
    return add(Value(std::string(s, n)));
  }

  bool StartObject() { return open(true); }
  bool StartArray() { return open(false); }

  bool Key(const char* s, rapidjson::SizeType n, bool) {
    if (!check_string(s, n)) return false;
    Frame& f = frames_.back();
    std::string_view key(s, n);
    if (f.keys.contains(std::span<const Member>(members_.data() + f.begin, f.count), key)) {
      error_offset_ = stream_.Tell();
      std::string pointer = current_pointer();
      append_token(pointer, key);
      error_ = diag::error(codes::kDuplicateKey,
                           "duplicate object key \"" + std::string(key) + "\"", pointer);
      return false;
    }
    // The member waits on the stack, keyed, for its value.
    members_.push_back(Member{std::string(key), Value()});
    f.key_pending = true;
    return true;
  }

  bool EndObject(rapidjson::SizeType) { return close(); }
  bool EndArray(rapidjson::SizeType) { return close(); }

  Value take_root() { return std::move(root_); }
  bool has_error() const { return error_.has_value(); }
  Diagnostic take_error() { return std::move(*error_); }
  std::size_t error_offset() const { return error_offset_; }

  // The pointer of the value being read: through every open container to its current slot.
  std::string current_pointer() const {
    std::string pointer;
    for (const Frame& f : frames_) {
      if (f.object) {
        if (f.key_pending) append_token(pointer, members_[f.begin + f.count].key);
      } else {
        append_index(pointer, f.count);
      }
    }
    return pointer;
  }

 private:
  bool fail(const char* code, std::string message) {
    error_offset_ = stream_.Tell();
    error_ = diag::error(code, std::move(message), current_pointer());
    return false;
  }

  bool check_string(const char* s, std::size_t n) {
    if (n > limits_.max_string_bytes) {
      return fail(codes::kLimitExceeded, "string of " + std::to_string(n) +
                                             " bytes exceeds the limit of " +
                                             std::to_string(limits_.max_string_bytes));
    }
    if (may_hold_surrogates_ && has_encoded_surrogate(s, n)) {
      return fail(codes::kNotUtf8, "string contains an unpaired UTF-16 surrogate escape");
    }
    return true;
  }

  bool open(bool object) {
    if (frames_.size() >= limits_.max_depth) {
      return fail(codes::kLimitExceeded,
                  "nesting deeper than " + std::to_string(limits_.max_depth) + " levels");
    }
    if (!frames_.empty() && !check_entries(frames_.back())) return false;
    // RapidJSON calls StartObject and StartArray with the stream at the opening bracket.
    if (streaming()) element_begin_ = stream_.Tell();
    Frame& f = frames_.emplace_back();
    f.object = object;
    f.begin = object ? members_.size() : elements_.size();
    return true;
  }

  bool close() {
    const Frame& f = frames_.back();
    Value done;
    if (f.object) {
      const auto first = members_.begin() + std::ptrdiff_t(f.begin);
      done = Value(Object(std::make_move_iterator(first), std::make_move_iterator(members_.end())));
      members_.erase(first, members_.end());
    } else {
      const auto first = elements_.begin() + std::ptrdiff_t(f.begin);
      done = Value(Array(std::make_move_iterator(first), std::make_move_iterator(elements_.end())));
      elements_.erase(first, elements_.end());
    }
    frames_.pop_back();
    return add(std::move(done));
  }

  bool check_entries(const Frame& f) {
    if (f.count >= limits_.max_entries) {
      return fail(codes::kLimitExceeded,
                  "container has more than " + std::to_string(limits_.max_entries) + " entries");
    }
    return true;
  }

  bool add(Value v) {
    if (frames_.empty()) {
      root_ = std::move(v);
      return true;
    }
    Frame& f = frames_.back();
    if (!v.is_object() && !v.is_array() && !check_entries(f)) return false;
    if (streaming()) {
      // EndObject and EndArray are called with the stream at the closing bracket.
      const bool container = v.is_object() || v.is_array();
      const std::size_t end = stream_.Tell() + (container ? 1 : 0);
      (*each_)(std::move(v), f.count, container ? element_begin_ : end, end);
      ++f.count;
      return true;
    }
    if (f.object) {
      Member& m = members_.back();
      f.keys.adding(m.key, f.count);
      m.value = std::move(v);
      f.key_pending = false;
    } else {
      elements_.push_back(std::move(v));
    }
    ++f.count;
    return true;
  }

  // Whether the value being read is an element of the streamed array: the top-level object's
  // member `streamed_key_`, an array.
  bool streaming() const {
    if (each_ == nullptr || frames_.size() != 2 || !frames_[0].object || frames_[1].object) {
      return false;
    }
    const Frame& top = frames_[0];
    return top.key_pending && members_[top.begin + top.count].key == streamed_key_;
  }

  const ReadLimits& limits_;
  Stream& stream_;  // Tell() is not const
  std::vector<Frame>& frames_;
  std::vector<Value>& elements_;
  std::vector<Member>& members_;
  std::string_view streamed_key_;
  const OnElement* each_;
  std::size_t element_begin_ = 0;
  Value root_;
  std::optional<Diagnostic> error_;
  std::size_t error_offset_ = 0;
  bool may_hold_surrogates_;
};

}  // namespace

namespace {

// With `insitu` (whose bytes `text` views), the parse decodes in those bytes instead of a copy.
Result<Value> read(std::string_view text, const ReadLimits& limits, std::int64_t line_offset,
                   std::string_view streamed_key, const OnElement* each,
                   std::string* insitu = nullptr) {
  auto at = [&](Diagnostic d, std::size_t offset) {
    const SourcePosition p = position_at(text, offset);
    d.line = p.line + line_offset;
    d.column = p.column;
    return d;
  };
  if (text.size() > limits.max_bytes) {
    return at(diag::error(codes::kTooLarge, "document of " + std::to_string(text.size()) +
                                                " bytes exceeds the limit of " +
                                                std::to_string(limits.max_bytes)),
              0);
  }
  // In-situ parsing decodes strings in place, so it works on a NUL-terminated private copy; the
  // buffer is reused across calls on this thread. A parse made from a streamed element's callback
  // (the outer parse still holds them) has its own.
  thread_local std::string shared_buffer;
  thread_local Stacks shared_stacks;
  thread_local bool busy = false;
  std::string own_buffer;
  Stacks own_stacks;
  const bool nested = busy;
  std::string& buffer = insitu != nullptr ? *insitu : nested ? own_buffer : shared_buffer;
  Stacks& stacks = nested ? own_stacks : shared_stacks;
  busy = true;
  struct Trim {  // do not keep a large document's buffer or stacks alive after the call
    std::string& buffer;
    Stacks& stacks;
    bool nested;
    ~Trim() {
      busy = nested;
      if (buffer.capacity() > (1u << 20)) std::string().swap(buffer);
      stacks.clear();  // what a failed parse left open
      if (stacks.elements.capacity() * sizeof(Value) + stacks.members.capacity() * sizeof(Member) >
          (1u << 20)) {
        Stacks().elements.swap(stacks.elements);
        Stacks().members.swap(stacks.members);
      }
    }
  } trim{insitu != nullptr ? own_buffer : buffer, stacks, nested};
  if (insitu == nullptr) buffer.assign(text);
  Stream stream(buffer.data());
  stacks.clear();
  Builder builder(text, limits, stream, stacks, streamed_key, each);
  rapidjson::Reader reader;
  const rapidjson::ParseResult result = reader.Parse<kParseFlags>(stream, builder);
  if (builder.has_error()) {
    const std::size_t offset = builder.error_offset();
    return at(builder.take_error(), offset);
  }
  if (result.IsError()) {
    const auto code = result.Code();
    const bool encoding = code == rapidjson::kParseErrorStringInvalidEncoding ||
                          code == rapidjson::kParseErrorStringUnicodeSurrogateInvalid;
    std::string message(parse_error_message(code));
    const std::string_view rest = text.substr(std::min(result.Offset(), text.size()));
    if (result.Offset() < text.size() && text[result.Offset()] == '\0') {
      message = "unexpected NUL byte";  // RapidJSON sees NUL as the end of input
    } else if (code == rapidjson::kParseErrorValueInvalid &&
               (rest.starts_with("NaN") || rest.starts_with("Infinity") ||
                rest.starts_with("-Infinity") || rest.starts_with("-NaN"))) {
      message = "NaN and Infinity are not JSON numbers";
    }
    return at(diag::error(encoding ? codes::kNotUtf8 : codes::kMalformed, std::move(message),
                          builder.current_pointer()),
              result.Offset());
  }
  // The stream reports NUL as end of input; anything left after the value is trailing content.
  if (stream.Tell() != text.size()) {
    return at(diag::error(codes::kMalformed, "trailing content after the value"), stream.Tell());
  }
  return builder.take_root();
}

Result<Value> require_object(Result<Value> v) {
  if (v.ok() && !v->is_object()) {
    return diag::error(
        codes::kNotObject,
        "top-level value is " + std::string(kind_name(v->kind())) + ", expected an object", "", 1,
        1);
  }
  return v;
}

}  // namespace

Result<Value> parse(std::string_view text, const ReadLimits& limits, std::int64_t line_offset) {
  return read(text, limits, line_offset, {}, nullptr);
}

Result<Value> parse_object(std::string_view text, const ReadLimits& limits) {
  return require_object(parse(text, limits));
}

Result<Value> parse_object_streaming(std::string_view text, const ReadLimits& limits,
                                     std::string_view key, const OnElement& each) {
  return require_object(read(text, limits, 0, key, &each));
}

Result<Value> parse_object_streaming_in_place(std::string& text, const ReadLimits& limits,
                                              std::string_view key, const OnElement& each) {
  return require_object(read(text, limits, 0, key, &each, &text));
}

}  // namespace mf::json
