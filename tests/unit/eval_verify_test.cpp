// `mf-eval verify` in the library: an entry checked against its trace with and without its case,
// a summary statistic named down to its member, and verify_report over a campaign's traces held
// in memory (the store's way: by digest).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>

#include "mf/diag/codes.hpp"
#include "mf/eval/entry.hpp"
#include "mf/eval/report.hpp"
#include "mf/eval/runner.hpp"
#include "mf/eval/suite.hpp"
#include "mf/eval/verify.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/pointer.hpp"

namespace mf::eval {
namespace {

const std::string kForge = std::string(MF_SOURCE_DIR) + "/fixtures/forge";

// A campaign of the Forge suite, its traces kept by digest as `mf-eval run --store` keeps them.
struct Campaign {
  Suite suite;
  json::Value document;
  std::map<std::string, std::string> traces;  // trace_sha256 -> bytes
};

Campaign forge_campaign(std::int64_t repeat) {
  Campaign c;
  Result<Suite> suite = load_suite(kForge + "/eval-suite.json");
  EXPECT_TRUE(suite.ok());
  c.suite = std::move(*suite);
  RunOptions o;
  o.fixed_clock = true;
  o.repeat = repeat;
  std::mutex m;
  o.keep_trace = [&](const std::string&, std::optional<std::int64_t>, std::string_view trace) {
    std::lock_guard<std::mutex> lock(m);
    c.traces[hash::sha256_hex(trace)] = std::string(trace);
    return Status();
  };
  Result<SuiteRun> run = run_suite(c.suite, o);
  EXPECT_TRUE(run.ok());
  c.document = run->document();
  return c;
}

TraceFetch from(const std::map<std::string, std::string>& traces) {
  return [&traces](const ReportTrace& t) -> Result<std::string> {
    auto it = traces.find(t.trace_sha256);
    if (it == traces.end()) return diag::error(diag::codes::kStoreMissingObject, "no such object");
    return it->second;
  };
}

Report read(const json::Value& document) {
  Result<Report> r = parse_report(json::canonical_file(document), SummaryCheck::Collect);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.diagnostics()[0].message);
  return r.ok() ? std::move(*r) : Report{};
}

// The entry of case `id` without its id, as a journal holds it, and its trace.
std::pair<json::Value, std::string> entry_of(const Campaign& c, const std::string& id) {
  for (const json::Value& e : c.document.find("cases")->as_array()) {
    if (e.find("id")->as_string() != id) continue;
    json::Value held = e;
    auto& members = held.as_object();
    members.erase(std::find_if(members.begin(), members.end(),
                               [](const json::Member& m) { return m.key == "id"; }));
    return {held, c.traces.at(e.find("trace_sha256")->as_string())};
  }
  ADD_FAILURE() << "no case " << id;
  return {};
}

TEST(EvalEntry, WithoutItsCaseOnlyWhatTheTraceGivesIsChecked) {
  const Campaign c = forge_campaign(1);
  const Case repair = *c.suite.load_case(Suite::Reader(c.suite.cases)[1]);
  ASSERT_EQ(repair.id, "one-targeted-repair");
  auto [held, trace] = entry_of(c, repair.id);
  EXPECT_FALSE(disagreement(&repair, trace, held, ""));
  EXPECT_FALSE(disagreement(nullptr, trace, held, ""));

  // A count is the trace's: caught either way, and named.
  json::Value calls = held;
  *calls.find("model_calls") = 3;
  for (const Case* with : {&repair, static_cast<const Case*>(nullptr)}) {
    auto why = disagreement(with, trace, calls, "");
    ASSERT_TRUE(why);
    EXPECT_EQ(why->check, "entry");
    EXPECT_EQ(why->member, "model_calls");
    EXPECT_EQ(why->message, "it says \"model_calls\": 3 but its trace gives 2");
  }
  // A status and its failures are the expectations': caught only with the case.
  json::Value flipped = held;
  *flipped.find("status") = "failed";
  *flipped.find("failures") = json::Array{json::Object{{"check", "repairs"}, {"expected", 0}}};
  EXPECT_FALSE(disagreement(nullptr, trace, flipped, ""));
  auto why = disagreement(&repair, trace, flipped, "");
  ASSERT_TRUE(why);
  EXPECT_EQ(why->member, "status");
  // The digest comes first, then the trace's own integrity.
  std::string edited = trace;
  edited[edited.find("eval-")] = 'E';
  why = disagreement(nullptr, edited, held, "");
  ASSERT_TRUE(why);
  EXPECT_EQ(why->check, "trace_sha256");
  json::Value claimed = held;
  *claimed.find("trace_sha256") = hash::sha256_hex(edited);
  why = disagreement(nullptr, edited, claimed, "");
  ASSERT_TRUE(why);
  EXPECT_EQ(why->check, "trace");
  EXPECT_NE(why->message.find("MF-E0"), std::string::npos) << why->message;
  // A member the trace does not give is named too.
  json::Value extra = held;
  extra.set("tool_calls", 0);
  why = disagreement(nullptr, trace, extra, "");
  ASSERT_TRUE(why);
  EXPECT_EQ(why->member, "tool_calls");
}

TEST(EvalReport, ASummaryStatisticIsNamedDownToItsMember) {
  const Campaign c = forge_campaign(1);
  json::Value lying = c.document;
  ASSERT_EQ(json::canonical(*json::find_at(lying, "/summary/usage/input_tokens/total")), "797");
  lying.find("summary")->find("usage")->find("input_tokens")->set("total", 798);
  Result<Report> refused = parse_report(json::canonical_file(lying));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.diagnostics()[0].code, "MF-S020");
  EXPECT_EQ(refused.diagnostics()[0].pointer, "/summary/usage/input_tokens/total");
  EXPECT_EQ(refused.diagnostics()[0].message, "summary says 798 but the cases give 797");
  const Report collected = read(lying);
  ASSERT_EQ(collected.summary_disagreements.size(), 1u);
  EXPECT_EQ(collected.summary_disagreements[0].pointer, "/summary/usage/input_tokens/total");
  // An unknown summary member is not a statistic: refused either way.
  lying.find("summary")->set("median", 1);
  EXPECT_FALSE(parse_report(json::canonical_file(lying), SummaryCheck::Collect).ok());
}

TEST(EvalVerify, ACampaignHoldsAgainstItsTraces) {
  const Campaign c = forge_campaign(2);
  const Report report = read(c.document);
  for (const Suite* suite : {&c.suite, static_cast<const Suite*>(nullptr)}) {
    Result<Verification> v = verify_report(report, from(c.traces), suite, "", 4);
    ASSERT_TRUE(v.ok());
    EXPECT_EQ(v->attempts, 8u);
    EXPECT_EQ(v->graded, suite != nullptr);
    EXPECT_EQ(v->failures.size(), 0u);
  }
}

TEST(EvalVerify, FailuresAreListedInTheReportsOrderForAnyThreadCount) {
  Campaign c = forge_campaign(2);
  json::Array& cases = c.document.find("cases")->as_array();
  // provider-failure.1 names a trace nobody kept; valid-first-response.0 claims a call too many;
  // the summary's pass rate is edited.
  cases[2].find("attempts")->as_array()[1].set("trace_sha256", std::string(64, '0'));
  cases[3].find("attempts")->as_array()[0].set("model_calls", 2);
  c.document.find("summary")->set("pass_rate", 0.5);
  const Report report = read(c.document);
  std::string first;
  for (std::size_t jobs : {1u, 3u, 64u, 1000u}) {
    Result<Verification> v = verify_report(report, from(c.traces), &c.suite, "", jobs);
    ASSERT_TRUE(v.ok());
    EXPECT_EQ(v->failed, 2u);
    EXPECT_EQ(v->statistics_failed, 1u);
    std::string lines;
    for (const auto& f : v->failures) lines += json::canonical(to_json(f)) + "\n";
    EXPECT_EQ(
        lines,
        R"({"attempt":"provider-failure.1","check":"trace_missing","message":"its trace is not at hand: no such object"})"
        "\n"
        R"({"attempt":"valid-first-response.0","check":"entry","member":"model_calls","message":"it says \"model_calls\": 2 but its trace gives 1"})"
        "\n"
        R"({"check":"statistic","member":"summary/pass_rate","message":"summary says 0.5 but the cases give 1"})"
        "\n")
        << "jobs " << jobs;
  }
}

TEST(EvalVerify, ATraceThatCannotBeReadForIOStopsIt) {
  const Campaign c = forge_campaign(1);
  const Report report = read(c.document);
  const TraceFetch broken = [](const ReportTrace&) -> Result<std::string> {
    return diag::error(diag::codes::kStoreLmdb, "the disk is gone");
  };
  Result<Verification> v = verify_report(report, broken, nullptr, "", 2);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.diagnostics()[0].code, "MF-K007");
}

TEST(EvalVerify, AnEntryOfACaseTheSuiteLacksIsNamed) {
  Campaign c = forge_campaign(1);
  const Report report = read(c.document);
  io::RecordFile<CaseRef> rest("the suite's index");  // all but invalid-without-repair
  Suite::Reader all(c.suite.cases);
  for (std::uint64_t i = 1; i < c.suite.size(); ++i) ASSERT_TRUE(rest.push_back(all[i]).ok());
  c.suite.cases = std::move(rest);
  Result<Verification> v = verify_report(report, from(c.traces), &c.suite, "", 1);
  ASSERT_TRUE(v.ok());
  ASSERT_EQ(v->failures.size(), 1u);
  EXPECT_EQ(v->failures[0].attempt, "invalid-without-repair");
  EXPECT_EQ(v->failures[0].check, "case");
}

}  // namespace
}  // namespace mf::eval
