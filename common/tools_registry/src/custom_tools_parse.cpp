// The custom-tool compiler's readers: a source manifest and a compiler policy, already through
// the hazard scan, read into Manifest and Policy with each fault under its MF-CT code and pointer,
// schemas admitted and normalized, and each declaration's own rules checked.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "custom_tools_model.hpp"
#include "mf/diag/codes.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/fields.hpp"
#include "mf/json/pointer.hpp"
#include "mf/schema/schema.hpp"
#include "mf/text/suggest.hpp"

namespace mf::tools::custom {
namespace {

namespace codes = diag::codes;

constexpr std::array kApprovals = {"none", "millrace_explicit", "operator_out_of_band",
                                   "forbidden"};
constexpr std::array kSideEffectNames = {"read_only",         "artifact_write", "workspace_write",
                                         "process_execution", "network_read",   "network_write",
                                         "terminal"};
constexpr std::array kIdempotencyNames = {"idempotent", "idempotent_with_key", "non_idempotent",
                                          "unknown"};

// Field access through json::FieldReader with the faults of each member under its own code.
class Reader {
 public:
  Reader(const Value& object, std::string at, const char* source, diag::Diagnostics& out)
      : object_(object), at_(std::move(at)), source_(source), out_(out) {}

  std::string pointer_of(std::string_view key) const {
    std::string p = at_;
    json::append_token(p, key);
    return p;
  }
  void bad(const char* code, std::string_view key, std::string message) {
    out_.push_back(fault(code, std::move(message), key.empty() ? at_ : pointer_of(key), source_));
  }
  bool present(std::string_view key) const {
    const Value* v = object_.find(key);
    return v != nullptr && !v->is_null();
  }

  // A string of 1..max bytes that is not all whitespace.
  std::optional<std::string> text(std::string_view key, const char* code, bool required,
                                  std::size_t max = kMaxFieldBytes) {
    auto s = with(code, [&](json::FieldReader& r) { return r.string(key, required); });
    if (!s) return s;
    if (trimmed(*s).empty()) {
      bad(code, key, "\"" + std::string(key) + "\" must not be blank");
      return std::nullopt;
    }
    if (s->size() > max) {
      bad(code, key, "\"" + std::string(key) + "\" is over " + std::to_string(max) + " bytes");
      return std::nullopt;
    }
    return s;
  }
  // A string, null or absent (Millforge's optional strings).
  std::optional<std::string> nullable_text(std::string_view key, const char* code) {
    if (!present(key)) return std::nullopt;
    return text(key, code, true);
  }
  std::optional<std::int64_t> integer(std::string_view key, const char* code, bool required,
                                      std::int64_t min, std::int64_t max) {
    auto i = with(code, [&](json::FieldReader& r) { return r.integer(key, required); });
    if (i && (*i < min || *i > max)) {
      bad(code, key,
          "\"" + std::string(key) + "\" must be " + std::to_string(min) + ".." +
              std::to_string(max));
      return std::nullopt;
    }
    return i;
  }
  std::optional<bool> boolean(std::string_view key, const char* code, bool required) {
    return with(code, [&](json::FieldReader& r) { return r.boolean(key, required); });
  }
  const Value* object(std::string_view key, const char* code, bool required) {
    return with(code, [&](json::FieldReader& r) { return r.object(key, required); });
  }
  const Value* array(std::string_view key, const char* code, bool required) {
    return with(code, [&](json::FieldReader& r) { return r.array(key, required); });
  }
  // A string that must be one of `names`.
  template <std::size_t N>
  std::optional<std::string> choice(std::string_view key, const char* code, bool required,
                                    const std::array<const char*, N>& names) {
    auto s = with(code, [&](json::FieldReader& r) { return r.string(key, required); });
    if (s && std::find_if(names.begin(), names.end(), [&](const char* n) { return *s == n; }) ==
                 names.end()) {
      std::string list;
      for (const char* n : names) list += (list.empty() ? "" : ", ") + std::string(n);
      bad(code, key, "\"" + std::string(key) + "\" must be one of " + list);
      return std::nullopt;
    }
    return s;
  }
  std::optional<std::string> sha256(std::string_view key, const char* code) {
    auto s = nullable_text(key, code);
    if (s && !hash::is_hex_digest(*s)) {
      bad(code, key, "\"" + std::string(key) + "\" must be 64 lowercase hex digits");
      return std::nullopt;
    }
    return s;
  }
  // Members not in `known`; each under the code `code_of` gives its name.
  template <class F>
  void reject_unknown(std::initializer_list<std::string_view> known, F&& code_of) {
    for (const auto& m : object_.as_object()) {
      if (std::find(known.begin(), known.end(), m.key) == known.end()) {
        bad(code_of(m.key), m.key,
            "unknown member \"" + m.key + "\"" + text::did_you_mean(m.key, known));
      }
    }
  }

 private:
  // Runs one FieldReader access; its faults take `code` and this reader's source.
  template <class F>
  auto with(const char* code, F&& read) -> decltype(read(std::declval<json::FieldReader&>())) {
    json::FieldReader r(object_, at_);
    auto v = read(r);
    for (auto& d : r.take()) {
      d.code = code;
      d.source = source_;
      out_.push_back(std::move(d));
    }
    return v;
  }

  const Value& object_;
  std::string at_;
  const char* source_;
  diag::Diagnostics& out_;
};

// Unique strings each passing `valid`, sorted; faults under `code`.
std::vector<std::string> read_ids(Reader& r, std::string_view key, const char* code,
                                  bool (*valid)(std::string_view), const char* what,
                                  diag::Diagnostics& out, const char* source) {
  std::vector<std::string> ids;
  const Value* list = r.array(key, code, false);
  if (list == nullptr) return ids;
  for (std::size_t i = 0; i < list->as_array().size(); ++i) {
    const Value& v = list->as_array()[i];
    std::string p = r.pointer_of(key);
    json::append_index(p, i);
    if (!v.is_string() || !valid(v.as_string())) {
      out.push_back(fault(code, std::string("not ") + what, p, source));
    } else if (std::find(ids.begin(), ids.end(), v.as_string()) != ids.end()) {
      out.push_back(fault(code, "\"" + v.as_string() + "\" is listed twice", p, source));
    } else {
      ids.push_back(v.as_string());
    }
  }
  if (ids.size() > kMaxListed) r.bad(code, key, "at most 64 entries");
  std::sort(ids.begin(), ids.end());
  return ids;
}

// An input or output schema: a JSON object in the supported subset, at most 64 KiB canonical.
Value read_schema(Reader& r, std::string_view key, const char* code, bool input,
                  diag::Diagnostics& out) {
  const Value* s = r.object(key, code, true);
  if (s == nullptr) return Value();
  if (Status ok = schema::admit(*s, code, r.pointer_of(key)); !ok) {
    for (const auto& d : ok.diagnostics()) out.push_back(d);
    return Value();
  }
  if (input) {
    const Value* type = s->find("type");
    if (type == nullptr || !type->is_string() || type->as_string() != "object") {
      r.bad(code, key, "input_schema must be an object schema (\"type\": \"object\")");
      return Value();
    }
  }
  Value normalized = schema::normalize(*s);
  if (static_cast<std::int64_t>(json::canonical(normalized).size()) > kMaxSchemaBytes) {
    r.bad(code, key, std::string(key) + " is over 65536 bytes");
    return Value();
  }
  return normalized;
}

bool valid_id(std::string_view s) {
  return valid_dotted_id(s);
}
bool valid_artifact(std::string_view s) {
  return valid_local_id(s);
}

template <class Enum, std::size_t N>
Enum enum_of(const std::array<const char*, N>& names, const std::string& s) {
  for (std::size_t i = 0; i < N; ++i) {
    if (s == names[i]) return static_cast<Enum>(i);
  }
  return static_cast<Enum>(0);
}

std::optional<Declaration> read_declaration(const Value& v, const std::string& at,
                                            diag::Diagnostics& out) {
  if (!v.is_object()) {
    out.push_back(fault(codes::kCtSourceMalformed, "a tool declaration must be an object", at, ""));
    return std::nullopt;
  }
  const std::size_t before = out.size();
  Reader r(v, at, "", out);
  Declaration d;
  d.at = at;
  const char* malformed = codes::kCtSourceMalformed;
  if (auto s = r.text("tool_id", malformed, true)) {
    if (valid_dotted_id(*s)) {
      d.tool_id = *s;
    } else {
      r.bad(malformed, "tool_id", "tool_id must be dotted lowercase ([a-z][a-z0-9_]* joined by .)");
    }
  }
  if (auto i = r.integer("tool_version", malformed, true, 1, kMaxToolVersion)) d.version = *i;
  if (auto s = r.text("implementation_id", malformed, true)) d.implementation_id = *s;
  if (r.present("runtime_kind")) {
    if (auto s = r.choice("runtime_kind", codes::kCtRuntimeKind, true, std::array{"contract_only"}))
      d.runtime_kind = *s;
  }
  if (auto s = r.text("model_tool_name", malformed, true)) d.model_tool_name = *s;
  if (auto s = r.text("description", malformed, true, kMaxDescriptionBytes)) d.description = *s;
  if (auto s = r.choice("description_policy", malformed, true,
                        std::array{"operator_supplied", "source_supplied"}))
    d.description_policy = *s;
  d.input_schema = read_schema(r, "input_schema", codes::kCtInputSchema, true, out);
  d.output_schema = read_schema(r, "output_schema", codes::kCtOutputSchema, false, out);
  d.capabilities = read_ids(r, "required_capabilities", codes::kCtCapabilityMissing, valid_id,
                            "a dotted capability id", out, "");
  d.artifacts = read_ids(r, "produced_artifact_ids", codes::kCtArtifactPolicy, valid_artifact,
                         "an artifact id ([a-z][a-z0-9_]{0,63})", out, "");
  auto side = r.choice("side_effect_class", malformed, true, kSideEffectNames);
  if (side) d.side_effect = enum_of<SideEffect>(kSideEffectNames, *side);
  if (auto s = r.choice("idempotency", malformed, true, kIdempotencyNames))
    d.idempotency = enum_of<Idempotency>(kIdempotencyNames, *s);
  if (const Value* t = r.object("timeout_policy", codes::kCtTimeoutPolicy, true)) {
    Reader tr(*t, r.pointer_of("timeout_policy"), "", out);
    const char* c = codes::kCtTimeoutPolicy;
    if (auto i = tr.integer("timeout_seconds", c, true, 1, kMaxTimeoutSeconds))
      d.timeout_seconds = *i;
    if (auto i = tr.integer("cancellation_grace_seconds", c, true, 1, kMaxGraceSeconds))
      d.grace_seconds = *i;
    tr.reject_unknown({"timeout_seconds", "cancellation_grace_seconds"},
                      [&](std::string_view) { return c; });
  }
  if (const Value* o = r.object("output_policy", codes::kCtOutputPolicy, true)) {
    Reader orr(*o, r.pointer_of("output_policy"), "", out);
    const char* c = codes::kCtOutputPolicy;
    auto max_out = orr.integer("max_output_bytes", c, true, 1, kMaxOutputBytes);
    auto max_sum = orr.integer("max_summary_utf8", c, true, 1, kMaxSummaryBytes);
    if (auto b = orr.boolean("redact_secrets", c, true)) d.redact_secrets = *b;
    orr.reject_unknown({"max_output_bytes", "max_summary_utf8", "redact_secrets"},
                       [&](std::string_view) { return c; });
    if (max_out && max_sum && *max_sum > *max_out) {
      orr.bad(c, "max_summary_utf8", "max_summary_utf8 must not exceed max_output_bytes");
    }
    if (max_out) d.max_output_bytes = *max_out;
    if (max_sum) d.max_summary_utf8 = *max_sum;
  }
  auto approval = r.choice("approval_policy", codes::kCtApprovalPolicy, true, kApprovals);
  if (approval) d.approval = *approval;
  if (r.present("input_policy")) {
    if (auto s = r.choice("input_policy", malformed, true, std::array{"json_schema_exact"}))
      d.input_policy = *s;
  }
  if (r.present("output_contract_policy")) {
    if (auto s =
            r.choice("output_contract_policy", malformed, true, std::array{"json_schema_exact"}))
      d.output_contract_policy = *s;
  }
  if (auto s = r.nullable_text("idempotency_key_policy", malformed)) d.idempotency_key_policy = *s;
  d.expected_declaration = r.sha256("expected_declaration_sha256", malformed);
  d.expected_descriptor = r.sha256("expected_descriptor_sha256", malformed);
  d.expected_record = r.sha256("expected_compilation_record_sha256", malformed);
  r.reject_unknown({"tool_id",
                    "tool_version",
                    "implementation_id",
                    "runtime_kind",
                    "model_tool_name",
                    "description",
                    "description_policy",
                    "input_schema",
                    "output_schema",
                    "required_capabilities",
                    "produced_artifact_ids",
                    "side_effect_class",
                    "idempotency",
                    "timeout_policy",
                    "output_policy",
                    "approval_policy",
                    "input_policy",
                    "output_contract_policy",
                    "idempotency_key_policy",
                    "expected_declaration_sha256",
                    "expected_descriptor_sha256",
                    "expected_compilation_record_sha256"},
                   [](std::string_view) { return codes::kCtSourceMalformed; });
  // The declaration's own rules, on members that read well.
  const bool writes = side && *side != "read_only";
  if (approval && *approval == "forbidden") {
    r.bad(codes::kCtForbiddenTool, "approval_policy",
          "approval_policy \"forbidden\" is denial evidence; a forbidden tool is never compiled");
  } else if (approval && writes && *approval == "none") {
    r.bad(codes::kCtApprovalPolicy, "approval_policy",
          "a " + *side + " tool needs approval millrace_explicit or operator_out_of_band");
  }
  if (side && (writes || !d.artifacts.empty()) && d.capabilities.empty() &&
      (v.find("required_capabilities") == nullptr || v.find("required_capabilities")->is_array())) {
    r.bad(codes::kCtCapabilityMissing, "required_capabilities",
          "a tool that has side effects or produces artifacts must require capabilities");
  }
  if (out.size() != before) return std::nullopt;
  return d;
}

}  // namespace

std::optional<Manifest> read_manifest(const Value& doc, diag::Diagnostics& out) {
  const std::size_t before = out.size();
  Reader r(doc, "", "", out);
  const char* malformed = codes::kCtSourceMalformed;
  Manifest m;
  if (r.present("schema_version"))
    r.choice("schema_version", malformed, true, std::array{kSourceSchema});
  if (r.present("kind")) r.choice("kind", malformed, true, std::array{kSourceKind});
  if (r.present("version")) r.choice("version", malformed, true, std::array{"1.0"});
  if (auto s = r.text("package_id", malformed, true, kMaxPackageIdBytes)) m.package_id = *s;
  if (auto i = r.integer("package_version", malformed, true, 1, INT64_MAX)) m.package_version = *i;
  if (auto s = r.nullable_text("source_name", malformed)) m.source_name = *s;
  if (auto s = r.text("created_at", malformed, true)) {
    // An explicit UTC time: YYYY-MM-DDTHH:MM:SS[.fraction]Z.
    const std::string& t = *s;
    bool ok = t.size() >= 20 && t.back() == 'Z';
    for (std::size_t i = 0; ok && i < 19; ++i) {
      const char want = "0000-00-00T00:00:00"[i];
      ok = want == '0' ? (t[i] >= '0' && t[i] <= '9') : t[i] == want || (i == 10 && t[i] == ' ');
    }
    if (ok && t.size() > 20) {
      ok = t[19] == '.' && t.size() > 21 &&
           std::all_of(t.begin() + 20, t.end() - 1, [](char c) { return c >= '0' && c <= '9'; });
    }
    if (ok) {
      const int month = std::stoi(t.substr(5, 2));
      const int day = std::stoi(t.substr(8, 2));
      ok = month >= 1 && month <= 12 && day >= 1 && day <= 31 && std::stoi(t.substr(11, 2)) < 24 &&
           std::stoi(t.substr(14, 2)) < 60 && std::stoi(t.substr(17, 2)) < 60;
    }
    if (!ok) r.bad(malformed, "created_at", "created_at must be an ISO 8601 UTC time ending in Z");
  }
  if (const Value* meta = r.object("policy_metadata", malformed, false)) m.policy_metadata = *meta;
  m.expected_source = r.sha256("expected_source_sha256", malformed);
  if (const Value* tools = r.array("tools", malformed, true)) {
    const auto& list = tools->as_array();
    if (list.empty()) r.bad(malformed, "tools", "tools must hold at least one declaration");
    if (static_cast<std::int64_t>(list.size()) > kMaxTools) {
      r.bad(malformed, "tools", "tools holds more than 128 declarations");
    } else {
      for (std::size_t i = 0; i < list.size(); ++i) {
        std::string at = "/tools";
        json::append_index(at, i);
        if (auto d = read_declaration(list[i], at, out)) m.tools.push_back(std::move(*d));
      }
    }
  }
  r.reject_unknown(
      {"schema_version", "kind", "version", "package_id", "package_version", "source_name",
       "created_at", "tools", "policy_metadata", "expected_source_sha256"},
      [](std::string_view) { return codes::kCtSourceMalformed; });
  // One tool per identity, model name and implementation; the later one is refused.
  std::map<std::string, std::string> seen_ref, seen_name, seen_impl;
  for (const Declaration& d : m.tools) {
    const auto once = [&](std::map<std::string, std::string>& seen, const std::string& key,
                          const char* code, const char* member, const char* what) {
      auto [it, fresh] = seen.emplace(key, d.at);
      if (!fresh) {
        out.push_back(fault(
            code, std::string(what) + " \"" + key + "\" is declared by " + it->second + " already",
            d.at + "/" + member, ""));
      }
    };
    once(seen_ref, d.tool_id + "@" + std::to_string(d.version), codes::kCtDuplicateTool, "tool_id",
         "tool");
    once(seen_name, d.model_tool_name, codes::kCtDuplicateModelName, "model_tool_name",
         "model_tool_name");
    once(seen_impl, d.implementation_id, codes::kCtDuplicateImplementation, "implementation_id",
         "implementation_id");
  }
  if (out.size() != before) return std::nullopt;
  return m;
}

std::optional<Policy> read_policy(const Value& doc, diag::Diagnostics& out) {
  const std::size_t before = out.size();
  Reader r(doc, "", kPolicySource, out);
  const char* malformed = codes::kCtSourceMalformed;
  Policy p;
  if (const Value* caps = r.array("allowed_capability_ids", malformed, true)) {
    for (std::size_t i = 0; i < caps->as_array().size(); ++i) {
      const Value& c = caps->as_array()[i];
      std::string at = "/allowed_capability_ids";
      json::append_index(at, i);
      if (!c.is_string() || !valid_dotted_id(c.as_string())) {
        out.push_back(fault(malformed, "not a dotted capability id", at, kPolicySource));
      } else if (!p.capabilities.insert(c.as_string()).second) {
        out.push_back(
            fault(malformed, "\"" + c.as_string() + "\" is listed twice", at, kPolicySource));
      }
    }
  }
  if (const Value* kinds = r.array("allowed_runtime_kinds", malformed, false)) {
    if (!(kinds->as_array().size() == 1 && kinds->as_array()[0] == Value("contract_only"))) {
      r.bad(malformed, "allowed_runtime_kinds",
            "allowed_runtime_kinds must be [\"contract_only\"]");
    }
  }
  if (auto i = r.integer("max_tools", malformed, false, 1, kMaxTools)) p.max_tools = *i;
  if (auto i = r.integer("max_schema_bytes", malformed, false, 1, INT64_MAX))
    p.max_schema_bytes = *i;
  if (auto i = r.integer("max_description_utf8", malformed, false, 1,
                         static_cast<std::int64_t>(kMaxDescriptionBytes)))
    p.max_description = *i;
  if (auto b = r.boolean("require_expected_hashes", malformed, false)) p.require_hashes = *b;
  if (const Value* matrix = r.object("side_effect_approval_matrix", malformed, false)) {
    p.matrix.clear();
    for (const auto& m : matrix->as_object()) {
      std::string at = "/side_effect_approval_matrix";
      json::append_token(at, m.key);
      if (std::find_if(kSideEffectNames.begin(), kSideEffectNames.end(),
                       [&](const char* n) { return m.key == n; }) == kSideEffectNames.end()) {
        out.push_back(
            fault(malformed, "\"" + m.key + "\" is not a side-effect class", at, kPolicySource));
        continue;
      }
      if (!m.value.is_array()) {
        out.push_back(
            fault(malformed, "an array of approval policies is expected", at, kPolicySource));
        continue;
      }
      std::vector<std::string> allowed;
      for (std::size_t i = 0; i < m.value.as_array().size(); ++i) {
        const Value& a = m.value.as_array()[i];
        std::string ap = at;
        json::append_index(ap, i);
        if (!a.is_string() ||
            std::find_if(kApprovals.begin(), kApprovals.end(),
                         [&](const char* n) { return a.as_string() == n; }) == kApprovals.end()) {
          out.push_back(fault(malformed, "not an approval policy", ap, kPolicySource));
        } else if (a.as_string() == "forbidden") {
          out.push_back(fault(codes::kCtForbiddenTool,
                              "\"forbidden\" is denial evidence and never allows a tool", ap,
                              kPolicySource));
        } else if (a.as_string() == "none" && m.key != "read_only") {
          out.push_back(fault(codes::kCtApprovalPolicy,
                              "a " + m.key + " tool cannot be allowed approval \"none\"", ap,
                              kPolicySource));
        } else {
          allowed.push_back(a.as_string());
        }
      }
      p.matrix[m.key] = std::move(allowed);
    }
  }
  r.reject_unknown(
      {"allowed_capability_ids", "allowed_runtime_kinds", "max_tools", "max_schema_bytes",
       "max_description_utf8", "require_expected_hashes", "side_effect_approval_matrix"},
      [](std::string_view) { return codes::kCtSourceMalformed; });
  if (out.size() != before) return std::nullopt;
  return p;
}

}  // namespace mf::tools::custom
