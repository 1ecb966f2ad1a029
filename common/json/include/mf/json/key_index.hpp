// Duplicate-key detection for the readers that build an Object member by member (the JSON and
// YAML front ends): a linear scan while the object is small, a hash index once it is not, so an
// object of n members costs O(n) and not O(n^2).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <unordered_map>

#include "mf/json/value.hpp"

namespace mf::json {

class KeyIndex {
 public:
  // Whether `key` is already a member of `members`, the object this index follows (its members so
  // far, wherever the reader keeps them).
  bool contains(std::span<const Member> members, std::string_view key) {
    if (!index_) {
      for (const Member& m : members) {
        if (m.key == key) return true;
      }
      if (members.size() >= kThreshold) {
        index_ = std::make_unique<std::unordered_multimap<std::size_t, std::uint32_t>>();
        for (std::uint32_t i = 0; i < members.size(); ++i) {
          index_->emplace(std::hash<std::string_view>{}(members[i].key), i);
        }
      }
      return false;
    }
    auto [lo, hi] = index_->equal_range(std::hash<std::string_view>{}(key));
    for (auto it = lo; it != hi; ++it) {
      if (members[it->second].key == key) return true;
    }
    return false;
  }

  // Records that `key` is about to be appended to the object as members[position].
  void adding(std::string_view key, std::size_t position) {
    if (index_) index_->emplace(std::hash<std::string_view>{}(key), std::uint32_t(position));
  }

 private:
  // Objects with more members than this get the hash index.
  static constexpr std::size_t kThreshold = 16;
  // key hash -> member position
  std::unique_ptr<std::unordered_multimap<std::size_t, std::uint32_t>> index_;
};

}  // namespace mf::json
