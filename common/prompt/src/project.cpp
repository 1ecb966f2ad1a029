// Compiling one turn's projection (docs/projection.md, "The algorithm"): evidence, refusals,
// ranking, closure, suggestions, supersession and conflicts with cascade, packing, rendering.
#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_set>

#include "catalog.hpp"
#include "mf/diag/codes.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/fields.hpp"

namespace mf::prompt {

namespace {

using json::Value;

diag::Diagnostic input_fault(const std::string& pointer, std::string message) {
  return diag::error(diag::codes::kProjectionInput, std::move(message), pointer);
}

std::vector<std::string> sorted_set(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

Value list(const std::vector<std::string>& items) {
  json::Array a;
  for (const auto& i : items) a.push_back(i);
  return a;
}

Value normalized(const Input& in) {
  return json::Object{{"budget_tokens", in.budget_tokens},
                      {"candidate_limit", in.candidate_limit},
                      {"capabilities", list(in.capabilities)},
                      {"denied", list(in.denied)},
                      {"mode", name(in.mode)},
                      {"needs", list(in.needs)},
                      {"selected", list(in.selected)},
                      {"signals", list(in.signals)},
                      {"text", in.text}};
}

struct Entry {
  std::int64_t score = 0;
  std::set<std::string> reasons;
  bool root = false;         // selected on its own evidence
  std::set<int> suggesters;  // the selected units whose suggestion selected it
};

class Compiler {
 public:
  Compiler(const Catalog& catalog, const Input& input) : ix_(catalog.index()), in_(input) {}

  Result<Projection> run() {
    if (Status s = resolve_host_lists(); !s) return s.take_diagnostics();
    std::vector<std::pair<int, std::int64_t>> candidates = evidence();
    std::sort(candidates.begin(), candidates.end(), [&](const auto& a, const auto& b) {
      return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
    std::size_t admitted = 0;
    for (const auto& [u, score] : candidates) {
      if (in_.mode == Mode::Compiled && admitted >= static_cast<std::size_t>(in_.candidate_limit)) {
        ++beyond_limit_;  // counted, not listed: a large catalog has thousands
        continue;
      }
      if (auto why = refusal(u, false)) {
        reject(u, *why);
        continue;
      }
      ++admitted;
      roots_.push_back({u, score});
    }
    for (const auto& [u, score] : roots_) {
      std::string why;
      if (auto deps = closure(u, pinned(u), why)) {
        select(u, score, reasons_of(u), true);
        for (int d : *deps) select(d, score, {"required_by:" + parent_[d]}, false);
      } else {
        reject(u, why);
      }
    }
    suggestions();
    supersede();
    cascade();
    conflicts();
    cascade();
    return packed();
  }

 private:
  Status resolve_host_lists() {
    for (const auto& [ids, field] :
         {std::pair{&in_.selected, "selected"}, std::pair{&in_.denied, "denied"}}) {
      for (const auto& id : *ids) {
        auto it = ix_.by_id.find(id);
        if (it == ix_.by_id.end()) {
          return input_fault(std::string("/") + field, "'" + id + "' is not a unit of the catalog");
        }
        (std::string_view(field) == "selected" ? selected_ : denied_).insert(it->second);
      }
    }
    granted_.insert(in_.capabilities.begin(), in_.capabilities.end());
    return {};
  }

  bool pinned(int u) const {
    return selected_.count(u) != 0 || ix_.units[u].activation == Activation::Always;
  }

  // Scores every unit with evidence (dense counters, so a turn touches only the units its text
  // and signals reach); the reasons are spelled out later, for the units that are admitted.
  std::vector<std::pair<int, std::int64_t>> evidence() {
    std::vector<std::pair<int, std::int64_t>> out;
    const std::size_t n = ix_.units.size();
    if (in_.mode == Mode::AllTools) {
      negations(tokenize(in_.text));  // the text cannot select here, but it can still deny
      out.reserve(n);
      for (std::size_t u = 0; u < n; ++u) {
        out.push_back({static_cast<int>(u), 1000 + ix_.units[u].priority});
      }
      return out;
    }
    base_.assign(n, 0);
    overlap_.assign(n, 0);
    std::vector<int> touched;
    const auto add = [&](int u, std::int64_t w, std::string reason) {
      if (base_[u] == 0 && overlap_[u] == 0) touched.push_back(u);
      base_[u] += w;
      if (!reason.empty()) fired_.push_back({u, std::move(reason)});
    };
    for (int u : selected_) add(u, 100000, "host_selected");
    for (int u : ix_.always) add(u, 100000, "activation_always");
    const std::vector<std::string> tokens = tokenize(in_.text);
    const std::unordered_set<std::string> present(tokens.begin(), tokens.end());
    std::set<std::pair<int, int>> fired;
    const auto fire = [&](const Catalog::Index::TriggerRef& r, const char* kind) {
      if (!fired.insert({r.unit, r.trigger}).second) return;
      const Trigger& t = ix_.units[r.unit].triggers[r.trigger];
      add(r.unit, t.weight, std::string("trigger:") + kind + ":" + t.value);
    };
    for (std::size_t p = 0; p < tokens.size(); ++p) {
      auto it = ix_.by_first_token.find(tokens[p]);
      if (it == ix_.by_first_token.end()) continue;
      for (const auto& r : it->second) {
        const Trigger& t = ix_.units[r.unit].triggers[r.trigger];
        if (t.on == Trigger::On::Keyword) {
          if (std::all_of(r.tokens.begin(), r.tokens.end(),
                          [&](const std::string& k) { return present.count(k) != 0; })) {
            fire(r, "keyword");
          }
        } else if (p + r.tokens.size() <= tokens.size() &&
                   std::equal(r.tokens.begin(), r.tokens.end(), tokens.begin() + p)) {
          fire(r, "phrase");
        }
      }
    }
    for (const auto& [source, map, kind] : {std::tuple{&in_.signals, &ix_.by_signal, "signal"},
                                            std::tuple{&in_.needs, &ix_.by_need, "need"}}) {
      for (const auto& s : *source) {
        auto it = map->find(s);
        if (it == map->end()) continue;
        for (const auto& r : it->second) fire(r, kind);
      }
    }
    for (const auto& t : present) {
      if (stop_word(t)) continue;
      auto it = ix_.lexical.find(t);
      if (it == ix_.lexical.end()) continue;
      for (int u : it->second) {
        if (base_[u] == 0 && overlap_[u] == 0) touched.push_back(u);
        ++overlap_[u];
      }
    }
    negations(tokens);
    for (int u : touched) {
      const std::int64_t b = base_[u] + 5 * overlap_[u];
      if (b > 0) out.push_back({u, b + ix_.units[u].priority});
    }
    return out;
  }

  // The evidence of an admitted unit, spelled out.
  std::set<std::string> reasons_of(int u) const {
    if (in_.mode == Mode::AllTools) return {"all_tools"};
    std::set<std::string> out;
    for (const auto& [unit, reason] : fired_) {
      if (unit == u) out.insert(reason);
    }
    if (overlap_[u] > 0) out.insert("lexical:" + std::to_string(overlap_[u]));
    return out;
  }

  // Units the text denies: "without X", "do not use X", "don't use X", "dont use X".
  void negations(const std::vector<std::string>& tokens) {
    const std::vector<std::vector<std::string>> markers = {
        {"without"}, {"do", "not", "use"}, {"don", "t", "use"}, {"dont", "use"}};
    for (std::size_t p = 0; p < tokens.size(); ++p) {
      for (const auto& m : markers) {
        if (p + m.size() >= tokens.size() + 1 ||
            !std::equal(m.begin(), m.end(), tokens.begin() + p)) {
          continue;
        }
        const std::size_t at = p + m.size();
        if (at >= tokens.size()) continue;
        auto it = ix_.names.find(tokens[at]);
        if (it == ix_.names.end()) continue;
        for (const auto& n : it->second) {
          if (at + n.tokens.size() <= tokens.size() &&
              std::equal(n.tokens.begin(), n.tokens.end(), tokens.begin() + at)) {
            negated_.insert(n.unit);
          }
        }
      }
    }
  }

  // Why `u` may not be selected, if it may not; `shielded` units are not refused by the text.
  std::optional<std::string> refusal(int u, bool shielded) const {
    if (denied_.count(u) != 0) return "host_denied";
    if (!shielded && !pinned(u) && negated_.count(u) != 0) return "text_negation";
    for (const auto& c : ix_.units[u].capabilities) {
      if (granted_.count(c) == 0) return "capability_denied:" + c;
    }
    return std::nullopt;
  }

  // The units `root` requires, transitively, or nothing (with `why`) when one is refused.
  std::optional<std::vector<int>> closure(int root, bool shielded, std::string& why) {
    std::vector<int> out, stack{root};
    std::set<int> seen{root};
    while (!stack.empty()) {
      const int u = stack.back();
      stack.pop_back();
      for (int d : ix_.requirements[u]) {
        if (!seen.insert(d).second) continue;
        if (auto r = refusal(d, shielded)) {
          why = "requires:" + ix_.units[d].id + ":" + *r;
          return std::nullopt;
        }
        parent_[d] = ix_.units[u].id;  // read by the select() that follows this closure
        out.push_back(d);
        stack.push_back(d);
      }
    }
    return out;
  }

  void select(int u, std::int64_t score, const std::set<std::string>& reasons, bool root) {
    Entry& e = sel_[u];
    e.score = std::max(e.score, score);
    e.reasons.insert(reasons.begin(), reasons.end());
    e.root = e.root || root;
  }

  void reject(int u, std::string reason) { rej_[u].insert(std::move(reason)); }

  std::vector<int> ranked() const {
    std::vector<int> order;
    for (const auto& [u, e] : sel_) order.push_back(u);
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      const auto sa = sel_.at(a).score, sb = sel_.at(b).score;
      return sa != sb ? sa > sb : a < b;
    });
    return order;
  }

  void suggestions() {
    for (int s : ranked()) {
      const std::int64_t score = std::max<std::int64_t>(1, sel_.at(s).score / 4);
      for (int u : ix_.suggests[s]) {
        if (sel_.count(u) != 0) {
          sel_[u].reasons.insert("suggested_by:" + ix_.units[s].id);
          sel_[u].suggesters.insert(s);
          continue;
        }
        std::string why;
        std::optional<std::vector<int>> deps;
        if (auto r = refusal(u, false)) {
          why = *r;
        } else {
          deps = closure(u, false, why);
        }
        if (!deps) {
          reject(u, "suggestion_declined:" + why);
          continue;
        }
        select(u, score, {"suggested_by:" + ix_.units[s].id}, false);
        sel_[u].suggesters.insert(s);
        for (int d : *deps) select(d, score, {"required_by:" + parent_[d]}, false);
      }
    }
  }

  // False when `reason` is `prefix` followed by the id of a unit no longer selected.
  bool live_link(const std::string& reason, const std::string& prefix) const {
    if (reason.rfind(prefix, 0) != 0) return true;
    auto it = ix_.by_id.find(reason.substr(prefix.size()));
    return it != ix_.by_id.end() && sel_.count(it->second) != 0;
  }

  void remove(int u, std::string reason) {
    sel_.erase(u);
    reject(u, std::move(reason));
  }

  // Supersession is transitive: a unit that any selected unit supersedes, directly or through
  // units it supersedes in turn (selected or not), is removed, in the name of the nearest one.
  void supersede() {
    std::vector<std::pair<int, int>> gone;
    for (const auto& [u, e] : sel_) {
      std::vector<int> frontier{u};
      std::set<int> seen{u};
      int by = -1;
      while (by < 0 && !frontier.empty()) {
        std::vector<int> next;
        for (int f : frontier) {
          for (int o : ix_.superseded_by[f]) {
            if (!seen.insert(o).second) continue;
            if (by < 0 && sel_.count(o) != 0) by = o;
            next.push_back(o);
          }
        }
        frontier = std::move(next);
      }
      if (by >= 0) gone.push_back({u, by});
    }
    for (const auto& [u, o] : gone) remove(u, "superseded_by:" + ix_.units[o].id);
  }

  void conflicts() {
    std::vector<int> kept;
    for (int u : ranked()) {
      int winner = -1;
      for (int c : ix_.conflicts[u]) {
        if (std::find(kept.begin(), kept.end(), c) != kept.end()) {
          winner = c;
          break;
        }
      }
      if (winner >= 0) {
        remove(u, "conflict_with:" + ix_.units[winner].id);
      } else {
        kept.push_back(u);
      }
    }
  }

  // Removes, to a fixpoint, units whose requirement is gone and units nothing selected needs.
  void cascade() {
    for (bool changed = true; changed;) {
      changed = false;
      for (auto it = sel_.begin(); it != sel_.end();) {
        const int u = it->first;
        int missing = -1;
        for (int d : ix_.requirements[u]) {
          if (sel_.count(d) == 0) missing = d;
        }
        ++it;
        if (missing >= 0) {
          remove(u, "requirement_removed:" + ix_.units[missing].id);
          changed = true;
        }
      }
      std::set<int> supported;
      std::vector<int> stack;
      for (const auto& [u, e] : sel_) {
        if (e.root) stack.push_back(u);
      }
      while (!stack.empty()) {
        const int u = stack.back();
        stack.pop_back();
        if (!supported.insert(u).second) continue;
        for (int d : ix_.requirements[u]) {
          if (sel_.count(d) != 0) stack.push_back(d);
        }
        for (int d : ix_.suggests[u]) {
          auto it = sel_.find(d);
          if (it != sel_.end() && it->second.suggesters.count(u) != 0) stack.push_back(d);
        }
      }
      // What only removed units required or suggested is an orphan.
      std::vector<int> orphans;
      for (const auto& [u, e] : sel_) {
        if (supported.count(u) == 0) orphans.push_back(u);
      }
      for (int u : orphans) remove(u, "orphaned");
      changed = changed || !orphans.empty();
    }
  }

  Result<Projection> packed() {
    Projection p;
    p.catalog_sha256 = ix_.sha256;
    p.mode = in_.mode;
    p.beyond_candidate_limit = beyond_limit_;
    for (const auto& [u, e] : sel_) {
      std::vector<std::string> reasons;
      for (const auto& r : e.reasons) {  // a removed unit no longer requires or suggests
        if (!live_link(r, "required_by:") || !live_link(r, "suggested_by:")) continue;
        reasons.push_back(r);
      }
      p.selected.push_back({ix_.units[u].id, e.score, std::move(reasons)});
    }
    const std::vector<int> order = ranked();
    std::set<int> mandatory;
    for (int u : order) {
      if (!ix_.units[u].mandatory) continue;
      std::vector<int> stack{u};
      while (!stack.empty()) {
        const int m = stack.back();
        stack.pop_back();
        if (!mandatory.insert(m).second) continue;
        for (int d : ix_.requirements[m]) stack.push_back(d);
      }
    }
    std::map<int, int> item_of;
    for (std::size_t i = 0; i < order.size(); ++i) item_of[order[i]] = static_cast<int>(i);
    std::vector<PackItem> items;
    for (int u : order) {
      PackItem item;
      for (int d : ix_.requirements[u]) item.needs.push_back(item_of.at(d));
      item.mandatory = mandatory.count(u) != 0;
      item.weight = sel_.at(u).score;
      item.tokens.push_back(ix_.full_tokens[u]);
      if (!ix_.summary[u].empty()) item.tokens.push_back(ix_.summary_tokens[u]);
      items.push_back(std::move(item));
    }
    const Pack pk = pack(items, in_.budget_tokens);
    if (!pk.feasible) {
      std::int64_t need = 0;
      std::string names;
      for (std::size_t i = 0; i < order.size(); ++i) {
        if (!items[i].mandatory) continue;
        need += *std::min_element(items[i].tokens.begin(), items[i].tokens.end());
        names += (names.empty() ? "" : ", ") + ix_.units[order[i]].id;
      }
      return diag::error(diag::codes::kProjectionBudget,
                         "the mandatory units (" + names + ") need at least " +
                             std::to_string(need) + " tokens; the budget is " +
                             std::to_string(in_.budget_tokens),
                         "/budget_tokens");
    }
    p.packing = pk.exact ? "exact" : "greedy";
    std::map<int, int> variant;
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (pk.choice[i] >= 0) {
        variant[order[i]] = pk.choice[i];
      } else {
        reject(order[i], "packed_out");
      }
    }
    std::vector<int> tools;
    p.ledger.limit = in_.budget_tokens;
    const auto charge = [&](int u, int v, std::int64_t bytes) {
      const std::int64_t tokens = v == 0 ? ix_.full_tokens[u] : ix_.summary_tokens[u];
      p.ledger.items.push_back({ix_.units[u].id, v == 0 ? "full" : "summary", bytes, tokens});
      p.ledger.charged += tokens;
      p.ledger.bytes += bytes;
    };
    for (const auto& [u, v] : variant) {  // by id: indexes follow the sorted ids
      p.active.push_back(ix_.units[u].id);
      const Kind k = ix_.units[u].kind;
      if (k == Kind::Tool || k == Kind::McpTool) {
        tools.push_back(u);
        continue;
      }
      const std::string& text = v == 0 ? ix_.full[u] : ix_.summary[u];
      p.guidance += text;
      charge(u, v, static_cast<std::int64_t>(text.size()));
    }
    for (int u : tools) {
      p.visible_tools.push_back(ix_.units[u].name);
      p.tool_schemas.push_back(ix_.units[u].schema);
      charge(u, 0, static_cast<std::int64_t>(ix_.full[u].size()));
    }
    p.ledger.remaining = p.ledger.limit - p.ledger.charged;
    for (const auto& [u, reasons] : rej_) {
      if (variant.count(u) != 0) continue;  // selected by another route after all
      p.rejected.push_back({ix_.units[u].id, 0, {reasons.begin(), reasons.end()}});
    }
    Value material = json::Object{
        {"catalog_sha256", ix_.sha256}, {"compiler", "mf.prompt.v1"}, {"input", normalized(in_)}};
    p.fingerprint = json::canonical_digest(material);
    return p;
  }

  const Catalog::Index& ix_;
  const Input& in_;
  std::set<int> selected_, denied_, negated_;
  std::set<std::string> granted_;
  std::vector<std::int64_t> base_;                  // evidence but lexical overlap
  std::vector<int> overlap_;                        // tokens shared with the text
  std::vector<std::pair<int, std::string>> fired_;  // evidence reasons, by unit
  std::int64_t beyond_limit_ = 0;
  std::vector<std::pair<int, std::int64_t>> roots_;
  std::map<int, Entry> sel_;
  std::map<int, std::set<std::string>> rej_;
  std::map<int, std::string> parent_;
};

}  // namespace

Result<Input> input_from_json(const Value& v) {
  if (!v.is_object()) return input_fault("", "the projection input is an object");
  json::FieldReader r(v, "");
  Input in;
  if (auto t = r.string("text", false)) {
    if (t->size() > 256 * 1024) r.add(input_fault("/text", "text over 256 KiB"));
    in.text = *t;
  }
  for (const auto& [key, out] :
       {std::pair{"signals", &in.signals}, std::pair{"needs", &in.needs},
        std::pair{"selected", &in.selected}, std::pair{"denied", &in.denied},
        std::pair{"capabilities", &in.capabilities}}) {
    if (const Value* a = r.array(key, false)) {
      for (std::size_t i = 0; i < a->as_array().size(); ++i) {
        const Value& s = a->as_array()[i];
        if (!s.is_string() || s.as_string().empty()) {
          r.add(input_fault(r.pointer_of(key) + "/" + std::to_string(i), "a non-empty string"));
        } else {
          out->push_back(s.as_string());
        }
      }
      *out = sorted_set(std::move(*out));
    }
  }
  if (auto b = r.integer("budget_tokens", false)) {
    if (*b < 1 || *b > 10000000)
      r.add(input_fault("/budget_tokens", "budget_tokens is 1..10000000"));
    in.budget_tokens = *b;
  }
  if (auto l = r.integer("candidate_limit", false)) {
    if (*l < 1 || *l > 256) r.add(input_fault("/candidate_limit", "candidate_limit is 1..256"));
    in.candidate_limit = *l;
  }
  if (auto m = r.string("mode", false)) {
    if (*m == "all_tools") {
      in.mode = Mode::AllTools;
    } else if (*m != "compiled") {
      r.add(input_fault("/mode", "mode '" + *m + "' is neither 'compiled' nor 'all_tools'"));
    }
  }
  r.reject_unknown({"text", "signals", "needs", "selected", "denied", "capabilities",
                    "budget_tokens", "mode", "candidate_limit"});
  if (!r.ok()) {
    auto ds = r.take();
    for (auto& d : ds) d.code = diag::codes::kProjectionInput;
    return ds;
  }
  return in;
}

Result<Projection> project(const Catalog& catalog, const Input& input) {
  Input in = input;
  for (auto* s : {&in.signals, &in.needs, &in.selected, &in.denied, &in.capabilities}) {
    *s = sorted_set(std::move(*s));
  }
  return Compiler(catalog, in).run();
}

Value to_json(const Ledger& l) {
  json::Array items;
  for (const auto& i : l.items) {
    items.push_back(json::Object{
        {"bytes", i.bytes}, {"tokens", i.tokens}, {"unit", i.unit}, {"variant", i.variant}});
  }
  return json::Object{{"bytes", l.bytes},
                      {"charged", l.charged},
                      {"items", std::move(items)},
                      {"limit", l.limit},
                      {"remaining", l.remaining}};
}

Value to_json(const Projection& p) {
  const auto decisions = [](const std::vector<Decision>& ds, bool score) {
    json::Array a;
    for (const auto& d : ds) {
      Value v = json::Object{{"reasons", list(d.reasons)}, {"unit", d.unit}};
      if (score) v.set("score", d.score);
      a.push_back(std::move(v));
    }
    return Value(std::move(a));
  };
  json::Array schemas(p.tool_schemas.begin(), p.tool_schemas.end());
  return json::Object{
      {"active", list(p.active)},
      {"beyond_candidate_limit", p.beyond_candidate_limit},
      {"catalog_sha256", p.catalog_sha256},
      {"fingerprint", p.fingerprint},
      {"guidance", p.guidance},
      {"kind", "millforge_prompt_projection"},
      {"ledger", to_json(p.ledger)},
      {"mode", name(p.mode)},
      {"packing", p.packing},
      {"rejected", decisions(p.rejected, false)},
      {"schema_version", "1.0"},
      {"selected", decisions(p.selected, true)},
      {"tool_schemas", std::move(schemas)},
      {"visible_tools", list(p.visible_tools)},
  };
}

std::string explain(const Projection& p, const Catalog& catalog) {
  std::string out =
      "projection " + p.fingerprint + " (" + name(p.mode) + ", " + p.packing + " packing)\n";
  out += "catalog " + p.catalog_sha256 + ": " + std::to_string(catalog.units().size()) + " units\n";
  const auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& i : v) s += (s.empty() ? "" : ", ") + i;
    return s;
  };
  if (p.beyond_candidate_limit > 0) {
    out += std::to_string(p.beyond_candidate_limit) + " candidates beyond the candidate limit\n";
  }
  out += "visible tools: " + (p.visible_tools.empty() ? "(none)" : join(p.visible_tools)) + "\n";
  out += "active: " + (p.active.empty() ? "(none)" : join(p.active)) + "\n";
  for (const auto& d : p.selected) {
    const bool active = std::binary_search(p.active.begin(), p.active.end(), d.unit);
    out += "  " + std::string(active ? "active  " : "selected") + " " + d.unit + " score " +
           std::to_string(d.score) + ": " + join(d.reasons) + "\n";
  }
  for (const auto& d : p.rejected) out += "  rejected " + d.unit + ": " + join(d.reasons) + "\n";
  out += "ledger: " + std::to_string(p.ledger.charged) + " of " + std::to_string(p.ledger.limit) +
         " tokens (" + std::to_string(p.ledger.bytes) + " bytes), " +
         std::to_string(p.ledger.remaining) + " left\n";
  for (const auto& i : p.ledger.items) {
    out += "  " + i.unit + " " + i.variant + ": " + std::to_string(i.bytes) + " bytes, " +
           std::to_string(i.tokens) + " tokens\n";
  }
  out += "Visibility is not authority: every call is rechecked by the executor.\n";
  return out;
}

}  // namespace mf::prompt
