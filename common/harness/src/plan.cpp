// The plan loader of plan.hpp: the digest recomputed and every invariant checked, so a consumer
// never acts on a plan the compiler would not have written.
#include "mf/harness/plan.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "graph.hpp"
#include "mf/diag/codes.hpp"
#include "mf/harness/millforge.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/fields.hpp"
#include "mf/json/pointer.hpp"
#include "mf/json/reader.hpp"
#include "mf/schema/schema.hpp"
#include "mf/tools/catalog.hpp"
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
  std::optional<std::set<std::string>> may_produce;  // the descriptor's list, when it has one
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

namespace {

// An integer member of `r` within [low, high].
void bounded(FieldReader& r, const char* key, std::int64_t low, std::int64_t high) {
  if (auto v = r.integer(key); v && (*v < low || *v > high)) {
    r.add(diag::error(
        codes::kPlanInvalid,
        std::string(key) + " must be within " + std::to_string(low) + ".." + std::to_string(high),
        r.pointer_of(key)));
  }
}

// The prompt, budget and context policies, with the bounds the compiler admits (a plan sealed
// anew after an edit must not run with a budget the source language refuses).
void read_policies(FieldReader& f) {
  if (const Value* prompt = f.object("prompt_policy")) {
    FieldReader r(*prompt, f.pointer_of("prompt_policy"));
    r.string("policy_id");
    r.string("system_instructions");
    r.boolean("include_request_context");
    r.reject_unknown({"policy_id", "system_instructions", "include_request_context"});
    for (auto& d : r.take()) f.add(std::move(d));
  }
  if (const Value* budgets = f.object("budgets")) {
    FieldReader r(*budgets, f.pointer_of("budgets"));
    bounded(r, "max_iterations", 1, 256);
    for (const char* key : {"max_validation_retries", "max_tool_errors",
                            "max_prerequisite_violations", "max_premature_terminal_attempts"}) {
      bounded(r, key, 1, 64);
    }
    if (r.optional("max_tool_calls_per_reply") != nullptr) {
      bounded(r, "max_tool_calls_per_reply", 1, kMaxToolCallsPerReply);
    }
    r.reject_unknown({"max_iterations", "max_validation_retries", "max_tool_errors",
                      "max_prerequisite_violations", "max_premature_terminal_attempts",
                      "max_tool_calls_per_reply"});
    for (auto& d : r.take()) f.add(std::move(d));
  }
  if (const Value* context = f.object("context_policy")) {
    FieldReader r(*context, f.pointer_of("context_policy"));
    if (auto id = r.string("strategy_id"); id && *id != "forge.tiered.v1") {
      r.add(diag::error(codes::kPlanInvalid, "strategy_id must be forge.tiered.v1",
                        r.pointer_of("strategy_id")));
    }
    bounded(r, "budget_tokens", 256, 1000000);
    bounded(r, "keep_recent_iterations", 0, 64);
    if (const Value* t = r.array("phase_thresholds")) {
      const auto& items = t->as_array();
      bool ok = items.size() == 3;
      for (std::size_t i = 0; ok && i < items.size(); ++i) {
        ok = items[i].is_number() && items[i].as_number() > 0 && items[i].as_number() <= 1 &&
             (i == 0 || items[i - 1].as_number() <= items[i].as_number());
      }
      if (!ok) {
        r.add(diag::error(codes::kPlanInvalid,
                          "phase_thresholds must be three non-decreasing numbers in (0, 1]",
                          r.pointer_of("phase_thresholds")));
      }
    }
    if (const Value* w = r.array("warning_thresholds", false); w && !warning_thresholds(*w)) {
      r.add(diag::error(codes::kPlanInvalid, kWarningThresholdsRule,
                        r.pointer_of("warning_thresholds")));
    }
    r.reject_unknown({"strategy_id", "budget_tokens", "keep_recent_iterations", "phase_thresholds",
                      "warning_thresholds"});
    for (auto& d : r.take()) f.add(std::move(d));
  }
}

// The top-level fields, checked one by one; returns required_capabilities.
std::set<std::string> read_top_level(FieldReader& f) {
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
  read_policies(f);
  f.object("compiler_identity");
  return string_set(f, "required_capabilities", valid_capability);
}

// Reads the nodes one field at a time: sorted unique ids, model names and bindings bound once,
// admissible schemas.
class NodeReader {
 public:
  PlanNode read(const Value& v, std::string pointer) {
    PlanNode pn;
    pn.pointer = std::move(pointer);
    FieldReader n(v, pn.pointer);
    if (auto id = n.string("node_id")) pn.id = *id;
    if (!valid_node_id(pn.id))
      n.add(diag::error(codes::kPlanInvalid, "node_id is malformed", n.pointer_of("node_id")));
    if (previous_ && !(*previous_ < pn.id)) {
      n.add(diag::error(codes::kPlanInvalid, "nodes are not sorted by unique node_id",
                        n.pointer_of("node_id")));
    }
    previous_ = pn.id;
    if (auto name = n.string("model_tool_name"); name && !model_names_.insert(*name).second) {
      n.add(diag::error(codes::kPlanInvalid, "model_tool_name " + *name + " is bound twice",
                        n.pointer_of("model_tool_name")));
    }
    if (const Value* b = n.object("binding")) read_binding(*b, n);
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
    if (n.optional("descriptor_produced_artifact_ids") != nullptr) {
      pn.may_produce = string_set(n, "descriptor_produced_artifact_ids", valid_node_id);
    }
    n.string("side_effect_class");
    n.string("idempotency");
    n.integer("timeout_ms");
    n.object("output_policy");
    n.string("description");
    faults_ = n.take();
    return pn;
  }
  // The faults of the last node read.
  diag::Diagnostics take() { return std::move(faults_); }

 private:
  void read_binding(const Value& b, FieldReader& n) {
    FieldReader bf(b, n.pointer_of("binding"));
    auto tool = bf.string("tool_id");
    auto tv = bf.integer("tool_version");
    bf.string("descriptor_sha256");
    bf.string("implementation_id");
    if (tool && tv && !bindings_.insert(*tool + "@" + std::to_string(*tv)).second) {
      bf.add(diag::error(codes::kPlanInvalid, "tool " + *tool + " is bound twice", bf.pointer()));
    }
    for (auto& d : bf.take()) n.add(std::move(d));
  }

  std::optional<std::string> previous_;
  std::set<std::string> model_names_, bindings_;
  diag::Diagnostics faults_;
};

// The invariants across fields, each violation one MF-L002.
class Invariants {
 public:
  Invariants(const Value& plan, const std::vector<PlanNode>& nodes) : plan_(plan), nodes_(nodes) {
    for (const auto& n : nodes) by_id_[n.id] = &n;
  }

  diag::Diagnostics check(const std::set<std::string>& top_caps) {
    check_nodes(top_caps);
    check_acyclic();
    check_terminal_map();
    check_artifact_policy();
    return std::move(faults_);
  }

 private:
  void bad(std::string msg, std::string pointer) {
    faults_.push_back(diag::error(codes::kPlanInvalid, std::move(msg), std::move(pointer)));
  }

  // Prerequisites known, not self and not terminal; capabilities listed at the top level.
  void check_nodes(const std::set<std::string>& top_caps) {
    std::set<std::string> caps_union;
    for (const auto& n : nodes_) {
      if (n.terminal) {
        ++terminals_;
        if (n.required) bad("terminal node " + n.id + " is required", n.pointer);
      }
      for (const auto& p : n.prerequisites) {
        auto it = by_id_.find(p);
        if (p == n.id || it == by_id_.end()) {
          bad("node " + n.id + " has an unknown or self prerequisite " + p, n.pointer);
        } else if (it->second->terminal) {
          bad("node " + n.id + " has the terminal " + p + " as a prerequisite", n.pointer);
        }
      }
      for (const auto& c : n.capabilities) {
        caps_union.insert(c);
        if (top_caps.count(c) == 0) bad("capability " + c + " missing at top level", n.pointer);
      }
      produced_.insert(n.produces.begin(), n.produces.end());
      for (const auto& a : n.produces) {
        if (n.may_produce && n.may_produce->count(a) == 0) {
          bad("node " + n.id + " produces " + a + ", which its descriptor does not list",
              n.pointer);
        }
      }
    }
    if (terminals_ == 0) bad("the plan has no terminal node", "/nodes");
    if (caps_union != top_caps)
      bad("required_capabilities is not the union over nodes", "/required_capabilities");
  }

  void check_acyclic() {
    std::vector<std::string> order;
    Edges edges;
    for (const auto& n : nodes_) {
      order.push_back(n.id);
      for (const auto& w : n.prerequisites) {
        if (by_id_.count(w) != 0) edges[n.id].push_back(w);
      }
    }
    if (const auto cycles = find_cycles(order, edges); !cycles.empty()) {
      const std::string& first = cycles.front().front();
      bad("prerequisites form a cycle through " + first, by_id_[first]->pointer);
    }
  }

  // terminal_result_map lists exactly the terminal nodes.
  void check_terminal_map() {
    const Value* map = plan_.find("terminal_result_map");
    if (map == nullptr || !map->is_object()) {
      bad("terminal_result_map must be an object", "/terminal_result_map");
      return;
    }
    std::size_t entries = 0;
    for (const auto& m : map->as_object()) {
      ++entries;
      auto it = by_id_.find(m.key);
      if (it == by_id_.end() || !it->second->terminal || !m.value.is_string() ||
          *it->second->terminal != m.value.as_string()) {
        bad("terminal_result_map entry " + m.key + " does not match its node",
            pointer_at("/terminal_result_map", m.key));
      }
    }
    if (entries != terminals_)
      bad("terminal_result_map does not list every terminal node", "/terminal_result_map");
  }

  // Produced artifacts declared; terminal-required ones declared and produced.
  void check_artifact_policy() {
    const Value* policy = plan_.find("artifact_policy");
    if (policy == nullptr || !policy->is_object()) {
      bad("artifact_policy must be an object", "/artifact_policy");
      return;
    }
    FieldReader pf(*policy, "/artifact_policy");
    const std::set<std::string> declared = string_set(pf, "declared_artifact_ids", valid_node_id);
    for (const auto& a : produced_) {
      if (declared.count(a) == 0)
        bad("produced artifact " + a + " is not declared", "/artifact_policy");
    }
    if (const Value* req = pf.array("required_by_terminal")) {
      for (std::size_t i = 0; i < req->as_array().size(); ++i) {
        FieldReader r(req->as_array()[i], pointer_at("/artifact_policy/required_by_terminal", i));
        r.string("terminal_result");
        for (const auto& a : string_set(r, "artifact_ids", valid_node_id)) {
          if (declared.count(a) == 0 || produced_.count(a) == 0) {
            bad("terminal-required artifact " + a + " is not declared and produced", r.pointer());
          }
        }
        for (auto& d : r.take()) pf.add(std::move(d));
      }
    }
    for (auto d : pf.take()) {
      d.code = codes::kPlanInvalid;
      faults_.push_back(std::move(d));
    }
  }

  const Value& plan_;
  const std::vector<PlanNode>& nodes_;
  std::map<std::string, const PlanNode*> by_id_;
  std::set<std::string> produced_;
  std::size_t terminals_ = 0;
  diag::Diagnostics faults_;
};

}  // namespace

Result<std::optional<PlanProjection>> plan_projection(const json::Value& plan) {
  const Value* member = plan.is_object() ? plan.find("projection") : nullptr;
  if (member == nullptr) return std::optional<PlanProjection>();
  FieldReader f(*member, "/projection");
  PlanProjection p;
  if (auto m = f.string("mode")) {
    if (*m == "all_tools") {
      p.mode = prompt::Mode::AllTools;
    } else if (*m != "compiled") {
      f.add(diag::error(codes::kPlanInvalid, "mode must be compiled or all_tools",
                        f.pointer_of("mode")));
    }
  }
  bounded(f, "budget_tokens", 1, 10000000);
  bounded(f, "candidate_limit", 1, 256);
  auto claimed = f.string("catalog_sha256");
  std::vector<prompt::Unit> declared;
  if (const Value* units = f.array("units")) {
    auto read = prompt::units_from_json(*units, "/projection/units");
    if (read) {
      declared = std::move(*read);
    } else {
      for (auto& d : read.take_diagnostics()) f.add(std::move(d));
    }
  }
  f.reject_unknown({"mode", "budget_tokens", "candidate_limit", "units", "catalog_sha256"});
  std::vector<prompt::ToolSource> tools;
  const Value* nodes = plan.find("nodes");
  for (std::size_t i = 0;
       f.ok() && nodes != nullptr && nodes->is_array() && i < nodes->as_array().size(); ++i) {
    FieldReader n(nodes->as_array()[i], pointer_at("/nodes", i));
    prompt::ToolSource t;
    auto name = n.string("model_tool_name");
    auto description = n.string("description");
    const Value* schema = n.object("input_schema");
    for (const auto& c : string_set(n, "required_capabilities", valid_capability)) {
      t.capabilities.push_back(c);
    }
    if (name && description && schema != nullptr) {
      t.connector = nodes->as_array()[i].find("connector") != nullptr;
      t.name = *name;
      t.description = *description;
      t.input_schema = *schema;
      tools.push_back(std::move(t));
    }
    for (auto& d : n.take()) f.add(std::move(d));
  }
  if (f.ok()) {
    auto catalog = projection_catalog(std::move(declared), tools);
    if (!catalog) {
      for (auto& d : catalog.take_diagnostics()) f.add(std::move(d));
    } else if (claimed && catalog->sha256() != *claimed) {
      f.add(diag::error(codes::kPlanInvalid,
                        "catalog_sha256 is not the digest of the units over the nodes' tools (" +
                            catalog->sha256() + ")",
                        f.pointer_of("catalog_sha256")));
    } else {
      p.catalog = std::move(*catalog);
    }
  }
  if (!f.ok()) {
    auto ds = f.take();
    for (auto& d : ds) {
      d.message = "projection: " + d.message +
                  (d.code == codes::kPlanInvalid ? std::string() : " (" + d.code + ")");
      d.code = codes::kPlanInvalid;
    }
    return ds;
  }
  p.budget_tokens = *member->find("budget_tokens")->as_exact_int();
  p.candidate_limit = *member->find("candidate_limit")->as_exact_int();
  return std::optional<PlanProjection>(std::move(p));
}

Status check_plan(const json::Value& plan) {
  FieldReader f(plan, "");
  const std::set<std::string> top_caps = read_top_level(f);
  std::vector<PlanNode> nodes;
  if (const Value* list = f.array("nodes")) {
    NodeReader reader;
    for (std::size_t i = 0; i < list->as_array().size(); ++i) {
      nodes.push_back(reader.read(list->as_array()[i], pointer_at("/nodes", i)));
      for (auto& d : reader.take()) f.add(std::move(d));
    }
  }
  diag::Diagnostics ds = f.take();
  for (auto& d : ds) d.code = codes::kPlanInvalid;
  if (!ds.empty()) return ds;
  ds = Invariants(plan, nodes).check(top_caps);
  if (!ds.empty()) return ds;
  if (auto projection = plan_projection(plan); !projection) return projection.take_diagnostics();
  // Each node's descriptor must still be the one its binding pins: a description or schema edited
  // after compilation and sealed anew is MF-R003, as a catalog entry with a stale digest would be.
  // A member the catalog rule refuses otherwise breaks the plan (MF-L002, the rule's code named).
  // After the projection: a projected plan's units stand on these descriptors, and its
  // catalog_sha256 names an edit to one first.
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    auto descriptor =
        tools::plan_node_descriptor(plan.find("nodes")->as_array()[i], nodes[i].pointer);
    if (descriptor) continue;
    for (auto& d : descriptor.take_diagnostics()) {
      if (d.code != codes::kCatalogIdentity) {
        d.message += " (" + d.code + ")";
        d.code = codes::kPlanInvalid;
      }
      ds.push_back(std::move(d));
    }
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

namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// `path` as a shell word: as it is when it holds only characters no shell treats specially,
// else in single quotes.
std::string shell_word(std::string_view path) {
  const bool plain = !path.empty() && std::all_of(path.begin(), path.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
           std::string_view("@%+=:,./_-").find(c) != std::string_view::npos;
  });
  if (plain) return std::string(path);
  std::string out = "'";
  for (char c : path) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A YAML harness source among bytes that do not parse as a plan: named so, or not a JSON object
// and with a top-level line "kind: millforge_harness".
bool yaml_harness_source(std::string_view bytes, std::string_view path) {
  if (ends_with(path, ".yaml") || ends_with(path, ".yml")) return true;
  const auto first = bytes.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || bytes[first] == '{') return false;
  for (std::size_t at = 0; at < bytes.size();) {
    std::size_t end = bytes.find('\n', at);
    if (end == std::string_view::npos) end = bytes.size();
    std::string_view line = bytes.substr(at, end - at);
    if (line.rfind("kind:", 0) == 0 && line.find("millforge_harness") != std::string_view::npos &&
        line.find("compiled_millforge_harness") == std::string_view::npos) {
      return true;
    }
    at = end + 1;
  }
  return false;
}

}  // namespace

diag::Diagnostic harness_source_given(std::string_view path) {
  const std::string file = path.empty() || path == "-" ? "HARNESS" : shell_word(path);
  return diag::error(codes::kPlanInvalid,
                     "this is a harness source, not a compiled plan: compile it first with "
                     "`mf-compile " +
                         file + " -o -` (or `--out-dir DIR`) and give the plan it prints");
}

Result<json::Value> load_plan(std::string_view bytes, std::string_view path) {
  auto plan = json::parse_object(bytes);
  if (!plan) {
    if (yaml_harness_source(bytes, path)) return harness_source_given(path);
    return plan;
  }
  if (const Value* kind = plan->find("kind");
      kind != nullptr && kind->is_string() && kind->as_string() == "millforge_harness") {
    return harness_source_given(path);
  }
  if (is_millforge_plan(*plan)) {
    return diag::error(codes::kPlanInvalid,
                       "this is a plan in Millforge's form (millforge-v1), which mf-compile verify "
                       "checks but nothing runs: it lacks the output schemas and bounds the "
                       "runtime enforces; compile the harness without --emit to run it",
                       "/compiler_identity");
  }
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
