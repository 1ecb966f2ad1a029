// How many syncs a whole `mf-run --plan` makes, counted through io::sync_count (never timed): the
// golden harness's conversation (3 model calls, 3 tool calls, the artifacts draft and report) with
// its trace and artifacts on disk.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "mf/io/file.hpp"
#include "mf/runtime/plan_run.hpp"
#include "mf/trace/verify.hpp"

namespace {

namespace fs = std::filesystem;
using mf::trace::Durability;

const std::string kFixtures = std::string(MF_SOURCE_DIR) + "/fixtures";

class RunDurability : public testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::path(testing::TempDir()) / "mf_durability_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    fs::create_directories(dir_ / "ws" / "src");
    fs::create_directories(dir_ / "art");
    fs::copy_file(kFixtures + "/repository/src/lib.rs", dir_ / "ws" / "src" / "lib.rs");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs the golden conversation; returns the syncs it made (-1 when it did not complete).
  long syncs_of_golden_run(Durability durability) {
    mf::runtime::PlanRunRequest request;
    request.plan_path = kFixtures + "/harness/golden.compiled.json";
    request.model_spec = "scripted:" + kFixtures + "/harness/runs/golden-ok.json";
    request.trace_path = (dir_ / "t.jsonl").string();
    request.run_id = "durability";
    request.fixed_clock = true;
    request.durability = durability;
    request.workspace = (dir_ / "ws").string();
    request.artifact_dir = (dir_ / "art").string();
    const std::uint64_t before = mf::io::sync_count();
    auto outcome = mf::runtime::run_plan_request(request);
    const std::uint64_t after = mf::io::sync_count();
    if (!outcome.ok() || outcome->terminal != "completed") return -1;
    return static_cast<long>(after - before);
  }

  fs::path dir_;
};

TEST_F(RunDurability, BatchSyncsOnceAtTheEndOfTheRun) {
  // The trace, the two artifacts and their directory entries: one syncfs of their filesystem.
  EXPECT_EQ(syncs_of_golden_run(Durability::Batch), 1);
  EXPECT_TRUE(mf::trace::verify_file((dir_ / "t.jsonl").string()).ok());
  EXPECT_TRUE(fs::is_regular_file(dir_ / "art" / "draft"));
  EXPECT_TRUE(fs::is_regular_file(dir_ / "art" / "report"));
}

TEST_F(RunDurability, EventSyncsEveryEventAndEachArtifact) {
  // The trace's directory, its 14 events, and per artifact its file and its directory.
  EXPECT_EQ(syncs_of_golden_run(Durability::Event), 1 + 14 + 2 * 2);
}

}  // namespace
