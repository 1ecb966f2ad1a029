#include "mf/eval/campaign_args.hpp"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "mf/diag/codes.hpp"

namespace mf::eval {
namespace {

using runtime::Guardrails;

const std::string kScripted =
    "scripted:" + std::string(MF_SOURCE_DIR) + "/fixtures/forge/responses-valid.json";

TEST(Shard, TakesIndexOfCount) {
  for (const auto& [text, index, count] : std::vector<std::tuple<std::string, int, int>>{
           {"1/1", 1, 1},
           {"2/3", 2, 3},
           {"3/3", 3, 3},
           {"01/2", 1, 2},
           {"999999999/999999999", 999999999, 999999999}}) {
    const auto shard = parse_shard(text);
    ASSERT_TRUE(shard) << text;
    EXPECT_EQ(shard->index, index) << text;
    EXPECT_EQ(shard->count, count) << text;
  }
}

TEST(Shard, RefusesAnythingElse) {
  for (const std::string text : {"0/2",
                                 "3/2",
                                 "1/0",
                                 "0/0",
                                 "a/b",
                                 "1/b",
                                 "a/1",
                                 "",
                                 "/",
                                 "/2",
                                 "1/",
                                 "1",
                                 "12",
                                 "1/2/3",
                                 "1//2",
                                 " 1/2",
                                 "1/2 ",
                                 "+1/2",
                                 "-1/2",
                                 "1/-2",
                                 "1.0/2",
                                 "1234567890/1234567891",
                                 "1/1234567890",
                                 "99999999999999999999/1",
                                 "1/99999999999999999999999999"}) {
    EXPECT_FALSE(parse_shard(text)) << "'" << text << "'";
  }
}

TEST(ModelColumn, SplitsAtTheFirstEquals) {
  const auto column = parse_model_column("big-1_B=sim:t.json?seed=1&x=y");
  ASSERT_TRUE(column);
  EXPECT_EQ(column->label, "big-1_B");
  EXPECT_EQ(column->spec, "sim:t.json?seed=1&x=y");
  const std::string longest(64, 'a');
  ASSERT_TRUE(parse_model_column(longest + "=s"));
  EXPECT_EQ(parse_model_column(longest + "=s")->label, longest);
}

TEST(ModelColumn, RefusesBadLabelsAndEmptySpecs) {
  for (const std::string& text :
       std::vector<std::string>{"", "label", "=spec", "a=", "=", "a b=s", "a.b=s", "a/b=s", "é=s",
                                std::string(65, 'a') + "=s", "a:b=s"}) {
    EXPECT_FALSE(parse_model_column(text)) << "'" << text << "'";
  }
}

TEST(Matrix, ModelsOuterPresetsInner) {
  const auto variants = cross({{"small", "s:1"}, {"big", "s:2"}},
                              {Guardrails::Full, Guardrails::Bare, Guardrails::NoRescue});
  std::vector<std::string> labels;
  for (const auto& v : variants) labels.push_back(v.label);
  EXPECT_EQ(labels, (std::vector<std::string>{"small.full", "small.bare", "small.no_rescue",
                                              "big.full", "big.bare", "big.no_rescue"}));
  EXPECT_EQ(variants[1].model, "s:1");
  EXPECT_EQ(variants[1].guardrails, Guardrails::Bare);
  EXPECT_EQ(variants[5].model, "s:2");
  EXPECT_EQ(variants[5].guardrails, Guardrails::NoRescue);
}

TEST(Matrix, OneAxisAlone) {
  const auto models = cross({{"a", "s:1"}, {"b", "s:2"}}, {});
  ASSERT_EQ(models.size(), 2u);
  EXPECT_EQ(models[0].label, "a");
  EXPECT_EQ(models[1].model, "s:2");
  EXPECT_FALSE(models[1].guardrails);
  const auto presets = cross({}, {Guardrails::NoCompact, Guardrails::Full});
  ASSERT_EQ(presets.size(), 2u);
  EXPECT_EQ(presets[0].label, "no_compact");
  EXPECT_EQ(presets[0].model, "");
  EXPECT_EQ(presets[1].guardrails, Guardrails::Full);
  EXPECT_TRUE(cross({}, {}).empty());
}

TEST(Matrix, ReadsModelsThenPresets) {
  std::vector<Variant> variants;
  const auto read = read_matrix({"m=" + kScripted}, {"bare", "full"}, variants);
  EXPECT_FALSE(read.stopped());
  ASSERT_EQ(variants.size(), 2u);
  EXPECT_EQ(variants[0].label, "m.bare");
  EXPECT_EQ(variants[1].label, "m.full");
  EXPECT_EQ(variants[1].model, kScripted);
}

TEST(Matrix, UsageErrorsNameTheValue) {
  std::vector<Variant> variants;
  EXPECT_EQ(read_matrix({"bad"}, {}, variants).usage,
            "--model takes LABEL=SPEC, LABEL of [A-Za-z0-9_-], not 'bad'");
  EXPECT_EQ(read_matrix({"a=" + kScripted, "a=" + kScripted}, {}, variants).usage,
            "--model a given twice");
  EXPECT_EQ(read_matrix({}, {"lax"}, variants).usage, "--guardrails: no preset 'lax'");
  EXPECT_EQ(read_matrix({}, {"full", "bare", "full"}, variants).usage,
            "--guardrails full given twice");
  EXPECT_TRUE(variants.empty());
}

TEST(Matrix, ASpecIsCheckedBeforeTheNextModel) {
  std::vector<Variant> variants;
  // The first value's spec fails before the second value's label is read.
  const auto read = read_matrix({"x=sim:/nonexistent.json", "bad label=x"}, {"lax"}, variants);
  EXPECT_TRUE(read.usage.empty());
  ASSERT_FALSE(read.diagnostics.empty());
  EXPECT_EQ(read.diagnostics[0].code, diag::codes::kMissing);
  // Every model is read before any preset.
  EXPECT_EQ(read_matrix({"a=" + kScripted, "b"}, {"lax"}, variants).usage,
            "--model takes LABEL=SPEC, LABEL of [A-Za-z0-9_-], not 'b'");
}

TEST(Journal, InTheStoreUnlessAFileIsGiven) {
  using Kind = JournalPlace::Kind;
  EXPECT_EQ(journal_place("r.json", std::nullopt, true).kind, Kind::Store);
  EXPECT_EQ(journal_place("-", std::nullopt, true).kind, Kind::Store);
  const auto given = journal_place("r.json", std::string("j.jsonl"), true);
  EXPECT_EQ(given.kind, Kind::File);
  EXPECT_EQ(given.path, "j.jsonl");
  const auto beside = journal_place("out/r.json", std::nullopt, false);
  EXPECT_EQ(beside.kind, Kind::File);
  EXPECT_EQ(beside.path, "out/r.json.journal");
  EXPECT_EQ(journal_place("-", std::nullopt, false).kind, Kind::None);
  EXPECT_EQ(journal_place("-", std::string("j"), false).path, "j");
  // An empty --journal turns it off, even with a store.
  EXPECT_EQ(journal_place("r.json", std::string(), false).kind, Kind::None);
  EXPECT_EQ(journal_place("r.json", std::string(), true).kind, Kind::None);
}

TEST(Progress, LineWithRateAndTimeLeft) {
  EXPECT_EQ(progress_line(0, 120, 0, 0, 0), "attempt 0/120, 0 passed");
  EXPECT_EQ(progress_line(37, 120, 31, 37, 7.4), "attempt 37/120, 31 passed (83%), 16 s left");
  // Nothing run here yet (all from the journal): no estimate.
  EXPECT_EQ(progress_line(5, 10, 5, 0, 3), "attempt 5/10, 5 passed (100%)");
  // The last line estimates nothing.
  EXPECT_EQ(progress_line(10, 10, 0, 10, 9), "attempt 10/10, 0 passed (0%)");
}

TEST(Progress, MeterTimesOnlyTheAttemptsRunHere) {
  double now = 100;
  ProgressMeter meter([&now] { return now; });
  // The first call counts what the journal held: 4 attempts, not timed.
  EXPECT_EQ(meter.line(4, 12, 4), "attempt 4/12, 4 passed (100%)");
  now = 104;  // 2 attempts in 4 s: 2 s each, 6 left
  EXPECT_EQ(meter.line(6, 12, 5), "attempt 6/12, 5 passed (83%), 12 s left");
  now = 112;
  EXPECT_EQ(meter.line(12, 12, 11), "attempt 12/12, 11 passed (91%)");
}

}  // namespace
}  // namespace mf::eval
