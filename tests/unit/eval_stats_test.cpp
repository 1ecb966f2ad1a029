// The statistics of eval reports against values computed independently (closed forms and
// published tables), and summarize() on repeated cases.
#include "mf/eval/stats.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <span>
#include <vector>

#include "mf/eval/report.hpp"
#include "mf/eval/runner.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/pointer.hpp"
#include "mf/json/reader.hpp"

namespace mf::eval {
namespace {

constexpr double kZ2 = 1.959963984540054 * 1.959963984540054;

TEST(EvalStats, WilsonMatchesItsClosedFormsAndTables) {
  // All passed: [n / (n + z^2), 1]; none passed: [0, z^2 / (n + z^2)].
  for (int n : {1, 4, 10, 1000}) {
    EXPECT_DOUBLE_EQ(wilson95(n, n).first, n / (n + kZ2));
    EXPECT_DOUBLE_EQ(wilson95(n, n).second, 1.0);
    EXPECT_DOUBLE_EQ(wilson95(0, n).first, 0.0);
    EXPECT_DOUBLE_EQ(wilson95(0, n).second, kZ2 / (n + kZ2));
  }
  // 5 of 10 and 81 of 263 (Newcombe 1998, table I: 0.2366-0.7634 and 0.2553-0.3662).
  EXPECT_NEAR(wilson95(5, 10).first, 0.2366, 5e-5);
  EXPECT_NEAR(wilson95(5, 10).second, 0.7634, 5e-5);
  EXPECT_NEAR(wilson95(81, 263).first, 0.2553, 5e-5);
  EXPECT_NEAR(wilson95(81, 263).second, 0.3662, 5e-5);
  EXPECT_EQ(wilson95(0, 0), std::make_pair(0.0, 1.0));
}

TEST(EvalStats, PercentilesAreNearestRank) {
  EXPECT_FALSE(percentile({}, 0.5).has_value());
  EXPECT_EQ(*percentile({7}, 0.9), 7);
  EXPECT_EQ(*percentile({4, 1, 3, 2}, 0.5), 2);  // ceil(0.5 * 4) = 2nd smallest
  EXPECT_EQ(*percentile({4, 1, 3, 2}, 0.9), 4);
  std::vector<double> hundred;
  for (int i = 100; i >= 1; --i) hundred.push_back(i);
  EXPECT_EQ(*percentile(hundred, 0.9), 90);
  EXPECT_EQ(*percentile(hundred, 0.5), 50);
}

TEST(EvalStats, McNemarIsTheExactBinomialTest) {
  EXPECT_DOUBLE_EQ(mcnemar_p(0, 0), 1.0);
  EXPECT_DOUBLE_EQ(mcnemar_p(3, 3), 1.0);
  EXPECT_NEAR(mcnemar_p(0, 5), 2.0 / 32, 1e-12);         // 2 * (1/2)^5
  EXPECT_NEAR(mcnemar_p(1, 9), 2.0 * 11 / 1024, 1e-12);  // 2 * (1 + 10) / 2^10
  EXPECT_NEAR(mcnemar_p(9, 1), mcnemar_p(1, 9), 1e-15);
  EXPECT_LT(mcnemar_p(0, 2000), 1e-300 + 1e-12);
}

TEST(EvalStats, PairedDifferenceAndItsInterval) {
  const Difference none = paired_difference(0, 0, 10);
  EXPECT_EQ(none.estimate, 0);
  EXPECT_EQ(none.low, 0);
  EXPECT_EQ(none.high, 0);
  // 6 improved, 2 regressed of 20: d = 0.2, var = (8 - 20 * 0.04) / 400 = 0.018.
  const Difference d = paired_difference(6, 2, 20);
  EXPECT_DOUBLE_EQ(d.estimate, 0.2);
  EXPECT_NEAR(d.high - d.estimate, 1.959963984540054 * std::sqrt(0.018), 1e-12);
  EXPECT_GE(paired_difference(10, 0, 10).high, 1.0 - 1e-12);
  EXPECT_LE(paired_difference(10, 0, 10).high, 1.0);
}

TEST(EvalStats, SummaryOfRepeatedCases) {
  const auto run = [](const char* status) { return json::Value(json::Object{{"status", status}}); };
  json::Array cases;
  for (const auto& [id, outcomes] : std::vector<std::pair<std::string, std::vector<const char*>>>{
           {"always", {"passed", "passed", "passed"}},
           {"flaky", {"passed", "failed", "passed"}},
           {"never", {"failed", "failed", "failed"}}}) {
    json::Array attempts;
    bool all = true;
    for (const char* o : outcomes) {
      attempts.push_back(run(o));
      all = all && std::string(o) == "passed";
    }
    cases.push_back(json::Object{
        {"id", id}, {"status", all ? "passed" : "failed"}, {"attempts", std::move(attempts)}});
  }
  const json::Value s = *summarize(cases);
  EXPECT_EQ(s.find("cases")->as_exact_int(), 3);
  EXPECT_EQ(s.find("passed")->as_exact_int(), 1);
  EXPECT_EQ(s.find("attempts")->as_exact_int(), 9);
  EXPECT_EQ(s.find("attempts_passed")->as_exact_int(), 5);
  EXPECT_DOUBLE_EQ(s.find("pass_at_k")->as_number(), 2.0 / 3);
  EXPECT_DOUBLE_EQ(s.find("pass_hat_k")->as_number(), 1.0 / 3);
  EXPECT_EQ(json::canonical(*s.find("flaky")), R"(["flaky"])");
  EXPECT_EQ(s.find("latency_ms"), nullptr);
  EXPECT_EQ(s.find("usage"), nullptr);
}

}  // namespace
}  // namespace mf::eval

namespace mf::eval {
namespace {

TEST(EvalScoring, MillforgesPrecedence) {
  const auto run = [](std::string terminal, std::string disposition) {
    runtime::RunOutcome o;
    o.terminal = std::move(terminal);
    if (!disposition.empty()) o.output = json::Object{{"disposition", disposition}};
    return o;
  };
  Expect none, blocked;
  blocked.disposition = "blocked";
  EXPECT_EQ(plan_outcome(none, run("model_failed", ""), false), "provider_failure");
  for (const char* t :
       {"tool_failed", "timed_out", "cancelled", "budget_exhausted", "terminal_rejected"}) {
    EXPECT_EQ(plan_outcome(none, run(t, ""), false), "runtime_failure") << t;
  }
  EXPECT_EQ(plan_outcome(none, run("completed", "success"), true), "valid_completion");
  EXPECT_EQ(plan_outcome(none, run("completed", "success"), false), "false_closure");
  EXPECT_EQ(plan_outcome(blocked, run("completed", "blocked"), true), "correctly_blocked");
  EXPECT_EQ(plan_outcome(none, run("completed", "blocked"), false), "false_blocked");
  EXPECT_EQ(plan_outcome(blocked, run("completed", "rejected"), false), "false_blocked");
}

// The summary's numbers past one sort run (512 KiB, 65,536 numbers) and in a matrix's column: the
// median and p90 are percentile()'s and the total is the sum in the order the attempts came.
TEST(EvalStats, ASummarysNumbersAcrossSortRunsAreExact) {
  SummaryBuilder summary;
  std::vector<double> latency, tokens, cost, column;
  double tokens_total = 0, cost_total = 0;
  for (int i = 0; i < 150000; ++i) {
    AttemptFacts f;
    f.passed = i % 3 != 0;
    f.latency_ms = static_cast<double>((i * 7919) % 10007);
    f.usage[1] = static_cast<double>((i * 31) % 977);  // many ties
    f.usage[0] = 0.001 * ((i * 13) % 1000) + 1e-9 * i;
    latency.push_back(*f.latency_ms);
    tokens.push_back(*f.usage[1]);
    cost.push_back(*f.usage[0]);
    tokens_total += *f.usage[1];
    cost_total += *f.usage[0];
    const bool in_x = i % 2 == 0;
    if (in_x) column.push_back(*f.latency_ms);
    summary.add(std::span<const AttemptFacts>(&f, 1), false, in_x ? "x" : "y",
                [] { return std::string("never asked"); });
  }
  Result<json::Value> made = summary.finish();
  ASSERT_TRUE(made.ok());
  const json::Value& s = *made;
  EXPECT_EQ(json::find_at(s, "/latency_ms/median")->as_number(), *percentile(latency, 0.5));
  EXPECT_EQ(json::find_at(s, "/latency_ms/p90")->as_number(), *percentile(latency, 0.9));
  EXPECT_EQ(json::find_at(s, "/usage/input_tokens/median")->as_number(), *percentile(tokens, 0.5));
  EXPECT_EQ(json::find_at(s, "/usage/input_tokens/p90")->as_number(), *percentile(tokens, 0.9));
  EXPECT_EQ(json::find_at(s, "/usage/input_tokens/total")->as_number(), tokens_total);
  EXPECT_EQ(json::find_at(s, "/usage/cost_usd/median")->as_number(), *percentile(cost, 0.5));
  EXPECT_EQ(json::find_at(s, "/usage/cost_usd/p90")->as_number(), *percentile(cost, 0.9));
  EXPECT_EQ(json::find_at(s, "/usage/cost_usd/total")->as_number(), cost_total);
  EXPECT_EQ(json::find_at(s, "/variants/x/latency_ms/median")->as_number(),
            *percentile(column, 0.5));
  EXPECT_EQ(json::find_at(s, "/variants/x/latency_ms/p90")->as_number(), *percentile(column, 0.9));
  EXPECT_EQ(json::find_at(s, "/cases")->as_number(), 150000);
  EXPECT_EQ(json::find_at(s, "/passed")->as_number(), 100000);
}

}  // namespace
}  // namespace mf::eval
