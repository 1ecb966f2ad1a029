// The strict JSON reader: the only way any JSON enters the product (docs/json.md).
// Rejects invalid UTF-8, duplicate keys, NaN/Infinity, trailing content, and inputs beyond the
// limits; every rejection is a diagnostic with an RFC 6901 pointer and a 1-based line and column.
#pragma once

#include <cstddef>
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

}  // namespace mf::json
