// The cycle search of graph.hpp: an iterative Tarjan over prerequisite edges, and the nodes that
// depend on a cycle.
#include "graph.hpp"

#include <algorithm>

namespace mf::harness {
namespace {

const std::vector<std::string>& out_of(const Edges& edges, const std::string& v) {
  static const std::vector<std::string> kNone;
  auto it = edges.find(v);
  return it == edges.end() ? kNone : it->second;
}

}  // namespace

// Tarjan's algorithm with an explicit stack of (node, next edge) frames.
std::vector<std::vector<std::string>> find_cycles(const std::vector<std::string>& order,
                                                  const Edges& edges) {
  std::map<std::string, std::size_t> index, low;
  std::vector<std::string> stack;
  std::set<std::string> on_stack;
  std::vector<std::vector<std::string>> cycles;
  struct Frame {
    std::string node;
    std::size_t next = 0;
  };
  std::vector<Frame> frames;
  auto visit = [&](const std::string& v) {
    index[v] = low[v] = index.size();
    stack.push_back(v);
    on_stack.insert(v);
    frames.push_back({v, 0});
  };
  for (const auto& root : order) {
    if (index.count(root) != 0) continue;
    visit(root);
    while (!frames.empty()) {
      Frame& f = frames.back();
      const auto& out = out_of(edges, f.node);
      if (f.next < out.size()) {
        const std::string w = out[f.next++];
        const std::string v = f.node;  // `f` may move when a frame is pushed
        if (index.count(w) == 0) {
          visit(w);
        } else if (on_stack.count(w) != 0) {
          low[v] = std::min(low[v], index[w]);
        }
        continue;
      }
      const std::string v = f.node;
      frames.pop_back();
      if (!frames.empty()) low[frames.back().node] = std::min(low[frames.back().node], low[v]);
      if (low[v] != index[v]) continue;
      std::vector<std::string> component;
      std::string w;
      do {
        w = stack.back();
        stack.pop_back();
        on_stack.erase(w);
        component.push_back(w);
      } while (w != v);
      if (component.size() < 2) continue;
      std::sort(component.begin(), component.end());
      cycles.push_back(std::move(component));
    }
  }
  return cycles;
}

std::set<std::string> depends_on_any(const Edges& edges, const std::set<std::string>& cyclic) {
  // Reverse the edges, then walk from the cyclic nodes to everything that depends on them.
  std::map<std::string, std::vector<std::string>> dependents;
  for (const auto& [node, prerequisites] : edges) {
    for (const auto& p : prerequisites) dependents[p].push_back(node);
  }
  std::set<std::string> reached;
  std::vector<std::string> todo(cyclic.begin(), cyclic.end());
  while (!todo.empty()) {
    const std::string v = todo.back();
    todo.pop_back();
    for (const auto& d : dependents[v]) {
      if (cyclic.count(d) == 0 && reached.insert(d).second) todo.push_back(d);
    }
  }
  return reached;
}

std::set<std::string> prerequisites_of(const Edges& edges, const std::string& node) {
  std::set<std::string> reached;
  std::vector<std::string> todo{node};
  while (!todo.empty()) {
    const std::string v = todo.back();
    todo.pop_back();
    auto it = edges.find(v);
    if (it == edges.end()) continue;
    for (const auto& p : it->second) {
      if (p != node && reached.insert(p).second) todo.push_back(p);
    }
  }
  return reached;
}

}  // namespace mf::harness
