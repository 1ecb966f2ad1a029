#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "mf/runtime/compaction.hpp"
#include "mf/text/utf8.hpp"

namespace mf::runtime {
namespace {

constexpr std::string_view kDropped = "[result dropped by compaction]";
constexpr double kInf = std::numeric_limits<double>::infinity();

Entry make(EntryKind kind, std::int64_t iteration, std::string role, std::string content) {
  Entry e;
  e.kind = kind;
  e.iteration = iteration;
  e.message = model::Message::text(std::move(role), std::move(content));
  return e;
}

Entry system_prompt(std::string content) {
  return make(EntryKind::SystemPrompt, 0, "system", std::move(content));
}
Entry user_input(std::string content, std::int64_t iteration = 0) {
  return make(EntryKind::UserInput, iteration, "user", std::move(content));
}
Entry text_response(std::int64_t it, std::string content) {
  return make(EntryKind::TextResponse, it, "assistant", std::move(content));
}
Entry user_nudge(std::int64_t it, std::string content) {
  return make(EntryKind::Nudge, it, "user", std::move(content));
}

Entry tool_call(std::int64_t it, std::string reasoning, std::vector<model::ToolCallRequest> calls) {
  Entry e = make(EntryKind::ToolCall, it, "assistant", std::move(reasoning));
  e.message.tool_calls = std::move(calls);
  return e;
}

model::ToolCallRequest call(std::string id, std::string name, std::string args) {
  return model::ToolCallRequest{
      .id = std::move(id), .name = std::move(name), .arguments = std::move(args)};
}

Entry tool_message(EntryKind kind, std::int64_t it, std::string id, std::string name,
                   std::string content, bool is_error) {
  Entry e = make(kind, it, "tool", std::move(content));
  e.message.tool_call_id = std::move(id);
  e.message.tool_name = std::move(name);
  e.message.is_error = is_error;
  return e;
}
Entry tool_result(std::int64_t it, std::string id, std::string name, std::string content,
                  bool is_error = false) {
  return tool_message(EntryKind::ToolResult, it, std::move(id), std::move(name), std::move(content),
                      is_error);
}
// A guardrail refusing a call answers it as a tool error.
Entry tool_nudge(std::int64_t it, std::string id, std::string name, std::string content) {
  return tool_message(EntryKind::Nudge, it, std::move(id), std::move(name), std::move(content),
                      true);
}

bool same(const model::ToolCallRequest& a, const model::ToolCallRequest& b) {
  return a.id == b.id && a.name == b.name && a.arguments == b.arguments;
}
bool same_calls(const model::Message& a, const model::Message& b) {
  return std::equal(a.tool_calls.begin(), a.tool_calls.end(), b.tool_calls.begin(),
                    b.tool_calls.end(), same);
}
bool same_except_content(const Entry& a, const Entry& b) {
  return a.kind == b.kind && a.iteration == b.iteration && a.message.role == b.message.role &&
         same_calls(a.message, b.message) && a.message.tool_call_id == b.message.tool_call_id &&
         a.message.tool_name == b.message.tool_name && a.message.is_error == b.message.is_error;
}
bool same(const Entry& a, const Entry& b) {
  return same_except_content(a, b) && a.message.content == b.message.content;
}
bool same(const std::vector<Entry>& a, const std::vector<Entry>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const Entry& x, const Entry& y) { return same(x, y); });
}

std::string filler(std::size_t n, char c) {
  return std::string(n, c);
}

// An iteration: a tool call with reasoning answered by a long result; every third iteration a
// guardrail nudge, every fourth a text response.
void append_iteration(std::vector<Entry>& h, std::int64_t it) {
  const std::string id = "call-" + std::to_string(it);
  h.push_back(tool_call(it, filler(400, 'r'), {call(id, "read", R"({"path":"a.txt"})")}));
  h.push_back(tool_result(it, id, "read", filler(2000, 'x')));
  if (it % 3 == 0) h.push_back(user_nudge(it, filler(200, 'n')));
  if (it % 4 == 0) h.push_back(text_response(it, filler(300, 't')));
}

std::vector<Entry> standard_history(std::int64_t iterations) {
  std::vector<Entry> h = {system_prompt(filler(500, 's')), user_input(filler(300, 'u'))};
  for (std::int64_t it = 1; it <= iterations; ++it) append_iteration(h, it);
  return h;
}

bool outside_window(const Entry& e, std::int64_t next_iteration, std::int64_t keep) {
  return e.iteration > 0 && e.kind != EntryKind::SystemPrompt && e.kind != EntryKind::UserInput &&
         e.iteration <= next_iteration - 1 - keep;
}

std::string expected_cut(const std::string& content) {
  if (content.size() <= 256) return content;
  const std::size_t keep = text::utf8_floor(content, 192);
  return content.substr(0, keep) +
         "\n[truncated by compaction: " + std::to_string(content.size() - keep) + " bytes removed]";
}

// The contract of docs/compaction.md, entry by entry: what each phase leaves of `before`.
void expect_phase_applied(const std::vector<Entry>& before, const std::vector<Entry>& after,
                          int phase, std::int64_t next_iteration, std::int64_t keep) {
  std::size_t j = 0;
  const auto next = [&]() -> const Entry* { return j < after.size() ? &after[j++] : nullptr; };
  for (std::size_t i = 0; i < before.size(); ++i) {
    const Entry& b = before[i];
    SCOPED_TRACE("before[" + std::to_string(i) + "] iteration " + std::to_string(b.iteration));
    const bool old = phase > 0 && outside_window(b, next_iteration, keep);
    if (!old) {
      const Entry* a = next();
      ASSERT_NE(a, nullptr);
      EXPECT_TRUE(same(*a, b));
      continue;
    }
    switch (b.kind) {
      case EntryKind::Nudge:
        if (b.message.role == "tool") {
          const Entry* a = next();
          ASSERT_NE(a, nullptr);
          EXPECT_TRUE(same_except_content(*a, b));
          EXPECT_EQ(a->message.content, kDropped);
        }
        break;
      case EntryKind::ToolResult: {
        const Entry* a = next();
        ASSERT_NE(a, nullptr);
        EXPECT_TRUE(same_except_content(*a, b));
        EXPECT_EQ(a->message.content,
                  phase >= 2 ? std::string(kDropped) : expected_cut(b.message.content));
        break;
      }
      case EntryKind::TextResponse:
        if (phase < 3) {
          const Entry* a = next();
          ASSERT_NE(a, nullptr);
          EXPECT_TRUE(same(*a, b));
        }
        break;
      case EntryKind::ToolCall: {
        const Entry* a = next();
        ASSERT_NE(a, nullptr);
        EXPECT_TRUE(same_except_content(*a, b));
        EXPECT_EQ(a->message.content, phase >= 3 ? "" : b.message.content);
        break;
      }
      default:
        FAIL() << "unexpected kind";
    }
  }
  EXPECT_EQ(j, after.size()) << "compaction added entries";
}

ContextPolicy policy(std::int64_t budget, std::array<double, 3> thresholds = {0.6, 0.75, 0.9},
                     std::int64_t keep = 2) {
  ContextPolicy p;
  p.budget_tokens = budget;
  p.keep_recent_iterations = keep;
  p.phase_thresholds = thresholds;
  return p;
}

// The estimate after phases 1..k regardless of thresholds (a zero threshold always fires).
std::int64_t forced(std::vector<Entry> h, int k, std::int64_t next_iteration) {
  std::array<double, 3> t = {kInf, kInf, kInf};
  for (int i = 0; i < k; ++i) t[static_cast<std::size_t>(i)] = 0.0;
  return compact(h, policy(1000, t), next_iteration).tokens_after;
}

// The largest budget B for which `tokens` >= t * B (so B + 1 no longer crosses).
std::int64_t largest_crossing_budget(std::int64_t tokens, double t) {
  auto b = static_cast<std::int64_t>(static_cast<double>(tokens) / t);
  while (static_cast<double>(tokens) >= t * static_cast<double>(b + 1)) ++b;
  while (static_cast<double>(tokens) < t * static_cast<double>(b)) --b;
  return b;
}

std::map<std::string, int> answers_per_call(const std::vector<Entry>& h) {
  std::map<std::string, int> n;
  for (const Entry& e : h) {
    for (const auto& c : e.message.tool_calls) n.try_emplace(c.id, 0);
  }
  for (const Entry& e : h) {
    if (e.message.role == "tool") ++n[e.message.tool_call_id];
  }
  return n;
}

// --- the estimate ---

TEST(CompactionEstimate, FollowsTheDocumentedFormula) {
  EXPECT_EQ(estimate_tokens({}), 0);
  EXPECT_EQ(estimate_tokens({user_input("")}), 4);
  EXPECT_EQ(estimate_tokens({user_input("hello")}), 4 + 2);     // ceil(5/4)
  EXPECT_EQ(estimate_tokens({user_input("12345678")}), 4 + 2);  // exactly 8/4
  // reasoning 3 + id 2 + name 4 + arguments 7 = 16 bytes
  EXPECT_EQ(estimate_tokens({tool_call(1, "abc", {call("c1", "read", R"({"p":1})")})}), 4 + 4);
  // content 2 + tool_call_id 2 + tool_name 4 = 8 bytes
  EXPECT_EQ(estimate_tokens({tool_result(1, "c1", "read", "ok")}), 4 + 2);
  // bytes, not code points: "é" is two bytes
  EXPECT_EQ(estimate_tokens({user_input("\xC3\xA9\xC3\xA9\xC3\xA9")}), 4 + 2);
  EXPECT_EQ(estimate_tokens({user_input("hello"), user_input(""), user_input("abcdefghi")}),
            6 + 4 + 7);
}

// --- thresholds and phases ---

TEST(CompactionThreshold, BelowTheFirstThresholdNothingChanges) {
  std::vector<Entry> h = standard_history(12);
  const std::vector<Entry> before = h;
  const std::int64_t tokens = estimate_tokens(h);
  const std::int64_t budget = largest_crossing_budget(tokens, 0.6) + 1;  // tokens < 0.6 * budget
  const Compaction c = compact(h, policy(budget), 13);
  EXPECT_EQ(c.phase, 0);
  EXPECT_TRUE(same(h, before));
  EXPECT_EQ(c.tokens_before, tokens);
  EXPECT_EQ(c.tokens_after, tokens);
  EXPECT_EQ(c.entries_before, static_cast<std::int64_t>(before.size()));
  EXPECT_EQ(c.entries_after, static_cast<std::int64_t>(before.size()));
}

TEST(CompactionThreshold, ExactlyAtTheThresholdCompacts) {
  std::vector<Entry> h = standard_history(12);
  const std::int64_t tokens = estimate_tokens(h);
  // 0.5 x (2 x tokens) is exact in binary: the estimate sits on the threshold.
  const Compaction c = compact(h, policy(2 * tokens, {0.5, 0.75, 0.9}), 13);
  EXPECT_EQ(c.phase, 1);
  EXPECT_LT(c.tokens_after, tokens);
}

TEST(CompactionPhases, EachPhaseRunsAtItsThresholdAndNotBelow) {
  const std::int64_t next = 13;
  const std::vector<Entry> base = standard_history(12);
  const std::int64_t e0 = estimate_tokens(base);
  const std::int64_t e1 = forced(base, 1, next);
  const std::int64_t e2 = forced(base, 2, next);
  ASSERT_GT(e0, e1);
  ASSERT_GT(e1, e2);
  // Phase k runs when the estimate left by phase k-1 reaches threshold k; the budget one larger
  // stops at phase k-1.
  const std::int64_t budgets[3] = {largest_crossing_budget(e0, 0.6),
                                   largest_crossing_budget(e1, 0.75),
                                   largest_crossing_budget(e2, 0.9)};
  for (int k = 1; k <= 3; ++k) {
    SCOPED_TRACE("phase " + std::to_string(k));
    const std::int64_t budget = budgets[k - 1];
    std::vector<Entry> h = base;
    const Compaction c = compact(h, policy(budget), next);
    EXPECT_EQ(c.phase, k);
    expect_phase_applied(base, h, k, next, 2);
    EXPECT_EQ(c.tokens_after, estimate_tokens(h));
    EXPECT_EQ(c.entries_after, static_cast<std::int64_t>(h.size()));

    std::vector<Entry> g = base;
    const Compaction d = compact(g, policy(budget + 1), next);
    EXPECT_EQ(d.phase, k - 1);
    expect_phase_applied(base, g, k - 1, next, 2);
  }
}

TEST(CompactionPhases, AStillLargeHistoryDoesNotEscalateBelowTheNextThreshold) {
  // After phase 1 the estimate is still above threshold 1 but under threshold 2: forge's rule
  // stops there rather than dropping results to get under the first threshold.
  const std::vector<Entry> base = standard_history(12);
  const std::int64_t e1 = forced(base, 1, 13);
  const std::int64_t budget = largest_crossing_budget(e1, 0.75) + 1;
  ASSERT_GE(static_cast<double>(e1), 0.6 * static_cast<double>(budget));
  std::vector<Entry> h = base;
  const Compaction c = compact(h, policy(budget), 13);
  EXPECT_EQ(c.phase, 1);
  EXPECT_EQ(c.tokens_after, e1);
}

TEST(CompactionPhases, WhatEachPhaseDoes) {
  std::vector<Entry> h = {
      system_prompt("sys"),
      user_input("task"),
      tool_call(1, "thinking", {call("a", "read", "{}"), call("b", "grep", "{}")}),
      tool_result(1, "a", "read", filler(300, 'x')),
      tool_nudge(1, "b", "grep", "grep is not allowed before read"),
      user_nudge(1, "call the terminal tool"),
      text_response(1, "some prose"),
      tool_call(2, "more", {call("c", "read", "{}")}),
      tool_result(2, "c", "read", filler(300, 'y'), true),
  };
  // keep 0 at next iteration 3: iterations 1 and 2 are both outside the window.
  std::vector<Entry> p1 = h;
  compact(p1, policy(1, {0.0, kInf, kInf}, 0), 3);
  ASSERT_EQ(p1.size(), 8u);
  EXPECT_EQ(p1[3].message.content,
            filler(192, 'x') + "\n[truncated by compaction: 108 bytes removed]");
  EXPECT_EQ(p1[4].message.content, kDropped);  // a refusal answers its call: it stays, emptied
  EXPECT_TRUE(p1[4].message.is_error);
  EXPECT_EQ(p1[5].message.content, "some prose");  // the user nudge is gone
  EXPECT_EQ(p1[7].message.content.size(), 192u + 45u);
  EXPECT_TRUE(p1[7].message.is_error);

  std::vector<Entry> p2 = h;
  compact(p2, policy(1, {0.0, 0.0, kInf}, 0), 3);
  ASSERT_EQ(p2.size(), 8u);
  EXPECT_EQ(p2[3].message.content, kDropped);
  EXPECT_EQ(p2[3].message.tool_call_id, "a");
  EXPECT_EQ(p2[3].message.tool_name, "read");
  EXPECT_EQ(p2[7].message.content, kDropped);
  EXPECT_TRUE(p2[7].message.is_error);
  EXPECT_EQ(p2[2].message.content, "thinking");
  EXPECT_EQ(p2[5].message.content, "some prose");

  std::vector<Entry> p3 = h;
  const Compaction c = compact(p3, policy(1, {0.0, 0.0, 0.0}, 0), 3);
  EXPECT_EQ(c.phase, 3);
  ASSERT_EQ(p3.size(), 7u);
  EXPECT_EQ(p3[2].message.content, "");
  EXPECT_TRUE(same_calls(p3[2].message, h[2].message));
  EXPECT_EQ(p3[5].kind, EntryKind::ToolCall);  // the text response is gone
  EXPECT_EQ(p3[5].message.content, "");
  EXPECT_EQ(c.entries_before, 9);
  EXPECT_EQ(c.entries_after, 7);
}

TEST(CompactionPhases, MislabelledEntriesNeverLoseCallsOrAnswers) {
  // A text response that carries calls and a nudge that is a tool message: dropping them must
  // not take a call or an answer with them.
  Entry odd_text = text_response(1, "prose");
  odd_text.message.tool_calls = {call("z", "read", "{}")};
  std::vector<Entry> h = {system_prompt("s"), user_input("u"), odd_text,
                          tool_nudge(1, "z", "read", "refused")};
  compact(h, policy(1, {0.0, 0.0, 0.0}, 0), 5);
  ASSERT_EQ(h.size(), 4u);
  EXPECT_EQ(h[2].message.content, "");
  EXPECT_TRUE(same_calls(h[2].message, odd_text.message));
  EXPECT_EQ(h[3].message.content, kDropped);
  EXPECT_EQ(answers_per_call(h), (std::map<std::string, int>{{"z", 1}}));
}

TEST(CompactionPhases, EachPhaseTestsItsOwnThreshold) {
  // Unsorted thresholds: phase 2 fires on t2 alone, even where the estimate is already under t1.
  const std::vector<Entry> base = standard_history(12);
  const std::int64_t e1 = forced(base, 1, 13);
  const std::int64_t budget = 2 * e1;
  std::vector<Entry> h = base;
  const Compaction c = compact(h, policy(budget, {0.6, 0.25, kInf}), 13);
  ASSERT_LT(static_cast<double>(e1), 0.6 * static_cast<double>(budget));
  EXPECT_EQ(c.phase, 2);
  expect_phase_applied(base, h, 2, 13, 2);
}

// --- what is never touched ---

TEST(CompactionWindow, TheRecentWindowIsExactlyTheLastKeepIterations) {
  const std::vector<Entry> base = standard_history(12);
  for (std::int64_t keep : {0, 1, 2, 5, 11, 12, 100}) {
    SCOPED_TRACE("keep " + std::to_string(keep));
    std::vector<Entry> h = base;
    compact(h, policy(1, {0.0, 0.0, 0.0}, keep), 13);
    expect_phase_applied(base, h, 3, 13, keep);
    // An entry of iteration 12 - keep is compacted, one of 13 - keep is not.
    const auto reasoning_of = [&](std::int64_t it) {
      for (const Entry& e : h) {
        if (e.iteration == it && e.kind == EntryKind::ToolCall) return e.message.content;
      }
      return std::string("absent");
    };
    if (keep < 12) {
      EXPECT_EQ(reasoning_of(12 - keep), "");
    }
    if (keep >= 1 && keep <= 12) {
      EXPECT_EQ(reasoning_of(13 - keep), filler(400, 'r'));
    }
  }
}

TEST(CompactionWindow, NegativeKeepCountsAsZeroAndEarlyIterationsAreSafe) {
  const std::vector<Entry> base = standard_history(3);
  std::vector<Entry> h = base;
  compact(h, policy(1, {0.0, 0.0, 0.0}, -5), 4);
  expect_phase_applied(base, h, 3, 4, 0);
  for (std::int64_t next : {std::numeric_limits<std::int64_t>::min(), std::int64_t{-1},
                            std::int64_t{0}, std::int64_t{1}}) {
    std::vector<Entry> g = base;
    const Compaction c = compact(g, policy(1, {0.0, 0.0, 0.0}, 0), next);
    EXPECT_EQ(c.phase, 3);
    EXPECT_TRUE(same(g, base)) << "next iteration " << next;
  }
  std::vector<Entry> g = base;
  compact(g, policy(1, {0.0, 0.0, 0.0}, std::numeric_limits<std::int64_t>::max()),
          std::numeric_limits<std::int64_t>::max());
  EXPECT_TRUE(same(g, base));
}

TEST(CompactionWindow, PromptInputCallsAndWindowSurviveEveryPhase) {
  std::vector<Entry> base = standard_history(10);
  base.push_back(user_input("a follow-up from the user", 4));  // user input is never dropped
  for (int k = 1; k <= 3; ++k) {
    std::array<double, 3> t = {kInf, kInf, kInf};
    for (int i = 0; i < k; ++i) t[static_cast<std::size_t>(i)] = 0.0;
    std::vector<Entry> h = base;
    EXPECT_EQ(compact(h, policy(1, t), 11).phase, k);
    EXPECT_TRUE(same(h[0], base[0]));
    EXPECT_TRUE(same(h[1], base[1]));
    EXPECT_TRUE(same(h.back(), base.back()));
    std::vector<model::ToolCallRequest> calls_before, calls_after;
    for (const Entry& e : base) {
      calls_before.insert(calls_before.end(), e.message.tool_calls.begin(),
                          e.message.tool_calls.end());
    }
    for (const Entry& e : h) {
      calls_after.insert(calls_after.end(), e.message.tool_calls.begin(),
                         e.message.tool_calls.end());
    }
    EXPECT_TRUE(std::equal(calls_before.begin(), calls_before.end(), calls_after.begin(),
                           calls_after.end(),
                           [](const auto& a, const auto& b) { return same(a, b); }));
    for (const Entry& e : base) {
      if (e.iteration < 9) continue;
      EXPECT_TRUE(std::any_of(h.begin(), h.end(), [&](const Entry& a) { return same(a, e); }));
    }
    expect_phase_applied(base, h, k, 11, 2);
  }
}

// --- the pairing invariant ---

TEST(CompactionPairing, EveryCallKeepsOneAnswerOverARandomizedRun) {
  std::mt19937_64 rng(0x6d696c6cULL);  // the engine's output is fixed by the standard
  const auto pick = [&](std::uint64_t n) { return rng() % n; };
  const std::string pieces[] = {"a", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "\n"};
  const auto random_text = [&](std::size_t max_pieces) {
    std::string s;
    const std::size_t n = pick(max_pieces + 1);
    for (std::size_t i = 0; i < n; ++i) s += pieces[pick(5)];
    return s;
  };
  std::vector<Entry> h = {system_prompt(random_text(200)), user_input(random_text(200))};
  const ContextPolicy p = policy(6000, {0.6, 0.75, 0.9}, 2);
  int phases_seen[4] = {0, 0, 0, 0};
  std::int64_t next_id = 0;
  for (std::int64_t it = 1; it <= 400; ++it) {
    const std::vector<Entry> before = h;
    const Compaction c = compact(h, p, it);
    ++phases_seen[c.phase];
    expect_phase_applied(before, h, c.phase, it, 2);
    const auto answers = answers_per_call(h);
    for (const auto& [id, n] : answers) ASSERT_EQ(n, 1) << "call " << id << " at iteration " << it;
    ASSERT_EQ(answers.size(), static_cast<std::size_t>(next_id));

    const std::size_t calls = pick(4);
    if (calls == 0) {
      h.push_back(text_response(it, random_text(300)));
    } else {
      std::vector<model::ToolCallRequest> batch;
      for (std::size_t i = 0; i < calls; ++i) {
        batch.push_back(call("c" + std::to_string(next_id++), pick(2) ? "read" : "grep",
                             "{\"q\":\"" + random_text(10) + "\"}"));
      }
      h.push_back(tool_call(it, random_text(100), batch));
      for (const auto& b : batch) {
        if (pick(5) == 0) {
          h.push_back(tool_nudge(it, b.id, b.name, random_text(80)));
        } else {
          h.push_back(tool_result(it, b.id, b.name, random_text(1500), pick(6) == 0));
        }
      }
    }
    if (pick(4) == 0) h.push_back(user_nudge(it, random_text(100)));
  }
  // The run must have exercised every phase for the invariant to mean something.
  EXPECT_GT(phases_seen[1], 0);
  EXPECT_GT(phases_seen[2], 0);
  EXPECT_GT(phases_seen[3], 0);
  for (const Entry& e : h) EXPECT_TRUE(text::valid_utf8(e.message.content));
}

// --- truncation ---

TEST(CompactionTruncation, CutsAtACodePointBoundaryAndSaysSo) {
  const std::string euro = "\xE2\x82\xAC";
  std::string content = "a";
  for (int i = 0; i < 100; ++i) content += euro;  // 301 bytes; byte 192 is inside a euro sign
  std::vector<Entry> h = {tool_call(1, "", {call("a", "read", "{}")}),
                          tool_result(1, "a", "read", content)};
  compact(h, policy(1, {0.0, kInf, kInf}, 0), 2);
  const std::string& cut = h[1].message.content;
  EXPECT_EQ(cut, content.substr(0, 190) + "\n[truncated by compaction: 111 bytes removed]");
  EXPECT_TRUE(text::valid_utf8(cut));

  std::string emoji;
  for (int i = 0; i < 100; ++i) emoji += "\xF0\x9F\x98\x80";
  for (std::size_t lead = 0; lead < 4; ++lead) {
    const std::string s = std::string(lead, 'b') + emoji;
    std::vector<Entry> g = {tool_result(1, "a", "read", s)};
    compact(g, policy(1, {0.0, kInf, kInf}, 0), 2);
    const std::string& out = g[0].message.content;
    const std::size_t nl = out.find("\n[truncated by compaction: ");
    ASSERT_NE(nl, std::string::npos);
    EXPECT_LE(nl, 192u);
    EXPECT_GT(nl, 188u);
    EXPECT_EQ(out.substr(0, nl), s.substr(0, nl));
    EXPECT_TRUE(text::valid_utf8(out)) << "lead " << lead;
    EXPECT_EQ(out.substr(nl),
              "\n[truncated by compaction: " + std::to_string(s.size() - nl) + " bytes removed]");
  }
}

TEST(CompactionTruncation, OnlyResultsLongerThanTheLimitAreCut) {
  std::vector<Entry> h = {tool_result(1, "a", "read", filler(256, 'x')),
                          tool_result(1, "b", "read", filler(257, 'x'))};
  compact(h, policy(1, {0.0, kInf, kInf}, 0), 2);
  EXPECT_EQ(h[0].message.content, filler(256, 'x'));
  EXPECT_EQ(h[1].message.content,
            filler(192, 'x') + "\n[truncated by compaction: 65 bytes removed]");
  // A cut result is short enough never to be cut again.
  const std::vector<Entry> once = h;
  compact(h, policy(1, {0.0, kInf, kInf}, 0), 2);
  EXPECT_TRUE(same(h, once));
}

// --- idempotence, determinism, memory ---

TEST(CompactionIdempotence, ASecondCompactionChangesNothing) {
  const std::vector<Entry> base = standard_history(20);
  const std::int64_t e0 = estimate_tokens(base);
  // Ends under the first threshold: the second call is phase 0.
  {
    std::vector<Entry> h = base;
    const ContextPolicy p = policy(e0 * 10 / 9, {0.6, 0.75, 0.9});
    const Compaction first = compact(h, p, 21);
    ASSERT_GE(first.phase, 1);
    EXPECT_GT(first.changed, 0);
    ASSERT_LT(static_cast<double>(first.tokens_after), 0.6 * static_cast<double>(p.budget_tokens));
    const std::vector<Entry> once = h;
    const Compaction second = compact(h, p, 21);
    EXPECT_EQ(second.phase, 0);
    EXPECT_TRUE(same(h, once));
  }
  // What cannot be dropped stays above every threshold: phase 3 runs again and finds nothing.
  {
    std::vector<Entry> h = base;
    const ContextPolicy p = policy(10);
    const Compaction first = compact(h, p, 21);
    EXPECT_EQ(first.phase, 3);
    EXPECT_GE(first.changed, first.entries_before - first.entries_after);
    const std::vector<Entry> once = h;
    const Compaction second = compact(h, p, 21);
    EXPECT_EQ(second.phase, 3);
    EXPECT_EQ(second.changed, 0);
    EXPECT_EQ(second.tokens_before, second.tokens_after);
    EXPECT_EQ(second.entries_before, second.entries_after);
    EXPECT_TRUE(same(h, once));
  }
}

TEST(CompactionDeterminism, SameInputSameOutput) {
  const std::vector<Entry> base = standard_history(30);
  for (std::int64_t budget : {std::int64_t{1}, std::int64_t{9000}, std::int64_t{12000},
                              std::int64_t{20000}, std::int64_t{1000000}}) {
    std::vector<Entry> a = base;
    std::vector<Entry> b = base;
    const Compaction ca = compact(a, policy(budget), 31);
    const Compaction cb = compact(b, policy(budget), 31);
    EXPECT_TRUE(same(a, b));
    EXPECT_EQ(
        std::tie(ca.phase, ca.tokens_before, ca.tokens_after, ca.entries_before, ca.entries_after),
        std::tie(cb.phase, cb.tokens_before, cb.tokens_after, cb.entries_before, cb.entries_after));
  }
}

TEST(CompactionMemory, DroppedContentGivesItsBufferBack) {
  std::vector<Entry> h = {tool_call(1, filler(100000, 'r'), {call("a", "read", "{}")}),
                          tool_result(1, "a", "read", filler(100000, 'x')),
                          tool_result(1, "b", "read", filler(100000, 'y')),
                          user_nudge(1, filler(100000, 'n'))};
  std::vector<Entry> p1 = h;
  compact(p1, policy(1, {0.0, kInf, kInf}, 0), 2);
  EXPECT_LT(p1[1].message.content.capacity(), 1024u);
  std::vector<Entry> p3 = h;
  compact(p3, policy(1, {0.0, 0.0, 0.0}, 0), 2);
  ASSERT_EQ(p3.size(), 3u);
  EXPECT_LT(p3[0].message.content.capacity(), 64u);
  EXPECT_LT(p3[1].message.content.capacity(), 64u);
  EXPECT_LT(p3[2].message.content.capacity(), 64u);
}

TEST(CompactionMemory, ARemovedEntryDoesNotLeaveItsBufferInTheSlotItFrees) {
  // The nudge is removed and the short window entry after it moves into its slot.
  std::vector<Entry> h = {user_nudge(1, filler(100000, 'n')), user_nudge(1, filler(100000, 'm')),
                          text_response(5, "ok"), tool_call(5, "", {call("a", "read", "{}")})};
  compact(h, policy(1, {0.0, kInf, kInf}, 1), 6);
  ASSERT_EQ(h.size(), 2u);
  for (const Entry& e : h) EXPECT_LT(e.message.content.capacity(), 64u);
}

TEST(CompactionLongRun, AThousandIterationsStayBounded) {
  const ContextPolicy p = policy(8192);
  std::vector<Entry> h = {system_prompt(filler(2000, 's')), user_input(filler(1000, 'u'))};
  const std::int64_t fixed = estimate_tokens(h);
  const auto id_of = [](std::int64_t it) {
    const std::string n = std::to_string(it);
    return "call-" + std::string(7 - n.size(), '0') + n;  // 12 bytes for every iteration
  };
  const std::string args = R"({"path":"src/main.cpp"})";
  const auto ceil4 = [](std::size_t bytes) { return static_cast<std::int64_t>((bytes + 3) / 4); };
  // What phase 3 leaves of an iteration: the call without its reasoning, the result's placeholder.
  const std::int64_t skeleton =
      (4 + ceil4(12 + 4 + args.size())) + (4 + ceil4(kDropped.size() + 12 + 4));
  std::vector<std::int64_t> full = {0};  // each iteration's estimate as appended
  int phase3 = 0;
  for (std::int64_t it = 1; it <= 1000; ++it) {
    const Compaction c = compact(h, p, it);
    // Iterations it-1 and it-2 are the window; everything at or before it-3 is compactable.
    const std::int64_t window = (it >= 2 ? full[static_cast<std::size_t>(it - 1)] : 0) +
                                (it >= 3 ? full[static_cast<std::size_t>(it - 2)] : 0);
    const std::int64_t old = std::max<std::int64_t>(0, it - 3);
    const std::int64_t floor = fixed + window + old * skeleton;
    // Under 0.9 x budget, or down to exactly what cannot be dropped.
    ASSERT_LE(static_cast<double>(c.tokens_after),
              std::max(0.9 * static_cast<double>(p.budget_tokens), static_cast<double>(floor)))
        << "iteration " << it;
    if (c.phase == 3) {
      ++phase3;
      ASSERT_EQ(c.tokens_after, floor) << "iteration " << it;
      ASSERT_LE(c.entries_after, 2 + 2 * old + 2 * 4) << "iteration " << it;
    }
    // Memory follows the estimate (4 bytes a token, plus a small-string buffer per entry), so
    // content already dropped is not still held.
    std::size_t held = 0;
    for (const Entry& e : h) held += e.message.content.capacity();
    ASSERT_LE(held, static_cast<std::size_t>(4 * c.tokens_after + 32 * c.entries_after))
        << "iteration " << it;

    std::vector<Entry> step;
    const std::string id = id_of(it);
    step.push_back(tool_call(it, filler(300, 'r'), {call(id, "read", args)}));
    step.push_back(tool_result(it, id, "read", filler(3000, 'x')));
    if (it % 3 == 0) step.push_back(user_nudge(it, filler(200, 'n')));
    if (it % 5 == 0) step.push_back(text_response(it, filler(250, 't')));
    full.push_back(estimate_tokens(step));
    h.insert(h.end(), step.begin(), step.end());
  }
  EXPECT_GT(phase3, 500);
  const Compaction last = compact(h, p, 1001);
  EXPECT_EQ(last.phase, 3);
  EXPECT_EQ(last.tokens_after, fixed + full[999] + full[1000] + 998 * skeleton);
  std::int64_t window_entries = 0;
  for (const Entry& e : h) window_entries += e.iteration >= 999 ? 1 : 0;
  EXPECT_EQ(last.entries_after, 2 + 2 * 998 + window_entries);
  EXPECT_GT(last.tokens_after, p.budget_tokens);  // the undroppable part alone is over budget
}

}  // namespace
}  // namespace mf::runtime
