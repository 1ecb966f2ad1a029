// The tool registry (docs/tools.md): immutable descriptors with a registry-computed digest, and
// frozen catalogs giving exact (tool_id, version) lookup. The harness compiler resolves tool_refs
// against a catalog; the execution boundary runs a call only through a descriptor bound in a
// compiled plan.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"

namespace mf::tools {

enum class SideEffect : std::uint8_t {
  ReadOnly,
  ArtifactWrite,
  WorkspaceWrite,
  ProcessExecution,
  NetworkRead,
  NetworkWrite,
  Terminal,
};

enum class Idempotency : std::uint8_t { Idempotent, IdempotentWithKey, NonIdempotent, Unknown };

std::string_view name(SideEffect s);
std::string_view name(Idempotency i);

struct OutputPolicy {
  std::int64_t max_output_bytes = 1 << 20;
  std::int64_t max_summary_bytes = 8 << 10;
  bool redact_secrets = true;
};

struct ToolDescriptor {
  std::string tool_id;  // dotted lowercase, e.g. "builtin.pi_compat.read"
  std::int64_t version = 1;
  std::string model_tool_name;  // what the model calls, e.g. "read"
  std::string description;
  json::Value input_schema;                        // admitted and normalized (closed objects)
  json::Value output_schema;                       // admitted and normalized
  std::vector<std::string> required_capabilities;  // sorted, unique
  SideEffect side_effect_class = SideEffect::ReadOnly;
  Idempotency idempotency = Idempotency::Unknown;
  std::int64_t timeout_ms = 300000;
  OutputPolicy output_policy;
  std::string implementation_id;  // "impl.<tool_id>.v<version>" unless the catalog names one
  // For a tool of an MCP server, what admission pinned (docs/connectors.md): connector_id,
  // provider_tool_name, provider_sha256, server, server_name, server_version, protocol_version,
  // snapshot_sha256. Null for every other tool (and then absent from the digested form).
  json::Value connector;
  // The artifacts a node bound to this tool may produce (sorted, unique). Unset: any declared
  // artifact, for a tool whose side effect writes (not read_only, not terminal).
  std::optional<std::vector<std::string>> produced_artifact_ids;
  // SHA-256 of the canonical descriptor (every field above, defaults filled in); computed here,
  // never taken from a catalog file.
  std::string descriptor_sha256;
  // A tool of a Millforge catalog snapshot (docs/formats/catalog.md, "Millforge snapshots"): the
  // descriptor digest the snapshot states and the input schema as the snapshot writes it, which
  // the millforge-v1 plan form carries. Unset for every other tool.
  struct SnapshotPins {
    std::string descriptor_sha256;
    json::Value input_schema;
  };
  std::optional<SnapshotPins> snapshot;

  std::string ref() const { return tool_id + "@" + std::to_string(version); }
  // Whether a node bound to this tool may produce `artifact_id` (MF-A002 otherwise).
  bool may_produce(std::string_view artifact_id) const;
};

// A catalog's identity in Millforge's rule: snapshot_sha256 digests the sorted (tool_id,
// tool_version, implementation_id, descriptor_sha256) records, snapshot_id digests that.
struct SnapshotIdentity {
  std::string snapshot_id;
  std::string snapshot_sha256;
};

// The descriptor as canonical-ready JSON, without descriptor_sha256 (the bytes it is computed
// over).
json::Value to_json(const ToolDescriptor& d);

// A frozen snapshot of descriptors keyed by (tool_id, version).
class Catalog {
 public:
  // Reads a catalog document (docs/formats/catalog.md): a tool catalog or a Millforge catalog
  // snapshot. Every problem is reported: MF-R004 for a malformed entry, MF-R007 for a schema
  // outside the supported subset, MF-R003 when an entry claims a descriptor_sha256 that differs
  // from the computed one, MF-R005 for a tool listed twice, MF-R009 for malformed snapshot
  // metadata and MF-R008 when a snapshot's stated digests are not those of its entries. Pointers
  // are into `doc`.
  static Result<Catalog> from_json(const json::Value& doc);

  // Millforge's snapshot identity of this catalog (a snapshot tool counts with its stated digest).
  SnapshotIdentity snapshot_identity() const;

  // Adds every descriptor of `other`; MF-R005 for a (tool_id, version) already present.
  Status merge(const Catalog& other);

  const ToolDescriptor* find(std::string_view tool_id, std::int64_t version) const;
  const std::map<std::pair<std::string, std::int64_t>, ToolDescriptor>& descriptors() const {
    return tools_;
  }

 private:
  std::map<std::pair<std::string, std::int64_t>, ToolDescriptor> tools_;
};

// The descriptor a compiled plan's node states (docs/formats/plan.md): its binding and
// descriptor members read back through the catalog entry rule, so a node whose descriptor_sha256
// is not the digest of what it now says is MF-R003, as a catalog entry would be. Pointers are
// into the plan, under `pointer` (the node's). The plan loader and the runtime's bindings both
// read nodes through this one function.
Result<ToolDescriptor> plan_node_descriptor(const json::Value& node, const std::string& pointer);

// The compiled-in catalog: the Pi-compatible coding pack, its terminal controls, the artifact
// tools and Millforge's built-in tools (docs/formats/catalog.md lists them).
const Catalog& builtin_catalog();
const json::Value& builtin_catalog_json();

// The built-in catalog plus, as Millforge's Pi-compatible catalog configures them, one terminal
// control per legal terminal result: tool `builtin.pi_compat.terminal.<token>@1`, model name
// `terminal_<token>`, input {terminal_result: that result only, summary: non-empty}, capability
// terminal.intent, side effect terminal, all served by kConfiguredTerminalImplementation. MF-R005
// when two results make one token, MF-R004 when a result cannot make one (docs/tools.md).
Result<json::Value> builtin_catalog_json(const std::vector<std::string>& legal_terminals);
// The token of a terminal result: its lowercase form, or when that is over 48 bytes its first 39
// bytes, "_" and the first 8 hex digits of the SHA-256 of the result.
std::string terminal_token(std::string_view result);
inline constexpr std::string_view kConfiguredTerminalImplementation =
    "impl.builtin.pi_compat.terminal.v1";

// Identifier rules shared with the harness compiler.
bool valid_dotted_id(std::string_view s);        // "a.b_c.d9": lowercase segments joined by '.'
bool valid_model_tool_name(std::string_view s);  // [A-Za-z][A-Za-z0-9_-]{0,63}
// A connector's soft_errors (docs/connectors.md): 1..16 strings of 1..256 bytes.
bool soft_errors_ok(const json::Value& soft_errors);
inline constexpr const char* kSoftErrorsRule = "soft_errors must be 1..16 strings of 1..256 bytes";
bool valid_local_id(std::string_view s);  // [a-z][a-z0-9_]{0,63}: node and artifact ids

}  // namespace mf::tools
