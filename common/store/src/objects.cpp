// Objects and refs: put (bytes, verified bytes, a file read once and copied into reserved space),
// get, list, verify, and the refs that name objects.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#include "environment.hpp"
#include "integrity.hpp"
#include "mf/diag/codes.hpp"
#include "mf/io/file.hpp"

namespace mf::store {

namespace detail {
// Test seam: when set, put_file calls it once it has read its input, before checking that a
// regular file did not change while it was read.
extern std::function<void(const std::string&)> put_file_after_read;
std::function<void(const std::string&)> put_file_after_read;
}  // namespace detail

using detail::bad_ref;
using detail::digest_of;
using detail::kChunk;
using detail::missing_object;
using detail::val_of;
using detail::view_of;
using io::Fd;

namespace {

namespace codes = diag::codes;

constexpr std::uint64_t kProgressEvery = 1000;  // verify() progress callback period

diag::Diagnostic read_failed(const std::string& name, int err) {
  return diag::error(codes::kMissing, "cannot read " + name + ": " + std::strerror(err));
}

}  // namespace

bool valid_ref_name(std::string_view name) {
  if (name.empty() || name.size() > 256 || name.front() == '/') return false;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= name.size(); ++i) {
    if (i == name.size() || name[i] == '/') {
      const std::string_view seg = name.substr(start, i - start);
      if (seg.empty() || seg == "." || seg == "..") return false;
      start = i + 1;
      continue;
    }
    const char c = name[i];
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

Result<hash::Digest> Store::put(std::string_view bytes) {
  const hash::Digest digest = hash::sha256(bytes);
  if (auto s = impl_->store_bytes(digest, bytes); !s) return s.take_diagnostics();
  return digest;
}

Status Store::put_verified(const hash::Digest& digest, std::string_view bytes) {
  if (impl_->mode == Mode::ReadOnly) return impl_->read_only();
  const hash::Digest actual = hash::sha256(bytes);
  if (actual != digest) {
    return diag::error(codes::kStoreDigestMismatch, "bytes hash to " + hash::to_hex(actual) +
                                                        ", not to " + hash::to_hex(digest));
  }
  return impl_->store_bytes(digest, bytes);
}

namespace {

// What reading an input once left: its digest and size, and its bytes, in memory when they fit
// one chunk, else in an unlinked spool file in the store's directory.
struct Taken {
  hash::Digest digest{};
  std::uint64_t size = 0;
  std::string bytes;  // the whole input when no spool was needed
  Fd spool;
};

// SHA-256 on a thread of its own, fed through a ring of buffers by the thread that reads the
// input and writes it on (into data.mdb or a spool): hashing a chunk overlaps reading and writing
// the next ones, so a large put takes about the longer of the two rather than their sum. The
// hasher only reads a buffer; the reader refills it only once the hasher is done with it, and has
// written it itself before moving on, so the bytes written are the bytes hashed. The thread ends in
// finish() or, on any path out of the reader's scope, in the destructor, which abandons the
// chunks not yet hashed. Where no thread can be started, hand() hashes on the reader's thread.
class RingHasher {
 public:
  static constexpr std::size_t kSlots = 4;
  static constexpr std::size_t kSlotBytes = kChunk;

  explicit RingHasher(hash::Sha256& h) : h_(h), bufs_(new char[kSlots * kSlotBytes]) {
    try {
      thread_ = std::thread([this] { run(); });
    } catch (const std::system_error&) {  // no thread to be had (EAGAIN): hash inline
    }
  }
  RingHasher(const RingHasher&) = delete;
  RingHasher& operator=(const RingHasher&) = delete;
  ~RingHasher() { close(true); }

  // The buffer for chunk number n (from 0), once the hasher is done with chunk n - kSlots.
  char* slot(std::uint64_t n) {
    std::unique_lock lock(mutex_);
    freed_.wait(lock, [&] { return hashed_ + kSlots > n; });
    return bufs_.get() + (n % kSlots) * kSlotBytes;
  }
  // Chunk n, `size` bytes, is in its slot: hash it next.
  void hand(std::uint64_t n, std::size_t size) {
    if (!thread_.joinable()) {
      h_.update(bufs_.get() + (n % kSlots) * kSlotBytes, size);
      hashed_ = n + 1;
      return;
    }
    {
      const std::lock_guard lock(mutex_);
      sizes_[n % kSlots] = size;
      handed_ = n + 1;
    }
    ready_.notify_one();
  }
  // Every chunk handed is hashed when this returns, and the thread is gone.
  void finish() { close(false); }

 private:
  void run() {
    for (std::uint64_t n = 0;; ++n) {
      std::size_t size = 0;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [&] { return handed_ > n || closed_; });
        if (handed_ <= n || abandoned_) return;
        size = sizes_[n % kSlots];
      }
      h_.update(bufs_.get() + (n % kSlots) * kSlotBytes, size);
      {
        const std::lock_guard lock(mutex_);
        hashed_ = n + 1;
      }
      freed_.notify_one();
    }
  }
  void close(bool abandon) {
    if (!thread_.joinable()) return;
    {
      const std::lock_guard lock(mutex_);
      closed_ = true;
      abandoned_ = abandon;
    }
    ready_.notify_one();
    thread_.join();
  }

  hash::Sha256& h_;
  std::unique_ptr<char[]> bufs_;
  std::mutex mutex_;
  std::condition_variable ready_;  // a chunk was handed, or the ring closed
  std::condition_variable freed_;  // a chunk was hashed
  std::size_t sizes_[kSlots] = {};
  std::uint64_t handed_ = 0;
  std::uint64_t hashed_ = 0;
  bool closed_ = false;
  bool abandoned_ = false;
  std::thread thread_;  // started once everything above is constructed
};

// Where stream() puts what it reads, piece by piece in order.
using Sink = std::function<Status(std::string_view piece)>;

// What stream() read: its digest and size.
struct Streamed {
  hash::Digest digest{};
  std::uint64_t size = 0;
};

// Reads `in` to its end, after `head` (already read from it), handing every piece to `sink` and
// hashing it on a RingHasher meanwhile; memory holds the ring whatever the input's size. Stops
// early, without handing on what it read, once the input has more than `limit` bytes.
Result<Streamed> stream(int in, const std::string& name, std::string_view head, const Sink& sink,
                        std::uint64_t limit) {
  Streamed out;
  hash::Sha256 h;
  h.update(head);
  if (Status w = sink(head); !w) return w.take_diagnostics();
  out.size = head.size();
  RingHasher ring(h);
  for (std::uint64_t n = 0; out.size <= limit; ++n) {
    char* buf = ring.slot(n);
    const std::int64_t got = io::read_some(in, buf, RingHasher::kSlotBytes);
    if (got < 0) return read_failed(name, static_cast<int>(-got));
    if (got == 0) break;
    out.size += static_cast<std::uint64_t>(got);
    if (out.size > limit) break;
    ring.hand(n, static_cast<std::size_t>(got));
    if (Status w = sink({buf, static_cast<std::size_t>(got)}); !w) return w.take_diagnostics();
  }
  ring.finish();
  out.digest = h.finish();
  return out;
}

// Reads `in` once, to its end, hashing what it reads. Up to one chunk is kept in memory; past
// that the bytes go on to a spool file as they arrive (stream()). `size_hint` is a regular
// file's size.
Result<Taken> take(int in, const std::string& name, const std::string& dir,
                   std::uint64_t size_hint) {
  Taken t;
  const int head = io::read_capped(in, t.bytes, kChunk, size_hint);
  if (head == 0) {
    t.size = t.bytes.size();
    t.digest = hash::sha256(t.bytes);
    return t;
  }
  if (head != -EFBIG) return read_failed(name, -head);
  auto file = detail::spool_file(dir);
  if (!file) return file.take_diagnostics();
  t.spool = std::move(file.value());
  const int spool = t.spool.get();
  auto streamed = stream(
      in, name, t.bytes, [&](std::string_view piece) { return io::write_all(spool, piece); },
      UINT64_MAX);
  if (!streamed) return streamed.take_diagnostics();
  std::string().swap(t.bytes);
  t.digest = streamed->digest;
  t.size = streamed->size;
  return t;
}

// Whether a regular file was replaced, resized or written to between two fstat()s. Timestamps
// taken by a later write differ from ones already read (the kernel's fine-grained timestamps).
bool same_file(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino && a.st_size == b.st_size &&
         a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec &&
         a.st_ctim.tv_sec == b.st_ctim.tv_sec && a.st_ctim.tv_nsec == b.st_ctim.tv_nsec;
}

// pwrite(2) of all of `bytes` at `at`, retried on EINTR and short writes: 0 or errno.
int pwrite_all(int fd, std::string_view bytes, std::uint64_t at) {
  while (!bytes.empty()) {
    const ssize_t n = ::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    bytes.remove_prefix(static_cast<std::size_t>(n));
    at += static_cast<std::uint64_t>(n);
  }
  return 0;
}

// LMDB's header at the start of an overflow page: a large value's bytes follow it.
constexpr std::uint64_t kOverflowHeader = 16;
// Moves `size` bytes of `fd` from `from` to `to` (the ranges may overlap) in the direction that
// reads every byte before it is overwritten, except the first head.size(), which are written from
// `head` (their staged copy may have been overwritten). 0 or errno.
int move_within(int fd, std::uint64_t from, std::uint64_t to, std::uint64_t size,
                std::string_view head) {
  constexpr std::uint64_t kPiece = std::uint64_t{256} << 10;  // stays in the CPU's cache
  const std::unique_ptr<char[]> buf(new char[kPiece]);
  const auto copy = [&](std::uint64_t off, std::uint64_t len) {
    const std::int64_t n = io::pread_all(fd, buf.get(), static_cast<std::size_t>(len), from + off);
    if (n < 0) return static_cast<int>(-n);
    if (static_cast<std::uint64_t>(n) != len) return EIO;
    return pwrite_all(fd, {buf.get(), static_cast<std::size_t>(len)}, to + off);
  };
  const std::uint64_t start = std::min<std::uint64_t>(head.size(), size);
  if (to < from) {
    for (std::uint64_t off = start; off < size; off += kPiece) {
      if (const int err = copy(off, std::min(kPiece, size - off)); err != 0) return err;
    }
  } else {
    for (std::uint64_t end = size; end > start;) {
      const std::uint64_t len = std::min(kPiece, end - start);
      end -= len;
      if (const int err = copy(end, len); err != 0) return err;
    }
  }
  return pwrite_all(fd, head.substr(0, static_cast<std::size_t>(start)), to);
}

// put_in_place starts the writeback of what it has written every this many bytes.
constexpr std::uint64_t kWritebackEvery = std::uint64_t{8} << 20;

}  // namespace

// Every input is read once: hashed as it is read, held in memory up to one chunk and spooled past
// that, then stored under its digest from what was read (never by reading the input again). A
// regular file that changed while it was read is refused (MF-K006): what was read may mix its old
// and new bytes.
Result<hash::Digest> Store::put_file(const std::string& path) {
  Impl& s = *impl_;
  if (s.mode == Mode::ReadOnly) return s.read_only();
  const bool is_stdin = path == "-";
  const std::string name = is_stdin ? "<stdin>" : path;
  Fd opened;
  struct stat before {};
  if (!is_stdin) {
    opened = Fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (opened.get() < 0) {
      return diag::error(codes::kMissing, "cannot open " + path + ": " + std::strerror(errno));
    }
    if (::fstat(opened.get(), &before) != 0 || S_ISDIR(before.st_mode)) {
      return diag::error(codes::kNotRegularFile, path + " is not a regular file");
    }
  }
  const int in = is_stdin ? STDIN_FILENO : opened.get();
  if (S_ISREG(before.st_mode) && static_cast<std::uint64_t>(before.st_size) > kChunk) {
    ::posix_fadvise(in, 0, 0, POSIX_FADV_SEQUENTIAL);
    auto placed = s.put_in_place(in, name, before);
    if (!placed) return placed.take_diagnostics();
    if (*placed) return **placed;
  }
  auto taken = take(in, name, s.dir, static_cast<std::uint64_t>(before.st_size));
  if (!taken) return taken.take_diagnostics();
  if (detail::put_file_after_read) detail::put_file_after_read(name);
  if (S_ISREG(before.st_mode)) {
    struct stat after {};
    if (::fstat(in, &after) != 0 || !same_file(before, after)) {
      return diag::error(codes::kStoreInputChanged,
                         name + " changed while it was being stored; nothing was stored");
    }
  }
  if (!taken->spool.valid()) {
    if (auto stored = s.store_bytes(taken->digest, taken->bytes); !stored) {
      return stored.take_diagnostics();
    }
  } else if (auto stored = put_spooled(taken->spool.get(), taken->size, taken->digest); !stored) {
    return stored.take_diagnostics();
  }
  return taken->digest;
}

// A regular file over one chunk, outside a batch, is written once, straight into data.mdb: LMDB
// needs the digest before it reserves the value's place, but that place is predictable. While
// this process holds the write transaction (LMDB's writer lock) no other writer allocates pages,
// and the pages past the last one committed belong to no snapshot, so the bytes are written there,
// at the page where the reservation will start, while they are read and hashed (RingHasher). Then
// MDB_RESERVE under the digest gives the value's real place: where it was predicted (the usual
// case), or elsewhere (a tree split, a free run of pages reused), and then the bytes are moved
// there within data.mdb. The only pages LMDB itself writes in that region before the reservation
// are the few it allocates for the tree ahead of the value, at its start, so the first chunk of the
// input, kept in memory, is written again from memory rather than moved. Nothing else reads or
// writes the file twice. Returns no digest when the file does not suit (the map cannot be located,
// no room): the caller then spools it.
Result<std::optional<hash::Digest>> Store::Impl::put_in_place(int in, const std::string& name,
                                                              const struct stat& before) {
  using Placed = std::optional<hash::Digest>;
  const auto size = static_cast<std::uint64_t>(before.st_size);
  int data = -1;
  if (batch_txn != nullptr || mdb_env_get_fd(env, &data) != 0) return Placed{};
  if (auto room = ensure_room(size); !room) return room.take_diagnostics();
  // The pages the reservation takes for the tree before the value's: a new root leaf, or a copy of
  // each page on the paths to the main database's record of the objects and to the new key. They
  // come from the free pages LMDB may reuse (freed by a transaction before the last one, which no
  // reader can still see) while there are some, else from the end, ahead of the value. (A tree
  // split, a reader holding old pages, a commit by another process before this one's write
  // transaction or a free run long enough for the value put it elsewhere: then it is moved.) The
  // free list can only be read in a read-only transaction.
  auto predicted = read([&](MDB_txn* r) -> Result<std::uint64_t> {
    MDB_stat main_stat;
    MDB_stat objects_stat;
    MDB_cursor* cur = nullptr;
    if (mdb_stat(r, 1, &main_stat) != 0 || mdb_stat(r, objects, &objects_stat) != 0 ||
        mdb_cursor_open(r, 0, &cur) != 0) {
      return diag::error(codes::kStoreLmdb, "cannot read the free pages of " + dir);
    }
    std::uint64_t pages =
        objects_stat.ms_depth == 0 ? 1 : main_stat.ms_depth + objects_stat.ms_depth;
    MDB_val k;
    MDB_val v;
    for (int rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0 && pages > 0;
         rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
      std::size_t id = 0;
      std::size_t count = 0;  // a free list record: its transaction's id, then its page count
      if (k.mv_size != sizeof id || v.mv_size < sizeof count) break;
      std::memcpy(&id, k.mv_data, sizeof id);
      std::memcpy(&count, v.mv_data, sizeof count);
      if (id >= mdb_txn_id(r)) break;
      pages -= std::min<std::uint64_t>(pages, count);
    }
    mdb_cursor_close(cur);
    return pages;
  });
  if (!predicted) return Placed{};
  const std::uint64_t ahead = *predicted;
  MDB_txn* txn = nullptr;
  if (const int rc = begin(0, &txn); rc != 0) {
    return detail::lmdb_error(rc, "cannot begin a write transaction on " + dir);
  }
  std::unique_ptr<MDB_txn, void (*)(MDB_txn*)> abort(txn, mdb_txn_abort);
  MDB_envinfo info;
  MDB_stat env_stat;
  mdb_env_info(env, &info);
  mdb_env_stat(env, &env_stat);
  const std::uint64_t page = env_stat.ms_psize;
  const std::uint64_t first = info.me_last_pgno + 1 + ahead;
  const std::uint64_t pages = (kOverflowHeader + size + page - 1) / page;
  const auto [lo, hi] = detail::watched_map(watch_slot);
  if (lo == 0 || (first + pages + 64) * page > hi - lo) return Placed{};
  const std::uint64_t at = first * page + kOverflowHeader;
  // Gives the staged pages back (to the file system: holes) when nothing is stored; only before
  // the transaction ends, while no other writer can use them.
  const auto discard = [&] {
    ::fallocate(data, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(first * page),
                static_cast<off_t>(pages * page));
  };
  const auto write_failed = [&](int err) {
    return diag::error(codes::kStoreLmdb,
                       "cannot write an object into " + dir + "/data.mdb: " + std::strerror(err));
  };

  std::string head;
  const int got = io::read_capped(in, head, kChunk, size);
  if (got != 0 && got != -EFBIG) return read_failed(name, -got);
  std::uint64_t written = 0;
  std::uint64_t flushed = 0;
  auto streamed = stream(
      in, name, head,
      [&](std::string_view piece) -> Status {
        if (const int err = pwrite_all(data, piece, at + written); err != 0) {
          return write_failed(err);
        }
        written += piece.size();
        if (written - flushed >= kWritebackEvery) {
          ::sync_file_range(data, static_cast<off64_t>(at + flushed),
                            static_cast<off64_t>(written - flushed), SYNC_FILE_RANGE_WRITE);
          flushed = written;
        }
        return {};
      },
      size);
  if (!streamed) {
    discard();
    return streamed.take_diagnostics();
  }
  if (detail::put_file_after_read) detail::put_file_after_read(name);
  struct stat after {};
  if (streamed->size != size || ::fstat(in, &after) != 0 || !same_file(before, after)) {
    discard();
    return diag::error(codes::kStoreInputChanged,
                       name + " changed while it was being stored; nothing was stored");
  }
  const hash::Digest digest = streamed->digest;
  auto present = has_in(txn, digest);
  if (!present || *present) discard();
  if (!present) return present.take_diagnostics();
  if (*present) return Placed{digest};

  MDB_val key = val_of(digest);
  MDB_val val{static_cast<std::size_t>(size), nullptr};
  if (const int rc = mdb_put(txn, objects, &key, &val, MDB_RESERVE | MDB_NOOVERWRITE); rc != 0) {
    discard();
    return detail::lmdb_error(rc, "cannot store object " + hash::to_hex(digest));
  }
  const auto to = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(val.mv_data) - lo);
  if (to != at) {
    if (const int err = move_within(data, at, to, size, head); err != 0) {
      discard();
      return write_failed(err);
    }
    // Staged pages the value does not cover, past those LMDB may have taken ahead of it.
    const std::uint64_t from =
        (std::max(to + size, first * page + kChunk + 2 * page) + page - 1) / page * page;
    if (from < (first + pages) * page) {
      ::fallocate(data, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(from),
                  static_cast<off_t>((first + pages) * page - from));
    }
  }
  const int rc = mdb_txn_commit(abort.release());  // frees the transaction, committed or not
  if (rc != 0) return detail::lmdb_error(rc, "cannot commit to " + dir);
  return Placed{digest};
}

// The spool's bytes were hashed as they were written to it, and nothing else can reach an
// unlinked file, so they are copied into the space LMDB reserves for the value without hashing
// them again (Impl::fill).
Status Store::put_spooled(int spool, std::uint64_t size, const hash::Digest& digest) {
  Impl& s = *impl_;
  if (s.mode == Mode::ReadOnly) return s.read_only();
  if (s.batch_txn == nullptr) {  // present already: no write transaction, no writer lock
    auto present = has(digest);
    if (!present) return present.take_diagnostics();
    if (*present) return {};
    if (auto room = s.ensure_room(size); !room) return room;
  }
  return s.write([&](MDB_txn* txn) -> Status {
    MDB_val key = val_of(digest);
    MDB_val val{static_cast<std::size_t>(size), nullptr};
    const int rc = mdb_put(txn, s.objects, &key, &val, MDB_RESERVE | MDB_NOOVERWRITE);
    if (rc == MDB_KEYEXIST) return {};
    if (rc != 0) return s.fail(rc, "cannot store object " + hash::to_hex(digest));
    return s.fill(static_cast<char*>(val.mv_data), spool, size);
  });
}

Result<std::string> Store::get(const hash::Digest& digest) {
  Impl& s = *impl_;
  return s.read([&](MDB_txn* txn) -> Result<std::string> {
    auto bytes = s.get_in(txn, digest);
    if (!bytes) return bytes.take_diagnostics();
    return std::string(*bytes);
  });
}

Status Store::get_to_fd(const hash::Digest& digest, int fd) {
  Impl& s = *impl_;
  return s.read([&](MDB_txn* txn) -> Status {
    auto bytes = s.get_in(txn, digest);  // verified before the first byte is written
    if (!bytes) return bytes.take_diagnostics();
    return detail::for_each_piece(*bytes, kChunk,
                                  [&](std::string_view piece) { return io::write_all(fd, piece); });
  });
}

Result<bool> Store::has(const hash::Digest& digest) {
  Impl& s = *impl_;
  return s.read([&](MDB_txn* txn) { return s.has_in(txn, digest); });
}

Result<std::vector<ObjectInfo>> Store::list() {
  Impl& s = *impl_;
  return s.read([&](MDB_txn* txn) -> Result<std::vector<ObjectInfo>> {
    std::vector<ObjectInfo> out;
    Status scanned = s.scan(txn, s.objects, "cannot list objects",
                            [&](const MDB_val& key, const MDB_val& val, MDB_cursor*) -> Status {
                              ObjectInfo info;
                              if (digest_of(key, info.digest)) {
                                info.size = val.mv_size;
                                out.push_back(info);
                              }
                              return {};
                            });
    if (!scanned) return scanned.take_diagnostics();
    return out;
  });
}

Status Store::set_ref(std::string_view name, const hash::Digest& digest) {
  Impl& s = *impl_;
  if (!valid_ref_name(name)) return bad_ref(name);
  return s.write([&](MDB_txn* txn) -> Status {
    auto present = s.has_in(txn, digest);
    if (!present) return present.take_diagnostics();
    if (!*present) return missing_object(digest);
    MDB_val key = val_of(name);
    MDB_val val = val_of(digest);
    const int rc = mdb_put(txn, s.refs, &key, &val, 0);
    if (rc != 0) return s.fail(rc, "cannot set ref " + std::string(name));
    return {};
  });
}

Result<hash::Digest> Store::put_named(std::string_view name, std::string_view bytes) {
  hash::Digest digest{};
  Status done = batch([&]() -> Status {
    Result<hash::Digest> d = put(bytes);
    if (!d) return d.take_diagnostics();
    digest = *d;
    return set_ref(name, digest);
  });
  if (!done) return done.take_diagnostics();
  return digest;
}

Result<std::optional<hash::Digest>> Store::get_ref(std::string_view name) {
  Impl& s = *impl_;
  if (!valid_ref_name(name)) return bad_ref(name);
  return s.read([&](MDB_txn* txn) { return s.ref_in(txn, name); });
}

Result<bool> Store::remove_ref(std::string_view name) {
  Impl& s = *impl_;
  if (!valid_ref_name(name)) return bad_ref(name);
  return s.write([&](MDB_txn* txn) -> Result<bool> {
    MDB_val key = val_of(name);
    const int rc = mdb_del(txn, s.refs, &key, nullptr);
    if (rc == MDB_NOTFOUND) return false;
    if (rc != 0) return s.fail(rc, "cannot remove ref " + std::string(name));
    return true;
  });
}

Result<std::vector<std::pair<std::string, hash::Digest>>> Store::list_refs() {
  Impl& s = *impl_;
  return s.read([&](MDB_txn* txn) { return s.refs_in(txn); });
}

Result<VerifyReport> Store::verify(
    const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
  Impl& s = *impl_;
  return s.read([&](MDB_txn* txn) -> Result<VerifyReport> {
    VerifyReport report;
    MDB_stat st;
    int rc = mdb_stat(txn, s.objects, &st);
    if (rc != 0) return s.fail(rc, "cannot read store statistics");
    const std::uint64_t total = st.ms_entries;
    Status objects = s.scan(txn, s.objects, "cannot verify objects",
                            [&](const MDB_val& key, const MDB_val& val, MDB_cursor*) -> Status {
                              hash::Digest d{};
                              if (!digest_of(key, d) || hash::sha256(view_of(val)) != d) {
                                if (key.mv_size == d.size()) report.corrupt.push_back(d);
                              }
                              ++report.checked;
                              if (progress && report.checked % kProgressEvery == 0) {
                                progress(report.checked, total);
                              }
                              return {};
                            });
    if (!objects) return objects.take_diagnostics();
    if (progress) progress(report.checked, total);

    Status refs = s.scan(txn, s.refs, "cannot verify refs",
                         [&](const MDB_val& key, const MDB_val& val, MDB_cursor*) -> Status {
                           hash::Digest d{};
                           bool dangling = !digest_of(val, d);
                           if (!dangling) {
                             auto present = s.has_in(txn, d);
                             if (!present) return present.take_diagnostics();
                             dangling = !*present;
                           }
                           if (dangling) report.dangling_refs.emplace_back(view_of(key));
                           return {};
                         });
    if (!refs) return refs.take_diagnostics();
    return report;
  });
}

}  // namespace mf::store
