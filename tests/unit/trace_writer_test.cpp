#include "mf/trace/writer.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "mf/diag/codes.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/io/file.hpp"
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

// A task-mode run_started payload as the run loop writes it.
Value started() {
  return object({{"mode", "task"},
                 {"task_id", "t"},
                 {"model", "scripted:r.json"},
                 {"budget", object({{"max_model_calls", 1}, {"max_repairs", 0}})},
                 {"durability", "event"},
                 {"trace_content", "digest"}});
}

// The run_completed payload of a completed one-call task run.
Value completed() {
  return object(
      {{"terminal", "completed"}, {"output", Object{}}, {"model_calls", 1}, {"repairs", 0}});
}

std::string first_code(const mf::Status& s) {
  return s.ok() ? "" : s.diagnostics().front().code;
}

// A complete task-mode run as the run loop emits it.
void emit_small_run(Writer& w) {
  ASSERT_TRUE(w.emit("run_started", started()).ok());
  ASSERT_TRUE(w.emit("model_requested", object({{"call", 1}, {"kind", "initial"}})).ok());
  ASSERT_TRUE(w.emit("model_responded", object({{"call", 1}, {"content_bytes", 2}})).ok());
  ASSERT_TRUE(w.emit("run_completed", completed()).ok());
}

TEST(TraceWriter, WritesExactCanonicalLinesWithContiguousSeq) {
  std::string sink;
  auto w = memory_writer(&sink);
  emit_small_run(*w);
  EXPECT_EQ(w->events_written(), 4);
  // Each line after the first names the SHA-256 of the line before it.
  const std::vector<std::string> lines = {
      "{\"budget\":{\"max_model_calls\":1,\"max_repairs\":0},\"durability\":\"event\","
      "\"event\":\"run_started\",\"mode\":\"task\",\"model\":\"scripted:r.json\","
      "\"run_id\":\"run-1\",\"seq\":0,\"t_ms\":0,\"task_id\":\"t\",\"trace_content\":"
      "\"digest\",\"v\":2}",
      "{\"call\":1,\"event\":\"model_requested\",\"kind\":\"initial\",\"prev\":\"@\","
      "\"run_id\":\"run-1\",\"seq\":1,\"t_ms\":0,\"v\":2}",
      "{\"call\":1,\"content_bytes\":2,\"event\":\"model_responded\",\"prev\":\"@\","
      "\"run_id\":\"run-1\",\"seq\":2,\"t_ms\":0,\"v\":2}",
      "{\"event\":\"run_completed\",\"model_calls\":1,\"output\":{},\"prev\":\"@\","
      "\"repairs\":0,\"run_id\":\"run-1\",\"seq\":3,\"t_ms\":0,\"terminal\":\"completed\","
      "\"v\":2}"};
  std::string expected;
  std::string prev;
  for (std::string line : lines) {
    if (const auto at = line.find('@'); at != std::string::npos) line.replace(at, 1, prev);
    prev = mf::hash::sha256_hex(line);
    expected += line + "\n";
  }
  EXPECT_EQ(sink, expected);
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
  ASSERT_TRUE(w->emit("run_started", started()).ok());
  ASSERT_TRUE(
      w->emit("model_responded",
              object({{"usage", object({{"b", 2}, {"a", 1}})}, {"content_bytes", 0}, {"call", 1}}))
          .ok());
  const std::string second = sink.substr(sink.find('\n') + 1);
  EXPECT_EQ(second, "{\"call\":1,\"content_bytes\":0,\"event\":\"model_responded\",\"prev\":\"" +
                        mf::hash::sha256_hex(sink.substr(0, sink.find('\n'))) +
                        "\",\"run_id\":\"run-1\",\"seq\":1,\"t_ms\":0,\"usage\":{\"a\":1,\"b\":2},"
                        "\"v\":2}\n");
}

TEST(TraceWriter, NullPayloadAddsNothing) {
  std::string sink;
  auto w = memory_writer(&sink);
  ASSERT_TRUE(w->emit("run_started", started()).ok());
  const std::size_t before = sink.size();
  // A null payload is an empty one: an event that requires members is refused, not padded.
  auto refused = w->emit("nudge_sent", nullptr);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.diagnostics().front().message.find("missing member"), std::string::npos);
  EXPECT_EQ(sink.size(), before);
}

TEST(TraceWriter, RedactsSecretsAndMarksRedactedContent) {
  std::string sink;
  auto w = memory_writer(&sink);
  const std::string key = "sk-" + std::string(40, 'A') + "1234";
  ASSERT_TRUE(w->emit("run_started", started()).ok());
  ASSERT_TRUE(w->emit("model_requested", object({{"call", 1}, {"kind", "initial"}})).ok());
  const std::string content = "{\"token\":\"" + key + "\"}";
  ASSERT_TRUE(w->emit("model_responded",
                      object({{"call", 1},
                              {"content_bytes", static_cast<std::int64_t>(content.size())},
                              {"content_sha256", mf::hash::sha256_hex(content)},
                              {"content", content}}))
                  .ok());
  const Value violations = mf::json::Array{
      object({{"path", "/" + key}, {"code", "unknown_field"}, {"message", "field " + key}})};
  ASSERT_TRUE(w->emit("verification_failed",
                      object({{"call", 1}, {"violations", violations}, {"repairs_remaining", 0}}))
                  .ok());
  ASSERT_TRUE(w->emit("run_failed", object({{"terminal", "invalid_output"},
                                            {"model_calls", 1},
                                            {"repairs", 0},
                                            {"violations", violations}}))
                  .ok());
  // A provider's error message.
  std::string failed;
  auto f = memory_writer(&failed);
  ASSERT_TRUE(f->emit("run_started", started()).ok());
  ASSERT_TRUE(f->emit("model_requested", object({{"call", 1}, {"kind", "initial"}})).ok());
  ASSERT_TRUE(f->emit("model_failed", object({{"call", 1}, {"error", "bad key " + key}})).ok());
  EXPECT_EQ(failed.find("sk-AAAA"), std::string::npos) << failed;
  EXPECT_EQ(sink.find("sk-AAAA"), std::string::npos) << sink;
  EXPECT_NE(sink.find("\"content_redacted\":true"), std::string::npos);
  EXPECT_NE(sink.find("[REDACTED]"), std::string::npos);
  // The size and digest still describe what the model sent; the verifier knows the content was
  // redacted and does not hold it against them.
  EXPECT_NE(sink.find(mf::hash::sha256_hex(content)), std::string::npos);
  auto summary = mf::trace::verify(sink);
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->status, mf::trace::Outcome::Ok)
      << (summary->first_error ? summary->first_error->message : "");
}

TEST(TraceWriter, AKeyedWriterSignsTheTerminalEventOnly) {
  std::string sink;
  WriterOptions keyed = fixed();
  keyed.mac_key = "0123456789abcdef0123456789abcdef";
  auto w = memory_writer(&sink, keyed);
  emit_small_run(*w);
  // Only the last line, the terminal event, carries it.
  const std::string body = sink.substr(0, sink.size() - 1);
  const std::string last = body.substr(body.rfind('\n') + 1);
  EXPECT_NE(last.find("\"event\":\"run_completed\""), std::string::npos);
  EXPECT_NE(last.find("\"hmac_sha256\":\""), std::string::npos);
  EXPECT_EQ(sink.find("hmac_sha256"), sink.size() - 1 - last.size() + last.find("hmac_sha256"));
  EXPECT_EQ(sink.find(keyed.mac_key), std::string::npos);
  auto summary = mf::trace::verify(sink, {.mac_key = keyed.mac_key});
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->mac, mf::trace::Mac::Verified);
}

TEST(TraceWriter, LiveClockGivesNonNegativeIntegerTimes) {
  std::string sink;
  auto w = memory_writer(&sink, {.run_id = "r"});
  ASSERT_TRUE(w->emit("run_started", started()).ok());
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
  EXPECT_TRUE(w->emit("run_started", started()).ok());  // the failures consumed no seq
  EXPECT_NE(sink.find("\"seq\":0"), std::string::npos);
}

TEST(TraceWriter, RejectsPayloadMembersNamedLikeTheEnvelope) {
  std::string sink;
  auto w = memory_writer(&sink);
  for (const char* key : {"v", "run_id", "seq", "event", "t_ms", "prev", "hmac_sha256"}) {
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
            codes::kInternal);                                               // before run_started
  EXPECT_EQ(first_code(w->emit("run_started", nullptr)), codes::kInternal);  // members missing
  ASSERT_TRUE(w->emit("run_started", started()).ok());
  EXPECT_EQ(first_code(w->emit("run_started", started())), codes::kInternal);
  EXPECT_EQ(first_code(w->emit("model_sneezed", nullptr)), codes::kInternal);
  EXPECT_EQ(first_code(w->emit("model_requested", object({{"call", 0}, {"kind", "initial"}}))),
            codes::kInternal);
  EXPECT_EQ(first_code(w->emit("model_requested", object({{"call", 1}}))), codes::kInternal);
  EXPECT_EQ(first_code(w->emit("run_completed", object({{"terminal", "cancelled"}}))),
            codes::kInternal);
  EXPECT_EQ(first_code(w->emit("tool_called", nullptr)), codes::kInternal);
  EXPECT_EQ(first_code(w->emit("model_requested",
                               object({{"call", 1}, {"kind", "initial"}, {"extra", 1}}))),
            codes::kInternal);  // payloads are closed
  ASSERT_TRUE(
      w->emit("run_failed", object({{"terminal", "cancelled"}, {"model_calls", 0}, {"repairs", 0}}))
          .ok());
  EXPECT_EQ(first_code(w->emit("context_compacted", nullptr)), codes::kInternal);
  EXPECT_EQ(w->events_written(), 2);
}

// The model's members are optional and checked: run_started's id, digest, endpoint and options,
// model_responded's response model and id.
TEST(TraceWriter, ChecksTheModelsMembers) {
  const auto with = [](Value v, const char* key, Value value) {
    v.set(key, std::move(value));
    return v;
  };
  for (const auto& [key, bad] : std::vector<std::pair<const char*, Value>>{
           {"model_id", ""}, {"model_sha256", "abc"}, {"endpoint", 1}, {"model_options", "x"}}) {
    std::string sink;
    auto w = memory_writer(&sink);
    EXPECT_EQ(first_code(w->emit("run_started", with(started(), key, bad))), codes::kInternal)
        << key;
  }
  std::string sink;
  auto w = memory_writer(&sink);
  Value s = with(with(started(), "model_id", "gpt-4o"), "model_sha256", std::string(64, 'a'));
  s = with(with(s, "endpoint", "https://api.openai.com/v1/chat/completions"), "model_options",
           object({{"temperature", 0}}));
  ASSERT_TRUE(w->emit("run_started", s).ok());
  ASSERT_TRUE(w->emit("model_requested", object({{"call", 1}, {"kind", "initial"}})).ok());
  const Value responded = object({{"call", 1}, {"content_bytes", 0}});
  EXPECT_EQ(first_code(w->emit("model_responded", with(responded, "response_id", ""))),
            codes::kInternal);
  EXPECT_EQ(first_code(w->emit("model_responded", with(responded, "response_model", 4))),
            codes::kInternal);
  ASSERT_TRUE(
      w->emit("model_responded", with(with(responded, "response_model", "gpt-4o-2024-08-06"),
                                      "response_id", "chatcmpl-1"))
          .ok());
  ASSERT_TRUE(w->emit("run_completed", completed()).ok());
  EXPECT_EQ(mf::trace::verify(sink)->status, mf::trace::Outcome::Ok);
}

// An event that cannot be one line has its own code, so the run loop can record a failure in its
// place; nothing of it is written and the run goes on to its terminal event.
TEST(TraceWriter, RefusesAnEventTooLargeForALineWithItsOwnCode) {
  std::string sink;
  auto w = memory_writer(&sink);
  ASSERT_TRUE(w->emit("run_started", started()).ok());
  ASSERT_TRUE(w->emit("model_requested", object({{"call", 1}, {"kind", "initial"}})).ok());
  const std::string big(mf::json::kMaxHeldBytes, 'a');
  auto s =
      w->emit("model_responded", object({{"call", 1},
                                         {"content_bytes", static_cast<std::int64_t>(big.size())},
                                         {"content", big}}));
  EXPECT_EQ(first_code(s), codes::kTraceLineTooLarge);
  EXPECT_NE(s.diagnostics().front().message.find("a trace line holds at most 16777216"),
            std::string::npos);
  // Within the bytes but past the reader's nesting: the same code.
  Value deep = mf::json::Array{};
  for (int i = 0; i < 64; ++i) deep = mf::json::Array{deep};
  EXPECT_EQ(first_code(w->emit("tool_called", object({{"call_id", "c"},
                                                      {"tool", "read"},
                                                      {"input_sha256", std::string(64, '0')},
                                                      {"arguments", object({{"x", deep}})}}))),
            codes::kTraceLineTooLarge);
  EXPECT_EQ(w->events_written(), 2);
  const auto before = sink.size();
  ASSERT_TRUE(w->emit("model_failed", object({{"call", 1}, {"error", "too large"}})).ok());
  ASSERT_TRUE(w->emit("run_failed",
                      object({{"terminal", "model_failed"}, {"model_calls", 1}, {"repairs", 0}}))
                  .ok());
  EXPECT_GT(sink.size(), before);
  EXPECT_LT(sink.size(), 4096u);
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
  ASSERT_TRUE((*w)->emit("run_started", started()).ok());
  // Visible to another reader now, without close().
  EXPECT_EQ(slurp(path), expected.substr(0, expected.find('\n') + 1));
  ASSERT_TRUE((*w)->emit("model_requested", object({{"call", 1}, {"kind", "initial"}})).ok());
  ASSERT_TRUE((*w)->emit("model_responded", object({{"call", 1}, {"content_bytes", 2}})).ok());
  ASSERT_TRUE((*w)->emit("run_completed", completed()).ok());
  ASSERT_TRUE((*w)->close().ok());
  ASSERT_TRUE((*w)->close().ok());  // idempotent
  EXPECT_EQ(slurp(path), expected);
  EXPECT_EQ(first_code((*w)->emit("run_started", started())), codes::kInternal);
}

TEST_F(TraceWriterFile, BatchDurabilityLosesNothingByClose) {
  std::string expected;
  emit_small_run(*memory_writer(&expected));
  const auto path = dir_ / "b.jsonl";
  auto w = Writer::open(path.string(),
                        {.run_id = "run-1", .fixed_clock = true, .durability = Durability::Batch});
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->emit("run_started", started()).ok());
  EXPECT_EQ(slurp(path), "");  // buffered
  ASSERT_TRUE((*w)->emit("model_requested", object({{"call", 1}, {"kind", "initial"}})).ok());
  ASSERT_TRUE((*w)->emit("model_responded", object({{"call", 1}, {"content_bytes", 2}})).ok());
  ASSERT_TRUE((*w)->emit("run_completed", completed()).ok());
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
      emitted = (*w)->emit("run_started", started());
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
  std::string expected;
  ASSERT_TRUE(memory_writer(&expected)->emit("run_started", started()).ok());
  EXPECT_EQ(got, expected);
}

TEST_F(TraceWriterFile, UnopenablePathIsAnOutputError) {
  auto w = Writer::open((dir_ / "missing" / "t.jsonl").string(), fixed());
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.diagnostics().front().code, codes::kBadOutputPath);
}

}  // namespace

// Syncs are counted, not timed: under Event every event is synced before emit() returns; under
// Batch a run's events and the outputs it published are synced together, once at close (and
// whenever sync_interval or 1 MiB is reached in between).
class TraceWriterSyncs : public TraceWriterFile {
 protected:
  // Emits run_started, `turns` model_requested events and the terminal event.
  static void emit_run(Writer& w, int turns) {
    ASSERT_TRUE(w.emit("run_started", started()).ok());
    for (int call = 1; call <= turns; ++call) {
      ASSERT_TRUE(w.emit("model_requested", object({{"call", call}, {"kind", "initial"}})).ok());
    }
    ASSERT_TRUE(w.emit("run_completed", completed()).ok());
  }
};

TEST_F(TraceWriterSyncs, EventDurabilitySyncsEveryEvent) {
  const std::uint64_t before = mf::io::sync_count();
  auto w = Writer::open((dir_ / "e.jsonl").string(), fixed());
  ASSERT_TRUE(w.ok());
  emit_run(**w, 10);
  ASSERT_TRUE((*w)->close().ok());
  // The directory once at open, then each of the 12 events.
  EXPECT_EQ(mf::io::sync_count() - before, 13u);
}

TEST_F(TraceWriterSyncs, BatchDurabilitySyncsOnceWithTheRunsPublications) {
  mf::io::SyncSet published;
  WriterOptions options = fixed();
  options.durability = Durability::Batch;
  options.sync_interval = std::chrono::hours(1);
  options.deferred = &published;
  const std::uint64_t before = mf::io::sync_count();
  auto w = Writer::open((dir_ / "b.jsonl").string(), options);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->emit("run_started", started()).ok());
  for (const char* name : {"draft", "report"}) {
    ASSERT_TRUE(mf::io::publish_atomic((dir_ / name).string(), std::string("bytes of ") + name,
                                       mf::io::Clobber::Replace, &published)
                    .ok());
  }
  ASSERT_TRUE((*w)->emit("model_requested", object({{"call", 1}, {"kind", "initial"}})).ok());
  EXPECT_EQ(mf::io::sync_count() - before, 0u);  // nothing synced before the end of the run
  ASSERT_TRUE((*w)->emit("run_completed", completed()).ok());
  ASSERT_TRUE((*w)->close().ok());
  // One syncfs: the trace and both files are on one filesystem.
  EXPECT_EQ(mf::io::sync_count() - before, 1u);
  EXPECT_FALSE(published.pending());
  EXPECT_EQ(slurp(dir_ / "report"), "bytes of report");
  EXPECT_TRUE(mf::trace::verify_file((dir_ / "b.jsonl").string()).ok());
}

TEST_F(TraceWriterSyncs, BatchDurabilityWithoutPublicationsSyncsTheTraceOnce) {
  WriterOptions options = fixed();
  options.durability = Durability::Batch;
  options.sync_interval = std::chrono::hours(1);
  const std::uint64_t before = mf::io::sync_count();
  auto w = Writer::open((dir_ / "b.jsonl").string(), options);
  ASSERT_TRUE(w.ok());
  emit_run(**w, 10);
  ASSERT_TRUE((*w)->close().ok());
  EXPECT_EQ(mf::io::sync_count() - before, 1u);
}

TEST_F(TraceWriterSyncs, BatchDurabilitySyncsOnceTheIntervalHasPassed) {
  WriterOptions options = fixed();
  options.durability = Durability::Batch;
  options.sync_interval = std::chrono::milliseconds(0);  // every event finds it passed
  const std::uint64_t before = mf::io::sync_count();
  auto w = Writer::open((dir_ / "b.jsonl").string(), options);
  ASSERT_TRUE(w.ok());
  emit_run(**w, 3);
  EXPECT_EQ(mf::io::sync_count() - before, 5u);
  ASSERT_TRUE((*w)->close().ok());
  EXPECT_EQ(mf::io::sync_count() - before, 5u);  // the last event's sync left nothing to sync
}

TEST_F(TraceWriterSyncs, BatchDurabilitySyncsEachMebibyteWritten) {
  WriterOptions options = fixed();
  options.durability = Durability::Batch;
  options.sync_interval = std::chrono::hours(1);
  const std::uint64_t before = mf::io::sync_count();
  auto w = Writer::open((dir_ / "b.jsonl").string(), options);
  ASSERT_TRUE(w.ok());
  emit_run(**w, 20000);  // about 2.5 MiB of lines
  const auto size = fs::file_size(dir_ / "b.jsonl");
  ASSERT_GT(size, 2u << 20);
  const std::uint64_t syncs = mf::io::sync_count() - before;
  EXPECT_LE(syncs, size >> 20);  // each after a little more than 1 MiB
  EXPECT_GE(syncs, (size >> 20) - 1);
  ASSERT_TRUE((*w)->close().ok());
}
