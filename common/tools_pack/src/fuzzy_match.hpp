// Pi's fuzzy matching for edit (fuzzyFindText): an exact indexOf first, then both sides in the
// normalized form of normalize_for_fuzzy_match (edit_core.hpp).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "edit_core.hpp"

namespace mf::tools::fuzzy {

// Non-overlapping occurrences of `needle` in `haystack`, as split(needle).length - 1 counts them.
long long count_occurrences(std::string_view haystack, std::string_view needle);

// Lazily computed fuzzy forms of the content, each at most once per call: Pi renormalizes the
// whole file for every edit, which is the same text each time.
class FuzzyCache {
 public:
  explicit FuzzyCache(std::string_view text) : text_(text) {}
  const std::string& get() {
    if (!value_) value_ = normalize_for_fuzzy_match(text_);
    return *value_;
  }

 private:
  std::string_view text_;
  std::optional<std::string> value_;
};

struct Found {
  bool found = false;
  bool fuzzy = false;
  std::size_t index = 0;
  std::size_t length = 0;
};

// Pi's fuzzyFindText: indexOf first, then both sides normalized.
Found fuzzy_find(std::string_view content, FuzzyCache& fuzzy_content, std::string_view old_text,
                 const std::string& fuzzy_old);

}  // namespace mf::tools::fuzzy
