// Objects and refs: put (bytes, verified bytes, a file read once and copied into reserved space),
// get, list, verify, and the refs that name objects.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "environment.hpp"
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

// Reads `in` once, to its end, hashing what it reads; past one chunk the bytes go on to a spool
// file as they arrive, so memory holds at most two chunks whatever the input's size.
Result<Taken> take(int in, const std::string& name, const std::string& dir) {
  Taken t;
  hash::Sha256 h;
  std::unique_ptr<char[]> buf(new char[kChunk]);
  for (;;) {
    const std::int64_t got = io::read_some(in, buf.get(), kChunk);
    if (got < 0) return read_failed(name, static_cast<int>(-got));
    if (got == 0) break;
    const std::string_view piece(buf.get(), static_cast<std::size_t>(got));
    h.update(piece);
    t.size += piece.size();
    if (!t.spool.valid()) {
      if (t.bytes.size() + piece.size() <= kChunk) {
        t.bytes.append(piece);
        continue;
      }
      auto file = detail::spool_file(dir);
      if (!file) return file.take_diagnostics();
      t.spool = std::move(file.value());
      if (Status w = io::write_all(t.spool.get(), t.bytes); !w) return w.take_diagnostics();
      std::string().swap(t.bytes);
    }
    if (Status w = io::write_all(t.spool.get(), piece); !w) return w.take_diagnostics();
  }
  t.digest = h.finish();
  return t;
}

// Whether a regular file was replaced, resized or written to between two fstat()s. Timestamps
// taken by a later write differ from ones already read (the kernel's fine-grained timestamps).
bool same_file(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino && a.st_size == b.st_size &&
         a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec &&
         a.st_ctim.tv_sec == b.st_ctim.tv_sec && a.st_ctim.tv_nsec == b.st_ctim.tv_nsec;
}

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
  auto taken = take(in, name, s.dir);
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
