// Context compaction (compaction.hpp): size estimates and the three phases that shorten or drop
// older entries, deterministic so a replay compacts the same way.
#include "mf/runtime/compaction.hpp"

#include <cstddef>
#include <cstdio>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include "mf/text/utf8.hpp"

namespace mf::runtime {

namespace {

constexpr std::int64_t kMessageOverhead = 4;
constexpr std::size_t kTruncateAbove = 256;
// Low enough that the kept prefix plus the longest marker (62 bytes, a 20-digit count) never
// exceeds kTruncateAbove, so a cut result is never cut again: phase 1 is idempotent by size
// alone, without trusting text a tool could have written itself.
constexpr std::size_t kTruncateKeep = 192;
constexpr std::string_view kCutMarkerHead = "\n[truncated by compaction: ";
constexpr std::string_view kCutMarkerTail = " bytes removed]";
constexpr std::string_view kDroppedResult = "[result dropped by compaction]";

static_assert(kTruncateKeep + kCutMarkerHead.size() + 20 + kCutMarkerTail.size() <= kTruncateAbove);

std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
  return a > std::numeric_limits<std::int64_t>::max() - b ? std::numeric_limits<std::int64_t>::max()
                                                          : a + b;
}

std::int64_t ceil_quarter(std::size_t bytes) {
  const std::size_t q = bytes / 4 + (bytes % 4 != 0 ? 1 : 0);
  return q > static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max())
             ? std::numeric_limits<std::int64_t>::max()
             : static_cast<std::int64_t>(q);
}

std::int64_t message_tokens(const model::Message& m) {
  std::size_t bytes = m.content.size() + m.tool_call_id.size() + m.tool_name.size();
  for (const model::ToolCallRequest& call : m.tool_calls) {
    bytes += call.id.size() + call.name.size() + call.arguments.size();
  }
  return saturating_add(kMessageOverhead, ceil_quarter(bytes));
}

// Swapping (rather than assigning) hands the old buffer to `value`, which frees it on return:
// assigning a short string keeps the long one's capacity, and the point is to give memory back.
void replace_content(std::string& content, std::string value) {
  content.swap(value);
}

bool crossed(std::int64_t tokens, double threshold, std::int64_t budget) {
  return static_cast<double>(tokens) >= threshold * static_cast<double>(budget);
}

// Only the window is decided here: the phases name the kinds they act on, and SystemPrompt and
// UserInput are in none of them, whatever their iteration. Outside the window means
// iteration <= next_iteration - 1 - keep, written as keep <= (next_iteration - 1) - iteration,
// which cannot overflow once both sides are known to be positive.
bool compactable(const Entry& e, std::int64_t next_iteration, std::int64_t keep) {
  if (e.iteration <= 0) return false;
  if (next_iteration <= 1) return false;
  return keep <= (next_iteration - 1) - e.iteration;
}

enum class Fate : std::uint8_t { Keep, Changed, Remove };

// What dropping an entry means depends on what removing it would break: a tool message answers a
// call, so it stays as a placeholder; a message carrying calls keeps the calls and loses its text.
Fate drop(model::Message& m) {
  if (m.role == "tool") {
    if (m.content == kDroppedResult) return Fate::Keep;
    replace_content(m.content, std::string(kDroppedResult));
    return Fate::Changed;
  }
  if (!m.tool_calls.empty()) {
    if (m.content.empty()) return Fate::Keep;
    replace_content(m.content, std::string());
    return Fate::Changed;
  }
  return Fate::Remove;
}

Fate truncate(std::string& content) {
  if (content.size() <= kTruncateAbove) return Fate::Keep;
  const std::size_t keep = text::utf8_floor(content, kTruncateKeep);
  const std::string removed = std::to_string(content.size() - keep);
  std::string cut;
  cut.reserve(keep + kCutMarkerHead.size() + removed.size() + kCutMarkerTail.size());
  cut.append(content, 0, keep);
  cut.append(kCutMarkerHead);
  cut.append(removed);
  cut.append(kCutMarkerTail);
  replace_content(content, std::move(cut));
  return Fate::Changed;
}

Fate phase_one(Entry& e) {
  if (e.kind == EntryKind::Nudge) return drop(e.message);
  if (e.kind == EntryKind::ToolResult) return truncate(e.message.content);
  return Fate::Keep;
}

Fate phase_two(Entry& e) {
  return e.kind == EntryKind::ToolResult ? drop(e.message) : Fate::Keep;
}

Fate phase_three(Entry& e) {
  if (e.kind == EntryKind::TextResponse) return drop(e.message);
  if (e.kind == EntryKind::ToolCall && !e.message.content.empty()) {
    replace_content(e.message.content, std::string());
    return Fate::Changed;
  }
  return Fate::Keep;
}

// One stable in-place pass. A removed entry is moved out first so its buffers are freed now,
// not kept as capacity by whatever later entry is moved into its slot.
// Returns how many entries it rewrote or removed.
template <typename Apply>
std::int64_t apply_phase(std::vector<Entry>& history, std::int64_t next_iteration,
                         std::int64_t keep, Apply apply) {
  std::size_t w = 0;
  std::int64_t changed = 0;
  for (std::size_t r = 0; r < history.size(); ++r) {
    const Fate fate =
        compactable(history[r], next_iteration, keep) ? apply(history[r]) : Fate::Keep;
    changed += fate == Fate::Keep ? 0 : 1;
    if (fate == Fate::Remove) {
      [[maybe_unused]] const Entry gone = std::move(history[r]);
      continue;
    }
    if (w != r) history[w] = std::move(history[r]);
    ++w;
  }
  history.erase(history.begin() + static_cast<std::ptrdiff_t>(w), history.end());
  return changed;
}

}  // namespace

std::int64_t estimate_tokens(const std::vector<Entry>& history) {
  std::int64_t total = 0;
  for (const Entry& e : history) total = saturating_add(total, message_tokens(e.message));
  return total;
}

Compaction compact(std::vector<Entry>& history, const ContextPolicy& policy,
                   std::int64_t next_iteration) {
  Compaction c;
  c.tokens_before = estimate_tokens(history);
  c.entries_before = static_cast<std::int64_t>(history.size());
  const std::int64_t keep = policy.keep_recent_iterations < 0 ? 0 : policy.keep_recent_iterations;

  std::int64_t tokens = c.tokens_before;
  const auto run = [&](int phase, auto apply) {
    if (c.phase != phase - 1 ||
        !crossed(tokens, policy.phase_thresholds[phase - 1], policy.budget_tokens)) {
      return;
    }
    c.changed += apply_phase(history, next_iteration, keep, apply);
    tokens = estimate_tokens(history);
    c.phase = phase;
  };
  run(1, phase_one);
  run(2, phase_two);
  run(3, phase_three);

  c.tokens_after = tokens;
  c.entries_after = static_cast<std::int64_t>(history.size());
  return c;
}

std::optional<ContextWarning> ContextWarnings::check(std::int64_t tokens) {
  if (thresholds_.empty() || budget_tokens_ <= 0) return std::nullopt;
  const double pct = static_cast<double>(tokens) / static_cast<double>(budget_tokens_);
  std::optional<std::size_t> highest;
  for (std::size_t i = 0; i < thresholds_.size(); ++i) {
    if (!(pct >= thresholds_[i]))
      fired_[i] = false;  // fallen back under: may fire again
    else if (!fired_[i])
      highest = i;
  }
  if (!highest) return std::nullopt;
  for (std::size_t i = 0; i <= *highest; ++i) fired_[i] = true;
  return ContextWarning{thresholds_[*highest], tokens, budget_tokens_,
                        context_warning_text(tokens, budget_tokens_)};
}

namespace {

// Python's format(n, ","): digits grouped by three with commas.
std::string grouped(std::int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

}  // namespace

std::string context_warning_text(std::int64_t tokens, std::int64_t budget_tokens) {
  const double pct = static_cast<double>(tokens) / static_cast<double>(budget_tokens);
  // Python's format(pct, ".0%"): the fraction times 100, rounded to a whole number (ties to even,
  // as printf rounds).
  char percent[32];
  std::snprintf(percent, sizeof percent, "%.0f%%", pct * 100);
  std::string out = "[Context usage: " + std::string(percent) + " (" + grouped(tokens) + " / " +
                    grouped(budget_tokens) + " tokens). ";
  if (pct >= 0.80) {
    return out +
           "Context is nearly full. Older tool results and reasoning will be compacted soon — key "
           "information may be lost. Summarize critical findings now and prioritize completing "
           "the current task.]";
  }
  if (pct >= 0.65) {
    return out +
           "Context is filling up. When compaction triggers, older tool results and reasoning "
           "will be condensed. Be concise in your responses and front-load important "
           "information.]";
  }
  return out + "Be mindful of context usage.]";
}

}  // namespace mf::runtime
