// Many traces verified on a bounded pool of threads, their lines printed in the order given
// (many.hpp).
#include "mf/trace/many.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>

#include "mf/io/file.hpp"
#include "mf/json/jsonl.hpp"

namespace mf::trace {

Result<std::vector<std::string>> traces_in(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return diag::error(diag::codes::kMissing, "cannot list '" + dir + "': " + ec.message());
  std::vector<std::string> names;
  for (const fs::directory_entry& entry : it) {
    std::string name = entry.path().filename().string();
    // As the shell's `*.jsonl`: no hidden names.
    if (name.size() > 6 && name[0] != '.' && name.ends_with(".jsonl")) {
      names.push_back(std::move(name));
    }
  }
  std::sort(names.begin(), names.end());
  const std::string prefix = dir.ends_with('/') ? dir : dir + "/";
  for (std::string& name : names) name.insert(0, prefix);
  return names;
}

Result<std::vector<TraceRef>> operand_traces(const std::vector<std::string>& operands) {
  std::vector<TraceRef> traces;
  for (const std::string& operand : operands) {
    std::error_code ec;
    if (!std::filesystem::is_directory(operand, ec)) {
      traces.push_back({operand, {}, {}});
      continue;
    }
    auto listed = traces_in(operand);
    if (!listed) return listed.take_diagnostics();
    if (listed->empty()) {
      return diag::error(diag::codes::kMissing, "'" + operand + "' holds no *.jsonl trace");
    }
    for (std::string& path : *listed) traces.push_back({std::move(path), {}, {}});
  }
  return traces;
}

json::Value summary_line(const TraceRef& ref, const VerifyOptions& options,
                         std::optional<diag::Diagnostic>& error) {
  VerifyOptions own = options;
  if (!ref.expect_sha256.empty()) own.expect_sha256 = ref.expect_sha256;
  return summary_line(ref, verify_file(ref.path, own), error);
}

json::Value summary_line(const TraceRef& ref, Result<Summary> verified,
                         std::optional<diag::Diagnostic>& error) {
  json::Value line;
  if (!verified) {
    diag::Diagnostic d = verified.take_diagnostics().front();
    line = json::Object{};
    line.set("status", "unreadable");
    json::Value first = json::Object{};
    first.set("code", d.code);
    first.set("message", d.message);
    line.set("first_error", std::move(first));
    error = std::move(d);
  } else {
    line = to_json(*verified);
    if (verified->status != Outcome::Ok) error = verified->first_error;
  }
  if (!ref.path.empty()) line.set("path", ref.path);
  if (!ref.attempt.empty()) line.set("attempt", ref.attempt);
  if (error) {
    error->source = ref.path;
    if (!ref.attempt.empty()) error->message = "attempt " + ref.attempt + ": " + error->message;
  }
  return line;
}

namespace {

// The pool's shared state: the next trace to start, the next line to print, and the finished
// lines waiting for an earlier one, in a ring of `window` slots.
class Pool {
 public:
  Pool(std::size_t count, const LineOf& line_of, std::size_t jobs, int out_fd,
       const OnTraceError& on_error, const Progress& progress)
      : count_(count),
        line_of_(line_of),
        window_(4 * jobs),
        slots_(window_),
        out_fd_(out_fd),
        on_error_(on_error),
        progress_(progress) {}

  void work() {
    for (;;) {
      std::size_t i = 0;
      {
        std::unique_lock lock(mutex_);
        // A trace starts only when its line has a slot: the lines held stay under the window.
        changed_.wait(lock, [&] { return next_ >= count_ || next_ < printed_ + window_; });
        if (next_ >= count_) return;
        i = next_++;
      }
      Slot slot;
      json::append_jsonl(line_of_(i, slot.error), slot.line);
      slot.done = true;
      std::lock_guard lock(mutex_);
      slots_[i % window_] = std::move(slot);
      if (progress_) progress_(++finished_, count_);
      print_ready();
      changed_.notify_all();
    }
  }

  bool failed() const { return failed_; }
  Status take_written() { return std::move(written_); }

 private:
  struct Slot {
    std::string line;
    std::optional<diag::Diagnostic> error;
    bool done = false;
  };

  // Under the lock: prints every finished line whose predecessors are printed. After a write
  // error nothing more starts.
  void print_ready() {
    for (Slot* s = &slots_[printed_ % window_]; s->done; s = &slots_[printed_ % window_]) {
      if (written_) written_ = io::write_all(out_fd_, s->line);
      if (!written_) next_ = count_;
      if (s->error) {
        failed_ = true;
        if (written_) on_error_(*s->error);
      }
      *s = Slot{};
      if (++printed_ == count_) break;
    }
  }

  const std::size_t count_;
  const LineOf& line_of_;
  const std::size_t window_;
  std::vector<Slot> slots_;
  const int out_fd_;
  const OnTraceError& on_error_;
  const Progress& progress_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::size_t next_ = 0, printed_ = 0, finished_ = 0;
  bool failed_ = false;
  Status written_;
};

}  // namespace

diag::CommandOutcome verify_lines(std::size_t count, const LineOf& line_of, std::size_t jobs,
                                  int out_fd, const OnTraceError& on_error,
                                  const Progress& progress) {
  if (jobs == 0) jobs = std::max(1u, std::thread::hardware_concurrency());
  jobs = std::clamp<std::size_t>(jobs, 1, std::clamp<std::size_t>(count, 1, kMaxJobs));
  Pool pool(count, line_of, jobs, out_fd, on_error, progress);
  std::vector<std::thread> threads;
  for (std::size_t t = 1; t < jobs; ++t) threads.emplace_back([&pool] { pool.work(); });
  pool.work();
  for (std::thread& t : threads) t.join();
  if (Status written = pool.take_written(); !written) {
    return diag::CommandOutcome::stopped_by(written.take_diagnostics());
  }
  diag::CommandOutcome outcome;
  outcome.failed = pool.failed();
  return outcome;
}

diag::CommandOutcome verify_many_command(const std::vector<TraceRef>& traces,
                                         const VerifyOptions& options, std::size_t jobs, int out_fd,
                                         const OnTraceError& on_error, const Progress& progress) {
  const LineOf line_of = [&](std::size_t i, std::optional<diag::Diagnostic>& error) {
    return summary_line(traces[i], options, error);
  };
  return verify_lines(traces.size(), line_of, jobs, out_fd, on_error, progress);
}

}  // namespace mf::trace
