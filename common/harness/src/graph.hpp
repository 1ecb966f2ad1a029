// The one cycle search of the harness module, shared by the compiler's graph phase and the plan
// loader: strongly connected components over prerequisite edges, without recursion, so a long
// chain of nodes cannot exhaust the stack.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

namespace mf::harness {

// node -> the nodes it depends on. Edges to nodes missing from the map are followed as leaves.
using Edges = std::map<std::string, std::vector<std::string>>;

// The cycles: every strongly connected component of more than one node, its members sorted, in
// the order their first-discovered node appears in a depth-first walk from `order`.
std::vector<std::vector<std::string>> find_cycles(const std::vector<std::string>& order,
                                                  const Edges& edges);

// The nodes outside `cyclic` that depend, directly or through others, on a node in `cyclic`.
std::set<std::string> depends_on_any(const Edges& edges, const std::set<std::string>& cyclic);

// The nodes `node` depends on, directly or through others (itself excluded).
std::set<std::string> prerequisites_of(const Edges& edges, const std::string& node);

}  // namespace mf::harness
