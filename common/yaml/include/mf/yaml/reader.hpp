// The strict YAML front end: reads one YAML document into the product's JSON value model, so a
// harness written in YAML means exactly what its JSON twin means (docs/json.md). Only the
// JSON-shaped subset of YAML is accepted: plain, quoted and block scalars, block and flow
// collections with string keys. Everything that gives YAML a second meaning or a second object
// graph (anchors, aliases, tags, merge keys, non-string or complex keys, several documents) is
// rejected instead of being interpreted. Plain scalars are typed by the YAML 1.2 core schema and
// nothing else, so `yes`, `on` and `0777` mean what a YAML 1.2 reader says (the strings "yes" and
// "on", the number 777), never the YAML 1.1 readings.
//
// Every rejection is one diagnostic with an RFC 6901 pointer and a 1-based line and column (lines
// count '\n' and a lone CR, columns count code points; a leading BOM is not counted):
//   MF-S003  text over max_bytes
//   MF-S004  invalid UTF-8 in the raw text or produced by an escape
//   MF-S006  duplicate mapping key (decoded keys compared: `a` and "a" are the same key)
//   MF-S007  anchor or alias
//   MF-S008  explicit tag, merge key `<<`, key that is a collection, null, bool or number
//   MF-S009  more than one document
//   MF-S010  depth, node count, scalar size, number lexeme length, or an integer whose magnitude
//            exceeds 2^53 (it parses, but a double cannot hold it exactly, and silently rounding
//            an id or a budget is worse than refusing it)
//   MF-S011  syntax error (YAML 1.2's, also where yaml-cpp is lenient: docs/formats/harness.md),
//            empty stream, .inf/.nan or a number out of the double range, C0 control character
//            other than tab/LF/CR (raw or escaped), raw DEL, C1 control other than NEL, U+FFFE/FFFF
//   MF-S012  parse_object: the top level is not a mapping
// Errors about a key point at the mapping that holds it (the key never becomes a member), except a
// duplicate key, which points at the member it repeats, as in the JSON reader.
#pragma once

#include <cstddef>
#include <string_view>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/source_map.hpp"
#include "mf/json/value.hpp"

namespace mf::yaml {

struct ReadLimits {
  std::size_t max_bytes = 1u << 20;          // whole document (MF-S003)
  std::size_t max_depth = 32;                // nesting of sequences and mappings (MF-S010)
  std::size_t max_entries = 10000;           // total nodes (scalars + collections) in the document,
                                             // mapping keys included (MF-S010)
  std::size_t max_scalar_bytes = 64u << 10;  // one scalar, after unescaping (MF-S010)
  std::size_t max_number_length = 128;       // characters of a plain scalar typed as a number
                                             // (MF-S010)
};

// Parses exactly one YAML document into the product's JSON value model; mapping members keep
// document order. Never throws.
Result<json::Value> parse(std::string_view text, const ReadLimits& limits = {});

// parse() plus: top level must be a mapping (MF-S012).
Result<json::Value> parse_object(std::string_view text, const ReadLimits& limits = {});

// Pointer -> position of every node of a document parse() accepts (a mapping member at its key);
// empty for one it rejects. For diagnostics found after parsing; costs a second parse.
json::SourceMap source_map(std::string_view text, const ReadLimits& limits = {});

}  // namespace mf::yaml
