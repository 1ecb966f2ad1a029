#include "mf/cli/cli.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "mf/diag/codes.hpp"
#include "temp_dir.hpp"

namespace mf::cli {
namespace {

using Items = std::vector<std::string>;

TEST(CliLists, ItemsInOrderWithoutEmptyOnes) {
  EXPECT_EQ(split_commas("a,b,c"), (Items{"a", "b", "c"}));
  EXPECT_EQ(split_commas(",a,,b,"), (Items{"a", "b"}));
  EXPECT_EQ(split_commas("one"), (Items{"one"}));
  EXPECT_EQ(split_commas(" a , b"), (Items{" a ", " b"}));
  EXPECT_TRUE(split_commas("").empty());
  EXPECT_TRUE(split_commas(",,,").empty());
  EXPECT_EQ(split_commas(Items{"a,b", "", "c", ",d"}), (Items{"a", "b", "c", "d"}));
  EXPECT_TRUE(split_commas(Items{}).empty());
}

// Runs `body` as the body of a tool "mf-test" with one text option --opt and one number --num;
// returns the exit code and fills `err` with what went to stderr.
int run_tool(std::vector<std::string> args,
             const std::function<int(Context&, const Text&, const Number&)>& body,
             std::string& err) {
  const Tool tool{.name = "mf-test", .summary = "s", .usage = "mf-test", .positional = "args"};
  Options options;
  const Text opt = options.text({"opt", "a text", "T"});
  const Number num = options.number({"num", "a number", "N"});
  args.insert(args.begin(), "mf-test");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  testing::internal::CaptureStderr();
  const int rc = run(static_cast<int>(argv.size()), argv.data(), tool, options,
                     [&](Context& ctx) { return body(ctx, opt, num); });
  err = testing::internal::GetCapturedStderr();
  return rc;
}

TEST(CliContext, IfGivenTellsAbsentFromEmpty) {
  std::string err;
  std::optional<std::string> text;
  std::optional<std::int64_t> number;
  auto read = [&](Context& ctx, const Text& opt, const Number& num) {
    text = ctx.if_given(opt);
    number = ctx.if_given(num);
    return 0;
  };
  ASSERT_EQ(run_tool({}, read, err), 0);
  EXPECT_FALSE(text);
  EXPECT_FALSE(number);
  ASSERT_EQ(run_tool({"--opt", "", "--num", "0"}, read, err), 0);
  EXPECT_EQ(text, "");
  EXPECT_EQ(number, 0);
  ASSERT_EQ(run_tool({"--opt=x", "--num=-3"}, read, err), 0);
  EXPECT_EQ(text, "x");
  EXPECT_EQ(number, -3);
}

TEST(CliFinish, UsageErrorWithTheHelpHint) {
  std::string err;
  const int rc = run_tool(
      {},
      [](Context& ctx, auto&, auto&) {
        return finish(ctx, diag::CommandOutcome::usage_error("--x takes y"));
      },
      err);
  EXPECT_EQ(rc, kRejected);
  EXPECT_EQ(err, "mf-test: usage error: --x takes y\nTry 'mf-test --help'.\n");
}

TEST(CliFinish, DiagnosticsAboutTheSourceWithTheirExitClass) {
  std::string err;
  auto stop = [](diag::Job job) {
    return [job](Context& ctx, auto&, auto&) {
      auto outcome = diag::CommandOutcome::stopped_by(
          {diag::error(diag::codes::kTraceAfterTerminal, "late", {}, 8)}, "t.jsonl", job);
      outcome.remarks.push_back("never printed");
      return finish(ctx, outcome);
    };
  };
  EXPECT_EQ(run_tool({}, stop(diag::Job::Check), err), kFailure);
  EXPECT_EQ(err, "mf-test: t.jsonl:8: error MF-E009: late\n");
  EXPECT_EQ(run_tool({}, stop(diag::Job::Work), err), kRejected);
  auto internal = [](Context& ctx, auto&, auto&) {
    return finish(ctx,
                  diag::CommandOutcome::stopped_by({diag::error(diag::codes::kWriteFailed, "w")}));
  };
  EXPECT_EQ(run_tool({}, internal, err), kInternal);
  EXPECT_EQ(err, "mf-test: error MF-O003: w\n");
}

TEST(CliFinish, WarningsRemarksAndTheSummaryEvenWhenQuiet) {
  std::string err;
  auto done = [](bool failed) {
    return [failed](Context& ctx, auto&, auto&) {
      diag::CommandOutcome outcome;
      outcome.failed = failed;
      outcome.warnings = {diag::error(diag::codes::kSchema, "kept going")};
      outcome.source = "in.yaml";
      outcome.remarks = {"first", "second"};
      outcome.summary = "all told";
      return finish(ctx, outcome);
    };
  };
  EXPECT_EQ(run_tool({}, done(true), err), kFailure);
  EXPECT_EQ(err,
            "mf-test: in.yaml: error MF-S020: kept going\nmf-test: first\nmf-test: second\n"
            "mf-test: all told\n");
  EXPECT_EQ(run_tool({"--quiet"}, done(false), err), kSuccess);
  EXPECT_EQ(err,
            "mf-test: in.yaml: error MF-S020: kept going\nmf-test: first\nmf-test: second\n"
            "mf-test: all told\n");
  auto nothing = [](Context& ctx, auto&, auto&) { return finish(ctx, diag::CommandOutcome{}); };
  EXPECT_EQ(run_tool({}, nothing, err), kSuccess);
  EXPECT_EQ(err, "");
}

TEST(CliFinish, AStatusIsSuccessOrItsDiagnostics) {
  std::string err;
  auto ok = [](Context& ctx, auto&, auto&) { return finish(ctx, Status()); };
  EXPECT_EQ(run_tool({}, ok, err), kSuccess);
  EXPECT_EQ(err, "");
  auto bad = [](Context& ctx, auto&, auto&) {
    return finish(ctx, Status(diag::error(diag::codes::kMissing, "gone")), "<stdin>");
  };
  EXPECT_EQ(run_tool({}, bad, err), kRejected);
  EXPECT_EQ(err, "mf-test: <stdin>: error MF-S013: gone\n");
}

// Labelled, redrawn in place with the rest of the line cleared, not before the delay and then at
// most every interval; the last text drawn again and ended when it goes away.
TEST(CliProgressLine, LabelledPacedAndEndedOnce) {
  double now = 10;
  testing::internal::CaptureStderr();
  {
    ProgressLine line(true, "mf-test shard 2/4", [&now] { return now; });
    line.draw("1/5");  // at 0 s: too early
    now = 10.4;
    line.draw("2/5");  // still too early
    now = 10.5;
    line.draw("3/5");  // drawn
    now = 10.55;
    line.draw("4/5");  // within the interval
    now = 10.7;
    line.draw("5/5");  // drawn
    now = 10.71;
    line.draw("done");  // drawn only as the last text, when the line ends
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "\rmf-test shard 2/4: 3/5\x1b[K\rmf-test shard 2/4: 5/5\x1b[K"
            "\rmf-test shard 2/4: done\x1b[K\n");
}

// A last text already drawn is not drawn again: the line is only ended.
TEST(CliProgressLine, EndsWithoutRedrawingTheSameText) {
  double now = 0;
  testing::internal::CaptureStderr();
  {
    ProgressLine line(true, "l", [&now] { return now; });
    now = 1;
    line.draw("2/2");
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "\rl: 2/2\x1b[K\n");
}

// Short work draws nothing, and a disabled line (no TTY, or --quiet) nothing ever.
TEST(CliProgressLine, ShortWorkOrDisabledDrawsNothing) {
  double now = 0;
  testing::internal::CaptureStderr();
  {
    ProgressLine quick(true, "quick", [&now] { return now; });
    now = 0.49;
    quick.draw("1/1");
  }
  {
    ProgressLine off(false, "off", [&now] { return now; });
    now = 100;
    off.draw("1/1");
    EXPECT_FALSE(off.enabled());
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST(CliProgressLine, MebibytesWithOneDecimal) {
  EXPECT_EQ(mebibytes(0), "0.0 MiB");
  EXPECT_EQ(mebibytes(3u << 19), "1.5 MiB");
  EXPECT_EQ(mebibytes(40ull << 20), "40.0 MiB");
}

// Runs a tool "mf-test" with one option of each path kind (--file, --dir, --store, --in) and the
// subcommands "write" and "read" (--store is written only by "write"); returns the exit code,
// whether the body ran, and stderr.
int run_paths(std::vector<std::string> args, bool& ran, std::string& err) {
  const Tool tool{.name = "mf-test",
                  .summary = "s",
                  .usage = "mf-test",
                  .positional = "args",
                  .commands = {"write", "read"}};
  Options options;
  options.text({.name = "file", .help = "f", .value = "FILE|-", .path = Path::OutFile});
  options.text({.name = "dir", .help = "d", .value = "DIR", .path = Path::OutDir});
  options.text(
      {.name = "store", .help = "s", .value = "DIR", .path = Path::Store, .writes = {"write"}});
  options.text({.name = "in", .help = "i", .value = "DIR", .path = Path::InDir});
  args.insert(args.begin(), "mf-test");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  ran = false;
  testing::internal::CaptureStderr();
  const int rc = run(static_cast<int>(argv.size()), argv.data(), tool, options, [&](Context&) {
    ran = true;
    return 0;
  });
  err = testing::internal::GetCapturedStderr();
  return rc;
}

TEST(CliPaths, AMissingOutputDirectoryIsRefusedBeforeTheBody) {
  test::TempDir dir;
  const std::string here = dir.path().string();
  const std::string missing = (dir / "missing").string();
  bool ran = false;
  std::string err;
  const std::string refusal = "mf-test: error MF-S017: output directory '" + missing +
                              "' does not exist (create it: mkdir -p " + missing + ")\n";
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"--file", missing + "/x.json"},
                                             {"--dir", missing},
                                             {"write", "--store", missing + "/st"},
                                             {"write", "--store", missing + "/st/"}}) {
    EXPECT_EQ(run_paths(args, ran, err), kRejected) << args[0];
    EXPECT_FALSE(ran) << args[0];
    EXPECT_EQ(err, refusal) << args[0];
  }
  EXPECT_FALSE(std::filesystem::exists(missing));
  // What needs no directory, or names one that exists, reaches the body.
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--file", "-"},
           {"--file", "bare.json"},
           {"--file", here + "/x.json"},
           {"--dir", here},
           {"write", "--store", here + "/st"},
           {"read", "--store", missing + "/st"},  // only read: the store's own check
           {"--in", missing}}) {
    EXPECT_EQ(run_paths(args, ran, err), kSuccess) << args[1] << ": " << err;
    EXPECT_TRUE(ran) << args[1];
  }
  // A path that is there but no directory.
  { std::ofstream(here + "/plain") << "x"; }
  const std::string not_dir =
      "mf-test: error MF-S017: output directory '" + here + "/plain' is not a directory\n";
  EXPECT_EQ(run_paths({"--dir", here + "/plain"}, ran, err), kRejected);
  EXPECT_EQ(err, not_dir);
  EXPECT_EQ(run_paths({"--file", here + "/plain/y.json"}, ran, err), kRejected);
  EXPECT_EQ(err, not_dir);
  // The fix quotes what the shell would split.
  EXPECT_EQ(run_paths({"--dir", here + "/a b"}, ran, err), kRejected);
  EXPECT_NE(err.find("(create it: mkdir -p '" + here + "/a b')"), std::string::npos) << err;
}

TEST(CliPaths, DashNamesAFileNeverADirectory) {
  bool ran = false;
  std::string err;
  for (const char* option : {"--dir", "--store", "--in"}) {
    EXPECT_EQ(run_paths({"read", option, "-"}, ran, err), kRejected) << option;
    EXPECT_FALSE(ran);
    EXPECT_EQ(err, std::string("mf-test: usage error: ") + option +
                       " names a directory; '-' (stdin or stdout) stands for a file only\n"
                       "Try 'mf-test --help'.\n");
  }
}

}  // namespace
}  // namespace mf::cli
