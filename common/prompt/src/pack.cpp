// The packer: which variant of each selected unit goes into the budget (docs/projection.md,
// "Packing"). The objective is lexicographic (items kept, items kept in full, kept weight), so
// it is a tuple; tuples add and compare componentwise-lexicographically, which keeps the dynamic
// program exact. Requirements tie items together: the items connected by `needs` form a group,
// each group offers every assignment that keeps requirements with their requirers (the best one
// per token cost), and the dynamic program picks one option per group.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <optional>

#include "mf/prompt/projection.hpp"

namespace mf::prompt {

namespace {

// Exact packing when the groups' options x (budget + 1) stay within this many cells.
constexpr std::int64_t kMaxCells = std::int64_t{1} << 22;
// A group whose assignments number more than this is left to the greedy packer.
constexpr std::size_t kMaxAssignments = 65536;

struct Score {
  std::int64_t kept = 0, full = 0, weight = 0;
  bool valid = false;
  auto key() const { return std::tie(kept, full, weight); }
  bool better(const Score& o) const { return valid && (!o.valid || key() > o.key()); }
  Score plus(const Score& o) const {
    return {kept + o.kept, full + o.full, weight + o.weight, true};
  }
};

Pack everything_full(std::size_t n) {
  Pack p;
  p.feasible = true;
  p.exact = true;
  p.choice.assign(n, 0);
  return p;
}

std::int64_t full_total(const std::vector<PackItem>& items) {
  std::int64_t total = 0;
  for (const auto& i : items) total += i.tokens.front();
  return total;
}

// The items that must be kept: the mandatory ones and, transitively, what they need.
std::vector<bool> forced(const std::vector<PackItem>& items) {
  std::vector<bool> out(items.size(), false);
  std::vector<int> stack;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (items[i].mandatory) stack.push_back(static_cast<int>(i));
  }
  while (!stack.empty()) {
    const int i = stack.back();
    stack.pop_back();
    if (out[i]) continue;
    out[i] = true;
    for (int d : items[i].needs) stack.push_back(d);
  }
  return out;
}

// The connected components of the `needs` graph, each in ascending index order.
std::vector<std::vector<int>> groups_of(const std::vector<PackItem>& items) {
  std::vector<int> root(items.size());
  std::iota(root.begin(), root.end(), 0);
  const std::function<int(int)> find = [&](int i) {
    return root[i] == i ? i : root[i] = find(root[i]);
  };
  for (std::size_t i = 0; i < items.size(); ++i) {
    for (int d : items[i].needs) root[find(static_cast<int>(i))] = find(d);
  }
  std::vector<int> slot(items.size(), -1);  // a root's group in `out`, by its smallest member
  std::vector<std::vector<int>> out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const int r = find(static_cast<int>(i));
    if (slot[r] < 0) {
      slot[r] = static_cast<int>(out.size());
      out.emplace_back();
    }
    out[slot[r]].push_back(static_cast<int>(i));
  }
  return out;
}

struct Option {
  std::int64_t tokens = 0;
  Score score;
  std::vector<int> choice;  // per member of the group
};

// Every assignment of `group` that keeps its forced members and each kept member's requirements,
// within the budget, reduced to the best one per token cost; nothing when more than `limit`
// assignments would be enumerated.
std::optional<std::vector<Option>> options_of(const std::vector<PackItem>& items,
                                              const std::vector<bool>& must,
                                              const std::vector<int>& group, std::int64_t budget,
                                              std::size_t limit) {
  std::map<std::int64_t, Option> best;
  std::vector<int> choice(group.size(), -1);
  std::map<int, std::size_t> at;
  for (std::size_t k = 0; k < group.size(); ++k) at[group[k]] = k;
  std::size_t leaves = 0;
  bool over = false;
  const std::function<void(std::size_t, std::int64_t)> walk = [&](std::size_t k,
                                                                  std::int64_t used) {
    if (over) return;
    if (k == group.size()) {
      if (++leaves > limit) {
        over = true;
        return;
      }
      Option o;
      o.tokens = used;
      o.score.valid = true;
      for (std::size_t m = 0; m < group.size(); ++m) {
        if (choice[m] < 0) continue;
        for (int d : items[group[m]].needs) {
          if (choice[at[d]] < 0) return;
        }
        ++o.score.kept;
        o.score.full += choice[m] == 0 ? 1 : 0;
        o.score.weight += items[group[m]].weight;
      }
      o.choice = choice;
      auto it = best.find(used);
      if (it == best.end() || o.score.better(it->second.score)) best[used] = std::move(o);
      return;
    }
    const PackItem& item = items[group[k]];
    for (int v = must[group[k]] ? 0 : -1; v < static_cast<int>(item.tokens.size()); ++v) {
      const std::int64_t t = v < 0 ? 0 : item.tokens[v];
      if (t < 0 || used + t > budget) continue;
      choice[k] = v;
      walk(k + 1, used + t);
    }
    choice[k] = -1;
  };
  walk(0, 0);
  if (over) return std::nullopt;
  std::vector<Option> out;
  for (auto& [t, o] : best) out.push_back(std::move(o));
  return out;
}

// The exact packer, or nothing when the instance is over `limit` assignments per group or
// `max_cells` cells in all.
std::optional<Pack> solve(const std::vector<PackItem>& items, std::int64_t budget,
                          std::size_t limit, std::int64_t max_cells) {
  if (full_total(items) <= budget) return everything_full(items.size());
  Pack p;
  p.exact = true;
  if (budget < 0) return p;
  const std::vector<bool> must = forced(items);
  const std::vector<std::vector<int>> groups = groups_of(items);
  // Every group has at least one option: past the bound already, enumerate nothing.
  if (static_cast<std::int64_t>(groups.size()) > max_cells / (budget + 1)) return std::nullopt;
  std::vector<std::vector<Option>> options;
  std::int64_t cells = 0;
  for (const auto& g : groups) {
    auto o = options_of(items, must, g, budget, limit);
    if (!o) return std::nullopt;
    cells += static_cast<std::int64_t>(o->size()) * (budget + 1);
    if (cells > max_cells) return std::nullopt;
    options.push_back(std::move(*o));
  }
  const std::size_t cap = static_cast<std::size_t>(budget);
  std::vector<Score> dp(cap + 1, Score{0, 0, 0, true}), next(cap + 1);
  std::vector<std::vector<std::int32_t>> pick(groups.size(),
                                              std::vector<std::int32_t>(cap + 1, -1));
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (std::size_t c = 0; c <= cap; ++c) {
      Score best;
      for (std::size_t o = 0; o < options[g].size(); ++o) {
        const Option& opt = options[g][o];
        if (static_cast<std::size_t>(opt.tokens) > c || !dp[c - opt.tokens].valid) continue;
        const Score s = dp[c - opt.tokens].plus(opt.score);
        if (s.better(best)) {
          best = s;
          pick[g][c] = static_cast<std::int32_t>(o);
        }
      }
      next[c] = best;
    }
    dp.swap(next);
  }
  if (!dp[cap].valid) return p;
  p.feasible = true;
  p.choice.assign(items.size(), -1);
  std::size_t c = cap;
  for (std::size_t g = groups.size(); g-- > 0;) {
    const Option& opt = options[g][pick[g][c]];
    for (std::size_t m = 0; m < groups[g].size(); ++m) p.choice[groups[g][m]] = opt.choice[m];
    c -= static_cast<std::size_t>(opt.tokens);
  }
  return p;
}

int smallest(const PackItem& item) {
  return static_cast<int>(std::min_element(item.tokens.begin(), item.tokens.end()) -
                          item.tokens.begin());
}

}  // namespace

Pack pack_exact(const std::vector<PackItem>& items, std::int64_t budget) {
  return *solve(items, budget, std::numeric_limits<std::size_t>::max(),
                std::numeric_limits<std::int64_t>::max());
}

Pack pack_greedy(const std::vector<PackItem>& items, std::int64_t budget) {
  if (full_total(items) <= budget) return everything_full(items.size());
  Pack p;
  p.choice.assign(items.size(), -1);
  std::int64_t used = 0;
  const std::vector<bool> must = forced(items);
  std::vector<std::size_t> mandatory;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (!must[i]) continue;
    mandatory.push_back(i);
    p.choice[i] = 0;
    used += items[i].tokens[0];
  }
  if (used > budget) {  // summaries of mandatory units, largest saving first
    std::vector<std::size_t> by_saving;
    for (auto i : mandatory) {
      if (items[i].tokens.size() > 1 && items[i].tokens[1] < items[i].tokens[0]) {
        by_saving.push_back(i);
      }
    }
    std::stable_sort(by_saving.begin(), by_saving.end(), [&](std::size_t a, std::size_t b) {
      return items[a].tokens[0] - items[a].tokens[1] > items[b].tokens[0] - items[b].tokens[1];
    });
    for (auto i : by_saving) {
      if (used <= budget) break;
      used -= items[i].tokens[0] - items[i].tokens[1];
      p.choice[i] = 1;
    }
    if (used > budget) {
      p.choice.clear();
      return p;
    }
  }
  // Optional items in rank order, each with the requirements not yet placed: all in full if
  // they fit, else all in their smallest variant if that fits, else none of them.
  std::vector<std::size_t> seen(items.size(), 0);  // the pass (i + 1) that last reached an item
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (p.choice[i] >= 0) continue;
    std::vector<int> group, stack{static_cast<int>(i)};
    while (!stack.empty()) {
      const int u = stack.back();
      stack.pop_back();
      if (seen[u] == i + 1 || p.choice[u] >= 0) continue;
      seen[u] = i + 1;
      group.push_back(u);
      for (int d : items[u].needs) stack.push_back(d);
    }
    std::int64_t full = 0, small = 0;
    for (int u : group) {
      full += items[u].tokens[0];
      small += items[u].tokens[smallest(items[u])];
    }
    if (used + full <= budget) {
      for (int u : group) p.choice[u] = 0;
      used += full;
    } else if (used + small <= budget) {
      for (int u : group) p.choice[u] = smallest(items[u]);
      used += small;
    }
  }
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (p.choice[i] != 1) continue;
    const std::int64_t extra = items[i].tokens[0] - items[i].tokens[1];
    if (used + extra <= budget) {
      p.choice[i] = 0;
      used += extra;
    }
  }
  p.feasible = true;
  return p;
}

Pack pack(const std::vector<PackItem>& items, std::int64_t budget) {
  if (auto p = solve(items, budget, kMaxAssignments, kMaxCells)) return *p;
  return pack_greedy(items, budget);
}

}  // namespace mf::prompt
