// Work handed to a second thread in order (mf-eval's internal helper: the suite's load, the
// report's entries).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <utility>
#include <vector>

#include "mf/io/records.hpp"

namespace mf::eval {

// Work done on a second thread, in order, while the calling thread goes on: items handed over in
// batches and taken one at a time in the order given, so what the work makes is what doing it on
// the calling thread would make. A few batches wait at most, so what is held does not grow with
// the work. A batch done goes back to the calling thread, which frees it: memory is freed by the
// thread that allocated it, so the two threads do not contend for the allocator's lock.
template <class Item>
class Ahead {
 public:
  using Each = std::function<void(const Item&)>;
  explicit Ahead(Each each) : each_(std::move(each)), thread_([this] { loop(); }) {}
  ~Ahead() { close(); }
  Ahead(const Ahead&) = delete;
  Ahead& operator=(const Ahead&) = delete;

  void add(Item item) {
    filling_.push_back(std::move(item));
    if (filling_.size() >= kBatch) hand_over();
  }
  // Returns once every item handed over is done; throws what the work threw.
  void finish() {
    hand_over();
    close();
    if (error_) std::rethrow_exception(error_);
  }

 private:
  static constexpr std::size_t kBatch = 128, kWaiting = 4;

  void hand_over() {
    if (filling_.empty()) return;
    std::deque<std::vector<Item>> done;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      room_.wait(lock, [&] { return waiting_.size() < kWaiting; });
      waiting_.push_back(std::move(filling_));
      done.swap(done_);
      ready_.notify_one();
    }
    // A batch done, emptied here, holds the next one.
    if (!done.empty()) {
      filling_ = std::move(done.back());
      filling_.clear();
    }
  }
  void close() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      closed_ = true;
    }
    ready_.notify_one();
    thread_.join();
    done_.clear();
  }
  void loop() {
    std::vector<Item> batch;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        if (!batch.empty()) done_.push_back(std::move(batch));
        ready_.wait(lock, [&] { return !waiting_.empty() || closed_; });
        if (waiting_.empty()) return;
        batch = std::move(waiting_.front());
        waiting_.pop_front();
        room_.notify_one();
      }
      if (error_) continue;  // what is left is only drained
      try {
        for (Item& item : batch) each_(item);
      } catch (...) {
        error_ = std::current_exception();
      }
    }
  }

  Each each_;
  std::vector<Item> filling_;  // the caller's batch
  std::mutex mutex_;
  std::condition_variable ready_, room_;
  std::deque<std::vector<Item>> waiting_, done_;
  bool closed_ = false;
  std::exception_ptr error_;  // the work's; read after it ends
  std::thread thread_;        // last: started when the rest is made
};

// Sorts `file` by `less`, handing each record to `take` in the new order as the sort makes it
// (RecordFile::sort's visitor): on a second thread (Ahead) when `ahead`, so that taking them
// goes on while the merge does; else on the calling thread.
template <class T, class Less, class Take>
Status sort_taking(io::RecordFile<T>& file, Less less, const Take& take, bool ahead) {
  std::optional<Ahead<T>> taking;
  if (ahead) taking.emplace(take);
  Status sorted = file.sort(less, [&](std::span<const T> some) {
    for (const T& record : some) {
      if (taking) {
        taking->add(record);
      } else {
        take(record);
      }
    }
  });
  if (taking) taking->finish();
  return sorted;
}

}  // namespace mf::eval
