// Millforge's fixed artifact tools: the readers of plan, patch_summary, test_results,
// workspace_diff and checker_verdict, and the writers of those and of the verdicts, each checked
// against the artifacts its plan node produces.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "mf/hash/sha256.hpp"
#include "mf/text/utf8.hpp"
#include "millforge_builtins.hpp"
#include "millforge_support.hpp"

namespace mf::tools {

using namespace millforge;
using json::Value;

namespace {

bool produces(const Binding& b, const std::string& id) {
  return std::find(b.produces.begin(), b.produces.end(), id) != b.produces.end();
}

// A plan node must list the artifact among the ones it produces; a binding outside a plan (mf-run
// tool) has no node to check.
std::optional<ToolResult> refuse_unproduced(const Invocation& call, const std::string& id) {
  const Binding& b = call.binding;
  if (b.node_id.empty() || produces(b, id)) return std::nullopt;
  return failure("Node " + b.node_id + " does not produce artifact " + id +
                 (b.produces.empty() ? std::string(" (it produces none)")
                                     : " (it produces " + join(b.produces) + ")"));
}

ToolResult store_artifact(const Invocation& call, const std::string& id, const std::string& content,
                          const std::string& note = {}) {
  if (auto failed = write_artifact_file(call, id, content)) return with_status(std::move(*failed));
  std::string summary =
      "Wrote artifact " + id + " (" + std::to_string(content.size()) + " bytes)" + note;
  return success(summary, summary, {{"artifact_id", id}, {"bytes", std::uint64_t(content.size())}});
}

// Writes argument `field` as artifact `id`.
ToolResult write_named_artifact(const Invocation& call, const std::string& id,
                                std::string_view field) {
  if (auto refused = refuse_unproduced(call, id)) return *refused;
  return store_artifact(call, id, call.args.find(field)->as_string());
}

// A fixed artifact, at most kDefaultReadBytes of it (cut on a UTF-8 boundary); the digest is of
// all of it.
ToolResult read_fixed_artifact(const Invocation& call, const std::string& id) {
  std::string bytes;
  if (auto failed = read_artifact_file(call, id, bytes)) return with_status(std::move(*failed));
  std::string digest = hash::sha256_hex(bytes);
  const std::size_t size = bytes.size();
  const bool truncated = size > kDefaultReadBytes;
  if (truncated) bytes.resize(text::utf8_floor(bytes, kDefaultReadBytes));
  std::string content = as_text(std::move(bytes));
  std::string summary =
      "Read artifact " + id + " (" + plural(size, "byte", "bytes") +
      (truncated ? ", cut at " + std::to_string(kDefaultReadBytes) : std::string()) + ")";
  std::string text = content;
  if (truncated) {
    text += "\n\n[Showing the first " + std::to_string(kDefaultReadBytes) + " bytes of " +
            std::to_string(size) + "; read_artifact reads all of it]";
  }
  return success(std::move(text), std::move(summary),
                 {{"artifact_id", id},
                  {"content", std::move(content)},
                  {"content_sha256", std::move(digest)},
                  {"truncated", truncated}});
}

}  // namespace

ToolResult run_read_plan(const Invocation& call) {
  return read_fixed_artifact(call, "plan");
}

ToolResult run_read_patch_summary(const Invocation& call) {
  return read_fixed_artifact(call, "patch_summary");
}

ToolResult run_read_test_results(const Invocation& call) {
  return read_fixed_artifact(call, "test_results");
}

ToolResult run_read_workspace_diff_artifact(const Invocation& call) {
  return read_fixed_artifact(call, "workspace_diff");
}

ToolResult run_read_checker_verdict(const Invocation& call) {
  return read_fixed_artifact(call, "checker_verdict");
}

// The whole workspace's diff, bounded as read_workspace_diff's default; a cut says so at its end.
ToolResult run_write_workspace_diff(const Invocation& call) {
  const std::string id = "workspace_diff";
  if (auto refused = refuse_unproduced(call, id)) return *refused;
  if (call.artifact_dir.empty()) return failure("No artifact directory is configured for this run");
  std::string diff;
  bool truncated = false;
  std::size_t total = 0;
  if (auto failed = workspace_diff(call, {}, kDefaultReadBytes, diff, truncated, total)) {
    return *failed;
  }
  if (truncated) {
    diff += "\n[The diff was cut at " + std::to_string(kDefaultReadBytes) + " of its " +
            std::to_string(total) + " bytes]\n";
  }
  return store_artifact(
      call, id, diff,
      truncated ? "; the diff was cut at " + std::to_string(kDefaultReadBytes) + " bytes"
                : std::string());
}

ToolResult run_write_checker_verdict(const Invocation& call) {
  return write_named_artifact(call, "checker_verdict", "verdict");
}

ToolResult run_write_arbiter_verdict(const Invocation& call) {
  return write_named_artifact(call, "arbiter_verdict", "verdict");
}

ToolResult run_write_plan(const Invocation& call) {
  return write_named_artifact(call, "plan", "plan");
}

ToolResult run_write_patch_summary(const Invocation& call) {
  return write_named_artifact(call, "patch_summary", "summary");
}

ToolResult run_write_test_results(const Invocation& call) {
  return write_named_artifact(call, "test_results", "results");
}

// The verdict goes to the artifact the call names, else to the node's one produced artifact.
ToolResult run_write_verdict(const Invocation& call) {
  const Binding& b = call.binding;
  if (const Value* named = call.args.find("artifact_id"); named != nullptr) {
    return write_named_artifact(call, named->as_string(), "verdict");
  }
  if (b.produces.size() != 1) {
    return failure(b.produces.empty()
                       ? std::string("Name the verdict's artifact_id: this step produces none")
                       : "Name the verdict's artifact_id: node " + b.node_id + " produces " +
                             join(b.produces));
  }
  return write_named_artifact(call, b.produces.front(), "verdict");
}

}  // namespace mf::tools
