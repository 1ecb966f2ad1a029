// Diagnostics and reports in their JSON form (diagnostics.hpp).
#include "mf/json/diagnostics.hpp"

#include <cstdint>

#include "mf/diag/secrets.hpp"

namespace mf::json {

Value to_json(const diag::Diagnostic& d) {
  Value v;
  v.set("code", d.code);
  v.set("severity", d.severity == diag::Severity::Error ? "error" : "warning");
  v.set("message", d.message);
  v.set("pointer", d.pointer);
  if (d.line > 0) v.set("line", d.line);
  if (d.column > 0) v.set("column", d.column);
  // The file the diagnostic is about when it is not the report's own input (a catalog, a missing
  // file): a path, redacted as a message is.
  if (!d.source.empty()) v.set("source", diag::redact_secrets(d.source));
  return v;
}

Value to_json(const diag::Report& report) {
  Array items;
  for (const diag::Diagnostic& d : report.diagnostics()) items.push_back(to_json(d));
  Value v;
  v.set("diagnostics", std::move(items));
  v.set("truncated", static_cast<std::int64_t>(report.dropped()));
  return v;
}

}  // namespace mf::json
