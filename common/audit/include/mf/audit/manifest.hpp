// The audit manifest (docs/formats/audit-manifest.md): what a user's audit checks and what it must
// find, each path relative to the manifest's directory. A manifest is read and every file it names
// is checked to exist before any check runs, so a bad manifest costs nothing and writes nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"

namespace mf::audit {

inline constexpr const char* kManifestKind = "millforge_audit_manifest";

// mf-compile SOURCE [--catalog C] [--profiles P]: the plan must have the pinned compiled_sha256.
struct HarnessCheck {
  std::string source{};
  std::string catalog{};   // empty: none
  std::string profiles{};  // empty: none
  std::string compiled_sha256{};
};

// mf-compile verify PATH; with a pin, the plan's compiled_sha256 must be it.
struct PlanCheck {
  std::string path{};
  std::string compiled_sha256{};  // empty: not pinned
};

// mf-replay --strict --plan PLAN --workspace WORKSPACE TRACE.
struct StrictCheck {
  std::string plan{};
  std::string workspace{};
};

// mf-replay [--expect-sha256 H] [--mac-key-env N] TRACE, and a strict replay when asked.
struct TraceCheck {
  std::string path{};
  std::string sha256{};       // empty: not pinned (then mac_key_env is set)
  std::string mac_key_env{};  // empty: no MAC checked
  std::optional<StrictCheck> strict{};
};

// mf-eval compare --baseline BASELINE --candidate REPORT with the thresholds given, as each
// option's value (canonical JSON numbers).
struct GateCheck {
  std::string baseline{};
  std::vector<std::pair<std::string, std::string>> options{};  // {"--alpha", "0.05"}, ...
};

// An eval report and the traces of its attempts (a directory or a store).
struct CampaignCheck {
  std::string report{};
  std::string traces{};  // a directory; empty when `store` is set
  std::string store{};   // a store directory; empty when `traces` is set
  std::string suite{};   // empty: attempts are not graded again
  std::string mac_key_env{};
  std::optional<GateCheck> gate{};
};

struct PinCheck {
  std::string path{};
  std::string sha256{};
};

struct Manifest {
  std::string dir{};       // the manifest's directory, absolute: every check runs there
  std::string name{};      // the manifest's file name (no directory)
  std::string sha256{};    // of its bytes
  std::string fixtures{};  // the product self-test's fixtures directory; empty: no product receipts
  std::vector<HarnessCheck> harnesses{};
  std::vector<PlanCheck> plans{};
  std::vector<TraceCheck> traces{};
  std::vector<CampaignCheck> campaigns{};
  std::vector<PinCheck> pins{};
};

// Reads the manifest at `path` (YAML when it ends in .yaml or .yml, else JSON). Refused (exit 2)
// with every problem found, each with its pointer and line: an unknown member (MF-S021), a value of
// the wrong type or form, such as a pin that is not 64 lowercase hex digits or an absolute path
// (MF-S020), a file or directory that does not exist or a key variable that is not set (MF-S013).
Result<Manifest> load_manifest(const std::string& path);

}  // namespace mf::audit
