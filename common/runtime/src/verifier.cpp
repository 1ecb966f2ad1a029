// The layered output verifier (verifier.hpp): layers run in order and stop at the first that fails,
// so a verdict never claims a layer that did not run.
#include "mf/runtime/verifier.hpp"

#include <algorithm>

#include <charconv>

#include "mf/diag/codes.hpp"
#include "mf/json/reader.hpp"
#include "mf/source/reader.hpp"

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

namespace {

bool parse_line_number(std::string_view s, std::int64_t& out) {
  if (s.empty() || s.size() > 9 || s[0] == '0') return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

}  // namespace

SemanticCheck evidence_check(std::string root) {
  return [root = std::move(root)](const json::Value& output) -> std::vector<Violation> {
    const json::Value* evidence = output.find("evidence");
    const std::string hint = "expected \"path:line\" or \"path:start-end\"";
    if (evidence == nullptr || !evidence->is_string()) {
      return {
          {"semantic", "$.evidence", "malformed_locator", "evidence must be a string; " + hint}};
    }
    const std::string& locator = evidence->as_string();
    const std::size_t colon = locator.rfind(':');
    std::int64_t start = 0, end = 0;
    bool ok = colon != std::string::npos && colon > 0;
    if (ok) {
      const std::string_view range = std::string_view(locator).substr(colon + 1);
      const std::size_t dash = range.find('-');
      ok = dash == std::string_view::npos
               ? parse_line_number(range, start) && (end = start, true)
               : parse_line_number(range.substr(0, dash), start) &&
                     parse_line_number(range.substr(dash + 1), end) && start <= end;
    }
    if (!ok) {
      return {{"semantic", "$.evidence", "malformed_locator",
               "evidence \"" + locator + "\" is not a locator; " + hint}};
    }
    source::SliceRequest request;
    request.root = root;
    request.path = locator.substr(0, colon);
    request.start_line = start;
    request.end_line = end;
    Result<source::SourceSlice> slice = source::read_slice(request);
    if (slice.ok() && slice->end_line == end) return {};
    if (slice.ok() || slice.diagnostics()[0].code == std::string(diag::codes::kBadLineRange) ||
        slice.diagnostics()[0].code == std::string(diag::codes::kRangeTooLong)) {
      return {{"semantic", "$.evidence", "bad_range",
               "evidence \"" + locator + "\" names lines that do not exist in " + request.path +
                   (slice.ok() ? " (it has " + std::to_string(slice->total_lines) + " lines)"
                               : ": " + slice.diagnostics()[0].message)}};
    }
    return {{"semantic", "$.evidence", "missing_file",
             "evidence \"" + locator + "\" cannot be read: " + slice.diagnostics()[0].message}};
  };
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
                   "output is not strict JSON: " + d.message + " (line " + std::to_string(d.line) +
                       ", column " + std::to_string(d.column) + ")"});
    return verdict;
  }
  if (!parsed->is_object()) {
    out.push_back(
        {"shape", "$", "not_an_object",
         "output must be a JSON object, found " + std::string(json::kind_name(parsed->kind()))});
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
