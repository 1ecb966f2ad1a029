// The store's LMDB environment (private to the store): the only file that includes <lmdb.h>, so the
// store's sources reach LMDB through it and nothing else in the product does.
//
// Transactions are short and scoped to one operation (a batch() spans its callback), so the map can
// be grown between them: LMDB allows mdb_env_set_mapsize only while this process has no transaction
// open. A write that finds the map full (MDB_MAP_FULL, from a put or from the commit) is aborted,
// the map doubled and the write run again; a transaction that finds the map grown by another
// process (MDB_MAP_RESIZED) adopts the new size and starts again.
#pragma once

#include <lmdb.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/io/file.hpp"
#include "mf/store/store.hpp"

namespace mf::store {

namespace detail {

constexpr int kMaxRetries = 48;  // map growths / resize adoptions per operation
constexpr std::size_t kChunk = std::size_t{1} << 20;

inline MDB_val val_of(const hash::Digest& d) {
  return {d.size(), const_cast<std::uint8_t*>(d.data())};
}
inline MDB_val val_of(std::string_view s) {
  return {s.size(), const_cast<char*>(s.data())};
}
inline std::string_view view_of(const MDB_val& v) {
  return {static_cast<const char*>(v.mv_data), v.mv_size};
}
inline bool digest_of(const MDB_val& v, hash::Digest& out) {
  if (v.mv_size != out.size()) return false;
  std::memcpy(out.data(), v.mv_data, out.size());
  return true;
}

// Drops the pages wholly inside [p, p + n) of the map from this process's memory (MADV_DONTNEED).
// The map is a shared file mapping (written through with MDB_WRITEMAP), so the bytes stay in the
// page cache and the file: this bounds the resident size of reading or filling a large value.
void release(const void* p, std::size_t n);

// Calls fn(piece) for `bytes` (a value in the map) in pieces of `size`, releasing each piece once
// fn is done with it when the value spans more than one; stops at the first failure fn returns.
template <class F>
Status for_each_piece(std::string_view bytes, std::size_t size, F&& fn) {
  for (std::size_t at = 0; at < bytes.size(); at += size) {
    const std::string_view piece = bytes.substr(at, size);
    if (Status s = fn(piece); !s) return s;
    if (bytes.size() > size) release(piece.data(), piece.size());
  }
  return {};
}

// A new file with no name in `dir`, read-write, for spooling an input that cannot be read twice:
// O_TMPFILE, or where the filesystem has none, a mkstemp file unlinked at once.
Result<io::Fd> spool_file(const std::string& dir);

// Names from users go into messages; keep messages printable ASCII (and valid UTF-8 in JSON).
std::string printable(std::string_view s);
diag::Diagnostic lmdb_error(int rc, std::string_view what);
diag::Diagnostic missing_object(const hash::Digest& d);
diag::Diagnostic bad_ref(std::string_view name);

}  // namespace detail

struct Store::Impl {
  MDB_env* env = nullptr;
  MDB_dbi objects = 0;
  MDB_dbi refs = 0;
  std::string dir;
  Mode mode = Mode::ReadOnly;
  std::pair<dev_t, ino_t> dir_id{};
  bool registered = false;
  MDB_txn* batch_txn = nullptr;  // the write transaction of an active batch()
  bool map_full = false;         // an LMDB call reported MDB_MAP_FULL: grow and run again
  int watch_slot = -1;           // the map's slot in integrity.hpp's fault watch

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl();

  // Store::open's steps. Claims the directory for this process (LMDB's one open per process).
  Status register_dir();
  // Creates and opens the environment, the map at least options.initial_map_bytes when writing.
  Status open_env(bool have_data, const OpenOptions& options);
  // Opens both databases in a read transaction; only a new store needs a write to create them.
  Status open_databases();

  // Every LMDB failure inside a transaction goes through here so MAP_FULL is noticed.
  diag::Diagnostic fail(int rc, std::string_view what);
  diag::Diagnostic read_only() const;

  // mdb_txn_begin, adopting a map another process has grown.
  int begin(unsigned flags, MDB_txn** txn);
  std::uint64_t map_size() const;
  // Registers the current map with the fault watch (after every open, growth and adoption).
  void watch_map();
  Status set_map_size(std::uint64_t bytes);
  Status grow() { return set_map_size(map_size() * 2); }
  // Grows the map ahead of a large write so that it is not retried (and its input re-read) once per
  // doubling. Only outside a batch: the map cannot change under an open transaction.
  Status ensure_room(std::uint64_t extra);

  // Runs fn(txn) in a read-only snapshot (or inside the active batch, to see its writes).
  template <class F>
  std::invoke_result_t<F&, MDB_txn*> read(F&& fn) {
    if (batch_txn != nullptr) return fn(batch_txn);
    MDB_txn* txn = nullptr;
    const int rc = begin(MDB_RDONLY, &txn);
    if (rc != 0) return detail::lmdb_error(rc, "cannot begin a read transaction on " + dir);
    auto result = fn(txn);
    mdb_txn_abort(txn);
    return result;
  }

  // Runs fn(txn) in a write transaction and commits it (synced), growing the map and running fn
  // again when it fills up. Inside a batch fn joins the batch's transaction instead.
  template <class F>
  std::invoke_result_t<F&, MDB_txn*> write(F&& fn) {
    if (mode == Mode::ReadOnly) return read_only();
    if (batch_txn != nullptr) return fn(batch_txn);
    for (int attempt = 0;; ++attempt) {
      map_full = false;
      MDB_txn* txn = nullptr;
      int rc = begin(0, &txn);
      if (rc != 0) return detail::lmdb_error(rc, "cannot begin a write transaction on " + dir);
      auto result = fn(txn);
      if (!result.ok()) {
        mdb_txn_abort(txn);
        if (!map_full || attempt >= detail::kMaxRetries) return result;
      } else {
        rc = mdb_txn_commit(txn);  // frees txn, committed or not
        if (rc == 0) return result;
        if (rc != MDB_MAP_FULL || attempt >= detail::kMaxRetries) {
          return detail::lmdb_error(rc, "cannot commit to " + dir);
        }
      }
      if (auto grown = grow(); !grown) return grown.take_diagnostics();
    }
  }

  // Copies `size` bytes of `fd` (from offset 0) to `dst`, a value reserved in the map, by writing
  // them to data.mdb at the value's offset rather than through the mapping: no page fault and no
  // zero-filled page per 4 KiB, and nothing of the value held by this process. Where the offset
  // cannot be known (the map is not watched), reads into the map, releasing each chunk once
  // written.
  Status fill(char* dst, int fd, std::uint64_t size);
  // put_file of a regular file over one chunk, written straight into data.mdb as it is read
  // (objects.cpp); no digest when it cannot be, and the file must then be spooled.
  Result<std::optional<hash::Digest>> put_in_place(int in, const std::string& name,
                                                   const struct stat& before);
  // Stores bytes under digest in txn unless present; true when newly added.
  Result<bool> put_in(MDB_txn* txn, const hash::Digest& digest, std::string_view bytes);
  // put() once the digest is known to be right.
  Status store_bytes(const hash::Digest& digest, std::string_view bytes);
  Result<bool> has_in(MDB_txn* txn, const hash::Digest& digest);
  // The verified bytes of an object, viewing LMDB's map (valid while txn lives).
  Result<std::string_view> get_in(MDB_txn* txn, const hash::Digest& digest);
  // The digest a ref names, or nothing when there is no such ref.
  Result<std::optional<hash::Digest>> ref_in(MDB_txn* txn, std::string_view name);

  // Visits every entry of `dbi` in key order until `visit` fails; LMDB errors name `what`. The
  // cursor is passed along so a visitor may delete the current entry.
  using Visitor = std::function<Status(const MDB_val& key, const MDB_val& val, MDB_cursor* cur)>;
  Status scan(MDB_txn* txn, MDB_dbi dbi, std::string_view what, const Visitor& visit);
  Result<std::vector<std::pair<std::string, hash::Digest>>> refs_in(MDB_txn* txn);

  // The closure of `roots` under "mentions a stored digest" (see reachable() in the header),
  // sorted. Roots absent from the store are skipped. (reachability.cpp)
  Result<std::vector<hash::Digest>> closure_in(MDB_txn* txn, std::vector<hash::Digest> work);
};

}  // namespace mf::store
