// The packer: which variant of each selected unit goes into the budget (docs/projection.md,
// "Packing"). The objective is lexicographic (items kept, items kept in full, kept weight), so
// it is a tuple; tuples add and compare componentwise-lexicographically, which keeps the dynamic
// program exact.
#include <algorithm>
#include <cstdint>
#include <numeric>

#include "mf/prompt/projection.hpp"

namespace mf::prompt {

namespace {

constexpr std::int64_t kMaxCells = std::int64_t{1} << 22;

struct Score {
  std::int64_t kept = 0, full = 0, weight = 0;
  bool valid = false;
  auto key() const { return std::tie(kept, full, weight); }
  bool better(const Score& o) const { return valid && (!o.valid || key() > o.key()); }
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

}  // namespace

Pack pack_exact(const std::vector<PackItem>& items, std::int64_t budget) {
  if (full_total(items) <= budget) return everything_full(items.size());
  Pack p;
  p.exact = true;
  if (budget < 0) return p;
  const std::size_t cap = static_cast<std::size_t>(budget);
  std::vector<Score> dp(cap + 1, Score{0, 0, 0, true}), next(cap + 1);
  std::vector<std::vector<std::int8_t>> choice(items.size(), std::vector<std::int8_t>(cap + 1));
  for (std::size_t i = 0; i < items.size(); ++i) {
    const PackItem& item = items[i];
    for (std::size_t c = 0; c <= cap; ++c) {
      Score best;
      std::int8_t pick = -1;
      if (!item.mandatory) best = dp[c];
      for (std::size_t v = 0; v < item.tokens.size(); ++v) {
        const std::int64_t t = item.tokens[v];
        if (t < 0 || static_cast<std::size_t>(t) > c || !dp[c - t].valid) continue;
        Score s = dp[c - t];
        s.kept += 1;
        s.full += v == 0 ? 1 : 0;
        s.weight += item.weight;
        if (s.better(best)) {
          best = s;
          pick = static_cast<std::int8_t>(v);
        }
      }
      next[c] = best;
      choice[i][c] = pick;
    }
    dp.swap(next);
  }
  if (!dp[cap].valid) return p;
  p.feasible = true;
  p.choice.assign(items.size(), -1);
  std::size_t c = cap;
  for (std::size_t i = items.size(); i-- > 0;) {
    const int v = choice[i][c];
    p.choice[i] = v;
    if (v >= 0) c -= static_cast<std::size_t>(items[i].tokens[v]);
  }
  return p;
}

Pack pack_greedy(const std::vector<PackItem>& items, std::int64_t budget) {
  if (full_total(items) <= budget) return everything_full(items.size());
  Pack p;
  p.choice.assign(items.size(), -1);
  std::int64_t used = 0;
  std::vector<std::size_t> mandatory;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (!items[i].mandatory) continue;
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
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (items[i].mandatory) continue;
    for (std::size_t v = 0; v < items[i].tokens.size(); ++v) {
      if (used + items[i].tokens[v] <= budget) {
        p.choice[i] = static_cast<int>(v);
        used += items[i].tokens[v];
        break;
      }
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
  if (full_total(items) <= budget) return everything_full(items.size());
  if (budget >= 0 && static_cast<std::int64_t>(items.size()) * (budget + 1) <= kMaxCells) {
    return pack_exact(items, budget);
  }
  return pack_greedy(items, budget);
}

}  // namespace mf::prompt
