// The "did you mean" of every refused name (mf/text/suggest.hpp).
#include "mf/text/suggest.hpp"

#include <gtest/gtest.h>

namespace mf::text {
namespace {

TEST(TextSuggest, EditDistanceCountsInsertionsDeletionsSubstitutionsAndSwaps) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("max_iteration", "max_iterations"), 1u);  // an insertion
  EXPECT_EQ(edit_distance("trace", "trce"), 1u);                    // a deletion
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("raed", "read"), 1u);  // two adjacent letters swapped: one edit
  EXPECT_EQ(edit_distance("ab", "ba"), 1u);
  EXPECT_EQ(edit_distance("ca", "abc"), 3u);  // optimal string alignment, not unrestricted
}

TEST(TextSuggest, SuggestsTheClosestKnownNameWhenItIsClose) {
  const std::vector<std::string_view> known = {"max_iterations", "max_tool_errors", "budgets"};
  EXPECT_EQ(closest("max_iteration", known), "max_iterations");
  EXPECT_EQ(did_you_mean("max_iteration", known), " (did you mean \"max_iterations\"?)");
  EXPECT_EQ(did_you_mean("bugdets", {"budgets", "graph"}), " (did you mean \"budgets\"?)");
  // A third of a long name's length: four edits away from an 18-byte name.
  EXPECT_EQ(closest("tools.wrt_rprt@1", {"tools.write_report@1"}), "tools.write_report@1");
}

TEST(TextSuggest, NothingWhenNoneIsCloseOrTheNameIsKnown) {
  EXPECT_EQ(closest("xyzzy", {"tool", "rescue"}), std::nullopt);
  EXPECT_EQ(did_you_mean("xyzzy", {"tool", "rescue"}), "");
  EXPECT_EQ(closest("tool", {"tool", "tools"}), std::nullopt);  // known: nothing to suggest
  // Two edits turn "ab" into "cd" but share nothing with it: no suggestion for short names.
  EXPECT_EQ(closest("ab", {"cd"}), std::nullopt);
  EXPECT_EQ(closest("x", {"y"}), std::nullopt);
  // A pasted blob is not compared at all.
  EXPECT_EQ(closest(std::string(300, 'a'), {std::string(299, 'a')}), std::nullopt);
}

TEST(TextSuggest, TheFirstOfEquallyCloseNames) {
  EXPECT_EQ(closest("get", {"gets", "set", "got"}), "gets");
  EXPECT_EQ(closest("gett", {"put", "get", "gets"}), "get");
}

// A dotted id whose namespace is left out or wrong is too many edits from the real one; the ids
// that end in the same name, version aside, are named instead, at most three of them.
TEST(TextSuggest, ADottedIdByItsLastPart) {
  const std::vector<std::string_view> known = {"builtin.artifact.read@1",
                                               "builtin.pi_compat.read@1", "builtin.pi_compat.ls@1",
                                               "builtin.artifact.write@1"};
  EXPECT_EQ(closest("builtin.read@1", known), std::nullopt);
  EXPECT_EQ(did_you_mean("builtin.read@1", known),
            " (did you mean \"builtin.artifact.read@1\" or \"builtin.pi_compat.read@1\"?)");
  EXPECT_EQ(did_you_mean("tools.read@v1", known),
            " (did you mean \"builtin.artifact.read@1\" or \"builtin.pi_compat.read@1\"?)");
  EXPECT_EQ(did_you_mean("my.ls@3", known), " (did you mean \"builtin.pi_compat.ls@1\"?)");
  // Not a dotted id, no shared last part, or too many alike: nothing.
  EXPECT_EQ(did_you_mean("read", known), "");
  EXPECT_EQ(did_you_mean("builtin.grep@1", known), "");
  EXPECT_EQ(did_you_mean("tools.read@1",
                         {"alpha.read@1", "bravo.read@1", "charlie.read@1", "delta.read@1"}),
            "");
  EXPECT_EQ(same_last_part("x.read@1", {"a.read@1", "b.read", "read@1"}),
            (std::vector<std::string>{"a.read@1", "b.read"}));
}

TEST(TextSuggest, TakesNamesInEveryFormCallersHold) {
  const std::vector<std::string> owned = {"--trace", "--task"};
  EXPECT_EQ(did_you_mean("--trce", owned), " (did you mean \"--trace\"?)");
  EXPECT_EQ(did_you_mean("--tsak", {"--trace", "--task"}), " (did you mean \"--task\"?)");
}

}  // namespace
}  // namespace mf::text
