// Building a diagnostic and rendering it as a line of text for stderr.
#include "mf/diag/diagnostic.hpp"

#include "mf/diag/secrets.hpp"
#include "mf/text/utf8.hpp"

namespace mf::diag {

namespace {

constexpr char kHex[] = "0123456789abcdef";
constexpr char kUpperHex[] = "0123456789ABCDEF";

// Characters a terminal acts on or that reorder what it shows: C1 controls (U+0085 NEL among
// them), the line and paragraph separators, and the bidirectional marks, embeddings, overrides
// and isolates (U+061C, U+200E/F, U+202A..U+202E, U+2066..U+2069).
bool shown_escaped(char32_t c) {
  return (c >= 0x80 && c <= 0x9F) || c == 0x061C || c == 0x200E || c == 0x200F ||
         (c >= 0x2028 && c <= 0x2029) || (c >= 0x202A && c <= 0x202E) ||
         (c >= 0x2066 && c <= 0x2069);
}

char32_t decode(std::string_view s, std::size_t at, std::size_t len) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[at + k]); };
  if (len == 1) return b(0);
  char32_t c = b(0) & (len == 2 ? 0x1FU : len == 3 ? 0x0FU : 0x07U);
  for (std::size_t k = 1; k < len; ++k) c = (c << 6) | (b(k) & 0x3FU);
  return c;
}

// The input a command reads is what its diagnostics are about, except those of the command line
// (MF-U001, and MF-S018 for mf-compile's request options), of its outputs (MF-O) and of the program
// itself and its installation (MF-I, MF-H): those name no file, so the command's input is not put
// before them.
bool about_the_input(std::string_view code) {
  return code.rfind("MF-U", 0) != 0 && code.rfind("MF-O", 0) != 0 && code.rfind("MF-I", 0) != 0 &&
         code.rfind("MF-H", 0) != 0 && code != "MF-S018";
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const std::size_t len = text::utf8_sequence_length(text, i);
    if (len == 0 || byte < 0x20 || byte == 0x7F) {
      // A C0 control, DEL, or a byte of no UTF-8 sequence.
      out.append("\\x");
      out.push_back(kHex[byte >> 4]);
      out.push_back(kHex[byte & 0xF]);
      ++i;
      continue;
    }
    if (const char32_t c = decode(text, i, len); len > 1 && shown_escaped(c)) {
      out.append("\\u{");
      for (int shift = 12; shift >= 0; shift -= 4) out.push_back(kUpperHex[(c >> shift) & 0xF]);
      out.push_back('}');
    } else {
      out.append(text.substr(i, len));
    }
    i += len;
  }
  return out;
}

Diagnostic error(std::string code, std::string message, std::string pointer, std::int64_t line,
                 std::int64_t column) {
  // Messages quote input values and pointers name input keys; neither may carry a credential
  // onward (docs/diagnostics.md).
  return Diagnostic{
      std::move(code), Severity::Error, redact_secrets(message), redact_secrets(pointer), line,
      column};
}

std::string render_text(const Diagnostic& d, std::string_view source) {
  if (!d.source.empty()) {
    source = d.source;
  } else if (!about_the_input(d.code)) {
    source = {};
  }
  // Every part passes through the one redaction: a message or pointer built after diag::error
  // (prefixed by a caller) is redacted here too.
  std::string out;
  if (!source.empty()) {
    out.append(printable(redact_secrets(source)));
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
  out.append(printable(d.code));
  out.append(": ");
  out.append(printable(redact_secrets(d.message)));
  if (!d.pointer.empty()) {
    out.append(" (at ");
    out.append(printable(redact_secrets(d.pointer)));
    out.push_back(')');
  }
  return out;
}

}  // namespace mf::diag
