// The parallel half of a search walk: the walk itself stays on the calling thread (it opens every
// file beneath the root, so the confinement rules stay where they are), and the files it hands over
// are searched by worker threads, their results taken back in the order they were handed over. So
// a search gives the same output at any thread count: results are consumed exactly as the
// sequential walk would consume them, and a limit stops at the same first N.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace mf::fs {

// Worker threads for a search when the caller names none: the online CPUs, at most this many.
inline constexpr std::size_t kMaxSearchThreads = 8;

inline std::size_t search_threads(std::size_t requested) {
  if (requested == 0) requested = std::max(1u, std::thread::hardware_concurrency());
  return std::min(requested, kMaxSearchThreads);
}

// Runs `work(job, worker)` on `threads` threads, the calling one among them (worker is
// 0..threads-1; each may keep its own buffers), and calls `take(result)` on the calling thread, in
// submission order. take returns false to stop: jobs not yet taken are dropped (their Job and
// Result destroyed, which closes what they own). With threads <= 1 no thread is started: submit()
// runs the job and takes it at once. Otherwise threads - 1 workers start, and the calling thread,
// once it is a whole window ahead of the results (kWindow jobs per thread in flight, which bounds
// memory and open descriptors), runs queued jobs itself until the next result in order is ready.
// No thread outlives finish() or the destructor.
template <class Job, class Result>
class OrderedPool {
 public:
  using Work = std::function<Result(Job&, std::size_t worker)>;
  using Take = std::function<bool(Result&)>;
  static constexpr std::size_t kWindow = 16;
  static constexpr std::size_t kBatch = 4;

  OrderedPool(std::size_t threads, Work work, Take take)
      : work_(std::move(work)),
        take_(std::move(take)),
        window_(std::max<std::size_t>(threads, 1) * kWindow),
        caller_(std::max<std::size_t>(threads, 1) - 1) {
    if (threads <= 1) return;
    slots_.resize(window_);
    workers_.reserve(threads - 1);
    for (std::size_t w = 0; w + 1 < threads; ++w) workers_.emplace_back([this, w] { run(w); });
  }
  OrderedPool(const OrderedPool&) = delete;
  OrderedPool& operator=(const OrderedPool&) = delete;
  ~OrderedPool() { shut_down(); }

  // Hands a job over (after taking the results that are ready). False once take has said stop.
  bool submit(Job job) {
    if (stopped()) return false;
    if (workers_.empty()) {
      Result r = work_(job, 0);
      if (!take_(r)) stopped_.store(true, std::memory_order_relaxed);
      return !stopped();
    }
    std::unique_lock lock(mutex_);
    deliver(lock, window_ - 1);  // room for this one
    if (stopped()) return false;
    queue_.emplace_back(submitted_++, std::move(job));
    // A sleeping worker is woken for a batch, not for each job: a wake-up costs more than a small
    // file's search.
    if (idle_ > 0 && queue_.size() >= kBatch) wake_.notify_one();
    deliver(lock, window_);  // whatever is ready, without waiting
    return !stopped();
  }

  // Takes every result still due, in order, then joins the workers. True unless take said stop.
  // A job that threw (std::bad_alloc, say) stopped the pool: its exception is rethrown here, on
  // the calling thread, once no worker runs.
  bool finish() {
    if (!workers_.empty()) {
      std::unique_lock lock(mutex_);
      deliver(lock, 0);
    }
    shut_down();
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    return !stopped();
  }

  // Set once take has said stop: a long job may poll it to end early (its result is dropped).
  bool stopped() const { return stopped_.load(std::memory_order_relaxed); }

 private:
  // Takes ready results in order until at most `pending` remain in flight (running queued jobs, or
  // waiting for the workers', meanwhile), or none is ready and `pending` already holds. Called and
  // returns with the lock held.
  void deliver(std::unique_lock<std::mutex>& lock, std::size_t pending) {
    while (!stopped() && taken_ < submitted_) {
      std::optional<Result>& slot = slots_[taken_ % window_];
      if (!slot) {
        if (submitted_ - taken_ <= pending) return;
        if (!queue_.empty()) {
          run_one(lock, caller_);
        } else {
          waiting_ = true;
          done_.wait(lock);
          waiting_ = false;
        }
        continue;
      }
      Result r = std::move(*slot);
      slot.reset();
      ++taken_;
      lock.unlock();
      const bool go_on = take_(r);
      lock.lock();
      if (!go_on) {
        stopped_.store(true, std::memory_order_relaxed);
        queue_.clear();
      }
    }
  }

  // Runs the oldest queued job as `worker`; the lock is released meanwhile. A job that throws
  // stops the pool (an exception must not end a worker thread, which would end the process); the
  // first such exception is kept for finish() to rethrow.
  void run_one(std::unique_lock<std::mutex>& lock, std::size_t worker) {
    auto [seq, job] = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    std::optional<Result> r;
    std::exception_ptr error;
    if (!stopped()) {
      try {
        r.emplace(work_(job, worker));
      } catch (...) {
        error = std::current_exception();
      }
    }
    lock.lock();
    if (error) {
      if (!error_) error_ = std::move(error);
      stopped_.store(true, std::memory_order_relaxed);
      queue_.clear();
      return;
    }
    if (r && !stopped()) slots_[seq % window_] = std::move(r);
  }

  void run(std::size_t worker) {
    std::unique_lock lock(mutex_);
    for (;;) {
      if (queue_.empty()) {
        if (closing_) return;
        ++idle_;
        wake_.wait(lock);
        --idle_;
        continue;
      }
      run_one(lock, worker);
      if (waiting_) done_.notify_one();
    }
  }

  void shut_down() {
    if (workers_.empty()) return;
    {
      std::lock_guard lock(mutex_);
      closing_ = true;
      if (stopped()) queue_.clear();
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
    workers_.clear();
    for (auto& slot : slots_) slot.reset();
  }

  Work work_;
  Take take_;
  const std::size_t window_;
  const std::size_t caller_;  // the calling thread's worker number
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;  // a job was queued, or closing (told only to idle workers)
  std::condition_variable done_;  // a result was stored (told only to a waiting caller)
  std::deque<std::pair<std::size_t, Job>> queue_;
  std::vector<std::optional<Result>> slots_;  // by sequence number modulo the window
  std::size_t submitted_ = 0;
  std::size_t taken_ = 0;
  std::size_t idle_ = 0;  // workers asleep on wake_
  bool waiting_ = false;  // the caller asleep on done_
  bool closing_ = false;
  std::exception_ptr error_;  // the first exception a job threw
  std::atomic<bool> stopped_{false};
};

}  // namespace mf::fs
