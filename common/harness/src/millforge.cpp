// The millforge-v1 plan form (millforge.hpp): the source digest and the lowering of an accepted
// compilation into the plan document.
#include "millforge.hpp"

#include <algorithm>
#include <tuple>

#include "mf/diag/codes.hpp"
#include "mf/harness/millforge.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/json/fields.hpp"
#include "mf/json/millforge_form.hpp"
#include "mf/json/pointer.hpp"
#include "mf/json/reader.hpp"

namespace mf::harness {
namespace {

namespace codes = diag::codes;
using json::Value;

// Python floats in Millforge's models; every other number is an int.
const std::vector<std::string> kSourceFloats = {"/context/phase_thresholds",
                                                "/context/warning_thresholds"};
const std::vector<std::string> kPlanFloats = {"/context_policy/phase_thresholds",
                                              "/context_policy/warning_thresholds"};

json::Array strings(const auto& list) {
  json::Array out(list.begin(), list.end());
  std::sort(out.begin(), out.end(),
            [](const Value& a, const Value& b) { return a.as_string() < b.as_string(); });
  return out;
}

// Prerequisites by node_id, their argument matches by (prior, current), under Millforge's key for
// the prior argument (the semantic payload and the plan name it differently).
json::Array prerequisites(const Node& n, const char* prior_key) {
  std::vector<const Prerequisite*> pre;
  for (const auto& p : n.prerequisites) pre.push_back(&p);
  std::sort(pre.begin(), pre.end(),
            [](const Prerequisite* a, const Prerequisite* b) { return a->node_id < b->node_id; });
  json::Array out;
  for (const Prerequisite* p : pre) {
    std::vector<ArgumentMatch> matches = p->matches;
    std::sort(matches.begin(), matches.end(), [](const ArgumentMatch& a, const ArgumentMatch& b) {
      return std::tie(a.prior, a.current) < std::tie(b.prior, b.current);
    });
    json::Array m;
    for (const auto& x : matches) {
      m.push_back(json::Object{{prior_key, x.prior}, {"current_argument", x.current}});
    }
    out.push_back(json::Object{{"node_id", p->node_id}, {"argument_matches", std::move(m)}});
  }
  return out;
}

// What a Millforge plan and payload give for a descriptor: the snapshot's digest and input schema
// for a tool of a Millforge snapshot, the product's own otherwise; the artifacts it lists, or
// (listing none) those the node produces.
const std::string& descriptor_sha256(const tools::ToolDescriptor& t) {
  return t.snapshot ? t.snapshot->descriptor_sha256 : t.descriptor_sha256;
}
const Value& input_schema(const tools::ToolDescriptor& t) {
  return t.snapshot ? t.snapshot->input_schema : t.input_schema;
}
json::Array produced(const Node& n, const tools::ToolDescriptor& t) {
  return t.produced_artifact_ids ? strings(*t.produced_artifact_ids) : strings(n.produces);
}

Value binding(const tools::ToolDescriptor& t) {
  return json::Object{{"tool_id", t.tool_id},
                      {"tool_version", t.version},
                      {"descriptor_sha256", descriptor_sha256(t)},
                      {"implementation_id", t.implementation_id}};
}

std::vector<std::string> required_node_ids(const Source& s) {
  std::vector<std::string> out;
  for (const auto& n : s.nodes) {
    if (n.required) out.push_back(n.node_id);
  }
  return out;
}

std::set<std::string> capabilities(const Accepted& a) {
  std::set<std::string> out;
  for (const auto& [n, t] : a.bound) {
    out.insert(t->required_capabilities.begin(), t->required_capabilities.end());
  }
  return out;
}

json::Object terminal_map(const Accepted& a) {
  json::Object out;
  for (const auto& [n, t] : a.bound) {
    if (n->terminal_result) out.push_back({n->node_id, *n->terminal_result});
  }
  return out;
}

json::Array required_by_terminal(const Source& s) {
  std::vector<const Source::TerminalArtifacts*> list;
  for (const auto& t : s.required_by_terminal) list.push_back(&t);
  std::sort(list.begin(), list.end(),
            [](const auto* x, const auto* y) { return x->terminal_result < y->terminal_result; });
  json::Array out;
  for (const auto* t : list) {
    out.push_back(json::Object{{"terminal_result", t->terminal_result},
                               {"artifact_ids", strings(t->artifact_ids)}});
  }
  return out;
}

Value terminal_of(const Node& n) {
  return n.terminal_result ? Value(*n.terminal_result) : Value(nullptr);
}

}  // namespace

std::string millforge_source_sha256(const Accepted& a) {
  const Source& s = a.source;
  json::Array nodes;
  for (const auto& [n, t] : a.bound) {
    nodes.push_back(json::Object{
        {"node_id", n->node_id},
        {"required", n->required},
        {"terminal_result", terminal_of(*n)},
        {"prerequisites", prerequisites(*n, "prior_argument")},
        {"produces", strings(n->produces)},
        {"binding", binding(*t)},
        {"descriptor", json::Object{{"model_tool_name", t->model_tool_name},
                                    {"description", t->description},
                                    {"input_schema", input_schema(*t)},
                                    {"side_effect_class", tools::name(t->side_effect_class)},
                                    {"idempotency", tools::name(t->idempotency)},
                                    {"required_capabilities", strings(t->required_capabilities)},
                                    {"produced_artifact_ids", produced(*n, *t)}}},
    });
  }
  json::Array evidence;
  for (const auto& id : s.declared_artifact_ids) {  // sorted
    auto all = a.producers.find(id);
    auto gated = a.gated.find(id);
    evidence.push_back(json::Object{
        {"artifact_id", id},
        {"all_producer_node_ids", all == a.producers.end() ? json::Array{} : strings(all->second)},
        {"terminal_gated_producer_node_ids",
         gated == a.gated.end() ? json::Array{} : strings(gated->second)},
    });
  }
  const auto caps = capabilities(a);
  Value payload = json::Object{
      {"schema_version", "1.0"},
      {"kind", "millforge_harness"},
      {"harness_id", s.harness_id},
      {"harness_version", s.harness_version},
      {"stage_kind_ids", strings(s.stage_kind_ids)},
      {"model_profile", json::Object{{"profile_id", s.model_profile_id}}},
      {"prompt", prompt_json(s)},
      {"budgets", budgets_json(s.budgets)},
      {"context", context_json(s.context)},
      {"nodes", std::move(nodes)},
      {"required_node_ids", strings(required_node_ids(s))},
      {"required_capability_ids", strings(caps)},
      {"terminal_result_map", terminal_map(a)},
      {"artifacts", json::Object{{"declared_artifact_ids", strings(s.declared_artifact_ids)},
                                 {"required_by_terminal", required_by_terminal(s)},
                                 {"producer_evidence", std::move(evidence)}}},
  };
  return json::millforge_digest(payload, kSourceFloats);
}

Value millforge_lower(const Accepted& a, const std::string& source_sha256) {
  const Source& s = a.source;
  json::Array nodes;
  for (const auto& [n, t] : a.bound) {
    nodes.push_back(json::Object{
        {"node_id", n->node_id},
        {"model_tool_name", t->model_tool_name},
        {"description", t->description},
        {"input_schema", input_schema(*t)},
        {"binding", binding(*t)},
        {"prerequisites", prerequisites(*n, "prerequisite_argument")},
        {"required", n->required},
        {"terminal_result", terminal_of(*n)},
        {"required_capabilities", strings(t->required_capabilities)},
        {"produced_artifact_ids", produced(*n, *t)},
        {"side_effect_class", tools::name(t->side_effect_class)},
        {"idempotency", tools::name(t->idempotency)},
    });
  }
  Value plan = json::Object{
      {"schema_version", "1.0"},
      {"kind", "compiled_millforge_harness"},
      {"harness_id", s.harness_id},
      {"harness_version", s.harness_version},
      {"source_sha256", source_sha256},
      {"stage_kind_ids", strings(s.stage_kind_ids)},
      {"model_profile", json::Object{{"profile_id", s.model_profile_id}}},
      {"prompt_policy", prompt_json(s)},
      {"budgets", budgets_json(s.budgets)},
      {"context_policy", context_json(s.context)},
      {"nodes", std::move(nodes)},
      {"required_capabilities", strings(capabilities(a))},
      {"terminal_result_map", terminal_map(a)},
      {"artifact_policy", json::Object{{"declared_artifact_ids", strings(s.declared_artifact_ids)},
                                       {"required_by_terminal", required_by_terminal(s)}}},
      {"compiler_identity", json::Object{{"name", "millforge"},
                                         {"version", "0.1.0"},
                                         {"build_id", "millforge.compiler.lowering.v1"}}},
  };
  plan.set("compiled_sha256", millforge_plan_digest(plan));
  return plan;
}

bool is_millforge_plan(const Value& plan) {
  const Value* id = plan.find("compiler_identity");
  const Value* name = id != nullptr ? id->find("name") : nullptr;
  return name != nullptr && name->is_string() && name->as_string() == "millforge";
}

std::string millforge_plan_bytes(const Value& plan) {
  return json::millforge_form(plan, kPlanFloats);
}

std::string millforge_plan_digest(const Value& plan) {
  Value body = plan;
  auto& members = body.as_object();
  members.erase(std::remove_if(members.begin(), members.end(),
                               [](const json::Member& m) { return m.key == "compiled_sha256"; }),
                members.end());
  return json::millforge_digest(body, kPlanFloats);
}

namespace {

// Millforge's plan model, member by member: types, closed member sets and its invariants.
class Checker {
 public:
  diag::Diagnostics ds;

  void fault(std::string msg, std::string at) {
    ds.push_back(diag::error(codes::kPlanInvalid, std::move(msg), std::move(at)));
  }
  void take(json::FieldReader& f) {
    for (auto& d : f.take()) {
      d.code = codes::kPlanInvalid;
      ds.push_back(std::move(d));
    }
  }
  // A string member that is present and not blank.
  std::optional<std::string> text(json::FieldReader& f, std::string_view key,
                                  bool required = true) {
    auto s = f.string(key, required);
    if (s && s->find_first_not_of(" \t\r\n") == std::string::npos) {
      fault(std::string(key) + " must not be blank", f.pointer_of(key));
    }
    return s;
  }
  std::vector<std::string> texts(json::FieldReader& f, std::string_view key, bool required) {
    std::vector<std::string> out;
    const Value* a = f.array(key, required);
    if (a == nullptr) return out;
    for (std::size_t i = 0; i < a->as_array().size(); ++i) {
      const Value& e = a->as_array()[i];
      std::string at = f.pointer_of(key);
      json::append_index(at, i);
      if (!e.is_string() || e.as_string().find_first_not_of(" \t\r\n") == std::string::npos) {
        fault("a non-blank string", at);
      } else if (std::find(out.begin(), out.end(), e.as_string()) != out.end()) {
        fault("\"" + e.as_string() + "\" is listed twice", at);
      } else {
        out.push_back(e.as_string());
      }
    }
    return out;
  }
  void positive(json::FieldReader& f, std::string_view key, std::int64_t min = 1) {
    if (auto i = f.integer(key); i && *i < min) {
      fault(std::string(key) + " must be at least " + std::to_string(min), f.pointer_of(key));
    }
  }
  void sha256(json::FieldReader& f, std::string_view key) {
    auto s = f.string(key);
    if (s && !hash::is_hex_digest(*s)) {
      fault(std::string(key) + " must be 64 lowercase hex digits", f.pointer_of(key));
    }
  }
  void one_of(json::FieldReader& f, std::string_view key,
              std::initializer_list<std::string_view> names) {
    auto s = f.string(key);
    if (s && std::find(names.begin(), names.end(), *s) == names.end()) {
      fault(std::string(key) + " is not one of Millforge's values", f.pointer_of(key));
    }
  }
};

struct PlanNode {
  std::string id, terminal, at;
  bool required = false;
  std::vector<std::string> prerequisites, capabilities, produced;
};

PlanNode check_node(Checker& c, const Value& v, const std::string& at) {
  PlanNode n;
  n.at = at;
  json::FieldReader f(v, at);
  if (auto s = c.text(f, "node_id")) n.id = *s;
  c.text(f, "model_tool_name");
  c.text(f, "description");
  f.object("input_schema");
  if (const Value* b = f.object("binding")) {
    json::FieldReader r(*b, f.pointer_of("binding"));
    c.text(r, "tool_id");
    c.positive(r, "tool_version");
    c.sha256(r, "descriptor_sha256");
    c.text(r, "implementation_id");
    r.reject_unknown({"tool_id", "tool_version", "descriptor_sha256", "implementation_id"});
    c.take(r);
  }
  if (const Value* pre = f.array("prerequisites", false)) {
    for (std::size_t i = 0; i < pre->as_array().size(); ++i) {
      json::FieldReader p(pre->as_array()[i], pointer_at(f.pointer_of("prerequisites"), i));
      if (auto s = c.text(p, "node_id")) n.prerequisites.push_back(*s);
      if (const Value* ms = p.array("argument_matches", false)) {
        for (std::size_t k = 0; k < ms->as_array().size(); ++k) {
          json::FieldReader m(ms->as_array()[k], pointer_at(p.pointer_of("argument_matches"), k));
          c.text(m, "prerequisite_argument");
          c.text(m, "current_argument");
          m.reject_unknown({"prerequisite_argument", "current_argument"});
          c.take(m);
        }
      }
      p.reject_unknown({"node_id", "argument_matches"});
      c.take(p);
    }
  }
  if (auto r = f.boolean("required")) n.required = *r;
  if (const Value* t = f.optional("terminal_result"); t != nullptr && !t->is_null()) {
    if (auto s = c.text(f, "terminal_result")) n.terminal = *s;
  }
  n.capabilities = c.texts(f, "required_capabilities", false);
  n.produced = c.texts(f, "produced_artifact_ids", false);
  c.one_of(f, "side_effect_class",
           {"read_only", "artifact_write", "workspace_write", "process_execution", "network_read",
            "network_write", "terminal"});
  c.one_of(f, "idempotency", {"idempotent", "idempotent_with_key", "non_idempotent", "unknown"});
  f.reject_unknown({"node_id", "model_tool_name", "description", "input_schema", "binding",
                    "prerequisites", "required", "terminal_result", "required_capabilities",
                    "produced_artifact_ids", "side_effect_class", "idempotency"});
  c.take(f);
  return n;
}

void check_policies(Checker& c, json::FieldReader& f) {
  if (const Value* m = f.object("model_profile")) {
    json::FieldReader r(*m, f.pointer_of("model_profile"));
    c.text(r, "profile_id");
    r.reject_unknown({"profile_id"});
    c.take(r);
  }
  if (const Value* p = f.object("prompt_policy")) {
    json::FieldReader r(*p, f.pointer_of("prompt_policy"));
    c.text(r, "policy_id");
    c.text(r, "system_instructions");
    r.boolean("include_request_context");
    r.reject_unknown({"policy_id", "system_instructions", "include_request_context"});
    c.take(r);
  }
  if (const Value* b = f.object("budgets")) {
    json::FieldReader r(*b, f.pointer_of("budgets"));
    for (const char* key : {"max_iterations", "max_validation_retries", "max_tool_errors",
                            "max_prerequisite_violations", "max_premature_terminal_attempts"}) {
      c.positive(r, key);
    }
    if (r.optional("max_tool_calls_per_reply") != nullptr)
      c.positive(r, "max_tool_calls_per_reply");
    r.reject_unknown({"max_iterations", "max_validation_retries", "max_tool_errors",
                      "max_prerequisite_violations", "max_premature_terminal_attempts",
                      "max_tool_calls_per_reply"});
    c.take(r);
  }
  if (const Value* x = f.object("context_policy")) {
    json::FieldReader r(*x, f.pointer_of("context_policy"));
    if (auto s = r.string("strategy_id"); s && *s != "forge.tiered.v1") {
      c.fault("strategy_id must be \"forge.tiered.v1\"", r.pointer_of("strategy_id"));
    }
    c.positive(r, "budget_tokens");
    c.positive(r, "keep_recent_iterations", 0);
    const Value* t = r.array("phase_thresholds");
    if (t != nullptr &&
        (t->as_array().size() != 3 || !std::all_of(t->as_array().begin(), t->as_array().end(),
                                                   [](const Value& e) { return e.is_number(); }))) {
      c.fault("phase_thresholds must be three numbers", r.pointer_of("phase_thresholds"));
    }
    if (const Value* w = r.array("warning_thresholds", false); w && !warning_thresholds(*w)) {
      c.fault(kWarningThresholdsRule, r.pointer_of("warning_thresholds"));
    }
    r.reject_unknown({"strategy_id", "budget_tokens", "keep_recent_iterations", "phase_thresholds",
                      "warning_thresholds"});
    c.take(r);
  }
  if (const Value* id = f.object("compiler_identity")) {
    json::FieldReader r(*id, f.pointer_of("compiler_identity"));
    c.text(r, "name");
    c.text(r, "version");
    c.text(r, "build_id");
    r.reject_unknown({"name", "version", "build_id"});
    c.take(r);
  }
}

// The cross-member invariants of Millforge's plan model.
void check_invariants(
    Checker& c, const std::vector<PlanNode>& nodes, const std::vector<std::string>& capabilities,
    const Value& terminal_map, const std::vector<std::string>& declared,
    const std::vector<std::pair<std::string, std::vector<std::string>>>& required) {
  std::set<std::string> ids, produced, terminals;
  std::map<std::string, std::string> terminal_of;
  for (const auto& n : nodes) {
    if (!ids.insert(n.id).second) c.fault("node_id \"" + n.id + "\" is not unique", n.at);
    produced.insert(n.produced.begin(), n.produced.end());
    if (!n.terminal.empty()) {
      terminal_of[n.id] = n.terminal;
      terminals.insert(n.terminal);
    }
  }
  if (terminal_of.empty()) c.fault("the plan has no terminal node", "/nodes");
  const auto has = [](const auto& list, const std::string& x) {
    return std::find(list.begin(), list.end(), x) != list.end();
  };
  for (const auto& n : nodes) {
    if (!n.terminal.empty() && n.required) c.fault("a terminal node is not required", n.at);
    for (const auto& p : n.prerequisites) {
      if (p == n.id || ids.count(p) == 0) {
        c.fault("prerequisite \"" + p + "\" is not another node", n.at + "/prerequisites");
      }
    }
    for (const auto& cap : n.capabilities) {
      if (!has(capabilities, cap)) {
        c.fault("capability \"" + cap + "\" is not in required_capabilities",
                n.at + "/required_capabilities");
      }
    }
    for (const auto& art : n.produced) {
      if (!has(declared, art)) {
        c.fault("artifact \"" + art + "\" is not declared", n.at + "/produced_artifact_ids");
      }
    }
  }
  std::map<std::string, std::string> listed;
  std::set<std::string> results;
  for (const auto& m : terminal_map.as_object()) {
    if (!m.value.is_string()) {
      c.fault("terminal_result_map values are strings", pointer_at("/terminal_result_map", m.key));
      continue;
    }
    listed[m.key] = m.value.as_string();
    if (!results.insert(m.value.as_string()).second) {
      c.fault("terminal_result_map values are unique", pointer_at("/terminal_result_map", m.key));
    }
  }
  if (listed != terminal_of) {
    c.fault("terminal_result_map must name exactly the terminal nodes and their results",
            "/terminal_result_map");
  }
  for (std::size_t i = 0; i < required.size(); ++i) {
    const std::string at = pointer_at("/artifact_policy/required_by_terminal", i);
    if (terminals.count(required[i].first) == 0) {
      c.fault("terminal result \"" + required[i].first + "\" has no terminal node", at);
    }
    for (const auto& art : required[i].second) {
      if (!has(declared, art)) c.fault("required artifact \"" + art + "\" is not declared", at);
      if (produced.count(art) == 0) {
        c.fault("required artifact \"" + art + "\" has no producer", at);
      }
    }
  }
}

Status check_millforge_plan(const Value& plan) {
  Checker c;
  json::FieldReader f(plan, "");
  if (auto s = f.string("schema_version"); s && *s != "1.0") {
    c.fault("schema_version must be \"1.0\"", "/schema_version");
  }
  if (auto s = f.string("kind"); s && *s != "compiled_millforge_harness") {
    c.fault("kind must be \"compiled_millforge_harness\"", "/kind");
  }
  c.text(f, "harness_id");
  c.positive(f, "harness_version");
  c.sha256(f, "source_sha256");
  c.sha256(f, "compiled_sha256");
  c.texts(f, "stage_kind_ids", true);
  check_policies(c, f);
  std::vector<PlanNode> nodes;
  if (const Value* list = f.array("nodes")) {
    if (list->as_array().empty()) c.fault("a plan has at least one node", "/nodes");
    for (std::size_t i = 0; i < list->as_array().size(); ++i) {
      nodes.push_back(check_node(c, list->as_array()[i], pointer_at("/nodes", i)));
    }
  }
  const auto capabilities = c.texts(f, "required_capabilities", false);
  const Value* terminal_map = f.object("terminal_result_map");
  std::vector<std::string> declared;
  std::vector<std::pair<std::string, std::vector<std::string>>> required;
  if (const Value* a = f.object("artifact_policy")) {
    json::FieldReader r(*a, "/artifact_policy");
    declared = c.texts(r, "declared_artifact_ids", false);
    if (const Value* list = r.array("required_by_terminal", false)) {
      for (std::size_t i = 0; i < list->as_array().size(); ++i) {
        json::FieldReader t(list->as_array()[i],
                            pointer_at("/artifact_policy/required_by_terminal", i));
        auto result = c.text(t, "terminal_result");
        auto ids = c.texts(t, "artifact_ids", false);
        t.reject_unknown({"terminal_result", "artifact_ids"});
        c.take(t);
        required.emplace_back(result.value_or(""), std::move(ids));
      }
    }
    r.reject_unknown({"declared_artifact_ids", "required_by_terminal"});
    c.take(r);
  }
  f.reject_unknown({"schema_version", "kind", "harness_id", "harness_version", "source_sha256",
                    "compiled_sha256", "stage_kind_ids", "model_profile", "prompt_policy",
                    "budgets", "context_policy", "nodes", "required_capabilities",
                    "terminal_result_map", "artifact_policy", "compiler_identity"});
  c.take(f);
  if (!c.ds.empty()) return c.ds;
  check_invariants(c, nodes, capabilities, *terminal_map, declared, required);
  if (!c.ds.empty()) return c.ds;
  return {};
}

}  // namespace

Result<Value> load_millforge_plan(std::string_view bytes) {
  auto plan = json::parse_object(bytes);
  if (!plan) return plan;
  if (millforge_plan_bytes(*plan) != bytes) {
    return diag::error(codes::kPlanInvalid,
                       "a Millforge plan file is its hashing form (sorted members, ASCII escapes, "
                       "no whitespace) ending in one newline; these bytes are not");
  }
  const Value* claimed = plan->find("compiled_sha256");
  const std::string digest = millforge_plan_digest(*plan);
  if (claimed == nullptr || !claimed->is_string() || claimed->as_string() != digest) {
    return diag::error(codes::kPlanHash,
                       "compiled_sha256 does not verify: the plan digests to " + digest,
                       "/compiled_sha256");
  }
  if (Status ok = check_millforge_plan(*plan); !ok) return ok.take_diagnostics();
  return plan;
}

}  // namespace mf::harness
