// The schema pass (source.hpp): a parsed harness document read into the source model, every field
// fault reported with its pointer rather than stopping at the first.
#include "source.hpp"

#include <algorithm>
#include <tuple>

#include "mf/diag/codes.hpp"
#include "mf/diag/secrets.hpp"
#include "mf/harness/plan.hpp"
#include "mf/json/fields.hpp"
#include "mf/json/pointer.hpp"
#include "mf/tools/catalog.hpp"

namespace mf::harness {
namespace {

namespace codes = diag::codes;
using json::FieldReader;
using json::Value;

constexpr std::size_t kMaxStageKinds = 64;
constexpr std::size_t kMaxInstructions = 64 << 10;
constexpr std::size_t kMaxNodes = 512;
constexpr std::size_t kMaxTerminals = 64;
constexpr std::size_t kMaxPrerequisites = 64;
constexpr std::size_t kMaxArgumentMatches = 32;
constexpr std::size_t kMaxArtifacts = 512;
constexpr std::int64_t kMaxVersion = 2147483647;

// Credentials never belong in a harness source: compiled, they would be copied into plans, traces
// and stores.
void find_secrets(const Value& v, const std::string& pointer, diag::Diagnostics& out) {
  switch (v.kind()) {
    case json::Kind::String:
      if (auto kind = diag::find_secret(v.as_string())) {
        out.push_back(diag::error(codes::kSecretValue,
                                  "value looks like " + std::string(*kind) +
                                      "; a harness must not carry credentials (name an "
                                      "environment variable in a model profile instead)",
                                  pointer));
      }
      return;
    case json::Kind::Array:
      for (std::size_t i = 0; i < v.as_array().size(); ++i) {
        find_secrets(v.as_array()[i], pointer_at(pointer, i), out);
      }
      return;
    case json::Kind::Object:
      for (const auto& m : v.as_object()) {
        if (auto kind = diag::find_secret(m.key)) {
          out.push_back(diag::error(
              codes::kSecretValue,
              "a key looks like " + std::string(*kind) + "; a harness must not carry credentials",
              pointer_at(pointer, m.key)));
          continue;
        }
        find_secrets(m.value, pointer_at(pointer, m.key), out);
      }
      return;
    default:
      return;
  }
}

// Reads a list of identifiers: each must satisfy `valid` (MF-S022), duplicates are `dup_code`.
std::vector<std::string> read_ids(FieldReader& f, std::string_view key, bool required,
                                  bool (*valid)(std::string_view), const char* what,
                                  std::size_t max, const char* dup_code, bool& present) {
  std::vector<std::string> ids;
  const Value* arr = f.array(key, required);
  present = arr != nullptr;
  if (arr == nullptr) return ids;
  const std::string base = f.pointer_of(key);
  if (arr->as_array().size() > max) {
    f.add(diag::error(codes::kSchema,
                      std::string(key) + " holds at most " + std::to_string(max) + " entries",
                      base));
  }
  for (std::size_t i = 0; i < arr->as_array().size(); ++i) {
    const Value& e = arr->as_array()[i];
    if (!e.is_string()) {
      f.add(diag::error(codes::kSchema, std::string(what) + " must be a string",
                        pointer_at(base, i)));
    } else if (!valid(e.as_string())) {
      f.add(diag::error(codes::kBadIdentifier,
                        std::string(what) + " \"" + e.as_string() + "\" is malformed",
                        pointer_at(base, i)));
    } else if (std::find(ids.begin(), ids.end(), e.as_string()) != ids.end()) {
      f.add(diag::error(dup_code, std::string(what) + " \"" + e.as_string() + "\" listed twice",
                        pointer_at(base, i)));
    } else {
      ids.push_back(e.as_string());
    }
  }
  return ids;
}

bool valid_dotted(std::string_view s) {
  return tools::valid_dotted_id(s);
}

void read_budgets(FieldReader& top, Source& s) {
  const Value* b = top.object("budgets");
  if (b == nullptr) return;
  FieldReader f(*b, top.pointer_of("budgets"));
  struct Bound {
    const char* key;
    std::int64_t* field;
    std::int64_t max;
  };
  const Bound bounds[] = {
      {"max_iterations", &s.budgets.max_iterations, 256},
      {"max_validation_retries", &s.budgets.max_validation_retries, 64},
      {"max_tool_errors", &s.budgets.max_tool_errors, 64},
      {"max_prerequisite_violations", &s.budgets.max_prerequisite_violations, 64},
      {"max_premature_terminal_attempts", &s.budgets.max_premature_terminal_attempts, 64},
  };
  for (const auto& bound : bounds) {
    if (auto i = f.integer(bound.key)) {
      *bound.field = *i;
      if (*i < 1 || *i > bound.max) {
        f.add(diag::error(codes::kBadBudget,
                          std::string(bound.key) + " must be 1.." + std::to_string(bound.max),
                          f.pointer_of(bound.key)));
      }
    }
  }
  if (auto i = f.integer("max_tool_calls_per_reply", false)) {
    s.budgets.max_tool_calls_per_reply = *i;
    if (*i < 1 || *i > kMaxToolCallsPerReply) {
      f.add(diag::error(
          codes::kBadBudget,
          "max_tool_calls_per_reply must be 1.." + std::to_string(kMaxToolCallsPerReply),
          f.pointer_of("max_tool_calls_per_reply")));
    }
  }
  f.reject_unknown({"max_iterations", "max_validation_retries", "max_tool_errors",
                    "max_prerequisite_violations", "max_premature_terminal_attempts",
                    "max_tool_calls_per_reply"});
  for (auto& d : f.take()) top.add(std::move(d));
}

void read_context(FieldReader& top, Source& s) {
  const Value* c = top.object("context");
  if (c == nullptr) return;
  FieldReader f(*c, top.pointer_of("context"));
  auto bad = [&](const char* key, std::string msg) {
    f.add(diag::error(codes::kBadContext, std::move(msg), f.pointer_of(key)));
  };
  if (auto v = f.string("strategy_id")) {
    s.context.strategy_id = *v;
    if (*v != "forge.tiered.v1") bad("strategy_id", "strategy_id must be \"forge.tiered.v1\"");
  }
  if (auto v = f.integer("budget_tokens")) {
    s.context.budget_tokens = *v;
    if (*v < 256 || *v > 1000000) bad("budget_tokens", "budget_tokens must be 256..1000000");
  }
  if (auto v = f.integer("keep_recent_iterations")) {
    s.context.keep_recent_iterations = *v;
    if (*v < 0 || *v > 64) bad("keep_recent_iterations", "keep_recent_iterations must be 0..64");
  }
  if (const Value* t = f.array("phase_thresholds")) {
    const auto& a = t->as_array();
    bool numbers = a.size() == 3 && std::all_of(a.begin(), a.end(), [](const Value& x) {
                     return x.is_number() && x.as_number() > 0 && x.as_number() <= 1;
                   });
    if (!numbers) {
      bad("phase_thresholds", "phase_thresholds must be 3 numbers in (0, 1]");
    } else if (!(a[0].as_number() <= a[1].as_number() && a[1].as_number() <= a[2].as_number())) {
      bad("phase_thresholds", "phase_thresholds must not decrease");
    } else {
      for (std::size_t i = 0; i < 3; ++i) s.context.phase_thresholds[i] = a[i].as_number();
    }
  }
  if (const Value* t = f.array("warning_thresholds", false)) {
    if (auto w = warning_thresholds(*t)) {
      s.context.warning_thresholds = std::move(*w);
    } else {
      bad("warning_thresholds", kWarningThresholdsRule);
    }
  }
  f.reject_unknown({"strategy_id", "budget_tokens", "keep_recent_iterations", "phase_thresholds",
                    "warning_thresholds"});
  for (auto& d : f.take()) top.add(std::move(d));
}

// "tools.collect_context@1": a dotted id and a positive decimal version without leading zeros.
bool split_tool_ref(std::string_view ref, std::string& id, std::int64_t& version) {
  const auto at_sign = ref.rfind('@');
  if (at_sign == std::string_view::npos) return false;
  std::string_view num = ref.substr(at_sign + 1);
  if (num.empty() || num.size() > 10 || num[0] == '0') return false;
  std::int64_t v = 0;
  for (char c : num) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  if (v > kMaxVersion || !tools::valid_dotted_id(ref.substr(0, at_sign))) return false;
  id = std::string(ref.substr(0, at_sign));
  version = v;
  return true;
}

std::vector<ArgumentMatch> read_matches(FieldReader& f, const Value& v, const std::string& p) {
  std::vector<ArgumentMatch> out;
  auto add = [&](const Value& prior, const Value& current, const std::string& where) {
    if (!prior.is_string() || !current.is_string() || prior.as_string().empty() ||
        current.as_string().empty()) {
      f.add(diag::error(codes::kSchema, "an argument match names two non-empty argument names",
                        where));
      return;
    }
    // One prior argument feeds one current argument and back (Millforge refuses fans here too).
    for (const auto& m : out) {
      if (m.prior == prior.as_string() || m.current == current.as_string()) {
        f.add(diag::error(codes::kSchema,
                          "argument \"" + (m.prior == prior.as_string() ? m.prior : m.current) +
                              "\" is already matched in this prerequisite",
                          where));
        return;
      }
    }
    out.push_back({prior.as_string(), current.as_string()});
  };
  if (v.is_object()) {  // {prior_argument: current_argument}
    for (const auto& m : v.as_object()) add(Value(m.key), m.value, pointer_at(p, m.key));
  } else if (v.is_array()) {
    for (std::size_t i = 0; i < v.as_array().size(); ++i) {
      FieldReader m(v.as_array()[i], pointer_at(p, i));
      auto prior = m.string("prior_argument");
      auto current = m.string("current_argument");
      m.reject_unknown({"prior_argument", "current_argument"});
      if (prior && current) add(Value(*prior), Value(*current), pointer_at(p, i));
      for (auto& d : m.take()) f.add(std::move(d));
    }
  } else {
    f.add(diag::error(codes::kSchema, "argument_matches must be a mapping or a list", p));
  }
  if (out.size() > kMaxArgumentMatches) {
    f.add(diag::error(codes::kSchema, "at most 32 argument matches per prerequisite", p));
  }
  return out;
}

void read_node(FieldReader& top, const std::string& node_id, const Value& body,
               const std::string& p, Source& s) {
  FieldReader f(body, p);
  Node n;
  n.node_id = node_id;
  n.pointer = p;
  if (!valid_node_id(node_id)) {
    f.add(diag::error(codes::kBadIdentifier,
                      "node id \"" + node_id + "\" must match ^[a-z][a-z0-9_]{0,63}$", p));
  }
  if (auto ref = f.string("tool_ref")) {
    if (!split_tool_ref(*ref, n.tool_id, n.tool_version)) {
      f.add(diag::error(codes::kBadToolRef,
                        "tool_ref \"" + *ref + "\" must name an exact version: tool.id@N",
                        f.pointer_of("tool_ref")));
    }
  }
  if (auto r = f.boolean("required", false)) n.required = *r;
  if (const Value* t = f.optional("terminal_result"); t != nullptr && !t->is_null()) {
    if (!t->is_string()) {
      f.add(diag::error(codes::kSchema, "terminal_result must be a string or null",
                        f.pointer_of("terminal_result")));
    } else if (!valid_terminal_result(t->as_string())) {
      f.add(diag::error(codes::kBadIdentifier,
                        "terminal_result \"" + t->as_string() + "\" must match ^[A-Z][A-Z0-9_]*$",
                        f.pointer_of("terminal_result")));
    } else {
      n.terminal_result = t->as_string();
    }
  }
  if (const Value* pre = f.array("prerequisites", false)) {
    const std::string base = f.pointer_of("prerequisites");
    if (pre->as_array().size() > kMaxPrerequisites) {
      f.add(diag::error(codes::kSchema, "at most 64 prerequisites per node", base));
    }
    for (std::size_t i = 0; i < pre->as_array().size(); ++i) {
      FieldReader pf(pre->as_array()[i], pointer_at(base, i));
      Prerequisite pr;
      pr.pointer = pointer_at(base, i);
      if (auto id = pf.string("node_id")) {
        pr.node_id = *id;
        if (!valid_node_id(*id)) {
          pf.add(diag::error(codes::kBadIdentifier,
                             "prerequisite node_id \"" + *id + "\" is malformed",
                             pf.pointer_of("node_id")));
        }
      }
      if (const Value* m = pf.optional("argument_matches")) {
        pr.matches = read_matches(pf, *m, pf.pointer_of("argument_matches"));
      }
      pf.reject_unknown({"node_id", "argument_matches"});
      if (pf.ok()) n.prerequisites.push_back(std::move(pr));
      for (auto& d : pf.take()) f.add(std::move(d));
    }
  }
  bool present = false;
  n.produces = read_ids(f, "produces", false, valid_node_id, "artifact id", kMaxArtifacts,
                        codes::kSchema, present);
  if (body.is_object() && body.find("node_id") != nullptr) {
    f.add(diag::error(codes::kUnknownField,
                      "node_id is the mapping key; the node body must not repeat it",
                      f.pointer_of("node_id")));
  }
  f.reject_unknown(
      {"node_id", "tool_ref", "required", "prerequisites", "terminal_result", "produces"});
  for (auto& d : f.take()) top.add(std::move(d));
  s.nodes.push_back(std::move(n));
}

void read_graph(FieldReader& top, Source& s) {
  const Value* g = top.object("graph");
  if (g == nullptr) return;
  FieldReader f(*g, top.pointer_of("graph"));
  if (const Value* nodes = f.object("nodes")) {
    const auto& members = nodes->as_object();
    if (members.empty() || members.size() > kMaxNodes) {
      f.add(
          diag::error(codes::kSchema, "graph.nodes must hold 1..512 nodes", f.pointer_of("nodes")));
    }
    for (const auto& m : members)
      read_node(f, m.key, m.value, pointer_at(f.pointer_of("nodes"), m.key), s);
    std::size_t terminals = std::count_if(s.nodes.begin(), s.nodes.end(),
                                          [](const Node& n) { return n.terminal_result; });
    if (terminals > kMaxTerminals) {
      f.add(diag::error(codes::kSchema, "a harness has at most 64 terminal nodes",
                        f.pointer_of("nodes")));
    }
  }
  f.reject_unknown({"nodes"});
  for (auto& d : f.take()) top.add(std::move(d));
  std::sort(s.nodes.begin(), s.nodes.end(),
            [](const Node& a, const Node& b) { return a.node_id < b.node_id; });
}

void read_artifacts(FieldReader& top, Source& s) {
  const Value* a = top.object("artifacts", false);
  if (a == nullptr) return;
  FieldReader f(*a, top.pointer_of("artifacts"));
  bool present = false;
  s.declared_pointer = f.pointer_of("declared_artifact_ids");
  s.declared_artifact_ids =
      read_ids(f, "declared_artifact_ids", false, valid_node_id, "artifact id", kMaxArtifacts,
               codes::kDuplicateArtifact, present);
  if (const Value* r = f.optional("required_by_terminal")) {
    const std::string base = f.pointer_of("required_by_terminal");
    auto add = [&](const std::string& terminal, const Value& ids, const std::string& where,
                   const std::string& ids_at) {
      if (!valid_terminal_result(terminal)) {
        f.add(diag::error(codes::kBadIdentifier,
                          "terminal_result \"" + terminal + "\" must match ^[A-Z][A-Z0-9_]*$",
                          where));
        return;
      }
      if (!ids.is_array()) {
        f.add(diag::error(codes::kSchema, "artifact_ids must be a list", ids_at));
        return;
      }
      Source::TerminalArtifacts t{terminal, {}, where};
      for (std::size_t i = 0; i < ids.as_array().size(); ++i) {
        const Value& id = ids.as_array()[i];
        if (!id.is_string() || !valid_node_id(id.as_string())) {
          f.add(diag::error(codes::kBadIdentifier, "artifact id is malformed",
                            pointer_at(ids_at, i)));
        } else if (std::find(t.artifact_ids.begin(), t.artifact_ids.end(), id.as_string()) !=
                   t.artifact_ids.end()) {
          f.add(diag::error(codes::kSchema, "artifact \"" + id.as_string() + "\" listed twice",
                            pointer_at(ids_at, i)));
        } else {
          t.artifact_ids.push_back(id.as_string());
        }
      }
      for (const auto& other : s.required_by_terminal) {
        if (other.terminal_result == terminal) {
          f.add(diag::error(codes::kSchema, "terminal " + terminal + " is listed twice", where));
          return;
        }
      }
      s.required_by_terminal.push_back(std::move(t));
    };
    if (r->is_object()) {  // {TERMINAL: [ids]}
      for (const auto& m : r->as_object()) {
        add(m.key, m.value, pointer_at(base, m.key), pointer_at(base, m.key));
      }
    } else if (r->is_array()) {  // [{terminal_result, artifact_ids}]
      for (std::size_t i = 0; i < r->as_array().size(); ++i) {
        FieldReader e(r->as_array()[i], pointer_at(base, i));
        auto terminal = e.string("terminal_result");
        const Value* ids = e.array("artifact_ids");
        e.reject_unknown({"terminal_result", "artifact_ids"});
        if (terminal && ids)
          add(*terminal, *ids, pointer_at(base, i), e.pointer_of("artifact_ids"));
        for (auto& d : e.take()) f.add(std::move(d));
      }
    } else {
      f.add(diag::error(codes::kSchema, "required_by_terminal must be a mapping or a list", base));
    }
  }
  f.reject_unknown({"declared_artifact_ids", "required_by_terminal"});
  for (auto& d : f.take()) top.add(std::move(d));
}

}  // namespace

bool valid_node_id(std::string_view s) {
  return tools::valid_local_id(s);
}

bool valid_terminal_result(std::string_view s) {
  if (s.empty() || s.size() > 64 || s[0] < 'A' || s[0] > 'Z') return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

namespace {

void read_stage_scope(FieldReader& f, Source& s) {
  if (const Value* scope = f.object("stage_scope")) {
    FieldReader sf(*scope, "/stage_scope");
    bool present = false;
    s.stage_kind_ids = read_ids(sf, "stage_kind_ids", true, valid_node_id, "stage kind id",
                                kMaxStageKinds, codes::kSchema, present);
    if (present && s.stage_kind_ids.empty() && sf.ok()) {
      sf.add(diag::error(codes::kSchema, "stage_kind_ids must hold 1..64 ids",
                         "/stage_scope/stage_kind_ids"));
    }
    std::sort(s.stage_kind_ids.begin(), s.stage_kind_ids.end());
    sf.reject_unknown({"stage_kind_ids"});
    for (auto& d : sf.take()) f.add(std::move(d));
  }
}

void read_prompt(FieldReader& f, Source& s) {
  if (const Value* prompt = f.object("prompt")) {
    FieldReader pf(*prompt, "/prompt");
    if (auto v = pf.string("policy_id")) {
      s.policy_id = *v;
      if (!valid_dotted(*v)) {
        pf.add(diag::error(codes::kBadIdentifier, "policy_id \"" + *v + "\" is malformed",
                           "/prompt/policy_id"));
      }
    }
    if (auto v = pf.string("system_instructions")) {
      s.system_instructions = *v;
      const bool blank = v->find_first_not_of(" \t\r\n") == std::string::npos;
      if (blank || v->size() > kMaxInstructions) {
        pf.add(diag::error(codes::kSchema,
                           "system_instructions must be non-blank and at most 64 KiB",
                           "/prompt/system_instructions"));
      }
    }
    if (auto v = pf.boolean("include_request_context")) s.include_request_context = *v;
    pf.reject_unknown({"policy_id", "system_instructions", "include_request_context"});
    for (auto& d : pf.take()) f.add(std::move(d));
  }
}

// projection: {mode?, budget_tokens?, candidate_limit?, units?}; the mode and bounds are the
// projection input's (MF-P004), the units the units document's (MF-P001).
void read_projection(FieldReader& f, Source& s) {
  const Value* section = f.object("projection", false);
  if (section == nullptr) return;
  FieldReader pf(*section, "/projection");
  ProjectionPolicy p;
  diag::Diagnostics input_faults;
  const auto bad = [&](const char* key, std::string message) {
    input_faults.push_back(
        diag::error(codes::kProjectionInput, std::move(message), pf.pointer_of(key)));
  };
  if (auto m = pf.string("mode", false)) {
    if (*m == "all_tools") {
      p.mode = prompt::Mode::AllTools;
    } else if (*m != "compiled") {
      bad("mode", "mode '" + *m + "' is neither 'compiled' nor 'all_tools'");
    }
  }
  if (auto b = pf.integer("budget_tokens", false)) {
    p.budget_tokens = *b;
    if (*b < 1 || *b > 10000000) bad("budget_tokens", "budget_tokens is 1..10000000");
  }
  if (auto l = pf.integer("candidate_limit", false)) {
    p.candidate_limit = *l;
    if (*l < 1 || *l > 256) bad("candidate_limit", "candidate_limit is 1..256");
  }
  if (const Value* units = pf.array("units", false)) {
    auto read = prompt::units_from_json(*units, "/projection/units");
    if (read) {
      p.units = std::move(*read);
    } else {
      for (auto& d : read.take_diagnostics()) pf.add(std::move(d));
    }
  }
  pf.reject_unknown({"mode", "budget_tokens", "candidate_limit", "units"});
  for (auto& d : pf.take()) f.add(std::move(d));
  for (auto& d : input_faults) f.add(std::move(d));
  std::sort(p.units.begin(), p.units.end(),
            [](const prompt::Unit& a, const prompt::Unit& b) { return a.id < b.id; });
  s.projection = std::move(p);
}

// Lists are sets: sorted here so authoring order never reaches a digest.
void sort_sets(Source& s) {
  for (auto& n : s.nodes) {
    std::sort(n.produces.begin(), n.produces.end());
    std::stable_sort(n.prerequisites.begin(), n.prerequisites.end(),
                     [](const auto& a, const auto& b) { return a.node_id < b.node_id; });
    for (auto& p : n.prerequisites) {
      std::sort(p.matches.begin(), p.matches.end(), [](const auto& a, const auto& b) {
        return std::tie(a.prior, a.current) < std::tie(b.prior, b.current);
      });
    }
  }
  std::sort(s.declared_artifact_ids.begin(), s.declared_artifact_ids.end());
  for (auto& t : s.required_by_terminal) std::sort(t.artifact_ids.begin(), t.artifact_ids.end());
  std::sort(s.required_by_terminal.begin(), s.required_by_terminal.end(),
            [](const auto& a, const auto& b) { return a.terminal_result < b.terminal_result; });
}

}  // namespace

Result<Source> read_source(const json::Value& doc) {
  Source s;
  FieldReader f(doc, "");
  if (auto v = f.string("schema_version"); v && *v != "1.0") {
    f.add(diag::error(codes::kSchema, "schema_version must be \"1.0\"", "/schema_version"));
  }
  if (auto v = f.string("kind"); v && *v != "millforge_harness") {
    f.add(diag::error(codes::kSchema, "kind must be \"millforge_harness\"", "/kind"));
  }
  if (auto v = f.string("harness_id")) {
    s.harness_id = *v;
    if (!valid_dotted(*v)) {
      f.add(diag::error(codes::kBadIdentifier,
                        "harness_id \"" + *v + "\" must be dotted lowercase (a.b_c.d1)",
                        "/harness_id"));
    }
  }
  if (auto v = f.integer("harness_version")) {
    s.harness_version = *v;
    if (*v < 1 || *v > kMaxVersion) {
      f.add(diag::error(codes::kSchema, "harness_version must be 1..2^31-1", "/harness_version"));
    }
  }
  read_stage_scope(f, s);
  if (auto v = f.string("model_profile_id")) {
    s.model_profile_id = *v;
    if (!valid_dotted(*v)) {
      f.add(diag::error(codes::kBadIdentifier, "model_profile_id \"" + *v + "\" is malformed",
                        "/model_profile_id"));
    }
  }
  read_prompt(f, s);
  read_budgets(f, s);
  read_context(f, s);
  read_graph(f, s);
  read_artifacts(f, s);
  read_projection(f, s);
  f.reject_unknown({"schema_version", "kind", "harness_id", "harness_version", "stage_scope",
                    "model_profile_id", "prompt", "budgets", "context", "graph", "artifacts",
                    "projection"});
  diag::Diagnostics ds = f.take();
  find_secrets(doc, "", ds);
  if (!ds.empty()) return ds;
  sort_sets(s);
  return s;
}

json::Value semantic_payload(const Source& s) {
  json::Object nodes;
  for (const auto& n : s.nodes) {
    json::Array pre;
    for (const auto& p : n.prerequisites) {
      json::Array matches;
      for (const auto& m : p.matches) {
        matches.push_back(
            json::Object{{"prior_argument", m.prior}, {"current_argument", m.current}});
      }
      pre.push_back(json::Object{{"node_id", p.node_id}, {"argument_matches", std::move(matches)}});
    }
    nodes.push_back(
        {n.node_id,
         json::Object{
             {"tool_ref", n.tool_id + "@" + std::to_string(n.tool_version)},
             {"required", n.required},
             {"prerequisites", std::move(pre)},
             {"terminal_result", n.terminal_result ? Value(*n.terminal_result) : Value(nullptr)},
             {"produces", json::Array(n.produces.begin(), n.produces.end())},
         }});
  }
  json::Object required;
  for (const auto& t : s.required_by_terminal) {
    required.push_back(
        {t.terminal_result, json::Array(t.artifact_ids.begin(), t.artifact_ids.end())});
  }
  Value payload = json::Object{
      {"schema_version", "1.0"},
      {"kind", "millforge_harness"},
      {"harness_id", s.harness_id},
      {"harness_version", s.harness_version},
      {"stage_scope", json::Object{{"stage_kind_ids", json::Array(s.stage_kind_ids.begin(),
                                                                  s.stage_kind_ids.end())}}},
      {"model_profile_id", s.model_profile_id},
      {"prompt", prompt_json(s)},
      {"budgets", budgets_json(s.budgets)},
      {"context", context_json(s.context)},
      {"graph", json::Object{{"nodes", std::move(nodes)}}},
      {"artifacts",
       json::Object{{"declared_artifact_ids",
                     json::Array(s.declared_artifact_ids.begin(), s.declared_artifact_ids.end())},
                    {"required_by_terminal", std::move(required)}}},
  };
  // Present only with the section, so a harness without one keeps the digest it always had.
  if (s.projection) payload.set("projection", projection_json(*s.projection));
  return payload;
}

json::Value prompt_json(const Source& s) {
  return json::Object{{"policy_id", s.policy_id},
                      {"system_instructions", s.system_instructions},
                      {"include_request_context", s.include_request_context}};
}

json::Value budgets_json(const Budgets& b) {
  json::Value out =
      json::Object{{"max_iterations", b.max_iterations},
                   {"max_validation_retries", b.max_validation_retries},
                   {"max_tool_errors", b.max_tool_errors},
                   {"max_prerequisite_violations", b.max_prerequisite_violations},
                   {"max_premature_terminal_attempts", b.max_premature_terminal_attempts}};
  if (b.max_tool_calls_per_reply) {
    out.set("max_tool_calls_per_reply", *b.max_tool_calls_per_reply);
  }
  return out;
}

json::Value context_json(const ContextPolicy& c) {
  json::Value out = json::Object{
      {"strategy_id", c.strategy_id},
      {"budget_tokens", c.budget_tokens},
      {"keep_recent_iterations", c.keep_recent_iterations},
      {"phase_thresholds", json::Array(c.phase_thresholds.begin(), c.phase_thresholds.end())}};
  if (!c.warning_thresholds.empty()) {
    out.set("warning_thresholds",
            json::Array(c.warning_thresholds.begin(), c.warning_thresholds.end()));
  }
  return out;
}

std::optional<std::vector<double>> warning_thresholds(const json::Value& v) {
  if (!v.is_array() || v.as_array().empty() || v.as_array().size() > 8) return std::nullopt;
  std::vector<double> out;
  for (const json::Value& x : v.as_array()) {
    if (!x.is_number() || !(x.as_number() > 0 && x.as_number() <= 1)) return std::nullopt;
    if (!out.empty() && !(out.back() < x.as_number())) return std::nullopt;
    out.push_back(x.as_number());
  }
  return out;
}

json::Value projection_json(const ProjectionPolicy& p) {
  json::Array units;
  for (const auto& u : p.units) units.push_back(prompt::to_json(u));
  return json::Object{{"mode", prompt::name(p.mode)},
                      {"budget_tokens", p.budget_tokens},
                      {"candidate_limit", p.candidate_limit},
                      {"units", std::move(units)}};
}

Result<prompt::Catalog> projection_catalog(std::vector<prompt::Unit> declared,
                                           const std::vector<prompt::ToolSource>& tools) {
  auto units = prompt::with_tools(std::move(declared), tools);
  auto catalog = units ? prompt::Catalog::build(std::move(*units))
                       : Result<prompt::Catalog>(units.take_diagnostics());
  if (catalog) return catalog;
  auto ds = catalog.take_diagnostics();
  for (auto& d : ds) {
    if (d.pointer.empty()) d.pointer = "/projection/units";
  }
  return ds;
}

std::string pointer_at(std::string base, std::string_view token) {
  json::append_token(base, token);
  return base;
}

std::string pointer_at(std::string base, std::size_t index) {
  json::append_index(base, index);
  return base;
}

}  // namespace mf::harness
