// File I/O at the edges (file.hpp): the read loops every module uses, bounded reads of inputs, and
// atomic publication through a synced temp file and a rename.
#include "mf/io/file.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include "mf/diag/codes.hpp"

namespace mf::io {

void Fd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

int Fd::close() {
  const int rc = ::close(fd_);
  fd_ = -1;
  return rc;
}

namespace {

namespace codes = diag::codes;

std::atomic<std::uint64_t> g_syncs{0};

template <class Call>
int counted_sync(Call call) {
  g_syncs.fetch_add(1, std::memory_order_relaxed);
  int rc;
  do {
    rc = call();
  } while (rc != 0 && errno == EINTR);
  return rc;
}

std::string errno_text(int err) {
  return std::strerror(err);
}

int open_retry(int dirfd, const char* path, int flags, mode_t mode = 0) {
  int fd;
  do {
    fd = ::openat(dirfd, path, flags, mode);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

diag::Diagnostic too_large(const std::string& path, std::size_t max_bytes) {
  diag::Diagnostic d = diag::error(
      codes::kTooLarge, (path == "-" ? "standard input is" : "the input is") +
                            std::string(" larger than ") + std::to_string(max_bytes) + " bytes");
  if (path != "-") d.source = path;
  return d;
}

struct PathParts {
  std::string dir;   // "." when the path has no directory part
  std::string base;  // never empty
};

std::optional<PathParts> split_path(const std::string& path) {
  std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return PathParts{".", path};
  std::string base = path.substr(slash + 1);
  if (base.empty() || base == "." || base == "..") return std::nullopt;
  std::string dir = slash == 0 ? "/" : path.substr(0, slash);
  return PathParts{dir, base};
}

// Temp names embed the pid and a random suffix so concurrent publishers of the same target
// (parallel eval shards, two compiles of one harness) never share a temp file. The basename is
// truncated so the temp name stays under NAME_MAX even when the target name itself is close to it.
// O_EXCL already guarantees uniqueness, so the suffix needs to be unpredictable enough to avoid
// collisions, not secure; a clock-and-counter fallback covers a getrandom() that is unavailable.
std::uint64_t random_word() {
  std::uint64_t word = 0;
  if (::getrandom(&word, sizeof word, GRND_NONBLOCK) == static_cast<ssize_t>(sizeof word)) {
    return word;
  }
  static std::atomic<std::uint64_t> counter{0};
  auto now =
      static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  return now * 0x9E3779B97F4A7C15ull + counter.fetch_add(1);
}

std::string temp_name(const std::string& base) {
  char suffix[48];
  std::snprintf(suffix, sizeof suffix, ".tmp.%ld.%016llx", static_cast<long>(::getpid()),
                static_cast<unsigned long long>(random_word()));
  std::string name = ".";
  name.append(base, 0, 160);
  name += suffix;
  return name;
}

enum class Existing { Identical, Different, NotRegular, Unreadable };

// Compares the file already at the target name with the bytes we meant to publish.
Existing compare_existing(int dirfd, const std::string& base, std::string_view bytes) {
  Fd fd(open_retry(dirfd, base.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (!fd.valid()) return Existing::Unreadable;
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Existing::Unreadable;
  if (!S_ISREG(st.st_mode)) return Existing::NotRegular;
  if (static_cast<std::uint64_t>(st.st_size) != bytes.size()) return Existing::Different;
  std::string existing;
  if (read_all(fd.get(), existing, bytes.size()) != 0) return Existing::Unreadable;
  return existing == bytes ? Existing::Identical : Existing::Different;
}

// Refuse mode's answer once a file is known to be at the target name.
Status settle_existing(int dirfd, const std::string& path, const std::string& base,
                       std::string_view bytes) {
  switch (compare_existing(dirfd, base, bytes)) {
    case Existing::Identical:
      return {};
    case Existing::NotRegular:
      return diag::error(codes::kBadOutputPath,
                         "output path '" + path + "' exists and is not a regular file");
    case Existing::Unreadable:
      return diag::error(codes::kClobber, "refusing to overwrite '" + path +
                                              "': the existing file cannot be read to compare");
    case Existing::Different:
      break;
  }
  return diag::error(codes::kClobber,
                     "refusing to overwrite '" + path + "': it holds different bytes");
}

// renameat2(RENAME_NOREPLACE) through the raw syscall: the glibc wrapper is missing on older
// systems, and the kernel call is what provides the atomic "create only if absent".
int rename_noreplace(int dirfd, const char* from, const char* to) {
#ifdef SYS_renameat2
  return static_cast<int>(::syscall(SYS_renameat2, dirfd, from, dirfd, to, 1u /*NOREPLACE*/));
#else
  errno = ENOSYS;
  return -1;
#endif
}

enum class Placed { Done, Exists, Failed };

// Moves the temp file to the target name without ever replacing an existing target. Tries
// renameat2(RENAME_NOREPLACE), then link()+unlink() for filesystems without it; both fail with
// EEXIST atomically, so a racing publisher cannot be overwritten.
Placed place_noreplace(int dirfd, const std::string& tmp, const std::string& base, int& err) {
  if (rename_noreplace(dirfd, tmp.c_str(), base.c_str()) == 0) return Placed::Done;
  err = errno;
  if (err == EEXIST) return Placed::Exists;
  if (err != EINVAL && err != ENOSYS && err != ENOTSUP && err != EOPNOTSUPP) return Placed::Failed;

  if (::linkat(dirfd, tmp.c_str(), dirfd, base.c_str(), 0) == 0) {
    ::unlinkat(dirfd, tmp.c_str(), 0);
    return Placed::Done;
  }
  err = errno;
  if (err == EEXIST) return Placed::Exists;
  if (err != EPERM && err != ENOTSUP && err != EOPNOTSUPP) return Placed::Failed;

  // Last resort for filesystems with neither primitive (e.g. vfat): check, then rename. A racing
  // writer could slip in between; such filesystems offer nothing better.
  struct stat st {};
  if (::fstatat(dirfd, base.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) return Placed::Exists;
  if (::renameat(dirfd, tmp.c_str(), dirfd, base.c_str()) == 0) return Placed::Done;
  err = errno;
  return Placed::Failed;
}

diag::Diagnostic write_failed(const std::string& path, const std::string& what, int err) {
  return diag::error(codes::kWriteFailed,
                     "cannot write output '" + path + "': " + what + ": " + errno_text(err));
}

}  // namespace

int sync_file(int fd) {
  return counted_sync([fd] { return ::fsync(fd); });
}

int sync_data(int fd) {
  return counted_sync([fd] { return ::fdatasync(fd); });
}

int sync_filesystem(int fd) {
  return counted_sync([fd] { return ::syncfs(fd); });
}

std::uint64_t sync_count() {
  return g_syncs.load(std::memory_order_relaxed);
}

Status SyncSet::note(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    return diag::error(codes::kWriteFailed, "cannot stat an output to sync: " + errno_text(errno));
  }
  const auto dev = static_cast<std::uint64_t>(st.st_dev);
  std::lock_guard<std::mutex> lock(mutex_);
  pending_ = true;
  for (const auto& [known, unused] : filesystems_) {
    if (known == dev) return {};
  }
  Fd kept(::fcntl(fd, F_DUPFD_CLOEXEC, 0));
  if (!kept.valid()) {
    return diag::error(codes::kWriteFailed, "cannot keep an output to sync: " + errno_text(errno));
  }
  filesystems_.emplace_back(dev, std::move(kept));
  return {};
}

bool SyncSet::pending() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return pending_;
}

Status SyncSet::sync() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!pending_) return {};
  for (const auto& [dev, fd] : filesystems_) {
    if (sync_filesystem(fd.get()) != 0) {
      return diag::error(codes::kWriteFailed, "cannot sync the outputs: " + errno_text(errno));
    }
  }
  pending_ = false;
  return {};
}

std::int64_t read_some(int fd, char* buf, std::size_t size) {
  for (;;) {
    const ssize_t n = ::read(fd, buf, size);
    if (n >= 0) return n;
    if (errno != EINTR) return -errno;
  }
}

int read_all(int fd, std::string& out, std::size_t max_bytes) {
  const std::size_t cap = max_bytes == SIZE_MAX ? max_bytes : out.size() + max_bytes + 1;
  char buf[64 * 1024];
  while (out.size() < cap) {
    const std::int64_t n = read_some(fd, buf, std::min(sizeof buf, cap - out.size()));
    if (n < 0) return static_cast<int>(n);
    if (n == 0) break;
    // A bounded read (up to 1 GiB) that must grow reserves its bound at once: pages are only taken
    // as they are written, and no doubling copies the bytes with two buffers alive.
    const std::size_t need = out.size() + static_cast<std::size_t>(n);
    if (max_bytes <= (std::size_t{1} << 30) && need > out.capacity()) out.reserve(cap);
    out.append(buf, static_cast<std::size_t>(n));
  }
  return 0;
}

std::int64_t pread_all(int fd, char* buf, std::size_t size, std::uint64_t offset) {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd, buf + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  return static_cast<std::int64_t>(done);
}

namespace {

// One pread(2), retried on EINTR: bytes read (0 at end of file) or -errno.
std::int64_t pread_some(int fd, char* buf, std::size_t size, std::uint64_t offset) {
  for (;;) {
    const ssize_t n = ::pread(fd, buf, size, static_cast<off_t>(offset));
    if (n >= 0) return n;
    if (errno != EINTR) return -errno;
  }
}

template <class ReadSome>
int each_chunk(std::size_t chunk_bytes, const OnChunk& on_chunk, ReadSome read_some_into) {
  const std::size_t size = std::max<std::size_t>(chunk_bytes, 1);
  std::unique_ptr<char[]> buf(new char[size]);  // uninitialized: untouched pages never fault
  for (;;) {
    const std::int64_t n = read_some_into(buf.get(), size);
    if (n <= 0) return static_cast<int>(n);
    if (!on_chunk({buf.get(), static_cast<std::size_t>(n)})) return 0;
  }
}

}  // namespace

int read_chunks(int fd, std::size_t chunk_bytes, const OnChunk& on_chunk) {
  return each_chunk(chunk_bytes, on_chunk,
                    [fd](char* buf, std::size_t size) { return read_some(fd, buf, size); });
}

int pread_chunks(int fd, std::uint64_t offset, std::size_t chunk_bytes, const OnChunk& on_chunk) {
  return each_chunk(chunk_bytes, on_chunk, [fd, &offset](char* buf, std::size_t size) {
    const std::int64_t n = pread_some(fd, buf, size, offset);
    if (n > 0) offset += static_cast<std::uint64_t>(n);
    return n;
  });
}

int read_capped(int fd, std::string& out, std::size_t max_bytes, std::uint64_t size_hint) {
  // The byte past max_bytes is read (when there is one) to tell a file of exactly max_bytes from a
  // larger one.
  const std::size_t limit = max_bytes == SIZE_MAX ? SIZE_MAX : max_bytes + 1;
  const std::uint64_t hinted = std::min<std::uint64_t>(size_hint, limit - 1);
  // The bytes are read straight into `out`: sized to the hint plus one byte, the read that
  // finds the end needs no growth; a file that grows meanwhile doubles it (at least by 64 KiB).
  out.resize(static_cast<std::size_t>(hinted) + 1);
  std::size_t got = 0;
  for (;;) {
    if (got == out.size()) {
      if (got == limit) break;
      const std::size_t grown =
          out.size() >= limit / 2 ? limit : std::max(out.size() * 2, std::size_t{64} << 10);
      out.resize(std::min(limit, grown));
    }
    const std::int64_t n = read_some(fd, out.data() + got, out.size() - got);
    if (n < 0) {
      out.resize(got);
      return static_cast<int>(n);
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  out.resize(got);
  return got > max_bytes ? -EFBIG : 0;
}

namespace {
// A diagnostic about the input file `path`: the file is its source (the prefix of its line on
// stderr), named there once, not again in the message.
diag::Diagnostic about_input(const char* code, const std::string& path, const std::string& what) {
  diag::Diagnostic d = diag::error(code, what);
  d.source = path;
  return d;
}
}  // namespace

Result<std::string> read_input(const std::string& path, std::size_t max_bytes) {
  std::string data;
  if (path == "-") {
    // stdin may be a pipe or a terminal: no regular-file check, only the bound.
    if (int err = read_all(STDIN_FILENO, data, max_bytes); err != 0) {
      return diag::error(codes::kMissing, "cannot read standard input: " + errno_text(-err));
    }
    if (data.size() > max_bytes) return too_large("-", max_bytes);
    return data;
  }

  Result<InputFile> file = open_input(path, max_bytes);
  if (!file) return file.take_diagnostics();
  // The bound is enforced again while reading because the file may grow after fstat.
  data.reserve(static_cast<std::size_t>(file->size));
  if (int err = read_all(file->fd.get(), data, max_bytes); err != 0) {
    return input_unreadable(path, -err);
  }
  if (data.size() > max_bytes) return too_large(path, max_bytes);
  return data;
}

Result<InputFile> open_input(const std::string& path, std::size_t max_bytes) {
  // O_NONBLOCK so that opening a FIFO cannot hang before fstat gets to reject it.
  Fd fd(open_retry(AT_FDCWD, path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (!fd.valid()) {
    int err = errno;
    if (err == ENOENT || err == ENOTDIR) {
      return about_input(codes::kMissing, path, "no such input file");
    }
    return about_input(codes::kMissing, path, "cannot open the input: " + errno_text(err));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return about_input(codes::kMissing, path, "cannot stat the input: " + errno_text(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    return about_input(codes::kNotRegularFile, path, "the input is not a regular file");
  }
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) return too_large(path, max_bytes);
  // Regular files ignore O_NONBLOCK, so the descriptor can be read as is.
  return InputFile{std::move(fd), static_cast<std::uint64_t>(st.st_size)};
}

diag::Diagnostic input_unreadable(const std::string& path, int err) {
  return about_input(codes::kMissing, path, "cannot read the input: " + errno_text(err));
}

Status write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        // Someone made our stdout non-blocking (a shared pipe); wait instead of failing.
        pollfd p{fd, POLLOUT, 0};
        ::poll(&p, 1, -1);
        continue;
      }
      return diag::error(codes::kWriteFailed, "write failed: " + errno_text(errno));
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

Status SyncedWriter::write(std::string_view bytes) {
  if (Status s = write_all(fd_, bytes); !s) return s;
  written_ += bytes.size();
  if (written_ - started_ >= kStartBytes) {
    // Only a hint: where it is refused (a filesystem without it), the fsync does all the work.
    (void)::sync_file_range(fd_, static_cast<off_t>(started_),
                            static_cast<off_t>(written_ - started_), SYNC_FILE_RANGE_WRITE);
    started_ = written_;
  }
  return {};
}

namespace {

// The directory a publication happens in, held open: every later step works relative to this
// descriptor, so the directory cannot be swapped underneath between creating the temp file,
// renaming it and syncing.
struct Target {
  std::string path;
  PathParts parts;
  Fd dir;
};

Result<Target> open_target(const std::string& path) {
  auto parts = split_path(path);
  if (path.empty() || !parts) {
    return diag::error(codes::kBadOutputPath, "output path '" + path + "' does not name a file");
  }
  Fd dir(open_retry(AT_FDCWD, parts->dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid()) {
    int err = errno;
    if (err == ENOENT || err == ENOTDIR) {
      return diag::error(codes::kBadOutputPath,
                         "output directory '" + parts->dir + "' does not exist");
    }
    return diag::error(codes::kBadOutputPath,
                       "cannot open output directory '" + parts->dir + "': " + errno_text(err));
  }
  return Target{path, std::move(*parts), std::move(dir)};
}

// A fresh temp file beside the target (O_EXCL, a few names tried). While it exists, every failure
// removes it (discard) so no partial file is left behind.
struct TempFile {
  const Target& target;
  std::string name;
  Fd out;

  Status discard(Status s) {
    out.reset();
    ::unlinkat(target.dir.get(), name.c_str(), 0);
    return s;
  }
};

Status create_temp(TempFile& temp) {
  const Target& t = temp.target;
  for (int attempt = 0; attempt < 16 && !temp.out.valid(); ++attempt) {
    temp.name = temp_name(t.parts.base);
    temp.out.reset(
        open_retry(t.dir.get(), temp.name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666));
    if (!temp.out.valid() && errno != EEXIST) {
      return write_failed(t.path, "cannot create temporary file", errno);
    }
  }
  if (!temp.out.valid()) return write_failed(t.path, "cannot create temporary file", EEXIST);
  return {};
}

// Runs the writer on the temp file, then makes its bytes durable (or leaves that to `deferred`) and
// closes it.
Status fill_temp(TempFile& temp, const Writer& write, SyncSet* deferred) {
  if (Status s = write(temp.out.get()); !s) return s;
  if (deferred != nullptr) {
    if (Status s = deferred->note(temp.out.get()); !s) return s;
  } else if (sync_file(temp.out.get()) != 0) {
    return write_failed(temp.target.path, "fsync", errno);
  }
  if (temp.out.close() != 0) return write_failed(temp.target.path, "close", errno);
  return {};
}

// Replace: rename over whatever regular file is there, never over a device node or a socket.
Status place_replacing(TempFile& temp) {
  const Target& t = temp.target;
  struct stat st {};
  if (::fstatat(t.dir.get(), t.parts.base.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
      !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
    return diag::error(codes::kBadOutputPath,
                       "output path '" + t.path + "' exists and is not a regular file");
  }
  if (::renameat(t.dir.get(), temp.name.c_str(), t.dir.get(), t.parts.base.c_str()) != 0) {
    int err = errno;
    if (err == EISDIR || err == ENOTDIR) {
      return diag::error(codes::kBadOutputPath, "output path '" + t.path + "' is a directory");
    }
    return write_failed(t.path, "rename", err);
  }
  return {};
}

// The bytes just written to the temp file, for comparing with a file that appeared at the target
// name when the caller gave a writer rather than the bytes.
std::optional<std::string> read_back(const TempFile& temp) {
  Fd in(open_retry(temp.target.dir.get(), temp.name.c_str(), O_RDONLY | O_CLOEXEC));
  std::string bytes;
  if (!in.valid() || read_all(in.get(), bytes) != 0) return std::nullopt;
  return bytes;
}

// Refuse: place without ever replacing. A file that is there already is settled by comparing it
// with what was meant to be published: identical bytes are a success, with the temp file removed
// and nothing placed (`placed` stays false).
Status place_refusing(TempFile& temp, std::optional<std::string_view> bytes, bool& placed) {
  const Target& t = temp.target;
  int err = 0;
  switch (place_noreplace(t.dir.get(), temp.name, t.parts.base, err)) {
    case Placed::Done:
      placed = true;
      return {};
    case Placed::Exists: {
      // Another publisher got there first (or the target appeared after our check).
      if (bytes) return temp.discard(settle_existing(t.dir.get(), t.path, t.parts.base, *bytes));
      const std::optional<std::string> written = read_back(temp);
      if (!written) {
        return temp.discard(diag::error(
            codes::kClobber,
            "refusing to overwrite '" + t.path + "': the new file cannot be read to compare"));
      }
      return temp.discard(settle_existing(t.dir.get(), t.path, t.parts.base, *written));
    }
    case Placed::Failed:
      break;
  }
  return temp.discard(write_failed(t.path, "rename", err));
}

// The rename is durable only once the directory entry is on disk. EINVAL means the filesystem
// cannot sync directories at all, which is not something the caller can fix.
Status sync_directory(const Target& t) {
  if (sync_file(t.dir.get()) != 0 && errno != EINVAL) {
    return write_failed(t.path, "fsync of the output directory", errno);
  }
  return {};
}

// `bytes`, when the caller has them, lets Refuse answer an identical existing file without writing.
Status publish(Result<Target> target, const Writer& write, Clobber clobber,
               std::optional<std::string_view> bytes, SyncSet* deferred) {
  if (!target) return target.take_diagnostics();
  const Target& t = *target;
  const std::string& path = t.path;
  if (clobber == Clobber::Refuse && bytes) {
    // Republishing the same content-addressed file is the common case: answer it without writing.
    // The final no-replace step still guards against a file that appears meanwhile.
    struct stat st {};
    if (::fstatat(t.dir.get(), t.parts.base.c_str(), &st, 0) == 0) {
      return settle_existing(t.dir.get(), path, t.parts.base, *bytes);
    }
  }
  TempFile temp{t, {}, Fd()};
  if (Status s = create_temp(temp); !s) return s;
  if (Status s = fill_temp(temp, write, deferred); !s) return temp.discard(std::move(s));
  bool placed = true;
  if (clobber == Clobber::Replace) {
    if (Status s = place_replacing(temp); !s) return temp.discard(std::move(s));
  } else {
    placed = false;
    if (Status s = place_refusing(temp, bytes, placed); !s || !placed) return s;
  }
  // The directory is on the filesystem the temp file was noted on: its sync covers the rename.
  return deferred != nullptr ? Status() : sync_directory(t);
}

}  // namespace

Status publish_atomic(const std::string& path, const Writer& write, Clobber clobber,
                      SyncSet* deferred) {
  return publish(open_target(path), write, clobber, std::nullopt, deferred);
}

Status publish_atomic_at(int dirfd, const std::string& name, const std::string& display,
                         const Writer& write, Clobber clobber, SyncSet* deferred) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos) {
    return diag::error(codes::kBadOutputPath, "output path '" + display + "' does not name a file");
  }
  Fd dir(::fcntl(dirfd, F_DUPFD_CLOEXEC, 0));
  if (!dir.valid()) return write_failed(display, "dup of the output directory", errno);
  return publish(Target{display, PathParts{".", name}, std::move(dir)}, write, clobber,
                 std::nullopt, deferred);
}

Status publish_atomic(const std::string& path, std::string_view bytes, Clobber clobber,
                      SyncSet* deferred) {
  const Writer write = [&](int fd) -> Status {
    if (Status s = write_all(fd, bytes); !s) {
      return diag::error(codes::kWriteFailed,
                         "cannot write output '" + path + "': " + s.diagnostics().front().message);
    }
    return {};
  };
  return publish(open_target(path), write, clobber, bytes, deferred);
}

Status write_output(const std::string& path, std::string_view bytes) {
  if (path == "-") {
    if (Status s = write_all(STDOUT_FILENO, bytes); !s) {
      return diag::error(codes::kWriteFailed,
                         "cannot write standard output: " + s.diagnostics().front().message);
    }
    return {};
  }
  // A device or FIFO (/dev/null, /dev/stdout, a named pipe) is written in place: renaming a new
  // file over it would replace the device node itself.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
    Fd out(open_retry(AT_FDCWD, path.c_str(), O_WRONLY | O_CLOEXEC, 0));
    if (!out.valid()) return write_failed(path, "cannot open", errno);
    if (Status s = write_all(out.get(), bytes); !s) {
      return diag::error(codes::kWriteFailed,
                         "cannot write output '" + path + "': " + s.diagnostics().front().message);
    }
    return {};
  }
  return publish_atomic(path, bytes, Clobber::Replace);
}

}  // namespace mf::io
