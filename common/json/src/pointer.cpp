// RFC 6901 pointers (pointer.hpp): parsing, escaping, formatting and resolving against a value.
#include "mf/json/pointer.hpp"

#include <cstdint>
#include <string>

#include "mf/diag/codes.hpp"

namespace mf::json {

namespace {

// Quotes a pointer or token for a message; the empty pointer (the whole document) gets a name,
// because "" in a message reads like a formatting slip.
std::string quoted_pointer(std::string_view p) {
  if (p.empty()) return "the document root";
  std::string quoted;
  quoted.reserve(p.size() + 2);
  quoted += '\'';
  quoted += p;
  quoted += '\'';
  return quoted;
}

diag::Diagnostic unresolved(std::string_view pointer, std::string_view prefix,
                            std::string_view token, const std::string& reason) {
  // The diagnostic's pointer is the deepest prefix that did resolve: that is where a reader of the
  // document should look.
  return diag::error(diag::codes::kBadPointer,
                     "JSON pointer '" + std::string(pointer) + "': token '" + escape_token(token) +
                         "' does not resolve at " + quoted_pointer(prefix) + ": " + reason,
                     std::string(prefix));
}

// RFC 6901 §4: an array index is "0" or a decimal without leading zeros.
bool is_index_syntax(std::string_view token) {
  if (token.empty() || (token.size() > 1 && token[0] == '0')) return false;
  for (char c : token) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// The index of a well-formed token, saturating where size_t would overflow: such an index is out of
// range for any array we can hold anyway.
std::size_t index_value(std::string_view token) {
  if (token.size() > 19) return SIZE_MAX;
  std::size_t v = 0;
  for (char c : token) v = v * 10 + static_cast<std::size_t>(c - '0');
  return v;
}

}  // namespace

std::string escape_token(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

void append_token(std::string& pointer, std::string_view token) {
  pointer += '/';
  pointer += escape_token(token);
}

void append_index(std::string& pointer, std::size_t index) {
  pointer += '/';
  pointer += std::to_string(index);
}

Result<std::vector<std::string>> parse_pointer(std::string_view pointer) {
  std::vector<std::string> tokens;
  if (pointer.empty()) return tokens;
  if (pointer[0] != '/') {
    return diag::error(diag::codes::kBadPointer, "JSON pointer '" + std::string(pointer) +
                                                     "' must be empty or start with '/'");
  }
  std::size_t pos = 1;
  while (true) {
    std::size_t end = pointer.find('/', pos);
    if (end == std::string_view::npos) end = pointer.size();
    std::string_view raw = pointer.substr(pos, end - pos);
    std::string token;
    token.reserve(raw.size());
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] != '~') {
        token += raw[i];
        continue;
      }
      char next = i + 1 < raw.size() ? raw[i + 1] : '\0';
      if (next != '0' && next != '1') {
        std::string_view prefix = pointer.substr(0, pos - 1);
        return diag::error(diag::codes::kBadPointer,
                           "JSON pointer '" + std::string(pointer) + "': token '" +
                               std::string(raw) + "' after " + quoted_pointer(prefix) +
                               " has an invalid escape ('~' must be followed by '0' or '1')");
      }
      token += next == '0' ? '~' : '/';
      ++i;
    }
    tokens.push_back(std::move(token));
    if (end == pointer.size()) break;
    pos = end + 1;
  }
  return tokens;
}

std::string format_pointer(const std::vector<std::string>& tokens) {
  std::string out;
  for (const std::string& t : tokens) append_token(out, t);
  return out;
}

const Value* find_at(const Value& root, std::string_view pointer) {
  auto tokens = parse_pointer(pointer);
  if (!tokens) return nullptr;
  const Value* cur = &root;
  for (const std::string& token : *tokens) {
    if (cur->is_object()) {
      cur = cur->find(token);
    } else if (cur->is_array() && is_index_syntax(token) &&
               index_value(token) < cur->as_array().size()) {
      cur = &cur->as_array()[index_value(token)];
    } else {
      cur = nullptr;
    }
    if (cur == nullptr) return nullptr;
  }
  return cur;
}

Result<const Value*> resolve(const Value& root, std::string_view pointer) {
  auto tokens = parse_pointer(pointer);
  if (!tokens) return tokens.take_diagnostics();

  const Value* cur = &root;
  std::string prefix;
  for (const std::string& token : *tokens) {
    if (cur->is_object()) {
      const Value* next = cur->find(token);
      if (next == nullptr)
        return unresolved(pointer, prefix, token, "the object has no such member");
      cur = next;
    } else if (cur->is_array()) {
      const Array& arr = cur->as_array();
      if (token == "-") {
        return unresolved(pointer, prefix, token,
                          "'-' names the element after the last one, which does not exist");
      }
      if (!is_index_syntax(token)) {
        return unresolved(pointer, prefix, token,
                          "array indexes are decimal numbers without leading zeros");
      }
      std::size_t index = index_value(token);
      if (index >= arr.size()) {
        return unresolved(pointer, prefix, token,
                          "index out of range for an array of " + std::to_string(arr.size()) +
                              " element" + (arr.size() == 1 ? "" : "s"));
      }
      cur = &arr[index];
    } else {
      return unresolved(pointer, prefix, token,
                        "the value there is a " + std::string(kind_name(cur->kind())) +
                            ", not an object or array");
    }
    append_token(prefix, token);
  }
  return cur;
}

}  // namespace mf::json
