// The harness compiler's passes, in the order compiler.hpp gives them, over one Compilation that
// carries each pass's findings to the next.
#include "mf/harness/compiler.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "graph.hpp"
#include "mf/diag/codes.hpp"
#include "mf/harness/millforge.hpp"
#include "mf/harness/plan.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/fields.hpp"
#include "mf/json/pointer.hpp"
#include "mf/json/reader.hpp"
#include "mf/text/suggest.hpp"
#include "mf/tools/catalog.hpp"
#include "mf/yaml/reader.hpp"
#include "millforge.hpp"
#include "source.hpp"

namespace mf::harness {
namespace {

namespace codes = diag::codes;
using json::Value;

constexpr std::size_t kMaxSourceBytes = 1 << 20;

// A node with its resolved descriptor.
struct Bound {
  const Node* node;
  const tools::ToolDescriptor* tool;
};

struct Compilation {
  const CompileRequest& request;
  Source source;
  tools::Catalog catalog;
  std::map<std::string, const Node*> by_id;
  std::vector<Bound> bound;       // in node_id order
  Edges edges;                    // node -> its accepted prerequisites (the graph phase's)
  std::string projection_sha256;  // the projection catalog's, when the source has the section
  // Per declared artifact: its valid producers, and those a terminal requiring it is gated by.
  std::map<std::string, std::set<std::string>> producers, gated;
  diag::Diagnostics ds;
  std::vector<CatalogSnapshot> snapshots;
  std::vector<std::string> profile_ids;  // every profile the profiles files list

  void add(std::string code, std::string message, std::string pointer) {
    ds.push_back(diag::error(std::move(code), std::move(message), std::move(pointer)));
  }
};

std::string quoted(std::string_view s) {
  return "\"" + std::string(s) + "\"";
}

// Schema-phase checks that depend on the request rather than on the source alone.
void check_request_against_source(Compilation& c) {
  const auto& r = c.request;
  const auto& s = c.source;
  if (!r.expected_harness_id.empty() && r.expected_harness_id != s.harness_id) {
    c.add(codes::kHarnessIdMismatch,
          "harness_id " + quoted(s.harness_id) + " is not the expected " +
              quoted(r.expected_harness_id),
          "/harness_id");
  }
  if (!r.stage.empty() && std::find(s.stage_kind_ids.begin(), s.stage_kind_ids.end(), r.stage) ==
                              s.stage_kind_ids.end()) {
    c.add(codes::kStageOutOfScope, "stage " + quoted(r.stage) + " is not in stage_scope",
          "/stage_scope/stage_kind_ids");
  }
}

// Loads every catalog into one.
void load_catalogs(Compilation& c) {
  for (const auto& doc : c.request.catalogs) {
    auto loaded = tools::Catalog::from_json(doc.doc);
    if (!loaded) {
      for (auto d : loaded.diagnostics()) {
        d.message = "catalog " + doc.name + ": " + d.message;
        c.ds.push_back(std::move(d));
      }
      continue;
    }
    const tools::SnapshotIdentity id = loaded->snapshot_identity();
    c.snapshots.push_back({doc.name, id.snapshot_id, id.snapshot_sha256});
    if (Status merged = c.catalog.merge(*loaded); !merged) {
      for (auto d : merged.diagnostics()) {
        d.message = "catalog " + doc.name + ": " + d.message;
        c.ds.push_back(std::move(d));
      }
    }
  }
}

// Checks every profiles file; true when one of them lists the source's model profile.
bool read_profiles(Compilation& c) {
  bool profile_found = false;
  for (const auto& doc : c.request.profiles) {
    json::FieldReader f(doc.doc, "");
    auto version = f.string("schema_version");
    auto kind = f.string("kind");
    const Value* profiles = f.array("profiles");
    f.reject_unknown({"schema_version", "kind", "profiles"});
    if ((version && *version != "1.0") || (kind && *kind != "millforge_model_profiles")) {
      f.add(diag::error(codes::kSchema,
                        "a profiles file has schema_version \"1.0\" and kind "
                        "\"millforge_model_profiles\""));
    }
    std::set<std::string> seen;
    for (std::size_t i = 0; profiles != nullptr && i < profiles->as_array().size(); ++i) {
      std::string at = "/profiles";
      json::append_index(at, i);
      json::FieldReader p(profiles->as_array()[i], at);
      auto id = p.string("profile_id");
      auto backend = p.string("backend");
      p.string("description", false);
      p.reject_unknown({"profile_id", "backend", "description"});
      if (id && !tools::valid_dotted_id(*id)) {
        p.add(diag::error(codes::kSchema, "profile_id " + quoted(*id) + " is malformed",
                          p.pointer_of("profile_id")));
      }
      if (id && !seen.insert(*id).second) {
        p.add(diag::error(codes::kSchema, "profile " + quoted(*id) + " is listed twice",
                          p.pointer_of("profile_id")));
      }
      if (backend && *backend != "scripted" && *backend != "openai" && *backend != "anthropic") {
        p.add(diag::error(codes::kSchema,
                          "backend must be \"scripted\", \"openai\" or \"anthropic\"",
                          p.pointer_of("backend")));
      }
      if (p.ok() && id && *id == c.source.model_profile_id) profile_found = true;
      if (id) c.profile_ids.push_back(*id);
      for (auto& d : p.take()) f.add(std::move(d));
    }
    for (auto d : f.take()) {
      d.code = codes::kMalformedProfile;
      d.message = "profiles " + doc.name + ": " + d.message;
      c.ds.push_back(std::move(d));
    }
  }
  return profile_found;
}

// Binds every node to an exact descriptor: each tool and each model-facing name bound once.
// False when a tool is bound twice, which stops the compilation (Millforge's preflight).
bool bind_nodes(Compilation& c) {
  bool twice = false;
  std::map<std::string, const Node*> by_tool;
  std::map<std::string, const Node*> by_model_name;
  for (const auto& n : c.source.nodes) {
    const std::string ref = n.tool_id + "@" + std::to_string(n.tool_version);
    const tools::ToolDescriptor* d = c.catalog.find(n.tool_id, n.tool_version);
    if (d == nullptr) {
      std::vector<std::string> refs;
      for (const auto& [key, known] : c.catalog.descriptors()) refs.push_back(known.ref());
      c.add(codes::kUnknownTool,
            "tool_ref " + quoted(ref) + " is in no catalog" + text::did_you_mean(ref, refs),
            n.pointer + "/tool_ref");
      continue;
    }
    if (auto [it, fresh] = by_tool.emplace(ref, &n); !fresh) {
      c.add(codes::kDuplicateBinding,
            "tool " + ref + " is already bound by node " + quoted(it->second->node_id),
            n.pointer + "/tool_ref");
      twice = true;
      continue;
    }
    if (auto [it, fresh] = by_model_name.emplace(d->model_tool_name, &n); !fresh) {
      c.add(codes::kDuplicateModelName,
            "model tool name " + quoted(d->model_tool_name) + " is already bound by node " +
                quoted(it->second->node_id),
            n.pointer + "/tool_ref");
      continue;
    }
    c.bound.push_back({&n, d});
  }
  return !twice;
}

// What Millforge's plan form cannot carry: refused rather than dropped.
bool check_form(Compilation& c) {
  if (c.request.form != PlanForm::MillforgeV1) return true;
  const std::size_t before = c.ds.size();
  if (c.source.projection) {
    c.add(codes::kBadRequest,
          std::string("the ") + kMillforgeForm +
              " form has no projection section; compile without --emit to keep it",
          "/projection");
  }
  for (const auto& b : c.bound) {
    if (!b.tool->connector.is_null()) {
      c.add(codes::kBadRequest,
            std::string("the ") + kMillforgeForm + " form cannot carry the connector pins of " +
                b.tool->ref(),
            b.node->pointer + "/tool_ref");
    }
  }
  return c.ds.size() == before;
}

// Loads catalogs and profiles, binds every node to an exact descriptor, and builds the projection
// catalog over the bound tools. False when the compilation cannot go on: a catalog or profiles
// file is unusable, a tool is bound twice, the plan form cannot carry the harness, or the
// projection fails. An unknown profile or tool and a shared model name do not stop it: the later
// phases check what was bound, as Millforge's do.
bool resolve(Compilation& c) {
  load_catalogs(c);
  const bool profile_found = read_profiles(c);
  if (!c.ds.empty()) return false;
  if (!profile_found) {
    // Nothing close: the profiles there are, as few as profiles files hold.
    std::string hint = text::did_you_mean(c.source.model_profile_id, c.profile_ids);
    if (hint.empty() && !c.profile_ids.empty()) {
      for (std::size_t i = 0; i < c.profile_ids.size() && i < 8; ++i) {
        hint += (i == 0 ? " (profiles: " : ", ") + c.profile_ids[i];
      }
      hint += c.profile_ids.size() > 8 ? ", ...)" : ")";
    }
    c.add(codes::kUnknownProfile,
          "model profile " + quoted(c.source.model_profile_id) + " is in no profiles file" + hint,
          "/model_profile_id");
  }
  if (!bind_nodes(c) || !check_form(c)) return false;
  if (!c.ds.empty() || !c.source.projection) return true;
  std::vector<prompt::ToolSource> tools;
  for (const auto& b : c.bound) {
    tools.push_back({b.tool->model_tool_name, b.tool->description, b.tool->input_schema,
                     b.tool->required_capabilities, !b.tool->connector.is_null()});
  }
  auto catalog = projection_catalog(c.source.projection->units, tools);
  if (!catalog) {
    for (auto& d : catalog.take_diagnostics()) c.ds.push_back(std::move(d));
    return false;
  }
  c.projection_sha256 = catalog->sha256();
  return true;
}

// A schema without its annotations (title, description, default, examples, $comment), which do
// not change what it accepts, and with `required` sorted; property names and data (const, enum)
// are kept as they are.
Value without_annotations(const Value& schema) {
  if (!schema.is_object()) return schema;
  static const std::set<std::string> annotations = {"title", "description", "default", "examples",
                                                    "$comment"};
  json::Object out;
  for (const auto& m : schema.as_object()) {
    if (annotations.count(m.key) != 0) continue;
    if (m.key == "properties" && m.value.is_object()) {
      json::Object props;
      for (const auto& p : m.value.as_object()) {
        props.push_back({p.key, without_annotations(p.value)});
      }
      out.push_back({m.key, std::move(props)});
    } else if ((m.key == "anyOf" || m.key == "oneOf") && m.value.is_array()) {
      json::Array branches;
      for (const auto& b : m.value.as_array()) branches.push_back(without_annotations(b));
      out.push_back({m.key, std::move(branches)});
    } else if (m.key == "items" || m.key == "additionalProperties") {
      out.push_back({m.key, without_annotations(m.value)});
    } else if (m.key == "required" && m.value.is_array()) {  // a set: its order says nothing
      json::Array names = m.value.as_array();
      std::sort(names.begin(), names.end(), [](const Value& a, const Value& b) {
        return a.is_string() && b.is_string() && a.as_string() < b.as_string();
      });
      out.push_back({m.key, std::move(names)});
    } else {
      out.push_back(m);
    }
  }
  return out;
}

// A top-level argument of an input schema: its schema (nullptr when not declared) and whether the
// schema requires it.
std::pair<const Value*, bool> argument(const Value& schema, const std::string& name) {
  const Value* props = schema.is_object() ? schema.find("properties") : nullptr;
  const Value* prop = props != nullptr && props->is_object() ? props->find(name) : nullptr;
  const Value* required = schema.is_object() ? schema.find("required") : nullptr;
  const bool listed =
      required != nullptr && required->is_array() &&
      std::any_of(required->as_array().begin(), required->as_array().end(),
                  [&](const Value& r) { return r.is_string() && r.as_string() == name; });
  return {prop, listed};
}

// An argument match names a required argument of each tool, and the two arguments take the same
// values: their schemas agree once annotations are set aside (Millforge's rule).
void check_argument_matches(Compilation& c, const Prerequisite& p,
                            const tools::ToolDescriptor& prior_tool,
                            const tools::ToolDescriptor& current_tool) {
  for (const auto& m : p.matches) {
    const auto [a, a_required] = argument(prior_tool.input_schema, m.prior);
    const auto [b, b_required] = argument(current_tool.input_schema, m.current);
    std::string why;
    if (a == nullptr) {
      why = "the prerequisite's tool has no argument " + quoted(m.prior);
    } else if (b == nullptr) {
      why = "this node's tool has no argument " + quoted(m.current);
    } else if (!a_required) {
      why = "the prerequisite's tool does not require argument " + quoted(m.prior);
    } else if (!b_required) {
      why = "this node's tool does not require argument " + quoted(m.current);
    } else if (json::canonical(without_annotations(*a)) !=
               json::canonical(without_annotations(*b))) {
      why =
          "arguments " + quoted(m.prior) + " and " + quoted(m.current) + " have different schemas";
    }
    if (!why.empty()) {
      c.add(codes::kBadArgumentMatch, "argument match on " + quoted(p.node_id) + ": " + why,
            p.pointer + "/argument_matches");
    }
  }
}

// A node's prerequisites, judged per distinct prerequisite as Millforge does: itself (G002), not
// a node (G001), a terminal (G013) and listed twice (G003) each apply on their own. Only a
// prerequisite none of them applies to becomes an edge and has its argument matches checked; a
// node with a rejected prerequisite is `invalid` and can never run.
void check_prerequisites(Compilation& c, const Node& n,
                         std::map<std::string, const tools::ToolDescriptor*>& tool_of, Edges& edges,
                         std::set<std::string>& invalid) {
  std::vector<std::vector<const Prerequisite*>> distinct;
  for (const auto& p : n.prerequisites) {
    auto same = std::find_if(distinct.begin(), distinct.end(),
                             [&](const auto& d) { return d.front()->node_id == p.node_id; });
    if (same == distinct.end()) {
      distinct.push_back({&p});
    } else {
      same->push_back(&p);
    }
  }
  for (const auto& occurrences : distinct) {
    const Prerequisite& p = *occurrences.front();
    auto target = c.by_id.find(p.node_id);
    bool accepted = true;
    auto reject = [&](const char* code, std::string message, const std::string& at) {
      c.add(code, std::move(message), at);
      accepted = false;
    };
    if (p.node_id == n.node_id) {
      reject(codes::kSelfPrerequisite,
             "node " + quoted(n.node_id) + " lists itself as a prerequisite", p.pointer);
    }
    if (target == c.by_id.end()) {
      reject(codes::kUnknownPrerequisite, "prerequisite " + quoted(p.node_id) + " is not a node",
             p.pointer);
    } else if (target->second->terminal_result) {
      reject(codes::kTerminalPrerequisite,
             "terminal node " + quoted(p.node_id) +
                 " cannot be a prerequisite: a terminal ends the run",
             p.pointer);
    }
    if (occurrences.size() > 1) {
      reject(codes::kDuplicatePrerequisite,
             "prerequisite " + quoted(p.node_id) + " is listed twice", occurrences[1]->pointer);
    }
    if (!accepted) {
      invalid.insert(n.node_id);
      continue;
    }
    edges[n.node_id].push_back(p.node_id);
    auto prior = tool_of.find(p.node_id);
    auto current = tool_of.find(n.node_id);
    if (prior != tool_of.end() && current != tool_of.end()) {  // both bound
      check_argument_matches(c, p, *prior->second, *current->second);
    }
  }
}

// A terminal node: not required, legal, the only one producing its result.
void check_terminal(Compilation& c, const Node& n,
                    std::map<std::string, std::string>& terminal_owner) {
  if (n.required) {
    c.add(codes::kRequiredTerminal, "terminal node " + quoted(n.node_id) + " cannot be required",
          n.pointer + "/required");
  }
  const auto& legal = c.request.legal_terminals;
  if (legal && std::find(legal->begin(), legal->end(), *n.terminal_result) == legal->end()) {
    c.add(codes::kIllegalTerminal,
          "terminal result " + *n.terminal_result + " is not one of the legal terminals",
          n.pointer + "/terminal_result");
  }
  if (auto [it, fresh] = terminal_owner.emplace(*n.terminal_result, n.node_id); !fresh) {
    c.add(codes::kDuplicateTerminal,
          "terminal result " + *n.terminal_result + " is already produced by node " +
              quoted(it->second),
          n.pointer + "/terminal_result");
  }
}

// The terminal results a tool can return, when its descriptor says (nothing when it does not):
// the `const`/`enum` of its output schema's terminal_result, which the boundary holds every result
// to; for a terminal control served by the terminal recorder (a terminal-class tool of no MCP
// server), also those of a required terminal_result argument, which it records as given.
std::optional<std::vector<std::string>> returnable(const tools::ToolDescriptor& t) {
  const auto values = [](const Value* schema) -> std::optional<std::vector<std::string>> {
    if (schema == nullptr || !schema->is_object()) return std::nullopt;
    std::vector<std::string> out;
    if (const Value* one = schema->find("const")) {
      if (one->is_string()) out.push_back(one->as_string());
      return out;
    }
    const Value* some = schema->find("enum");
    if (some == nullptr || !some->is_array()) return std::nullopt;
    for (const auto& v : some->as_array()) {
      if (v.is_string()) out.push_back(v.as_string());
    }
    return out;
  };
  if (auto out = values(argument(t.output_schema, "terminal_result").first)) return out;
  if (t.side_effect_class != tools::SideEffect::Terminal || !t.connector.is_null()) {
    return std::nullopt;
  }
  const auto [arg, required] = argument(t.input_schema, "terminal_result");
  return required ? values(arg) : std::nullopt;
}

// A terminal node whose tool can never return its terminal result could never be accepted: the
// run would end terminal_rejected (or out of budget) however the model behaved.
void check_terminal_result(Compilation& c, const Node& n, const tools::ToolDescriptor& t) {
  const auto can = returnable(t);
  if (!can || std::find(can->begin(), can->end(), *n.terminal_result) != can->end()) return;
  std::string listed;
  for (const auto& r : *can) listed += (listed.empty() ? "" : ", ") + r;
  c.add(codes::kUnreturnableTerminal,
        "terminal result " + *n.terminal_result + " can never be returned by " + t.ref() +
            ", whose terminal_result is " + (can->empty() ? "never a string" : "one of: " + listed),
        n.pointer + "/terminal_result");
}

// Cycles over the accepted edges: each is one fault, reported at its first node. A node that
// depends on a cycle or on a node with a rejected prerequisite can never run either (G005, G006
// for a terminal, G007 for a required node), unless it is `unbound` (its tool did not resolve, or
// one it depends on did: that fault is reported already). Returns every node that can never run.
std::set<std::string> check_reachability(Compilation& c, const Edges& edges,
                                         const std::set<std::string>& invalid,
                                         const std::set<std::string>& unbound) {
  std::vector<std::string> order;
  for (const auto& n : c.source.nodes) order.push_back(n.node_id);
  std::set<std::string> cyclic;
  for (const auto& component : find_cycles(order, edges)) {
    std::string members;
    for (const auto& m : component) {
      members += (members.empty() ? "" : ", ") + m;
      cyclic.insert(m);
    }
    c.add(codes::kCycle, "prerequisites form a cycle: " + members,
          c.by_id[component.front()]->pointer + "/prerequisites");
  }
  std::set<std::string> stuck = cyclic;
  stuck.insert(invalid.begin(), invalid.end());
  const std::set<std::string> stranded = depends_on_any(edges, stuck);
  for (const auto& n : c.source.nodes) {
    if (stranded.count(n.node_id) == 0 || unbound.count(n.node_id) != 0) continue;
    const char* code = n.terminal_result ? codes::kUnreachableTerminal
                       : n.required      ? codes::kUnreachableRequired
                                         : codes::kUnreachableNode;
    c.add(code,
          "node " + quoted(n.node_id) +
              " can never run: it depends on a prerequisite cycle or on a node whose "
              "prerequisites are rejected",
          n.pointer + "/prerequisites");
  }
  stuck.insert(stranded.begin(), stranded.end());
  return stuck;
}

// Every terminal that can run depends, through its prerequisites, on every required node (G006
// otherwise). A terminal missing a required node that can never run itself is left to that
// node's own fault.
void check_terminal_gating(Compilation& c, const Edges& edges, const std::set<std::string>& stuck,
                           const std::set<std::string>& unbound) {
  std::vector<std::string> required;
  for (const auto& n : c.source.nodes) {
    if (n.required) required.push_back(n.node_id);
  }
  for (const auto& n : c.source.nodes) {
    if (!n.terminal_result || n.required || stuck.count(n.node_id) != 0 ||
        unbound.count(n.node_id) != 0) {
      continue;
    }
    const std::set<std::string> before = prerequisites_of(edges, n.node_id);
    std::string missing;
    bool all_can_run = true;
    for (const auto& r : required) {
      if (before.count(r) != 0) continue;
      missing += (missing.empty() ? "" : ", ") + r;
      all_can_run = all_can_run && stuck.count(r) == 0;
    }
    if (missing.empty() || !all_can_run) continue;
    c.add(codes::kUnreachableTerminal,
          "terminal node " + quoted(n.node_id) + " is not gated by required node(s) " + missing +
              ": it does not depend on them through its prerequisites",
          n.pointer + "/prerequisites");
  }
}

void check_graph(Compilation& c) {
  std::map<std::string, const tools::ToolDescriptor*> tool_of;
  for (const auto& b : c.bound) tool_of[b.node->node_id] = b.tool;
  for (const auto& n : c.source.nodes) c.by_id[n.node_id] = &n;

  Edges& edges = c.edges;  // node -> the prerequisites that passed the per-edge checks
  std::set<std::string> invalid;
  std::map<std::string, std::string> terminal_owner;
  for (const auto& n : c.source.nodes) {
    check_prerequisites(c, n, tool_of, edges, invalid);
    if (n.terminal_result) check_terminal(c, n, terminal_owner);
    if (auto t = tool_of.find(n.node_id); n.terminal_result && t != tool_of.end()) {
      check_terminal_result(c, n, *t->second);
    }
  }
  if (terminal_owner.empty()) {
    c.add(codes::kNoTerminal, "the graph has no terminal node (no terminal_result)",
          "/graph/nodes");
  }
  if (c.request.legal_terminals) {
    for (const auto& t : *c.request.legal_terminals) {
      if (terminal_owner.count(t) == 0) {
        c.add(codes::kLegalTerminalMissing, "legal terminal " + t + " has no terminal node",
              "/graph/nodes");
      }
    }
  }
  // Nodes whose tool did not resolve, and those that depend on one, are left to that fault.
  std::set<std::string> unbound;
  for (const auto& n : c.source.nodes) {
    if (tool_of.count(n.node_id) == 0) unbound.insert(n.node_id);
  }
  const std::set<std::string> downstream = depends_on_any(edges, unbound);
  unbound.insert(downstream.begin(), downstream.end());
  check_terminal_gating(c, edges, check_reachability(c, edges, invalid, unbound), unbound);
}

void check_capabilities(Compilation& c) {
  if (!c.request.capabilities) return;
  const auto& granted = *c.request.capabilities;
  std::set<std::string> reported;
  for (const auto& b : c.bound) {
    for (const auto& cap : b.tool->required_capabilities) {
      if (std::find(granted.begin(), granted.end(), cap) != granted.end()) continue;
      if (!reported.insert(cap).second) continue;
      c.add(codes::kCapabilityNotGranted,
            "capability " + quoted(cap) + " needed by " + b.tool->ref() +
                " is outside the granted envelope",
            b.node->pointer + "/tool_ref");
    }
  }
}

// A001/A002 for each bound node, A003/A006/A007 for the policies; whether a required artifact has
// a producer the terminal is gated by (A004/A005) only over a graph without faults.
void check_artifacts(Compilation& c, bool graph_clean) {
  const auto& s = c.source;
  const std::set<std::string> declared(s.declared_artifact_ids.begin(),
                                       s.declared_artifact_ids.end());
  auto& producers = c.producers;
  for (const auto& b : c.bound) {
    const Node& n = *b.node;
    for (std::size_t i = 0; i < n.produces.size(); ++i) {
      const std::string& a = n.produces[i];
      const std::string where = n.pointer + "/produces";
      const bool is_declared = declared.count(a) != 0;
      const bool may = b.tool->may_produce(a);
      if (!is_declared) {
        c.add(codes::kUndeclaredProduced,
              "node " + quoted(n.node_id) + " produces undeclared artifact " + quoted(a), where);
      }
      if (!may) {
        const std::string why = b.tool->produced_artifact_ids
                                    ? " does not list it in produced_artifact_ids"
                                    : " is " + std::string(tools::name(b.tool->side_effect_class)) +
                                          " and lists no produced_artifact_ids";
        c.add(codes::kToolCannotProduce,
              "node " + quoted(n.node_id) + " cannot produce " + quoted(a) + ": " + b.tool->ref() +
                  why,
              where);
      }
      if (is_declared && may) producers[a].insert(n.node_id);
    }
  }
  std::map<std::string, const Node*> terminal_node;
  for (const auto& n : s.nodes) {
    if (n.terminal_result) terminal_node[*n.terminal_result] = &n;
  }
  for (const auto& t : s.required_by_terminal) {
    auto owner = terminal_node.find(t.terminal_result);
    if (owner == terminal_node.end()) {
      c.add(codes::kUnknownArtifactTerminal, "no node has terminal result " + t.terminal_result,
            t.pointer);
      continue;
    }
    // Over a graph without faults, its accepted edges are every prerequisite.
    const std::set<std::string> before =
        graph_clean ? prerequisites_of(c.edges, owner->second->node_id) : std::set<std::string>{};
    for (const auto& a : t.artifact_ids) {
      if (declared.count(a) == 0) {
        c.add(codes::kUndeclaredRequired,
              "terminal " + t.terminal_result + " requires undeclared artifact " + quoted(a),
              t.pointer);
        continue;
      }
      if (!graph_clean) continue;
      auto it = producers.find(a);
      if (it == producers.end()) {
        c.add(
            codes::kArtifactNoProducer,
            "terminal " + t.terminal_result + " requires " + quoted(a) + " but no node produces it",
            t.pointer);
        continue;
      }
      bool gated = false;
      for (const auto& p : it->second) {
        if (c.by_id[p]->required || before.count(p) != 0) {
          c.gated[a].insert(p);
          gated = true;
        }
      }
      if (!gated) {
        c.add(codes::kArtifactNotGated,
              "terminal " + t.terminal_result + " requires " + quoted(a) +
                  " but no producer of it is required or a prerequisite of node " +
                  quoted(owner->second->node_id),
              t.pointer);
      }
    }
  }
}

Value lower(const Compilation& c, const std::string& source_sha256) {
  const auto& s = c.source;
  json::Array nodes;
  json::Object terminal_map;
  std::set<std::string> capabilities;
  for (const auto& b : c.bound) {
    const Node& n = *b.node;
    const tools::ToolDescriptor& t = *b.tool;
    json::Array pre;
    for (const auto& p : n.prerequisites) {
      json::Array matches;
      for (const auto& m : p.matches) {
        matches.push_back(
            json::Object{{"prerequisite_argument", m.prior}, {"current_argument", m.current}});
      }
      pre.push_back(json::Object{{"node_id", p.node_id}, {"argument_matches", std::move(matches)}});
    }
    capabilities.insert(t.required_capabilities.begin(), t.required_capabilities.end());
    if (n.terminal_result) terminal_map.push_back({n.node_id, *n.terminal_result});
    json::Value descriptor = tools::to_json(t);
    nodes.push_back(json::Object{
        {"node_id", n.node_id},
        {"model_tool_name", t.model_tool_name},
        {"description", t.description},
        {"input_schema", t.input_schema},
        {"output_schema", t.output_schema},
        {"binding", json::Object{{"tool_id", t.tool_id},
                                 {"tool_version", t.version},
                                 {"descriptor_sha256", t.descriptor_sha256},
                                 {"implementation_id", t.implementation_id}}},
        {"prerequisites", std::move(pre)},
        {"required", n.required},
        {"terminal_result", n.terminal_result ? Value(*n.terminal_result) : Value(nullptr)},
        {"required_capabilities",
         json::Array(t.required_capabilities.begin(), t.required_capabilities.end())},
        {"produced_artifact_ids", json::Array(n.produces.begin(), n.produces.end())},
        {"side_effect_class", tools::name(t.side_effect_class)},
        {"idempotency", tools::name(t.idempotency)},
        {"timeout_ms", t.timeout_ms},
        {"output_policy", *descriptor.find("output_policy")},
    });
    if (!t.connector.is_null()) nodes.back().set("connector", t.connector);
    if (t.produced_artifact_ids) {  // the descriptor's list, so its digest can be recomputed
      nodes.back().set(
          "descriptor_produced_artifact_ids",
          json::Array(t.produced_artifact_ids->begin(), t.produced_artifact_ids->end()));
    }
  }
  json::Array required_by_terminal;
  for (const auto& t : s.required_by_terminal) {
    required_by_terminal.push_back(
        json::Object{{"terminal_result", t.terminal_result},
                     {"artifact_ids", json::Array(t.artifact_ids.begin(), t.artifact_ids.end())}});
  }
  Value plan = json::Object{
      {"schema_version", "1.0"},
      {"kind", kPlanKind},
      {"harness_id", s.harness_id},
      {"harness_version", s.harness_version},
      {"source_sha256", source_sha256},
      {"stage_kind_ids", json::Array(s.stage_kind_ids.begin(), s.stage_kind_ids.end())},
      {"model_profile", json::Object{{"profile_id", s.model_profile_id}}},
      {"prompt_policy", prompt_json(s)},
      {"budgets", budgets_json(s.budgets)},
      {"context_policy", context_json(s.context)},
      {"nodes", std::move(nodes)},
      {"required_capabilities", json::Array(capabilities.begin(), capabilities.end())},
      {"terminal_result_map", std::move(terminal_map)},
      {"artifact_policy",
       json::Object{{"declared_artifact_ids",
                     json::Array(s.declared_artifact_ids.begin(), s.declared_artifact_ids.end())},
                    {"required_by_terminal", std::move(required_by_terminal)}}},
      {"compiler_identity",
       json::Object{
           {"name", "mf-compile"}, {"version", "0.1.0"}, {"build_id", "mf.compiler.lowering.v1"}}},
  };
  if (s.projection) {
    Value projection = projection_json(*s.projection);
    projection.set("catalog_sha256", c.projection_sha256);
    plan.set("projection", std::move(projection));
  }
  plan.set("compiled_sha256", plan_digest(plan));
  return plan;
}

// Deterministic order inside a phase: by pointer, then code, then message.
void sort_diagnostics(diag::Diagnostics::iterator begin, diag::Diagnostics::iterator end) {
  std::stable_sort(begin, end, [](const diag::Diagnostic& a, const diag::Diagnostic& b) {
    return std::tie(a.pointer, a.code, a.message) < std::tie(b.pointer, b.code, b.message);
  });
}

}  // namespace

const std::vector<std::string>& phases() {
  static const std::vector<std::string> names = {"request",    "parse",    "schema",
                                                 "resolution", "graph",    "capability",
                                                 "artifact",   "lowering", "output"};
  return names;
}

Result<json::Value> parse_source(std::string_view text, Format format) {
  if (format == Format::Yaml) {
    yaml::ReadLimits limits;
    limits.max_bytes = kMaxSourceBytes;
    return yaml::parse_object(text, limits);
  }
  json::ReadLimits limits;
  limits.max_bytes = kMaxSourceBytes;
  limits.max_depth = 32;
  limits.max_entries = 10000;
  limits.max_string_bytes = 64 << 10;
  return json::parse_object(text, limits);
}

CompileResult compile(const CompileRequest& request) {
  CompileResult result;
  Compilation c{request, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}};
  // The diagnostics of each phase run, in phase order; each span is sorted on its own.
  struct Span {
    const char* phase;
    std::size_t begin, end;
  };
  std::vector<Span> spans;
  auto run = [&](const char* phase, const auto& check) {
    const std::size_t begin = c.ds.size();
    check();
    spans.push_back({phase, begin, c.ds.size()});
    return begin == c.ds.size();
  };
  auto fail = [&](const char* phase) {
    result.catalog_snapshots = std::move(c.snapshots);
    if (spans.empty()) spans.push_back({phase, 0, c.ds.size()});
    result.failure_phase = phase;
    bool named = false;
    for (const auto& span : spans) {
      sort_diagnostics(c.ds.begin() + static_cast<std::ptrdiff_t>(span.begin),
                       c.ds.begin() + static_cast<std::ptrdiff_t>(span.end));
      if (span.begin != span.end && !named) {
        result.failure_phase = span.phase;
        named = true;
      }
    }
    result.diagnostics = std::move(c.ds);
    return result;
  };
  auto source = read_source(request.source);
  if (!source) {
    c.ds = source.take_diagnostics();
    return fail("schema");
  }
  c.source = std::move(*source);
  check_request_against_source(c);
  if (!c.ds.empty()) return fail("schema");
  // The product's source digest covers the source alone; Millforge's also what resolution found,
  // so in its form a rejected compilation has none.
  const bool millforge = request.form == PlanForm::MillforgeV1;
  if (!millforge) result.source_sha256 = json::canonical_digest(semantic_payload(c.source));

  // Resolution, graph, capability and artifact faults are reported together, as Millforge does,
  // unless resolution cannot go on; the earliest phase with a fault names the failure.
  bool go_on = true;
  run("resolution", [&] { go_on = resolve(c); });
  if (!go_on) return fail("resolution");
  const bool graph_clean = run("graph", [&] { check_graph(c); });
  run("capability", [&] { check_capabilities(c); });
  run("artifact", [&] { check_artifacts(c, graph_clean); });
  if (!c.ds.empty()) return fail("artifact");

  Value plan;
  if (millforge) {
    Accepted accepted{c.source, {}, c.producers, c.gated};
    for (const auto& b : c.bound) accepted.bound.emplace_back(b.node, b.tool);
    result.source_sha256 = millforge_source_sha256(accepted);
    plan = millforge_lower(accepted, result.source_sha256);
  } else {
    plan = lower(c, result.source_sha256);
  }
  // The emitted bytes go back through the loader every consumer uses before they are returned.
  std::string bytes = millforge ? millforge_plan_bytes(plan) : json::canonical_file(plan);
  if (auto reloaded = millforge ? load_millforge_plan(bytes) : load_plan(bytes); !reloaded) {
    for (const auto& d : reloaded.diagnostics()) {
      c.add(codes::kLoweringInvariant, "lowered plan fails its own check: " + d.message, d.pointer);
    }
    return fail("lowering");
  }
  result.ok = true;
  result.catalog_snapshots = std::move(c.snapshots);
  result.compiled_sha256 = plan.find("compiled_sha256")->as_string();
  result.plan = std::move(plan);
  result.plan_bytes = std::move(bytes);
  return result;
}

}  // namespace mf::harness
