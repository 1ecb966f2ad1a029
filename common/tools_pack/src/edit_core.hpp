// The pure core of the edit tool (Pi's edit-diff.ts), kept apart from the file handling so tests
// can drive it without a workspace. What the file tools share: file_tools.hpp.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "file_tools.hpp"
#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"
#include "mf/tools/pack.hpp"

namespace mf::tools {

struct Edit {
  std::string old_text;
  std::string new_text;
};

struct EditOutcome {
  std::string content;  // what goes back to disk: BOM and the file's line endings restored
  std::string diff;     // numbered display diff, 4 lines of context
  std::string patch;    // unified patch of the LF-normalized texts
  std::optional<std::size_t> first_changed_line;  // 1-based, in the new text
};

// Applies every edit to `original` (the whole file, decoded) all-or-nothing. A refusal carries
// Pi's message verbatim, naming `display_path`.
Result<EditOutcome> apply_edits(std::string_view original, const std::vector<Edit>& edits,
                                std::string_view display_path);

// Pi's prepareArguments for edit, run before schema validation: a stringified `edits` array is
// parsed, and top-level legacy oldText/newText strings become one more entry of `edits`.
json::Value prepare_edit_arguments(const json::Value& args);

// --- Pieces of the pipeline, exposed for tests ---

// NFKC, trailing whitespace trimmed per line, typographic quotes, dashes and spaces folded.
std::string normalize_for_fuzzy_match(std::string_view text);
// jsdiff's diffLines + Pi's generateDiffString (context lines around each change).
struct DisplayDiff {
  std::string diff;
  std::optional<std::size_t> first_changed_line;
};
DisplayDiff generate_diff_string(std::string_view old_text, std::string_view new_text,
                                 std::size_t context = 4);
// jsdiff's createTwoFilesPatch(path, path, old, new) with file headers only.
std::string generate_unified_patch(std::string_view path, std::string_view old_text,
                                   std::string_view new_text, std::size_t context = 4);

}  // namespace mf::tools
