// The exit audit (docs/cli.md): runs the product's binaries exactly as a user would and binds what
// they produced into one content-addressed report of capability receipts. A receipt is true only
// when the audit executed what it claims and checked the result; nothing is a checklist.
#pragma once

#include <optional>
#include <string>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"

namespace mf::audit {

// The Forge task fixture's pinned digest (docs/formats/task.md).
inline constexpr const char* kTaskSha256 =
    "fc4aa5898f737ba4c5a8cb7b2c2c380e1e133e2696b7915a5a3907332ca840f6";

struct AuditRequest {
  std::string fixtures;  // the fixtures directory (forge/, repository/)
  std::string out_dir;   // exit-report.json and the work files go here
  std::string bin_dir;   // where the mf-* binaries are
  // With a store: one more receipt, the store round trip (put -> export -> import into a fresh
  // store
  // -> verify -> get), and the report itself is kept there under audit/report.
  std::string store_dir;
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

// The human-readable table (task digest, calls and repairs vs caps, cases, receipts, report
// digest).
std::string render_table(const AuditOutcome& outcome);

}  // namespace mf::audit
