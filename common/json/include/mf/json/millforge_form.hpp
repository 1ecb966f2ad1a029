// Millforge's hashing form of JSON (docs/json.md, "Millforge form"): what Python's
// json.dumps(sort_keys=True, ensure_ascii=True, separators=(",", ":")) writes, followed by one
// '\n', which Millforge's digests cover. It differs from RFC 8785 in three ways: members are sorted
// by code point, every character outside printable ASCII is written as \uXXXX (lowercase hex,
// surrogate pairs above U+FFFF), and numbers take Python's forms.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "mf/json/value.hpp"

namespace mf::json {

// Python keeps integers and floats apart; a Value keeps only the kind of lexeme it was read from.
// A number is written as a Python float ("1.0", "0.5", "1e-05", "1e+16") when it was read from a
// lexeme with a fraction or an exponent (Value::is_float_lexeme, as json.loads makes a float), when
// it is not an exact integer (|n| <= 2^53-1), or inside the members named by `float_members` (JSON
// pointers into `v`, for the numbers Millforge's models hold as floats whatever their source
// said); otherwise as a Python int.
std::string millforge_form(const Value& v, const std::vector<std::string>& float_members = {});

// Lowercase hex SHA-256 of millforge_form(v, float_members), the trailing '\n' included.
std::string millforge_digest(const Value& v, const std::vector<std::string>& float_members = {});

// Python's repr of a finite double ("1.0", "0.0001", "1e-05", "1.5e+16", "-0.0"); a non-finite one
// (which no strict reader makes) is written as null.
void write_python_float(double d, std::string& out);

}  // namespace mf::json
