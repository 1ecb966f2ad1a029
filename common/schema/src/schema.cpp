// The JSON Schema subset of schema.hpp: admission refuses any keyword outside it, normalization
// closes objects, and validation checks values against the admitted form.
#include "mf/schema/schema.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "mf/json/canonical.hpp"
#include "mf/json/pointer.hpp"
#include "mf/text/utf8.hpp"

namespace mf::schema {

namespace {

using json::Kind;
using json::Member;
using json::Value;

// Schema nesting limit. The strict reader already caps JSON depth at 64, which bounds a read
// schema far below this; the limit guards constructed Values so no walk here can exhaust the stack.
constexpr std::size_t kMaxDepth = 64;

// Quoted values in messages are cut to this many bytes: messages go to models and logs, and a
// multi-kilobyte instance echoed back helps neither.
constexpr std::size_t kQuoteBytes = 64;

constexpr std::array<std::string_view, 7> kTypeNames = {"null",   "boolean", "object", "array",
                                                        "number", "string",  "integer"};

// Canonical JSON of `v`, cut at a code point boundary after about kQuoteBytes bytes.
std::string quote(const Value& v) {
  std::string s = json::canonical(v);
  if (s.size() <= kQuoteBytes) return s;
  s.resize(text::utf8_floor(s, kQuoteBytes));
  s += "...";
  return s;
}

std::string quote_text(std::string_view text) {
  return quote(Value(text));
}

std::string number_text(double d) {
  std::string out;
  json::write_number(d, out);
  return out;
}

// JSON Schema's integer: any number with a zero fractional part, whatever its lexeme (1.0 counts).
bool is_integral(const Value& v) {
  if (!v.is_number()) return false;
  const double d = v.as_number();
  return std::isfinite(d) && std::trunc(d) == d;
}

// The value of a length or count keyword, when it is a non-negative integer we can compare exactly.
std::optional<std::uint64_t> count_value(const Value& v) {
  const std::optional<std::int64_t> i = v.as_exact_int();
  if (!i || *i < 0) return std::nullopt;
  return static_cast<std::uint64_t>(*i);
}

// JSON equality for enum and const. Numbers are doubles already, so 1 and 1.0 are the same value;
// objects compare as sets of members, ignoring order (keys are unique in a read document).
bool json_equal(const Value& a, const Value& b) {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Kind::Null:
      return true;
    case Kind::Bool:
      return a.as_bool() == b.as_bool();
    case Kind::Number:
      return a.as_number() == b.as_number();
    case Kind::String:
      return a.as_string() == b.as_string();
    case Kind::Array: {
      const json::Array& x = a.as_array();
      const json::Array& y = b.as_array();
      if (x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (!json_equal(x[i], y[i])) return false;
      }
      return true;
    }
    case Kind::Object: {
      if (a.as_object().size() != b.as_object().size()) return false;
      for (const Member& m : a.as_object()) {
        const Value* other = b.find(m.key);
        if (other == nullptr || !json_equal(m.value, *other)) return false;
      }
      return true;
    }
  }
  return false;
}

bool has_type(const Value& v, std::string_view type) {
  switch (v.kind()) {
    case Kind::Null:
      return type == "null";
    case Kind::Bool:
      return type == "boolean";
    case Kind::Number:
      return type == "number" || (type == "integer" && is_integral(v));
    case Kind::String:
      return type == "string";
    case Kind::Array:
      return type == "array";
    case Kind::Object:
      return type == "object";
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Admission

class Admitter {
 public:
  Admitter(std::string_view code, diag::Diagnostics& out) : code_(code), out_(out) {}

  void schema(const Value& s, const std::string& at, std::size_t depth, bool root) {
    if (s.is_bool()) return;
    if (!s.is_object()) {
      fail(at, "a schema must be an object or a boolean, not " +
                   std::string(json::kind_name(s.kind())));
      return;
    }
    if (depth >= kMaxDepth) {
      fail(at, "schema nesting exceeds " + std::to_string(kMaxDepth) + " levels");
      return;
    }
    for (const Member& m : s.as_object()) keyword(m.key, m.value, child(at, m.key), depth, root);
  }

 private:
  static std::string child(const std::string& at, std::string_view token) {
    std::string p = at;
    json::append_token(p, token);
    return p;
  }

  static std::string child(const std::string& at, std::size_t index) {
    std::string p = at;
    json::append_index(p, index);
    return p;
  }

  void fail(const std::string& at, std::string message) {
    out_.push_back(diag::error(std::string(code_), std::move(message), at));
  }

  void keyword(std::string_view k, const Value& v, const std::string& at, std::size_t depth,
               bool root) {
    const std::string name = "\"" + std::string(k) + "\"";
    if (k == "type") {
      type(v, at);
    } else if (k == "properties") {
      if (!v.is_object()) return fail(at, name + " must be an object of schemas");
      for (const Member& m : v.as_object()) schema(m.value, child(at, m.key), depth + 1, false);
    } else if (k == "additionalProperties" || k == "items") {
      if (k == "items" && v.is_array()) {
        return fail(at, name +
                            " must be one schema; the array form is \"prefixItems\" in 2020-12, "
                            "which is not supported");
      }
      schema(v, at, depth + 1, false);
    } else if (k == "anyOf" || k == "oneOf") {
      if (!v.is_array() || v.as_array().empty()) {
        return fail(at, name + " must be a non-empty array of schemas");
      }
      for (std::size_t i = 0; i < v.as_array().size(); ++i) {
        schema(v.as_array()[i], child(at, i), depth + 1, false);
      }
    } else if (k == "required") {
      required(v, at);
    } else if (k == "enum") {
      // 2020-12 allows an empty enum (nothing matches); the subset asks for `false` instead, which
      // says the same thing without looking like a mistake.
      if (!v.is_array() || v.as_array().empty()) fail(at, name + " must be a non-empty array");
    } else if (k == "minItems" || k == "maxItems" || k == "minLength" || k == "maxLength") {
      if (!count_value(v)) {
        fail(at, name + " must be a non-negative integer (at most 2^53-1), not " + quote(v));
      }
    } else if (k == "minimum" || k == "maximum") {
      if (!v.is_number()) fail(at, name + " must be a number, not " + quote(v));
    } else if (k == "description" || k == "title" || k == "$comment") {
      if (!v.is_string()) fail(at, name + " must be a string");
    } else if (k == "examples") {
      if (!v.is_array()) fail(at, name + " must be an array");
    } else if (k == "const" || k == "default") {
      // Any JSON value.
    } else if (k == "$schema") {
      if (!root) {
        fail(at, name + " is only allowed at the schema root");
      } else if (!v.is_string() || v.as_string() != kDraft202012) {
        fail(at, name + " must be \"" + std::string(kDraft202012) +
                     "\": the supported subset has 2020-12 semantics");
      }
    } else {
      fail(at, "keyword " + quote_text(k) + " is not in the supported JSON Schema subset");
    }
  }

  void type(const Value& v, const std::string& at) {
    const auto known = [](const Value& t) {
      return t.is_string() &&
             std::find(kTypeNames.begin(), kTypeNames.end(), t.as_string()) != kTypeNames.end();
    };
    const std::string expected = "one of null, boolean, object, array, number, string, integer";
    if (v.is_string()) {
      if (!known(v)) fail(at, "\"type\" must be " + expected + ", not " + quote(v));
      return;
    }
    if (!v.is_array() || v.as_array().empty()) {
      return fail(at, "\"type\" must be a type name or a non-empty array of type names");
    }
    std::set<std::string> seen;
    for (std::size_t i = 0; i < v.as_array().size(); ++i) {
      const Value& t = v.as_array()[i];
      if (!known(t)) {
        fail(child(at, i), "\"type\" entries must be " + expected + ", not " + quote(t));
      } else if (!seen.insert(t.as_string()).second) {
        fail(child(at, i), "\"type\" lists " + quote(t) + " twice");
      }
    }
  }

  void required(const Value& v, const std::string& at) {
    if (!v.is_array()) return fail(at, "\"required\" must be an array of property names");
    std::set<std::string> seen;
    for (std::size_t i = 0; i < v.as_array().size(); ++i) {
      const Value& name = v.as_array()[i];
      if (!name.is_string()) {
        fail(child(at, i), "\"required\" entries must be strings, not " + quote(name));
      } else if (!seen.insert(name.as_string()).second) {
        fail(child(at, i), "\"required\" lists " + quote(name) + " twice");
      }
    }
  }

  std::string_view code_;
  diag::Diagnostics& out_;
};

// ---------------------------------------------------------------------------------------------
// Normalization

bool is_object_schema(const Value& s) {
  if (s.find("properties") != nullptr) return true;
  const Value* type = s.find("type");
  if (type == nullptr) return false;
  if (type->is_string()) return type->as_string() == "object";
  if (type->is_array()) {
    for (const Value& t : type->as_array()) {
      if (t.is_string() && t.as_string() == "object") return true;
    }
  }
  return false;
}

void close_objects(Value& s, std::size_t depth) {
  if (!s.is_object() || depth >= kMaxDepth) return;
  for (Member& m : s.as_object()) {
    if (m.key == "properties" && m.value.is_object()) {
      for (Member& p : m.value.as_object()) close_objects(p.value, depth + 1);
    } else if (m.key == "items" || m.key == "additionalProperties") {
      close_objects(m.value, depth + 1);
    } else if ((m.key == "anyOf" || m.key == "oneOf") && m.value.is_array()) {
      for (Value& branch : m.value.as_array()) close_objects(branch, depth + 1);
    }
  }
  if (is_object_schema(s) && s.find("additionalProperties") == nullptr) {
    s.set("additionalProperties", false);
  }
}

// ---------------------------------------------------------------------------------------------
// Validation

class Validator {
 public:
  explicit Validator(std::size_t max) : max_(std::max<std::size_t>(max, 1)) {}

  // Validates `inst` at pointer `at` (restored on return) against `s`.
  void run(const Value& s, const Value& inst, std::string& at, std::size_t depth) {
    if (full()) return;
    if (s.is_bool()) {
      if (!s.as_bool()) add(at, "false", "no value is allowed here (the schema is false)");
      return;
    }
    if (!s.is_object()) return;  // not admitted; admission reports it
    if (depth >= kMaxDepth) {
      add(at, "depth",
          "schema nesting exceeds the validation limit of " + std::to_string(kMaxDepth) +
              " levels");
      return;
    }
    type(s, inst, at);
    enumeration(s, inst, at);
    bounds(s, inst, at);
    items(s, inst, at, depth);
    object(s, inst, at, depth);
    any_of(s, inst, at, depth);
    one_of(s, inst, at, depth);
  }

  std::vector<Violation> take() && { return std::move(out_); }

 private:
  bool full() const { return out_.size() >= max_; }

  void add(const std::string& at, std::string_view keyword, std::string message) {
    if (!full()) out_.push_back(Violation{at, std::string(keyword), std::move(message)});
  }

  // Whether `inst` is valid against `s`; branch failures stay private to the applicator.
  static bool matches(const Value& s, const Value& inst, const std::string& at, std::size_t depth) {
    Validator branch(1);
    std::string scratch = at;
    branch.run(s, inst, scratch, depth);
    return branch.out_.empty();
  }

  void type(const Value& s, const Value& inst, const std::string& at) {
    const Value* t = s.find("type");
    if (t == nullptr) return;
    std::string expected;
    if (t->is_string()) {
      if (has_type(inst, t->as_string())) return;
      expected = t->as_string();
    } else if (t->is_array()) {
      for (const Value& name : t->as_array()) {
        if (!name.is_string()) continue;
        if (has_type(inst, name.as_string())) return;
        expected += expected.empty() ? "" : ", ";
        expected += name.as_string();
      }
      expected = "one of " + expected;
    } else {
      return;
    }
    std::string got(json::kind_name(inst.kind()));
    // "expected integer, got number" alone would puzzle a reader looking at 2.5.
    if (inst.is_number()) got += " " + number_text(inst.as_number());
    add(at, "type", "expected " + expected + ", got " + got);
  }

  void enumeration(const Value& s, const Value& inst, const std::string& at) {
    if (const Value* e = s.find("enum"); e != nullptr && e->is_array()) {
      const json::Array& allowed = e->as_array();
      const bool found = std::any_of(allowed.begin(), allowed.end(),
                                     [&](const Value& v) { return json_equal(v, inst); });
      if (!found) add(at, "enum", "value is not one of the allowed values " + quote(*e));
    }
    if (const Value* c = s.find("const"); c != nullptr && !json_equal(*c, inst)) {
      add(at, "const", "value is not the required constant " + quote(*c));
    }
  }

  void bounds(const Value& s, const Value& inst, const std::string& at) {
    if (inst.is_number()) {
      const double d = inst.as_number();
      if (const Value* m = s.find("minimum");
          m != nullptr && m->is_number() && d < m->as_number()) {
        add(at, "minimum",
            number_text(d) + " is less than the minimum " + number_text(m->as_number()));
      }
      if (const Value* m = s.find("maximum");
          m != nullptr && m->is_number() && d > m->as_number()) {
        add(at, "maximum",
            number_text(d) + " is greater than the maximum " + number_text(m->as_number()));
      }
    }
    if (inst.is_string()) {
      length(s, "minLength", "maxLength", "string length (in code points)",
             text::utf8_count(inst.as_string()), at);
    }
    if (inst.is_array()) {
      length(s, "minItems", "maxItems", "array length", inst.as_array().size(), at);
    }
  }

  void length(const Value& s, std::string_view min_kw, std::string_view max_kw,
              std::string_view what, std::uint64_t n, const std::string& at) {
    if (const Value* m = s.find(min_kw); m != nullptr) {
      if (const auto bound = count_value(*m); bound && n < *bound) {
        add(at, min_kw,
            std::string(what) + " " + std::to_string(n) + " is less than " + std::string(min_kw) +
                " " + std::to_string(*bound));
      }
    }
    if (const Value* m = s.find(max_kw); m != nullptr) {
      if (const auto bound = count_value(*m); bound && n > *bound) {
        add(at, max_kw,
            std::string(what) + " " + std::to_string(n) + " is greater than " +
                std::string(max_kw) + " " + std::to_string(*bound));
      }
    }
  }

  void items(const Value& s, const Value& inst, std::string& at, std::size_t depth) {
    const Value* item = s.find("items");
    if (item == nullptr || !inst.is_array()) return;
    const std::size_t base = at.size();
    for (std::size_t i = 0; i < inst.as_array().size() && !full(); ++i) {
      json::append_index(at, i);
      run(*item, inst.as_array()[i], at, depth + 1);
      at.resize(base);
    }
  }

  void object(const Value& s, const Value& inst, std::string& at, std::size_t depth) {
    if (!inst.is_object()) return;
    if (const Value* req = s.find("required"); req != nullptr && req->is_array()) {
      for (const Value& name : req->as_array()) {
        if (name.is_string() && inst.find(name.as_string()) == nullptr) {
          add(at, "required", "missing required property " + quote(name));
        }
      }
    }
    const Value* props = s.find("properties");
    const Value* extra = s.find("additionalProperties");
    if (props == nullptr && extra == nullptr) return;
    const std::size_t base = at.size();
    for (const Member& m : inst.as_object()) {
      if (full()) return;
      const Value* sub = props != nullptr ? props->find(m.key) : nullptr;
      if (sub == nullptr) sub = extra;
      if (sub == nullptr) continue;
      json::append_token(at, m.key);
      if (sub == extra && sub->is_bool() && !sub->as_bool()) {
        // "the schema is false" would not tell the caller that the member itself is the problem.
        add(at, "additionalProperties", "property " + quote_text(m.key) + " is not allowed");
      } else {
        run(*sub, m.value, at, depth + 1);
      }
      at.resize(base);
    }
  }

  void any_of(const Value& s, const Value& inst, const std::string& at, std::size_t depth) {
    const Value* branches = s.find("anyOf");
    if (branches == nullptr || !branches->is_array() || full()) return;
    for (const Value& b : branches->as_array()) {
      if (matches(b, inst, at, depth + 1)) return;
    }
    add(at, "anyOf",
        "value matches none of the " + std::to_string(branches->as_array().size()) +
            " anyOf schemas");
  }

  void one_of(const Value& s, const Value& inst, const std::string& at, std::size_t depth) {
    const Value* branches = s.find("oneOf");
    if (branches == nullptr || !branches->is_array() || full()) return;
    std::vector<std::size_t> matched;
    for (std::size_t i = 0; i < branches->as_array().size() && matched.size() < 2; ++i) {
      if (matches(branches->as_array()[i], inst, at, depth + 1)) matched.push_back(i);
    }
    if (matched.empty()) {
      add(at, "oneOf",
          "value matches none of the " + std::to_string(branches->as_array().size()) +
              " oneOf schemas");
    } else if (matched.size() > 1) {
      add(at, "oneOf",
          "value matches more than one oneOf schema (at least indexes " +
              std::to_string(matched[0]) + " and " + std::to_string(matched[1]) +
              "); exactly one must match");
    }
  }

  std::size_t max_;
  std::vector<Violation> out_;
};

}  // namespace

Status admit(const json::Value& schema, std::string_view code, std::string_view base_pointer) {
  diag::Diagnostics out;
  Admitter(code, out).schema(schema, std::string(base_pointer), 0, true);
  if (out.empty()) return {};
  return out;
}

json::Value normalize(const json::Value& schema) {
  json::Value out = schema;
  close_objects(out, 0);
  return out;
}

std::vector<Violation> validate(const json::Value& schema, const json::Value& instance,
                                std::size_t max_violations) {
  Validator v(max_violations);
  std::string at;
  v.run(schema, instance, at, 0);
  return std::move(v).take();
}

}  // namespace mf::schema
