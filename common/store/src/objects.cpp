// Objects and refs: put (bytes, verified bytes, a file streamed into reserved space), get, list,
// verify, and the refs that name objects.
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
// Test seam: when set, put_file calls it between its hashing pass and its storing pass.
extern std::function<void(const std::string&)> put_file_between_passes;
std::function<void(const std::string&)> put_file_between_passes;
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

// Reads up to `size` bytes at `offset`; returns how many were read (fewer only at end of file).
Result<std::size_t> pread_full(int fd, char* dst, std::size_t size, off_t offset,
                               const std::string& name) {
  const std::int64_t n = io::pread_all(fd, dst, size, static_cast<std::uint64_t>(offset));
  if (n < 0) return read_failed(name, static_cast<int>(-n));
  return static_cast<std::size_t>(n);
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

// Copies a stream (stdin, a pipe, a device) into an unlinked temporary file in the store's
// directory, so that it can be read twice like a regular file without being held in memory.
Result<Fd> spool(int in, const std::string& name, const std::string& dir) {
  auto file = detail::spool_file(dir);
  if (!file) return file.take_diagnostics();
  Fd tmp = std::move(file.value());
  std::unique_ptr<char[]> buf(new char[kChunk]);
  for (;;) {
    const std::int64_t n = io::read_some(in, buf.get(), kChunk);
    if (n < 0) return read_failed(name, static_cast<int>(-n));
    if (n == 0) break;
    if (Status w = io::write_all(tmp.get(), {buf.get(), static_cast<std::size_t>(n)}); !w) {
      return w.take_diagnostics();
    }
  }
  return tmp;
}

}  // namespace

Result<hash::Digest> Store::put_file(const std::string& path) {
  Impl& s = *impl_;
  if (s.mode == Mode::ReadOnly) return s.read_only();
  if (path == "-") {
    auto spooled = spool(STDIN_FILENO, "<stdin>", s.dir);
    if (!spooled) return spooled.take_diagnostics();
    return put_fd(spooled->get(), "<stdin>");
  }
  const Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    return diag::error(codes::kMissing, "cannot open " + path + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || S_ISDIR(st.st_mode)) {
    return diag::error(codes::kNotRegularFile, path + " is not a regular file");
  }
  if (!S_ISREG(st.st_mode)) {  // a pipe or device: one read only
    auto spooled = spool(fd.get(), path, s.dir);
    if (!spooled) return spooled.take_diagnostics();
    return put_fd(spooled->get(), path);
  }
  return put_fd(fd.get(), path);
}

// A regular file (or a spool) in two passes, neither holding it: hash it streaming, then read it
// chunk by chunk straight into the space LMDB reserves for the value in the map, releasing each
// chunk once it is written and checking that what was stored is what was hashed.
Result<hash::Digest> Store::put_fd(int fd, const std::string& name) {
  Impl& s = *impl_;
  hash::Sha256 first;
  std::uint64_t size = 0;
  {
    std::unique_ptr<char[]> buf(new char[kChunk]);
    for (;;) {
      auto n = pread_full(fd, buf.get(), kChunk, static_cast<off_t>(size), name);
      if (!n) return n.take_diagnostics();
      if (*n == 0) break;
      first.update(buf.get(), *n);
      size += *n;
    }
  }
  const hash::Digest digest = first.finish();
  if (detail::put_file_between_passes) detail::put_file_between_passes(name);
  if (s.batch_txn == nullptr) {
    auto present = has(digest);
    if (!present) return present.take_diagnostics();
    if (*present) return digest;
    if (auto room = s.ensure_room(size); !room) return room.take_diagnostics();
  }
  const auto changed = [&] {
    return diag::error(codes::kStoreInputChanged,
                       name + " changed while it was being stored; nothing was stored");
  };
  auto stored = s.write([&](MDB_txn* txn) -> Status {
    MDB_val key = val_of(digest);
    MDB_val val{static_cast<std::size_t>(size), nullptr};
    const int rc = mdb_put(txn, s.objects, &key, &val, MDB_RESERVE | MDB_NOOVERWRITE);
    if (rc == MDB_KEYEXIST) return {};
    if (rc != 0) return s.fail(rc, "cannot store object " + hash::to_hex(digest));
    char* dst = static_cast<char*>(val.mv_data);
    hash::Sha256 second;
    for (std::uint64_t at = 0; at < size; at += kChunk) {
      const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, size - at));
      auto n = pread_full(fd, dst + at, want, static_cast<off_t>(at), name);
      if (!n) return n.take_diagnostics();
      if (*n != want) return changed();
      second.update(dst + at, want);
      if (size > kChunk) detail::release(dst + at, want);
    }
    char extra = 0;
    auto more = pread_full(fd, &extra, 1, static_cast<off_t>(size), name);
    if (!more) return more.take_diagnostics();
    if (*more != 0 || second.finish() != digest) return changed();
    return {};
  });
  if (!stored) return stored.take_diagnostics();
  return digest;
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
