// A capability receipt and the way the audit runs the product's binaries to earn one (audit.hpp).
// Private to the audit module.
#pragma once

#include <string>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"

namespace mf::audit {

// The Forge task fixture's pinned digest (docs/formats/task.md), which the self-test checks.
inline constexpr const char* kTaskSha256 =
    "fc4aa5898f737ba4c5a8cb7b2c2c380e1e133e2696b7915a5a3907332ca840f6";

// One capability claim about one subject: it holds only if every check passed; `failures` says
// which did not, each naming the culprit.
class Receipt {
 public:
  explicit Receipt(std::string capability, std::string subject = {})
      : capability_(std::move(capability)), subject_(std::move(subject)) {}

  bool check(bool ok, const std::string& what) {
    if (!ok) failures_.push_back(what);
    return ok;
  }
  // An input file (relative path as the manifest names it) and the SHA-256 of its bytes.
  void input(const std::string& path, const std::string& sha256) { inputs_.set(path, sha256); }
  // Named facts the check observed (the product's receipts).
  void evidence(std::string_view key, json::Value v) { evidence_.set(key, std::move(v)); }
  // The SHA-256 of what the binary produced; without it, the canonical digest of the facts.
  void evidence_sha256(std::string digest) { evidence_sha256_ = std::move(digest); }
  bool holds() const { return failures_.empty(); }
  const std::string& capability() const { return capability_; }
  const std::string& subject() const { return subject_; }
  const std::vector<std::string>& failures() const { return failures_; }

  json::Value to_json() const;

 private:
  std::string capability_;
  std::string subject_;
  json::Value inputs_;
  json::Value evidence_;
  std::string evidence_sha256_;
  std::vector<std::string> failures_;
};

struct Ran {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs a sibling mf-* binary from `bin_dir`, in `cwd` (empty: the audit's own), to completion.
Result<Ran> exec(const std::string& bin_dir, const std::string& cwd, const std::string& tool,
                 std::vector<std::string> args);

// The string or exact integer member `key` of `v`: empty / -1 when absent or of another type.
std::string string_at(const json::Value& v, std::string_view key);
std::int64_t int_at(const json::Value& v, std::string_view key);

// The product's own end-to-end receipts over its fixtures (product.cpp): the typed task, bounded
// repair, provider-free replay, scoped tool, evaluation gate, compiled harness, guarded tool run
// and prompt projection, and with a store the store round trip. `facts` gets the task digest, the
// calls and repairs against their caps and the evaluation's cases. Fails only when the audit
// itself cannot run.
struct ProductRequest {
  std::string fixtures{};  // absolute
  std::string work_dir{};  // scratch files
  std::string bin_dir{};
  std::string store_dir{};  // empty: no store round trip
};
Result<std::vector<Receipt>> product_receipts(const ProductRequest& request, json::Value& facts);

}  // namespace mf::audit
