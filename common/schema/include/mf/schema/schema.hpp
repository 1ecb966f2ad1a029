// The supported JSON Schema subset (draft 2020-12 semantics): admission, normalization and
// validation. Tool descriptors carry schemas that models see and that arguments are checked
// against; a small, fully understood subset keeps both sides exact, so anything outside it is
// rejected at admission rather than silently ignored.
//
// Keywords: type, properties, required, additionalProperties, items (one schema, applied to every
// element), enum, const, minItems, maxItems, minLength, maxLength (code points), minimum, maximum
// (inclusive), anyOf, oneOf, boolean schemas; description, title, default, examples and $comment
// are annotations. "$schema" is accepted only at the root and only as the 2020-12 meta-schema URI.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"

namespace mf::schema {

// The one "$schema" value admitted (at the root only): the subset has 2020-12 semantics, so a
// schema claiming another dialect would be read differently than its author meant.
inline constexpr std::string_view kDraft202012 = "https://json-schema.org/draft/2020-12/schema";

// Checks that `schema` uses only the supported subset, each keyword well-formed (known type names,
// non-negative integers for the length and count bounds, unique strings in `required`, non-empty
// arrays for enum/anyOf/oneOf, ...). Every problem is a diagnostic with `code` and the pointer
// `base_pointer` + the path inside the schema to the offending keyword or element (e.g.
// "/tools/0/input_schema/properties/x/format"); the message names the keyword. All problems are
// reported, in schema document order. Unknown keywords are rejected, never ignored.
Status admit(const json::Value& schema, std::string_view code, std::string_view base_pointer = "");

// The normalized form of an admitted schema: every object schema (one whose "type" is or includes
// "object", or one with "properties") that does not say "additionalProperties" gets
// "additionalProperties": false (closed objects), recursively through properties, items, anyOf,
// oneOf and additionalProperties schemas. Everything else is kept as is; canonical serialization is
// left to the caller.
json::Value normalize(const json::Value& schema);

struct Violation {
  std::string instance_pointer;  // RFC 6901 pointer into the instance ("" = root)
  std::string keyword;  // the failing keyword, e.g. "required", "type"; "false" for a false schema
  std::string message;  // one sentence; quoted values are cut to about 64 bytes
  bool operator==(const Violation&) const = default;
};

// Validates `instance` against an admitted schema and returns every violation found, at most
// `max_violations` (0 counts as 1, so that an empty result always means valid). Order is
// deterministic: within one schema the keywords are checked in a fixed order (type, enum, const,
// minimum, maximum, minLength, maxLength, minItems, maxItems, items, required, then each instance
// member in member order against properties or additionalProperties, then anyOf, oneOf). anyOf and
// oneOf report one violation for the keyword itself, not the failures inside their branches. A
// `false` schema reached through additionalProperties reports keyword "additionalProperties" at the
// extra member. A missing required member is reported at the object that lacks it.
std::vector<Violation> validate(const json::Value& schema, const json::Value& instance,
                                std::size_t max_violations = 64);

}  // namespace mf::schema
