// libFuzzer target, differential, for the projection's packer (docs/projection.md, "Packing"):
// the bytes describe a small multiple-choice knapsack whose items may require one another; the
// exact solver, the greedy one and a brute-force enumeration must agree on feasibility, the exact
// solver must reach the brute force's optimum, the greedy one may not beat it, and every solution
// keeps each mandatory item and each kept item's requirements within the budget. Violations trap.
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <vector>

#include "mf/prompt/projection.hpp"

namespace {

using mf::prompt::Pack;
using mf::prompt::PackItem;
using Objective = std::tuple<std::int64_t, std::int64_t, std::int64_t>;

void check(bool condition) {
  if (!condition) __builtin_trap();
}

// The objective of `choice`, or nothing when it breaks a rule.
bool objective(const std::vector<PackItem>& items, const std::vector<int>& choice,
               std::int64_t budget, Objective& out) {
  if (choice.size() != items.size()) return false;
  std::int64_t used = 0, kept = 0, full = 0, weight = 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const int v = choice[i];
    if (v < 0) {
      if (items[i].mandatory) return false;
      continue;
    }
    if (static_cast<std::size_t>(v) >= items[i].tokens.size()) return false;
    for (int d : items[i].needs) {
      if (choice[d] < 0) return false;
    }
    used += items[i].tokens[v];
    ++kept;
    full += v == 0 ? 1 : 0;
    weight += items[i].weight;
  }
  out = {kept, full, weight};
  return used <= budget;
}

void brute(const std::vector<PackItem>& items, std::int64_t budget, std::vector<int>& choice,
           std::size_t i, bool& found, Objective& best) {
  if (i == items.size()) {
    Objective o;
    if (objective(items, choice, budget, o) && (!found || o > best)) {
      found = true;
      best = o;
    }
    return;
  }
  for (int v = -1; v < static_cast<int>(items[i].tokens.size()); ++v) {
    choice[i] = v;
    brute(items, budget, choice, i + 1, found, best);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::int64_t budget = data[0] % 80;
  std::vector<PackItem> items;
  for (std::size_t at = 1; at + 3 < size && items.size() < 8; at += 4) {
    PackItem item;
    item.mandatory = (data[at] & 1) != 0;
    item.weight = data[at + 1];
    item.tokens.push_back(1 + data[at + 2] % 40);
    if ((data[at] & 2) != 0) item.tokens.push_back(1 + data[at + 3] % item.tokens[0]);
    items.push_back(std::move(item));
  }
  // The high bits of each item's first byte name one item it requires (itself: none).
  for (std::size_t i = 0; i < items.size(); ++i) {
    const int d = (data[1 + 4 * i] >> 2) % static_cast<int>(items.size());
    if (d != static_cast<int>(i)) items[i].needs.push_back(d);
  }
  const Pack exact = mf::prompt::pack_exact(items, budget);
  const Pack greedy = mf::prompt::pack_greedy(items, budget);
  const Pack chosen = mf::prompt::pack(items, budget);
  std::vector<int> choice(items.size(), -1);
  bool found = false;
  Objective best{};
  brute(items, budget, choice, 0, found, best);
  check(exact.feasible == found && greedy.feasible == found && chosen.feasible == found);
  if (!found) return 0;
  Objective e, g, c;
  check(objective(items, exact.choice, budget, e) && e == best);
  check(objective(items, greedy.choice, budget, g) && g <= best);
  check(objective(items, chosen.choice, budget, c) && c == best);  // small: pack() is exact
  return 0;
}
