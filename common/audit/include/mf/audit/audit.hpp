// The audit (docs/audit.md): runs the product's binaries over what a manifest names (a user's
// harnesses, plans, traces and campaigns, or the product's own fixtures) and binds what they
// produced into one content-addressed report of capability receipts. A receipt holds only when the
// audit executed what it claims and checked the result; nothing is a checklist.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "mf/audit/manifest.hpp"
#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"

namespace mf::audit {

struct AuditRequest {
  Manifest manifest;
  std::string out_dir;  // exit-report.json and the product self-test's work files go here
  std::string bin_dir;  // where the mf-* binaries are
  // With a store: the report is kept there under audit/report, and the product self-test adds its
  // store round trip (put -> export -> import into a fresh store -> verify -> get).
  std::string store_dir;
  std::size_t jobs = 0;  // threads for a campaign's traces (-j); 0: the binaries' default
  // Called before each check of the manifest: its number (from 1), how many there are, and its
  // capability and subject.
  std::function<void(std::size_t, std::size_t, const std::string&)> progress{};
};

struct AuditOutcome {
  json::Value report;  // canonical report, with its own report_sha256
  std::string report_sha256;
  std::size_t report_bytes = 0;  // size of exit-report.json
  bool passed = false;           // every receipt holds
};

// Fails (MF-O/MF-I) only when the audit itself cannot run or write its report; a failed check is a
// receipt that does not hold.
Result<AuditOutcome> run_audit(const AuditRequest& request);

// The human-readable table: with the product self-test its figures (task digest, calls and repairs
// against their caps, cases), then each receipt that does not hold with its first failure, the
// receipts that hold, and the report's size and digest.
std::string render_table(const AuditOutcome& outcome);

}  // namespace mf::audit
