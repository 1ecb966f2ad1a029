// The custom-tool compiler (docs/custom-tools.md): a source manifest of contract-only tool
// declarations and a compiler policy become a tool catalog (docs/formats/catalog.md) and one
// compilation record per tool, or MF-CT diagnostics and nothing else. Pure: values in, values out.
#pragma once

#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"

namespace mf::tools {

struct CustomToolCompilation {
  // A tool catalog Catalog::from_json accepts, its tools sorted by (tool_id, version).
  json::Value catalog;
  // {schema_version, kind: "millforge_custom_tool_compilation", package_id, package_version,
  // source_sha256, records: [...]}, the records in the catalog's order.
  json::Value report;
};

// Compiles `manifest` under `policy` (both as read by the strict reader). Every fault is one
// diagnostic with an MF-CT code and a pointer into its document; a diagnostic about the policy has
// `source` "policy". Diagnostics are sorted by code, then source, pointer and message. Any fault
// rejects the whole manifest.
Result<CustomToolCompilation> compile_custom_tools(const json::Value& manifest,
                                                   const json::Value& policy);

}  // namespace mf::tools
