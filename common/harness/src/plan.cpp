#include "mf/harness/plan.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "mf/diag/codes.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/fields.hpp"
#include "mf/json/pointer.hpp"
#include "mf/json/reader.hpp"
#include "mf/schema/schema.hpp"
#include "mf/tools/catalog.hpp"
#include "graph.hpp"
#include "source.hpp"

namespace mf::harness {
namespace {

namespace codes = diag::codes;
using json::FieldReader;
using json::Value;

// Reads a list of strings; each must satisfy `valid` and appear once. Returns them as a set.
std::set<std::string> string_set(FieldReader& f, std::string_view key,
                                 bool (*valid)(std::string_view)) {
  std::set<std::string> out;
  const Value* a = f.array(key);
  if (a == nullptr) return out;
  for (std::size_t i = 0; i < a->as_array().size(); ++i) {
    const Value& e = a->as_array()[i];
    const std::string p = pointer_at(f.pointer_of(key), i);
    if (!e.is_string() || !valid(e.as_string())) {
      f.add(diag::error(codes::kPlanInvalid, std::string(key) + " holds a malformed entry", p));
    } else if (!out.insert(e.as_string()).second) {
      f.add(diag::error(codes::kPlanInvalid, std::string(key) + " repeats " + e.as_string(), p));
    } else if (i > 0 && a->as_array()[i - 1].is_string() &&
               !(a->as_array()[i - 1].as_string() < e.as_string())) {
      f.add(diag::error(codes::kPlanInvalid, std::string(key) + " is not sorted", p));
    }
  }
  return out;
}

bool valid_capability(std::string_view s) {
  return tools::valid_dotted_id(s);
}

struct PlanNode {
  std::string id;
  std::string pointer;
  bool required = false;
  std::optional<std::string> terminal;
  std::vector<std::string> prerequisites;
  std::set<std::string> capabilities;
  std::set<std::string> produces;
};

}  // namespace

std::string plan_digest(const json::Value& plan) {
  Value copy = plan;
  if (copy.is_object()) {
    auto& members = copy.as_object();
    members.erase(std::remove_if(members.begin(), members.end(),
                                 [](const json::Member& m) { return m.key == "compiled_sha256"; }),
                  members.end());
  }
  return json::canonical_digest(copy);
}

Status check_plan(const json::Value& plan) {
  FieldReader f(plan, "");
  auto version = f.string("schema_version");
  auto kind = f.string("kind");
  if ((version && *version != "1.0") || (kind && *kind != kPlanKind)) {
    f.add(diag::error(codes::kPlanInvalid, "not a compiled plan (schema_version 1.0, kind " +
                                               std::string(kPlanKind) + ")"));
  }
  if (auto id = f.string("harness_id"); id && !tools::valid_dotted_id(*id)) {
    f.add(diag::error(codes::kPlanInvalid, "harness_id is malformed", "/harness_id"));
  }
  if (auto v = f.integer("harness_version"); v && *v < 1) {
    f.add(diag::error(codes::kPlanInvalid, "harness_version must be positive", "/harness_version"));
  }
  for (const char* digest : {"source_sha256", "compiled_sha256"}) {
    if (auto d = f.string(digest);
        d && (d->size() != 64 || d->find_first_not_of("0123456789abcdef") != std::string::npos)) {
      f.add(diag::error(codes::kPlanInvalid, std::string(digest) + " is not a SHA-256 hex digest",
                        f.pointer_of(digest)));
    }
  }
  string_set(f, "stage_kind_ids", valid_node_id);
  f.object("model_profile");
  f.object("prompt_policy");
  f.object("budgets");
  f.object("context_policy");
  f.object("compiler_identity");
  const std::set<std::string> top_caps = string_set(f, "required_capabilities", valid_capability);

  std::vector<PlanNode> nodes;
  std::set<std::string> model_names, bindings;
  if (const Value* list = f.array("nodes")) {
    for (std::size_t i = 0; i < list->as_array().size(); ++i) {
      PlanNode pn;
      pn.pointer = pointer_at("/nodes", i);
      FieldReader n(list->as_array()[i], pn.pointer);
      if (auto id = n.string("node_id")) pn.id = *id;
      if (!valid_node_id(pn.id))
        n.add(diag::error(codes::kPlanInvalid, "node_id is malformed", n.pointer_of("node_id")));
      if (!nodes.empty() && !(nodes.back().id < pn.id)) {
        n.add(diag::error(codes::kPlanInvalid, "nodes are not sorted by unique node_id",
                          n.pointer_of("node_id")));
      }
      if (auto name = n.string("model_tool_name"); name && !model_names.insert(*name).second) {
        n.add(diag::error(codes::kPlanInvalid, "model_tool_name " + *name + " is bound twice",
                          n.pointer_of("model_tool_name")));
      }
      if (const Value* b = n.object("binding")) {
        FieldReader bf(*b, n.pointer_of("binding"));
        auto tool = bf.string("tool_id");
        auto tv = bf.integer("tool_version");
        bf.string("descriptor_sha256");
        bf.string("implementation_id");
        if (tool && tv && !bindings.insert(*tool + "@" + std::to_string(*tv)).second) {
          bf.add(
              diag::error(codes::kPlanInvalid, "tool " + *tool + " is bound twice", bf.pointer()));
        }
        for (auto& d : bf.take()) n.add(std::move(d));
      }
      for (const char* key : {"input_schema", "output_schema"}) {
        if (const Value* s = n.optional(key)) {
          if (Status ok = schema::admit(*s, codes::kPlanInvalid, n.pointer_of(key)); !ok) {
            for (const auto& d : ok.diagnostics()) n.add(d);
          }
        } else {
          n.add(diag::error(codes::kPlanInvalid, std::string("missing ") + key, n.pointer_of(key)));
        }
      }
      if (auto r = n.boolean("required")) pn.required = *r;
      if (const Value* t = n.optional("terminal_result"); t && t->is_string()) {
        pn.terminal = t->as_string();
      } else if (t == nullptr || !t->is_null()) {
        n.add(diag::error(codes::kPlanInvalid, "terminal_result must be a string or null",
                          n.pointer_of("terminal_result")));
      }
      if (const Value* pre = n.array("prerequisites")) {
        for (std::size_t j = 0; j < pre->as_array().size(); ++j) {
          FieldReader pf(pre->as_array()[j], pointer_at(n.pointer_of("prerequisites"), j));
          if (auto id = pf.string("node_id")) pn.prerequisites.push_back(*id);
          pf.array("argument_matches");
          for (auto& d : pf.take()) n.add(std::move(d));
        }
      }
      pn.capabilities = string_set(n, "required_capabilities", valid_capability);
      pn.produces = string_set(n, "produced_artifact_ids", valid_node_id);
      n.string("side_effect_class");
      n.string("idempotency");
      n.integer("timeout_ms");
      n.object("output_policy");
      n.string("description");
      for (auto& d : n.take()) f.add(std::move(d));
      nodes.push_back(std::move(pn));
    }
  }
  diag::Diagnostics ds = f.take();
  for (auto& d : ds) d.code = codes::kPlanInvalid;
  if (!ds.empty()) return ds;

  // Invariants across fields.
  auto bad = [&](std::string msg, std::string pointer) {
    ds.push_back(diag::error(codes::kPlanInvalid, std::move(msg), std::move(pointer)));
  };
  std::map<std::string, const PlanNode*> by_id;
  for (const auto& n : nodes) by_id[n.id] = &n;
  std::set<std::string> produced, caps_union;
  std::size_t terminals = 0;
  for (const auto& n : nodes) {
    if (n.terminal) {
      ++terminals;
      if (n.required) bad("terminal node " + n.id + " is required", n.pointer);
    }
    for (const auto& p : n.prerequisites) {
      auto it = by_id.find(p);
      if (p == n.id || it == by_id.end()) {
        bad("node " + n.id + " has an unknown or self prerequisite " + p, n.pointer);
      } else if (it->second->terminal) {
        bad("node " + n.id + " has the terminal " + p + " as a prerequisite", n.pointer);
      }
    }
    for (const auto& c : n.capabilities) {
      caps_union.insert(c);
      if (top_caps.count(c) == 0) bad("capability " + c + " missing at top level", n.pointer);
    }
    produced.insert(n.produces.begin(), n.produces.end());
  }
  if (terminals == 0) bad("the plan has no terminal node", "/nodes");
  if (caps_union != top_caps)
    bad("required_capabilities is not the union over nodes", "/required_capabilities");
  // Acyclic.
  std::vector<std::string> order;
  Edges edges;
  for (const auto& n : nodes) {
    order.push_back(n.id);
    for (const auto& w : n.prerequisites) {
      if (by_id.count(w) != 0) edges[n.id].push_back(w);
    }
  }
  if (const auto cycles = find_cycles(order, edges); !cycles.empty()) {
    const std::string& first = cycles.front().front();
    bad("prerequisites form a cycle through " + first, by_id[first]->pointer);
  }
  // Terminal map = terminal nodes.
  if (const Value* map = plan.find("terminal_result_map"); map && map->is_object()) {
    std::size_t entries = 0;
    for (const auto& m : map->as_object()) {
      ++entries;
      auto it = by_id.find(m.key);
      if (it == by_id.end() || !it->second->terminal || !m.value.is_string() ||
          *it->second->terminal != m.value.as_string()) {
        bad("terminal_result_map entry " + m.key + " does not match its node",
            pointer_at("/terminal_result_map", m.key));
      }
    }
    if (entries != terminals)
      bad("terminal_result_map does not list every terminal node", "/terminal_result_map");
  } else {
    bad("terminal_result_map must be an object", "/terminal_result_map");
  }
  // Artifact policy: produced artifacts declared; terminal-required ones declared and produced.
  if (const Value* policy = plan.find("artifact_policy"); policy && policy->is_object()) {
    FieldReader pf(*policy, "/artifact_policy");
    const std::set<std::string> declared = string_set(pf, "declared_artifact_ids", valid_node_id);
    for (const auto& a : produced) {
      if (declared.count(a) == 0)
        bad("produced artifact " + a + " is not declared", "/artifact_policy");
    }
    if (const Value* req = pf.array("required_by_terminal")) {
      for (std::size_t i = 0; i < req->as_array().size(); ++i) {
        FieldReader r(req->as_array()[i], pointer_at("/artifact_policy/required_by_terminal", i));
        r.string("terminal_result");
        for (const auto& a : string_set(r, "artifact_ids", valid_node_id)) {
          if (declared.count(a) == 0 || produced.count(a) == 0) {
            bad("terminal-required artifact " + a + " is not declared and produced", r.pointer());
          }
        }
        for (auto& d : r.take()) pf.add(std::move(d));
      }
    }
    for (auto d : pf.take()) {
      d.code = codes::kPlanInvalid;
      ds.push_back(std::move(d));
    }
  } else {
    bad("artifact_policy must be an object", "/artifact_policy");
  }
  if (!ds.empty()) return ds;
  return {};
}

Status verify_plan(const json::Value& plan) {
  const Value* claimed = plan.is_object() ? plan.find("compiled_sha256") : nullptr;
  if (claimed == nullptr || !claimed->is_string()) {
    return diag::error(codes::kPlanInvalid, "the plan has no compiled_sha256", "/compiled_sha256");
  }
  const std::string actual = plan_digest(plan);
  if (claimed->as_string() != actual) {
    return diag::error(codes::kPlanHash,
                       "compiled_sha256 does not verify: the plan hashes to " + actual +
                           " (it was changed after compilation)",
                       "/compiled_sha256");
  }
  return check_plan(plan);
}

Result<json::Value> load_plan(std::string_view bytes) {
  auto plan = json::parse_object(bytes);
  if (!plan) return plan;
  if (json::canonical_file(*plan) != bytes) {
    return diag::error(codes::kPlanInvalid,
                       "a plan file is canonical JSON (RFC 8785) ending in one newline; these "
                       "bytes are not");
  }
  if (Status ok = verify_plan(*plan); !ok) return ok.take_diagnostics();
  return plan;
}

std::string plan_file_name(const json::Value& plan) {
  const Value* id = plan.find("harness_id");
  const Value* version = plan.find("harness_version");
  const Value* sha = plan.find("compiled_sha256");
  std::string v =
      version && version->as_exact_int() ? std::to_string(*version->as_exact_int()) : "0";
  return (id ? id->as_string() : std::string("plan")) + "@" + v + "." +
         (sha ? sha->as_string() : std::string()) + ".compiled.json";
}

}  // namespace mf::harness
