#include "mf/store/invocation.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mf/diag/codes.hpp"
#include "temp_dir.hpp"

namespace mf::store::commands {
namespace {

const std::string kZeros(64, '0');

// Runs `args` against a store in `dir`; the outcome, and what the command wrote in `out`.
struct Ran {
  diag::CommandOutcome outcome;
  std::string out;
};
Ran run_in(const test::TempDir& dir, std::vector<std::string> args, Invocation in = {}) {
  in.args = std::move(args);
  in.store = (dir / "st").string();
  const auto path = dir / "out";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  EXPECT_GE(fd, 0);
  Ran ran{run(in, fd), {}};
  ::close(fd);
  ran.out = test::read_file(path);
  return ran;
}

TEST(StoreInvocation, OperandCountsNamedPerCommand) {
  test::TempDir dir;
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"get"}, "'get' takes one DIGEST"},
      {{"get", kZeros, kZeros}, "'get' takes one DIGEST"},
      {{"has"}, "'has' takes one or more DIGESTs"},
      {{"ls", "x"}, "'ls' takes no operands"},
      {{"verify", "x"}, "'verify' takes no operands"},
      {{"gc", "x"}, "'gc' takes no operands"},
      {{"stat", "x"}, "'stat' takes no operands"},
      {{"canon", "a", "b"}, "'canon' takes at most one FILE"},
      {{"hash", "a", "b"}, "'hash' takes at most one FILE"},
      {{"import", "a", "b"}, "'import' takes at most one FILE"},
      {{"export"}, "'export' takes DIGESTs and/or --ref NAME"},
      {{"ref"}, "'ref' takes 'set NAME DIGEST', 'get NAME' or 'rm NAME'"},
      {{"ref", "set", "a"}, "'ref' takes 'set NAME DIGEST', 'get NAME' or 'rm NAME'"},
      {{"ref", "get", "a", "b"}, "'ref' takes 'set NAME DIGEST', 'get NAME' or 'rm NAME'"},
      {{"ref", "move", "a"}, "'ref' takes 'set NAME DIGEST', 'get NAME' or 'rm NAME'"},
      {{"frobnicate"}, "unknown command 'frobnicate'"},
  };
  for (const auto& [args, usage] : cases) {
    const auto ran = run_in(dir, args);
    EXPECT_EQ(ran.outcome.usage, usage) << args[0];
    EXPECT_EQ(ran.out, "") << args[0];
  }
}

TEST(StoreInvocation, DigestsAreCheckedBeforeTheStoreIsOpened) {
  test::TempDir dir;
  EXPECT_EQ(run_in(dir, {"get", "abc"}).outcome.usage,
            "'abc' is not a digest (64 lowercase hex digits)");
  EXPECT_EQ(run_in(dir, {"has", kZeros, std::string(64, 'A')}).outcome.usage,
            "'" + std::string(64, 'A') + "' is not a digest (64 lowercase hex digits)");
  EXPECT_EQ(run_in(dir, {"ref", "set", "r/a", "zz"}).outcome.usage,
            "'zz' is not a digest (64 lowercase hex digits)");
  EXPECT_EQ(run_in(dir, {"export", "zz"}).outcome.usage,
            "'zz' is not a digest (64 lowercase hex digits)");
  // A read command on a missing store reports it and creates nothing.
  const auto missing = run_in(dir, {"get", kZeros});
  EXPECT_TRUE(missing.outcome.usage.empty());
  ASSERT_FALSE(missing.outcome.diagnostics.empty());
  EXPECT_FALSE(std::filesystem::exists(dir / "st"));
}

TEST(StoreInvocation, VerdictsAreOutcomes) {
  test::TempDir dir;
  test::write_file(dir / "a.txt", "hello\n");
  const auto put = run_in(dir, {"put", (dir / "a.txt").string()});
  ASSERT_FALSE(put.outcome.stopped());
  const std::string digest = put.out.substr(0, 64);
  ASSERT_EQ(put.out, digest + "\n");

  const auto has = run_in(dir, {"has", digest, kZeros});
  EXPECT_TRUE(has.outcome.failed);
  EXPECT_EQ(has.out, kZeros + "\n");
  EXPECT_FALSE(run_in(dir, {"has", digest}).outcome.failed);

  EXPECT_FALSE(run_in(dir, {"ref", "set", "r/a", digest}).outcome.stopped());
  EXPECT_EQ(run_in(dir, {"ref", "get", "r/a"}).out, digest + "\n");
  const auto absent = run_in(dir, {"ref", "rm", "r/b"});
  EXPECT_TRUE(absent.outcome.failed);
  EXPECT_EQ(absent.outcome.remarks,
            (std::vector<std::string>{"ref r/b does not exist; nothing removed"}));
  const auto removed = run_in(dir, {"ref", "rm", "r/a"});
  EXPECT_FALSE(removed.outcome.failed);
  EXPECT_TRUE(removed.outcome.remarks.empty());

  Invocation progress;
  std::uint64_t last = 0;
  progress.progress = [&last](std::uint64_t done, std::uint64_t) { last = done; };
  const auto verified = run_in(dir, {"verify"}, progress);
  EXPECT_FALSE(verified.outcome.failed);
  EXPECT_EQ(last, 1u);
}

TEST(StoreInvocation, PlumbingNeedsNoStore) {
  test::TempDir dir;
  test::write_file(dir / "doc.json", R"({"b":1, "a":[1.0]})");
  const auto canon = run_in(dir, {"canon", (dir / "doc.json").string()});
  EXPECT_FALSE(canon.outcome.stopped());
  EXPECT_EQ(canon.out, "{\"a\":[1],\"b\":1}\n");
  Invocation small;
  small.max_bytes = 4;
  const auto held = run_in(dir, {"canon", (dir / "doc.json").string()}, small);
  ASSERT_FALSE(held.outcome.diagnostics.empty());
  EXPECT_EQ(held.outcome.source, (dir / "doc.json").string());
  Invocation json;
  json.json = true;
  const auto hashed = run_in(dir, {"hash", (dir / "doc.json").string()}, json);
  EXPECT_EQ(hashed.out.size(), 65u);
  const auto missing = run_in(dir, {"hash", (dir / "none").string()});
  ASSERT_FALSE(missing.outcome.diagnostics.empty());
  EXPECT_EQ(missing.outcome.diagnostics[0].code, diag::codes::kMissing);
  EXPECT_FALSE(std::filesystem::exists(dir / "st"));
}

}  // namespace
}  // namespace mf::store::commands
