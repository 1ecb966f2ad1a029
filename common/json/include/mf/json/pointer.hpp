// RFC 6901 JSON pointers: parse, escape, format and resolve.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"

namespace mf::json {

// "a/b~c" -> "a~1b~0c"
std::string escape_token(std::string_view token);
// Appends "/" + escaped token to a pointer.
void append_token(std::string& pointer, std::string_view token);
void append_index(std::string& pointer, std::size_t index);

// "" -> {}, "/a~1b/0" -> {"a/b", "0"}; MF-S030 for a missing leading '/' or a bad '~' escape.
Result<std::vector<std::string>> parse_pointer(std::string_view pointer);
std::string format_pointer(const std::vector<std::string>& tokens);

// The value the pointer names, or MF-S030 naming the first token that does not resolve.
// Array tokens must be canonical decimal indexes ("0", "12"; not "01", not "-").
Result<const Value*> resolve(const Value& root, std::string_view pointer);
// The same, nullptr when the pointer is malformed or names nothing: for lookups where absence is
// an answer, not an error (no diagnostic is built).
const Value* find_at(const Value& root, std::string_view pointer);

}  // namespace mf::json
