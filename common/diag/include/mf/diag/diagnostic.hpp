// Diagnostics and the one error model of the codebase (docs/diagnostics.md).
// A failing operation returns Result<T> holding one or more Diagnostics; nothing throws across
// module boundaries. Codes are stable and listed in docs/diagnostics.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace mf::diag {

enum class Severity : std::uint8_t { Error, Warning };

struct Diagnostic {
  std::string code;  // e.g. "MF-S006"
  Severity severity = Severity::Error;
  std::string message;
  std::string pointer;    // RFC 6901 pointer into the input; empty = whole document
  std::int64_t line = 0;  // 1-based; 0 = not applicable
  std::int64_t column = 0;
  // The input the diagnostic is about, when it is not the one the caller reports on (a task run
  // reports on the task file; a scripted model's errors are about its responses file).
  std::string source{};

  bool operator==(const Diagnostic&) const = default;
};

using Diagnostics = std::vector<Diagnostic>;

Diagnostic error(std::string code, std::string message, std::string pointer = {},
                 std::int64_t line = 0, std::int64_t column = 0);

// `text` made safe to show on a terminal (docs/diagnostics.md): each C0 control, DEL and byte
// outside a UTF-8 sequence as \xHH (lowercase hex: \x1b, \x0a), each C1 control, U+2028,
// U+2029 and bidirectional control as \u{HHHH} (\u{202E}); everything else as it is.
std::string printable(std::string_view text);

// One line for a human on stderr: "SOURCE:LINE:COLUMN: error MF-S006: message (at /pointer)";
// SOURCE is d.source when set, else `source` (the command's input) unless the code is about the
// command line, an output or the program (MF-U, MF-S018, MF-O, MF-I): then no SOURCE. Every part
// is redacted (redact_secrets) and printable().
std::string render_text(const Diagnostic& d, std::string_view source = {});

}  // namespace mf::diag

namespace mf {

// Value-or-diagnostics. Result<void> carries only success or diagnostics.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : data_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(diag::Diagnostic d) : data_(diag::Diagnostics{std::move(d)}) {}  // NOLINT
  Result(diag::Diagnostics ds) : data_(std::move(ds)) {}                  // NOLINT

  bool ok() const { return data_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(data_); }
  const T& value() const& { return std::get<0>(data_); }
  T&& value() && { return std::get<0>(std::move(data_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  const diag::Diagnostics& diagnostics() const { return std::get<1>(data_); }
  diag::Diagnostics&& take_diagnostics() { return std::get<1>(std::move(data_)); }

 private:
  std::variant<T, diag::Diagnostics> data_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(diag::Diagnostic d) : diagnostics_{std::move(d)} {}     // NOLINT
  Result(diag::Diagnostics ds) : diagnostics_(std::move(ds)) {}  // NOLINT
  bool ok() const { return diagnostics_.empty(); }
  explicit operator bool() const { return ok(); }
  const diag::Diagnostics& diagnostics() const { return diagnostics_; }
  diag::Diagnostics&& take_diagnostics() { return std::move(diagnostics_); }

 private:
  diag::Diagnostics diagnostics_;
};

using Status = Result<void>;

}  // namespace mf
