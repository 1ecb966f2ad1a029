// The strict JSON reader: the only way any JSON enters the product (docs/json.md).
// Rejects invalid UTF-8, duplicate keys, NaN/Infinity, trailing content, and inputs beyond the
// limits; every rejection is a diagnostic with an RFC 6901 pointer and a 1-based line and column.
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"

namespace mf::json {

struct ReadLimits {
  std::size_t max_bytes = 64u << 20;    // whole document
  std::size_t max_depth = 64;           // nesting of arrays and objects
  std::size_t max_number_length = 128;  // characters in one number lexeme
  std::size_t max_string_bytes = 16u << 20;
  std::size_t max_entries = 1u << 20;  // members or elements in one container
};

// The bound on what a streaming command holds whole at once: one line of a JSONL stream or a
// trace, or one document a plumbing command reads from a pipe. Below max_bytes, so that such a
// command stays within a fixed memory bound on any input (docs/json.md, "Limits").
inline constexpr std::size_t kMaxHeldBytes = 16u << 20;

// Parses exactly one JSON document. Columns count Unicode code points, lines count '\n'.
// `line_offset` is added to reported lines (used by the JSONL reader).
Result<Value> parse(std::string_view text, const ReadLimits& limits = {},
                    std::int64_t line_offset = 0);

// parse() plus the requirement that the top level is an object (MF-S012).
Result<Value> parse_object(std::string_view text, const ReadLimits& limits = {});

// An element of a streamed array, as it is read: its index and its bytes [begin, end) in the text
// (for a scalar element, begin == end).
using OnElement =
    std::function<void(Value&& element, std::size_t index, std::size_t begin, std::size_t end)>;

// parse_object() that hands each element of the array under the top-level member `key` to `each`
// as it is read, and keeps none of them: that array is empty in the result. The checks and
// diagnostics are parse_object()'s, so a document is accepted or refused exactly as there; its
// elements are handed on before a later error is found. Holds one element at a time beside the
// text, so a document of many elements is read without its tree.
Result<Value> parse_object_streaming(std::string_view text, const ReadLimits& limits,
                                     std::string_view key, const OnElement& each);

// A text read one window at a time: `size` bytes, read through `read_at` into one buffer of
// `window_bytes` that each window replaces, so that a parse of it never holds the whole text.
struct WindowedText {
  std::size_t size = 0;
  std::size_t window_bytes = 256u << 10;
  // Reads bytes [offset, offset + count) of the text into `into`: how many were read, fewer only at
  // the end of the text or when the reading failed (the caller keeps the reason).
  std::function<std::size_t(char* into, std::size_t count, std::size_t offset)> read_at;
  // Called with each window as it is first read, in order (not again when a refusal's position is
  // looked up): together they are the text read, so the caller can hash it on the way.
  std::function<void(std::string_view window)> on_window;
};

// parse_object_streaming() of a text read in windows: holds one window and the element being read.
// Accepts and refuses exactly as parse_object_streaming() of the same bytes, with the same
// diagnostics (a refusal's line and column are found by reading the text again up to where it is)
// and the same element offsets.
Result<Value> parse_object_streaming(const WindowedText& text, const ReadLimits& limits,
                                     std::string_view key, const OnElement& each);

}  // namespace mf::json
