// JSONL: one JSON document per '\n'-terminated line. Errors report the line within the stream.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/reader.hpp"
#include "mf/json/value.hpp"

namespace mf::json {

// Reads lines from a buffer. A final line without '\n' is still returned, and flagged, so trace
// readers can tell a crash-truncated tail from corruption. The reader views `text` without copying
// it: the buffer must outlive the reader.
class JsonlReader {
 public:
  explicit JsonlReader(std::string_view text, ReadLimits limits = {})
      : text_(text), limits_(limits) {}

  struct Line {
    std::int64_t number = 0;  // 1-based line number
    std::string_view text;    // without the '\n'
    bool terminated = true;   // false for a last line that has no '\n'
  };

  // Next raw line (possibly empty); false at the end of input.
  bool next_line(Line& line);
  // Next line parsed strictly; diagnostics carry the stream line. Empty lines are malformed.
  // Returns false at the end of input.
  bool next(Result<Value>& out, Line* line = nullptr);

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  std::int64_t line_no_ = 0;
  ReadLimits limits_;
};

// Appends canonical(v) + '\n'.
void append_jsonl(const Value& v, std::string& out);

// Canonicalizes a JSONL stream fed in arbitrary chunks, one line at a time, so memory stays bounded
// by the longest line rather than the stream. Pure: bytes in, canonical lines appended to `out`.
class LineCanonicalizer {
 public:
  explicit LineCanonicalizer(const ReadLimits& limits = {}) : limits_(limits) {}

  // Appends canonical(line) + '\n' for every complete line in `bytes`. On the first invalid line it
  // returns that line's diagnostics (with stream line numbers); `out` then holds exactly the lines
  // before it, and the canonicalizer must not be fed again.
  Status feed(std::string_view bytes, std::string& out);
  // Ends the stream: a last line without '\n' is still canonicalized.
  Status finish(std::string& out);

  std::int64_t lines() const { return line_; }

 private:
  Status canonicalize_line(std::string_view line, std::string& out);

  ReadLimits limits_;
  std::string partial_;  // the unterminated tail of the bytes fed so far
  std::int64_t line_ = 0;
};

}  // namespace mf::json
