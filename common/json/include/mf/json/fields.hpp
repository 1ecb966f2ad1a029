// Typed field access for product configuration read through the strict reader: each accessor
// checks presence and type and reports MF-S020/MF-S021 diagnostics with the field's pointer, so
// every configuration loader rejects bad input the same way.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"

namespace mf::json {

// Reads the fields of one object, collecting every problem instead of stopping at the first.
class FieldReader {
 public:
  // `pointer` is where `object` sits in its document ("" for the top level).
  FieldReader(const Value& object, std::string pointer);

  const std::string& pointer() const { return pointer_; }
  std::string pointer_of(std::string_view key) const;

  const Value* optional(std::string_view key);
  const Value* required(std::string_view key, Kind kind);
  std::optional<std::string> string(std::string_view key, bool required = true);
  std::optional<std::int64_t> integer(std::string_view key, bool required = true);
  std::optional<bool> boolean(std::string_view key, bool required = true);
  const Value* object(std::string_view key, bool required = true);
  const Value* array(std::string_view key, bool required = true);

  // Adds an MF-S021 for every member not in `known` (call after reading the known fields).
  void reject_unknown(std::initializer_list<std::string_view> known);

  void add(diag::Diagnostic d) { diagnostics_.push_back(std::move(d)); }
  bool ok() const { return diagnostics_.empty(); }
  diag::Diagnostics take() { return std::move(diagnostics_); }

 private:
  const Value* typed(std::string_view key, Kind kind, bool required);

  const Value& object_;
  std::string pointer_;
  diag::Diagnostics diagnostics_;
};

}  // namespace mf::json
