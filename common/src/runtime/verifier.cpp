#include "mf/runtime/verifier.hpp"

#include <algorithm>

#include "mf/json/reader.hpp"

namespace mf::runtime {

json::Value to_json(const Violation& v) {
  json::Value j;
  j.set("layer", v.layer);
  j.set("path", v.path);
  j.set("code", v.code);
  j.set("message", v.message);
  return j;
}

json::Value to_json(const std::vector<Violation>& vs) {
  json::Array items;
  for (const Violation& v : vs) items.push_back(to_json(v));
  return items;
}

Verdict verify_output(const Task& task, std::string_view content, const SemanticCheck& semantic) {
  Verdict verdict;
  auto& out = verdict.violations;
  const auto cap = static_cast<std::size_t>(task.budget.max_output_bytes);
  if (content.size() > cap) {
    out.push_back({"byte_budget", "$", "output_too_large",
                   "output is " + std::to_string(content.size()) + " bytes; the limit is " +
                       std::to_string(cap)});
    return verdict;
  }
  Result<json::Value> parsed = json::parse(content);
  if (!parsed) {
    const diag::Diagnostic& d = parsed.diagnostics().front();
    out.push_back({"json", "$", "invalid_json",
                   "output is not strict JSON: " + d.message + " (line " +
                       std::to_string(d.line) + ", column " + std::to_string(d.column) + ")"});
    return verdict;
  }
  if (!parsed->is_object()) {
    out.push_back({"shape", "$", "not_an_object",
                   "output must be a JSON object, found " +
                       std::string(json::kind_name(parsed->kind()))});
    return verdict;
  }
  for (const std::string& field : task.contract.required_fields) {
    if (parsed->find(field) == nullptr) {
      out.push_back({"required", "$." + field, "missing_required_field",
                     "required field `" + field + "` is missing"});
    }
  }
  if (!out.empty()) return verdict;
  if (task.contract.reject_unknown_fields) {
    const auto& known = task.contract.required_fields;
    for (const json::Member& m : parsed->as_object()) {
      if (std::find(known.begin(), known.end(), m.key) == known.end()) {
        out.push_back({"unknown", "$." + m.key, "unknown_field",
                       "field `" + m.key + "` is not part of the output contract"});
      }
    }
    if (!out.empty()) return verdict;
  }
  if (semantic) {
    out = semantic(*parsed);
    if (!out.empty()) return verdict;
  }
  verdict.output = std::move(parsed.value());
  return verdict;
}

}  // namespace mf::runtime
