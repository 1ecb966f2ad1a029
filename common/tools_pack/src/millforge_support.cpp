// Millforge's builtin.* tools over this product's workspace, artifact directory and process
// module: what every one of them shares. Each successful result's details are {status, summary,
// ...} as its output schema asks; an error result carries {status, summary} too. Behaviour and
// differences from Millforge: docs/tools.md, "Millforge built-ins".
#include "millforge_support.hpp"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mf/text/utf8.hpp"

namespace mf::tools::millforge {

using json::Value;

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

ToolResult failure(std::string message, bool untouched, std::string_view status,
                   json::Object more) {
  json::Object details{{"status", std::string(status)}, {"summary", message}};
  for (auto& m : more) details.push_back(std::move(m));
  return ToolResult{true, std::move(message), std::move(details), untouched};
}

ToolResult success(std::string text, std::string summary, json::Object more) {
  json::Object details{{"status", "success"}, {"summary", std::move(summary)}};
  for (auto& m : more) details.push_back(std::move(m));
  return ToolResult{false, std::move(text), std::move(details), false};
}

const Value* member(const Value& v, std::string_view key) {
  return v.is_object() ? v.find(key) : nullptr;
}

std::size_t size_arg(const Value& args, std::string_view key, std::size_t fallback) {
  const Value* v = args.find(key);
  if (v == nullptr) return fallback;
  const auto n = v->as_exact_int();
  return n && *n > 0 ? static_cast<std::size_t>(*n) : fallback;
}

std::string as_text(std::string bytes) {
  return text::valid_utf8(bytes) ? std::move(bytes) : text::decode_utf8_lossy(bytes);
}

ToolResult with_status(ToolResult r) {
  r.details = json::Object{{"status", "soft_failure"}, {"summary", r.text}};
  return r;
}

std::string plural(std::size_t n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

}  // namespace mf::tools::millforge
