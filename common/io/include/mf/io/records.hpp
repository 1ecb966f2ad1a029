// Arrays too large to hold: fixed-size records in an unnamed temporary file, appended through a
// buffer, read back through a window per reader, and sorted by an external merge sort under a
// fixed memory budget. A campaign keeps what it has per case and per attempt here, so its memory
// does not grow with its cases (docs/campaigns.md, "Memory").
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/io/file.hpp"

namespace mf::io {

// An unnamed temporary file in the temporary directory (TMPDIR, else /tmp): O_TMPFILE, else a named
// file unlinked at once, so no name reaches it and nothing is left behind however the process
// ends. MF-O003 when none can be made; `what` names what it was for.
Result<Fd> open_temporary(const std::string& what);

// The bytes of a RecordFile: a temporary file made at the first write, then written and read with
// pwrite and pread, never mapped (a mapping's pages would count as the process's memory).
class SpillBytes {
 public:
  explicit SpillBytes(std::string what) : what_(std::move(what)) {}
  Status write(std::uint64_t offset, const void* data, std::size_t size);
  Status read(std::uint64_t offset, void* data, std::size_t size) const;

 private:
  Fd fd_;
  std::string what_;
};

// An array of trivially copyable records. The last records appended wait in a buffer of
// kBufferBytes, so an array no larger never makes a file; larger ones go to the file a buffer at a
// time. Appending and sorting are for one thread; once they are done, any number of Readers (one
// per thread) read it at once.
template <class T>
class RecordFile {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  static constexpr std::size_t kBufferBytes = std::size_t{64} << 10;
  // A reader's window, and the runs and merge buffers of sort(): the memory each takes.
  static constexpr std::size_t kWindowBytes = std::size_t{16} << 10;
  static constexpr std::size_t kSortBytes = std::size_t{512} << 10;
  // The most runs one merge reads at once.
  static constexpr std::size_t kFanIn = 64;

  explicit RecordFile(std::string what) : what_(std::move(what)), bytes_(what_) {}

  std::uint64_t size() const { return written_ + buffer_.size(); }
  bool empty() const { return size() == 0; }

  Status push_back(const T& record) {
    buffer_.push_back(record);
    return buffer_.size() >= per(sort_runs_ ? kSortBytes : kBufferBytes) ? spill() : Status();
  }

  // Before the first push_back: the records will be sorted by `less`, and sort() given the same
  // order. The buffer then holds a run of kSortBytes, sorted as it goes to the file, so the work of
  // sorting the runs is done where the records are appended (on the thread that appends them) and
  // sort() only merges. Until sort(), the records are in order within each run only.
  template <class Less>
  void sort_runs_by(Less less) {
    sort_runs_ = [less](std::vector<T>& records) { sort_run(records, less); };
  }

  // Orders the records by `less` (a strict weak order), stably: equal records keep the order they
  // were appended in. Records that fit in the buffer are sorted there; else runs of kSortBytes are
  // sorted (unless sort_runs_by() did) and merged, kFanIn at a time (merge()).
  template <class Less>
  Status sort(Less less) {
    return sort(less, [](std::span<const T>) {});
  }
  // sort(), handing every record to `sorted` in the new order, in pieces, as the sort makes them:
  // a pass over the records in order needs no reading of its own.
  template <class Less, class Sorted>
  Status sort(Less less, Sorted sorted) {
    if (written_ == 0) {
      sort_run(buffer_, less);
      sorted(std::span<const T>(buffer_));
      return Status();
    }
    if (Status s = spill(); !s) return s;
    std::vector<T>().swap(buffer_);
    const std::uint64_t n = written_;
    const std::uint64_t run = per(kSortBytes);
    if (!sort_runs_) {  // the runs sorted now, into a file of their own
      SpillBytes runs(what_);
      std::vector<T> chunk;
      for (std::uint64_t at = 0; at < n; at += run) {
        chunk.resize(static_cast<std::size_t>(std::min(run, n - at)));
        if (Status s = bytes_.read(at * sizeof(T), chunk.data(), chunk.size() * sizeof(T)); !s)
          return s;
        sort_run(chunk, less);
        if (Status s = runs.write(at * sizeof(T), chunk.data(), chunk.size() * sizeof(T)); !s)
          return s;
      }
      bytes_ = std::move(runs);
    }
    if (n > run) return merge(bytes_, run, less, sorted);
    // One run, already in order: read back for `sorted`.
    std::vector<T> chunk;
    for (std::uint64_t at = 0; at < n; at += chunk.size()) {
      chunk.resize(static_cast<std::size_t>(std::min(per(kWindowBytes), n - at)));
      if (Status s = bytes_.read(at * sizeof(T), chunk.data(), chunk.size() * sizeof(T)); !s)
        return s;
      sorted(std::span<const T>(chunk));
    }
    return Status();
  }

  // Reads the records by position through a window of kWindowBytes, refilled from the position
  // asked for when it is outside: reading in order costs one pread a window. A reference stays
  // good until the next read. A record that cannot be read reads as zeros and sets status().
  class Reader {
   public:
    explicit Reader(const RecordFile& file) : file_(&file) {}
    const T& operator[](std::uint64_t i) {
      if (i >= file_->written_)
        return file_->buffer_[static_cast<std::size_t>(i - file_->written_)];
      if (i < first_ || i - first_ >= window_.size()) load(i);
      return window_[static_cast<std::size_t>(i - first_)];
    }
    const Status& status() const { return status_; }

   private:
    void load(std::uint64_t i) {
      window_.resize(static_cast<std::size_t>(std::min(per(kWindowBytes), file_->written_ - i)));
      first_ = i;
      Status s = file_->bytes_.read(i * sizeof(T), window_.data(), window_.size() * sizeof(T));
      if (!s) {
        std::memset(static_cast<void*>(window_.data()), 0, window_.size() * sizeof(T));
        if (status_) status_ = std::move(s);
      }
    }
    const RecordFile* file_;
    std::vector<T> window_;
    std::uint64_t first_ = 0;
    Status status_;
  };

 private:
  static constexpr std::uint64_t per(std::size_t bytes) {
    return std::max<std::uint64_t>(1, bytes / sizeof(T));
  }

  // A stable sort of records held in memory. Records larger than a few words are sorted by their
  // positions, then moved once each into place (following the permutation's cycles), rather than
  // moved at every step of the merge sort.
  template <class Less>
  static void sort_run(std::vector<T>& records, Less less) {
    if constexpr (sizeof(T) <= 16) {
      std::stable_sort(records.begin(), records.end(), less);
    } else {
      std::vector<std::uint32_t> from(records.size());  // from[j]: the record that goes to j
      for (std::size_t j = 0; j < from.size(); ++j) from[j] = static_cast<std::uint32_t>(j);
      std::stable_sort(from.begin(), from.end(), [&](std::uint32_t a, std::uint32_t b) {
        return less(records[a], records[b]);
      });
      for (std::size_t i = 0; i < from.size(); ++i) {
        if (from[i] == i) continue;
        const T held = records[i];
        std::size_t j = i;
        while (from[j] != i) {
          const std::size_t k = from[j];
          records[j] = records[k];
          from[j] = static_cast<std::uint32_t>(j);
          j = k;
        }
        records[j] = held;
        from[j] = static_cast<std::uint32_t>(j);
      }
    }
  }

  Status spill() {
    if (buffer_.empty()) return Status();
    if (sort_runs_) sort_runs_(buffer_);
    if (Status s = bytes_.write(written_ * sizeof(T), buffer_.data(), buffer_.size() * sizeof(T));
        !s)
      return s;
    written_ += buffer_.size();
    buffer_.clear();
    return Status();
  }

  // The merge of the sorted runs of `run` records in `runs` into a file of its own. At most
  // kFanIn runs are merged at once, so each is read through a share of kSortBytes of at least
  // 1/(kFanIn + 1): more runs than that are first merged kFanIn at a time into longer runs, in as
  // many passes as it takes. Only the last pass hands the records to `sorted`.
  template <class Less, class Sorted>
  Status merge(const SpillBytes& runs, std::uint64_t run, Less less, Sorted& sorted) {
    const std::uint64_t n = written_;
    const SpillBytes* from = &runs;
    SpillBytes longer(what_);  // a pass's runs, when there are passes
    const auto unseen = [](std::span<const T>) {};
    while ((n + run - 1) / run > kFanIn) {
      SpillBytes next(what_);
      for (std::uint64_t at = 0; at < n; at += run * kFanIn) {
        if (Status s =
                merge_runs(*from, run, at, std::min(n, at + run * kFanIn), next, less, unseen);
            !s)
          return s;
      }
      longer = std::move(next);
      from = &longer;
      run *= kFanIn;
    }
    SpillBytes merged(what_);
    if (Status s = merge_runs(*from, run, 0, n, merged, less, sorted); !s) return s;
    bytes_ = std::move(merged);
    return Status();
  }

  // The k-way merge of the runs of `run` records in `runs` that make records [first, last), into
  // the same places of `out`; on ties the earlier run first, so the sort stays stable.
  template <class Less, class Sorted>
  static Status merge_runs(const SpillBytes& runs, std::uint64_t run, std::uint64_t first,
                           std::uint64_t last, SpillBytes& out, Less& less, Sorted& sorted) {
    const std::size_t k = static_cast<std::size_t>((last - first + run - 1) / run);
    const std::uint64_t share = per(kSortBytes / (k + 1));
    struct Cursor {
      std::uint64_t next, end;  // records of its run not yet in `held`
      std::vector<T> held;
      std::size_t at = 0;
    };
    std::vector<Cursor> cursors(k);
    const auto refill = [&](Cursor& c) -> Status {
      c.held.resize(static_cast<std::size_t>(std::min(share, c.end - c.next)));
      c.at = 0;
      Status s = runs.read(c.next * sizeof(T), c.held.data(), c.held.size() * sizeof(T));
      c.next += c.held.size();
      return s;
    };
    std::vector<std::size_t> heap;  // the cursors with records left, by their heads
    const auto later = [&](std::size_t a, std::size_t b) {
      const T& x = cursors[a].held[cursors[a].at];
      const T& y = cursors[b].held[cursors[b].at];
      if (less(y, x)) return true;
      if (less(x, y)) return false;
      return a > b;
    };
    for (std::size_t r = 0; r < k; ++r) {
      cursors[r].next = first + r * run;
      cursors[r].end = std::min(last, first + (r + 1) * run);
      if (Status s = refill(cursors[r]); !s) return s;
      heap.push_back(r);
    }
    std::make_heap(heap.begin(), heap.end(), later);
    std::vector<T> held;
    held.reserve(static_cast<std::size_t>(share));
    std::uint64_t written = first;
    const auto drain = [&]() -> Status {
      sorted(std::span<const T>(held));
      Status s = out.write(written * sizeof(T), held.data(), held.size() * sizeof(T));
      written += held.size();
      held.clear();
      return s;
    };
    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end(), later);
      Cursor& c = cursors[heap.back()];
      held.push_back(c.held[c.at]);
      if (held.size() >= share) {
        if (Status s = drain(); !s) return s;
      }
      if (++c.at == c.held.size()) {
        if (c.next == c.end) {
          heap.pop_back();
          continue;
        }
        if (Status s = refill(c); !s) return s;
      }
      std::push_heap(heap.begin(), heap.end(), later);
    }
    return drain();
  }

  std::string what_;
  SpillBytes bytes_;
  std::uint64_t written_ = 0;  // records in the file; the rest are in buffer_
  std::vector<T> buffer_;
  std::function<void(std::vector<T>&)> sort_runs_;  // sort_runs_by()'s
};

}  // namespace mf::io
