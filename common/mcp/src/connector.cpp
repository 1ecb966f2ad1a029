// Connectors (connector.hpp): discovery snapshots, admission under a policy into a pinned catalog,
// and the Broker that refuses drift before carrying a run's calls.
#include "mf/mcp/connector.hpp"

#include <algorithm>
#include <set>

#include "mf/diag/codes.hpp"
#include "mf/diag/secrets.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/fields.hpp"
#include "mf/schema/schema.hpp"
#include "mf/tools/catalog.hpp"

namespace mf::mcp {
namespace {

using json::Value;
namespace codes = diag::codes;

constexpr std::string_view kSnapshotKind = "millforge_connector_snapshot";
constexpr std::string_view kPolicyKind = "millforge_connector_policy";
constexpr const char* kDigested[] = {"annotations", "description",  "inputSchema",
                                     "name",        "outputSchema", "title"};

std::string at_index(const std::string& base, std::size_t i) {
  return base + "/" + std::to_string(i);
}

bool secret_like(const std::string& s) {
  return diag::redact_secrets(s) != s;
}

// The digest of each member provider_sha256 covers that `tool` has: what a run names when the
// tool drifts.
Value member_digests(const Value& tool) {
  Value digests = json::Object{};
  for (const char* key : kDigested) {
    if (const Value* v = tool.find(key)) digests.set(key, json::canonical_digest(*v));
  }
  return digests;
}

// What differs between the pinned tool and the one listed now: "description changed",
// "annotations added", ... (a pin without member digests, admitted before they were pinned,
// can only say which members may have changed).
std::string drift(const Value& pins, const Value& live) {
  const Value* pinned = pins.find("provider_member_sha256");
  if (pinned == nullptr) return "its title, description, inputSchema, outputSchema or annotations";
  const Value now = member_digests(live);
  std::string what;
  for (const char* key : kDigested) {
    const Value* was = pinned->find(key);
    const Value* is = now.find(key);
    const char* change = was == nullptr  ? (is == nullptr ? nullptr : "added")
                         : is == nullptr ? "removed"
                         : *was != *is   ? "changed"
                                         : nullptr;
    if (change == nullptr) continue;
    if (!what.empty()) what += ", ";
    what += std::string(key) + " " + change;
  }
  return what.empty() ? "its digest" : what;
}

// A schema as a server lists it, without a root "$schema" naming a draft whose subset keywords
// mean what they mean in 2020-12 (zod and the MCP SDKs write draft-07).
Value without_draft(Value schema) {
  if (!schema.is_object()) return schema;
  if (const Value* s = schema.find("$schema"); s != nullptr && s->is_string()) {
    static const std::set<std::string> drafts = {"http://json-schema.org/draft-07/schema#",
                                                 "http://json-schema.org/draft-07/schema",
                                                 "https://json-schema.org/draft/2019-09/schema",
                                                 "https://json-schema.org/draft/2020-12/schema"};
    if (drafts.count(s->as_string()) != 0) {
      json::Object kept;
      for (auto& m : schema.as_object()) {
        if (m.key != "$schema") kept.push_back(std::move(m));
      }
      return kept;
    }
  }
  return schema;
}

// A dotted-id segment from a provider's tool name: lowercase, [a-z0-9_], a letter first.
std::string segment(const std::string& name) {
  std::string s;
  for (char c : name) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    s += (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ? c : '_';
  }
  if (s.empty() || !(s[0] >= 'a' && s[0] <= 'z')) s = "t" + s;
  return s;
}

struct Snapshot {
  ServerSpec server;
  std::string protocol_version, server_name, server_version, sha256;
  std::map<std::string, std::pair<Value, std::size_t>> tools;  // name -> (tool, index)
};

Result<Snapshot> read_snapshot(const Value& doc) {
  json::FieldReader f(doc, "");
  Snapshot s;
  auto version = f.string("schema_version");
  auto kind = f.string("kind");
  const Value* server = f.object("server");
  auto pv = f.string("protocol_version");
  auto name = f.string("server_name");
  auto sv = f.string("server_version");
  f.object("capabilities");
  const Value* tools = f.array("tools");
  f.reject_unknown({"schema_version", "kind", "server", "protocol_version", "server_name",
                    "server_version", "capabilities", "tools"});
  diag::Diagnostics ds = f.take();
  if (version && *version != "1.0") {
    ds.push_back(diag::error(codes::kSchema, "schema_version must be \"1.0\"", "/schema_version"));
  }
  if (kind && *kind != kSnapshotKind) {
    ds.push_back(
        diag::error(codes::kSchema, "kind must be \"millforge_connector_snapshot\"", "/kind"));
  }
  if (server != nullptr) {
    if (auto spec = server_from_json(*server, "/server")) {
      s.server = std::move(*spec);
    } else {
      for (const auto& d : spec.diagnostics()) ds.push_back(d);
    }
  }
  if (tools != nullptr) {
    for (std::size_t i = 0; i < tools->as_array().size(); ++i) {
      const std::string at = at_index("/tools", i);
      json::FieldReader t(tools->as_array()[i], at);
      auto claimed = t.string("provider_sha256");
      const Value* tool = t.object("tool");
      t.reject_unknown({"provider_sha256", "tool"});
      for (auto& d : t.take()) ds.push_back(std::move(d));
      if (tool == nullptr) continue;
      const Value* n = tool->find("name");
      if (n == nullptr || !n->is_string() || n->as_string().empty()) {
        ds.push_back(diag::error(codes::kConnectorSnapshot, "a tool has no name", at + "/tool"));
        continue;
      }
      if (claimed && *claimed != provider_sha256(*tool)) {
        ds.push_back(diag::error(codes::kConnectorPin,
                                 "tool " + n->as_string() + " claims provider_sha256 " + *claimed +
                                     " but hashes to " + provider_sha256(*tool),
                                 at + "/provider_sha256"));
      }
      if (!s.tools.emplace(n->as_string(), std::make_pair(*tool, i)).second) {
        ds.push_back(diag::error(codes::kConnectorSnapshot,
                                 "the server lists tool " + n->as_string() + " twice",
                                 at + "/tool/name"));
      }
    }
  }
  if (!ds.empty()) return ds;
  s.protocol_version = *pv;
  s.server_name = *name;
  s.server_version = *sv;
  s.sha256 = json::canonical_digest(doc);
  return s;
}

// One policy entry admitted into a descriptor, or its faults.
struct Admitting {
  const Snapshot& snap;
  const std::string& connector_id;
  const std::set<std::string>& allowed;
  const std::set<std::string>& denied;
  diag::Diagnostics& ds;

  Value entry(const Value& e, const std::string& at) {
    json::FieldReader r(e, at);
    auto provider = r.string("provider_tool_name");
    auto tool_id = r.string("tool_id", false);
    auto version = r.integer("version", false);
    auto model_name = r.string("model_tool_name", false);
    auto description = r.string("description", false);
    const Value* caps = r.array("required_capabilities");
    auto side = r.string("side_effect_class");
    auto idem = r.string("idempotency");
    auto timeout = r.integer("timeout_ms", false);
    const Value* policy = r.object("output_policy", false);
    auto pin = r.string("provider_sha256", false);
    const Value* soft = r.array("soft_errors", false);
    r.reject_unknown({"provider_tool_name", "tool_id", "version", "model_tool_name", "description",
                      "required_capabilities", "side_effect_class", "idempotency", "timeout_ms",
                      "output_policy", "provider_sha256", "soft_errors"});
    auto faults = r.take();
    if (soft != nullptr && !tools::soft_errors_ok(*soft)) {
      faults.push_back(
          diag::error(codes::kConnectorPolicy, tools::kSoftErrorsRule, at + "/soft_errors"));
    }
    for (auto& d : faults) {
      if (d.code != codes::kUnknownField) d.code = codes::kConnectorPolicy;
      ds.push_back(std::move(d));
    }
    if (!provider) return {};
    if (denied.count(*provider) != 0) {
      ds.push_back(diag::error(codes::kConnectorForbidden,
                               "tool " + *provider + " is both denied and admitted",
                               at + "/provider_tool_name"));
    }
    auto found = snap.tools.find(*provider);
    if (found == snap.tools.end()) {
      ds.push_back(diag::error(codes::kConnectorNotListed,
                               "the server does not list tool " + *provider,
                               at + "/provider_tool_name"));
      return {};
    }
    const Value& tool = found->second.first;
    const std::string tool_at = at_index("/tools", found->second.second) + "/tool";
    const std::string digest = provider_sha256(tool);
    if (pin && *pin != digest) {
      ds.push_back(diag::error(
          codes::kConnectorPin,
          "tool " + *provider + " is pinned at " + *pin + " but the snapshot's hashes to " + digest,
          at + "/provider_sha256"));
    }
    std::vector<std::string> capabilities;
    if (caps != nullptr) {
      for (std::size_t k = 0; k < caps->as_array().size(); ++k) {
        const Value& c = caps->as_array()[k];
        if (!c.is_string() || allowed.count(c.as_string()) == 0) {
          ds.push_back(diag::error(codes::kConnectorCapability,
                                   "capability " +
                                       (c.is_string() ? c.as_string() : std::string("?")) + " of " +
                                       *provider + " is not in allowed_capabilities",
                                   at_index(at + "/required_capabilities", k)));
          continue;
        }
        capabilities.push_back(c.as_string());
      }
      if (caps->as_array().empty()) {
        ds.push_back(diag::error(codes::kConnectorCapability,
                                 "tool " + *provider + " must require at least one capability",
                                 at + "/required_capabilities"));
      }
    }
    std::string text;
    if (description) {
      text = *description;
    } else if (const Value* d = tool.find("description"); d != nullptr && d->is_string()) {
      text = d->as_string();
    }
    if (text.empty()) {
      ds.push_back(diag::error(codes::kConnectorPolicy,
                               "tool " + *provider + " has no description: give one",
                               at + "/description"));
    }
    if (secret_like(text)) {
      ds.push_back(diag::error(codes::kConnectorSecret,
                               "the description of " + *provider + " looks like it holds a secret",
                               description ? at + "/description" : tool_at + "/description"));
    }
    const std::string name = model_name ? *model_name : *provider;
    if (!tools::valid_model_tool_name(name)) {
      ds.push_back(diag::error(codes::kConnectorPolicy,
                               "\"" + name + "\" is not a model tool name: give model_tool_name",
                               at + (model_name ? "/model_tool_name" : "/provider_tool_name")));
    }
    Value input;
    if (const Value* in = tool.find("inputSchema"); in != nullptr) {
      input = without_draft(*in);
      if (Status st = schema::admit(input, codes::kConnectorSchema, tool_at + "/inputSchema");
          !st) {
        for (const auto& d : st.diagnostics()) ds.push_back(d);
      }
    } else {
      ds.push_back(diag::error(codes::kConnectorSchema, "tool " + *provider + " has no inputSchema",
                               tool_at));
    }
    Value out = json::Object{
        {"connector", json::Object{{"connector_id", connector_id},
                                   {"protocol_version", snap.protocol_version},
                                   {"provider_member_sha256", member_digests(tool)},
                                   {"provider_sha256", digest},
                                   {"provider_tool_name", *provider},
                                   {"server", to_json(snap.server)},
                                   {"server_name", snap.server_name},
                                   {"server_version", snap.server_version},
                                   {"snapshot_sha256", snap.sha256}}},
        {"description", text},
        {"idempotency", idem ? *idem : ""},
        {"implementation_id", "impl.mcp." + connector_id},
        {"input_schema", input},
        {"model_tool_name", name},
        {"required_capabilities", json::Array(capabilities.begin(), capabilities.end())},
        {"side_effect_class", side ? *side : ""},
        {"tool_id", tool_id ? *tool_id : "mcp." + connector_id + "." + segment(*provider)},
        {"version", version ? *version : 1},
    };
    if (const Value* os = tool.find("outputSchema"); os != nullptr) {
      Value o = without_draft(*os);
      if (Status st = schema::admit(o, codes::kConnectorSchema, tool_at + "/outputSchema"); !st) {
        for (const auto& d : st.diagnostics()) ds.push_back(d);
      }
      out.set("output_schema", o);
    }
    if (timeout) out.set("timeout_ms", *timeout);
    if (policy != nullptr) out.set("output_policy", *policy);
    // The texts that make an isError result a resolution error; pinned with the connector.
    if (soft != nullptr) out.find("connector")->set("soft_errors", *soft);
    return out;
  }
};

}  // namespace

std::string provider_sha256(const json::Value& tool) {
  Value digested = json::Object{};
  for (const char* key : kDigested) {
    if (const Value* v = tool.find(key)) digested.set(key, *v);
  }
  return json::canonical_digest(digested);
}

Result<json::Value> discover(const ServerSpec& spec, const Limits& limits,
                             const std::atomic<bool>* cancel) {
  auto client = Client::connect(spec, limits, cancel);
  if (!client) return client.take_diagnostics();
  auto tools = (*client)->list_tools(cancel);
  if (!tools) return tools.take_diagnostics();
  std::sort(tools->begin(), tools->end(), [](const Value& a, const Value& b) {
    const Value* x = a.find("name");
    const Value* y = b.find("name");
    const std::string empty;
    return (x && x->is_string() ? x->as_string() : empty) <
           (y && y->is_string() ? y->as_string() : empty);
  });
  json::Array listed;
  for (auto& t : *tools) {
    if (!t.is_object()) {
      return diag::error(codes::kConnectorSnapshot,
                         "tools/list returned a tool that is not an object");
    }
    listed.push_back(json::Object{{"provider_sha256", provider_sha256(t)}, {"tool", std::move(t)}});
  }
  const ServerInfo& info = (*client)->server();
  Value snapshot = json::Object{
      {"capabilities", info.capabilities.is_object() ? info.capabilities : Value(json::Object{})},
      {"kind", kSnapshotKind},
      {"protocol_version", info.protocol_version},
      {"schema_version", "1.0"},
      {"server", to_json(spec)},
      {"server_name", info.name},
      {"server_version", info.version},
      {"tools", std::move(listed)},
  };
  (*client)->close();
  return snapshot;
}

Result<json::Value> admit(const json::Value& snapshot, const json::Value& policy) {
  auto snap = read_snapshot(snapshot);
  if (!snap) {
    auto ds = snap.take_diagnostics();
    for (auto& d : ds) d.source = "snapshot";
    return ds;
  }
  diag::Diagnostics ds;
  for (std::size_t i = 0; i < snap->server.command.size(); ++i) {
    if (secret_like(snap->server.command[i])) {
      ds.push_back(diag::error(codes::kConnectorSecret,
                               "the server command holds what looks like a secret; pass it "
                               "through the server's environment instead (--server-env NAME)",
                               at_index("/server/command", i)));
    }
  }
  if (secret_like(snap->server.url)) {
    ds.push_back(diag::error(codes::kConnectorSecret,
                             "the server URL holds what looks like a secret; a URL is pinned in "
                             "the catalog and the trace, so it must not carry one",
                             "/server/url"));
  }
  json::FieldReader f(policy, "");
  auto version = f.string("schema_version");
  auto kind = f.string("kind");
  auto id = f.string("connector_id");
  const Value* allowed_v = f.array("allowed_capabilities");
  const Value* deny_v = f.array("deny", false);
  const Value* entries = f.array("tools");
  f.reject_unknown(
      {"schema_version", "kind", "connector_id", "allowed_capabilities", "deny", "tools"});
  diag::Diagnostics pf = f.take();
  if (version && *version != "1.0") {
    pf.push_back(diag::error(codes::kSchema, "schema_version must be \"1.0\"", "/schema_version"));
  }
  if (kind && *kind != kPolicyKind) {
    pf.push_back(
        diag::error(codes::kSchema, "kind must be \"millforge_connector_policy\"", "/kind"));
  }
  if (id && !tools::valid_dotted_id(*id)) {
    pf.push_back(diag::error(codes::kConnectorPolicy, "connector_id must be dotted lowercase",
                             "/connector_id"));
  }
  std::set<std::string> allowed, denied;
  auto strings = [&](const Value* list, const char* key, std::set<std::string>& into) {
    if (list == nullptr) return;
    for (std::size_t i = 0; i < list->as_array().size(); ++i) {
      const Value& v = list->as_array()[i];
      if (!v.is_string() || v.as_string().empty() || !into.insert(v.as_string()).second) {
        pf.push_back(diag::error(codes::kConnectorPolicy,
                                 std::string(key) + " must hold unique non-empty strings",
                                 at_index(std::string("/") + key, i)));
      }
    }
  };
  strings(allowed_v, "allowed_capabilities", allowed);
  strings(deny_v, "deny", denied);
  for (auto& d : pf) {
    d.source = "policy";
    ds.push_back(std::move(d));
  }
  for (auto& d : ds) {
    if (d.source.empty()) d.source = "snapshot";
  }
  if (!ds.empty() || entries == nullptr || !id) return ds;

  Admitting a{*snap, *id, allowed, denied, ds};
  json::Array admitted;
  std::set<std::string> providers, names;
  for (std::size_t i = 0; i < entries->as_array().size(); ++i) {
    const std::string at = at_index("/tools", i);
    Value d = a.entry(entries->as_array()[i], at);
    if (d.is_null()) continue;
    const std::string& provider = d.find("connector")->find("provider_tool_name")->as_string();
    if (!providers.insert(provider).second) {
      ds.push_back(diag::error(codes::kConnectorPolicy, "tool " + provider + " is admitted twice",
                               at + "/provider_tool_name"));
    }
    if (!names.insert(d.find("model_tool_name")->as_string()).second) {
      ds.push_back(diag::error(
          codes::kConnectorPolicy,
          "model_tool_name " + d.find("model_tool_name")->as_string() + " is given to two tools",
          at));
    }
    admitted.push_back(std::move(d));
  }
  if (!ds.empty()) {
    // A pointer at a listed tool or the server is the snapshot's; the rest are the policy's.
    for (auto& d : ds) {
      const std::string& p = d.pointer;
      const bool listed = p.rfind("/server", 0) == 0 || p.find("/tool/") != std::string::npos ||
                          (p.size() >= 5 && p.compare(p.size() - 5, 5, "/tool") == 0);
      d.source = listed ? "snapshot" : "policy";
    }
    return ds;
  }
  Value catalog = json::Object{{"kind", "millforge_tool_catalog"},
                               {"schema_version", "1.0"},
                               {"tools", std::move(admitted)}};
  // The registry has the last word on every descriptor (enums, bounds, the output policy).
  if (auto checked = tools::Catalog::from_json(catalog); !checked) {
    auto faults = checked.take_diagnostics();
    for (auto& d : faults) d.message = "in the manifest: " + d.message;
    return faults;
  }
  return catalog;
}

// An isError result whose text holds one of the policy's soft_errors is a resolution error
// (docs/connectors.md): the guarded loop feeds it back without spending the tool-error budget.
tools::ToolResult with_soft_errors(tools::ToolResult result, const Value* soft_errors) {
  if (!result.is_error || soft_errors == nullptr) return result;
  for (const Value& s : soft_errors->as_array()) {
    if (result.text.find(s.as_string()) != std::string::npos) result.soft = true;
  }
  return result;
}

tools::ToolResult tool_result(json::Value r) {
  tools::ToolResult out;
  if (const Value* e = r.find("isError"); e != nullptr && e->is_bool()) out.is_error = e->as_bool();
  if (const Value* content = r.find("content"); content != nullptr && content->is_array()) {
    for (const Value& block : content->as_array()) {
      const Value* type = block.find("type");
      const std::string t = type != nullptr && type->is_string() ? type->as_string() : "?";
      std::string piece;
      if (const Value* text = block.find("text"); t == "text" && text && text->is_string()) {
        piece = text->as_string();
      } else if (const Value* data = block.find("data"); data != nullptr && data->is_string()) {
        const Value* mime = block.find("mimeType");
        piece = "[" + t + " " + (mime && mime->is_string() ? mime->as_string() : "") + ", " +
                std::to_string(data->as_string().size()) + " bytes of base64]";
      } else if (const Value* res = block.find("resource"); res != nullptr && res->is_object()) {
        const Value* uri = res->find("uri");
        const Value* text = res->find("text");
        piece = text && text->is_string()
                    ? text->as_string()
                    : "[resource " + (uri && uri->is_string() ? uri->as_string() : "") + "]";
      } else if (const Value* uri = block.find("uri"); uri != nullptr && uri->is_string()) {
        piece = "[" + t + " " + uri->as_string() + "]";
      } else {
        piece = "[" + t + "]";
      }
      if (!out.text.empty()) out.text += '\n';
      out.text += piece;
    }
  }
  if (Value* s = r.find("structuredContent"); s != nullptr && !out.is_error) {
    out.details = std::move(*s);
  }
  return out;
}

Result<std::shared_ptr<Broker>> Broker::open(const std::vector<tools::Binding>& bindings,
                                             const Limits& limits,
                                             const std::atomic<bool>* cancel) {
  std::shared_ptr<Broker> broker;
  std::map<std::string, std::vector<std::size_t>> by_connector;
  for (std::size_t i = 0; i < bindings.size(); ++i) {
    const Value& c = bindings[i].tool.connector;
    if (!c.is_null()) by_connector[c.find("connector_id")->as_string()].push_back(i);
  }
  if (by_connector.empty()) return broker;
  broker = std::make_shared<Broker>();
  diag::Diagnostics ds;
  auto pointer = [](std::size_t node, const char* member) {
    return "/nodes/" + std::to_string(node) + "/connector/" + member;
  };
  for (const auto& [id, nodes] : by_connector) {
    const Value& pins = bindings[nodes.front()].tool.connector;
    for (std::size_t n : nodes) {
      const Value& c = bindings[n].tool.connector;
      for (const char* key : {"server", "server_name", "server_version", "protocol_version"}) {
        if (*c.find(key) != *pins.find(key)) {
          ds.push_back(diag::error(codes::kConnectorDrift,
                                   "the tools of connector " + id + " pin different " + key + "s",
                                   pointer(n, key)));
        }
      }
    }
    if (!ds.empty()) return ds;
    auto spec = server_from_json(*pins.find("server"), pointer(nodes.front(), "server"));
    if (!spec) return spec.take_diagnostics();
    auto client = Client::connect(*spec, limits, cancel);
    if (!client) return client.take_diagnostics();
    const ServerInfo& info = (*client)->server();
    const std::string pinned = pins.find("server_name")->as_string() + " " +
                               pins.find("server_version")->as_string() + " (protocol " +
                               pins.find("protocol_version")->as_string() + ")";
    const std::string live =
        info.name + " " + info.version + " (protocol " + info.protocol_version + ")";
    if (pinned != live) {
      return diag::error(
          codes::kConnectorDrift,
          "connector " + id + ": the server is now " + live + ", the plan pins " + pinned,
          pointer(nodes.front(), "server_version"));
    }
    auto listed = (*client)->list_tools(cancel);
    if (!listed) return listed.take_diagnostics();
    // The listing is held to admission's rules: a tool without a name, or a name listed twice,
    // leaves it open which tool a call would reach.
    std::map<std::string, const Value*> live_tools;
    for (const Value& t : *listed) {
      const Value* n = t.is_object() ? t.find("name") : nullptr;
      if (n == nullptr || !n->is_string() || n->as_string().empty()) {
        ds.push_back(diag::error(codes::kConnectorSnapshot,
                                 "connector " + id + ": the server lists a tool without a name",
                                 pointer(nodes.front(), "server")));
        continue;
      }
      if (!live_tools.emplace(n->as_string(), &t).second) {
        const auto bound = std::find_if(nodes.begin(), nodes.end(), [&](std::size_t k) {
          return bindings[k].tool.connector.find("provider_tool_name")->as_string() ==
                 n->as_string();
        });
        ds.push_back(
            diag::error(codes::kConnectorSnapshot,
                        "connector " + id + ": the server lists tool " + n->as_string() + " twice",
                        bound == nodes.end() ? pointer(nodes.front(), "server")
                                             : pointer(*bound, "provider_tool_name")));
      }
    }
    if (!ds.empty()) return ds;
    for (std::size_t n : nodes) {
      const tools::ToolDescriptor& d = bindings[n].tool;
      const std::string& provider = d.connector.find("provider_tool_name")->as_string();
      auto it = live_tools.find(provider);
      if (it == live_tools.end()) {
        ds.push_back(diag::error(
            codes::kConnectorDrift,
            "connector " + id + ": tool " + provider + " is no longer listed by the server",
            pointer(n, "provider_tool_name")));
        continue;
      }
      const std::string digest = provider_sha256(*it->second);
      if (digest == d.connector.find("provider_sha256")->as_string()) continue;
      ds.push_back(diag::error(codes::kConnectorDrift,
                               "connector " + id + ": tool " + provider + " changed since it was " +
                                   "admitted (" + drift(d.connector, *it->second) +
                                   "; it now hashes to " + digest + ")",
                               pointer(n, "provider_sha256")));
    }
    if (!ds.empty()) return ds;
    broker->clients_.emplace(id, std::move(*client));
  }
  return broker;
}

tools::ToolResult Broker::call(const tools::ToolDescriptor& tool, const json::Value& args,
                               const tools::CallContext& ctx, json::Value& evidence) {
  const Value& c = tool.connector;
  const std::string& id = c.find("connector_id")->as_string();
  const std::string& provider = c.find("provider_tool_name")->as_string();
  evidence = json::Object{
      {"connector_id", id},
      {"protocol_version", c.find("protocol_version")->as_string()},
      {"provider_tool_name", provider},
      {"request_sha256",
       json::canonical_digest(json::Object{{"arguments", args}, {"name", provider}})},
      {"response_sha256", nullptr},
      {"server_name", c.find("server_name")->as_string()},
      {"server_version", c.find("server_version")->as_string()},
  };
  auto it = clients_.find(id);
  if (it == clients_.end()) {
    return tools::ToolResult::refusal("No connector session is open for " + tool.ref());
  }
  CallOutcome r = it->second->call_tool(provider, args, ctx.deadline, ctx.cancel);
  switch (r.status) {
    case CallStatus::Ok:
      evidence.set("response_sha256", json::canonical_digest(r.result));
      return with_soft_errors(tool_result(std::move(r.result)), c.find("soft_errors"));
    case CallStatus::Cancelled:
      return tools::ToolResult::error("Operation aborted");
    case CallStatus::TimedOut:
      return tools::ToolResult::error("Tool " + tool.model_tool_name + " timed out after " +
                                      std::to_string(tool.timeout_ms) + " ms");
    case CallStatus::Failed:
      break;
  }
  return tools::ToolResult::error("MCP server of connector " + id + ": " + r.error);
}

}  // namespace mf::mcp
