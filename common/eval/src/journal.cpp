// The two campaign journals declared in journal.hpp: the JSONL file, a hash chain of lines it
// group-commits so worker threads never queue on each other's writes, and the refs in the store.
// Each has one writer at a time, by a lock the kernel holds for the process.
#include "mf/eval/journal.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include "mf/diag/codes.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/jsonl.hpp"
#include "mf/json/reader.hpp"
#include "mf/store/refs.hpp"

namespace mf::eval {

namespace codes = diag::codes;

namespace {

// The journal line's members but `hmac_sha256`, in canonical order around it.
std::string journal_line(const std::string& attempt_json, const std::string& campaign,
                         const std::string& mac, const std::string& prev,
                         std::string_view result_json) {
  std::string line = "{\"attempt\":" + attempt_json + ",\"campaign\":\"" + campaign + "\"";
  if (!mac.empty()) line += ",\"hmac_sha256\":\"" + mac + "\"";
  if (!prev.empty()) line += ",\"prev\":\"" + prev + "\"";
  line += ",\"result\":";
  line += result_json;
  line += ",\"v\":2}";
  return line;
}

// One writer at a time: an exclusive lock on the open file, taken without waiting. The kernel
// drops it with the process, however it ends, so a killed run never leaves it held.
Status lock_exclusive(int fd, const std::string& path, const std::string& what) {
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK) {
      auto d = diag::error(codes::kJournalBusy,
                           "another process is running this campaign (it holds the lock on " +
                               what + "); run again with --resume once it has ended");
      d.source = path;
      return d;
    }
    return diag::error(codes::kWriteFailed, "cannot lock " + path + ": " + std::strerror(errno));
  }
  return {};
}

class FileJournal final : public Journal {
 public:
  FileJournal(int fd, std::string path, std::string campaign, std::string mac_key, std::string prev,
              std::map<std::string, JournalEntry> done)
      : fd_(fd),
        path_(std::move(path)),
        campaign_(std::move(campaign)),
        mac_key_(std::move(mac_key)),
        prev_(std::move(prev)),
        done_(std::move(done)) {}
  ~FileJournal() override { ::close(fd_); }
  FileJournal(const FileJournal&) = delete;
  FileJournal& operator=(const FileJournal&) = delete;

  std::optional<JournalEntry> find(const std::string& attempt) const override {
    auto it = done_.find(attempt);
    if (it == done_.end()) return std::nullopt;
    return it->second;
  }
  bool empty() const override { return done_.empty(); }

  std::string name() const override { return path_; }

  Status append(const std::string& attempt, const json::Value& result) override {
    // The result is serialised outside the lock, and the lock only queues it. Group commit: the
    // thread that finds no other writing becomes the writer; outside the lock it makes the
    // queued lines, in the order they were queued (each names the line before, and its MAC),
    // and writes them in one piece, until the queue is empty. The other threads never wait for
    // a system call or a hash. A line counts as kept once written; a kill before that costs its
    // attempt, which a resume runs again.
    Queued q{json::canonical(json::Value(attempt)), std::string()};
    json::write_canonical(result, q.result_json);
    std::unique_lock<std::mutex> lock(write_mutex_);
    pending_.push_back(std::move(q));
    if (writing_) return {};
    writing_ = true;
    Status written;
    std::vector<Queued> taken;
    std::string batch;
    while (!pending_.empty() && written) {
      taken.clear();
      taken.swap(pending_);
      lock.unlock();
      batch.clear();
      for (const Queued& line : taken) {
        std::string mac;
        if (!mac_key_.empty()) {
          mac = hash::to_hex(hash::hmac_sha256(
              mac_key_, journal_line(line.attempt_json, campaign_, "", prev_, line.result_json)));
        }
        const std::size_t begin = batch.size();
        batch += journal_line(line.attempt_json, campaign_, mac, prev_, line.result_json);
        prev_ = hash::sha256_hex(std::string_view(batch).substr(begin));
        batch += '\n';
      }
      written = write_all(batch);
      lock.lock();
    }
    pending_.clear();
    writing_ = false;
    return written;
  }

 private:
  // One write per batch of whole lines: the kernel keeps it whatever then happens to the
  // process, so a kill leaves at most a torn last line, which the next open drops. (Not synced: a
  // power loss may cost the last attempts, which a resume then runs again.)
  Status write_all(std::string_view bytes) {
    std::size_t off = 0;
    while (off < bytes.size()) {
      const ssize_t n = ::write(fd_, bytes.data() + off, bytes.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        return diag::error(codes::kWriteFailed,
                           "cannot append to journal " + path_ + ": " + std::strerror(errno));
      }
      off += static_cast<std::size_t>(n);
    }
    return {};
  }

  int fd_;
  std::string path_;
  std::string campaign_;
  std::string mac_key_;
  std::string prev_;                          // hex SHA-256 of the last line, "" before the first
  std::map<std::string, JournalEntry> done_;  // what the journal held when opened
  struct Queued {
    std::string attempt_json, result_json;
  };
  std::mutex write_mutex_;
  std::vector<Queued> pending_;  // lines waiting for the thread that writes
  bool writing_ = false;         // a thread is writing (outside the lock); it alone uses prev_
};

// Reads a journal's lines one at a time, each checked against the format, the campaign, the
// chain and (with a key) its MAC, into the attempts it holds.
class JournalReader {
 public:
  JournalReader(const std::string& path, const std::string& campaign, const std::string& mac_key)
      : path_(path), campaign_(campaign), mac_key_(mac_key) {}

  // Takes the next whole line (without its '\n'); false, with problem() set, when it is refused.
  bool take(std::string_view text) {
    ++number_;
    const auto refuse = [&](const char* code, const std::string& why) {
      problem_ = diag::error(code, why, "", number_);
      problem_->source = path_;
      return false;
    };
    Result<json::Value> line = json::parse(text);
    if (!line || !line->is_object()) {
      return refuse(codes::kJournalMismatch, "journal line is not a JSON object");
    }
    const json::Value* v = line->find("v");
    const json::Value* c = line->find("campaign");
    const json::Value* a = line->find("attempt");
    const json::Value* r = line->find("result");
    const json::Value* prev = line->find("prev");
    const json::Value* mac = line->find("hmac_sha256");
    if (v != nullptr && *v == json::Value(1)) {
      return refuse(codes::kJournalMismatch,
                    "the journal is of an earlier format (v 1, without a chain); move it away to "
                    "start over");
    }
    const std::size_t members = 4 + (prev != nullptr ? 1 : 0) + (mac != nullptr ? 1 : 0);
    if (v == nullptr || !(*v == json::Value(2)) || c == nullptr || !c->is_string() ||
        a == nullptr || !a->is_string() || r == nullptr || !r->is_object() ||
        (prev != nullptr && !prev->is_string()) || (mac != nullptr && !mac->is_string()) ||
        line->as_object().size() != members) {
      return refuse(codes::kJournalMismatch,
                    "journal line is not {v: 2, campaign, attempt, result, prev, hmac_sha256}");
    }
    if (c->as_string() != campaign_) {
      return refuse(codes::kJournalMismatch,
                    "the journal holds attempts of campaign " + c->as_string() +
                        ", not of this one (" + campaign_ +
                        "): the suite, its inputs or a setting (--repeat, --shard, --case, "
                        "--tags, --case-timeout-ms, --model, --guardrails, --run-id-prefix, the "
                        "clock, --mac-key-env) changed; move the journal away to start over");
    }
    // The line must be its canonical form: its digest and MAC are over these exact bytes.
    if (json::canonical(*line) != text) {
      return refuse(codes::kJournalTampered, "journal line is not in canonical form");
    }
    if (prev == nullptr ? number_ > 1 : prev->as_string() != prev_) {
      return refuse(codes::kJournalTampered,
                    number_ == 1 ? "the first journal line names a line before it"
                                 : "journal line does not name the SHA-256 of the line before it "
                                   "(a line was edited, dropped, inserted or moved)");
    }
    if (!mac_key_.empty()) {
      if (mac == nullptr) {
        return refuse(codes::kJournalTampered, "journal line is not signed (no hmac_sha256)");
      }
      std::string result_json;
      json::write_canonical(*r, result_json);
      const std::string unsigned_line =
          journal_line(json::canonical(*a), campaign_, "", prev_, result_json);
      if (hash::to_hex(hash::hmac_sha256(mac_key_, unsigned_line)) != mac->as_string()) {
        return refuse(codes::kJournalTampered,
                      "journal line's hmac_sha256 is wrong under the key: it was not written by "
                      "a run holding the key");
      }
    }
    prev_ = hash::sha256_hex(text);
    // An attempt journaled twice keeps its first result.
    done_.emplace(a->as_string(), JournalEntry{*r, number_});
    return true;
  }

  std::int64_t lines() const { return number_; }
  std::optional<diag::Diagnostic>& problem() { return problem_; }
  std::string& prev() { return prev_; }
  std::map<std::string, JournalEntry>& done() { return done_; }

 private:
  const std::string& path_;
  const std::string& campaign_;
  const std::string& mac_key_;
  std::int64_t number_ = 0;
  std::string prev_;
  std::map<std::string, JournalEntry> done_;
  std::optional<diag::Diagnostic> problem_;
};

}  // namespace

Result<std::unique_ptr<Journal>> open_file_journal(const std::string& path,
                                                   const std::string& campaign, bool resume,
                                                   const std::string& mac_key) {
  // Not truncated at open: the file may be another run's, whose lock decides.
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    return diag::error(codes::kBadOutputPath,
                       "cannot open journal " + path + ": " + std::strerror(errno));
  }
  const auto fail = [fd](diag::Diagnostic d) -> Result<std::unique_ptr<Journal>> {
    ::close(fd);
    return d;
  };
  if (Status locked = lock_exclusive(fd, path, "its journal"); !locked) {
    ::close(fd);
    return locked.take_diagnostics();
  }
  JournalReader reader(path, campaign, mac_key);
  // The lines are read in chunks, none held longer than the bound, so a damaged journal costs no
  // more memory than that.
  json::LineSplitter lines(json::kMaxHeldBytes);
  std::uint64_t whole = 0;  // the bytes of the lines taken
  bool over = false;
  if (resume) {
    const int err = io::pread_chunks(fd, 0, 1 << 16, [&](std::string_view chunk) {
      const auto stop = lines.feed(chunk, [&](std::string_view text) {
        if (!reader.take(text)) return false;
        whole += text.size() + 1;
        return true;
      });
      over = stop == json::LineSplitter::Stop::Over;
      return stop == json::LineSplitter::Stop::Fed;
    });
    if (err != 0) {
      return fail(diag::error(codes::kInternal,
                              "cannot read journal " + path + ": " + std::strerror(-err)));
    }
    if (reader.problem()) return fail(std::move(*reader.problem()));
    if (over) {
      auto d = diag::error(codes::kJournalMismatch,
                           "journal line is longer than " + std::to_string(json::kMaxHeldBytes) +
                               " bytes, the bound on a line",
                           "", reader.lines() + 1);
      d.source = path;
      return fail(std::move(d));
    }
  }
  // Without --resume the journal starts empty; with it, a last line without its newline is an
  // append cut short: it never counted, so it goes. A file already that long is left alone:
  // ext4 writes back at close a file that was truncated to nothing, so a fresh journal truncated
  // for no reason would cost a campaign its whole journal's writeback at the end.
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    return fail(
        diag::error(codes::kInternal, "cannot read journal " + path + ": " + std::strerror(err)));
  }
  if ((!resume || !lines.rest().empty()) && static_cast<std::uint64_t>(st.st_size) != whole &&
      ::ftruncate(fd, static_cast<off_t>(whole)) != 0) {
    const int err = errno;
    return fail(diag::error(codes::kWriteFailed,
                            "cannot truncate journal " + path + ": " + std::strerror(err)));
  }
  return std::unique_ptr<Journal>(new FileJournal(
      fd, path, campaign, mac_key, std::move(reader.prev()), std::move(reader.done())));
}

namespace {

class StoreJournal final : public Journal {
 public:
  StoreJournal(std::shared_ptr<store::Store> store, std::shared_ptr<std::mutex> lock,
               std::string prefix, bool resume, int lock_fd)
      : store_(std::move(store)),
        lock_(std::move(lock)),
        prefix_(std::move(prefix)),
        resume_(resume),
        lock_fd_(lock_fd) {}
  ~StoreJournal() override { ::close(lock_fd_); }
  StoreJournal(const StoreJournal&) = delete;
  StoreJournal& operator=(const StoreJournal&) = delete;

  // Without --resume nothing is looked up; with it, the store is asked attempt by attempt.
  bool empty() const override { return !resume_; }
  std::optional<JournalEntry> find(const std::string& attempt) const override {
    if (!resume_) return std::nullopt;
    std::lock_guard<std::mutex> guard(*lock_);
    auto ref = store_->get_ref(prefix_ + attempt);
    if (!ref || !*ref) return std::nullopt;
    auto bytes = store_->get(**ref);
    if (!bytes) return std::nullopt;
    auto v = json::parse(*bytes);
    if (!v || !v->is_object()) return std::nullopt;
    return JournalEntry{std::move(*v), 0};
  }

  std::string name() const override { return "store:" + prefix_; }

  Status append(const std::string& attempt, const json::Value& result) override {
    const std::string bytes = json::canonical(result);
    std::lock_guard<std::mutex> guard(*lock_);
    auto kept = store_->put_named(prefix_ + attempt, bytes);
    return kept ? Status() : Status(kept.take_diagnostics());
  }

 private:
  std::shared_ptr<store::Store> store_;
  std::shared_ptr<std::mutex> lock_;
  std::string prefix_;
  bool resume_;
  int lock_fd_;
};

}  // namespace

Result<std::unique_ptr<Journal>> store_journal(std::shared_ptr<store::Store> store,
                                               std::shared_ptr<std::mutex> lock,
                                               const std::string& suite_id,
                                               const std::string& campaign, bool resume,
                                               const std::string& lock_path) {
  const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return diag::error(codes::kBadOutputPath,
                       "cannot open " + lock_path + ": " + std::strerror(errno));
  }
  if (Status locked = lock_exclusive(fd, lock_path, "the campaign's lock file in the store");
      !locked) {
    ::close(fd);
    return locked.take_diagnostics();
  }
  return std::unique_ptr<Journal>(new StoreJournal(
      std::move(store), std::move(lock),
      store::refs::campaign_journal(suite_id, campaign.substr(0, 16)) + "/", resume, fd));
}

}  // namespace mf::eval
