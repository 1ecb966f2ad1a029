// The bounded report of report.hpp: diagnostics are cut and counted as they are added, so a flood
// of them costs a fixed amount of memory and output.
#include "mf/diag/report.hpp"

#include <algorithm>

#include "mf/diag/codes.hpp"
#include "mf/text/utf8.hpp"

namespace mf::diag {

namespace {

// Cuts at most `max` bytes without splitting a UTF-8 sequence.
std::string cut_utf8(std::string s, std::size_t max) {
  if (s.size() <= max) return s;
  s.resize(text::utf8_floor(s, max));
  s.append("...");
  return s;
}

// The bytes of the fields, and 96 of fixed overhead.
std::size_t weight(const Diagnostic& d) {
  return d.code.size() + d.message.size() + d.pointer.size() + d.source.size() + 96;
}

// An upper bound of the weight of the MF-D001 warning.
constexpr std::size_t kWarningWeight = 192;

}  // namespace

void Report::add(Diagnostic d) {
  d.message = cut_utf8(std::move(d.message), limits_.max_message_bytes);
  d.pointer = cut_utf8(std::move(d.pointer), limits_.max_message_bytes);
  d.source = cut_utf8(std::move(d.source), limits_.max_message_bytes);
  const std::size_t w = weight(d);
  // Room for the truncation warning stays free, so the report with it stays within the bound.
  const std::size_t reserve = kWarningWeight;
  if (kept_.size() >= limits_.max_diagnostics || bytes_ + w + reserve > limits_.max_report_bytes) {
    ++dropped_;
    return;
  }
  bytes_ += w;
  kept_.push_back(std::move(d));
}

void Report::add_all(const Diagnostics& ds) {
  for (const Diagnostic& d : ds) add(d);
}

Diagnostics Report::diagnostics() const {
  Diagnostics out = kept_;
  if (dropped_ > 0) {
    if (out.size() >= limits_.max_diagnostics) out.pop_back();  // the warning counts toward it
    Diagnostic w{codes::kTruncated,
                 Severity::Warning,
                 std::to_string(dropped()) + " further diagnostics were dropped (report limit)",
                 "",
                 0,
                 0};
    out.push_back(std::move(w));
  }
  return out;
}

std::size_t Report::dropped() const {
  if (dropped_ == 0) return 0;
  return dropped_ + (kept_.size() >= limits_.max_diagnostics ? 1 : 0);
}

bool Report::has_errors() const {
  return dropped_ > 0 || std::any_of(kept_.begin(), kept_.end(), [](const Diagnostic& d) {
           return d.severity == Severity::Error;
         });
}

}  // namespace mf::diag
