#include "mf/store/store.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "mf/diag/codes.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"

namespace mf::store::detail {
// Defined in objects.cpp: called by put_file once it has read its input.
extern std::function<void(const std::string&)> put_file_after_read;
}  // namespace mf::store::detail

namespace {

namespace fs = std::filesystem;
namespace codes = mf::diag::codes;
using mf::hash::Digest;
using mf::store::Mode;
using mf::store::OpenOptions;
using mf::store::Store;

std::string code_of(const mf::diag::Diagnostics& ds) {
  return ds.empty() ? std::string("<none>") : ds.front().code;
}
template <class R>
std::string code_of(const R& r) {
  return r.ok() ? std::string("<ok>") : code_of(r.diagnostics());
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
void write_file(const fs::path& p, std::string_view bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Deterministic pseudo-random bytes (xorshift), so sizes and contents vary without a seed file.
std::string pseudo_random(std::size_t size, std::uint64_t seed) {
  std::string out(size, '\0');
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& c : out) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    c = static_cast<char>(x & 0xff);
  }
  return out;
}

// Threads of this process now.
std::size_t thread_count() {
  return static_cast<std::size_t>(
      std::distance(fs::directory_iterator("/proc/self/task"), fs::directory_iterator{}));
}

// Bytes of storage a file holds (its holes hold none).
std::uint64_t allocated(const fs::path& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 ? static_cast<std::uint64_t>(st.st_blocks) * 512 : 0;
}

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::path(testing::TempDir()) / "mf_store_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr) << std::strerror(errno);
    root_ = tmpl;
    dir_ = (root_ / "store").string();
  }
  void TearDown() override {
    mf::store::detail::put_file_after_read = nullptr;
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  std::unique_ptr<Store> open(Mode mode = Mode::ReadWrite, const std::string& dir = {},
                              OpenOptions options = {}) {
    auto s = Store::open(dir.empty() ? dir_ : dir, mode, options);
    EXPECT_TRUE(s.ok()) << code_of(s) << " " << (s.ok() ? "" : s.diagnostics().front().message);
    return s.ok() ? std::move(s.value()) : nullptr;
  }

  fs::path root_;
  std::string dir_;
};

TEST_F(StoreTest, PutGetHasAreIdempotent) {
  auto store = open();
  ASSERT_TRUE(store);
  EXPECT_TRUE(fs::exists(fs::path(dir_) / "data.mdb"));
  auto d1 = store->put("hello");
  ASSERT_TRUE(d1.ok());
  EXPECT_EQ(*d1, mf::hash::sha256("hello"));
  auto d2 = store->put("hello");
  ASSERT_TRUE(d2.ok());
  EXPECT_EQ(*d1, *d2);
  auto empty = store->put("");
  ASSERT_TRUE(empty.ok());

  EXPECT_TRUE(*store->has(*d1));
  EXPECT_FALSE(*store->has(mf::hash::sha256("absent")));
  EXPECT_EQ(*store->get(*d1), "hello");
  EXPECT_EQ(*store->get(*empty), "");
  EXPECT_EQ(code_of(store->get(mf::hash::sha256("absent"))), codes::kStoreMissingObject);

  auto listed = store->list();
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_TRUE(std::is_sorted(listed->begin(), listed->end(),
                             [](const auto& a, const auto& b) { return a.digest < b.digest; }));
  auto stats = store->stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->objects, 2u);
  EXPECT_EQ(stats->object_bytes, 5u);
  EXPECT_EQ(stats->refs, 0u);
  EXPECT_EQ(stats->map_bytes, OpenOptions{}.initial_map_bytes);
  EXPECT_GT(stats->file_bytes, 0u);

  // Reopening finds the same objects.
  store.reset();
  store = open(Mode::ReadOnly);
  ASSERT_TRUE(store);
  EXPECT_EQ(*store->get(*d1), "hello");
}

TEST_F(StoreTest, GetToFdWritesTheBytes) {
  auto store = open();
  ASSERT_TRUE(store);
  const std::string bytes = pseudo_random(300000, 7);
  auto d = store->put(bytes);
  ASSERT_TRUE(d.ok());
  const fs::path out = root_ / "out.bin";
  const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  EXPECT_TRUE(store->get_to_fd(*d, fd).ok());
  EXPECT_EQ(code_of(store->get_to_fd(mf::hash::sha256("x"), fd)), codes::kStoreMissingObject);
  ::close(fd);
  EXPECT_EQ(read_file(out), bytes);
}

TEST_F(StoreTest, PutVerifiedRefusesAWrongDigest) {
  auto store = open();
  ASSERT_TRUE(store);
  const auto st = store->put_verified(mf::hash::sha256("a"), "b");
  EXPECT_EQ(code_of(st), codes::kStoreDigestMismatch);
  EXPECT_FALSE(*store->has(mf::hash::sha256("a")));
  EXPECT_FALSE(*store->has(mf::hash::sha256("b")));
  EXPECT_TRUE(store->put_verified(mf::hash::sha256("b"), "b").ok());
  EXPECT_EQ(*store->get(mf::hash::sha256("b")), "b");
}

TEST_F(StoreTest, PutFileStoresTheFileBytes) {
  auto store = open();
  ASSERT_TRUE(store);
  const std::string bytes = pseudo_random(3u << 20, 11);
  write_file(root_ / "big.bin", bytes);
  auto d = store->put_file((root_ / "big.bin").string());
  ASSERT_TRUE(d.ok()) << code_of(d);
  EXPECT_EQ(*d, mf::hash::sha256(bytes));
  EXPECT_EQ(*store->get(*d), bytes);
  auto again = store->put_file((root_ / "big.bin").string());  // idempotent
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *d);
  write_file(root_ / "empty", "");
  auto e = store->put_file((root_ / "empty").string());
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(*store->get(*e), "");
  EXPECT_EQ(store->stats()->objects, 2u);

  EXPECT_EQ(code_of(store->put_file((root_ / "nope").string())), codes::kMissing);
  EXPECT_EQ(code_of(store->put_file(root_.string())), codes::kNotRegularFile);
}

TEST_F(StoreTest, PutFileOfAPipeIsBuffered) {
  auto store = open();
  ASSERT_TRUE(store);
  const fs::path fifo = root_ / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string bytes = pseudo_random(200000, 3);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const int fd = ::open(fifo.c_str(), O_WRONLY);
    std::size_t done = 0;
    while (fd >= 0 && done < bytes.size()) {
      const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    ::_exit(done == bytes.size() ? 0 : 1);
  }
  auto d = store->put_file(fifo.string());
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(d.ok()) << code_of(d);
  EXPECT_EQ(*store->get(*d), bytes);
}

TEST_F(StoreTest, PutFileRefusesAFileThatChangedWhileRead) {
  auto store = open();
  ASSERT_TRUE(store);
  const fs::path file = root_ / "log.txt";
  const fs::path data = fs::path(dir_) / "data.mdb";
  const std::uint64_t held = allocated(data);
  const std::size_t threads = thread_count();
  // Held in memory, and written into data.mdb as it is read (over 1 MiB).
  for (const std::size_t size : {std::size_t{100000}, (std::size_t{1} << 20) + 100000}) {
    const std::string original = pseudo_random(size, 5);
    // Same size, different bytes.
    write_file(file, original);
    mf::store::detail::put_file_after_read = [&](const std::string& path) {
      std::string changed = original;
      changed[500] = static_cast<char>(changed[500] ^ 1);
      write_file(path, changed);
    };
    EXPECT_EQ(code_of(store->put_file(file.string())), codes::kStoreInputChanged) << size;
    // Grown.
    write_file(file, original);
    mf::store::detail::put_file_after_read = [&](const std::string& path) {
      write_file(path, original + "more");
    };
    EXPECT_EQ(code_of(store->put_file(file.string())), codes::kStoreInputChanged) << size;
    // Shrunk.
    write_file(file, original);
    mf::store::detail::put_file_after_read = [&](const std::string& path) {
      write_file(path, original.substr(0, 10));
    };
    EXPECT_EQ(code_of(store->put_file(file.string())), codes::kStoreInputChanged) << size;
    mf::store::detail::put_file_after_read = nullptr;
    EXPECT_EQ(store->stats()->objects, 0u);  // nothing was stored
    EXPECT_FALSE(*store->has(mf::hash::sha256(original)));
    // The pages written meanwhile were given back, and the hashing thread is gone.
    EXPECT_LT(allocated(data), held + (256u << 10)) << size;
    EXPECT_EQ(thread_count(), threads) << size;
  }
}

// put FILE writes a large file into data.mdb where LMDB's reservation is predicted to start and
// moves it when the value lands elsewhere: wherever it lands, the object reads back whole.
TEST_F(StoreTest, PutFileStoresTheFileWhereverLmdbPlacesIt) {
  auto store = open();
  ASSERT_TRUE(store);
  const std::size_t threads = thread_count();
  std::vector<std::pair<Digest, std::string>> stored;
  const auto put_file = [&](std::size_t size, std::uint64_t seed) {
    const fs::path file = root_ / ("in" + std::to_string(seed));
    const std::string bytes = pseudo_random(size, seed);
    write_file(file, bytes);
    auto d = store->put_file(file.string());
    ASSERT_TRUE(d.ok()) << code_of(d) << " " << seed;
    EXPECT_EQ(*d, mf::hash::sha256(bytes)) << seed;
    EXPECT_EQ(*store->get(*d), bytes) << seed;
    EXPECT_EQ(thread_count(), threads) << seed;
    stored.emplace_back(*d, bytes);
  };
  // A new store, then free pages too recent to reuse, then reused ones.
  put_file((std::size_t{3} << 20) + 5, 1);
  ASSERT_TRUE(store->put("small").ok());
  for (std::uint64_t seed = 2; seed < 5; ++seed) put_file((std::size_t{2} << 20) + seed, seed);
  // A deeper tree, whose leaves split.
  for (int i = 0; i < 300; ++i) ASSERT_TRUE(store->put("object " + std::to_string(i)).ok());
  for (std::uint64_t seed = 5; seed < 8; ++seed)
    put_file((std::size_t{1} << 20) + seed * 977, seed);
  // Nothing is referenced: gc frees every page run, and the next values reuse them.
  ASSERT_TRUE(store->gc().ok());
  stored.clear();
  const fs::path data = fs::path(dir_) / "data.mdb";
  for (std::uint64_t seed = 8; seed < 12; ++seed) put_file((std::size_t{2} << 20) + seed, seed);
  // Present already: nothing stored, nothing kept of what was written.
  const std::uint64_t held = allocated(data);
  put_file((std::size_t{2} << 20) + 8, 8);
  stored.pop_back();
  EXPECT_LT(allocated(data), held + (256u << 10));
  // Inside a batch the file is spooled and copied in.
  const std::string batched = pseudo_random((std::size_t{2} << 20) + 99, 99);
  write_file(root_ / "batched", batched);
  ASSERT_TRUE(store
                  ->batch([&]() -> mf::Status {
                    auto d = store->put_file((root_ / "batched").string());
                    if (!d) return d.take_diagnostics();
                    return {};
                  })
                  .ok());
  stored.emplace_back(mf::hash::sha256(batched), batched);
  for (const auto& [digest, bytes] : stored) EXPECT_EQ(*store->get(digest), bytes);
  auto report = store->verify();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->corrupt.empty());
  EXPECT_EQ(report->checked, stored.size());
}

TEST_F(StoreTest, BatchIsOneTransaction) {
  auto store = open();
  ASSERT_TRUE(store);
  std::vector<Digest> digests;
  auto ok = store->batch([&]() -> mf::Status {
    for (int i = 0; i < 100; ++i) {
      auto d = store->put("object " + std::to_string(i));
      if (!d) return d.take_diagnostics();
      digests.push_back(*d);
      if (!*store->has(*d)) return mf::diag::error(codes::kInternal, "not visible in batch");
    }
    return store->set_ref("batch/head", digests.front());
  });
  ASSERT_TRUE(ok.ok()) << code_of(ok);
  for (const auto& d : digests) EXPECT_TRUE(*store->has(d));
  EXPECT_EQ(**store->get_ref("batch/head"), digests.front());

  // A failing batch leaves nothing behind.
  auto failed = store->batch([&]() -> mf::Status {
    auto d = store->put("never committed");
    if (!d) return d.take_diagnostics();
    return mf::diag::error(codes::kInternal, "give up");
  });
  EXPECT_EQ(code_of(failed), codes::kInternal);
  EXPECT_FALSE(*store->has(mf::hash::sha256("never committed")));
  EXPECT_EQ(store->stats()->objects, 100u);
}

TEST_F(StoreTest, FullMapGrowsInsteadOfFailing) {
  OpenOptions tiny;
  tiny.initial_map_bytes = 256u << 10;
  auto store = open(Mode::ReadWrite, {}, tiny);
  ASSERT_TRUE(store);
  const std::uint64_t start_map = store->stats()->map_bytes;
  // A batch that overflows the map is rerun after the map grows.
  int runs = 0;
  auto batched = store->batch([&]() -> mf::Status {
    ++runs;
    for (std::uint64_t i = 0; i < 8; ++i) {
      auto d = store->put(pseudo_random(3u << 20, 1000 + i));
      if (!d) return d.take_diagnostics();
    }
    return {};
  });
  ASSERT_TRUE(batched.ok()) << code_of(batched);
  EXPECT_GE(runs, 2);
  std::vector<std::pair<Digest, std::uint64_t>> put;
  std::uint64_t total = 0;
  for (std::uint64_t i = 0; total < (20u << 20); ++i) {
    const std::size_t size = i % 10 == 0 ? (1u << 20) + i : 1000 + (i * 7919) % 60000;
    auto d = store->put(pseudo_random(size, i));
    ASSERT_TRUE(d.ok()) << code_of(d) << " at object " << i;
    put.emplace_back(*d, i);
    total += size;
  }
  // A file larger than the map.
  const std::string big = pseudo_random(40u << 20, 99);
  write_file(root_ / "big", big);
  auto fd = store->put_file((root_ / "big").string());
  ASSERT_TRUE(fd.ok()) << code_of(fd);

  store.reset();
  store = open(Mode::ReadOnly);
  ASSERT_TRUE(store);
  EXPECT_GT(store->stats()->map_bytes, start_map);
  for (const auto& [d, seed] : put) {
    auto bytes = store->get(d);
    ASSERT_TRUE(bytes.ok()) << code_of(bytes);
    EXPECT_EQ(mf::hash::sha256(*bytes), d);
  }
  for (std::uint64_t i = 0; i < 8; ++i) {
    EXPECT_TRUE(*store->has(mf::hash::sha256(pseudo_random(3u << 20, 1000 + i))));
  }
  EXPECT_EQ(*store->get(*fd), big);
  auto report = store->verify();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->corrupt.empty());
  EXPECT_EQ(report->checked, put.size() + 9);
}

// LMDB maps data.mdb and trusts it: what it cannot check, the store does (docs/store.md).
TEST_F(StoreTest, ATruncatedDataFileIsNamedBeforeItIsMapped) {
  Digest large{};
  {
    auto store = open();
    ASSERT_TRUE(store);
    large = *store->put(pseudo_random(300000, 7));
  }
  // A writer extends the file to the map's size; the used part ends after the 300 kB value.
  const fs::path data = fs::path(dir_) / "data.mdb";
  fs::resize_file(data, 100000);
  for (Mode mode : {Mode::ReadOnly, Mode::ReadWrite}) {
    auto s = Store::open(dir_, mode);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(code_of(s), codes::kStoreCorrupt);
    EXPECT_NE(s.diagnostics().front().message.find("truncated"), std::string::npos);
  }
  // LMDB's magic, but meta pages that make no sense (page size, roots, last page).
  std::string bogus(16384, '\x5a');
  bogus.replace(16, 4, std::string("\xde\xc0\xef\xbe", 4));
  write_file(data, bogus);
  EXPECT_EQ(code_of(Store::open(dir_, Mode::ReadOnly)), codes::kStoreCorrupt);
}

// A file cut short while it is mapped (another process truncating it): the read faults inside the
// map, and the process ends with MF-K003 and exit 3 rather than by SIGBUS.
TEST_F(StoreTest, AFaultInsideTheMapExitsThreeWithADiagnostic) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string value = pseudo_random(300000, 11);
  Digest large{};
  {
    auto store = open();
    ASSERT_TRUE(store);
    large = *store->put(value);
  }
  const fs::path data = fs::path(dir_) / "data.mdb";
  EXPECT_EXIT(
      {
        auto store = Store::open(dir_, Mode::ReadOnly);
        if (!store.ok()) std::_Exit(10);
        ::truncate(data.c_str(), 8192);
        auto got = (*store)->get(large);
        std::_Exit(got.ok() ? 11 : 12);
      },
      testing::ExitedWithCode(3), "MF-K003.*map faulted");
}

#if !defined(__SANITIZE_ADDRESS__)
// A fault anywhere else is not the store's: it keeps its usual outcome.
TEST_F(StoreTest, AFaultOutsideTheMapIsNotTakenForCorruption) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  ASSERT_TRUE(open());
  EXPECT_EXIT(
      {
        auto store = Store::open(dir_, Mode::ReadOnly);
        if (!store.ok()) std::_Exit(10);
        std::raise(SIGBUS);
      },
      testing::KilledBySignal(SIGBUS), "");
}
#endif

TEST_F(StoreTest, CorruptValueIsAnErrorNeverData) {
  const std::string marker = "CORRUPT-ME:";
  const std::string victim = marker + std::string(5000, 'q');
  Digest bad{};
  Digest good{};
  {
    auto store = open();
    ASSERT_TRUE(store);
    bad = *store->put(victim);
    good = *store->put("healthy");
    ASSERT_TRUE(store->set_ref("keep/bad", bad).ok());
  }
  // Flip one byte of the stored value in the file itself.
  const fs::path data = fs::path(dir_) / "data.mdb";
  std::string bytes = read_file(data);
  std::size_t flips = 0;
  for (auto at = bytes.find(marker); at != std::string::npos; at = bytes.find(marker, at + 1)) {
    bytes[at + marker.size() + 100] = 'Q';
    ++flips;
  }
  ASSERT_GE(flips, 1u);
  write_file(data, bytes);

  auto store = open(Mode::ReadOnly);
  ASSERT_TRUE(store);
  auto got = store->get(bad);
  EXPECT_EQ(code_of(got), codes::kStoreCorrupt);
  EXPECT_NE(got.diagnostics().front().message.find(mf::hash::to_hex(bad)), std::string::npos);
  EXPECT_TRUE(*store->has(bad));
  EXPECT_EQ(*store->get(good), "healthy");

  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  EXPECT_EQ(code_of(store->get_to_fd(bad, fds[1])), codes::kStoreCorrupt);
  ::close(fds[1]);
  char c = 0;
  EXPECT_EQ(::read(fds[0], &c, 1), 0);  // nothing was written
  ::close(fds[0]);

  std::vector<std::uint64_t> seen;
  auto report = store->verify([&](std::uint64_t done, std::uint64_t) { seen.push_back(done); });
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->checked, 2u);
  ASSERT_EQ(report->corrupt.size(), 1u);
  EXPECT_EQ(report->corrupt.front(), bad);
  EXPECT_FALSE(seen.empty());
  EXPECT_EQ(seen.back(), 2u);

  const int null = ::open("/dev/null", O_WRONLY);
  EXPECT_EQ(code_of(store->export_closure({}, {"keep/bad"}, null)), codes::kStoreCorrupt);
  ::close(null);
}

TEST_F(StoreTest, ReadOnlyStoreReadsButRefusesWrites) {
  Digest d{};
  {
    auto store = open();
    ASSERT_TRUE(store);
    d = *store->put("kept");
    ASSERT_TRUE(store->set_ref("r", d).ok());
  }
  auto store = open(Mode::ReadOnly);
  ASSERT_TRUE(store);
  EXPECT_EQ(*store->get(d), "kept");
  EXPECT_EQ(**store->get_ref("r"), d);
  EXPECT_EQ(store->list_refs()->size(), 1u);
  EXPECT_EQ(store->reachable()->size(), 1u);

  write_file(root_ / "f", "file");
  write_file(root_ / "import.jsonl", "");
  EXPECT_EQ(code_of(store->put("new")), codes::kStoreLmdb);
  EXPECT_EQ(code_of(store->put_verified(mf::hash::sha256("new"), "new")), codes::kStoreLmdb);
  EXPECT_EQ(code_of(store->put_file((root_ / "f").string())), codes::kStoreLmdb);
  EXPECT_EQ(code_of(store->set_ref("r2", d)), codes::kStoreLmdb);
  EXPECT_EQ(code_of(store->remove_ref("r")), codes::kStoreLmdb);
  EXPECT_EQ(code_of(store->gc()), codes::kStoreLmdb);
  EXPECT_EQ(code_of(store->import_stream((root_ / "import.jsonl").string())), codes::kStoreLmdb);
  EXPECT_EQ(code_of(store->batch([] { return mf::Status(); })), codes::kStoreLmdb);
  EXPECT_FALSE(*store->has(mf::hash::sha256("new")));
  EXPECT_TRUE(*store->has(d));
}

TEST_F(StoreTest, MissingStoreOnReadIsAnErrorAndCreatesNothing) {
  auto absent = Store::open(dir_, Mode::ReadOnly);
  EXPECT_EQ(code_of(absent), codes::kStoreAbsent);
  EXPECT_FALSE(fs::exists(dir_));

  fs::create_directories(dir_);
  auto empty = Store::open(dir_, Mode::ReadOnly);
  EXPECT_EQ(code_of(empty), codes::kStoreAbsent);
  EXPECT_TRUE(fs::is_empty(dir_));

  // Writing creates it, including missing parents.
  const std::string nested = (root_ / "a" / "b" / "c").string();
  auto created = Store::open(nested, Mode::ReadWrite);
  ASSERT_TRUE(created.ok());
  EXPECT_TRUE(fs::exists(fs::path(nested) / "data.mdb"));
}

TEST_F(StoreTest, OneOpenPerDirectoryPerProcess) {
  auto first = open();
  ASSERT_TRUE(first);
  EXPECT_EQ(code_of(Store::open(dir_, Mode::ReadOnly)), codes::kStoreLmdb);
  first.reset();
  EXPECT_TRUE(Store::open(dir_, Mode::ReadOnly).ok());
}

TEST_F(StoreTest, NotAStoreIsAnLmdbError) {
  fs::create_directories(dir_);
  write_file(fs::path(dir_) / "data.mdb", std::string(8192, 'x'));
  EXPECT_EQ(code_of(Store::open(dir_, Mode::ReadOnly)), codes::kStoreLmdb);
  write_file(root_ / "plain", "x");
  EXPECT_EQ(code_of(Store::open((root_ / "plain").string(), Mode::ReadWrite)), codes::kStoreLmdb);
}

TEST_F(StoreTest, RefsSetGetRemoveList) {
  auto store = open();
  ASSERT_TRUE(store);
  const Digest a = *store->put("a");
  const Digest b = *store->put("b");
  ASSERT_TRUE(store->set_ref("run/r-1/trace", a).ok());
  ASSERT_TRUE(store->set_ref("campaign/c.2/report", b).ok());
  ASSERT_TRUE(store->set_ref("run/r-1/trace", b).ok());  // moves
  EXPECT_EQ(**store->get_ref("run/r-1/trace"), b);
  EXPECT_FALSE(store->get_ref("run/none")->has_value());
  auto refs = store->list_refs();
  ASSERT_TRUE(refs.ok());
  ASSERT_EQ(refs->size(), 2u);
  EXPECT_EQ((*refs)[0].first, "campaign/c.2/report");
  EXPECT_EQ((*refs)[1].first, "run/r-1/trace");
  EXPECT_EQ(store->stats()->refs, 2u);
  EXPECT_TRUE(*store->remove_ref("campaign/c.2/report"));
  EXPECT_FALSE(*store->remove_ref("campaign/c.2/report"));
  EXPECT_EQ(store->list_refs()->size(), 1u);
  // A ref must name a stored object.
  EXPECT_EQ(code_of(store->set_ref("x", mf::hash::sha256("absent"))), codes::kStoreMissingObject);

  for (const std::string& bad :
       std::vector<std::string>{"", "/abs", "a//b", "a/", "./a", "a/../b", "..", "a b", "a\nb", "é",
                                "a:b", std::string(257, 'x'), std::string("a\0b", 3)}) {
    EXPECT_FALSE(mf::store::valid_ref_name(bad)) << bad;
    EXPECT_EQ(code_of(store->set_ref(bad, a)), codes::kStoreBadRef) << bad;
    EXPECT_EQ(code_of(store->get_ref(bad)), codes::kStoreBadRef) << bad;
    EXPECT_EQ(code_of(store->remove_ref(bad)), codes::kStoreBadRef) << bad;
  }
  for (const std::string& good :
       std::vector<std::string>{"a", "run/x/trace", "A.b_c-d", "a/.b/..c", std::string(256, 'x')}) {
    EXPECT_TRUE(mf::store::valid_ref_name(good)) << good;
  }
}

TEST_F(StoreTest, ResolveDirPrefersFlagThenEnvironment) {
  ::unsetenv("MF_STORE");
  EXPECT_EQ(Store::resolve_dir(""), Store::kDefaultDir);
  ::setenv("MF_STORE", "/env/store", 1);
  EXPECT_EQ(Store::resolve_dir(""), "/env/store");
  EXPECT_EQ(Store::resolve_dir("/flag"), "/flag");
  ::unsetenv("MF_STORE");
}

TEST_F(StoreTest, GcKeepsTheClosureOfTheRefs) {
  auto store = open();
  ASSERT_TRUE(store);
  const Digest leaf = *store->put("leaf bytes, not JSON");
  const Digest deep = *store->put("another leaf");
  // JSON mentioning `leaf` deep inside an array, `deep` as a member name, plus a digest the store
  // lacks (ignored).
  const std::string doc = R"({"a":[1,{"b":["x",")" + mf::hash::to_hex(leaf) + R"("]}],"m":{")" +
                          mf::hash::to_hex(deep) + R"(":true},"z":")" +
                          mf::hash::to_hex(mf::hash::sha256("nowhere")) + "\"}";
  const Digest root = *store->put(doc);
  // A JSONL trace mentions a response; its unterminated last line is not JSON.
  const Digest response = *store->put("model response");
  const Digest trace =
      *store->put("{\"seq\":1}\n{\"response\":\"" + mf::hash::to_hex(response) + "\"}\n{\"cut");
  const Digest garbage = *store->put("garbage");
  const Digest garbage_doc =
      *store->put("{\"g\":\"" + mf::hash::to_hex(garbage) + "\"}");  // unreferenced
  // Not JSON: a mention inside is not followed.
  const Digest hidden = *store->put("hidden");
  const Digest opaque = *store->put("not json " + mf::hash::to_hex(hidden) + " ...");
  ASSERT_TRUE(store->set_ref("run/1/plan", root).ok());
  ASSERT_TRUE(store->set_ref("run/1/trace", trace).ok());
  ASSERT_TRUE(store->set_ref("run/1/opaque", opaque).ok());

  std::vector<Digest> expected{leaf, deep, root, response, trace, opaque};
  std::sort(expected.begin(), expected.end());
  auto reach = store->reachable();
  ASSERT_TRUE(reach.ok());
  EXPECT_EQ(*reach, expected);

  auto removed = store->gc();
  ASSERT_TRUE(removed.ok()) << code_of(removed);
  EXPECT_EQ(*removed, 3u);
  for (const auto& d : expected) EXPECT_TRUE(*store->has(d));
  for (const auto& d : {garbage, garbage_doc, hidden}) EXPECT_FALSE(*store->has(d));
  EXPECT_EQ(*store->gc(), 0u);

  ASSERT_TRUE(*store->remove_ref("run/1/plan"));
  EXPECT_EQ(*store->gc(), 3u);  // root, leaf, deep
  EXPECT_TRUE(store->verify()->corrupt.empty());
}

// A mention is followed only inside what the strict reader accepts (json::parse, the store's limits
// but size): the reference scan, which reads a document in one pass without building it, must
// agree with the reader on every document, here one per rule, each mentioning its own leaf.
TEST_F(StoreTest, ReferenceScanAgreesWithTheStrictReader) {
  auto store = open();
  ASSERT_TRUE(store);
  const std::string deep_ok = std::string(63, '[') + "\"@\"" + std::string(63, ']');
  const std::string deep_bad = std::string(64, '[') + "\"@\"" + std::string(64, ']');
  const std::vector<std::string> shapes = {R"({"a":"@"})",
                                           R"(["@"])",
                                           R"("@")",
                                           R"( {"@" : 1} )",
                                           "\t[\"@\"]\r",
                                           R"({"a":"@","a":1})",
                                           R"({"a":"@","b":{"c":1,"c":2}})",
                                           R"({"a":"@","b":{"c":1},"c":2})",
                                           deep_ok,
                                           deep_bad,
                                           R"(["@",1e308,-0.5E-3,0,-0,12.25e+2])",
                                           R"(["@",1e400])",
                                           R"(["@",1e-400])",
                                           R"(["@",01])",
                                           R"(["@",-])",
                                           R"(["@",1.])",
                                           R"(["@",.5])",
                                           R"(["@",+1])",
                                           "[\"@\"," + std::string(128, '1') + "]",
                                           "[\"@\"," + std::string(129, '1') + "]",
                                           R"(["@",true,false,null])",
                                           R"(["@",tru])",
                                           R"(["@",nul])",
                                           R"(["@","\ud83d\ude00"])",
                                           R"(["@","\udc00"])",
                                           R"(["@","\ud83d"])",
                                           R"(["@","\ud83dx"])",
                                           R"(["@","\ud83d\u0041"])",
                                           R"(["@","\u00e9\/\b\f\n\r\t\"\\"])",
                                           R"(["@","\x"])",
                                           R"(["@","\u12g4"])",
                                           "[\"@\",\"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\"]",
                                           "[\"@\",\"\xC0\x80\"]",
                                           "[\"@\",\"\xED\xA0\x80\"]",
                                           "[\"@\",\"\xF5\x80\x80\x80\"]",
                                           "[\"@\",\"\xE2\x82\"]",
                                           "[\"@\",\"a\x01\"]",
                                           std::string("[\"@\",\"a\0\"]", 9),
                                           std::string("[\"@\"]\0", 6),
                                           R"(["@"] x)",
                                           R"(["@"],)",
                                           R"(["@",])",
                                           R"({"a":"@",})",
                                           R"({"a" "@"})",
                                           R"({1:"@"})",
                                           R"(["@" 1])",
                                           "[\"@\"",
                                           "",
                                           R"(["@",{},[],""])",
                                           R"(["@",[1,[2,{"k":[]}]]])",
                                           "[\"@\",\"\x7F\"]",
                                           R"(["@","\u0000"])"};
  std::vector<Digest> expected;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const Digest leaf = *store->put("leaf " + std::to_string(i));
    std::string doc = shapes[i];
    const auto at = doc.find('@');
    if (at != std::string::npos) doc.replace(at, 1, mf::hash::to_hex(leaf));
    // A mention spelled with escapes is a mention too (the document's third shape only).
    if (i == 2) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\u%04x", static_cast<unsigned>(doc[1]));
      doc = "\"" + std::string(escape) + doc.substr(2);
    }
    mf::json::ReadLimits limits;
    limits.max_bytes = limits.max_string_bytes = doc.size() + 1;
    const bool valid = mf::json::parse(doc, limits).ok();
    const Digest root = *store->put(doc);
    ASSERT_TRUE(store->set_ref("doc/" + std::to_string(i), root).ok());
    expected.push_back(root);
    if (valid && at != std::string::npos) expected.push_back(leaf);
  }
  std::sort(expected.begin(), expected.end());
  expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
  auto reach = store->reachable();
  ASSERT_TRUE(reach.ok());
  EXPECT_EQ(*reach, expected);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', start)) {
    out.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  EXPECT_EQ(start, text.size()) << "stream does not end with a newline";
  return out;
}

class StoreExportTest : public StoreTest {
 protected:
  // Exports root's closure and ref "t" from a populated store into root_/export.jsonl.
  void populate_and_export() {
    auto store = open();
    ASSERT_TRUE(store);
    for (std::size_t n = 0; n <= 5; ++n) closure_.push_back(*store->put(pseudo_random(n, n)));
    std::string all_bytes;
    for (int i = 0; i < 256; ++i) all_bytes += static_cast<char>(i);
    closure_.push_back(*store->put(all_bytes));
    closure_.push_back(*store->put(pseudo_random(700000, 42)));
    std::string doc = "{\"parts\":[";
    for (std::size_t i = 0; i < closure_.size(); ++i) {
      doc += (i ? ",\"" : "\"") + mf::hash::to_hex(closure_[i]) + "\"";
    }
    doc += "]}";
    root_digest_ = *store->put(doc);
    closure_.push_back(root_digest_);
    tagged_ = *store->put("tagged");
    closure_.push_back(tagged_);
    std::sort(closure_.begin(), closure_.end());
    closure_.erase(std::unique(closure_.begin(), closure_.end()), closure_.end());
    ASSERT_TRUE(store->set_ref("t", tagged_).ok());
    (void)*store->put("not exported");

    const int fd = ::open((root_ / "export.jsonl").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    auto st = store->export_closure({root_digest_}, {"t"}, fd);
    ::close(fd);
    ASSERT_TRUE(st.ok()) << code_of(st);
    stream_ = read_file(root_ / "export.jsonl");

    EXPECT_EQ(code_of(store->export_closure({mf::hash::sha256("nope")}, {}, fd)),
              codes::kStoreMissingObject);
    EXPECT_EQ(code_of(store->export_closure({}, {"no/such/ref"}, fd)), codes::kStoreMissingObject);
    EXPECT_EQ(code_of(store->export_closure({}, {"../bad"}, fd)), codes::kStoreBadRef);
  }

  std::vector<Digest> closure_;
  Digest root_digest_{};
  Digest tagged_{};
  std::string stream_;
};

TEST_F(StoreExportTest, ExportImportRoundTrip) {
  populate_and_export();
  const auto lines = lines_of(stream_);
  ASSERT_EQ(lines.size(), closure_.size() + 1);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    auto v = mf::json::parse(lines[i]);
    ASSERT_TRUE(v.ok()) << lines[i].substr(0, 80);
    EXPECT_EQ(mf::json::canonical(*v), lines[i]);  // canonical JSON
    if (i < closure_.size()) {
      EXPECT_EQ(v->find("digest")->as_string(), mf::hash::to_hex(closure_[i]));  // sorted
    }
  }
  EXPECT_EQ(lines.back(), "{\"digest\":\"" + mf::hash::to_hex(tagged_) + "\",\"ref\":\"t\"}");

  const std::string other = (root_ / "other").string();
  auto fresh = open(Mode::ReadWrite, other);
  ASSERT_TRUE(fresh);
  auto added = fresh->import_stream((root_ / "export.jsonl").string());
  ASSERT_TRUE(added.ok()) << code_of(added) << " " << added.diagnostics().front().message;
  EXPECT_EQ(*added, closure_.size());
  auto again = fresh->import_stream((root_ / "export.jsonl").string());  // idempotent
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, 0u);

  auto report = fresh->verify();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->corrupt.empty());
  EXPECT_TRUE(report->dangling_refs.empty());
  auto listed = fresh->list();
  ASSERT_TRUE(listed.ok());
  std::vector<Digest> have;
  for (const auto& o : *listed) have.push_back(o.digest);
  EXPECT_EQ(have, closure_);
  EXPECT_EQ(**fresh->get_ref("t"), tagged_);

  // Exporting the same closure from the copy gives the same stream, byte for byte.
  const int fd = ::open((root_ / "again.jsonl").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  EXPECT_TRUE(fresh->export_closure({root_digest_}, {"t"}, fd).ok());
  ::close(fd);
  EXPECT_EQ(read_file(root_ / "again.jsonl"), stream_);
}

TEST_F(StoreExportTest, ImportRejectsATamperedLine) {
  populate_and_export();
  auto lines = lines_of(stream_);
  ASSERT_GE(lines.size(), 4u);
  // Line 2: change one base64 character (still valid base64, different bytes).
  std::string tampered = lines[1];
  const auto at = tampered.find("\"data_b64\":\"") + 12;
  tampered[at] = tampered[at] == 'A' ? 'B' : 'A';
  const std::string stream = lines[0] + "\n" + tampered + "\n" + lines[2] + "\n";
  write_file(root_ / "tampered.jsonl", stream);

  const std::string other = (root_ / "other").string();
  auto fresh = open(Mode::ReadWrite, other);
  ASSERT_TRUE(fresh);
  auto r = fresh->import_stream((root_ / "tampered.jsonl").string());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(code_of(r), codes::kStoreDigestMismatch);
  EXPECT_EQ(r.diagnostics().front().line, 2);
  EXPECT_TRUE(*fresh->has(closure_[0]));   // the line before is kept
  EXPECT_FALSE(*fresh->has(closure_[1]));  // nothing from the bad line
  EXPECT_FALSE(*fresh->has(closure_[2]));  // nor after it
  EXPECT_EQ(fresh->stats()->objects, 1u);

  const std::string good = lines[3];
  const std::string digest = mf::hash::to_hex(mf::hash::sha256("x"));
  const std::vector<std::pair<std::string, std::string>> bad_lines{
      {"not json", codes::kStoreBadExport},
      {"[1]", codes::kStoreBadExport},
      {"", codes::kStoreBadExport},
      {R"({"data_b64":"eA==","digest":")" + digest + R"(","size":2})", codes::kStoreBadExport},
      {R"({"data_b64":"eA=","digest":")" + digest + R"(","size":1})", codes::kStoreBadExport},
      {R"({"data_b64":"eB==","digest":")" + digest + R"(","size":1})", codes::kStoreBadExport},
      {R"({"data_b64":"eA==","digest":")" + digest + R"(","size":1,"x":1})",
       codes::kStoreBadExport},
      {R"({"data_b64":"eA==","digest":")" + digest + R"(","size":-1})", codes::kStoreBadExport},
      {R"({"data_b64":"eA==","digest":"ABC","size":1})", codes::kStoreBadExport},
      {R"({"data_b64":"eQ==","digest":")" + digest + R"(","size":1})", codes::kStoreDigestMismatch},
      {R"({"digest":")" + digest + R"(","ref":"../up"})", codes::kStoreBadRef},
      {R"({"digest":")" + mf::hash::to_hex(mf::hash::sha256("nowhere")) + R"(","ref":"r"})",
       codes::kStoreMissingObject},
  };
  for (const auto& [line, code] : bad_lines) {
    write_file(root_ / "bad.jsonl", good + "\n" + line + "\n");
    auto res = fresh->import_stream((root_ / "bad.jsonl").string());
    EXPECT_EQ(code_of(res), code) << line;
    if (!res.ok()) {
      EXPECT_EQ(res.diagnostics().front().line, 2) << line;
    }
  }
  // The valid "x" object line imports fine; the stream may lack a final newline.
  write_file(root_ / "x.jsonl", R"({"data_b64":"eA==","digest":")" + digest + R"(","size":1})");
  auto x = fresh->import_stream((root_ / "x.jsonl").string());
  ASSERT_TRUE(x.ok()) << code_of(x);
  EXPECT_EQ(*x, 1u);
  EXPECT_EQ(*fresh->get(mf::hash::sha256("x")), "x");
  EXPECT_EQ(code_of(fresh->import_stream((root_ / "missing.jsonl").string())), codes::kMissing);
}

// ---- several processes on one store ----

std::string writer_object(int writer, int i) {
  std::size_t size = 64 + static_cast<std::size_t>((i * 7919 + writer * 104729) % 12000);
  if (i % 40 == 0) size += 100000;  // some values on overflow pages
  return "writer " + std::to_string(writer) + " object " + std::to_string(i) + "\n" +
         pseudo_random(size, static_cast<std::uint64_t>(writer * 1000 + i));
}

TEST_F(StoreTest, ConcurrentWritersAndReadersLoseNothing) {
  OpenOptions small;
  small.initial_map_bytes = 1u << 20;  // the writers must grow the map while others use it
  Digest seed{};
  {
    auto store = open(Mode::ReadWrite, {}, small);
    ASSERT_TRUE(store);
    seed = *store->put("seed");
  }
  constexpr int kWriters = 4;
  constexpr int kReaders = 2;
  constexpr int kPerWriter = 200;
  // Readers loop until the parent closes this pipe, after every writer has exited, so they keep
  // reading while the writers grow the map under them.
  int stop[2];
  ASSERT_EQ(::pipe(stop), 0);
  ASSERT_EQ(::fcntl(stop[0], F_SETFL, O_NONBLOCK), 0);
  std::vector<pid_t> writers;
  std::vector<pid_t> readers;
  for (int w = 0; w < kWriters + kReaders; ++w) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid != 0) {
      (w < kWriters ? writers : readers).push_back(pid);
      continue;
    }
    ::close(stop[1]);
    int rc = 0;
    {
      auto opened = Store::open(dir_, Mode::ReadWrite, small);
      if (!opened) ::_exit(10);
      Store& store = **opened;
      if (w < kWriters) {
        for (int i = 0; i < kPerWriter && rc == 0; ++i) {
          const std::string bytes = writer_object(w, i);
          auto d = store.put(bytes);
          if (!d || *d != mf::hash::sha256(bytes)) rc = 11;
        }
      } else {
        char c = 0;
        while (rc == 0 && ::read(stop[0], &c, 1) < 0 && errno == EAGAIN) {
          for (int i = 0; i < kPerWriter && rc == 0; ++i) {
            const int ww = (i + w) % kWriters;
            const std::string want = writer_object(ww, i);
            auto got = store.get(mf::hash::sha256(want));
            if (got.ok() ? *got != want : code_of(got) != codes::kStoreMissingObject) rc = 12;
          }
          auto s = store.get(seed);
          if (!s || *s != "seed") rc = 13;
        }
      }
    }
    ::_exit(rc);
  }
  ::close(stop[0]);
  const auto reap = [](pid_t pid) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "child exit " << (WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  };
  for (const pid_t pid : writers) reap(pid);
  ::close(stop[1]);
  for (const pid_t pid : readers) reap(pid);
  auto store = open(Mode::ReadOnly);
  ASSERT_TRUE(store);
  for (int w = 0; w < kWriters; ++w) {
    for (int i = 0; i < kPerWriter; ++i) {
      const std::string want = writer_object(w, i);
      auto got = store->get(mf::hash::sha256(want));
      ASSERT_TRUE(got.ok()) << "writer " << w << " object " << i << " " << code_of(got);
      EXPECT_EQ(*got, want);
    }
  }
  auto report = store->verify();
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->checked, std::uint64_t{kWriters * kPerWriter + 1});
  EXPECT_TRUE(report->corrupt.empty());
}

TEST_F(StoreTest, AcknowledgedPutsSurviveKill9) {
  { ASSERT_TRUE(open()); }
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(fds[0]);
    auto opened = Store::open(dir_, Mode::ReadWrite);
    if (!opened) ::_exit(10);
    for (std::uint64_t i = 0;; ++i) {
      auto d = (*opened)->put(pseudo_random(100 + (i * 7919) % 70000, i));
      if (!d) ::_exit(11);
      const std::string line = mf::hash::to_hex(*d) + "\n";  // one atomic pipe write
      if (::write(fds[1], line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
        ::_exit(12);
      }
    }
  }
  ::close(fds[1]);
  std::string acks;
  char buf[4096];
  while (std::count(acks.begin(), acks.end(), '\n') < 50) {
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    ASSERT_GT(n, 0) << "writer stopped early";
    acks.append(buf, static_cast<std::size_t>(n));
  }
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) {  // acks sent before it died
    acks.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);

  auto store = open();
  ASSERT_TRUE(store);
  auto report = store->verify();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->corrupt.empty());
  const auto lines = lines_of(acks);
  EXPECT_GE(lines.size(), 50u);
  EXPECT_GE(report->checked, lines.size());
  for (const auto& hex : lines) {
    Digest d{};
    ASSERT_TRUE(mf::hash::from_hex(hex, d)) << hex;
    auto bytes = store->get(d);
    ASSERT_TRUE(bytes.ok()) << hex << " " << code_of(bytes);
  }
  // The store still takes writes after the writer died holding it.
  EXPECT_TRUE(store->put("after the crash").ok());
}

}  // namespace
