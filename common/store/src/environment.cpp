// Opening the store's LMDB environment, its transactions and map growth, the primitive reads and
// writes of objects and refs, batches and statistics.
#include "environment.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <set>

#include "integrity.hpp"
#include "mf/diag/codes.hpp"

namespace mf::store {

namespace codes = diag::codes;
using detail::digest_of;
using detail::lmdb_error;
using detail::val_of;
using detail::view_of;

namespace detail {

std::string printable(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (const char c : s.substr(0, 300)) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f && c != '\\') {
      out += c;
    } else {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    }
  }
  if (s.size() > 300) out += "...";
  return out;
}

void release(const void* p, std::size_t n) {
  static const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = (reinterpret_cast<std::uintptr_t>(p) + page - 1) / page * page;
  const auto end = (reinterpret_cast<std::uintptr_t>(p) + n) / page * page;
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

Result<io::Fd> spool_file(const std::string& dir) {
  io::Fd fd(::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
  if (!fd.valid() && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
    std::string name = dir + "/.spool-XXXXXX";
    fd = io::Fd(::mkostemp(name.data(), O_CLOEXEC));
    if (fd.valid()) ::unlink(name.c_str());
  }
  if (!fd.valid()) {
    return diag::error(codes::kStoreLmdb,
                       "cannot create a spool file in " + dir + ": " + std::strerror(errno));
  }
  return fd;
}

diag::Diagnostic lmdb_error(int rc, std::string_view what) {
  return diag::error(codes::kStoreLmdb, std::string(what) + ": " + mdb_strerror(rc));
}

diag::Diagnostic missing_object(const hash::Digest& d) {
  return diag::error(codes::kStoreMissingObject,
                     "object " + hash::to_hex(d) + " is not in the store");
}

diag::Diagnostic bad_ref(std::string_view name) {
  return diag::error(codes::kStoreBadRef, "bad ref name \"" + printable(name) +
                                              "\" (1-256 bytes of [A-Za-z0-9._/-], no empty, '.' "
                                              "or '..' segment, no leading '/')");
}

}  // namespace detail

namespace {

// LMDB forbids opening one environment twice in a process (closing either drops the other's
// fcntl locks), so open directories are tracked here by device and inode.
std::mutex& open_dirs_mutex() {
  static std::mutex m;
  return m;
}
std::set<std::pair<dev_t, ino_t>>& open_dirs() {
  static std::set<std::pair<dev_t, ino_t>> dirs;
  return dirs;
}

}  // namespace

Store::Impl::~Impl() {
  detail::unwatch_map(watch_slot);
  if (env != nullptr) mdb_env_close(env);
  if (registered) {
    const std::lock_guard lock(open_dirs_mutex());
    open_dirs().erase(dir_id);
  }
}

diag::Diagnostic Store::Impl::fail(int rc, std::string_view what) {
  if (rc == MDB_MAP_FULL) map_full = true;
  return lmdb_error(rc, what);
}

diag::Diagnostic Store::Impl::read_only() const {
  return diag::error(codes::kStoreLmdb, "store " + dir + " is open read-only");
}

int Store::Impl::begin(unsigned flags, MDB_txn** txn) {
  for (int attempt = 0;; ++attempt) {
    const int rc = mdb_txn_begin(env, nullptr, flags, txn);
    if (rc != MDB_MAP_RESIZED || attempt >= detail::kMaxRetries) return rc;
    const int rs = mdb_env_set_mapsize(env, 0);
    if (rs != 0) return rs;
    watch_map();
  }
}

void Store::Impl::watch_map() {
  watch_slot = detail::watch_map(watch_slot, dir + "/data.mdb");
}

std::uint64_t Store::Impl::map_size() const {
  MDB_envinfo info;
  mdb_env_info(env, &info);
  return info.me_mapsize;
}

Status Store::Impl::set_map_size(std::uint64_t bytes) {
  const int rc = mdb_env_set_mapsize(env, static_cast<std::size_t>(bytes));
  if (rc != 0) return lmdb_error(rc, "cannot resize the map of " + dir);
  watch_map();
  return {};
}

Status Store::Impl::ensure_room(std::uint64_t extra) {
  if (batch_txn != nullptr) return {};
  MDB_envinfo info;
  MDB_stat st;
  mdb_env_info(env, &info);
  mdb_env_stat(env, &st);
  const std::uint64_t used = (std::uint64_t(info.me_last_pgno) + 1) * st.ms_psize;
  const std::uint64_t need = used + extra + extra / 8 + (std::uint64_t{1} << 20);
  if (need <= info.me_mapsize) return {};
  constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
  return set_map_size(
      std::max<std::uint64_t>(std::uint64_t(info.me_mapsize) * 2, (need + kMiB - 1) / kMiB * kMiB));
}

Status Store::Impl::fill(char* dst, int fd, std::uint64_t size) {
  const auto failed = [&](int err) {
    return diag::error(codes::kStoreLmdb,
                       "cannot copy an object into " + dir + "/data.mdb: " + std::strerror(err));
  };
  // The value's offset in data.mdb, from where this process maps the file (the fault watch reads
  // it from /proc/self/maps at every open and growth).
  const auto [lo, hi] = detail::watched_map(watch_slot);
  const auto at = reinterpret_cast<std::uintptr_t>(dst);
  int data = -1;
  if (lo == 0 || at < lo || at + size > hi || mdb_env_get_fd(env, &data) != 0) {
    for (std::uint64_t done = 0; done < size; done += detail::kChunk) {
      const auto want =
          static_cast<std::size_t>(std::min<std::uint64_t>(detail::kChunk, size - done));
      const std::int64_t n = io::pread_all(fd, dst + done, want, done);
      if (n < 0) return failed(static_cast<int>(-n));
      if (static_cast<std::size_t>(n) != want) return failed(EIO);
      if (size > detail::kChunk) detail::release(dst + done, want);
    }
    return {};
  }
  // The kernel copies the spool's pages into data.mdb's (copy_file_range: one copy, none through
  // this process), and writeback of each piece copied is started at once (sync_file_range, a
  // no-op on tmpfs) so that the commit's sync finds most of the value on its way to the disk.
  constexpr std::uint64_t kStep = std::uint64_t{8} << 20;
  const auto out = static_cast<std::uint64_t>(at - lo);
  std::uint64_t done = 0;
  while (done < size) {
    auto from = static_cast<loff_t>(done);
    auto to = static_cast<loff_t>(out + done);
    const ssize_t n = ::copy_file_range(fd, &from, data, &to,
                                        static_cast<std::size_t>(std::min(kStep, size - done)), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && done == 0 &&
        (errno == EXDEV || errno == ENOSYS || errno == EOPNOTSUPP || errno == EINVAL)) {
      break;  // no kernel copy between these files: through a buffer below
    }
    if (n <= 0) return failed(n < 0 ? errno : EIO);
    ::sync_file_range(data, static_cast<off64_t>(out + done), n, SYNC_FILE_RANGE_WRITE);
    done += static_cast<std::uint64_t>(n);
  }
  // Chunks small enough to stay in the CPU's cache between the read and the write.
  constexpr std::size_t kCopyChunk = std::size_t{256} << 10;
  const std::unique_ptr<char[]> buf(done < size ? new char[kCopyChunk] : nullptr);
  for (; done < size; done += kCopyChunk) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(kCopyChunk, size - done));
    const std::int64_t n = io::pread_all(fd, buf.get(), want, done);
    if (n < 0) return failed(static_cast<int>(-n));
    if (static_cast<std::size_t>(n) != want) return failed(EIO);
    for (std::size_t put = 0; put < want;) {
      const ssize_t w =
          ::pwrite(data, buf.get() + put, want - put, static_cast<off_t>(out + done + put));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return failed(w < 0 ? errno : EIO);
      put += static_cast<std::size_t>(w);
    }
  }
  return {};
}

Result<bool> Store::Impl::put_in(MDB_txn* txn, const hash::Digest& digest, std::string_view bytes) {
  MDB_val key = val_of(digest);
  MDB_val val = val_of(bytes);
  const int rc = mdb_put(txn, objects, &key, &val, MDB_NOOVERWRITE);
  if (rc == MDB_KEYEXIST) return false;
  if (rc != 0) return fail(rc, "cannot store object " + hash::to_hex(digest));
  return true;
}

Status Store::Impl::store_bytes(const hash::Digest& digest, std::string_view bytes) {
  if (mode == Mode::ReadOnly) return read_only();
  if (batch_txn == nullptr) {  // present already: no write transaction, no writer lock
    auto present = read([&](MDB_txn* txn) { return has_in(txn, digest); });
    if (!present) return present.take_diagnostics();
    if (*present) return {};
    if (auto room = ensure_room(bytes.size()); !room) return room;
  }
  auto added = write([&](MDB_txn* txn) { return put_in(txn, digest, bytes); });
  if (!added) return added.take_diagnostics();
  return {};
}

Result<bool> Store::Impl::has_in(MDB_txn* txn, const hash::Digest& digest) {
  MDB_val key = val_of(digest);
  MDB_val val;
  const int rc = mdb_get(txn, objects, &key, &val);
  if (rc == MDB_NOTFOUND) return false;
  if (rc != 0) return fail(rc, "cannot look up object " + hash::to_hex(digest));
  return true;
}

Result<std::string_view> Store::Impl::get_in(MDB_txn* txn, const hash::Digest& digest) {
  MDB_val key = val_of(digest);
  MDB_val val;
  const int rc = mdb_get(txn, objects, &key, &val);
  if (rc == MDB_NOTFOUND) return detail::missing_object(digest);
  if (rc != 0) return fail(rc, "cannot read object " + hash::to_hex(digest));
  const std::string_view bytes = view_of(val);
  hash::Sha256 h;
  (void)detail::for_each_piece(bytes, detail::kChunk, [&](std::string_view piece) -> Status {
    h.update(piece);
    return {};
  });
  if (h.finish() != digest) {
    return diag::error(codes::kStoreCorrupt, "object " + hash::to_hex(digest) + " is corrupt");
  }
  return bytes;
}

Result<std::optional<hash::Digest>> Store::Impl::ref_in(MDB_txn* txn, std::string_view name) {
  MDB_val key = val_of(name);
  MDB_val val;
  const int rc = mdb_get(txn, refs, &key, &val);
  if (rc == MDB_NOTFOUND) return std::optional<hash::Digest>();
  if (rc != 0) return fail(rc, "cannot read ref " + std::string(name));
  hash::Digest d{};
  if (!digest_of(val, d)) {
    return diag::error(codes::kStoreLmdb,
                       "ref " + std::string(name) + " does not hold a 32-byte digest");
  }
  return std::optional<hash::Digest>(d);
}

Status Store::Impl::scan(MDB_txn* txn, MDB_dbi dbi, std::string_view what, const Visitor& visit) {
  MDB_cursor* cur = nullptr;
  int rc = mdb_cursor_open(txn, dbi, &cur);
  if (rc != 0) return fail(rc, what);
  MDB_val key;
  MDB_val val;
  for (rc = mdb_cursor_get(cur, &key, &val, MDB_FIRST); rc == 0;
       rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT)) {
    if (Status s = visit(key, val, cur); !s) {
      mdb_cursor_close(cur);
      return s;
    }
  }
  mdb_cursor_close(cur);
  if (rc != MDB_NOTFOUND) return fail(rc, what);
  return {};
}

Result<std::vector<std::pair<std::string, hash::Digest>>> Store::Impl::refs_in(MDB_txn* txn) {
  std::vector<std::pair<std::string, hash::Digest>> out;
  Status scanned =
      scan(txn, refs, "cannot list refs",
           [&](const MDB_val& key, const MDB_val& val, MDB_cursor*) -> Status {
             hash::Digest d{};
             if (!digest_of(val, d)) {
               return diag::error(codes::kStoreLmdb, "ref \"" + detail::printable(view_of(key)) +
                                                         "\" does not hold a 32-byte digest");
             }
             out.emplace_back(std::string(view_of(key)), d);
             return {};
           });
  if (!scanned) return scanned.take_diagnostics();
  return out;
}

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::~Store() = default;

std::string Store::resolve_dir(const std::string& flag) {
  if (!flag.empty()) return flag;
  const char* env = std::getenv("MF_STORE");
  if (env != nullptr && *env != '\0') return env;
  return kDefaultDir;
}

namespace {

// ReadOnly: the directory and its data.mdb must be there (MF-K005). ReadWrite: the directory is
// created when missing. Tells whether data.mdb exists.
Result<bool> prepare_dir(const std::string& dir, Mode mode) {
  namespace fs = std::filesystem;
  const std::string data_file = (fs::path(dir) / "data.mdb").string();
  struct stat st {};
  const bool have_data = ::stat(data_file.c_str(), &st) == 0;
  if (mode == Mode::ReadOnly) {
    struct stat dst {};
    if (::stat(dir.c_str(), &dst) != 0 || !S_ISDIR(dst.st_mode) || !have_data ||
        !S_ISREG(st.st_mode)) {
      return diag::error(codes::kStoreAbsent, "no store at " + dir);
    }
  } else {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) {
      return diag::error(codes::kStoreLmdb,
                         "cannot create the store directory " + dir + ": " + ec.message());
    }
  }
  return have_data;
}

}  // namespace

Status Store::Impl::register_dir() {
  struct stat dst {};
  if (::stat(dir.c_str(), &dst) != 0 || !S_ISDIR(dst.st_mode)) {
    return diag::error(codes::kStoreLmdb, "store directory " + dir + " is not a directory");
  }
  const std::lock_guard lock(open_dirs_mutex());
  dir_id = {dst.st_dev, dst.st_ino};
  if (!open_dirs().insert(dir_id).second) {
    return diag::error(codes::kStoreLmdb, "store " + dir + " is already open in this process");
  }
  registered = true;
  return {};
}

Status Store::Impl::open_env(bool have_data, const OpenOptions& options) {
  int rc = mdb_env_create(&env);
  if (rc != 0) return lmdb_error(rc, "cannot create an LMDB environment");
  mdb_env_set_maxdbs(env, 2);
  if (!have_data && options.initial_map_bytes > 0) {
    mdb_env_set_mapsize(env, static_cast<std::size_t>(options.initial_map_bytes));
  }
  // A writer writes values straight into the map (MDB_WRITEMAP), so filling a large one can release
  // its pages as it goes instead of holding a private copy until the commit.
  const unsigned flags = MDB_NOTLS | (mode == Mode::ReadOnly ? MDB_RDONLY : MDB_WRITEMAP);
  if (have_data) {
    if (Status s = detail::check_data_file(dir + "/data.mdb"); !s) {
      mdb_env_close(env);
      env = nullptr;
      return s;
    }
  }
  rc = mdb_env_open(env, dir.c_str(), flags, 0644);
  if (rc != 0) {
    mdb_env_close(env);
    env = nullptr;
    return lmdb_error(rc, "cannot open the store at " + dir);
  }
  watch_map();
  int dead = 0;
  mdb_reader_check(env, &dead);  // free reader slots of killed processes
  if (mode == Mode::ReadWrite && map_size() < options.initial_map_bytes) {
    return set_map_size(options.initial_map_bytes);
  }
  return {};
}

Status Store::Impl::open_databases() {
  MDB_txn* txn = nullptr;
  int rc = begin(MDB_RDONLY, &txn);
  if (rc != 0) return lmdb_error(rc, "cannot begin a read transaction on " + dir);
  rc = mdb_dbi_open(txn, "objects", 0, &objects);
  if (rc == 0) rc = mdb_dbi_open(txn, "refs", 0, &refs);
  if (rc == 0) {
    rc = mdb_txn_commit(txn);  // keeps the handles
    if (rc != 0) return lmdb_error(rc, "cannot open the databases of " + dir);
    return {};
  }
  mdb_txn_abort(txn);
  if (rc != MDB_NOTFOUND) return lmdb_error(rc, "cannot open the databases of " + dir);
  if (mode == Mode::ReadOnly) return diag::error(codes::kStoreAbsent, "no store at " + dir);
  return write([&](MDB_txn* w) -> Status {
    int r = mdb_dbi_open(w, "objects", MDB_CREATE, &objects);
    if (r == 0) r = mdb_dbi_open(w, "refs", MDB_CREATE, &refs);
    if (r != 0) return fail(r, "cannot create the databases of " + dir);
    return {};
  });
}

Result<std::unique_ptr<Store>> Store::open(const std::string& dir, Mode mode,
                                           const OpenOptions& options) {
  Result<bool> have_data = prepare_dir(dir, mode);
  if (!have_data) return have_data.take_diagnostics();
  auto impl = std::make_unique<Impl>();
  impl->dir = dir;
  impl->mode = mode;
  if (Status s = impl->register_dir(); !s) return s.take_diagnostics();
  if (Status s = impl->open_env(*have_data, options); !s) return s.take_diagnostics();
  if (Status s = impl->open_databases(); !s) return s.take_diagnostics();
  return std::unique_ptr<Store>(new Store(std::move(impl)));
}

Status Store::batch(const std::function<Status()>& fn) {
  Impl& s = *impl_;
  if (s.mode == Mode::ReadOnly) return s.read_only();
  if (s.batch_txn != nullptr) return fn();  // nested: join the outer batch
  for (int attempt = 0;; ++attempt) {
    s.map_full = false;
    MDB_txn* txn = nullptr;
    int rc = s.begin(0, &txn);
    if (rc != 0) return lmdb_error(rc, "cannot begin a write transaction on " + s.dir);
    s.batch_txn = txn;
    Status result = fn();
    s.batch_txn = nullptr;
    const bool full = s.map_full;
    if (!result.ok() || full) {
      mdb_txn_abort(txn);
      if (!full || attempt >= detail::kMaxRetries) {
        return result.ok() ? lmdb_error(MDB_MAP_FULL, "batch on " + s.dir) : std::move(result);
      }
    } else {
      rc = mdb_txn_commit(txn);
      if (rc == 0) return {};
      if (rc != MDB_MAP_FULL || attempt >= detail::kMaxRetries) {
        return lmdb_error(rc, "cannot commit to " + s.dir);
      }
    }
    if (auto grown = s.grow(); !grown) return grown;
  }
}

Result<StoreStats> Store::stats() {
  Impl& s = *impl_;
  return s.read([&](MDB_txn* txn) -> Result<StoreStats> {
    StoreStats out;
    MDB_stat st;
    int rc = mdb_stat(txn, s.objects, &st);
    if (rc != 0) return s.fail(rc, "cannot read store statistics");
    out.objects = st.ms_entries;
    rc = mdb_stat(txn, s.refs, &st);
    if (rc != 0) return s.fail(rc, "cannot read store statistics");
    out.refs = st.ms_entries;
    Status scanned = s.scan(txn, s.objects, "cannot read store statistics",
                            [&](const MDB_val&, const MDB_val& val, MDB_cursor*) -> Status {
                              out.object_bytes += val.mv_size;
                              return {};
                            });
    if (!scanned) return scanned.take_diagnostics();
    out.map_bytes = s.map_size();
    struct stat fst {};
    if (::stat((s.dir + "/data.mdb").c_str(), &fst) == 0) out.file_bytes = fst.st_size;
    return out;
  });
}

}  // namespace mf::store
