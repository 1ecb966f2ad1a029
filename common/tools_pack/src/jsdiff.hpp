// A port of jsdiff's diffLines (its Myers search in its exact shape, so that the diff texts equal
// Pi's; it walks the texts by offset, so its memory grows with the edit distance, not with the
// number of lines) and the two texts Pi makes from one line diff: the numbered display diff
// (generateDiffString) and the unified patch (createTwoFilesPatch).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "edit_core.hpp"

namespace mf::tools::jsdiff {

enum class Op : std::uint8_t { Common, Added, Removed };

// A run of lines: `text` holds `count` tokens, each with its "\n" where it has one. No list of
// lines is kept anywhere: a file of newlines would need one entry per byte.
struct Part {
  Op op;
  std::string_view text;
  std::size_t count = 0;
};

// jsdiff's diffLines result. The parts view the two texts given to diff_lines.
struct LineDiff {
  std::vector<Part> parts;
  std::size_t old_line_count = 0;  // text.split("\n").length, for the number width
  std::size_t new_line_count = 0;
  // The Myers search's work (paths extended plus tokens compared) and whether it passed its
  // budget, after which the diff is one replaced block between the common head and tail.
  std::uint64_t search_work = 0;
  bool search_gave_up = false;
};

// The search's budget: paths extended, and tokens compared along the diagonals.
inline constexpr std::size_t kMaxSearchNodes = 2'000'000;
inline constexpr std::uint64_t kMaxSearchSteps = 400'000'000;

LineDiff diff_lines(std::string_view old_text, std::string_view new_text);
// Pi's generateDiffString over a line diff: `context` lines around each change.
DisplayDiff display_diff(const LineDiff& d, std::size_t context);
// createTwoFilesPatch(path, path, ...) over a line diff, with file headers only.
std::string unified_patch(std::string_view path, const LineDiff& d, std::size_t context);

}  // namespace mf::tools::jsdiff
