// The custom-tool compiler (docs/custom-tools.md): the hazard scan, the readers, then the
// policy's checks on a well-formed manifest, each declaration lowered to its catalog entry and
// compilation record, and the catalog and the report assembled; any fault rejects the manifest.
#include "mf/tools/custom_tools.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "custom_tools_model.hpp"
#include "mf/diag/codes.hpp"
#include "mf/json/canonical.hpp"
#include "mf/tools/catalog.hpp"

namespace mf::tools {

using namespace custom;

namespace {

namespace codes = diag::codes;

// ---- Compilation: the policy's checks on a well-formed manifest.

class Compilation {
 public:
  Compilation(const Manifest& m, const Policy& p) : m_(m), p_(p) {}

  Result<CustomToolCompilation> run() {
    const std::string source_sha = source_sha256(m_);
    if (static_cast<std::int64_t>(m_.tools.size()) > p_.max_tools) {
      bad(codes::kCtSourceMalformed,
          "the manifest declares more tools than the policy's max_tools (" +
              std::to_string(p_.max_tools) + ")",
          "/tools");
    }
    check_hash(m_.expected_source, source_sha, "/expected_source_sha256", "source_sha256");
    shared_artifacts();
    std::vector<std::tuple<std::string, std::int64_t, Value, Value>> lowered;
    for (const Declaration& d : m_.tools) {
      auto entry = lower(d, source_sha);
      if (entry) lowered.push_back(std::move(*entry));
    }
    if (!ds_.empty()) return ds_;
    std::sort(lowered.begin(), lowered.end(), [](const auto& a, const auto& b) {
      return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
    });
    json::Array entries, records;
    for (auto& [id, version, entry, record] : lowered) {
      entries.push_back(std::move(entry));
      records.push_back(std::move(record));
    }
    CustomToolCompilation out;
    out.catalog = catalog_of(std::move(entries));
    if (auto whole = Catalog::from_json(out.catalog); !whole) {
      for (const auto& e : whole.diagnostics()) bad(codes::kCtProjection, e.message, "/tools");
      return ds_;
    }
    out.report = json::Object{
        {"schema_version", "1.0"},     {"kind", "millforge_custom_tool_compilation"},
        {"package_id", m_.package_id}, {"package_version", m_.package_version},
        {"source_sha256", source_sha}, {"records", std::move(records)},
    };
    return out;
  }

 private:
  void bad(const char* code, std::string message, std::string pointer, const char* source = "") {
    ds_.push_back(fault(code, std::move(message), std::move(pointer), source));
  }

  void check_hash(const std::optional<std::string>& expected, const std::string& actual,
                  const std::string& pointer, const char* what) {
    if (expected && *expected != actual) {
      bad(codes::kCtHashMismatch,
          std::string(what) + ": the manifest expects " + *expected + ", the compiler computes " +
              actual,
          pointer);
    } else if (!expected && p_.require_hashes) {
      bad(codes::kCtHashMismatch,
          std::string("the policy requires expected hashes; ") + what + " is not given", pointer);
    }
  }

  // An artifact is produced by one tool only.
  void shared_artifacts() {
    std::map<std::string, std::string> first;
    for (const Declaration& d : m_.tools) {
      for (const std::string& a : d.artifacts) {
        auto [it, fresh] = first.emplace(a, d.tool_id);
        if (!fresh) {
          bad(codes::kCtArtifactPolicy,
              "artifact \"" + a + "\" is produced by " + it->second + " already",
              d.at + "/produced_artifact_ids");
        }
      }
    }
  }

  std::optional<std::tuple<std::string, std::int64_t, Value, Value>> lower(
      const Declaration& d, const std::string& source_sha) {
    const std::size_t before = ds_.size();
    if (d.runtime_kind != "contract_only") {
      bad(codes::kCtRuntimeKind, "the policy allows only runtime kind contract_only",
          d.at + "/runtime_kind");
    }
    if (static_cast<std::int64_t>(d.description.size()) > p_.max_description) {
      bad(codes::kCtSourceMalformed,
          "description is over the policy's max_description_utf8 (" +
              std::to_string(p_.max_description) + " bytes)",
          d.at + "/description");
    }
    for (const auto& [schema, key, code] :
         {std::tuple{&d.input_schema, "input_schema", codes::kCtInputSchema},
          std::tuple{&d.output_schema, "output_schema", codes::kCtOutputSchema}}) {
      const auto size = static_cast<std::int64_t>(json::canonical(*schema).size());
      if (size > p_.max_schema_bytes) {
        bad(code,
            std::string(key) + " is " + std::to_string(size) +
                " bytes, over the policy's max_schema_bytes (" +
                std::to_string(p_.max_schema_bytes) + ")",
            d.at + "/" + key);
      }
    }
    for (std::size_t i = 0; i < d.capabilities.size(); ++i) {
      if (p_.capabilities.count(d.capabilities[i]) == 0) {
        bad(codes::kCtCapabilityUnknown,
            "capability \"" + d.capabilities[i] +
                "\" is not in the policy's allowed_capability_ids",
            d.at + "/required_capabilities");
      }
    }
    const std::string side(name(d.side_effect));
    const auto allowed = p_.matrix.find(side);
    if (allowed == p_.matrix.end() || std::find(allowed->second.begin(), allowed->second.end(),
                                                d.approval) == allowed->second.end()) {
      bad(codes::kCtApprovalPolicy,
          "the policy does not allow approval \"" + d.approval + "\" for a " + side + " tool",
          d.at + "/approval_policy");
    }
    if (!d.artifacts.empty() && d.approval == "none") {
      bad(codes::kCtApprovalPolicy, "a tool that produces artifacts needs explicit approval",
          d.at + "/approval_policy");
    }
    check_hash(d.expected_declaration, declaration_sha256(d), d.at + "/expected_declaration_sha256",
               "declaration_sha256");
    check_hash(d.expected_descriptor, millforge_descriptor_sha256(d),
               d.at + "/expected_descriptor_sha256", "descriptor_sha256");
    Value record = record_body(m_, source_sha, d);
    const std::string record_sha = record_sha256(record);
    check_hash(d.expected_record, record_sha, d.at + "/expected_compilation_record_sha256",
               "compilation_record_sha256");
    // The projection: the entry must be one our catalog reader accepts.
    Value entry = catalog_entry(d);
    auto one = Catalog::from_json(catalog_of(json::Array{entry}));
    if (!one) {
      for (const auto& e : one.diagnostics()) {
        std::string pointer = d.at;
        const std::string prefix = "/tools/0/";
        if (e.pointer.rfind(prefix, 0) == 0) {
          const std::string rest = e.pointer.substr(prefix.size());
          const auto slash = rest.find('/');
          pointer += "/" + manifest_member(rest.substr(0, slash)) +
                     (slash == std::string::npos ? "" : rest.substr(slash));
        }
        bad(codes::kCtProjection, "not representable as a catalog descriptor: " + e.message,
            pointer);
      }
      return std::nullopt;
    }
    if (ds_.size() != before) return std::nullopt;
    record.set("compilation_record_sha256", record_sha);
    record.set("catalog_descriptor_sha256", one->descriptors().begin()->second.descriptor_sha256);
    return std::tuple{d.tool_id, d.version, std::move(entry), std::move(record)};
  }

  const Manifest& m_;
  const Policy& p_;
  diag::Diagnostics ds_;
};

Result<CustomToolCompilation> rejected(diag::Diagnostics ds) {
  std::sort(ds.begin(), ds.end(), [](const diag::Diagnostic& a, const diag::Diagnostic& b) {
    return std::tie(a.code, a.source, a.pointer, a.message) <
           std::tie(b.code, b.source, b.pointer, b.message);
  });
  return ds;
}

}  // namespace

Result<CustomToolCompilation> compile_custom_tools(const json::Value& manifest,
                                                   const json::Value& policy) {
  diag::Diagnostics ds;
  // Hazards first: text that is not a contract stops everything else.
  std::string at;
  scan(manifest, at, "", "", ds);
  at.clear();
  scan(policy, at, "", kPolicySource, ds);
  if (!ds.empty()) return rejected(std::move(ds));
  if (!manifest.is_object())
    ds.push_back(fault(codes::kCtSourceMalformed, "not an object", "", ""));
  if (!policy.is_object()) {
    ds.push_back(fault(codes::kCtSourceMalformed, "not an object", "", kPolicySource));
  }
  if (!ds.empty()) return rejected(std::move(ds));
  auto m = read_manifest(manifest, ds);
  auto p = read_policy(policy, ds);
  if (!m || !p) return rejected(std::move(ds));
  auto out = Compilation(*m, *p).run();
  if (!out) return rejected(out.take_diagnostics());
  return out;
}

}  // namespace mf::tools
