// Building the catalog: checks across units (ids, relations, supersession cycles) and the index.
#include "catalog.hpp"

#include <algorithm>
#include <set>

#include "mf/diag/codes.hpp"
#include "mf/json/canonical.hpp"

namespace mf::prompt {

namespace {

bool word_char(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
}

}  // namespace

std::vector<std::string> tokenize(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (word_char(c)) {
      cur.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : ch);
    } else if (!cur.empty()) {
      out.push_back(std::move(cur));
      cur.clear();
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

bool stop_word(std::string_view t) {
  static const std::set<std::string_view> kStop = {"a",  "an",  "and", "for",  "in",  "of",  "on",
                                                   "or", "the", "to",  "tool", "use", "with"};
  return kStop.count(t) != 0;
}

std::string render_schema(const json::Value& schema) {
  return json::canonical(schema);
}

std::string render_guidance(const Unit& unit, bool summary) {
  return "[" + unit.id + "]\n" + (summary ? unit.summary : unit.content) + "\n";
}

std::int64_t estimate_tokens(std::int64_t bytes) {
  return std::max<std::int64_t>(1, (bytes * 115 + 399) / 400);
}

Result<Catalog> Catalog::build(std::vector<Unit> units) {
  auto index = std::make_shared<Index>();
  std::sort(units.begin(), units.end(), [](const Unit& a, const Unit& b) { return a.id < b.id; });
  diag::Diagnostics faults;
  for (std::size_t i = 0; i < units.size(); ++i) {
    if (!index->by_id.emplace(units[i].id, static_cast<int>(i)).second) {
      faults.push_back(diag::error(diag::codes::kUnitCatalog,
                                   "unit '" + units[i].id + "' is declared twice", ""));
    }
  }
  const std::size_t n = units.size();
  index->requirements.resize(n);
  index->suggests.resize(n);
  index->conflicts.resize(n);
  index->superseded_by.resize(n);
  std::vector<std::vector<int>> supersedes(n);
  const auto resolve = [&](const Unit& u, const std::vector<std::string>& ids, const char* rel,
                           std::vector<int>& out) {
    for (const auto& id : ids) {
      auto it = index->by_id.find(id);
      if (it == index->by_id.end()) {
        faults.push_back(diag::error(
            diag::codes::kUnitUnknown,
            "unit '" + u.id + "' " + rel + " '" + id + "', which the catalog lacks", ""));
      } else {
        out.push_back(it->second);
      }
    }
  };
  json::Array digest_units;
  for (std::size_t i = 0; i < n; ++i) {
    const Unit& u = units[i];
    const int ui = static_cast<int>(i);
    resolve(u, u.requirements, "requires", index->requirements[i]);
    resolve(u, u.suggests, "suggests", index->suggests[i]);
    std::vector<int> conflicts;
    resolve(u, u.conflicts, "conflicts with", conflicts);
    for (int c : conflicts) {
      index->conflicts[i].push_back(c);
      index->conflicts[c].push_back(ui);
    }
    resolve(u, u.supersedes, "supersedes", supersedes[i]);
    for (int s : supersedes[i]) index->superseded_by[s].push_back(ui);
    json::Value d = to_json(u);
    if (u.kind == Kind::Tool) d.set("schema", u.schema);
    digest_units.push_back(std::move(d));
  }
  for (auto& c : index->conflicts) {
    std::sort(c.begin(), c.end());
    c.erase(std::unique(c.begin(), c.end()), c.end());
  }
  if (faults.empty()) {  // supersession must be acyclic (a depth-first search with colours)
    std::vector<int> colour(n, 0);
    std::vector<std::pair<int, std::size_t>> stack;
    for (std::size_t start = 0; start < n && faults.empty(); ++start) {
      if (colour[start] != 0) continue;
      stack.push_back({static_cast<int>(start), 0});
      colour[start] = 1;
      while (!stack.empty() && faults.empty()) {
        auto& [u, next] = stack.back();
        if (next == supersedes[u].size()) {
          colour[u] = 2;
          stack.pop_back();
          continue;
        }
        const int v = supersedes[u][next++];
        if (colour[v] == 1) {
          faults.push_back(diag::error(diag::codes::kUnitCatalog,
                                       "supersession cycle through '" + units[v].id + "'", ""));
        } else if (colour[v] == 0) {
          colour[v] = 1;
          stack.push_back({v, 0});
        }
      }
    }
  }
  if (!faults.empty()) return faults;

  index->full.resize(n);
  index->summary.resize(n);
  index->full_tokens.resize(n);
  index->summary_tokens.resize(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const Unit& u = units[i];
    const int ui = static_cast<int>(i);
    if (u.activation == Activation::Always) index->always.push_back(ui);
    for (std::size_t t = 0; t < u.triggers.size(); ++t) {
      const Trigger& trig = u.triggers[t];
      Index::TriggerRef ref{ui, static_cast<int>(t), {}};
      if (trig.on == Trigger::On::Signal) {
        index->by_signal[trig.value].push_back(std::move(ref));
      } else if (trig.on == Trigger::On::Need) {
        index->by_need[trig.value].push_back(std::move(ref));
      } else {
        ref.tokens = tokenize(trig.value);
        if (ref.tokens.empty()) continue;  // nothing a text could match
        const std::string first = ref.tokens.front();
        index->by_first_token[first].push_back(std::move(ref));
      }
    }
    std::set<std::string> searchable;
    for (const auto* text : {&u.name, &u.description}) {
      for (auto& t : tokenize(*text)) searchable.insert(std::move(t));
    }
    std::vector<const std::string*> names{&u.name};
    for (const auto& a : u.aliases) {
      names.push_back(&a);
      for (auto& t : tokenize(a)) searchable.insert(std::move(t));
    }
    for (const auto& t : searchable) {
      if (!stop_word(t)) index->lexical[t].push_back(ui);
    }
    for (const auto* nm : names) {
      auto tokens = tokenize(*nm);
      if (tokens.empty()) continue;
      const std::string first = tokens.front();
      index->names[first].push_back({ui, std::move(tokens)});
    }
    if (u.kind == Kind::Tool || u.kind == Kind::McpTool) {
      index->full[i] = render_schema(u.schema);
    } else {
      index->full[i] = render_guidance(u, false);
      if (!u.summary.empty()) {
        index->summary[i] = render_guidance(u, true);
        index->summary_tokens[i] =
            estimate_tokens(static_cast<std::int64_t>(index->summary[i].size()));
      }
    }
    index->full_tokens[i] = estimate_tokens(static_cast<std::int64_t>(index->full[i].size()));
  }
  index->sha256 = json::canonical_digest(json::Value(std::move(digest_units)));
  index->units = std::move(units);
  Catalog c;
  c.index_ = std::move(index);
  return c;
}

const std::vector<Unit>& Catalog::units() const {
  return index_->units;
}
const std::string& Catalog::sha256() const {
  return index_->sha256;
}
const Unit* Catalog::find(const std::string& id) const {
  auto it = index_->by_id.find(id);
  return it == index_->by_id.end() ? nullptr : &index_->units[it->second];
}

}  // namespace mf::prompt
