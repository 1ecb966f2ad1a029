// Context compaction (docs/compaction.md): forge's tiered strategy, deterministic and without a
// model call. The run loop keeps the conversation as entries that know what they are; when the
// estimated size crosses a phase threshold of the plan's context budget, older entries are
// shortened or dropped in three escalating phases. The system prompt, the user's input, tool calls
// and the recent window are never dropped.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mf/model/model.hpp"

namespace mf::runtime {

enum class EntryKind : std::uint8_t {
  SystemPrompt,
  UserInput,
  ToolCall,      // an assistant message carrying tool calls
  ToolResult,    // a tool message answering one call
  Nudge,         // a guardrail's correction (user message, or tool error result)
  TextResponse,  // assistant text that was not a tool call
};

struct Entry {
  model::Message message;
  EntryKind kind = EntryKind::UserInput;
  std::int64_t iteration = 0;  // the model call (1-based) the entry belongs to; 0 = before any
};

struct ContextPolicy {
  std::int64_t budget_tokens = 8192;
  std::int64_t keep_recent_iterations = 2;
  std::array<double, 3> phase_thresholds = {0.6, 0.75, 0.9};
};

// A deterministic size estimate (docs/compaction.md) of what the entries put in a request; not
// a tokenizer, so the budget is in these units.
std::int64_t estimate_tokens(const std::vector<Entry>& history);

struct Compaction {
  // 0 = under the first threshold, nothing ran; else the highest phase that ran (1..3), which
  // may have found nothing left to drop (`changed` says whether anything was).
  int phase = 0;
  std::int64_t tokens_before = 0;
  std::int64_t tokens_after = 0;
  std::int64_t entries_before = 0;
  std::int64_t entries_after = 0;
  std::int64_t changed = 0;  // entries rewritten or removed (0: the history is as it was)
};

// Compacts `history` in place before the request of model call `next_iteration`. Phase k runs
// only after phase k-1 and only while the estimate is at or above phase_thresholds[k-1] x budget,
// so a phase escalates only when the one before could not bring the size under the next
// threshold. No tool message is ever removed (a dropped result leaves a short placeholder), so
// every tool call keeps the answers it had and the history stays a well-formed conversation.
Compaction compact(std::vector<Entry>& history, const ContextPolicy& policy,
                   std::int64_t next_iteration);

// A context warning (docs/compaction.md, "Context warnings"): the threshold crossed, the estimate
// and budget it was judged on, and the text the model is sent as a transient user message.
struct ContextWarning {
  double threshold = 0;
  std::int64_t tokens = 0;
  std::int64_t budget_tokens = 0;
  std::string message;
};

// forge's context thresholds (ContextManager.check_thresholds with default_context_warning): the
// highest threshold the estimate has reached that has not fired yet fires, and fires once, with it
// every threshold below it (forge fires those on the next requests); a threshold the estimate falls
// back under (after compaction) can fire again.
class ContextWarnings {
 public:
  ContextWarnings() = default;
  ContextWarnings(std::vector<double> thresholds, std::int64_t budget_tokens)
      : thresholds_(std::move(thresholds)),
        fired_(thresholds_.size(), false),
        budget_tokens_(budget_tokens) {}
  // Before a request whose history is estimated at `tokens`: the warning to send, if any.
  std::optional<ContextWarning> check(std::int64_t tokens);

 private:
  std::vector<double> thresholds_;  // increasing
  std::vector<bool> fired_;
  std::int64_t budget_tokens_ = 0;
};

// forge's default_context_warning text for an estimate of `tokens` out of `budget_tokens`.
std::string context_warning_text(std::int64_t tokens, std::int64_t budget_tokens);

}  // namespace mf::runtime
