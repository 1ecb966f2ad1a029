// "Did you mean": the name among the known ones that a refused name most likely meant to be, found
// by edit distance, once for every place that refuses a name (members, options, subcommands, tools,
// profiles).
#pragma once

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mf::text {

// The Damerau-Levenshtein distance between a and b (optimal string alignment): the fewest
// insertions, deletions, substitutions and swaps of two adjacent bytes that turn a into b.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The known name closest to `given` when it is close enough to be a slip: at most
// max(2, a third of the longer name's length) edits away, and fewer edits than either name has
// bytes (so "ab" never suggests "cd"). The first of equally close names; nothing when `given` is
// known or none is close.
std::optional<std::string> closest(std::string_view given,
                                   const std::vector<std::string_view>& known);

// " (did you mean \"NAME\"?)" for the closest known name, or "" when there is none: appended to
// the message that refuses `given`.
std::string did_you_mean(std::string_view given, const std::vector<std::string_view>& known);
std::string did_you_mean(std::string_view given, const std::vector<std::string>& known);
std::string did_you_mean(std::string_view given, std::initializer_list<std::string_view> known);

}  // namespace mf::text
