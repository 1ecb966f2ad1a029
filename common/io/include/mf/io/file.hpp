// File input and output at the edges of the product: bounded reads of untrusted inputs ("-" =
// stdin) and atomic, no-clobber publication of outputs (temp file, fsync, rename, directory fsync).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mf/diag/diagnostic.hpp"

namespace mf::io {

// Owns one file descriptor: closed on every path out of a scope. close() is for the happy path
// that wants to see the error (on NFS a failed write can surface only there).
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset(o.fd_);
      o.fd_ = -1;
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void reset(int fd = -1);
  int close();

 private:
  int fd_;
};

// The one way to read a descriptor. Every loop over read(2)/pread(2) in the product is one of
// these: each retries EINTR and short reads. Errors are returned as -errno (never thrown, errno
// untouched otherwise).
//
// One read(2), retried on EINTR: bytes read (0 at end of file) or -errno. For streaming loops.
std::int64_t read_some(int fd, char* buf, std::size_t size);
// Reads until end of file, appending to `out`, but never more than max_bytes + 1 bytes in all, so
// an endless stream cannot exhaust memory and an oversize input shows as out.size() > max_bytes.
// Returns 0 or -errno.
int read_all(int fd, std::string& out, std::size_t max_bytes = SIZE_MAX);
// Fills buf[0, size) from `offset`: the bytes read, fewer than `size` only at end of file, or
// -errno.
std::int64_t pread_all(int fd, char* buf, std::size_t size, std::uint64_t offset);

// Called with each chunk read, in order: false stops the reading (the caller keeps its reason).
using OnChunk = std::function<bool(std::string_view chunk)>;

// Streams `fd` from its offset to end of file: one read(2) per chunk of at most chunk_bytes
// (retried on EINTR; a pipe's bytes are handed on as they arrive), into a buffer of its own that
// is reused, so memory stays at one chunk whatever the input's size. Returns 0 at end of file or
// when on_chunk stops, or -errno. A chunk_bytes of 0 reads one byte at a time.
int read_chunks(int fd, std::size_t chunk_bytes, const OnChunk& on_chunk);
// The same through pread(2) from `offset` on, leaving the descriptor's offset alone.
int pread_chunks(int fd, std::uint64_t offset, std::size_t chunk_bytes, const OnChunk& on_chunk);

// Reads `fd` from its offset to end of file into `out` (replacing its bytes, reusing its capacity)
// but never more than max_bytes + 1: 0; -EFBIG when the input holds more than max_bytes (`out`
// then holds its first max_bytes + 1 bytes); or -errno (`out` holds what was read before the
// error). `size_hint` (fstat's size) sizes the buffer at once; it grows only if the input does.
int read_capped(int fd, std::string& out, std::size_t max_bytes, std::uint64_t size_hint = 0);

// Reads a whole regular file (or stdin for "-"), refusing more than max_bytes (MF-S003), a missing
// file (MF-S013) and anything that is not a regular file (MF-S014).
Result<std::string> read_input(const std::string& path, std::size_t max_bytes = 64u << 20);

// A regular input file, open for reading: its descriptor and its size when it was opened.
struct InputFile {
  Fd fd;
  std::uint64_t size = 0;
};
// Opens a regular file (not "-") for a reader that reads it in parts, with read_input()'s checks
// and diagnostics: a missing file, not a regular file, more than max_bytes.
Result<InputFile> open_input(const std::string& path, std::size_t max_bytes);
// The diagnostic of an input that could not be read (MF-S013), as read_input() gives it.
diag::Diagnostic input_unreadable(const std::string& path, int err);

// fsync(2), fdatasync(2) and syncfs(2), retried on EINTR and counted: every sync the product asks
// for goes through these, so a test can assert how many a piece of work makes. 0, or -1 with errno.
int sync_file(int fd);
int sync_data(int fd);
int sync_filesystem(int fd);
// The syncs made through the three above in this process so far.
std::uint64_t sync_count();

// Publications whose syncs are deferred to one point (a run with batched durability): a file
// published with a SyncSet is renamed into place without an fsync of its own or of its directory;
// the set notes the filesystem it is on, and sync() makes everything noted since the last sync()
// durable with one syncfs(2) per filesystem. Until then a crash may lose such a file or leave it
// empty; readers on a running system still see nothing or the whole file. Thread-safe.
class SyncSet {
 public:
  // Notes the filesystem `fd` is on (a descriptor of it is kept for sync()).
  Status note(int fd);
  // Whether anything was noted since the last sync().
  bool pending() const;
  // One syncfs per filesystem noted, when anything was noted since the last call.
  Status sync();

 private:
  mutable std::mutex mutex_;
  std::vector<std::pair<std::uint64_t, Fd>> filesystems_;  // st_dev, a descriptor on it
  bool pending_ = false;
};

enum class Clobber : std::uint8_t {
  Refuse,   // an existing file with different bytes is an error (MF-O004); identical bytes are fine
  Replace,  // atomically replace whatever is there
};

// Writes the content of a file being published to `fd` (a temporary file beside the target).
using Writer = std::function<Status(int fd)>;

// Publishes a file at `path` so that readers see either nothing or the complete file, never a part:
// `write` fills a temporary file in the target's directory, which is synced, renamed into place
// (Refuse: never over an existing file) and the directory synced. When `write` fails its
// diagnostics are returned as they are and nothing is left behind. Refuse reads the temp file back
// to compare only when a file appeared at the target name meanwhile. With `deferred`, the fsyncs
// are left to deferred->sync() (SyncSet above).
Status publish_atomic(const std::string& path, const Writer& write,
                      Clobber clobber = Clobber::Refuse, SyncSet* deferred = nullptr);
// The same for the entry `name` of the open directory `dirfd` (for callers that reach directories
// by descriptor, such as a confined workspace); `display` names the file in diagnostics.
Status publish_atomic_at(int dirfd, const std::string& name, const std::string& display,
                         const Writer& write, Clobber clobber = Clobber::Refuse,
                         SyncSet* deferred = nullptr);
// The same for bytes in hand; Refuse answers an identical existing file without writing.
Status publish_atomic(const std::string& path, std::string_view bytes,
                      Clobber clobber = Clobber::Refuse, SyncSet* deferred = nullptr);

// Writes to stdout for "-", otherwise publish_atomic(..., Clobber::Replace).
Status write_output(const std::string& path, std::string_view bytes);

// Writes all bytes to a file descriptor, retrying short writes and EINTR.
Status write_all(int fd, std::string_view bytes);

// write_all() to a file that is synced when done (a Writer of publish_atomic): the writeback of
// each kStartBytes written is started as it is written (sync_file_range), so the disk works while
// the rest is made, and the final fsync waits for the last piece only.
class SyncedWriter {
 public:
  static constexpr std::uint64_t kStartBytes = std::uint64_t{4} << 20;
  explicit SyncedWriter(int fd) : fd_(fd) {}
  Status write(std::string_view bytes);

 private:
  int fd_;
  std::uint64_t written_ = 0, started_ = 0;  // started_: the writeback asked for up to there
};

}  // namespace mf::io
