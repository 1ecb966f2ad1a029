// The cycle search shared by the compiler and the plan loader.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "graph.hpp"

namespace mf::harness {
namespace {

using Cycles = std::vector<std::vector<std::string>>;

TEST(HarnessGraph, FindsEachCycleOnceWithItsMembersSorted) {
  const Edges edges = {
      {"a", {"b"}}, {"b", {"c"}}, {"c", {"a"}},  // a -> b -> c -> a
      {"d", {"a"}},                              // depends on the cycle
      {"e", {"f"}}, {"f", {"e"}},                // a second cycle
      {"g", {"missing"}},                        // an edge to nowhere is a leaf
  };
  EXPECT_EQ(find_cycles({"d", "a", "b", "c", "e", "f", "g"}, edges),
            (Cycles{{"a", "b", "c"}, {"e", "f"}}));
  EXPECT_EQ(depends_on_any(edges, {"a", "b", "c"}), (std::set<std::string>{"d"}));
  EXPECT_TRUE(find_cycles({"g"}, edges).empty());
}

TEST(HarnessGraph, AcyclicGraphsAndSelfLoopsHaveNoCycle) {
  EXPECT_TRUE(find_cycles({"a", "b", "c"}, {{"a", {"b", "c"}}, {"b", {"c"}}}).empty());
  // A node listing itself is refused earlier (MF-G002); it is not reported as a cycle.
  EXPECT_TRUE(find_cycles({"a"}, {{"a", {"a"}}}).empty());
}

// A chain far deeper than any call stack could recurse: the search must not overflow.
TEST(HarnessGraph, LongChainsDoNotExhaustTheStack) {
  constexpr int kNodes = 100000;
  Edges edges;
  std::vector<std::string> order;
  for (int i = 0; i < kNodes; ++i) {
    order.push_back("n" + std::to_string(i));
    if (i + 1 < kNodes) edges[order.back()] = {"n" + std::to_string(i + 1)};
  }
  EXPECT_TRUE(find_cycles(order, edges).empty());
  edges["n" + std::to_string(kNodes - 1)] = {"n0"};  // close the ring
  const auto cycles = find_cycles(order, edges);
  ASSERT_EQ(cycles.size(), 1u);
  EXPECT_EQ(cycles[0].size(), static_cast<std::size_t>(kNodes));
  EXPECT_TRUE(depends_on_any(edges, {cycles[0].begin(), cycles[0].end()}).empty());
}

}  // namespace
}  // namespace mf::harness
