// Building a diagnostic and rendering it as a line of text for stderr.
#include "mf/diag/diagnostic.hpp"

#include "mf/diag/secrets.hpp"

namespace mf::diag {

Diagnostic error(std::string code, std::string message, std::string pointer, std::int64_t line,
                 std::int64_t column) {
  // Messages quote input values and pointers name input keys; neither may carry a credential
  // onward (docs/diagnostics.md).
  return Diagnostic{
      std::move(code), Severity::Error, redact_secrets(message), redact_secrets(pointer), line,
      column};
}

std::string render_text(const Diagnostic& d, std::string_view source) {
  if (!d.source.empty()) source = d.source;
  std::string out;
  if (!source.empty()) {
    out.append(redact_secrets(source));
    if (d.line > 0) {
      out += ':' + std::to_string(d.line);
      if (d.column > 0) out += ':' + std::to_string(d.column);
    }
    out.append(": ");
  } else if (d.line > 0) {
    out += "line " + std::to_string(d.line);
    if (d.column > 0) out += ", column " + std::to_string(d.column);
    out.append(": ");
  }
  out.append(d.severity == Severity::Error ? "error " : "warning ");
  out.append(d.code);
  out.append(": ");
  out.append(d.message);
  if (!d.pointer.empty()) {
    out.append(" (at ");
    out.append(d.pointer);
    out.push_back(')');
  }
  return out;
}

}  // namespace mf::diag
