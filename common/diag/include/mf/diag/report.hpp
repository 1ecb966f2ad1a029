// Bounded diagnostic reports (docs/diagnostics.md): at most 128 diagnostics, 1 KiB per message and
// 256 KiB per report, the final MF-D001 warning that announces anything dropped included.
#pragma once

#include <cstddef>

#include "mf/diag/diagnostic.hpp"

namespace mf::diag {

struct ReportLimits {
  std::size_t max_diagnostics = 128;
  std::size_t max_message_bytes = 1024;
  std::size_t max_report_bytes = 256 * 1024;
};

class Report {
 public:
  explicit Report(ReportLimits limits = {}) : limits_(limits) {}

  // Adds a diagnostic unless the report is full; messages are cut at a UTF-8 boundary.
  void add(Diagnostic d);
  void add_all(const Diagnostics& ds);

  // The kept diagnostics, with the MF-D001 truncation warning last when anything was dropped.
  Diagnostics diagnostics() const;
  // How many diagnostics the report leaves out (the warning's place included).
  std::size_t dropped() const;
  bool has_errors() const;

 private:
  ReportLimits limits_;
  Diagnostics kept_;
  std::size_t bytes_ = 0;
  std::size_t dropped_ = 0;
};

}  // namespace mf::diag
