// The harness compiler (docs/formats/harness.md, docs/formats/plan.md): a harness source plus tool
// catalogs and model profiles in, a content-addressed compiled plan (or diagnostics) out. Pure: the
// caller reads files and publishes results; phases run request -> parse -> schema -> resolution ->
// graph -> capability -> artifact -> lowering, and a phase that fails stops the ones after it,
// except that resolution, graph, capability and artifact faults are reported together (Millforge's
// rule) unless resolution cannot go on.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"

namespace mf::harness {

enum class Format : std::uint8_t { Yaml, Json };

// Parses harness source text: YAML through the strict YAML front end, JSON through the strict
// reader; both give the same value model. The top level must be an object.
Result<json::Value> parse_source(std::string_view text, Format format);

// A named input document (catalog or profiles file) already read by the strict reader.
struct NamedDocument {
  std::string name;  // file name for messages, or "builtin"
  json::Value doc;
};

// The plan forms mf-compile emits: the product's own (RFC 8785, docs/formats/plan.md) and
// Millforge's (--emit millforge-v1, docs/formats/plan.md "Millforge form").
enum class PlanForm : std::uint8_t { Native, MillforgeV1 };

struct CompileRequest {
  json::Value source;                   // the parsed harness document
  std::vector<NamedDocument> catalogs;  // merged; a tool listed by two catalogs is MF-R005
  std::vector<NamedDocument> profiles;  // model profile sets (docs/formats/profiles.md)
  std::string expected_harness_id;      // MF-S027 when set and different
  std::string stage;                    // MF-S028 when set and not in stage_scope
  std::optional<std::vector<std::string>> legal_terminals;  // MF-G009 / MF-S029
  std::optional<std::vector<std::string>> capabilities;     // granted envelope, MF-C001
  PlanForm form = PlanForm::Native;
};

// A catalog's identity in Millforge's snapshot rule (tools::Catalog::snapshot_identity).
struct CatalogSnapshot {
  std::string name;
  std::string snapshot_id;
  std::string snapshot_sha256;
};

struct CompileResult {
  bool ok = false;
  std::string failure_phase;  // "schema", "resolution", ... when !ok
  std::string source_sha256;  // digest of the canonical semantic payload (the form's rule)
  std::string compiled_sha256;
  json::Value plan;        // the compiled plan (null when !ok)
  std::string plan_bytes;  // canonical file bytes of the plan
  diag::Diagnostics diagnostics;
  std::vector<CatalogSnapshot> catalog_snapshots;  // one per catalog read, in request order
};

CompileResult compile(const CompileRequest& request);

// The phase names in order, for reports.
const std::vector<std::string>& phases();

}  // namespace mf::harness
