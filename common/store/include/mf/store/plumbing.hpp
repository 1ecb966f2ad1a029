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

struct CanonOptions {
  bool lines = false;                   // JSONL: every line canonical, each followed by '\n'
  std::size_t buffer_bytes = 1u << 20;  // read chunk and output flush threshold for `lines`
  json::ReadLimits limits{.max_bytes = json::kMaxHeldBytes};  // per document, or per line
};

// Writes the canonical form of the input at `path` to `out_fd`: one document plus '\n', or with
// `lines` each line of a JSONL stream, streamed. On an invalid line, everything before it has been
// written and nothing after it is.
Status canon_input(const std::string& path, int out_fd, const CanonOptions& options = {});

// Lowercase hex SHA-256 of the input's raw bytes (streamed), or with `canonical_json` of the
// canonical form of the JSON document it holds (at most max_bytes).
Result<std::string> hash_input(const std::string& path, bool canonical_json = false,
                               std::size_t max_bytes = json::kMaxHeldBytes);

}  // namespace mf::store
