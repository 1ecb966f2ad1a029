// mf-run's command line before any work (mf/runtime/command_line.hpp): the subcommand or mode its
// operands select, and `mf-run rescue`'s streams.
#include "mf/runtime/command_line.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace mf::runtime {
namespace {

TEST(RunCheckMode, ASubcommandTakesItsOperandsAModeOneFile) {
  EXPECT_EQ(check_mode({}, true, false), "");
  EXPECT_EQ(check_mode({}, false, true), "");
  EXPECT_EQ(check_mode({}, false, false), "");  // the required options are checked next
  EXPECT_EQ(check_mode({}, true, true), "--task and --plan are two modes: give one");
  EXPECT_EQ(check_mode({"tool", "read"}, false, false), "");
  EXPECT_EQ(check_mode({"tool"}, false, false), "tool takes exactly one NAME");
  EXPECT_EQ(check_mode({"tool", "read", "ls"}, false, false), "tool takes exactly one NAME");
  EXPECT_EQ(check_mode({"rescue"}, false, false), "");
  EXPECT_EQ(check_mode({"rescue", "x"}, false, false), "rescue takes no operands");
  // An operand is a subcommand before --task and --plan are looked at.
  EXPECT_EQ(check_mode({"rescu"}, true, true),
            "unknown command 'rescu' (did you mean \"rescue\"?)");
  EXPECT_EQ(check_mode({"zzzzzz"}, false, false),
            "unknown command 'zzzzzz' (commands: tool, rescue)");
}

TEST(RunRescueCommand, EachLineOutUntilOneIsNotAString) {
  std::istringstream in("\"no call here\"\n42\n\"never read\"\n");
  std::ostringstream out;
  const auto outcome = rescue_command(in, out, {"read"});
  EXPECT_EQ(out.str(), "null\n");
  ASSERT_EQ(outcome.diagnostics.size(), 1u);
  EXPECT_EQ(outcome.source, "<stdin>");
  EXPECT_TRUE(outcome.usage.empty());

  std::istringstream fine("\"{\\\"name\\\": \\\"read\\\", \\\"arguments\\\": {}}\"\n");
  std::ostringstream rescued;
  EXPECT_FALSE(rescue_command(fine, rescued, {"read"}).stopped());
  EXPECT_EQ(rescued.str(), R"({"calls":[{"arguments":{},"name":"read"}],"format":"json"})"
                           "\n");
}

}  // namespace
}  // namespace mf::runtime
