// mf-store's plumbing commands, usable without a store: `canon` (RFC 8785 canonical form of a JSON
// document or of each line of a JSONL stream) and `hash` (SHA-256 of raw bytes or of canonical
// JSON). Inputs are paths, "-" meaning stdin; outputs go to a file descriptor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/reader.hpp"

namespace mf::store {

// Canonicalizes a JSONL stream fed in arbitrary chunks, one line at a time, so memory stays bounded
// by the longest line rather than the stream. Pure: bytes in, canonical lines appended to `out`.
class LineCanonicalizer {
 public:
  explicit LineCanonicalizer(const json::ReadLimits& limits = {}) : limits_(limits) {}

  // Appends canonical(line) + '\n' for every complete line in `bytes`. On the first invalid line it
  // returns that line's diagnostics (with stream line numbers); `out` then holds exactly the lines
  // before it, and the canonicalizer must not be fed again.
  Status feed(std::string_view bytes, std::string& out);
  // Ends the stream: a last line without '\n' is still canonicalized.
  Status finish(std::string& out);

  std::int64_t lines() const { return line_; }

 private:
  Status canonicalize_line(std::string_view line, std::string& out);

  json::ReadLimits limits_;
  std::string partial_;  // the unterminated tail of the bytes fed so far
  std::int64_t line_ = 0;
};

struct CanonOptions {
  bool lines = false;                   // JSONL: every line canonical, each followed by '\n'
  std::size_t buffer_bytes = 1u << 20;  // read chunk and output flush threshold for `lines`
  json::ReadLimits limits{};
};

// Writes the canonical form of the input at `path` to `out_fd`: one document plus '\n', or with
// `lines` each line of a JSONL stream, streamed. On an invalid line, everything before it has been
// written and nothing after it is.
Status canon_input(const std::string& path, int out_fd, const CanonOptions& options = {});

// Lowercase hex SHA-256 of the input's raw bytes (streamed), or with `canonical_json` of the
// canonical form of the JSON document it holds.
Result<std::string> hash_input(const std::string& path, bool canonical_json = false);

}  // namespace mf::store
