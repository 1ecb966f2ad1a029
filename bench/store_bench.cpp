// Store benchmarks (common/store, LMDB) against temporary stores: put throughput for 1 KiB and
// 1 MiB values, one durable commit per put vs many puts per transaction; get throughput; gets by
// several reader processes at once; and a bulk put of 100k small objects against writing the same
// objects as files in a git-like loose-object layout (objects/ab/cdef..., temp file + rename), with
// and without an fsync per file.
//
// They sync to disk and take tens of seconds, so they are registered only when MF_BENCH_STORE=1:
// bench/run.sh's micro run stays short, and bench/store_bench.sh runs them (--benchmark_filter=
// '^Store'). Temporary stores live under $MF_BENCH_STORE_DIR, else $TMPDIR, else /tmp.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "mf/hash/sha256.hpp"
#include "mf/store/store.hpp"
#include "trace_gen.hpp"

namespace {

namespace fs = std::filesystem;
using mf::store::Mode;
using mf::store::Store;

// A fresh directory removed with everything in it when the benchmark ends.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("MF_BENCH_STORE_DIR");
    if (base == nullptr || *base == '\0') base = std::getenv("TMPDIR");
    if (base == nullptr || *base == '\0') base = "/tmp";
    std::string pattern = std::string(base) + "/mf-store-bench.XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Throughput benchmarks open their store with a map that already fits everything they write, so
// they measure steady state rather than the few doublings of a young store (each of which discards
// and reruns the transaction that filled the map). The bulk benchmarks keep the default map.
constexpr std::uint64_t kRoomyMap = std::uint64_t{4} << 30;

std::unique_ptr<Store> open_store(
    const std::string& dir, Mode mode,
    std::uint64_t map_bytes = mf::store::OpenOptions{}.initial_map_bytes) {
  mf::store::OpenOptions options;
  options.initial_map_bytes = map_bytes;
  auto s = Store::open(dir, mode, options);
  if (!s) throw std::runtime_error("cannot open store " + dir + ": " + s.diagnostics()[0].message);
  return std::move(*s);
}

// Deterministic value bytes of `size`; the first bytes hold `seq`, so every seq is a new object.
class Values {
 public:
  explicit Values(std::size_t size) : bytes_(size, '\0') {
    mf::bench::Rng rng(20240601);
    for (char& c : bytes_) c = static_cast<char>('a' + rng.next() % 26);
  }
  std::string_view next() {
    const int n =
        std::snprintf(stamp_, sizeof stamp_, "%016llx", static_cast<unsigned long long>(seq_++));
    bytes_.replace(0, static_cast<std::size_t>(n), stamp_, static_cast<std::size_t>(n));
    return bytes_;
  }

 private:
  std::string bytes_;
  char stamp_[32] = {};
  std::uint64_t seq_ = 0;
};

void check(const mf::Status& s) {
  if (!s) throw std::runtime_error(s.diagnostics()[0].code + ": " + s.diagnostics()[0].message);
}

template <class T>
T check(mf::Result<T> r) {
  if (!r) throw std::runtime_error(r.diagnostics()[0].code + ": " + r.diagnostics()[0].message);
  return std::move(*r);
}

// Stores `count` values of `size` in one transaction; returns their digests.
std::vector<mf::hash::Digest> populate(Store& s, std::size_t size, std::size_t count) {
  std::vector<mf::hash::Digest> digests;
  check(s.batch([&]() -> mf::Status {
    // Repeatable: a batch that fills the map is discarded and run again.
    Values values(size);
    digests.clear();
    for (std::size_t i = 0; i < count; ++i) {
      auto d = s.put(values.next());
      if (!d) return d.take_diagnostics();
      digests.push_back(*d);
    }
    return {};
  }));
  return digests;
}

// args: value size, puts per transaction (1 = every put is its own synced commit).
void store_put(benchmark::State& state) {
  const auto size = static_cast<std::size_t>(state.range(0));
  const auto per_txn = static_cast<std::size_t>(state.range(1));
  TempDir dir;
  auto s = open_store(dir.path() + "/store", Mode::ReadWrite, kRoomyMap);
  Values values(size);
  for (auto _ : state) {
    if (per_txn == 1) {
      benchmark::DoNotOptimize(check(s->put(values.next())));
    } else {
      check(s->batch([&]() -> mf::Status {
        for (std::size_t i = 0; i < per_txn; ++i) {
          if (auto d = s->put(values.next()); !d) return d.take_diagnostics();
        }
        return {};
      }));
    }
  }
  const auto items = static_cast<std::int64_t>(state.iterations() * per_txn);
  state.SetItemsProcessed(items);
  state.SetBytesProcessed(items * static_cast<std::int64_t>(size));
}

// args: value size, objects in the store (read round robin; each get re-hashes the value).
void store_get(benchmark::State& state) {
  const auto size = static_cast<std::size_t>(state.range(0));
  TempDir dir;
  auto s = open_store(dir.path() + "/store", Mode::ReadWrite, kRoomyMap);
  const auto digests = populate(*s, size, static_cast<std::size_t>(state.range(1)));
  std::size_t i = 0;
  for (auto _ : state) {
    auto bytes = check(s->get(digests[i]));
    benchmark::DoNotOptimize(bytes.data());
    i = (i + 1) % digests.size();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * size));
}

// args: value size, reader processes, gets per process. Each iteration forks the readers, each
// opening the store read-only on its own (as separate mf-* processes would) and reading every
// object round robin; the time is the wall clock until the last one exits.
void store_get_procs(benchmark::State& state) {
  const auto size = static_cast<std::size_t>(state.range(0));
  const auto procs = static_cast<int>(state.range(1));
  const auto gets = static_cast<std::size_t>(state.range(2));
  TempDir dir;
  const std::string path = dir.path() + "/store";
  std::vector<mf::hash::Digest> digests;
  {
    // Closed before forking: an LMDB environment must not cross fork().
    auto s = open_store(path, Mode::ReadWrite, kRoomyMap);
    digests = populate(*s, size, size <= 4096 ? 4096 : 64);
  }
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<pid_t> children;
    for (int p = 0; p < procs; ++p) {
      const pid_t pid = ::fork();
      if (pid == 0) {
        int rc = 0;
        try {
          auto s = open_store(path, Mode::ReadOnly);
          for (std::size_t i = 0; i < gets; ++i) {
            auto bytes = s->get(digests[(i + static_cast<std::size_t>(p)) % digests.size()]);
            if (!bytes) rc = 1;
            benchmark::DoNotOptimize(bytes);
          }
        } catch (...) {
          rc = 1;
        }
        ::_exit(rc);
      }
      if (pid < 0) throw std::runtime_error("fork failed");
      children.push_back(pid);
    }
    bool ok = true;
    for (pid_t pid : children) {
      int status = 0;
      ::waitpid(pid, &status, 0);
      ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    if (!ok) state.SkipWithError("a reader process failed");
    state.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  const auto items = static_cast<std::int64_t>(state.iterations() * gets) * procs;
  state.SetItemsProcessed(items);
  state.SetBytesProcessed(items * static_cast<std::int64_t>(size));
}

// The small objects of the bulk comparison: distinct JSON documents of about 200 bytes.
std::vector<std::string> small_objects(std::size_t count) {
  mf::bench::Rng rng(20240602);
  std::vector<std::string> objects;
  objects.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    std::string payload(120 + rng.next() % 120, 'x');
    for (char& c : payload) c = static_cast<char>('a' + rng.next() % 26);
    objects.push_back("{\"i\":" + std::to_string(i) + ",\"payload\":\"" + payload + "\"}");
  }
  return objects;
}

const std::vector<std::string>& bulk_objects() {
  static const std::vector<std::string> objects = small_objects(100000);
  return objects;
}

enum class Bulk : std::uint8_t { LmdbOneTxn, LmdbTxnPer1000, LmdbDurableEach, Loose, LooseFsync };

// Writes one object git-style: hash, write a temp file, (fsync), rename to objects/ab/cdef...
void put_loose(const std::string& root, std::string_view bytes, bool sync) {
  const std::string hex = mf::hash::to_hex(mf::hash::sha256(bytes));
  const std::string subdir = root + "/" + hex.substr(0, 2);
  const std::string final_path = subdir + "/" + hex.substr(2);
  if (::access(final_path.c_str(), F_OK) == 0) return;  // already stored: idempotent
  ::mkdir(subdir.c_str(), 0777);
  std::string temp = root + "/tmp_obj_XXXXXX";
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) throw std::runtime_error("mkstemp failed");
  if (::write(fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size()))
    throw std::runtime_error("short write");
  if (sync && ::fsync(fd) != 0) throw std::runtime_error("fsync failed");
  ::close(fd);
  if (::rename(temp.c_str(), final_path.c_str()) != 0) throw std::runtime_error("rename failed");
}

// args: variant (Bulk), objects written (100000, or a sample when every object is synced).
void store_bulk(benchmark::State& state) {
  const auto variant = static_cast<Bulk>(state.range(0));
  const auto count = static_cast<std::size_t>(state.range(1));
  const auto& objects = bulk_objects();
  for (auto _ : state) {
    state.PauseTiming();
    auto dir = std::make_unique<TempDir>();
    std::unique_ptr<Store> s;
    const std::string root = dir->path() + "/objects";
    if (variant == Bulk::Loose || variant == Bulk::LooseFsync) {
      fs::create_directory(root);
    } else {
      s = open_store(dir->path() + "/store", Mode::ReadWrite);
    }
    state.ResumeTiming();
    switch (variant) {
      case Bulk::LmdbOneTxn:
      case Bulk::LmdbTxnPer1000: {
        const std::size_t per_txn = variant == Bulk::LmdbOneTxn ? count : 1000;
        for (std::size_t first = 0; first < count; first += per_txn) {
          check(s->batch([&]() -> mf::Status {
            for (std::size_t i = first; i < std::min(count, first + per_txn); ++i) {
              if (auto d = s->put(objects[i]); !d) return d.take_diagnostics();
            }
            return {};
          }));
        }
        break;
      }
      case Bulk::LmdbDurableEach:
        for (std::size_t i = 0; i < count; ++i) check(s->put(objects[i]));
        break;
      case Bulk::Loose:
      case Bulk::LooseFsync:
        for (std::size_t i = 0; i < count; ++i)
          put_loose(root, objects[i], variant == Bulk::LooseFsync);
        break;
    }
    state.PauseTiming();
    s.reset();
    dir.reset();  // removing 100k files is not part of the measurement
    state.ResumeTiming();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * count));
}

void register_store_benchmarks() {
  constexpr std::int64_t kKiB = 1024;
  constexpr std::int64_t kMiB = 1024 * 1024;
  benchmark::RegisterBenchmark("StorePut/1KiB/durable_each", store_put)
      ->Args({kKiB, 1})
      ->Iterations(300)
      ->UseRealTime();
  benchmark::RegisterBenchmark("StorePut/1KiB/txn_of_1000", store_put)
      ->Args({kKiB, 1000})
      ->Iterations(50)
      ->UseRealTime();
  benchmark::RegisterBenchmark("StorePut/1MiB/durable_each", store_put)
      ->Args({kMiB, 1})
      ->Iterations(40)
      ->UseRealTime();
  benchmark::RegisterBenchmark("StorePut/1MiB/txn_of_64", store_put)
      ->Args({kMiB, 64})
      ->Iterations(4)
      ->UseRealTime();
  benchmark::RegisterBenchmark("StoreGet/1KiB", store_get)->Args({kKiB, 4096})->UseRealTime();
  benchmark::RegisterBenchmark("StoreGet/1MiB", store_get)->Args({kMiB, 64})->UseRealTime();
  for (std::int64_t procs : {1, 2, 4}) {
    benchmark::RegisterBenchmark(("StoreGetProcs/1KiB/procs:" + std::to_string(procs)).c_str(),
                                 store_get_procs)
        ->Args({kKiB, procs, 100000})
        ->Iterations(3)
        ->UseManualTime();
    benchmark::RegisterBenchmark(("StoreGetProcs/1MiB/procs:" + std::to_string(procs)).c_str(),
                                 store_get_procs)
        ->Args({kMiB, procs, 400})
        ->Iterations(3)
        ->UseManualTime();
  }
  // Syncing every object costs a few milliseconds each on most disks: those two variants write a
  // 2000-object sample and bench/store_bench.sh scales their rate to 100k.
  const struct {
    const char* name;
    Bulk variant;
    std::int64_t count;
  } bulk[] = {
      {"StoreBulk/lmdb_one_txn", Bulk::LmdbOneTxn, 100000},
      {"StoreBulk/lmdb_txn_per_1000", Bulk::LmdbTxnPer1000, 100000},
      {"StoreBulk/lmdb_durable_each", Bulk::LmdbDurableEach, 2000},
      {"StoreBulk/loose_files", Bulk::Loose, 100000},
      {"StoreBulk/loose_files_fsync", Bulk::LooseFsync, 2000},
  };
  for (const auto& b : bulk) {
    benchmark::RegisterBenchmark(b.name, store_bulk)
        ->Args({static_cast<std::int64_t>(b.variant), b.count})
        ->Iterations(1)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
}

[[maybe_unused]] const bool registered = [] {
  const char* on = std::getenv("MF_BENCH_STORE");
  if (on == nullptr || std::string_view(on) != "1") return false;
  register_store_benchmarks();
  return true;
}();

}  // namespace
