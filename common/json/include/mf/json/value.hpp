// The product's one JSON value model. Objects keep members in input order (canonical output sorts
// them); numbers are IEEE doubles, as in RFC 8785.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace mf::json {

// `d` as an exact integer in [-(2^53-1), 2^53-1], or nothing when it is not one.
std::optional<std::int64_t> exact_int(double d);

class Value;
struct Member;
using Array = std::vector<Value>;
using Object = std::vector<Member>;

enum class Kind : std::uint8_t { Null, Bool, Number, String, Array, Object };

class Value {
 public:
  Value();
  // Constructors are defined after Member: clang instantiates std::variant eagerly and needs
  // Object's element type complete.
  Value(const Value&);
  Value(Value&&) noexcept;
  Value& operator=(const Value&);
  Value& operator=(Value&&) noexcept;
  ~Value();
  Value(std::nullptr_t);      // NOLINT(google-explicit-constructor)
  Value(bool b);              // NOLINT(google-explicit-constructor)
  Value(double d);            // NOLINT(google-explicit-constructor)
  Value(int i);               // NOLINT(google-explicit-constructor)
  Value(std::int64_t i);      // NOLINT(google-explicit-constructor)
  Value(std::uint64_t u);     // NOLINT(google-explicit-constructor)
  Value(std::string s);       // NOLINT(google-explicit-constructor)
  Value(std::string_view s);  // NOLINT(google-explicit-constructor)
  Value(const char* s);       // NOLINT(google-explicit-constructor)
  Value(Array a);             // NOLINT(google-explicit-constructor)
  Value(Object o);            // NOLINT

  Kind kind() const {
    return data_.index() == kFloatLexeme ? Kind::Number : static_cast<Kind>(data_.index());
  }
  bool is_null() const { return kind() == Kind::Null; }
  bool is_bool() const { return kind() == Kind::Bool; }
  bool is_number() const { return kind() == Kind::Number; }
  bool is_string() const { return kind() == Kind::String; }
  bool is_array() const { return kind() == Kind::Array; }
  bool is_object() const { return kind() == Kind::Object; }

  // Unchecked accessors: the caller has tested kind() first.
  bool as_bool() const { return std::get<bool>(data_); }
  double as_number() const {
    const double* d = std::get_if<double>(&data_);
    return d != nullptr ? *d : std::get<FloatLexeme>(data_).d;
  }
  const std::string& as_string() const { return std::get<std::string>(data_); }
  std::string& as_string() { return std::get<std::string>(data_); }
  const Array& as_array() const { return std::get<Array>(data_); }
  Array& as_array() { return std::get<Array>(data_); }
  const Object& as_object() const { return std::get<Object>(data_); }
  Object& as_object() { return std::get<Object>(data_); }

  // The number as an exact integer in [-(2^53-1), 2^53-1], or nothing when it is not one. Reading
  // rounds monotonically, so an integer lexeme beyond that range never comes back as one.
  std::optional<std::int64_t> as_exact_int() const;

  // A number read from a lexeme with a fraction or an exponent ("0.0", "1e3"). Python's json.loads
  // makes such a lexeme a float and every other one an int, and json.dumps writes them apart
  // ("0.0", "0"), so the Millforge form (millforge_form.hpp) keeps the kind; nothing else looks at
  // it: equality, the canonical form and arithmetic see the number only.
  static Value float_lexeme(double d);
  bool is_float_lexeme() const { return data_.index() == kFloatLexeme; }

  // Object member lookup (first match); nullptr when absent or not an object.
  const Value* find(std::string_view key) const;
  Value* find(std::string_view key);
  // Sets a member on an object, replacing an existing one; turns null into an empty object.
  Value& set(std::string_view key, Value v);
  // Appends to an array; turns null into an empty array.
  Value& push_back(Value v);

  bool operator==(const Value& o) const;

 private:
  // A number marked as read from a float lexeme: one more alternative rather than a flag beside
  // the variant, so a Value stays the size it was.
  struct FloatLexeme {
    double d;
    bool operator==(const FloatLexeme&) const = default;
  };
  static constexpr std::size_t kFloatLexeme = 6;
  std::variant<std::monostate, bool, double, std::string, Array, Object, FloatLexeme> data_;
};

struct Member {
  std::string key;
  Value value;
  bool operator==(const Member&) const = default;
};

inline Value::Value() = default;
inline Value::Value(const Value&) = default;
inline Value::Value(Value&&) noexcept = default;
inline Value& Value::operator=(const Value&) = default;
inline Value& Value::operator=(Value&&) noexcept = default;
inline Value::~Value() = default;
inline Value::Value(Object o) : data_(std::move(o)) {}
inline Value::Value(std::nullptr_t) {}
inline Value::Value(bool b) : data_(b) {}
inline Value::Value(double d) : data_(d) {}
inline Value Value::float_lexeme(double d) {
  Value v;
  v.data_ = FloatLexeme{d};
  return v;
}
inline Value::Value(int i) : data_(double(i)) {}
inline Value::Value(std::int64_t i) : data_(double(i)) {}
inline Value::Value(std::uint64_t u) : data_(double(u)) {}
inline Value::Value(std::string s) : data_(std::move(s)) {}
inline Value::Value(std::string_view s) : data_(std::string(s)) {}
inline Value::Value(const char* s) : data_(std::string(s)) {}
inline Value::Value(Array a) : data_(std::move(a)) {}
inline bool Value::operator==(const Value& o) const {
  if (is_number() && o.is_number()) return as_number() == o.as_number();
  return data_.index() == o.data_.index() && data_ == o.data_;
}

std::string_view kind_name(Kind k);

// Replaces every secret-looking run (diag::redact_secrets) in the strings and member names of `v`,
// at any depth; true when anything was replaced.
bool redact_secrets(Value& v);
// The same walk with another rule: `redact` changes one string in place and says whether it did;
// two member names it makes equal stay two members, the later ones numbered ("#2", ...).
bool redact_strings(Value& v, const std::function<bool(std::string&)>& redact);

}  // namespace mf::json
