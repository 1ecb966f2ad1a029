// The builtin.* tools Millforge's four builtin harnesses (planner, builder, checker, arbiter) bind:
// the request's instruction and context, confined workspace listing, search, reads, writes,
// unified-diff patches and git diffs, shell profiles the request defines, the fixed artifact
// readers and writers and the terminal submit, reject and escalate (docs/tools.md). One file per
// family implements them (millforge_*.cpp); what they share is in millforge_support.hpp.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "implementations.hpp"

namespace mf::tools {

ToolResult run_inspect_request(const Invocation& call);
ToolResult run_read_requirements(const Invocation& call);
ToolResult run_workspace_list_files(const Invocation& call);
ToolResult run_workspace_read_file(const Invocation& call);
ToolResult run_workspace_search_text(const Invocation& call);
ToolResult run_workspace_write_file(const Invocation& call);
ToolResult run_workspace_apply_patch(const Invocation& call);
ToolResult run_workspace_read_diff(const Invocation& call);
ToolResult run_test_profile(const Invocation& call);
ToolResult run_static_check_profile(const Invocation& call);
ToolResult run_read_plan(const Invocation& call);
ToolResult run_read_patch_summary(const Invocation& call);
ToolResult run_read_test_results(const Invocation& call);
ToolResult run_read_workspace_diff_artifact(const Invocation& call);
ToolResult run_read_checker_verdict(const Invocation& call);
ToolResult run_write_plan(const Invocation& call);
ToolResult run_write_patch_summary(const Invocation& call);
ToolResult run_write_test_results(const Invocation& call);
ToolResult run_write_workspace_diff(const Invocation& call);
ToolResult run_write_checker_verdict(const Invocation& call);
ToolResult run_write_arbiter_verdict(const Invocation& call);
ToolResult run_write_verdict(const Invocation& call);
ToolResult run_submit_terminal(const Invocation& call);
ToolResult run_reject_terminal(const Invocation& call);
ToolResult run_escalate_terminal(const Invocation& call);

// --- The patch format, apart from the files, for tests ---

struct PatchHunk {
  std::size_t old_start = 0;  // as the @@ header says (1-based; 0 with an empty old side)
  std::size_t new_start = 0;
  std::vector<std::string> old_lines;  // context and removed lines, without their "\n"
  std::vector<std::string> new_lines;  // context and added lines
  bool old_no_newline = false;         // "\ No newline at end of file" after the old side
  bool new_no_newline = false;
  std::size_t header_line = 0;  // 1-based line of the @@ header in the patch, for messages
};

struct FilePatch {
  std::string old_path;  // "" for /dev/null (a new file); a/ and b/ prefixes removed
  std::string new_path;  // "" for /dev/null (a deleted file)
  std::vector<PatchHunk> hunks;
};

// Splits a unified diff into its files and hunks. Lines outside a file section (diff --git, index,
// commentary) are skipped; a malformed header or a hunk whose body does not match its counts is
// the error text.
struct ParsedPatch {
  std::vector<FilePatch> files;
  std::string error;  // empty when parsed
};
ParsedPatch parse_patch(std::string_view patch);

// Applies the hunks of one file to `original` (its bytes, "" for a new file): each hunk's old side
// must match the file exactly, at its stated line or the nearest line after the previous hunk.
// The new bytes, or the error text naming `display` and the hunk.
struct PatchOutcome {
  std::string content;
  std::string error;  // empty when applied
};
PatchOutcome apply_hunks(std::string_view original, const std::vector<PatchHunk>& hunks,
                         std::string_view display);

}  // namespace mf::tools
