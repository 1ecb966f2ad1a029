// The JSON value model of value.hpp: member lookup and insertion, exact integers, kind names, and
// secret redaction over a whole value.
#include "mf/json/value.hpp"

#include <functional>

#include <algorithm>
#include <cmath>

#include "mf/diag/secrets.hpp"

namespace mf::json {

namespace {
constexpr double kMaxSafeInteger = 9007199254740991.0;  // 2^53 - 1
}

std::optional<std::int64_t> exact_int(double d) {
  if (!(std::abs(d) <= kMaxSafeInteger) || std::trunc(d) != d) return std::nullopt;
  return static_cast<std::int64_t>(d);
}

std::optional<std::int64_t> Value::as_exact_int() const {
  if (!is_number()) return std::nullopt;
  return exact_int(as_number());
}

const Value* Value::find(std::string_view key) const {
  if (!is_object()) return nullptr;
  for (const Member& m : as_object()) {
    if (m.key == key) return &m.value;
  }
  return nullptr;
}

Value* Value::find(std::string_view key) {
  return const_cast<Value*>(static_cast<const Value*>(this)->find(key));
}

Value& Value::set(std::string_view key, Value v) {
  if (is_null()) data_ = Object{};
  if (Value* existing = find(key)) {
    *existing = std::move(v);
    return *existing;
  }
  Object& o = as_object();
  o.push_back(Member{std::string(key), std::move(v)});
  return o.back().value;
}

Value& Value::push_back(Value v) {
  if (is_null()) data_ = Array{};
  Array& a = as_array();
  a.push_back(std::move(v));
  return a.back();
}

std::string_view kind_name(Kind k) {
  switch (k) {
    case Kind::Null:
      return "null";
    case Kind::Bool:
      return "boolean";
    case Kind::Number:
      return "number";
    case Kind::String:
      return "string";
    case Kind::Array:
      return "array";
    case Kind::Object:
      return "object";
  }
  return "unknown";
}

namespace {

// Redacts one string in place; true when it changed.
bool redact_string(std::string& s) {
  if (!diag::find_secret(s)) return false;
  s = diag::redact_secrets(s);
  return true;
}

}  // namespace

bool redact_secrets(Value& root) {
  return redact_strings(root, redact_string);
}

bool redact_strings(Value& root, const std::function<bool(std::string&)>& redact) {
  bool changed = false;
  std::vector<Value*> pending{&root};  // iterative: the depth is the input's
  while (!pending.empty()) {
    Value* v = pending.back();
    pending.pop_back();
    if (v->is_string()) {
      changed = redact(v->as_string()) || changed;
    } else if (v->is_array()) {
      for (auto& item : v->as_array()) pending.push_back(&item);
    } else if (v->is_object()) {
      auto& members = v->as_object();
      for (std::size_t i = 0; i < members.size(); ++i) {
        if (redact(members[i].key)) {
          changed = true;
          // Two redacted names must stay two members: number the later ones.
          const std::string base = members[i].key;
          for (int n = 2; std::any_of(
                   members.begin(), members.end(),
                   [&](const Member& m) { return &m != &members[i] && m.key == members[i].key; });
               ++n) {
            members[i].key = base + "#" + std::to_string(n);
          }
        }
        pending.push_back(&members[i].value);
      }
    }
  }
  return changed;
}

}  // namespace mf::json
