// The prompt projection compiler (docs/projection.md) at the library level: the regression
// matrix of visibility versus registration versus authorization, each quirk the module decides
// against the reference compiler, and properties over random catalogs.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <set>
#include <tuple>

#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"
#include "mf/prompt/projection.hpp"

namespace mf::prompt {
namespace {

ToolSource tool(std::string name, std::string description, std::vector<std::string> caps = {}) {
  return {std::move(name), std::move(description),
          json::Object{{"type", "object"}, {"properties", json::Object{}}}, std::move(caps)};
}

Unit unit(std::string id, std::string content = "guidance text") {
  Unit u;
  u.id = std::move(id);
  const auto colon = u.id.find(':');
  const std::string kind = u.id.substr(0, colon);
  u.name = u.id.substr(colon + 1);
  u.kind = kind == "tool"          ? Kind::Tool
           : kind == "instruction" ? Kind::Instruction
           : kind == "resource"    ? Kind::Resource
                                   : Kind::Skill;
  u.content = std::move(content);
  return u;
}

Catalog catalog(std::vector<Unit> declared, const std::vector<ToolSource>& tools) {
  auto all = with_tools(std::move(declared), tools);
  EXPECT_TRUE(all.ok());
  auto c = Catalog::build(std::move(*all));
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.diagnostics()[0].message);
  return std::move(*c);
}

Projection run(const Catalog& c, Input in) {
  auto p = project(c, in);
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.diagnostics()[0].message);
  return std::move(*p);
}

Input text(std::string t, std::vector<std::string> caps = {}) {
  Input in;
  in.text = std::move(t);
  in.capabilities = std::move(caps);
  return in;
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

const Decision* decision(const std::vector<Decision>& ds, const std::string& unit) {
  for (const auto& d : ds) {
    if (d.unit == unit) return &d;
  }
  return nullptr;
}

bool reason_starts(const std::vector<Decision>& ds, const std::string& unit,
                   const std::string& prefix) {
  const Decision* d = decision(ds, unit);
  if (d == nullptr) return false;
  return std::any_of(d->reasons.begin(), d->reasons.end(),
                     [&](const std::string& r) { return r.rfind(prefix, 0) == 0; });
}

const std::vector<ToolSource> kGitTools = {
    tool("git_diff", "Show the diff of the working tree for a review"),
    tool("project_search", "Search files of the project by name")};

// --- The regression matrix ---------------------------------------------------------------------

TEST(PromptMatrix, HidesAnIrrelevantRegisteredTool) {
  const Catalog c = catalog({}, kGitTools);
  const Projection p = run(c, text("review the git diff of this branch"));
  EXPECT_EQ(p.visible_tools, std::vector<std::string>{"git_diff"});
  EXPECT_NE(c.find("tool:project_search"), nullptr);                // still registered
  EXPECT_EQ(decision(p.rejected, "tool:project_search"), nullptr);  // hidden, not rejected
}

TEST(PromptMatrix, AllToolsModeShowsEveryCapableTool) {
  const Catalog c = catalog({}, kGitTools);
  Input in = text("review the git diff of this branch");
  in.mode = Mode::AllTools;
  EXPECT_EQ(run(c, in).visible_tools, (std::vector<std::string>{"git_diff", "project_search"}));
}

TEST(PromptMatrix, CapabilityDeniedToolIsNeverVisible) {
  const Catalog c = catalog(
      {}, {tool("git_diff", "git diff review"), tool("git_push", "git push", {"net.push"})});
  for (Mode m : {Mode::Compiled, Mode::AllTools}) {
    Input in = text("git diff and git push");
    in.mode = m;
    const Projection p = run(c, in);
    EXPECT_FALSE(has(p.visible_tools, "git_push")) << name(m);
    EXPECT_TRUE(reason_starts(p.rejected, "tool:git_push", "capability_denied:net.push"));
    in.capabilities = {"net.push"};
    EXPECT_TRUE(has(run(c, in).visible_tools, "git_push")) << name(m);
  }
}

TEST(PromptMatrix, FingerprintIsAFunctionOfTheMeaningOfTheInput) {
  const Catalog c = catalog({}, kGitTools);
  Input a = text("review the git diff", {"x.b", "x.a"});
  Input b = text("review the git diff", {"x.a", "x.b", "x.a"});
  EXPECT_EQ(run(c, a).fingerprint, run(c, b).fingerprint);
  EXPECT_EQ(json::canonical(to_json(run(c, a))), json::canonical(to_json(run(c, b))));
  Input d = text("search the project files", {"x.a", "x.b"});
  EXPECT_NE(run(c, a).fingerprint, run(c, d).fingerprint);
  Input e = a;
  e.budget_tokens = 9000;
  EXPECT_NE(run(c, a).fingerprint, run(c, e).fingerprint);
}

TEST(PromptMatrix, EachSchemaIsRenderedAndChargedOnce) {
  Unit skill = unit("skill:review", "Review hunk by hunk.");
  skill.triggers = {{Trigger::On::Phrase, "review", 50}};
  const Catalog c = catalog({skill}, kGitTools);
  const Projection p = run(c, text("review the git diff and search the project"));
  EXPECT_EQ(p.ledger.items.size(), p.active.size());
  std::int64_t bytes = static_cast<std::int64_t>(p.guidance.size());
  for (const auto& s : p.tool_schemas) bytes += static_cast<std::int64_t>(render_schema(s).size());
  EXPECT_EQ(p.ledger.bytes, bytes);
  std::set<std::string> units;
  for (const auto& i : p.ledger.items) EXPECT_TRUE(units.insert(i.unit).second) << i.unit;
  EXPECT_NE(p.guidance.find("[skill:review]\nReview hunk by hunk.\n"), std::string::npos);
}

TEST(PromptMatrix, MandatoryUnitOverBudgetIsAStructuralFailure) {
  Unit submit = unit("tool:git_diff");
  submit.mandatory = true;
  submit.activation = Activation::Always;
  const Catalog c = catalog({submit}, kGitTools);
  Input in = text("anything");
  in.budget_tokens = 5;
  auto p = project(c, in);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.diagnostics()[0].code, "MF-P005");
  EXPECT_NE(p.diagnostics()[0].message.find("tool:git_diff"), std::string::npos);
}

TEST(PromptMatrix, OptionalToolPackedOutIsNotVisible) {
  const Catalog c = catalog({}, kGitTools);
  Input in = text("review the git diff");
  in.budget_tokens = 5;  // smaller than any schema
  const Projection p = run(c, in);
  EXPECT_NE(decision(p.selected, "tool:git_diff"), nullptr);
  EXPECT_TRUE(p.visible_tools.empty());
  EXPECT_TRUE(p.active.empty());
  EXPECT_TRUE(reason_starts(p.rejected, "tool:git_diff", "packed_out"));
  EXPECT_EQ(p.ledger.charged, 0);
}

TEST(PromptMatrix, AlwaysUnitIsVisibleOnUnrelatedText) {
  Unit u = unit("tool:project_search");
  u.activation = Activation::Always;
  const Catalog c = catalog({u}, kGitTools);
  const Projection p = run(c, text("zzz qqq"));
  EXPECT_EQ(p.visible_tools, std::vector<std::string>{"project_search"});
  EXPECT_TRUE(reason_starts(p.selected, "tool:project_search", "activation_always"));
}

TEST(PromptMatrix, RelevantToolDeactivatesAndComesBackBetweenTurns) {
  const Catalog c = catalog({}, kGitTools);
  EXPECT_TRUE(has(run(c, text("git diff please")).visible_tools, "git_diff"));
  EXPECT_FALSE(has(run(c, text("nothing relevant here")).visible_tools, "git_diff"));
  EXPECT_TRUE(has(run(c, text("git diff again")).visible_tools, "git_diff"));
  EXPECT_EQ(c.units().size(), 2u);
}

TEST(PromptMatrix, TextNegationCannotDenyWhatTheHostPinned) {
  Unit always = unit("tool:project_search");
  always.activation = Activation::Always;
  const Catalog c = catalog({always}, kGitTools);
  Projection p = run(c, text("review the git diff without git_diff, do not use project_search"));
  EXPECT_TRUE(reason_starts(p.rejected, "tool:git_diff", "text_negation"));
  EXPECT_TRUE(has(p.visible_tools, "project_search"));
  Input in = text("don't use git diff");
  in.selected = {"tool:git_diff"};
  EXPECT_TRUE(has(run(c, in).visible_tools, "git_diff"));
  // "without reading" does not deny a unit named "read": names compare as whole tokens.
  const Catalog r = catalog({}, {tool("read", "read a file")});
  EXPECT_TRUE(has(run(r, text("read the file without reading it twice")).visible_tools, "read"));
}

TEST(PromptMatrix, HostDenialBeatsAlways) {
  Unit always = unit("tool:project_search");
  always.activation = Activation::Always;
  const Catalog c = catalog({always}, kGitTools);
  Input in = text("search");
  in.denied = {"tool:project_search"};
  const Projection p = run(c, in);
  EXPECT_FALSE(has(p.visible_tools, "project_search"));
  EXPECT_TRUE(reason_starts(p.rejected, "tool:project_search", "host_denied"));
}

TEST(PromptMatrix, RequiresClosureSelectsAndRefuses) {
  Unit skill = unit("skill:deploy");
  skill.triggers = {{Trigger::On::Keyword, "deploy", 50}};
  skill.requirements = {"tool:git_push"};
  const Catalog c = catalog({skill}, {tool("git_push", "push", {"net.push"})});
  Projection p = run(c, text("deploy it", {"net.push"}));
  EXPECT_TRUE(reason_starts(p.selected, "tool:git_push", "required_by:skill:deploy"));
  p = run(c, text("deploy it"));
  EXPECT_TRUE(
      reason_starts(p.rejected, "skill:deploy", "requires:tool:git_push:capability_denied"));
  EXPECT_TRUE(p.active.empty());
}

TEST(PromptMatrix, NegatedRequirementRejectsUnlessTheRootIsPinned) {
  Unit skill = unit("skill:deploy");
  skill.triggers = {{Trigger::On::Keyword, "deploy", 50}};
  skill.requirements = {"tool:git_push"};
  const Catalog c = catalog({skill}, {tool("git_push", "push")});
  Projection p = run(c, text("deploy it without git_push"));
  EXPECT_TRUE(reason_starts(p.rejected, "skill:deploy", "requires:tool:git_push:text_negation"));
  Input in = text("deploy it without git_push");
  in.selected = {"skill:deploy"};
  p = run(c, in);
  EXPECT_TRUE(has(p.visible_tools, "git_push"));
}

TEST(PromptMatrix, DeclinedSuggestionIsRecorded) {
  Unit skill = unit("skill:review");
  skill.triggers = {{Trigger::On::Keyword, "review", 50}};
  skill.suggests = {"tool:git_push"};
  const Catalog c = catalog({skill}, {tool("git_push", "push", {"net.push"})});
  const Projection p = run(c, text("review"));
  EXPECT_TRUE(reason_starts(p.rejected, "tool:git_push", "suggestion_declined:capability_denied"));
  EXPECT_TRUE(has(p.active, "skill:review"));
}

TEST(PromptMatrix, SupersessionCascadesToOrphanedRequirements) {
  Unit old_skill = unit("skill:old");
  old_skill.triggers = {{Trigger::On::Keyword, "build", 50}};
  old_skill.requirements = {"instruction:legacy"};
  Unit new_skill = unit("skill:new");
  new_skill.triggers = {{Trigger::On::Keyword, "build", 50}};
  new_skill.supersedes = {"skill:old"};
  const Catalog c = catalog({old_skill, new_skill, unit("instruction:legacy")}, {});
  const Projection p = run(c, text("build"));
  EXPECT_TRUE(reason_starts(p.rejected, "skill:old", "superseded_by:skill:new"));
  EXPECT_TRUE(reason_starts(p.rejected, "instruction:legacy", "orphaned"));
  EXPECT_EQ(p.active, std::vector<std::string>{"skill:new"});
}

TEST(PromptMatrix, ConflictHigherScoreWinsAndCascades) {
  Unit alpha = unit("skill:alpha");
  alpha.triggers = {{Trigger::On::Keyword, "plan", 80}};
  Unit beta = unit("skill:beta");
  beta.triggers = {{Trigger::On::Keyword, "plan", 20}};
  beta.conflicts = {"skill:alpha"};
  Unit gamma = unit("skill:gamma");
  gamma.triggers = {{Trigger::On::Keyword, "plan", 10}};
  gamma.requirements = {"skill:beta"};
  const Catalog c = catalog({alpha, beta, gamma}, {});
  const Projection p = run(c, text("plan"));
  EXPECT_TRUE(reason_starts(p.rejected, "skill:beta", "conflict_with:skill:alpha"));
  EXPECT_TRUE(reason_starts(p.rejected, "skill:gamma", "requirement_removed:skill:beta"));
  EXPECT_EQ(p.active, std::vector<std::string>{"skill:alpha"});
}

// A unit selected only as the suggestion of a unit that is later removed goes with it, and so
// does what it alone required (to a fixpoint). The reference keeps both: it has no cascade.
TEST(PromptMatrix, OrphanedSuggestionsAreRemoved) {
  Unit old_skill = unit("skill:old");
  old_skill.triggers = {{Trigger::On::Keyword, "build", 50}};
  old_skill.suggests = {"skill:hint"};
  Unit new_skill = unit("skill:new");
  new_skill.triggers = {{Trigger::On::Keyword, "build", 50}};
  new_skill.supersedes = {"skill:old"};
  Unit hint = unit("skill:hint");
  hint.requirements = {"instruction:note"};
  Unit rival = unit("skill:rival");
  rival.triggers = {{Trigger::On::Keyword, "build", 10}};
  rival.conflicts = {"skill:new"};
  rival.suggests = {"skill:tip"};
  const Catalog c =
      catalog({old_skill, new_skill, hint, rival, unit("skill:tip"), unit("instruction:note")}, {});
  const Projection p = run(c, text("build"));
  EXPECT_TRUE(reason_starts(p.rejected, "skill:old", "superseded_by:skill:new"));
  EXPECT_TRUE(reason_starts(p.rejected, "skill:hint", "orphaned"));
  EXPECT_TRUE(reason_starts(p.rejected, "instruction:note", "orphaned"));
  EXPECT_TRUE(reason_starts(p.rejected, "skill:rival", "conflict_with:skill:new"));
  EXPECT_TRUE(reason_starts(p.rejected, "skill:tip", "orphaned"));
  EXPECT_EQ(p.active, std::vector<std::string>{"skill:new"});
  for (const auto& d : p.selected) {
    for (const auto& r : d.reasons) EXPECT_NE(r, "suggested_by:skill:old") << d.unit;
  }
}

// A unit suggested by a removed unit and by a kept one stays, in the kept one's name only.
TEST(PromptMatrix, SuggestionOfAKeptUnitSurvivesItsOtherSuggestersRemoval) {
  Unit old_skill = unit("skill:old");
  old_skill.triggers = {{Trigger::On::Keyword, "build", 50}};
  old_skill.suggests = {"skill:hint"};
  Unit new_skill = unit("skill:new");
  new_skill.triggers = {{Trigger::On::Keyword, "build", 50}};
  new_skill.supersedes = {"skill:old"};
  new_skill.suggests = {"skill:hint"};
  const Catalog c = catalog({old_skill, new_skill, unit("skill:hint")}, {});
  const Projection p = run(c, text("build"));
  EXPECT_EQ(p.active, (std::vector<std::string>{"skill:hint", "skill:new"}));
  const Decision* d = decision(p.selected, "skill:hint");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->reasons, std::vector<std::string>{"suggested_by:skill:new"});
}

// v3 supersedes v2 supersedes v1, all matching: only v3 stays (as in the reference), and v1
// names its nearest selected superseder. Transitive through an unselected v2 as well.
TEST(PromptMatrix, SupersessionIsTransitive) {
  Unit v1 = unit("skill:v1"), v2 = unit("skill:v2"), v3 = unit("skill:v3");
  v1.triggers = v2.triggers = v3.triggers = {{Trigger::On::Keyword, "build", 50}};
  v2.supersedes = {"skill:v1"};
  v3.supersedes = {"skill:v2"};
  Catalog c = catalog({v1, v2, v3}, {});
  Projection p = run(c, text("build"));
  EXPECT_EQ(p.active, std::vector<std::string>{"skill:v3"});
  EXPECT_TRUE(reason_starts(p.rejected, "skill:v2", "superseded_by:skill:v3"));
  EXPECT_TRUE(reason_starts(p.rejected, "skill:v1", "superseded_by:skill:v2"));
  v2.triggers.clear();
  c = catalog({v1, v2, v3}, {});
  p = run(c, text("build"));
  EXPECT_EQ(p.active, std::vector<std::string>{"skill:v3"});
  EXPECT_TRUE(reason_starts(p.rejected, "skill:v1", "superseded_by:skill:v3"));
}

// all_tools selects everything capable, but "without X" in the text still denies X; the host
// still overrides the text.
TEST(PromptMatrix, AllToolsModeHonoursTextNegation) {
  const Catalog c = catalog({}, kGitTools);
  Input in = text("review the branch without git_diff");
  in.mode = Mode::AllTools;
  Projection p = run(c, in);
  EXPECT_EQ(p.visible_tools, std::vector<std::string>{"project_search"});
  EXPECT_TRUE(reason_starts(p.rejected, "tool:git_diff", "text_negation"));
  in.selected = {"tool:git_diff"};
  p = run(c, in);
  EXPECT_EQ(p.visible_tools, (std::vector<std::string>{"git_diff", "project_search"}));
}

// a requires b; a and b together take the whole budget (8 + 21 = 29 tokens) and c alone 9. The
// most units kept is {a, b}, not c alone after a loses its requirement.
TEST(PromptMatrix, PackingKeepsAUnitWithItsRequirements) {
  Unit a = unit("skill:a", std::string(16, 'a'));
  a.triggers = {{Trigger::On::Keyword, "go", 10}};
  a.requirements = {"skill:b"};
  Unit b = unit("skill:b", std::string(60, 'b'));
  Unit cc = unit("skill:c", std::string(20, 'c'));
  cc.triggers = {{Trigger::On::Keyword, "go", 90}};
  const Catalog c = catalog({a, b, cc}, {});
  ASSERT_EQ(estimate_tokens(static_cast<std::int64_t>(render_guidance(a, false).size())), 8);
  ASSERT_EQ(estimate_tokens(static_cast<std::int64_t>(render_guidance(b, false).size())), 21);
  ASSERT_EQ(estimate_tokens(static_cast<std::int64_t>(render_guidance(cc, false).size())), 9);
  Input in = text("go");
  in.budget_tokens = 29;
  const Projection p = run(c, in);
  EXPECT_EQ(p.active, (std::vector<std::string>{"skill:a", "skill:b"}));
  EXPECT_EQ(p.ledger.charged, 29);
  EXPECT_EQ(p.ledger.remaining, 0);
  EXPECT_TRUE(reason_starts(p.rejected, "skill:c", "packed_out"));
}

TEST(PromptMatrix, CandidateLimitRejectsTheLowestRanked) {
  std::vector<ToolSource> tools;
  for (int i = 0; i < 10; ++i) tools.push_back(tool("t" + std::to_string(i), "shared word"));
  const Catalog c = catalog({}, tools);
  Input in = text("shared");
  in.candidate_limit = 3;
  const Projection p = run(c, in);
  EXPECT_EQ(p.selected.size(), 3u);
  EXPECT_EQ(p.beyond_candidate_limit, 7);
  EXPECT_EQ(decision(p.rejected, "tool:t9"), nullptr);
}

// --- Quirks decided against the reference ------------------------------------------------------

TEST(PromptQuirks, KeywordTriggersAreTokenizedLikeTheText) {
  Unit u = unit("skill:forecast");
  u.triggers = {{Trigger::On::Keyword, "weather_lookup", 40}};
  const Catalog c = catalog({u}, {});
  const Projection p = run(c, text("a lookup of the weather please"));
  ASSERT_NE(decision(p.selected, "skill:forecast"), nullptr);
  EXPECT_EQ(decision(p.selected, "skill:forecast")->score, 40 + 100);  // counted once, no lexical
}

TEST(PromptQuirks, PhrasesMatchWholeTokensInOrder) {
  Unit u = unit("skill:vcs");
  u.triggers = {{Trigger::On::Phrase, "git log", 40}};
  const Catalog c = catalog({u}, {});
  EXPECT_TRUE(run(c, text("digit logarithm")).selected.empty());
  EXPECT_TRUE(run(c, text("log git")).selected.empty());
  EXPECT_EQ(run(c, text("show the git log")).selected.size(), 1u);
}

TEST(PromptQuirks, SignalAndNeedTriggersCountOnce) {
  Unit u = unit("skill:s");
  u.triggers = {{Trigger::On::Signal, "ci.failed", 30}, {Trigger::On::Need, "logs", 7}};
  const Catalog c = catalog({u}, {});
  Input in = text("");
  in.signals = {"ci.failed", "ci.failed"};
  in.needs = {"logs"};
  const Projection p = run(c, in);
  ASSERT_EQ(p.selected.size(), 1u);
  EXPECT_EQ(p.selected[0].score, 30 + 7 + 100);
}

TEST(PromptQuirks, SummaryVariantIsChargedAsRendered) {
  Unit u = unit("skill:long", std::string(4000, 'x'));
  u.summary = "short";
  u.mandatory = true;
  u.activation = Activation::Always;
  const Catalog c = catalog({u}, {});
  Input in = text("");
  in.budget_tokens = 200;
  const Projection p = run(c, in);
  ASSERT_EQ(p.ledger.items.size(), 1u);
  EXPECT_EQ(p.ledger.items[0].variant, "summary");
  EXPECT_EQ(p.guidance, render_guidance(u, true));
  EXPECT_EQ(p.ledger.items[0].bytes, static_cast<std::int64_t>(p.guidance.size()));
  EXPECT_EQ(p.ledger.items[0].tokens, estimate_tokens(p.ledger.items[0].bytes));
}

// --- Documents ---------------------------------------------------------------------------------

TEST(PromptDocuments, InputFaultsAreP004) {
  for (const char* doc : {R"({"mode":"everything"})", R"({"budget":5})", R"({"budget_tokens":0})",
                          R"({"candidate_limit":300})", R"({"signals":[1]})"}) {
    auto v = json::parse(doc);
    ASSERT_TRUE(v.ok());
    auto in = input_from_json(*v);
    ASSERT_FALSE(in.ok()) << doc;
    EXPECT_EQ(in.diagnostics()[0].code, "MF-P004") << doc;
  }
  const Catalog c = catalog({}, kGitTools);
  Input in = text("x");
  in.selected = {"skill:none"};
  auto p = project(c, in);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.diagnostics()[0].code, "MF-P004");
}

TEST(PromptDocuments, UnitFaultsPointAtTheMember) {
  const auto fails = [](const char* doc, const char* code, const char* pointer) {
    auto v = json::parse(doc);
    ASSERT_TRUE(v.ok()) << doc;
    auto u = units_from_json(*v, "/units");
    ASSERT_FALSE(u.ok()) << doc;
    EXPECT_EQ(u.diagnostics()[0].code, code) << doc;
    EXPECT_EQ(u.diagnostics()[0].pointer, pointer) << doc;
  };
  fails(R"([{"id":"skill:a","priorty":1}])", "MF-P001", "/units/0/priorty");
  fails(R"([{"id":"gadget:a"}])", "MF-P001", "/units/0/id");
  fails(R"([{"id":"skill:a","priority":5000}])", "MF-P001", "/units/0/priority");
  fails(R"([{"id":"skill:a","triggers":[{"keyword":"x","phrase":"y","weight":1}]}])", "MF-P001",
        "/units/0/triggers/0");
  fails(R"([{"id":"skill:a"},{"id":"tool:t","content":"x"}])", "MF-P001", "/units/1/content");
  fails(R"([{"id":"skill:a","requires":["skill:a"]}])", "MF-P001", "/units/0");
  const auto build = [](std::vector<Unit> units) { return Catalog::build(std::move(units)); };
  Unit a = unit("skill:a");
  a.requirements = {"skill:missing"};
  EXPECT_EQ(build({a}).diagnostics()[0].code, "MF-P002");
  Unit x = unit("skill:x"), y = unit("skill:y"), z = unit("skill:z");
  x.supersedes = {"skill:y"};
  y.supersedes = {"skill:z"};
  z.supersedes = {"skill:x"};
  EXPECT_EQ(build({x, y, z}).diagnostics()[0].code, "MF-P003");
  EXPECT_EQ(build({unit("skill:d"), unit("skill:d")}).diagnostics()[0].code, "MF-P003");
  auto orphan = with_tools({unit("tool:nothing")}, kGitTools);
  ASSERT_FALSE(orphan.ok());
  EXPECT_EQ(orphan.diagnostics()[0].code, "MF-P002");
  // Two tools of one model name (two versions in two catalogs): the refinement goes to the
  // first, the second is a unit of its own, and the catalog refuses the repeated id.
  Unit refined = unit("tool:git_diff");
  refined.activation = Activation::Always;
  auto twice = with_tools({refined}, {kGitTools[0], kGitTools[0]});
  ASSERT_TRUE(twice.ok());
  for (const auto& u : *twice) EXPECT_EQ(u.id, "tool:git_diff");
  EXPECT_EQ(build(*twice).diagnostics()[0].code, "MF-P003");
}

TEST(PromptDocuments, ConnectorToolsAreMcpToolUnits) {
  ToolSource echo = tool("echo", "Echo the text back");
  echo.connector = true;
  Unit refined;
  refined.id = "mcp_tool:echo";
  refined.name = "echo";
  refined.kind = Kind::McpTool;
  refined.activation = Activation::Always;
  auto all = with_tools({refined}, {echo, kGitTools[0]});
  ASSERT_TRUE(all.ok()) << all.diagnostics()[0].message;
  ASSERT_EQ(all->size(), 2u);
  const Unit& u = all->front();
  EXPECT_EQ(u.id, "mcp_tool:echo");
  EXPECT_EQ(u.kind, Kind::McpTool);
  EXPECT_EQ(u.activation, Activation::Always);
  EXPECT_EQ(*u.schema.find("description"), json::Value("Echo the text back"));
  EXPECT_EQ(all->back().id, "tool:git_diff");
  // The refinement reads back unchanged, with no schema of its own.
  auto back = units_from_json(json::Array{to_json(refined)}, "/units");
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->front().schema.is_null());
  auto c = Catalog::build(std::move(*all));
  ASSERT_TRUE(c.ok());
  Projection p = run(*c, text("nothing to do with anything"));
  EXPECT_TRUE(has(p.visible_tools, "echo"));
  EXPECT_TRUE(has(p.active, "mcp_tool:echo"));

  auto code = [](const Result<std::vector<Unit>>& r) {
    return r.ok() ? std::string("ok") : r.diagnostics()[0].code;
  };
  // A connector tool is not a tool: unit: the message says which id it has.
  auto wrong = with_tools({unit("tool:echo")}, {echo});
  EXPECT_EQ(code(wrong), "MF-P002");
  EXPECT_NE(wrong.diagnostics()[0].message.find("mcp_tool:echo"), std::string::npos);
  // A declared mcp_tool unit with a schema is a unit of its own; refining a connector tool, its
  // schema would replace the pinned one.
  auto units =
      json::parse(R"([{"id":"mcp_tool:echo","schema":{"input_schema":{"type":"object"}}}])");
  ASSERT_TRUE(units.ok());
  auto declared = units_from_json(*units, "/units");
  ASSERT_TRUE(declared.ok());
  EXPECT_EQ(code(with_tools(*declared, kGitTools)), "ok");
  EXPECT_EQ(code(with_tools(*declared, {echo})), "MF-P001");
  EXPECT_EQ(code(with_tools({refined}, kGitTools)), "MF-P002");  // no tool, no schema
  EXPECT_EQ(code(with_tools({}, {echo, tool("echo", "x")})), "MF-P003");
}

TEST(PromptDocuments, NormalizedUnitsReadBackUnchanged) {
  auto v = json::parse(
      R"([{"id":"skill:a","aliases":["z","b"],"triggers":[{"phrase":"x y","weight":3}],)"
      R"("requires":["skill:b"],"content":"c","summary":"s"},{"id":"skill:b"}])");
  ASSERT_TRUE(v.ok());
  auto units = units_from_json(*v, "/units");
  ASSERT_TRUE(units.ok());
  json::Array once;
  for (const auto& u : *units) once.push_back(to_json(u));
  auto again = units_from_json(json::Value(once), "/units");
  ASSERT_TRUE(again.ok());
  json::Array twice;
  for (const auto& u : *again) twice.push_back(to_json(u));
  EXPECT_EQ(json::canonical(json::Value(once)), json::canonical(json::Value(twice)));
}

// --- Properties over random catalogs -----------------------------------------------------------

TEST(PromptProperties, SubsetsLedgerAndDeterminism) {
  std::mt19937 rng(1414);
  const std::vector<std::string> words = {"alpha", "beta", "gamma",  "delta", "file",
                                          "git",   "test", "review", "shell", "net"};
  const auto word = [&] { return words[rng() % words.size()]; };
  for (int round = 0; round < 200; ++round) {
    std::vector<ToolSource> tools;
    const int ntools = 1 + static_cast<int>(rng() % 8);
    for (int i = 0; i < ntools; ++i) {
      std::vector<std::string> caps;
      if (rng() % 3 == 0) caps.push_back("cap." + word());
      tools.push_back(tool("t" + std::to_string(i), word() + " " + word(), caps));
    }
    std::vector<Unit> declared;
    const int nskills = static_cast<int>(rng() % 6);
    std::vector<std::string> ids;
    for (int i = 0; i < ntools; ++i) ids.push_back("tool:t" + std::to_string(i));
    for (int i = 0; i < nskills; ++i) ids.push_back("skill:s" + std::to_string(i));
    for (int i = 0; i < nskills; ++i) {
      Unit u = unit("skill:s" + std::to_string(i), std::string(rng() % 300, 'g'));
      if (rng() % 2) u.summary = "sum";
      u.triggers = {{Trigger::On::Keyword, word(), static_cast<std::int64_t>(rng() % 100)}};
      u.mandatory = rng() % 5 == 0;
      u.activation = rng() % 6 == 0 ? Activation::Always : Activation::Relevant;
      const std::string other = ids[rng() % ids.size()];
      if (other != u.id) {
        switch (rng() % 4) {
          case 0:
            u.requirements = {other};
            break;
          case 1:
            u.suggests = {other};
            break;
          case 2:
            u.conflicts = {other};
            break;
          default:
            break;  // supersession could cycle; the catalog tests cover it
        }
      }
      declared.push_back(std::move(u));
    }
    const Catalog c = catalog(declared, tools);
    Input in = text(word() + " " + word() + " without " + word());
    if (rng() % 2) in.capabilities = {"cap." + word(), "cap." + word()};
    in.budget_tokens = 50 + static_cast<std::int64_t>(rng() % 2000);
    in.mode = rng() % 4 == 0 ? Mode::AllTools : Mode::Compiled;
    auto p = project(c, in);
    if (!p.ok()) {
      EXPECT_EQ(p.diagnostics()[0].code, "MF-P005");
      continue;
    }
    std::set<std::string> selected;
    for (const auto& d : p->selected) selected.insert(d.unit);
    for (const auto& a : p->active) {
      EXPECT_TRUE(selected.count(a)) << a;
      const Unit* u = c.find(a);
      ASSERT_NE(u, nullptr);
      for (const auto& cap : u->capabilities) EXPECT_TRUE(has(in.capabilities, cap)) << a;
      for (const auto& r : u->requirements) EXPECT_TRUE(has(p->active, r)) << a << " needs " << r;
    }
    std::vector<std::string> tools_active;
    for (const auto& a : p->active) {
      if (a.rfind("tool:", 0) == 0) tools_active.push_back(a.substr(5));
    }
    EXPECT_EQ(p->visible_tools, tools_active);
    std::int64_t tokens = 0, bytes = static_cast<std::int64_t>(p->guidance.size());
    for (const auto& i : p->ledger.items) tokens += i.tokens;
    for (const auto& s : p->tool_schemas)
      bytes += static_cast<std::int64_t>(render_schema(s).size());
    EXPECT_EQ(p->ledger.charged, tokens);
    EXPECT_EQ(p->ledger.bytes, bytes);
    EXPECT_LE(p->ledger.charged, in.budget_tokens);
    EXPECT_EQ(p->ledger.remaining, in.budget_tokens - p->ledger.charged);
    auto again = project(c, in);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(json::canonical(to_json(*p)), json::canonical(to_json(*again)));
  }
}

using Objective = std::tuple<std::int64_t, std::int64_t, std::int64_t>;

// The objective of `choice`, or nothing when it drops a mandatory item, keeps an item without
// one it needs, or goes over the budget.
std::optional<Objective> objective(const std::vector<PackItem>& items,
                                   const std::vector<int>& choice, std::int64_t budget) {
  if (choice.size() != items.size()) return std::nullopt;
  std::int64_t used = 0, kept = 0, full = 0, weight = 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const int v = choice[i];
    if (v < 0) {
      if (items[i].mandatory) return std::nullopt;
      continue;
    }
    if (static_cast<std::size_t>(v) >= items[i].tokens.size()) return std::nullopt;
    for (int d : items[i].needs) {
      if (choice[d] < 0) return std::nullopt;
    }
    used += items[i].tokens[v];
    ++kept;
    full += v == 0 ? 1 : 0;
    weight += items[i].weight;
  }
  if (used > budget) return std::nullopt;
  return Objective{kept, full, weight};
}

void brute(const std::vector<PackItem>& items, std::int64_t budget, std::vector<int>& choice,
           std::size_t i, std::optional<Objective>& best) {
  if (i == items.size()) {
    auto o = objective(items, choice, budget);
    if (o && (!best || *o > *best)) best = o;
    return;
  }
  for (int v = -1; v < static_cast<int>(items[i].tokens.size()); ++v) {
    choice[i] = v;
    brute(items, budget, choice, i + 1, best);
  }
}

// Random small instances with requirements (chains, shared requirements, cycles): the exact
// packer reaches the brute-force optimum, the greedy one is feasible exactly when it is and
// never better, and every solution keeps each kept item's requirements.
TEST(PromptPack, GroupsMatchBruteForce) {
  std::mt19937 rng(2718);
  int grouped = 0;
  for (int round = 0; round < 3000; ++round) {
    const std::size_t n = 1 + rng() % 8;
    std::vector<PackItem> items(n);
    for (std::size_t i = 0; i < n; ++i) {
      items[i].mandatory = rng() % 6 == 0;
      items[i].weight = static_cast<std::int64_t>(rng() % 200);
      items[i].tokens = {1 + static_cast<std::int64_t>(rng() % 30)};
      if (rng() % 2)
        items[i].tokens.push_back(1 + static_cast<std::int64_t>(rng()) % items[i].tokens[0]);
      for (std::size_t k = rng() % 3; k > 0; --k) {
        const int d = static_cast<int>(rng() % n);
        if (d != static_cast<int>(i)) items[i].needs.push_back(d);
      }
      grouped += items[i].needs.empty() ? 0 : 1;
    }
    const std::int64_t budget = static_cast<std::int64_t>(rng() % 90);
    std::vector<int> choice(n, -1);
    std::optional<Objective> best;
    brute(items, budget, choice, 0, best);
    const Pack exact = pack_exact(items, budget);
    const Pack greedy = pack_greedy(items, budget);
    const Pack chosen = pack(items, budget);
    ASSERT_EQ(exact.feasible, best.has_value()) << round;
    ASSERT_EQ(greedy.feasible, best.has_value()) << round;
    ASSERT_EQ(chosen.feasible, best.has_value()) << round;
    if (!best) continue;
    EXPECT_EQ(objective(items, exact.choice, budget), best) << round;
    EXPECT_EQ(objective(items, chosen.choice, budget), best) << round;
    const auto g = objective(items, greedy.choice, budget);
    ASSERT_TRUE(g.has_value()) << round;
    EXPECT_LE(*g, *best) << round;
  }
  EXPECT_GT(grouped, 3000);
}

TEST(PromptPack, LargeInstancesFallBackToGreedyAndKeepMandatory) {
  std::vector<PackItem> items(5000);
  for (std::size_t i = 0; i < items.size(); ++i) {
    items[i].weight = static_cast<std::int64_t>(i % 97);
    items[i].tokens = {static_cast<std::int64_t>(50 + i % 300)};
    items[i].mandatory = i % 1000 == 0;
  }
  const Pack p = pack(items, 100000);
  ASSERT_TRUE(p.feasible);
  EXPECT_FALSE(p.exact);
  std::int64_t used = 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (items[i].mandatory) {
      EXPECT_EQ(p.choice[i], 0);
    }
    if (p.choice[i] >= 0) used += items[i].tokens[p.choice[i]];
  }
  EXPECT_LE(used, 100000);
}

}  // namespace
}  // namespace mf::prompt
