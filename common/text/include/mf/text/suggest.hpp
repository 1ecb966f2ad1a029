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

// The known dotted ids whose last part, version aside, is that of a dotted `given`, in their order:
// "builtin.pi_compat.read@1" and "builtin.artifact.read@1" for "builtin.read@1", a namespace left
// out or mistaken, which is too many edits away to be a slip.
std::vector<std::string> same_last_part(std::string_view given,
                                        const std::vector<std::string_view>& known);

// " (did you mean \"NAME\"?)" for the closest known name; else, when one to three known ids share
// the last part of a dotted `given` (same_last_part), " (did you mean \"A\" or \"B\"?)"; else "".
// Appended to the message that refuses `given`.
std::string did_you_mean(std::string_view given, const std::vector<std::string_view>& known);
std::string did_you_mean(std::string_view given, const std::vector<std::string>& known);
std::string did_you_mean(std::string_view given, std::initializer_list<std::string_view> known);

// The message that refuses a subcommand that is none of `known`: "unknown command 'X'", with
// did_you_mean's hint, else the known ones listed (" (commands: run, merge)").
std::string unknown_command(std::string_view given, const std::vector<std::string>& known);

}  // namespace mf::text
