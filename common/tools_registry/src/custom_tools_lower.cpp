// The custom-tool compiler's lowering: Millforge's digests of a declaration, a source and a
// descriptor, the compilation record, and the catalog entry a declaration projects to.
#include <algorithm>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "custom_tools_model.hpp"
#include "mf/json/millforge_form.hpp"

namespace mf::tools::custom {
namespace {

// ---- Digests, by Millforge's rules (the Millforge form of its hash payloads). The schemas are
// ours, admitted and normalized; they equal Millforge's for schemas without annotations.

json::Array strings(const std::vector<std::string>& v) {
  return json::Array(v.begin(), v.end());
}
Value timeout_json(const Declaration& d) {
  return json::Object{{"timeout_seconds", d.timeout_seconds},
                      {"cancellation_grace_seconds", d.grace_seconds}};
}
Value output_json(const Declaration& d) {
  return json::Object{{"max_output_bytes", d.max_output_bytes},
                      {"max_summary_utf8", d.max_summary_utf8},
                      {"redact_secrets", d.redact_secrets}};
}

}  // namespace

std::string declaration_sha256(const Declaration& d) {
  return json::millforge_digest(json::Object{
      {"kind", "millforge.custom_tool.declaration.v1"},
      {"tool_id", d.tool_id},
      {"tool_version", d.version},
      {"implementation_id", d.implementation_id},
      {"runtime_kind", d.runtime_kind},
      {"model_tool_name", d.model_tool_name},
      {"description", d.description},
      {"description_policy", d.description_policy},
      {"input_schema", d.input_schema},
      {"output_schema", d.output_schema},
      {"required_capabilities", strings(d.capabilities)},
      {"produced_artifact_ids", strings(d.artifacts)},
      {"side_effect_class", name(d.side_effect)},
      {"idempotency", name(d.idempotency)},
      {"timeout_policy", timeout_json(d)},
      {"output_policy", output_json(d)},
      {"approval_policy", d.approval},
      {"input_policy", d.input_policy},
      {"output_contract_policy", d.output_contract_policy},
      {"idempotency_key_policy", d.idempotency_key_policy},
  });
}

std::string source_sha256(const Manifest& m) {
  std::vector<const Declaration*> order;
  for (const auto& d : m.tools) order.push_back(&d);
  std::sort(order.begin(), order.end(), [](const Declaration* a, const Declaration* b) {
    return std::tie(a->tool_id, a->version) < std::tie(b->tool_id, b->version);
  });
  json::Array tools;
  for (const Declaration* d : order) {
    tools.push_back(json::Object{{"tool_id", d->tool_id},
                                 {"tool_version", d->version},
                                 {"declaration_sha256", declaration_sha256(*d)}});
  }
  return json::millforge_digest(json::Object{
      {"kind", "millforge.custom_tool.source.v1"},
      {"schema_version", kSourceSchema},
      {"source_kind", kSourceKind},
      {"version", "1.0"},
      {"package_id", m.package_id},
      {"package_version", m.package_version},
      {"source_name", m.source_name},
      {"tools", std::move(tools)},
      {"policy_metadata", m.policy_metadata},
  });
}

// Millforge's registry digest of the descriptor it would build from the declaration.
std::string millforge_descriptor_sha256(const Declaration& d) {
  return json::millforge_digest(json::Object{
      {"schema_version", 1},
      {"kind", "millforge.tool_descriptor.v1"},
      {"tool_id", d.tool_id},
      {"tool_version", d.version},
      {"implementation_id", d.implementation_id},
      {"model_tool_name", d.model_tool_name},
      {"description", d.description},
      {"input_schema", d.input_schema},
      {"output_schema", d.output_schema},
      {"required_capabilities", strings(d.capabilities)},
      {"produced_artifact_ids", strings(d.artifacts)},
      {"side_effect_class", name(d.side_effect)},
      {"idempotency", name(d.idempotency)},
      {"timeout_policy", timeout_json(d)},
      {"output_policy", output_json(d)},
  });
}

// The record, without its own digest; `catalog_sha256` is ours and not part of the digest.
Value record_body(const Manifest& m, const std::string& source_sha, const Declaration& d) {
  return json::Object{
      {"package_id", m.package_id},
      {"package_version", m.package_version},
      {"source_sha256", source_sha},
      {"tool_id", d.tool_id},
      {"tool_version", d.version},
      {"implementation_id", d.implementation_id},
      {"runtime_kind", d.runtime_kind},
      {"model_tool_name", d.model_tool_name},
      {"declaration_sha256", declaration_sha256(d)},
      {"input_schema_sha256", json::millforge_digest(d.input_schema)},
      {"output_schema_sha256", json::millforge_digest(d.output_schema)},
      {"descriptor_sha256", millforge_descriptor_sha256(d)},
      {"required_capabilities", strings(d.capabilities)},
      {"produced_artifact_ids", strings(d.artifacts)},
      {"side_effect_class", name(d.side_effect)},
      {"idempotency", name(d.idempotency)},
      {"timeout_policy", timeout_json(d)},
      {"output_policy", output_json(d)},
      {"approval_policy", d.approval},
  };
}

std::string record_sha256(Value body) {
  body.set("kind", "millforge.custom_tool.compilation_record.v1");
  return json::millforge_digest(body);
}

// ---- The catalog entry a declaration projects to (docs/formats/catalog.md).

Value catalog_entry(const Declaration& d) {
  Value e = json::Object{
      {"tool_id", d.tool_id},
      {"version", d.version},
      {"model_tool_name", d.model_tool_name},
      {"description", d.description},
      {"input_schema", d.input_schema},
      {"output_schema", d.output_schema},
      {"required_capabilities", strings(d.capabilities)},
      {"side_effect_class", name(d.side_effect)},
      {"idempotency", name(d.idempotency)},
      {"timeout_ms", d.timeout_seconds * 1000},
      {"output_policy", json::Object{{"max_output_bytes", d.max_output_bytes},
                                     {"max_summary_bytes", d.max_summary_utf8},
                                     {"redact_secrets", d.redact_secrets}}},
      {"implementation_id", d.implementation_id},
  };
  // Millforge's descriptors produce only the artifacts they list; the catalog's default for a
  // writing tool would be any artifact, so a writing tool always states its list.
  if (!d.artifacts.empty() || d.side_effect != SideEffect::ReadOnly) {
    e.set("produced_artifact_ids", strings(d.artifacts));
  }
  return e;
}

Value catalog_of(json::Array entries) {
  return json::Object{
      {"schema_version", "1.0"}, {"kind", "millforge_tool_catalog"}, {"tools", std::move(entries)}};
}

// The manifest member a catalog member comes from.
std::string manifest_member(std::string_view catalog_member) {
  if (catalog_member == "version") return "tool_version";
  if (catalog_member == "timeout_ms") return "timeout_policy";
  return std::string(catalog_member);
}

}  // namespace mf::tools::custom
