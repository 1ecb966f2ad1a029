// The FieldReader of fields.hpp: typed field access that reports a missing or mistyped field with
// its pointer, the same way for every configuration loader.
#include "mf/json/fields.hpp"

#include <algorithm>

#include "mf/diag/codes.hpp"
#include "mf/json/pointer.hpp"
#include "mf/text/suggest.hpp"

namespace mf::json {

FieldReader::FieldReader(const Value& object, std::string pointer)
    : object_(object), pointer_(std::move(pointer)) {
  if (!object_.is_object()) {
    add(diag::error(diag::codes::kSchema,
                    "expected an object, found " + std::string(kind_name(object_.kind())),
                    pointer_));
  }
}

std::string FieldReader::pointer_of(std::string_view key) const {
  std::string p = pointer_;
  append_token(p, key);
  return p;
}

const Value* FieldReader::optional(std::string_view key) {
  return object_.find(key);
}

const Value* FieldReader::typed(std::string_view key, Kind kind, bool required) {
  if (!object_.is_object()) return nullptr;
  const Value* v = object_.find(key);
  if (v == nullptr) {
    if (required) {
      add(diag::error(diag::codes::kSchema, "missing required field \"" + std::string(key) + "\"",
                      pointer_of(key)));
    }
    return nullptr;
  }
  if (v->kind() != kind) {
    add(diag::error(diag::codes::kSchema,
                    "field \"" + std::string(key) + "\" must be " + std::string(kind_name(kind)) +
                        ", found " + std::string(kind_name(v->kind())),
                    pointer_of(key)));
    return nullptr;
  }
  return v;
}

const Value* FieldReader::required(std::string_view key, Kind kind) {
  return typed(key, kind, true);
}

std::optional<std::string> FieldReader::string(std::string_view key, bool required) {
  const Value* v = typed(key, Kind::String, required);
  return v ? std::optional<std::string>(v->as_string()) : std::nullopt;
}

std::optional<std::int64_t> FieldReader::integer(std::string_view key, bool required) {
  const Value* v = typed(key, Kind::Number, required);
  if (v == nullptr) return std::nullopt;
  auto i = v->as_exact_int();
  if (!i) {
    add(diag::error(diag::codes::kSchema,
                    "field \"" + std::string(key) + "\" must be an exact integer",
                    pointer_of(key)));
  }
  return i;
}

std::optional<bool> FieldReader::boolean(std::string_view key, bool required) {
  const Value* v = typed(key, Kind::Bool, required);
  return v ? std::optional<bool>(v->as_bool()) : std::nullopt;
}

const Value* FieldReader::object(std::string_view key, bool required) {
  return typed(key, Kind::Object, required);
}

const Value* FieldReader::array(std::string_view key, bool required) {
  return typed(key, Kind::Array, required);
}

void FieldReader::reject_unknown(std::initializer_list<std::string_view> known) {
  if (!object_.is_object()) return;
  for (const Member& m : object_.as_object()) {
    if (std::find(known.begin(), known.end(), m.key) == known.end()) {
      add(diag::error(diag::codes::kUnknownField,
                      "unknown field \"" + m.key + "\"" + text::did_you_mean(m.key, known),
                      pointer_of(m.key)));
    }
  }
}

}  // namespace mf::json
