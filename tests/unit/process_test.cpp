// process::run: exit codes, output, the timeout, and a wait that never oversleeps a child's exit.
#include <gtest/gtest.h>

#include <chrono>

#include "mf/process/process.hpp"

namespace mf::process {
namespace {

using Clock = std::chrono::steady_clock;

Command shell(const std::string& script, std::chrono::milliseconds timeout) {
  Command c;
  c.program = "/bin/sh";
  c.args = {"-c", script};
  c.timeout = timeout;
  return c;
}

TEST(ProcessRun, ReportsExitCodeAndBothStreams) {
  auto done = run(shell("printf out; printf err >&2; exit 7", std::chrono::seconds(30)));
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->exit_code, 7);
  EXPECT_EQ(done->out, "out");
  EXPECT_EQ(done->err, "err");
}

TEST(ProcessRun, TimeoutKillsTheChild) {
  const auto start = Clock::now();
  auto done = run(shell("sleep 30", std::chrono::milliseconds(200)));
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->exit_code, -1);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(10));
}

// Every wait ends when the child exits, not at the timeout: hundreds of short children, each of
// which must come back far sooner than its 60 s limit.
TEST(ProcessRun, NeverSleepsPastTheChildsExit) {
  for (int i = 0; i < 300; ++i) {
    const auto start = Clock::now();
    auto done = run(shell("exit 0", std::chrono::seconds(60)));
    const auto took = Clock::now() - start;
    ASSERT_TRUE(done.ok());
    ASSERT_EQ(done->exit_code, 0);
    ASSERT_LT(took, std::chrono::seconds(5))
        << "run " << i << " waited " << std::chrono::duration<double>(took).count() << " s";
  }
}

}  // namespace
}  // namespace mf::process
