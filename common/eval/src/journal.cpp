// The two campaign journals declared in journal.hpp: the JSONL file, which group-commits its lines
// so worker threads never queue on each other's writes, and the refs in the store.
#include "mf/eval/journal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>

#include "mf/diag/codes.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/jsonl.hpp"
#include "mf/json/reader.hpp"
#include "mf/store/refs.hpp"

namespace mf::eval {

namespace codes = diag::codes;

namespace {

class FileJournal final : public Journal {
 public:
  FileJournal(int fd, std::string path, std::string campaign,
              std::map<std::string, json::Value> done)
      : fd_(fd), path_(std::move(path)), campaign_(std::move(campaign)), done_(std::move(done)) {}
  ~FileJournal() override { ::close(fd_); }
  FileJournal(const FileJournal&) = delete;
  FileJournal& operator=(const FileJournal&) = delete;

  std::optional<json::Value> find(const std::string& attempt) const override {
    auto it = done_.find(attempt);
    if (it == done_.end()) return std::nullopt;
    return it->second;
  }

  Status append(const std::string& attempt, const json::Value& result) override {
    // Serialised outside the lock; only the write is one at a time.
    std::string bytes = "{\"attempt\":" + json::canonical(json::Value(attempt)) +
                        ",\"campaign\":\"" + campaign_ + "\",\"result\":";
    json::write_canonical(result, bytes);
    bytes += ",\"v\":1}\n";
    // Group commit: a line that arrives while another thread writes joins the next batch that
    // thread writes, so the threads never queue behind each other's system calls. A line counts
    // as kept once written; a kill before that costs its attempt, which a resume runs again.
    std::unique_lock<std::mutex> lock(write_mutex_);
    pending_ += bytes;
    if (writing_) return {};
    writing_ = true;
    Status written;
    while (!pending_.empty() && written) {
      std::string batch;
      batch.swap(pending_);
      lock.unlock();
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
  std::map<std::string, json::Value> done_;  // what the journal held when opened
  std::mutex write_mutex_;
  std::string pending_;   // lines waiting for the thread that writes
  bool writing_ = false;  // a thread is writing (outside the lock)
};

}  // namespace

Result<std::unique_ptr<Journal>> open_file_journal(const std::string& path,
                                                   const std::string& campaign, bool resume) {
  const int fd =
      ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | (resume ? 0 : O_TRUNC), 0644);
  if (fd < 0) {
    return diag::error(codes::kBadOutputPath,
                       "cannot open journal " + path + ": " + std::strerror(errno));
  }
  std::string bytes;
  if (const int err = io::pread_chunks(fd, 0, 1 << 16,
                                       [&](std::string_view chunk) {
                                         bytes.append(chunk);
                                         return true;
                                       });
      err != 0) {
    ::close(fd);
    return diag::error(codes::kInternal,
                       "cannot read journal " + path + ": " + std::strerror(-err));
  }
  // A last line without its newline is an append cut short: it never counted, so it goes.
  const std::size_t keep = bytes.rfind('\n') == std::string::npos ? 0 : bytes.rfind('\n') + 1;
  if (keep != bytes.size()) {
    if (::ftruncate(fd, static_cast<off_t>(keep)) != 0) {
      const int err = errno;
      ::close(fd);
      return diag::error(codes::kWriteFailed, "cannot drop the torn last line of journal " + path +
                                                  ": " + std::strerror(err));
    }
    bytes.resize(keep);
  }
  std::map<std::string, json::Value> done;
  json::JsonlReader reader(bytes);
  Result<json::Value> line = json::Value();
  std::int64_t number = 0;
  while (reader.next(line)) {
    ++number;
    const auto damaged = [&](const std::string& why) {
      ::close(fd);
      auto d = diag::error(codes::kJournalMismatch, why, "", number);
      d.source = path;
      return d;
    };
    if (!line || !line->is_object()) return damaged("journal line is not a JSON object");
    const json::Value* v = line->find("v");
    const json::Value* c = line->find("campaign");
    const json::Value* a = line->find("attempt");
    const json::Value* r = line->find("result");
    if (v == nullptr || !(*v == json::Value(1)) || c == nullptr || !c->is_string() ||
        a == nullptr || !a->is_string() || r == nullptr || !r->is_object() ||
        line->as_object().size() != 4) {
      return damaged("journal line is not {v: 1, campaign, attempt, result}");
    }
    if (c->as_string() != campaign) {
      return damaged("the journal holds attempts of campaign " + c->as_string() +
                     ", not of this one (" + campaign +
                     "): the suite, --repeat, --shard, --case, --run-id-prefix or the clock "
                     "changed; move the journal away to start over");
    }
    done.emplace(a->as_string(), *r);  // an attempt journaled twice keeps its first result
  }
  return std::unique_ptr<Journal>(new FileJournal(fd, path, campaign, std::move(done)));
}

namespace {

class StoreJournal final : public Journal {
 public:
  StoreJournal(std::shared_ptr<store::Store> store, std::shared_ptr<std::mutex> lock,
               std::string prefix, bool resume)
      : store_(std::move(store)),
        lock_(std::move(lock)),
        prefix_(std::move(prefix)),
        resume_(resume) {}

  std::optional<json::Value> find(const std::string& attempt) const override {
    if (!resume_) return std::nullopt;
    std::lock_guard<std::mutex> guard(*lock_);
    auto ref = store_->get_ref(prefix_ + attempt);
    if (!ref || !*ref) return std::nullopt;
    auto bytes = store_->get(**ref);
    if (!bytes) return std::nullopt;
    auto v = json::parse(*bytes);
    if (!v || !v->is_object()) return std::nullopt;
    return std::move(*v);
  }

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
};

}  // namespace

std::unique_ptr<Journal> store_journal(std::shared_ptr<store::Store> store,
                                       std::shared_ptr<std::mutex> lock,
                                       const std::string& suite_id, const std::string& campaign,
                                       bool resume) {
  return std::make_unique<StoreJournal>(
      std::move(store), std::move(lock),
      store::refs::campaign_journal(suite_id, campaign.substr(0, 16)) + "/", resume);
}

}  // namespace mf::eval
