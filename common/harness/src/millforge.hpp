// The millforge-v1 plan form (docs/formats/plan.md, "Millforge form"), private to the compiler:
// the source digest and the lowering of an accepted compilation in Millforge's shapes and rules.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "mf/json/value.hpp"
#include "mf/tools/catalog.hpp"
#include "source.hpp"

namespace mf::harness {

// What the accepted phases established, which both digests cover.
struct Accepted {
  const Source& source;
  std::vector<std::pair<const Node*, const tools::ToolDescriptor*>> bound;  // node_id order
  // Per declared artifact: the nodes that validly produce it, and those of them that a terminal
  // requiring it is gated by (a required node or an ancestor of the terminal).
  std::map<std::string, std::set<std::string>> producers, gated;
};

// Millforge's source_sha256: the digest of its canonical semantic payload (source semantics with
// the resolved profile, bindings, descriptors and artifact evidence).
std::string millforge_source_sha256(const Accepted& a);

// The compiled plan in Millforge's shape, compiled_sha256 set.
json::Value millforge_lower(const Accepted& a, const std::string& source_sha256);

}  // namespace mf::harness
