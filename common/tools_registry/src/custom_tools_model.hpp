// The custom-tool compiler's private model (docs/custom-tools.md): Millforge's limits for the
// source contract, a manifest and a policy as read, and the passes that compile_custom_tools
// (custom_tools.cpp) runs in order: the hazard scan, the readers, the policy's checks, lowering.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"
#include "mf/tools/catalog.hpp"

namespace mf::tools::custom {

using json::Value;

// Millforge's limits for the source contract (its custom_tools contracts).
constexpr std::size_t kMaxFieldBytes = 512;
constexpr std::size_t kMaxPackageIdBytes = 160;
constexpr std::size_t kMaxDescriptionBytes = 65536;
constexpr std::int64_t kMaxSchemaBytes = 65536;
constexpr std::int64_t kMaxTools = 128;
constexpr std::int64_t kMaxTimeoutSeconds = 86400;
constexpr std::int64_t kMaxGraceSeconds = 3600;
constexpr std::int64_t kMaxOutputBytes = 64 << 20;
constexpr std::int64_t kMaxSummaryBytes = 65536;
constexpr std::int64_t kMaxToolVersion = 2147483647;
constexpr std::size_t kMaxListed = 64;  // capabilities or artifacts of one tool (the catalog's)

constexpr const char* kSourceSchema = "millforge.custom_tool.source";
constexpr const char* kSourceKind = "custom_tool_source";
constexpr const char* kPolicySource = "policy";

// A fault of the compiler: an error with its code, its pointer into the document and the document
// it is about ("" the manifest, kPolicySource the policy).
inline diag::Diagnostic fault(const char* code, std::string message, std::string pointer,
                              const char* source) {
  diag::Diagnostic d = diag::error(code, std::move(message), std::move(pointer));
  d.source = source;
  return d;
}

// ---- The hazard scan (custom_tools_hazards.cpp): text that is not a contract.

// `s` without the ASCII whitespace around it.
std::string_view trimmed(std::string_view s);

// Every string of the document, and (beyond Millforge) every member name, for secrets.
void scan(const Value& v, std::string& pointer, std::string_view field, const char* source,
          diag::Diagnostics& out);

// ---- The contracts, as read.

struct Declaration {
  std::string at;  // "/tools/N"
  std::string tool_id;
  std::int64_t version = 0;
  std::string implementation_id;
  std::string runtime_kind = "contract_only";
  std::string model_tool_name;
  std::string description;
  std::string description_policy;
  Value input_schema;  // admitted and normalized
  Value output_schema;
  std::vector<std::string> capabilities;  // sorted
  std::vector<std::string> artifacts;     // sorted
  SideEffect side_effect = SideEffect::ReadOnly;
  Idempotency idempotency = Idempotency::Unknown;
  std::int64_t timeout_seconds = 0;
  std::int64_t grace_seconds = 0;
  std::int64_t max_output_bytes = 0;
  std::int64_t max_summary_utf8 = 0;
  bool redact_secrets = true;
  std::string approval;
  std::string input_policy = "json_schema_exact";
  std::string output_contract_policy = "json_schema_exact";
  Value idempotency_key_policy;  // null or a string
  std::optional<std::string> expected_declaration, expected_descriptor, expected_record;
};

struct Manifest {
  std::string package_id;
  std::int64_t package_version = 0;
  Value source_name;  // null or a string
  std::vector<Declaration> tools;
  Value policy_metadata = Value(json::Object{});
  std::optional<std::string> expected_source;
};

struct Policy {
  std::set<std::string> capabilities;
  std::int64_t max_tools = kMaxTools;
  std::int64_t max_schema_bytes = kMaxSchemaBytes;
  std::int64_t max_description = static_cast<std::int64_t>(kMaxDescriptionBytes);
  bool require_hashes = false;
  // side effect -> the approval policies allowed for it
  std::map<std::string, std::vector<std::string>> matrix = {
      {"read_only", {"none", "millrace_explicit", "operator_out_of_band"}},
      {"artifact_write", {"millrace_explicit", "operator_out_of_band"}},
      {"workspace_write", {"millrace_explicit", "operator_out_of_band"}},
      {"process_execution", {"millrace_explicit", "operator_out_of_band"}},
      {"network_read", {"millrace_explicit", "operator_out_of_band"}},
      {"network_write", {"millrace_explicit", "operator_out_of_band"}},
      {"terminal", {"millrace_explicit", "operator_out_of_band"}},
  };
};

// ---- The readers (custom_tools_parse.cpp): a document that passed the hazard scan, read with
// every fault under its MF-CT code; nullopt when there is any.

std::optional<Manifest> read_manifest(const Value& doc, diag::Diagnostics& out);
std::optional<Policy> read_policy(const Value& doc, diag::Diagnostics& out);

// ---- The lowering (custom_tools_lower.cpp): Millforge's digests, the compilation record and the
// catalog entry of a declaration.

std::string declaration_sha256(const Declaration& d);
std::string source_sha256(const Manifest& m);
std::string millforge_descriptor_sha256(const Declaration& d);
Value record_body(const Manifest& m, const std::string& source_sha, const Declaration& d);
std::string record_sha256(Value body);
Value catalog_entry(const Declaration& d);
Value catalog_of(json::Array entries);
std::string manifest_member(std::string_view catalog_member);

}  // namespace mf::tools::custom
