// The order ls lists names in: an approximation of JavaScript's localeCompare (ICU's root
// collation) over names Pi lowercases first.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mf::tools::collation {

struct SortKey {
  std::vector<std::uint64_t> primary;
  std::vector<std::uint32_t> secondary;
  std::vector<std::int32_t> tie;  // canonically decomposed code points
};

SortKey sort_key(std::string_view name);
bool key_less(const SortKey& a, const SortKey& b);
// Each code point lowercased (utf8proc's simple mapping); invalid bytes kept as they are.
std::string lowercase(std::string_view s);

}  // namespace mf::tools::collation
