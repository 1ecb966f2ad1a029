// The JSONL trace writer (docs/formats/trace.md): one canonical event per line with the
// envelope {"v":1,"run_id","seq","event","t_ms"}. It refuses to write a trace the verifier would
// reject (unknown event, missing run_started, events after the terminal, ill-formed payloads).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"
#include "mf/trace/cause.hpp"
#include "mf/trace/events.hpp"

namespace mf::io {
class SyncSet;
}

namespace mf::trace {

enum class Durability : std::uint8_t {
  Event,  // write + fdatasync per event, before emit() returns (the default)
  // Buffered: written when 64 KiB accumulate and at the terminal event; synced at close() and, in
  // between, at the first event once sync_interval has passed or 1 MiB was written since the last
  // sync. The run's deferred publications (WriterOptions::deferred) are synced with the trace.
  Batch,
};

struct WriterOptions {
  std::string run_id;        // non-empty
  bool fixed_clock = false;  // every t_ms is 0
  Durability durability = Durability::Event;
  // Non-empty: the terminal event carries hmac_sha256, the HMAC-SHA256 under this key of the
  // terminal line without it (docs/formats/trace.md, "Authenticity").
  std::string mac_key{};
  // Batch: the longest a written event waits for a sync while events keep coming.
  std::chrono::milliseconds sync_interval{250};
  // Batch: the outputs the run published without syncing them (io::SyncSet), synced whenever the
  // trace is: each sync is then one syncfs per filesystem instead of the trace's fdatasync.
  io::SyncSet* deferred = nullptr;
};

class Writer {
 public:
  // path "-" writes to stdout (fdatasync skipped on pipes and ttys); otherwise creates or truncates
  // the file (and fsyncs its directory under Durability::Event). MF-O001 when it cannot be opened.
  static Result<std::unique_ptr<Writer>> open(const std::string& path, WriterOptions options);
  // Appends every line to *sink (no file, no sync): for tests of code that writes traces.
  static Result<std::unique_ptr<Writer>> open_memory(std::string* sink, WriterOptions options);

  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;
  ~Writer();  // best-effort flush of a Batch buffer when close() was not called

  // Appends {"v":2,"run_id":...,"seq":next,"event":event,"t_ms":...,"prev":...} merged with the
  // members of `payload` (an object, or null for none; secret-looking strings redacted) as one
  // canonical line + '\n'; durable before returning
  // under Durability::Event. Misuse (non-object payload, a member named like an envelope field, an
  // unknown event, an event the verifier would reject) is MF-I001 and writes nothing; a failed
  // write is MF-O003 and makes every later emit fail.
  Status emit(std::string_view event, json::Value payload);
  // The same, with `before` run once the line has passed every check and just before it is
  // written: what must happen only for an event that will be recorded (a reply kept in the reply
  // cache). Its failure is returned and nothing is written.
  Status emit(std::string_view event, json::Value payload, const std::function<Status()>& before);
  std::int64_t events_written() const { return seq_; }
  // The run's first cause (cause.hpp) over the events written so far, once the terminal event
  // decided it.
  const std::optional<Cause>& first_cause() const { return cause_.cause(); }
  Status close();  // flush, sync what is unsynced under Batch, close the file; idempotent

 private:
  Writer(WriterOptions options, int fd, bool owned, bool sync, std::string* sink);
  Status flush();
  Status sync();

  WriterOptions options_;
  int fd_ = -1;
  bool owned_ = false;  // fd_ is ours to close
  bool sync_ = false;   // fd_ supports fdatasync (a regular file)
  std::string* sink_ = nullptr;
  std::string buffer_;          // pending bytes under Durability::Batch
  std::uint64_t unsynced_ = 0;  // Batch: bytes written or buffered since the last sync
  std::chrono::steady_clock::time_point synced_at_;  // Batch: the last sync (or the open)
  std::int64_t seq_ = 0;
  std::string prev_;         // hex SHA-256 of the last line written, without its newline
  json::Tape tape_;          // the last line read back for its payload check
  bool terminated_ = false;  // a terminal event was written
  bool failed_ = false;      // a write failed: the file's tail is unknown
  bool closed_ = false;
  FirstCause cause_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace mf::trace
