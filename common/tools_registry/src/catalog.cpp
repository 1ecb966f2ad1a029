// Tool catalogs (catalog.hpp): descriptors read and checked, digests computed by the registry, and
// exact (tool_id, version) lookup.
#include "mf/tools/catalog.hpp"

#include <algorithm>
#include <array>
#include <tuple>

#include "mf/diag/codes.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/fields.hpp"
#include "mf/json/millforge_form.hpp"
#include "mf/json/pointer.hpp"
#include "mf/schema/schema.hpp"

namespace mf::tools {
namespace {

namespace codes = diag::codes;

constexpr std::array kSideEffects = {"read_only",         "artifact_write", "workspace_write",
                                     "process_execution", "network_read",   "network_write",
                                     "terminal"};
constexpr std::array kIdempotency = {"idempotent", "idempotent_with_key", "non_idempotent",
                                     "unknown"};

constexpr std::int64_t kMaxVersion = 2147483647;
constexpr std::int64_t kMaxTimeoutMs = 86400000;
constexpr std::int64_t kMaxOutputBytes = 64 << 20;
constexpr std::size_t kMaxDescription = 8 << 10;
constexpr std::size_t kMaxCapabilities = 64;
constexpr const char* kSnapshotKind = "millforge_catalog_snapshot";

template <class Enum, std::size_t N>
bool parse_enum(const std::array<const char*, N>& names, std::string_view s, Enum& out) {
  for (std::size_t i = 0; i < N; ++i) {
    if (s == names[i]) {
      out = static_cast<Enum>(i);
      return true;
    }
  }
  return false;
}

std::string join(const auto& names) {
  std::string out;
  for (const char* n : names) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

// Reads one descriptor; every problem is MF-R004 except schema subset faults (MF-R007).
namespace {

// Collects the faults of one catalog entry that its FieldReader does not raise itself.
struct EntryFaults {
  const json::FieldReader& f;
  diag::Diagnostics list;
  void bad(std::string_view key, std::string msg) {
    list.push_back(diag::error(codes::kMalformedDescriptor, std::move(msg), f.pointer_of(key)));
  }
};

// input_schema (required, an object schema) and output_schema (default: anything).
void read_schemas(json::FieldReader& f, ToolDescriptor& d, EntryFaults& faults) {
  auto& extra = faults.list;
  auto bad = [&](std::string_view key, std::string msg) { faults.bad(key, std::move(msg)); };
  if (const json::Value* s = f.optional("input_schema")) {
    if (Status ok = schema::admit(*s, codes::kUnsupportedSchema, f.pointer_of("input_schema"));
        !ok) {
      for (const auto& e : ok.diagnostics()) extra.push_back(e);
    } else {
      const json::Value* type = s->is_object() ? s->find("type") : nullptr;
      if (type == nullptr || !type->is_string() || type->as_string() != "object") {
        extra.push_back(diag::error(codes::kUnsupportedSchema,
                                    "input_schema must be an object schema (\"type\": \"object\")",
                                    f.pointer_of("input_schema")));
      }
      d.input_schema = schema::normalize(*s);
    }
  } else {
    bad("input_schema", "missing required field \"input_schema\"");
  }
  d.output_schema = true;
  if (const json::Value* s = f.optional("output_schema")) {
    if (Status ok = schema::admit(*s, codes::kUnsupportedSchema, f.pointer_of("output_schema"));
        !ok) {
      for (const auto& e : ok.diagnostics()) extra.push_back(e);
    } else {
      d.output_schema = schema::normalize(*s);
    }
  }
}

void read_capabilities(json::FieldReader& f, ToolDescriptor& d, EntryFaults& faults) {
  auto& extra = faults.list;
  auto bad = [&](std::string_view key, std::string msg) { faults.bad(key, std::move(msg)); };
  if (const json::Value* caps = f.array("required_capabilities", false)) {
    for (std::size_t i = 0; i < caps->as_array().size(); ++i) {
      const json::Value& c = caps->as_array()[i];
      std::string p = f.pointer_of("required_capabilities");
      json::append_index(p, i);
      if (!c.is_string() || !valid_dotted_id(c.as_string())) {
        extra.push_back(
            diag::error(codes::kMalformedDescriptor, "a capability must be a dotted id", p));
      } else if (std::find(d.required_capabilities.begin(), d.required_capabilities.end(),
                           c.as_string()) != d.required_capabilities.end()) {
        extra.push_back(diag::error(codes::kMalformedDescriptor,
                                    "capability \"" + c.as_string() + "\" listed twice", p));
      } else {
        d.required_capabilities.push_back(c.as_string());
      }
    }
    if (d.required_capabilities.size() > kMaxCapabilities) {
      bad("required_capabilities", "at most 64 capabilities");
    }
    std::sort(d.required_capabilities.begin(), d.required_capabilities.end());
  }
}

void read_output_policy(json::FieldReader& f, ToolDescriptor& d, EntryFaults& faults) {
  auto& extra = faults.list;
  auto bad = [&](std::string_view key, std::string msg) { faults.bad(key, std::move(msg)); };
  if (const json::Value* o = f.object("output_policy", false)) {
    json::FieldReader p(*o, f.pointer_of("output_policy"));
    if (auto i = p.integer("max_output_bytes")) d.output_policy.max_output_bytes = *i;
    if (auto i = p.integer("max_summary_bytes")) d.output_policy.max_summary_bytes = *i;
    if (auto b = p.boolean("redact_secrets")) d.output_policy.redact_secrets = *b;
    p.reject_unknown({"max_output_bytes", "max_summary_bytes", "redact_secrets"});
    const auto& op = d.output_policy;
    if (p.ok() && (op.max_output_bytes < 1 || op.max_output_bytes > kMaxOutputBytes ||
                   op.max_summary_bytes < 1 || op.max_summary_bytes > op.max_output_bytes)) {
      bad("output_policy",
          "output_policy needs 1 <= max_summary_bytes <= max_output_bytes <= 64 MiB");
    }
    for (auto& e : p.take()) {
      e.code = codes::kMalformedDescriptor;
      extra.push_back(std::move(e));
    }
  }
}

// The artifacts a tool's nodes may produce: unique artifact ids, stored sorted.
void read_produced(json::FieldReader& f, ToolDescriptor& d, EntryFaults& faults) {
  const json::Value* ids = f.array("produced_artifact_ids", false);
  if (ids == nullptr) return;
  std::vector<std::string> out;
  for (std::size_t i = 0; i < ids->as_array().size(); ++i) {
    const json::Value& a = ids->as_array()[i];
    std::string p = f.pointer_of("produced_artifact_ids");
    json::append_index(p, i);
    if (!a.is_string() || !valid_local_id(a.as_string())) {
      faults.list.push_back(diag::error(codes::kMalformedDescriptor,
                                        "an artifact id must match [a-z][a-z0-9_]{0,63}", p));
    } else if (std::find(out.begin(), out.end(), a.as_string()) != out.end()) {
      faults.list.push_back(diag::error(codes::kMalformedDescriptor,
                                        "artifact \"" + a.as_string() + "\" listed twice", p));
    } else {
      out.push_back(a.as_string());
    }
  }
  if (out.size() > kMaxCapabilities) faults.bad("produced_artifact_ids", "at most 64 artifacts");
  std::sort(out.begin(), out.end());
  d.produced_artifact_ids = std::move(out);
}

bool sha256_hex(const json::Value* v) {
  return v != nullptr && v->is_string() && hash::is_hex_digest(v->as_string());
}

// The pins of a connector tool. Their meaning is the MCP layer's; here only their shape.
void read_connector(const json::Value& c, const std::string& at, EntryFaults& faults) {
  json::FieldReader r(c, at);
  auto id = r.string("connector_id");
  auto name = r.string("provider_tool_name");
  for (const char* key : {"server_name", "server_version", "protocol_version"}) r.string(key);
  const json::Value* server = r.object("server");
  const json::Value* members = r.object("provider_member_sha256", false);
  const json::Value* soft = r.array("soft_errors", false);
  r.reject_unknown({"connector_id", "provider_tool_name", "provider_sha256",
                    "provider_member_sha256", "server", "server_name", "server_version",
                    "protocol_version", "snapshot_sha256", "soft_errors"});
  auto ds = r.take();
  if (soft != nullptr && !soft_errors_ok(*soft)) {
    ds.push_back(diag::error(codes::kMalformedDescriptor, kSoftErrorsRule, at + "/soft_errors"));
  }
  if (members != nullptr) {
    static constexpr std::array<std::string_view, 6> kMembers = {
        "annotations", "description", "inputSchema", "name", "outputSchema", "title"};
    for (const auto& m : members->as_object()) {
      if (std::find(kMembers.begin(), kMembers.end(), m.key) == kMembers.end() ||
          !sha256_hex(&m.value)) {
        ds.push_back(diag::error(codes::kMalformedDescriptor,
                                 "provider_member_sha256 maps a tool's digested members to 64 "
                                 "lowercase hex digits",
                                 at + "/provider_member_sha256"));
        break;
      }
    }
  }
  if (id && !valid_dotted_id(*id)) {
    ds.push_back(diag::error(codes::kMalformedDescriptor, "connector_id must be dotted lowercase",
                             at + "/connector_id"));
  }
  if (name && (name->empty() || name->size() > 128)) {
    ds.push_back(diag::error(codes::kMalformedDescriptor, "provider_tool_name must be 1..128 bytes",
                             at + "/provider_tool_name"));
  }
  for (const char* key : {"provider_sha256", "snapshot_sha256"}) {
    if (!sha256_hex(c.find(key))) {
      ds.push_back(diag::error(codes::kMalformedDescriptor,
                               std::string(key) + " must be 64 lowercase hex digits",
                               at + "/" + key));
    }
  }
  if (server != nullptr) {
    const json::Value* t = server->find("transport");
    const json::Value* cmd = server->find("command");
    const json::Value* url = server->find("url");
    const json::Value* env = server->find("env");
    const auto strings = [](const json::Value* a) {
      return a != nullptr && a->is_array() && !a->as_array().empty() &&
             std::all_of(a->as_array().begin(), a->as_array().end(),
                         [](const json::Value& s) { return s.is_string(); });
    };
    const bool stdio = t != nullptr && t->is_string() && t->as_string() == "stdio" &&
                       strings(cmd) && (env == nullptr || strings(env)) &&
                       server->as_object().size() == (env == nullptr ? 2U : 3U);
    const json::Value* bearer = server->find("bearer_env");
    const bool http = t != nullptr && t->is_string() && t->as_string() == "http" &&
                      url != nullptr && url->is_string() && !url->as_string().empty() &&
                      (bearer == nullptr || bearer->is_string()) &&
                      server->as_object().size() == (bearer == nullptr ? 2U : 3U);
    if (!(stdio || http)) {
      ds.push_back(diag::error(codes::kMalformedDescriptor,
                               "server must be {\"transport\":\"stdio\",\"command\":[strings]"
                               "[,\"env\":[names]]} or {\"transport\":\"http\",\"url\":string"
                               "[,\"bearer_env\":name]}",
                               at + "/server"));
    }
  }
  for (auto& e : ds) {
    e.code = codes::kMalformedDescriptor;
    faults.list.push_back(std::move(e));
  }
}

}  // namespace

// The two entry shapes: ours, and a Millforge snapshot's (tool_version instead of version, the
// descriptor_sha256 and output_schema it always states, no timeout, output policy or connector).
enum class Shape : std::uint8_t { Native, MillforgeSnapshot };

Result<ToolDescriptor> read_descriptor(const json::Value& v, const std::string& at, Shape shape) {
  if (!v.is_object()) {
    return diag::error(codes::kMalformedDescriptor, "a catalog entry must be an object", at);
  }
  const bool snapshot = shape == Shape::MillforgeSnapshot;
  const char* version_key = snapshot ? "tool_version" : "version";
  json::FieldReader f(v, at);
  ToolDescriptor d;
  EntryFaults faults{f, {}};
  auto bad = [&](std::string_view key, std::string msg) { faults.bad(key, std::move(msg)); };
  if (auto s = f.string("tool_id")) {
    d.tool_id = *s;
    if (!valid_dotted_id(d.tool_id)) bad("tool_id", "tool_id must be dotted lowercase");
  }
  if (auto i = f.integer(version_key)) {
    d.version = *i;
    if (d.version < 1 || d.version > kMaxVersion) {
      bad(version_key, std::string(version_key) + " must be 1..2^31-1");
    }
  }
  if (auto s = f.string("model_tool_name")) {
    d.model_tool_name = *s;
    if (!valid_model_tool_name(d.model_tool_name)) {
      bad("model_tool_name", "model_tool_name must match [A-Za-z][A-Za-z0-9_-]{0,63}");
    }
  }
  if (auto s = f.string("description")) {
    d.description = *s;
    if (d.description.empty() || d.description.size() > kMaxDescription) {
      bad("description", "description must be 1..8192 bytes");
    }
  }
  read_schemas(f, d, faults);
  if (snapshot && v.find("output_schema") == nullptr) {
    bad("output_schema", "missing required field \"output_schema\"");
  }
  read_capabilities(f, d, faults);
  read_produced(f, d, faults);
  if (auto s = f.string("side_effect_class")) {
    if (!parse_enum(kSideEffects, *s, d.side_effect_class)) {
      bad("side_effect_class", "side_effect_class must be one of " + join(kSideEffects));
    }
  }
  if (auto s = f.string("idempotency")) {
    if (!parse_enum(kIdempotency, *s, d.idempotency)) {
      bad("idempotency", "idempotency must be one of " + join(kIdempotency));
    }
  }
  if (auto i = f.integer("timeout_ms", false)) {
    d.timeout_ms = *i;
    if (d.timeout_ms < 1 || d.timeout_ms > kMaxTimeoutMs) {
      bad("timeout_ms", "timeout_ms must be 1..86400000");
    }
  }
  read_output_policy(f, d, faults);
  d.implementation_id = "impl." + d.tool_id + ".v" + std::to_string(d.version);
  if (auto s = f.string("implementation_id", false)) {
    d.implementation_id = *s;
    if (!valid_dotted_id(d.implementation_id)) {
      bad("implementation_id", "implementation_id must be dotted lowercase");
    }
  }
  if (const json::Value* c = f.object("connector", false)) {
    read_connector(*c, f.pointer_of("connector"), faults);
    d.connector = *c;
  }
  auto claimed = f.string("descriptor_sha256", snapshot);
  if (snapshot) {
    if (claimed && !sha256_hex(v.find("descriptor_sha256"))) {
      bad("descriptor_sha256", "descriptor_sha256 must be 64 lowercase hex digits");
    }
    f.reject_unknown({"tool_id", "tool_version", "implementation_id", "descriptor_sha256",
                      "model_tool_name", "description", "input_schema", "output_schema",
                      "side_effect_class", "idempotency", "required_capabilities",
                      "produced_artifact_ids"});
  } else {
    f.reject_unknown({"tool_id", "version", "model_tool_name", "description", "input_schema",
                      "output_schema", "required_capabilities", "produced_artifact_ids",
                      "side_effect_class", "idempotency", "timeout_ms", "output_policy",
                      "implementation_id", "connector", "descriptor_sha256"});
  }
  diag::Diagnostics ds = f.take();
  for (auto& e : ds) e.code = codes::kMalformedDescriptor;  // one family for catalog entries
  for (auto& e : faults.list) ds.push_back(std::move(e));
  if (!ds.empty()) return ds;
  if (snapshot && !d.produced_artifact_ids)
    d.produced_artifact_ids.emplace();  // Millforge's default
  d.descriptor_sha256 = json::canonical_digest(to_json(d));
  if (snapshot) {
    // The snapshot's own digest rule is its provider's; the digest is pinned as stated.
    d.snapshot = ToolDescriptor::SnapshotPins{*claimed, *v.find("input_schema")};
    return d;
  }
  if (claimed && *claimed != d.descriptor_sha256) {
    return diag::error(codes::kCatalogIdentity,
                       "descriptor_sha256 of " + d.ref() + " claims " + *claimed +
                           " but the descriptor hashes to " + d.descriptor_sha256,
                       f.pointer_of("descriptor_sha256"));
  }
  return d;
}

}  // namespace

std::string_view name(SideEffect s) {
  return kSideEffects[static_cast<std::size_t>(s)];
}
std::string_view name(Idempotency i) {
  return kIdempotency[static_cast<std::size_t>(i)];
}

bool valid_dotted_id(std::string_view s) {
  if (s.empty() || s.size() > 128) return false;
  bool segment_start = true;
  for (char c : s) {
    if (c == '.') {
      if (segment_start) return false;
      segment_start = true;
      continue;
    }
    const bool lower = c >= 'a' && c <= 'z';
    if (segment_start && !lower) return false;
    if (!lower && !(c >= '0' && c <= '9') && c != '_') return false;
    segment_start = false;
  }
  return !segment_start;
}

bool valid_local_id(std::string_view s) {
  if (s.empty() || s.size() > 64 || s[0] < 'a' || s[0] > 'z') return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

bool ToolDescriptor::may_produce(std::string_view artifact_id) const {
  if (produced_artifact_ids) {
    return std::find(produced_artifact_ids->begin(), produced_artifact_ids->end(), artifact_id) !=
           produced_artifact_ids->end();
  }
  return side_effect_class != SideEffect::ReadOnly && side_effect_class != SideEffect::Terminal;
}

bool valid_model_tool_name(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (!alpha(s[0])) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) {
    return alpha(c) || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

json::Value to_json(const ToolDescriptor& d) {
  json::Array caps(d.required_capabilities.begin(), d.required_capabilities.end());
  json::Value v = json::Object{
      {"tool_id", d.tool_id},
      {"version", d.version},
      {"model_tool_name", d.model_tool_name},
      {"description", d.description},
      {"input_schema", d.input_schema},
      {"output_schema", d.output_schema},
      {"required_capabilities", std::move(caps)},
      {"side_effect_class", name(d.side_effect_class)},
      {"idempotency", name(d.idempotency)},
      {"timeout_ms", d.timeout_ms},
      {"output_policy", json::Object{{"max_output_bytes", d.output_policy.max_output_bytes},
                                     {"max_summary_bytes", d.output_policy.max_summary_bytes},
                                     {"redact_secrets", d.output_policy.redact_secrets}}},
      {"implementation_id", d.implementation_id},
  };
  if (!d.connector.is_null()) v.set("connector", d.connector);
  if (d.produced_artifact_ids) {
    v.set("produced_artifact_ids",
          json::Array(d.produced_artifact_ids->begin(), d.produced_artifact_ids->end()));
  }
  return v;
}

Result<Catalog> Catalog::from_json(const json::Value& doc) {
  json::FieldReader f(doc, "");
  diag::Diagnostics ds;
  auto version = f.string("schema_version");
  auto kind = f.string("kind");
  const json::Value* tools = f.array("tools");
  const bool snapshot = kind && *kind == kSnapshotKind;
  if (snapshot) {
    f.string("snapshot_id");
    f.string("snapshot_sha256");
    f.reject_unknown({"schema_version", "kind", "snapshot_id", "snapshot_sha256", "tools"});
  } else {
    f.reject_unknown({"schema_version", "kind", "tools"});
  }
  if (version && *version != "1.0") {
    f.add(diag::error(codes::kSchema, "schema_version must be \"1.0\"", "/schema_version"));
  }
  if (kind && *kind != "millforge_tool_catalog" && !snapshot) {
    f.add(diag::error(
        codes::kSchema,
        "kind must be \"millforge_tool_catalog\" or \"" + std::string(kSnapshotKind) + "\"",
        "/kind"));
  }
  ds = f.take();
  for (auto& e : ds) e.code = codes::kMalformedDescriptor;
  SnapshotIdentity stated;
  if (snapshot) {
    for (const char* key : {"snapshot_id", "snapshot_sha256"}) {
      const json::Value* m = doc.find(key);
      if (m == nullptr || !m->is_string()) continue;  // reported above
      if (!sha256_hex(m)) {
        ds.push_back(diag::error(codes::kSnapshotMetadata,
                                 std::string(key) + " must be 64 lowercase hex digits",
                                 std::string("/") + key));
      }
    }
    if (ds.empty())
      stated = {doc.find("snapshot_id")->as_string(), doc.find("snapshot_sha256")->as_string()};
  }
  Catalog catalog;
  if (tools != nullptr) {
    for (std::size_t i = 0; i < tools->as_array().size(); ++i) {
      std::string at = "/tools";
      json::append_index(at, i);
      auto d = read_descriptor(tools->as_array()[i], at,
                               snapshot ? Shape::MillforgeSnapshot : Shape::Native);
      if (!d) {
        for (const auto& e : d.diagnostics()) ds.push_back(e);
        continue;
      }
      auto key = std::make_pair(d->tool_id, d->version);
      if (catalog.tools_.count(key) != 0) {
        ds.push_back(diag::error(codes::kDuplicateBinding,
                                 d->ref() + " is listed twice in the catalog", at));
        continue;
      }
      catalog.tools_.emplace(std::move(key), std::move(*d));
    }
  }
  if (!ds.empty()) return ds;
  if (snapshot) {
    const SnapshotIdentity actual = catalog.snapshot_identity();
    for (const auto& [key, want, got] :
         {std::tuple{"snapshot_sha256", stated.snapshot_sha256, actual.snapshot_sha256},
          std::tuple{"snapshot_id", stated.snapshot_id, actual.snapshot_id}}) {
      if (want != got) {
        ds.push_back(
            diag::error(codes::kSnapshotDrift,
                        std::string(key) + " states " + want + " but the entries give " + got,
                        std::string("/") + key));
      }
    }
    if (!ds.empty()) return ds;
  }
  return catalog;
}

SnapshotIdentity Catalog::snapshot_identity() const {
  json::Array records;  // the map's order: (tool_id, version), as Millforge sorts them
  for (const auto& [key, d] : tools_) {
    records.push_back(json::Object{
        {"tool_id", d.tool_id},
        {"tool_version", d.version},
        {"implementation_id", d.implementation_id},
        {"descriptor_sha256", d.snapshot ? d.snapshot->descriptor_sha256 : d.descriptor_sha256}});
  }
  SnapshotIdentity id;
  id.snapshot_sha256 =
      json::millforge_digest(json::Object{{"schema_version", 1},
                                          {"kind", "millforge.tool_registry.snapshot.v1"},
                                          {"descriptors", std::move(records)}});
  id.snapshot_id =
      json::millforge_digest(json::Object{{"schema_version", 1},
                                          {"kind", "millforge.tool_registry.snapshot_id.v1"},
                                          {"snapshot_sha256", id.snapshot_sha256}});
  return id;
}

Status Catalog::merge(const Catalog& other) {
  diag::Diagnostics ds;
  for (const auto& [key, d] : other.tools_) {
    if (tools_.count(key) != 0) {
      ds.push_back(
          diag::error(codes::kDuplicateBinding, d.ref() + " is provided by more than one catalog"));
    }
  }
  if (!ds.empty()) return ds;
  for (const auto& [key, d] : other.tools_) tools_.emplace(key, d);
  return {};
}

const ToolDescriptor* Catalog::find(std::string_view tool_id, std::int64_t version) const {
  auto it = tools_.find(std::make_pair(std::string(tool_id), version));
  return it == tools_.end() ? nullptr : &it->second;
}

bool soft_errors_ok(const json::Value& soft_errors) {
  const auto& items = soft_errors.as_array();
  return !items.empty() && items.size() <= 16 &&
         std::all_of(items.begin(), items.end(), [](const json::Value& s) {
           return s.is_string() && !s.as_string().empty() && s.as_string().size() <= 256;
         });
}

Result<ToolDescriptor> plan_node_descriptor(const json::Value& node, const std::string& pointer) {
  const json::Value* b = node.find("binding");
  // The catalog entry's member, where the node keeps it.
  struct Place {
    const char* entry;
    bool in_binding;
    const char* node;
  };
  static constexpr Place kPlaces[] = {
      {"tool_id", true, "tool_id"},
      {"version", true, "tool_version"},
      {"model_tool_name", false, "model_tool_name"},
      {"description", false, "description"},
      {"input_schema", false, "input_schema"},
      {"output_schema", false, "output_schema"},
      {"required_capabilities", false, "required_capabilities"},
      {"side_effect_class", false, "side_effect_class"},
      {"idempotency", false, "idempotency"},
      {"timeout_ms", false, "timeout_ms"},
      {"output_policy", false, "output_policy"},
      {"implementation_id", true, "implementation_id"},
      {"descriptor_sha256", true, "descriptor_sha256"},
      {"connector", false, "connector"},
      {"produced_artifact_ids", false, "descriptor_produced_artifact_ids"},
  };
  json::Value entry = json::Object{};
  for (const Place& p : kPlaces) {
    const json::Value* from = p.in_binding ? b : &node;
    const json::Value* m = from != nullptr ? from->find(p.node) : nullptr;
    // The optional members are absent from the entry when the node has none.
    if (m == nullptr && (std::string_view(p.entry) == "connector" ||
                         std::string_view(p.entry) == "produced_artifact_ids")) {
      continue;
    }
    entry.set(p.entry, m != nullptr ? *m : json::Value());
  }
  auto catalog = Catalog::from_json(json::Object{{"schema_version", "1.0"},
                                                 {"kind", "millforge_tool_catalog"},
                                                 {"tools", json::Array{std::move(entry)}}});
  if (!catalog) {
    auto ds = catalog.take_diagnostics();
    const std::string prefix = "/tools/0";
    for (auto& d : ds) {
      if (d.pointer.rfind(prefix, 0) != 0) {
        d.pointer = pointer;
        continue;
      }
      std::string rest = d.pointer.substr(prefix.size());  // "/<entry member>..." or ""
      std::string at = pointer;
      if (!rest.empty()) {
        const std::size_t end = rest.find('/', 1);
        const std::string key = rest.substr(1, end == std::string::npos ? end : end - 1);
        for (const Place& p : kPlaces) {
          if (key != p.entry) continue;
          if (p.in_binding) json::append_token(at, "binding");
          json::append_token(at, p.node);
          if (end != std::string::npos) at += rest.substr(end);
        }
      }
      d.pointer = std::move(at);
    }
    return ds;
  }
  return catalog->descriptors().begin()->second;
}

}  // namespace mf::tools
