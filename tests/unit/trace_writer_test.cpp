#include "mf/trace/writer.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "mf/diag/codes.hpp"
#include "mf/json/reader.hpp"
#include "mf/trace/verify.hpp"

namespace {

namespace codes = mf::diag::codes;
namespace fs = std::filesystem;
using mf::json::Object;
using mf::json::Value;
using mf::trace::Durability;
using mf::trace::Writer;
using mf::trace::WriterOptions;

Value object(std::initializer_list<std::pair<const char*, Value>> members) {
  Value v = Object{};
  for (const auto& [key, value] : members) v.set(key, value);
  return v;
}

WriterOptions fixed(std::string run_id = "run-1") {
  return {.run_id = std::move(run_id), .fixed_clock = true};
}

std::unique_ptr<Writer> memory_writer(std::string* sink, WriterOptions options = fixed()) {
  auto writer = Writer::open_memory(sink, std::move(options));
  EXPECT_TRUE(writer.ok());
  return std::move(writer).value();
}

std::string first_code(const mf::Status& s) {
  return s.ok() ? "" : s.diagnostics().front().code;
}

// A complete task-mode run as the run loop emits it.
void emit_small_run(Writer& w) {
  ASSERT_TRUE(w.emit("run_started", object({{"mode", "task"}, {"task_id", "t"}})).ok());
  ASSERT_TRUE(w.emit("model_requested", object({{"call", 1}, {"kind", "initial"}})).ok());
  ASSERT_TRUE(w.emit("model_responded", object({{"call", 1}, {"content_bytes", 2}})).ok());
  ASSERT_TRUE(w.emit("run_completed",
                     object({{"terminal", "completed"}, {"model_calls", 1}, {"repairs", 0}}))
                  .ok());
}

TEST(TraceWriter, WritesExactCanonicalLinesWithContiguousSeq) {
  std::string sink;
  auto w = memory_writer(&sink);
  emit_small_run(*w);
  EXPECT_EQ(w->events_written(), 4);
  EXPECT_EQ(sink,
            "{\"event\":\"run_started\",\"mode\":\"task\",\"run_id\":\"run-1\",\"seq\":0,"
            "\"t_ms\":0,\"task_id\":\"t\",\"v\":1}\n"
            "{\"call\":1,\"event\":\"model_requested\",\"kind\":\"initial\",\"run_id\":\"run-1\","
            "\"seq\":1,\"t_ms\":0,\"v\":1}\n"
            "{\"call\":1,\"content_bytes\":2,\"event\":\"model_responded\",\"run_id\":\"run-1\","
            "\"seq\":2,\"t_ms\":0,\"v\":1}\n"
            "{\"event\":\"run_completed\",\"model_calls\":1,\"repairs\":0,\"run_id\":\"run-1\","
            "\"seq\":3,\"t_ms\":0,\"terminal\":\"completed\",\"v\":1}\n");
  EXPECT_TRUE(w->close().ok());
}

TEST(TraceWriter, WhatItWritesVerifies) {
  std::string sink;
  auto w = memory_writer(&sink);
  emit_small_run(*w);
  auto summary = mf::trace::verify(sink);
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->status, mf::trace::Outcome::Ok);
  EXPECT_EQ(summary->events, 4);
}

TEST(TraceWriter, NestedPayloadMembersAreMergedAndSorted) {
  std::string sink;
  auto w = memory_writer(&sink);
  ASSERT_TRUE(
      w->emit("run_started", object({{"z", object({{"b", 2}, {"a", 1}})}, {"a", "x"}})).ok());
  EXPECT_EQ(sink,
            "{\"a\":\"x\",\"event\":\"run_started\",\"run_id\":\"run-1\",\"seq\":0,\"t_ms\":0,"
            "\"v\":1,\"z\":{\"a\":1,\"b\":2}}\n");
}

TEST(TraceWriter, NullPayloadAddsNothing) {
  std::string sink;
  auto w = memory_writer(&sink);
  ASSERT_TRUE(w->emit("run_started", nullptr).ok());
  ASSERT_TRUE(w->emit("context_compacted", nullptr).ok());
  EXPECT_EQ(sink,
            "{\"event\":\"run_started\",\"run_id\":\"run-1\",\"seq\":0,\"t_ms\":0,\"v\":1}\n"
            "{\"event\":\"context_compacted\",\"run_id\":\"run-1\",\"seq\":1,\"t_ms\":0,\"v\":1}"
            "\n");
}

TEST(TraceWriter, LiveClockGivesNonNegativeIntegerTimes) {
  std::string sink;
  auto w = memory_writer(&sink, {.run_id = "r"});
  ASSERT_TRUE(w->emit("run_started", nullptr).ok());
  auto line = mf::json::parse(std::string_view(sink).substr(0, sink.size() - 1));
  ASSERT_TRUE(line.ok());
  auto t = line->find("t_ms")->as_exact_int();
  ASSERT_TRUE(t.has_value());
  EXPECT_GE(*t, 0);
}

TEST(TraceWriter, RejectsANonObjectPayloadAndWritesNothing) {
  std::string sink;
  auto w = memory_writer(&sink);
  for (Value bad : {Value(mf::json::Array{}), Value("text"), Value(3), Value(true)}) {
    auto s = w->emit("run_started", bad);
    EXPECT_EQ(first_code(s), codes::kInternal);
  }
  EXPECT_EQ(sink, "");
  EXPECT_EQ(w->events_written(), 0);
  EXPECT_TRUE(w->emit("run_started", nullptr).ok());  // the failures consumed no seq
  EXPECT_NE(sink.find("\"seq\":0"), std::string::npos);
}

TEST(TraceWriter, RejectsPayloadMembersNamedLikeTheEnvelope) {
  std::string sink;
  auto w = memory_writer(&sink);
  for (const char* key : {"v", "run_id", "seq", "event", "t_ms"}) {
    EXPECT_EQ(first_code(w->emit("run_started", object({{key, 7}}))), codes::kInternal) << key;
  }
  Value dup = Object{{"a", 1}, {"a", 2}};
  EXPECT_EQ(first_code(w->emit("run_started", dup)), codes::kInternal);
  EXPECT_EQ(sink, "");
}

TEST(TraceWriter, RefusesEventsTheVerifierWouldReject) {
  std::string sink;
  auto w = memory_writer(&sink);
  EXPECT_EQ(first_code(w->emit("model_requested", object({{"call", 1}, {"kind", "initial"}}))),
            codes::kInternal);  // before run_started
  ASSERT_TRUE(w->emit("run_started", nullptr).ok());
  EXPECT_EQ(first_code(w->emit("run_started", nullptr)), codes::kInternal);
  EXPECT_EQ(first_code(w->emit("model_sneezed", nullptr)), codes::kInternal);
  EXPECT_EQ(first_code(w->emit("model_requested", object({{"call", 0}, {"kind", "initial"}}))),
            codes::kInternal);
  EXPECT_EQ(first_code(w->emit("model_requested", object({{"call", 1}}))), codes::kInternal);
  EXPECT_EQ(first_code(w->emit("run_completed", object({{"terminal", "cancelled"}}))),
            codes::kInternal);
  EXPECT_EQ(first_code(w->emit("tool_called", nullptr)), codes::kInternal);
  ASSERT_TRUE(w->emit("run_failed", object({{"terminal", "cancelled"}})).ok());
  EXPECT_EQ(first_code(w->emit("context_compacted", nullptr)), codes::kInternal);
  EXPECT_EQ(w->events_written(), 2);
}

TEST(TraceWriter, RejectsAnEmptyRunId) {
  std::string sink;
  EXPECT_FALSE(Writer::open_memory(&sink, {}).ok());
  EXPECT_FALSE(Writer::open_memory(nullptr, fixed()).ok());
}

class TraceWriterFile : public testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::path(testing::TempDir()) / "mf_trace_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  static std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
  fs::path dir_;
};

TEST_F(TraceWriterFile, EventDurabilityWritesEachLineBeforeEmitReturns) {
  std::string expected;
  emit_small_run(*memory_writer(&expected));
  const auto path = dir_ / "t.jsonl";
  { std::ofstream(path) << "old bytes that must be truncated\n"; }
  auto w = Writer::open(path.string(), fixed());
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->emit("run_started", object({{"mode", "task"}, {"task_id", "t"}})).ok());
  // Visible to another reader now, without close().
  EXPECT_EQ(slurp(path), expected.substr(0, expected.find('\n') + 1));
  ASSERT_TRUE((*w)->emit("model_requested", object({{"call", 1}, {"kind", "initial"}})).ok());
  ASSERT_TRUE((*w)->emit("model_responded", object({{"call", 1}, {"content_bytes", 2}})).ok());
  ASSERT_TRUE((*w)->emit("run_completed",
                         object({{"terminal", "completed"}, {"model_calls", 1}, {"repairs", 0}}))
                  .ok());
  ASSERT_TRUE((*w)->close().ok());
  ASSERT_TRUE((*w)->close().ok());  // idempotent
  EXPECT_EQ(slurp(path), expected);
  EXPECT_EQ(first_code((*w)->emit("run_started", nullptr)), codes::kInternal);
}

TEST_F(TraceWriterFile, BatchDurabilityLosesNothingByClose) {
  std::string expected;
  emit_small_run(*memory_writer(&expected));
  const auto path = dir_ / "b.jsonl";
  auto w = Writer::open(path.string(),
                        {.run_id = "run-1", .fixed_clock = true, .durability = Durability::Batch});
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->emit("run_started", object({{"mode", "task"}, {"task_id", "t"}})).ok());
  EXPECT_EQ(slurp(path), "");  // buffered
  ASSERT_TRUE((*w)->emit("model_requested", object({{"call", 1}, {"kind", "initial"}})).ok());
  ASSERT_TRUE((*w)->emit("model_responded", object({{"call", 1}, {"content_bytes", 2}})).ok());
  ASSERT_TRUE((*w)->emit("run_completed",
                         object({{"terminal", "completed"}, {"model_calls", 1}, {"repairs", 0}}))
                  .ok());
  EXPECT_EQ(slurp(path), expected);  // the terminal event flushes
  ASSERT_TRUE((*w)->close().ok());
  EXPECT_EQ(slurp(path), expected);
}

// "-" is stdout; a pipe cannot be fdatasync'ed, so Event durability must skip the sync there.
TEST(TraceWriterStdout, DashWritesToAPipeOnStdout) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::fflush(stdout);
  const int saved = ::dup(STDOUT_FILENO);
  ASSERT_GE(saved, 0);
  ASSERT_GE(::dup2(fds[1], STDOUT_FILENO), 0);
  mf::Status emitted = mf::diag::error("unset", "");
  mf::Status closed = mf::diag::error("unset", "");
  {
    auto w = Writer::open("-", fixed());
    if (w.ok()) {
      emitted = (*w)->emit("run_started", nullptr);
      closed = (*w)->close();
    }
  }
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  ::close(fds[1]);
  std::string got(4096, '\0');
  const auto n = ::read(fds[0], got.data(), got.size());
  ::close(fds[0]);
  ASSERT_TRUE(emitted.ok()) << emitted.diagnostics().front().message;
  ASSERT_TRUE(closed.ok());
  got.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  EXPECT_EQ(got, "{\"event\":\"run_started\",\"run_id\":\"run-1\",\"seq\":0,\"t_ms\":0,\"v\":1}\n");
}

TEST_F(TraceWriterFile, UnopenablePathIsAnOutputError) {
  auto w = Writer::open((dir_ / "missing" / "t.jsonl").string(), fixed());
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.diagnostics().front().code, codes::kBadOutputPath);
}

}  // namespace
