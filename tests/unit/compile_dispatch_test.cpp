// The dispatch of mf-compile's command line (mf/harness/command.hpp, mf/mcp/command.hpp): the
// operands and the options each subcommand needs, refused as usage errors before any work.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "mf/harness/command.hpp"
#include "mf/mcp/command.hpp"

namespace mf {
namespace {

diag::CommandOutcome harness_command(std::vector<std::string> operands) {
  harness::CommandArgs a;
  a.operands = std::move(operands);
  return harness::command(a, -1, -1);
}

TEST(CompileCommand, EachSubcommandTakesItsOperands) {
  EXPECT_EQ(harness_command({"verify", "a.json", "b.json"}).usage,
            "verify takes one PLAN file (or -)");
  EXPECT_EQ(harness_command({"project", "x"}).usage, "project takes no operand");
  EXPECT_EQ(harness_command({"project"}).usage, "--input is required");
  EXPECT_EQ(harness_command({"custom-tools"}).usage, "custom-tools takes one MANIFEST (or -)");
  EXPECT_EQ(harness_command({"custom-tools", "m.json"}).usage, "--policy is required");
  EXPECT_EQ(harness_command({"a.yaml", "b.yaml"}).usage, "give one HARNESS file (or -)");
}

TEST(CompileCommand, TheCompilationChecksItsOutputsAfterTheOperands) {
  harness::CommandArgs a;
  a.operands = {"a.yaml"};
  a.compile.out_dir = "plans";
  a.compile.output = "plan.json";
  const auto outcome = harness::command(a, -1, -1);
  EXPECT_FALSE(outcome.usage.empty());
  EXPECT_EQ(outcome.usage, harness::check_compile_args(a.compile));
}

TEST(ConnectorCommand, DiscoverNeedsAServerAdmitAPolicy) {
  const std::string form =
      "connector takes 'discover --server CMD|URL' or 'admit SNAPSHOT --policy P'";
  EXPECT_EQ(mcp::connector_command({.operands = {"connector"}}, -1).usage, form);
  EXPECT_EQ(mcp::connector_command({.operands = {"connector", "admit"}}, -1).usage, form);
  EXPECT_EQ(mcp::connector_command({.operands = {"connector", "discover", "x"}}, -1).usage, form);
  EXPECT_EQ(mcp::connector_command({.operands = {"connector", "discover"}}, -1).usage,
            "--server is required");
  EXPECT_EQ(mcp::connector_command({.operands = {"connector", "admit", "s.json"}}, -1).usage,
            "--policy is required");
}

}  // namespace
}  // namespace mf
