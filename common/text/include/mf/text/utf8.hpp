// UTF-8, once: well-formedness (no overlongs, surrogates or code points above U+10FFFF), cutting at
// a code-point boundary, counting code points, and the lossy decoding that replaces each maximal
// invalid subpart with U+FFFD. Every module that checks or cuts UTF-8 calls these.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace mf::text {

// True for the bytes 10xxxxxx that continue a multi-byte sequence.
constexpr bool is_continuation(unsigned char byte) {
  return (byte & 0xC0) == 0x80;
}

// Offset of the first byte that breaks well-formedness, or npos when `s` is valid UTF-8. ASCII runs
// are checked 16 bytes at a time (8 without SSE2), multi-byte sequences one at a time.
std::size_t utf8_error_offset(std::string_view s);

// From s[i], past every well-formed multi-byte sequence: the offset of the first byte that is ASCII
// or does not start a well-formed sequence (s.size() at the end). A byte >= 0x80 at the result is
// where `s` stops being UTF-8.
std::size_t utf8_skip_sequences(std::string_view s, std::size_t i);

inline bool valid_utf8(std::string_view s) {
  return utf8_error_offset(s) == std::string_view::npos;
}

// True when `s` is valid UTF-8 holding no NUL byte (text, as a search reads it): one pass over
// its ASCII runs checks both.
bool utf8_text(std::string_view s);

// The largest code-point boundary at or below `n` (n >= s.size() gives s.size()). On valid UTF-8
// the prefix s[0, result) never ends inside a sequence.
std::size_t utf8_floor(std::string_view s, std::size_t n);

// `s` cut to at most `max_bytes` bytes at a code-point boundary.
inline std::string_view utf8_prefix(std::string_view s, std::size_t max_bytes) {
  return s.substr(0, utf8_floor(s, max_bytes));
}

// Number of code points (bytes that start a sequence) in `s`.
std::size_t utf8_count(std::string_view s);

// Length of the well-formed sequence starting at s[i], or 0 when none starts there.
std::size_t utf8_sequence_length(std::string_view s, std::size_t i);

// Writes the UTF-8 encoding of the code point `c` (at most U+10FFFF, not a surrogate) to
// out[0, 4); returns its length.
std::size_t encode_utf8(char32_t c, char* out);

// Appends the UTF-8 encoding of the code point `c` (at most U+10FFFF, not a surrogate).
void append_utf8(char32_t c, std::string& out);

// `bytes` with every maximal invalid subpart replaced by U+FFFD (the WHATWG decoder's rule);
// returns `bytes` unchanged when it is already valid.
std::string decode_utf8_lossy(std::string_view bytes);

}  // namespace mf::text
