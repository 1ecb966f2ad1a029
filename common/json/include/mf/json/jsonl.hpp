// JSONL: one JSON document per '\n'-terminated line. Errors report the line within the stream.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/reader.hpp"
#include "mf/json/tape.hpp"
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

// Splits bytes fed in chunks of any size into '\n'-terminated lines of at most max_line_bytes. A
// line wholly inside a chunk is passed in place; only a line split across chunks is copied, into a
// buffer that takes its bound at once (pages are used as written), so a long line is not copied
// again as it grows and memory stays within the bound.
class LineSplitter {
 public:
  explicit LineSplitter(std::size_t max_line_bytes) : max_(max_line_bytes) {}

  enum class Stop : std::uint8_t { Fed, Declined, Over };
  // Calls on_line(line) (without its '\n') for each line the bytes complete, until it returns
  // false (Declined: the bytes after that line are not taken). Over: a line went past the bound.
  template <class F>
  Stop feed(std::string_view bytes, F&& on_line) {
    while (!bytes.empty()) {
      const auto newline = bytes.find('\n');
      const auto head = bytes.substr(0, newline);
      if (partial_.size() + head.size() > max_) return Stop::Over;
      if (newline == std::string_view::npos) {
        keep(head);
        return Stop::Fed;
      }
      bytes.remove_prefix(newline + 1);
      bool go_on = true;
      if (partial_.empty()) {
        go_on = on_line(head);
      } else {
        keep(head);
        go_on = on_line(std::string_view(partial_));
        partial_.clear();
      }
      if (!go_on) return Stop::Declined;
    }
    return Stop::Fed;
  }
  // The bytes after the last '\n'; clear() drops them.
  std::string_view rest() const { return partial_; }
  void clear() { partial_.clear(); }

 private:
  void keep(std::string_view head);
  std::size_t max_;
  std::string partial_;
};

// Canonicalizes a JSONL stream fed in arbitrary chunks, one line at a time, so memory stays bounded
// by the longest line rather than the stream. Pure: bytes in, canonical lines appended to `out`.
class LineCanonicalizer {
 public:
  explicit LineCanonicalizer(const ReadLimits& limits = {})
      : limits_(limits), lines_(limits.max_bytes) {}

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
  Tape tape_;
  LineSplitter lines_;
  std::int64_t line_ = 0;
};

}  // namespace mf::json
