// What Millforge's builtin.* tools share (millforge_support.cpp): the {status, summary, ...} shape
// of their results, their argument readers and texts, and the workspace's git diff that both
// read_workspace_diff (millforge_diff.cpp) and write_workspace_diff (millforge_artifacts.cpp) take.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "implementations.hpp"
#include "mf/json/value.hpp"

namespace mf::tools::millforge {

inline constexpr std::size_t kDefaultReadBytes = 32u << 10;  // Millforge's default for file reads

std::string join(const std::vector<std::string>& items);

// An error result with the structured status every Millforge output has. `untouched`: nothing was
// changed (a refusal).
ToolResult failure(std::string message, bool untouched = true,
                   std::string_view status = "soft_failure", json::Object more = {});

ToolResult success(std::string text, std::string summary, json::Object more);

const json::Value* member(const json::Value& v, std::string_view key);

std::size_t size_arg(const json::Value& args, std::string_view key, std::size_t fallback);

// Text as the model gets it: valid UTF-8 as it is, anything else decoded with U+FFFD.
std::string as_text(std::string bytes);

// An error result of a helper shared with the pack's tools, with the structured status added.
ToolResult with_status(ToolResult r);

std::string plural(std::size_t n, std::string_view one, std::string_view many);

// `git diff` of the workspace (the work tree against git's index), limited to `paths` when there
// are any, keeping its first `max_bytes` bytes (cut on a UTF-8 boundary) in `diff`. The workspace
// root must be a repository's top, so the diff never shows files outside it. The failure result
// otherwise.
std::optional<ToolResult> workspace_diff(const Invocation& call,
                                         const std::vector<std::string>& paths,
                                         std::size_t max_bytes, std::string& diff, bool& truncated,
                                         std::size_t& total);

}  // namespace mf::tools::millforge
