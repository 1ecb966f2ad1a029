// The JSONL trace writer (writer.hpp): each event checked against the vocabulary before it is
// written, and a file synced per event so a crash keeps every event already written.
#include "mf/trace/writer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "mf/diag/codes.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"

namespace mf::trace {
namespace {

namespace codes = diag::codes;

// Under Durability::Batch the buffer is written once it holds this much, and synced once this much
// more was written since the last sync (or sync_interval passed).
constexpr std::size_t kBatchBytes = 64u << 10;
constexpr std::uint64_t kBatchSyncBytes = 1u << 20;

diag::Diagnostic misuse(std::string message) {
  return diag::error(codes::kInternal, "trace writer: " + std::move(message));
}

std::string errno_text() {
  return std::strerror(errno);
}

bool is_regular(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

// Makes the new directory entry durable, so a crash cannot lose a trace whose events were synced.
Status sync_parent_directory(const std::string& path) {
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return {};  // nothing to sync through; the file itself is still synced per event
  int rc = io::sync_file(fd);
  ::close(fd);
  if (rc != 0 && errno != EINVAL) {
    return diag::error(codes::kWriteFailed, "cannot sync directory '" + dir + "': " + errno_text());
  }
  return {};
}

bool has_duplicate_keys(const json::Object& members) {
  std::vector<std::string_view> keys;
  keys.reserve(members.size());
  for (const auto& m : members) keys.push_back(m.key);
  std::sort(keys.begin(), keys.end());
  return std::adjacent_find(keys.begin(), keys.end()) != keys.end();
}

}  // namespace

Writer::Writer(WriterOptions options, int fd, bool owned, bool sync, std::string* sink)
    : options_(std::move(options)),
      fd_(fd),
      owned_(owned),
      sync_(sync),
      sink_(sink),
      synced_at_(std::chrono::steady_clock::now()),
      start_(synced_at_) {}

Writer::~Writer() {
  if (closed_) return;
  if (!failed_ && !buffer_.empty() && sink_ == nullptr) (void)io::write_all(fd_, buffer_);
  if (owned_) ::close(fd_);
}

Result<std::unique_ptr<Writer>> Writer::open(const std::string& path, WriterOptions options) {
  if (options.run_id.empty()) return misuse("run_id is empty");
  if (path == "-") {
    return std::unique_ptr<Writer>(
        new Writer(std::move(options), STDOUT_FILENO, false, is_regular(STDOUT_FILENO), nullptr));
  }
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return diag::error(codes::kBadOutputPath,
                       "cannot open trace '" + path + "' for writing: " + errno_text());
  }
  const bool regular = is_regular(fd);
  std::unique_ptr<Writer> writer(new Writer(std::move(options), fd, true, regular, nullptr));
  if (regular && writer->options_.durability == Durability::Event) {
    if (auto synced = sync_parent_directory(path); !synced) return synced.take_diagnostics();
  }
  return writer;
}

Result<std::unique_ptr<Writer>> Writer::open_memory(std::string* sink, WriterOptions options) {
  if (sink == nullptr) return misuse("memory sink is null");
  if (options.run_id.empty()) return misuse("run_id is empty");
  return std::unique_ptr<Writer>(new Writer(std::move(options), -1, false, false, sink));
}

Status Writer::emit(std::string_view event, json::Value payload) {
  return emit(event, std::move(payload), {});
}

Status Writer::emit(std::string_view event, json::Value payload,
                    const std::function<Status()>& before) {
  if (closed_) return misuse("emit after close");
  if (failed_) return diag::error(codes::kWriteFailed, "an earlier write to the trace failed");
  if (!is_known_event(event)) return misuse("unknown event type '" + std::string(event) + "'");
  if (seq_ == 0 && event != "run_started") {
    return misuse("the first event must be run_started, not " + std::string(event));
  }
  if (seq_ > 0 && event == "run_started") return misuse("run_started written twice");
  if (terminated_) return misuse(std::string(event) + " after the terminal event");
  if (!payload.is_null() && !payload.is_object()) {
    return misuse("the payload of " + std::string(event) + " is not an object");
  }

  const std::int64_t t_ms = options_.fixed_clock
                                ? 0
                                : std::chrono::duration_cast<std::chrono::milliseconds>(
                                      std::chrono::steady_clock::now() - start_)
                                      .count();
  json::Object members;
  members.reserve(kEnvelope.size() + (payload.is_object() ? payload.as_object().size() : 0));
  members.push_back({"v", kFormatVersion});
  members.push_back({"run_id", options_.run_id});
  members.push_back({"seq", seq_});
  members.push_back({"event", event});
  members.push_back({"t_ms", t_ms});
  if (seq_ > 0) members.push_back({"prev", prev_});
  bool content_redacted = false;
  if (payload.is_object()) {
    for (auto& m : payload.as_object()) {
      if (is_envelope_member(m.key) || m.key == kMacMember) {
        return misuse("payload member \"" + m.key + "\" is the writer's");
      }
      // Nothing secret-looking leaves through a trace; redacted inline content is marked, as
      // its size and digest describe what the model sent.
      if (json::redact_secrets(m.value) && m.key == "content") content_redacted = true;
      members.push_back(std::move(m));
    }
  }
  if (content_redacted) members.push_back({"content_redacted", true});
  if (has_duplicate_keys(members))
    return misuse("duplicate payload member in " + std::string(event));
  json::Value line(std::move(members));
  std::string text = json::canonical(line);
  // The payload is checked as the verifier will read it: from the canonical line, held whole. An
  // event that cannot be such a line is refused with its own code, so the run records a failure
  // in its place (docs/formats/trace.md, "An event too large for a line").
  if (text.size() > json::kMaxHeldBytes) {
    return diag::error(codes::kTraceLineTooLarge, std::string(event) + " would be a line of " +
                                                      std::to_string(text.size()) +
                                                      " bytes; a trace line holds at most " +
                                                      std::to_string(json::kMaxHeldBytes));
  }
  if (!tape_.read_canonical(text, {.max_bytes = json::kMaxHeldBytes})) {
    return diag::error(codes::kTraceLineTooLarge,
                       std::string(event) +
                           " is beyond the strict reader's limits for a trace line (nesting, "
                           "entries per container or string length)");
  }
  if (auto bad = check_payload(event, tape_.root())) {
    return misuse("ill-formed " + std::string(event) + ": " + *bad);
  }
  if (before) {
    if (Status s = before(); !s) return s;
  }
  if (is_terminal_event(event) && !options_.mac_key.empty()) {
    // The MAC covers the terminal line without it, which names the previous line's digest: the
    // whole chain.
    line.set(kMacMember, terminal_mac(options_.mac_key, text));
    text = json::canonical(line);
  }
  prev_ = hash::sha256_hex(text);
  text.push_back('\n');

  const bool terminal = is_terminal_event(event);
  if (sink_ != nullptr) {
    sink_->append(text);
  } else if (options_.durability == Durability::Event) {
    if (auto written = io::write_all(fd_, text); !written) {
      failed_ = true;
      return written;
    }
    if (auto synced = sync(); !synced) return synced;
  } else {
    buffer_.append(text);
    unsynced_ += text.size();
    const bool due = unsynced_ >= kBatchSyncBytes ||
                     std::chrono::steady_clock::now() - synced_at_ >= options_.sync_interval;
    if (buffer_.size() >= kBatchBytes || terminal || due) {
      if (auto flushed = flush(); !flushed) return flushed;
    }
    if (due) {
      if (auto synced = sync(); !synced) return synced;
    }
  }
  ++seq_;
  terminated_ = terminated_ || terminal;
  cause_.see(line);
  return {};
}

Status Writer::flush() {
  if (buffer_.empty() || sink_ != nullptr) return {};
  auto written = io::write_all(fd_, buffer_);
  buffer_.clear();
  if (!written) failed_ = true;
  return written;
}

Status Writer::sync() {
  if (options_.durability == Durability::Batch) {
    unsynced_ = 0;
    synced_at_ = std::chrono::steady_clock::now();
    // Outputs published since the last sync: one syncfs covers them and the trace together when
    // they share its filesystem (the trace's is noted first, so a separate one is synced too).
    io::SyncSet* deferred = options_.deferred;
    if (deferred != nullptr && deferred->pending()) {
      Status noted = sync_ ? deferred->note(fd_) : Status();
      if (noted) noted = deferred->sync();
      if (!noted) failed_ = true;
      return noted;
    }
  }
  if (!sync_) return {};
  if (io::sync_data(fd_) != 0) {
    failed_ = true;
    return diag::error(codes::kWriteFailed, "cannot sync the trace: " + errno_text());
  }
  return {};
}

Status Writer::close() {
  if (closed_) return {};
  closed_ = true;
  Status done =
      failed_ ? Status(diag::error(codes::kWriteFailed, "an earlier write failed")) : flush();
  // Under Batch, what an interval sync already covered is not synced again.
  const bool unsynced =
      unsynced_ > 0 || (options_.deferred != nullptr && options_.deferred->pending());
  if (done && options_.durability == Durability::Batch && unsynced) done = sync();
  if (owned_ && ::close(fd_) != 0 && done) {
    done = diag::error(codes::kWriteFailed, "cannot close the trace: " + errno_text());
  }
  owned_ = false;
  return done;
}

}  // namespace mf::trace
