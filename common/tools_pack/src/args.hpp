// Reading the arguments of a pack tool (already validated against its schema) and printing
// numbers as JavaScript does, for the tools' texts.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "mf/json/canonical.hpp"
#include "mf/json/value.hpp"

namespace mf::tools {

inline std::string js_number(double d) {
  std::string out;
  json::write_number(d, out);
  return out;
}

inline const std::string* string_arg(const json::Value& args, std::string_view key) {
  const json::Value* v = args.find(key);
  return v != nullptr && v->is_string() ? &v->as_string() : nullptr;
}

inline std::optional<double> number_arg(const json::Value& args, std::string_view key) {
  const json::Value* v = args.find(key);
  if (v == nullptr || !v->is_number()) return std::nullopt;
  return v->as_number();
}

}  // namespace mf::tools
