// grep's line matcher seen from outside, for the tests that compare its prefiltered search with
// the DFA alone (grep.cpp).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mf::tools::grep_match {

// The literals grep's prefilter looks for (lowercased when case-insensitive), or nullopt when
// the pattern is searched without one (or is a plain literal, or does not compile).
std::optional<std::vector<std::string>> prefixes(const std::string& pattern, bool literal,
                                                 bool ignore_case);

// Where grep's matcher finds a match in `text`, line after line (after each find it moves on to
// the next line), with the prefilter or with the DFA alone; nullopt if the pattern is refused.
std::optional<std::vector<std::size_t>> line_matches(const std::string& pattern, bool literal,
                                                     bool ignore_case, bool prefilter,
                                                     std::string_view text);

}  // namespace mf::tools::grep_match
