// The strict reader drives RapidJSON's iterative SAX parser (no recursion, so 100 000 open brackets
// cannot overflow the stack) with RapidJSON's UTF-8 validation on, and builds Values in a handler
// that enforces what RapidJSON does not: duplicate keys, depth, entry and lexeme limits, and lone
// surrogates smuggled in through \u escapes. A whole text is parsed in situ on a private copy; a
// text read in windows (WindowedText) through a stream over one refilled buffer, into the same
// handler.
#include "mf/json/reader.hpp"

#include "mf/json/key_index.hpp"
#include "mf/json/source_map.hpp"

#include <rapidjson/reader.h>

#include <algorithm>
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

constexpr unsigned kCheckFlags = rapidjson::kParseValidateEncodingFlag |
                                 rapidjson::kParseIterativeFlag |
                                 rapidjson::kParseNumbersAsStringsFlag;

// RapidJSON reads each token from a local copy of a stream whose StreamTraits allow it, and
// advances the caller's stream only after the token's handler returns: inside String, Key and
// RawNumber, Tell() is the offset where the token starts, which is where a diagnostic about it
// should point. Both streams below allow it.
using WholeStream = rapidjson::InsituStringStream;

// The text of a windowed parse, read one window at a time into one buffer; its last byte is
// followed by a NUL, as is the end of the text.
class Windows {
 public:
  explicit Windows(const WindowedText& text)
      : text_(text), buffer_(std::max<std::size_t>(text.window_bytes, 1) + 1, '\0') {}

  const char* data() const { return buffer_.data(); }
  // Whether the text read so far holds "\u".
  const bool* escapes() const { return &escapes_; }
  // The bytes read so far.
  std::size_t size() const { return read_; }
  // Reads the next window into the buffer: its size, 0 at the end of the text.
  std::size_t next() {
    const std::size_t want = std::min(buffer_.size() - 1, text_.size - read_);
    const std::size_t n =
        want == 0 ? 0 : std::min(want, text_.read_at(buffer_.data(), want, read_));
    buffer_[n] = '\0';
    if (n > 0) {
      const std::string_view window(buffer_.data(), n);
      escapes_ = escapes_ || (last_ == '\\' && window.front() == 'u') ||
                 window.find("\\u") != std::string_view::npos;
      last_ = window.back();
      if (text_.on_window) text_.on_window(window);
    }
    read_ += n;
    return n;
  }

  // For a refusal, after the parse: the position of `offset`, counted over the text read again
  // window by window, and up to `count` bytes from `offset` on.
  SourcePosition position(std::size_t offset) {
    SourcePosition p{1, 1};
    for (std::size_t at = 0; at < offset;) {
      const std::size_t n =
          std::min(text_.read_at(buffer_.data(), std::min(buffer_.size() - 1, offset - at), at),
                   offset - at);
      if (n == 0) break;
      const SourcePosition q = position_at(std::string_view(buffer_.data(), n), n);
      if (q.line > 1) {
        p.line += q.line - 1;
        p.column = q.column;
      } else {
        p.column += q.column - 1;
      }
      at += n;
    }
    return p;
  }
  std::string bytes_at(std::size_t offset, std::size_t count) const {
    std::string out(count, '\0');
    out.resize(offset < read_ ? std::min(count, text_.read_at(out.data(), count, offset)) : 0);
    return out;
  }

 private:
  const WindowedText& text_;
  std::string buffer_;
  std::size_t read_ = 0;
  bool escapes_ = false;
  char last_ = '\0';  // the last byte read
};

// A RapidJSON input stream over Windows: Peek() is one load, and the Take() that passes a window's
// last byte reads the next. At the end of the text it rests on the NUL past it. A copy (see above)
// may read windows on while the stream it was copied from waits to be assigned the copy back: that
// stream is only asked its Tell() meanwhile, which needs none of the bytes.
class WindowStream {
 public:
  using Ch = char;
  explicit WindowStream(Windows& windows) : windows_(&windows) { load(); }

  Ch Peek() const { return *cur_; }
  Ch Take() {
    const Ch c = *cur_;
    if (cur_ != last_) {
      ++cur_;
    } else {
      load();  // at the end of the text, reads nothing and stays on the NUL
    }
    return c;
  }
  // RapidJSON's SkipWhitespace(), without its copy of the stream.
  void skip_whitespace() {
    for (Ch c = *cur_; c == ' ' || c == '\n' || c == '\r' || c == '\t'; c = *cur_) Take();
  }
  std::size_t Tell() const { return base_ + static_cast<std::size_t>(cur_ - windows_->data()); }

  // Output, which RapidJSON uses only in situ.
  Ch* PutBegin() { return nullptr; }
  void Put(Ch) {}
  void Flush() {}
  std::size_t PutEnd(Ch*) { return 0; }

 private:
  void load() {
    base_ = windows_->size();
    const std::size_t n = windows_->next();
    cur_ = windows_->data();
    last_ = cur_ + (n > 0 ? n - 1 : 0);
  }

  Windows* windows_;
  const char* cur_ = nullptr;
  const char* last_ = nullptr;  // the window's last byte, or the NUL at the end of the text
  std::size_t base_ = 0;        // the offset of the window's first byte
};

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
// Only a \u escape can produce a surrogate: while `*may_hold_surrogates` is false (no "\u" read
// so far) the strings are not checked for one.
template <class Stream>
class Builder {
 public:
  Builder(const bool* may_hold_surrogates, const ReadLimits& limits, Stream& stream, Stacks& stacks,
          std::string_view streamed_key = {}, const OnElement* each = nullptr)
      : limits_(limits),
        stream_(stream),
        frames_(stacks.frames),
        elements_(stacks.elements),
        members_(stacks.members),
        streamed_key_(streamed_key),
        each_(each),
        may_hold_surrogates_(may_hold_surrogates) {}

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
    if (*may_hold_surrogates_ && has_encoded_surrogate(s, n)) {
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
  const bool* may_hold_surrogates_;
};

}  // namespace
}  // namespace mf::json

// A WindowStream is read through copies, as a whole text's stream is (see WholeStream).
template <>
struct rapidjson::StreamTraits<mf::json::WindowStream> {
  enum { copyOptimization = 1 };
};
// Between the tokens, as RapidJSON does for its own in-memory streams.
template <>
inline void rapidjson::SkipWhitespace(mf::json::WindowStream& is) {
  is.skip_whitespace();
}

namespace mf::json {

namespace {

// The stacks of one parse: this thread's, reused from one parse to the next, or its own for a
// parse made from a streamed element's callback (the outer parse still holds this thread's).
// Trimmed on the way out, so a large document's stacks are not kept alive after the call.
class StacksInUse {
 public:
  StacksInUse() : nested_(busy()), stacks_(nested_ ? own_ : shared()) {
    busy() = true;
    stacks_.clear();
  }
  ~StacksInUse() {
    busy() = nested_;
    stacks_.clear();  // what a failed parse left open
    if (stacks_.elements.capacity() * sizeof(Value) + stacks_.members.capacity() * sizeof(Member) >
        (1u << 20)) {
      Stacks().elements.swap(stacks_.elements);
      Stacks().members.swap(stacks_.members);
    }
  }
  StacksInUse(const StacksInUse&) = delete;
  StacksInUse& operator=(const StacksInUse&) = delete;
  Stacks& get() { return stacks_; }
  bool nested() const { return nested_; }

 private:
  static bool& busy() {
    thread_local bool b = false;
    return b;
  }
  static Stacks& shared() {
    thread_local Stacks s;
    return s;
  }
  bool nested_;
  Stacks own_;
  Stacks& stacks_;
};

// A whole text as what read() looks up in it after a refusal.
struct WholeText {
  std::string_view text;
  std::size_t size() const { return text.size(); }
  SourcePosition position(std::size_t offset) const { return position_at(text, offset); }
  std::string bytes_at(std::size_t offset, std::size_t count) const {
    return std::string(text.substr(std::min(offset, text.size()), count));
  }
};

// Parses `stream` into `builder`. `text` is the text the stream reads (WholeText or Windows): its
// size() is the bytes read, and a refusal looks up its position and its bytes there.
template <unsigned kFlags, class Stream, class Text>
Result<Value> read(Stream& stream, Text& text, Builder<Stream>& builder, std::int64_t line_offset) {
  auto at = [&](Diagnostic d, std::size_t offset) {
    const SourcePosition p = text.position(offset);
    d.line = p.line + line_offset;
    d.column = p.column;
    return d;
  };
  rapidjson::Reader reader;
  const rapidjson::ParseResult result = reader.Parse<kFlags>(stream, builder);
  if (builder.has_error()) {
    const std::size_t offset = builder.error_offset();
    return at(builder.take_error(), offset);
  }
  if (result.IsError()) {
    const auto code = result.Code();
    const bool encoding = code == rapidjson::kParseErrorStringInvalidEncoding ||
                          code == rapidjson::kParseErrorStringUnicodeSurrogateInvalid;
    std::string message(parse_error_message(code));
    const std::string rest = text.bytes_at(result.Offset(), 9);
    if (!rest.empty() && rest[0] == '\0') {
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

diag::Diagnostic too_large(std::size_t size, const ReadLimits& limits) {
  diag::Diagnostic d = diag::error(codes::kTooLarge, "document of " + std::to_string(size) +
                                                         " bytes exceeds the limit of " +
                                                         std::to_string(limits.max_bytes));
  d.line = 1;
  d.column = 1;
  return d;
}

Result<Value> read_whole(std::string_view text, const ReadLimits& limits, std::int64_t line_offset,
                         std::string_view streamed_key, const OnElement* each) {
  if (text.size() > limits.max_bytes) {
    diag::Diagnostic d = too_large(text.size(), limits);
    d.line += line_offset;
    return d;
  }
  // In-situ parsing decodes strings in place, so it works on a NUL-terminated private copy; the
  // buffer is reused across calls on this thread (a nested parse has its own).
  thread_local std::string shared_buffer;
  StacksInUse stacks;
  std::string own_buffer;
  std::string& buffer = stacks.nested() ? own_buffer : shared_buffer;
  struct Trim {  // do not keep a large document's buffer alive after the call
    std::string& buffer;
    ~Trim() {
      if (buffer.capacity() > (1u << 20)) std::string().swap(buffer);
    }
  } trim{buffer};
  buffer.assign(text);
  WholeStream stream(buffer.data());
  const bool escapes = text.find("\\u") != std::string_view::npos;
  Builder<WholeStream> builder(&escapes, limits, stream, stacks.get(), streamed_key, each);
  WholeText whole{text};
  return read<kCheckFlags | rapidjson::kParseInsituFlag>(stream, whole, builder, line_offset);
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
  return read_whole(text, limits, line_offset, {}, nullptr);
}

Result<Value> parse_object(std::string_view text, const ReadLimits& limits) {
  return require_object(parse(text, limits));
}

Result<Value> parse_object_streaming(std::string_view text, const ReadLimits& limits,
                                     std::string_view key, const OnElement& each) {
  return require_object(read_whole(text, limits, 0, key, &each));
}

Result<Value> parse_object_streaming(const WindowedText& text, const ReadLimits& limits,
                                     std::string_view key, const OnElement& each) {
  if (text.size > limits.max_bytes) return too_large(text.size, limits);
  StacksInUse stacks;
  Windows windows(text);
  WindowStream stream(windows);
  Builder<WindowStream> builder(windows.escapes(), limits, stream, stacks.get(), key, &each);
  return require_object(read<kCheckFlags>(stream, windows, builder, 0));
}

}  // namespace mf::json
