// Source positions for values found faulty after parsing (schema, graph, ... passes work on the
// value model, which carries no positions): a second, failure-path-only pass maps every pointer of
// a document to where it starts, so those diagnostics get a line and column too.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mf/diag/diagnostic.hpp"

namespace mf::json {

struct SourcePosition {
  std::int64_t line = 0;  // 1-based
  std::int64_t column = 0;
};

// The position of a byte offset: lines count '\n', columns count code points (bytes that are not
// UTF-8 continuation bytes). Every front end reports positions this way, so a line and column
// mean the same place whichever reader produced them.
SourcePosition position_at(std::string_view text, std::size_t offset);

// RFC 6901 pointer -> position of the value (for an object member: of its key).
using SourceMap = std::map<std::string, SourcePosition>;

// The map of a JSON document the strict reader accepts (empty for one it rejects), holding only
// what locate() looks up for `ds`: the pointers of the diagnostics without a line, and their
// prefixes. So it stays small however many values the document has.
SourceMap json_source_map(std::string_view text, const diag::Diagnostics& ds);

// Builds a map from (pointer, byte offset into `text`) pairs, in one pass over the text: lines
// count '\n', columns count code points. Front ends that record offsets share this.
SourceMap map_offsets(std::string_view text,
                      std::vector<std::pair<std::string, std::size_t>> offsets);

// Gives each diagnostic without a line the position of its pointer's deepest mapped prefix.
void locate(diag::Diagnostics& ds, const SourceMap& map);

}  // namespace mf::json
