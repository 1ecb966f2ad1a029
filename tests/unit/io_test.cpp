#include "mf/io/file.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "mf/diag/codes.hpp"

namespace fs = std::filesystem;
namespace codes = mf::diag::codes;
using mf::io::Clobber;

namespace {

// Each test gets a fresh directory so "no temp files left behind" can be checked by listing it.
class IoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::path(testing::TempDir()) / "mf_io_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr) << std::strerror(errno);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(dir_, ec);
  }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  static void write_file(const std::string& p, const std::string& bytes) {
    std::ofstream f(p, std::ios::binary);
    f << bytes;
    ASSERT_TRUE(f.good());
  }
  static std::string slurp(const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  }
  // Every name in the test directory, to prove that no temp file survived.
  std::set<std::string> entries() const {
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.insert(e.path().filename().string());
    return names;
  }

  fs::path dir_;
};

std::string code_of(const mf::diag::Diagnostics& ds) {
  return ds.empty() ? "" : ds.front().code;
}

// Runs fn with fd `target` (0 or 1) temporarily redirected to `replacement`.
template <class Fn>
void with_fd_redirected(int target, int replacement, Fn fn) {
  int saved = ::dup(target);
  ASSERT_GE(saved, 0);
  ASSERT_GE(::dup2(replacement, target), 0);
  fn();
  ::dup2(saved, target);
  ::close(saved);
}

using IoReadTest = IoTest;
using IoPublishTest = IoTest;
using IoWriteTest = IoTest;

TEST_F(IoReadTest, ReadsRegularFileExactly) {
  std::string bytes("line one\n\0binary\r\n", 18);
  write_file(path("in.json"), bytes);
  auto r = mf::io::read_input(path("in.json"));
  ASSERT_TRUE(r.ok()) << r.diagnostics().front().message;
  EXPECT_EQ(*r, bytes);
}

TEST_F(IoReadTest, ReadsEmptyFile) {
  write_file(path("empty"), "");
  auto r = mf::io::read_input(path("empty"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, "");
}

TEST_F(IoReadTest, MissingFileIsS013) {
  auto r = mf::io::read_input(path("absent.json"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(code_of(r.diagnostics()), codes::kMissing);
  // The file is the diagnostic's source, named once on its line, not again in the message.
  EXPECT_EQ(r.diagnostics().front().source, path("absent.json"));
  EXPECT_EQ(r.diagnostics().front().message, "no such input file");
}

TEST_F(IoReadTest, MissingParentDirectoryIsS013) {
  auto r = mf::io::read_input(path("nodir/absent.json"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(code_of(r.diagnostics()), codes::kMissing);
}

TEST_F(IoReadTest, DirectoryIsS014) {
  auto r = mf::io::read_input(dir_.string());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(code_of(r.diagnostics()), codes::kNotRegularFile);
}

TEST_F(IoReadTest, FifoIsS014WithoutBlocking) {
  // Opening a FIFO with no writer blocks unless the reader guards against it.
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  auto r = mf::io::read_input(path("fifo"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(code_of(r.diagnostics()), codes::kNotRegularFile);
}

TEST_F(IoReadTest, OversizeIsS003AndExactLimitIsAccepted) {
  write_file(path("ten"), "0123456789");
  auto exact = mf::io::read_input(path("ten"), 10);
  ASSERT_TRUE(exact.ok());
  EXPECT_EQ(*exact, "0123456789");

  auto over = mf::io::read_input(path("ten"), 9);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(code_of(over.diagnostics()), codes::kTooLarge);
}

TEST_F(IoReadTest, UnreadableFileIsS013) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads files regardless of permissions";
  write_file(path("secret"), "x");
  ASSERT_EQ(::chmod(path("secret").c_str(), 0), 0);
  auto r = mf::io::read_input(path("secret"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(code_of(r.diagnostics()), codes::kMissing);
}

TEST_F(IoReadTest, DashReadsStdinWithinBound) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  ASSERT_EQ(::write(p[1], "{\"a\":1}", 7), 7);
  ::close(p[1]);
  mf::Result<std::string> r = std::string();
  with_fd_redirected(STDIN_FILENO, p[0], [&] { r = mf::io::read_input("-"); });
  ::close(p[0]);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, "{\"a\":1}");
}

TEST_F(IoReadTest, DashOversizeIsS003) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  ASSERT_EQ(::write(p[1], "0123456789", 10), 10);
  ::close(p[1]);
  mf::Result<std::string> r = std::string();
  with_fd_redirected(STDIN_FILENO, p[0], [&] { r = mf::io::read_input("-", 4); });
  ::close(p[0]);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(code_of(r.diagnostics()), codes::kTooLarge);
}

// The descriptor readers: read_chunks, pread_chunks and read_capped.

using IoChunkTest = IoTest;

// Bytes that show any misplaced or repeated chunk.
std::string patterned(std::size_t n) {
  std::string bytes(n, '\0');
  for (std::size_t i = 0; i < n; ++i) bytes[i] = static_cast<char>(i * 131 % 251);
  return bytes;
}

// A pipe that a thread fills with `bytes`, then closes; the reader end is `read_end`. Destroying it
// waits for the writer, so whoever reads must drain the pipe first.
class FedPipe {
 public:
  explicit FedPipe(const std::string& bytes) {
    if (::pipe(fds_) != 0) throw std::runtime_error("pipe");
    writer_ = std::thread([this, &bytes] {
      EXPECT_TRUE(mf::io::write_all(fds_[1], bytes).ok());
      ::close(fds_[1]);
    });
  }
  FedPipe(const FedPipe&) = delete;
  FedPipe& operator=(const FedPipe&) = delete;
  ~FedPipe() {
    writer_.join();
    ::close(fds_[0]);
  }
  int read_end() const { return fds_[0]; }

 private:
  int fds_[2] = {-1, -1};
  std::thread writer_;
};

int open_read(const std::string& p) {
  return ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
}

TEST_F(IoChunkTest, ChunksConcatenateToTheFileAndHonourTheChunkSize) {
  const std::string bytes = patterned(100003);
  write_file(path("in"), bytes);
  mf::io::Fd fd(open_read(path("in")));
  ASSERT_TRUE(fd.valid());
  std::vector<std::size_t> sizes;
  std::string got;
  ASSERT_EQ(mf::io::read_chunks(fd.get(), 4096,
                                [&](std::string_view chunk) {
                                  sizes.push_back(chunk.size());
                                  got.append(chunk);
                                  return true;
                                }),
            0);
  EXPECT_EQ(got, bytes);
  // A regular file fills every chunk but the last.
  ASSERT_EQ(sizes.size(), 25u);
  for (std::size_t i = 0; i + 1 < sizes.size(); ++i) EXPECT_EQ(sizes[i], 4096u) << i;
  EXPECT_EQ(sizes.back(), 100003u - 24 * 4096);
}

TEST_F(IoChunkTest, ChunksOfAPipeNeverExceedTheChunkSize) {
  const std::string bytes = patterned(300007);
  std::string got;
  std::size_t largest = 0;
  int rc = -1;
  {
    const FedPipe pipe(bytes);
    rc = mf::io::read_chunks(pipe.read_end(), 1000, [&](std::string_view chunk) {
      largest = std::max(largest, chunk.size());
      got.append(chunk);
      return true;
    });
  }
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(got, bytes);
  EXPECT_EQ(largest, 1000u);
}

TEST_F(IoChunkTest, ZeroChunkSizeReadsOneByteAtATime) {
  write_file(path("in"), "abc");
  mf::io::Fd fd(open_read(path("in")));
  std::vector<std::string> chunks;
  EXPECT_EQ(mf::io::read_chunks(fd.get(), 0,
                                [&](std::string_view chunk) {
                                  chunks.emplace_back(chunk);
                                  return true;
                                }),
            0);
  EXPECT_EQ(chunks, (std::vector<std::string>{"a", "b", "c"}));
}

TEST_F(IoChunkTest, EmptyFileCallsNothing) {
  write_file(path("empty"), "");
  mf::io::Fd fd(open_read(path("empty")));
  int calls = 0;
  const auto count = [&](std::string_view) { return ++calls, true; };
  EXPECT_EQ(mf::io::read_chunks(fd.get(), 64, count), 0);
  EXPECT_EQ(mf::io::pread_chunks(fd.get(), 0, 64, count), 0);
  std::string out = "stale";
  EXPECT_EQ(mf::io::read_capped(fd.get(), out, 0), 0);
  EXPECT_EQ(out, "");
  EXPECT_EQ(calls, 0);
}

TEST_F(IoChunkTest, TheCallbackStopsTheReadingWhereItIs) {
  write_file(path("in"), patterned(10000));
  mf::io::Fd fd(open_read(path("in")));
  int calls = 0;
  EXPECT_EQ(mf::io::read_chunks(fd.get(), 100, [&](std::string_view) { return ++calls < 3; }), 0);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(::lseek(fd.get(), 0, SEEK_CUR), 300);  // nothing read past the last chunk handed on
}

TEST_F(IoChunkTest, PreadChunksStartAtTheOffsetAndLeaveTheDescriptorsOffsetAlone) {
  const std::string bytes = patterned(10000);
  write_file(path("in"), bytes);
  mf::io::Fd fd(open_read(path("in")));
  ASSERT_EQ(::lseek(fd.get(), 17, SEEK_SET), 17);
  std::vector<std::size_t> sizes;
  std::string got;
  ASSERT_EQ(mf::io::pread_chunks(fd.get(), 1000, 333,
                                 [&](std::string_view chunk) {
                                   sizes.push_back(chunk.size());
                                   got.append(chunk);
                                   return true;
                                 }),
            0);
  EXPECT_EQ(got, bytes.substr(1000));
  ASSERT_EQ(sizes.size(), 28u);  // 9000 = 27 * 333 + 9
  EXPECT_EQ(sizes.front(), 333u);
  EXPECT_EQ(sizes.back(), 9u);
  EXPECT_EQ(::lseek(fd.get(), 0, SEEK_CUR), 17);

  int calls = 0;
  EXPECT_EQ(
      mf::io::pread_chunks(fd.get(), 20000, 333, [&](std::string_view) { return ++calls, true; }),
      0);
  EXPECT_EQ(calls, 0);  // past the end: end of file at once
}

TEST_F(IoChunkTest, ReadErrorsAreNegativeErrnoAndDeliverNothing) {
  mf::io::Fd dir(::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(dir.valid());
  int calls = 0;
  const auto count = [&](std::string_view) { return ++calls, true; };
  EXPECT_EQ(mf::io::read_chunks(dir.get(), 64, count), -EISDIR);
  EXPECT_EQ(mf::io::pread_chunks(dir.get(), 0, 64, count), -EISDIR);
  std::string out;
  EXPECT_EQ(mf::io::read_capped(dir.get(), out, 64), -EISDIR);
  EXPECT_EQ(out, "");

  // A descriptor that was closed.
  const int fd = ::dup(dir.get());
  ASSERT_GE(fd, 0);
  ::close(fd);
  EXPECT_EQ(mf::io::read_chunks(fd, 64, count), -EBADF);
  EXPECT_EQ(mf::io::pread_chunks(fd, 0, 64, count), -EBADF);
  EXPECT_EQ(mf::io::read_capped(fd, out, 64), -EBADF);

  // pread has no meaning on a pipe.
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  EXPECT_EQ(mf::io::pread_chunks(p[0], 0, 64, count), -ESPIPE);
  ::close(p[0]);
  ::close(p[1]);
  EXPECT_EQ(calls, 0);
}

TEST_F(IoChunkTest, ReadCappedTakesAFileOfExactlyTheCapAndRefusesOneByteMore) {
  const std::string bytes = patterned(1000);
  write_file(path("in"), bytes);
  for (const std::uint64_t hint : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{999},
                                   std::uint64_t{1000}, std::uint64_t{1} << 20}) {
    SCOPED_TRACE(hint);
    mf::io::Fd fd(open_read(path("in")));
    std::string out = "previous bytes are replaced";
    EXPECT_EQ(mf::io::read_capped(fd.get(), out, 1000, hint), 0);
    EXPECT_EQ(out, bytes);

    mf::io::Fd again(open_read(path("in")));
    EXPECT_EQ(mf::io::read_capped(again.get(), out, 999, hint), -EFBIG);
    EXPECT_EQ(out, bytes);  // max_bytes + 1 bytes: the proof, and no more
    EXPECT_EQ(::lseek(again.get(), 0, SEEK_CUR), 1000);
  }
}

TEST_F(IoChunkTest, ReadCappedGrowsPastAWrongHintAndStopsAtTheCap) {
  // A pipe has no size to hint; its bytes arrive in pieces.
  for (const std::size_t cap : {std::size_t{1} << 20, std::size_t{100000}}) {
    SCOPED_TRACE(cap);
    const std::string bytes = patterned(300007);
    std::string out;
    std::string rest;  // what the reader left in the pipe, so that the writer can finish
    int rc = -1;
    {
      const FedPipe pipe(bytes);
      rc = mf::io::read_capped(pipe.read_end(), out, cap, 10);
      EXPECT_EQ(mf::io::read_all(pipe.read_end(), rest), 0);
    }
    if (cap > bytes.size()) {
      EXPECT_EQ(rc, 0);
      EXPECT_EQ(out, bytes);
      EXPECT_EQ(rest, "");
    } else {
      EXPECT_EQ(rc, -EFBIG);
      EXPECT_EQ(out, bytes.substr(0, cap + 1));
      EXPECT_EQ(rest, bytes.substr(cap + 1));  // not one byte more was taken
    }
  }
}

// A signal that lands while the reader is blocked (handler installed without SA_RESTART) makes
// read(2) fail with EINTR; the reader must go on and deliver every byte.
TEST_F(IoChunkTest, ReadsRetryAfterASignalInterruptsThem) {
  static std::atomic<int> handled{0};
  struct sigaction sa {};
  sa.sa_handler = [](int) { handled.fetch_add(1); };
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: the blocked read returns EINTR
  struct sigaction old {};
  ASSERT_EQ(::sigaction(SIGUSR1, &sa, &old), 0);

  for (const bool capped : {false, true}) {
    SCOPED_TRACE(capped ? "read_capped" : "read_chunks");
    int p[2];
    ASSERT_EQ(::pipe(p), 0);
    std::atomic<pid_t> tid{0};
    int rc = 1;
    std::string got;
    std::thread reader([&] {
      tid.store(static_cast<pid_t>(::syscall(SYS_gettid)));
      if (capped) {
        rc = mf::io::read_capped(p[0], got, 1000);
      } else {
        rc = mf::io::read_chunks(p[0], 64, [&](std::string_view c) { return got.append(c), true; });
      }
    });
    // Wait until the reader sleeps in read(2) (the only place it can block), then interrupt it.
    while (tid.load() == 0) std::this_thread::yield();
    const std::string stat = "/proc/self/task/" + std::to_string(tid.load()) + "/stat";
    for (;;) {
      const std::string line = slurp(stat);
      const std::size_t paren = line.rfind(')');
      if (paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'S') break;
      std::this_thread::yield();
    }
    const int before = handled.load();
    ASSERT_EQ(::pthread_kill(reader.native_handle(), SIGUSR1), 0);
    while (handled.load() == before) std::this_thread::yield();
    ASSERT_EQ(::write(p[1], "after the signal", 16), 16);
    ::close(p[1]);
    reader.join();
    ::close(p[0]);
    EXPECT_EQ(rc, 0);
    EXPECT_EQ(got, "after the signal");
  }
  ::sigaction(SIGUSR1, &old, nullptr);
}

TEST_F(IoPublishTest, CreatesFileAndLeavesNoTemp) {
  auto s = mf::io::publish_atomic(path("plan.json"), "{}\n");
  ASSERT_TRUE(s.ok()) << s.diagnostics().front().message;
  EXPECT_EQ(slurp(path("plan.json")), "{}\n");
  EXPECT_EQ(entries(), std::set<std::string>{"plan.json"});
}

TEST_F(IoPublishTest, WriterFillsTheFileAndLeavesNoTemp) {
  auto s = mf::io::publish_atomic(path("stream.jsonl"), [](int fd) {
    if (auto w = mf::io::write_all(fd, "one\n"); !w) return w;
    return mf::io::write_all(fd, "two\n");
  });
  ASSERT_TRUE(s.ok()) << s.diagnostics().front().message;
  EXPECT_EQ(slurp(path("stream.jsonl")), "one\ntwo\n");
  EXPECT_EQ(entries(), std::set<std::string>{"stream.jsonl"});
}

// Pieces of odd sizes across several writeback starts: the file is the pieces in order; a write
// to a descriptor that cannot take it is refused.
TEST_F(IoPublishTest, ASyncedWriterWritesEveryPieceInOrder) {
  std::string expected;
  auto s = mf::io::publish_atomic(path("big.json"), [&](int fd) {
    mf::io::SyncedWriter out(fd);
    for (std::size_t i = 0; expected.size() < 3 * mf::io::SyncedWriter::kStartBytes + 5; ++i) {
      const std::string piece(1 + (i * 7919) % 300000, static_cast<char>('a' + i % 26));
      expected += piece;
      if (auto w = out.write(piece); !w) return w;
    }
    return mf::Status();
  });
  ASSERT_TRUE(s.ok()) << s.diagnostics().front().message;
  EXPECT_EQ(slurp(path("big.json")), expected);
  EXPECT_EQ(entries(), std::set<std::string>{"big.json"});
  mf::io::SyncedWriter closed(-1);
  EXPECT_FALSE(closed.write("x").ok());
}

TEST_F(IoPublishTest, FailingWriterKeepsItsDiagnosticAndLeavesNothing) {
  for (Clobber c : {Clobber::Refuse, Clobber::Replace}) {
    auto s = mf::io::publish_atomic(
        path("stream.jsonl"),
        [](int fd) -> mf::Status {
          if (auto w = mf::io::write_all(fd, "partial"); !w) return w;
          return mf::diag::error(codes::kStoreCorrupt, "object is corrupt");
        },
        c);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(code_of(s.diagnostics()), codes::kStoreCorrupt);
    EXPECT_EQ(s.diagnostics().front().message, "object is corrupt");
    EXPECT_TRUE(entries().empty());
  }
}

TEST_F(IoPublishTest, WriterRefuseComparesWhatItWrote) {
  const auto writes = [](std::string bytes) {
    return [bytes](int fd) { return mf::io::write_all(fd, bytes); };
  };
  write_file(path("a.json"), "same\n");
  EXPECT_TRUE(mf::io::publish_atomic(path("a.json"), writes("same\n"), Clobber::Refuse).ok());
  auto s = mf::io::publish_atomic(path("a.json"), writes("other\n"), Clobber::Refuse);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(code_of(s.diagnostics()), codes::kClobber);
  EXPECT_EQ(slurp(path("a.json")), "same\n");
  EXPECT_EQ(entries(), std::set<std::string>{"a.json"});
}

TEST_F(IoPublishTest, CreatesEmptyFile) {
  ASSERT_TRUE(mf::io::publish_atomic(path("empty"), "").ok());
  EXPECT_TRUE(fs::is_regular_file(path("empty")));
  EXPECT_EQ(fs::file_size(path("empty")), 0u);
}

TEST_F(IoPublishTest, RefuseWithIdenticalBytesIsIdempotent) {
  ASSERT_TRUE(mf::io::publish_atomic(path("a.json"), "same\n").ok());
  struct stat before {};
  ASSERT_EQ(::stat(path("a.json").c_str(), &before), 0);

  auto again = mf::io::publish_atomic(path("a.json"), "same\n", Clobber::Refuse);
  ASSERT_TRUE(again.ok());
  struct stat after {};
  ASSERT_EQ(::stat(path("a.json").c_str(), &after), 0);
  // The file was left alone, not replaced by an equal copy.
  EXPECT_EQ(before.st_ino, after.st_ino);
  EXPECT_EQ(slurp(path("a.json")), "same\n");
  EXPECT_EQ(entries(), std::set<std::string>{"a.json"});
}

TEST_F(IoPublishTest, RefuseWithDifferentBytesIsO004AndKeepsOriginal) {
  write_file(path("a.json"), "original\n");
  auto s = mf::io::publish_atomic(path("a.json"), "replacement\n", Clobber::Refuse);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(code_of(s.diagnostics()), codes::kClobber);
  EXPECT_EQ(slurp(path("a.json")), "original\n");
  EXPECT_EQ(entries(), std::set<std::string>{"a.json"});
}

TEST_F(IoPublishTest, RefuseWithSameSizeDifferentBytesIsO004) {
  // Equal sizes force a byte comparison rather than a size shortcut.
  write_file(path("a.json"), "aaaa");
  auto s = mf::io::publish_atomic(path("a.json"), "aaab", Clobber::Refuse);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(code_of(s.diagnostics()), codes::kClobber);
  EXPECT_EQ(slurp(path("a.json")), "aaaa");
  EXPECT_EQ(entries(), std::set<std::string>{"a.json"});
}

TEST_F(IoPublishTest, ReplaceOverwrites) {
  write_file(path("a.json"), "old contents that are longer\n");
  auto s = mf::io::publish_atomic(path("a.json"), "new\n", Clobber::Replace);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(slurp(path("a.json")), "new\n");
  EXPECT_EQ(entries(), std::set<std::string>{"a.json"});
}

TEST_F(IoPublishTest, MissingParentDirectoryIsO001) {
  for (Clobber c : {Clobber::Refuse, Clobber::Replace}) {
    auto s = mf::io::publish_atomic(path("missing/sub/a.json"), "x", c);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(code_of(s.diagnostics()), codes::kBadOutputPath);
  }
  EXPECT_TRUE(entries().empty());
}

TEST_F(IoPublishTest, ParentThatIsAFileIsO001) {
  write_file(path("file"), "x");
  auto s = mf::io::publish_atomic(path("file/a.json"), "x");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(code_of(s.diagnostics()), codes::kBadOutputPath);
  EXPECT_EQ(entries(), std::set<std::string>{"file"});
}

TEST_F(IoPublishTest, PathWithoutFileNameIsO001) {
  fs::create_directory(path("sub"));
  for (const std::string& p : {std::string(), path("") + "/", path("sub/."), path("sub/..")}) {
    for (Clobber c : {Clobber::Refuse, Clobber::Replace}) {
      auto s = mf::io::publish_atomic(p, "x", c);
      ASSERT_FALSE(s.ok()) << p;
      EXPECT_EQ(code_of(s.diagnostics()), codes::kBadOutputPath) << p;
    }
  }
  EXPECT_EQ(entries(), std::set<std::string>{"sub"});
  EXPECT_TRUE(fs::is_empty(path("sub")));
}

TEST_F(IoPublishTest, DirectoryAtTargetIsO001AndLeavesNoTemp) {
  fs::create_directory(path("out"));
  for (Clobber c : {Clobber::Refuse, Clobber::Replace}) {
    auto s = mf::io::publish_atomic(path("out"), "x", c);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(code_of(s.diagnostics()), codes::kBadOutputPath);
    EXPECT_EQ(entries(), std::set<std::string>{"out"});
  }
}

TEST_F(IoPublishTest, UnwritableDirectoryIsO003) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes regardless of permissions";
  fs::create_directory(path("ro"));
  fs::permissions(path("ro"), fs::perms::owner_read | fs::perms::owner_exec);
  auto s = mf::io::publish_atomic(path("ro/a.json"), "x");
  fs::permissions(path("ro"), fs::perms::owner_all);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(code_of(s.diagnostics()), codes::kWriteFailed);
  EXPECT_TRUE(fs::is_empty(path("ro")));
}

TEST_F(IoPublishTest, FailedWriteIsO003AndLeavesNoPartialFile) {
  // A file-size limit makes the temp-file write fail part way (EFBIG), even for root.
  write_file(path("a.json"), "original\n");
  struct rlimit saved {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = saved;
  small.rlim_cur = 1024;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  mf::Status results[2];
  results[0] = mf::io::publish_atomic(path("a.json"), std::string(4096, 'x'), Clobber::Replace);
  results[1] = mf::io::publish_atomic(path("b.json"), std::string(4096, 'x'), Clobber::Refuse);
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  for (const auto& s : results) {
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(code_of(s.diagnostics()), codes::kWriteFailed);
  }
  EXPECT_EQ(slurp(path("a.json")), "original\n");
  EXPECT_EQ(entries(), std::set<std::string>{"a.json"});
}

TEST_F(IoPublishTest, RelativePathWithoutDirectoryUsesCwd) {
  fs::path old = fs::current_path();
  fs::current_path(dir_);
  auto s = mf::io::publish_atomic("rel.json", "r\n");
  fs::current_path(old);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(slurp(path("rel.json")), "r\n");
  EXPECT_EQ(entries(), std::set<std::string>{"rel.json"});
}

TEST_F(IoPublishTest, VeryLongFileNameStillGetsATempFile) {
  std::string name(250, 'n');  // close to NAME_MAX: the temp name must not exceed it
  ASSERT_TRUE(mf::io::publish_atomic(path(name), "x").ok());
  EXPECT_EQ(entries(), std::set<std::string>{name});
}

TEST_F(IoPublishTest, RacingRefusePublishersNeverClobber) {
  // Several writers race for one name with different bytes: exactly one wins, the others get
  // MF-O004, the file holds the winner's bytes whole, and no temp file survives.
  constexpr int kWriters = 8;
  for (int round = 0; round < 10; ++round) {
    std::string target = path("race" + std::to_string(round));
    std::atomic<int> ready{0};
    std::vector<mf::Status> results(kWriters);
    std::vector<std::thread> threads;
    for (int i = 0; i < kWriters; ++i) {
      threads.emplace_back([&, i] {
        ready.fetch_add(1);
        while (ready.load() < kWriters) {
        }
        results[i] = mf::io::publish_atomic(target, std::string(4096, char('a' + i)));
      });
    }
    for (auto& t : threads) t.join();
    int winners = 0;
    for (const auto& r : results) {
      if (r.ok()) {
        ++winners;
      } else {
        EXPECT_EQ(code_of(r.diagnostics()), codes::kClobber);
      }
    }
    EXPECT_EQ(winners, 1);
    std::string content = slurp(target);
    ASSERT_EQ(content.size(), 4096u);
    EXPECT_EQ(content, std::string(4096, content[0]));
  }
  EXPECT_EQ(entries().size(), 10u);
}

TEST_F(IoPublishTest, RacingIdenticalPublishersAllSucceed) {
  constexpr int kWriters = 8;
  std::string target = path("same.json");
  std::atomic<int> ready{0};
  std::vector<mf::Status> results(kWriters);
  std::vector<std::thread> threads;
  for (int i = 0; i < kWriters; ++i) {
    threads.emplace_back([&, i] {
      ready.fetch_add(1);
      while (ready.load() < kWriters) {
      }
      results[i] = mf::io::publish_atomic(target, "identical\n");
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& r : results) EXPECT_TRUE(r.ok());
  EXPECT_EQ(slurp(target), "identical\n");
  EXPECT_EQ(entries(), std::set<std::string>{"same.json"});
}

TEST_F(IoWriteTest, WriteOutputReplacesFile) {
  write_file(path("out.json"), "old\n");
  ASSERT_TRUE(mf::io::write_output(path("out.json"), "new\n").ok());
  EXPECT_EQ(slurp(path("out.json")), "new\n");
  EXPECT_EQ(entries(), std::set<std::string>{"out.json"});
}

TEST_F(IoWriteTest, WriteOutputDashWritesStdout) {
  int fd = ::open(path("stdout").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  mf::Status s;
  with_fd_redirected(STDOUT_FILENO, fd, [&] { s = mf::io::write_output("-", "{\"x\":1}\n"); });
  ::close(fd);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(slurp(path("stdout")), "{\"x\":1}\n");
  EXPECT_FALSE(fs::exists(path("-")));
}

TEST_F(IoWriteTest, WriteAllSurvivesShortWritesToAPipe) {
  // 1 MiB is far more than a pipe buffer, so the kernel returns short writes.
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  std::string bytes(1 << 20, '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = char(i * 131 % 251);
  std::string received;
  std::thread reader([&] {
    char buf[7919];  // odd size so reads and writes do not line up
    ssize_t n;
    while ((n = ::read(p[0], buf, sizeof buf)) > 0) received.append(buf, size_t(n));
  });
  auto s = mf::io::write_all(p[1], bytes);
  ::close(p[1]);
  reader.join();
  ::close(p[0]);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(received, bytes);
}

TEST_F(IoWriteTest, WriteAllErrorsAreO003) {
  auto bad = mf::io::write_all(-1, "x");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(code_of(bad.diagnostics()), codes::kWriteFailed);

  // A pipe whose reader is gone: EPIPE (with SIGPIPE ignored, as the CLIs do).
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  ::close(p[0]);
  auto old = std::signal(SIGPIPE, SIG_IGN);
  auto broken = mf::io::write_all(p[1], "x");
  std::signal(SIGPIPE, old);
  ::close(p[1]);
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(code_of(broken.diagnostics()), codes::kWriteFailed);
}

TEST_F(IoWriteTest, WriteAllOfNothingSucceeds) {
  EXPECT_TRUE(mf::io::write_all(-1, "").ok());
}

}  // namespace

TEST(IoWriteOutputTest, DeviceIsWrittenInPlaceNotReplaced) {
  ASSERT_TRUE(mf::io::write_output("/dev/null", "bytes\n").ok());
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  // publish_atomic itself never renames over a non-regular file.
  auto refused = mf::io::publish_atomic("/dev/null", "bytes\n", mf::io::Clobber::Replace);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.diagnostics()[0].code, "MF-O001");
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}
