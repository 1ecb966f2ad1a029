// RFC 8785 (JCS) canonical serialization and the canonical digest (docs/json.md).
// Members sorted by UTF-16 code units, ES6 shortest number form, minimal string escapes.
#pragma once

#include <string>
#include <string_view>

#include "mf/json/value.hpp"

namespace mf::json {

// Appends the canonical bytes of `v` (no trailing newline). Non-finite numbers cannot occur in a
// Value read by the strict reader; a constructed one is written as null, as ES6 JSON.stringify
// does.
void write_canonical(const Value& v, std::string& out);
std::string canonical(const Value& v);
// Canonical file form: the canonical bytes followed by one '\n'.
std::string canonical_file(const Value& v);

// Lowercase hex SHA-256 of the canonical bytes (without the trailing newline).
std::string canonical_digest(const Value& v);

// ES6 Number::toString for a finite double ("1e+21", "0.000001", "1e-7", "-0" -> "0").
void write_number(double d, std::string& out);
// A JSON string literal with JCS's minimal escaping.
void write_string(std::string_view s, std::string& out);
// The letter JCS escapes `c` with after a backslash ('"', '\\' and five controls), or 0 for a
// character it writes raw or, below U+0020, as \u00xx.
char short_escape(unsigned char c);

// Three-way comparison of two UTF-8 strings by their UTF-16 code units (<0, 0, >0).
int compare_utf16(std::string_view a, std::string_view b);

}  // namespace mf::json
