// The content-addressed store (docs/store.md): one LMDB environment holding objects keyed by the
// SHA-256 of their exact bytes, plus named refs pointing at digests. LMDB is included by this
// module only (behind common/store/src/environment.hpp). Layout, ref names (built by
// mf/store/refs.hpp), reachability, export format: docs/store.md.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/hash/sha256.hpp"

namespace mf::store {

enum class Mode : std::uint8_t {
  ReadOnly,   // never creates anything; a missing store is an error
  ReadWrite,  // creates the store directory on first open
};

struct ObjectInfo {
  hash::Digest digest{};
  std::uint64_t size = 0;
};

struct StoreStats {
  std::uint64_t objects = 0;
  std::uint64_t object_bytes = 0;  // sum of value sizes
  std::uint64_t refs = 0;
  std::uint64_t map_bytes = 0;   // current LMDB map size
  std::uint64_t file_bytes = 0;  // size of data.mdb on disk
};

struct VerifyReport {
  std::uint64_t checked = 0;
  std::vector<hash::Digest> corrupt;       // keys whose bytes no longer hash to the key
  std::vector<std::string> dangling_refs;  // refs naming a digest the store lacks
};

struct OpenOptions {
  // Map size given to a new store (or to an existing one recorded smaller). The map grows by
  // doubling whenever a write finds it full, so this only sets where growth starts.
  std::uint64_t initial_map_bytes = std::uint64_t{64} << 20;
};

// One open store. Thread-compatible (one Store per thread, or external locking); many processes may
// open the same directory at once: LMDB serializes writers and readers never block writers. Within
// one process a directory may be open only once at a time (LMDB's rule; a second open is MF-K007).
// Write operations on a ReadOnly store fail with MF-K007.
class Store {
 public:
  // Default location when neither --store nor MF_STORE is given.
  static constexpr const char* kDefaultDir = ".mf/store";
  // --store value, else $MF_STORE, else kDefaultDir.
  static std::string resolve_dir(const std::string& flag);

  // ReadOnly: a missing directory or data.mdb is MF-K005 and nothing is created.
  static Result<std::unique_ptr<Store>> open(const std::string& dir, Mode mode,
                                             const OpenOptions& options = {});
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Stores bytes under their SHA-256 (computed here) and returns it. Idempotent; durable once it
  // returns (the LMDB commit is synced), unless inside a batch.
  Result<hash::Digest> put(std::string_view bytes);
  // Stores bytes under a digest the caller claims; refuses (MF-K002) when the bytes do not hash to
  // it.
  Status put_verified(const hash::Digest& digest, std::string_view bytes);
  // Stores a file (or stdin for "-") read once, hashed on a second thread as it is read, so memory
  // does not grow with the file. Past 1 MiB a regular file is written straight into data.mdb where
  // LMDB's reservation under its digest is predicted to start (moved there if it lands elsewhere);
  // stdin, and a file inside a batch, are spooled to an unlinked file in the store's directory and
  // copied into the reserved space. A regular file that changed while it was read (size, inode or
  // timestamps) is refused and nothing is stored (MF-K006). docs/store.md has the details.
  Result<hash::Digest> put_file(const std::string& path);

  // Many puts (and set_ref/remove_ref) in one transaction, one sync at the end: fn runs inside;
  // everything or nothing. When the map fills up mid-batch the transaction is discarded, the map
  // grown and fn run again, so fn must be repeatable (do its puts, not consume a stream). Nested
  // batches join the outer one.
  Status batch(const std::function<Status()>& fn);

  // The bytes, re-hashed on read: a mismatch is corruption (MF-K003), never returned as data.
  // Missing: MF-K001.
  Result<std::string> get(const hash::Digest& digest);
  // Streams the bytes to a file descriptor (re-hashed, same errors as get).
  Status get_to_fd(const hash::Digest& digest, int fd);
  Result<bool> has(const hash::Digest& digest);
  Result<std::vector<ObjectInfo>> list();

  // Refs: names such as run/<run_id>/trace pointing at digests (MF-K004 for a bad name). set_ref
  // requires the object to be present (MF-K001), so a ref never starts out dangling.
  Status set_ref(std::string_view name, const hash::Digest& digest);
  // Puts bytes and points `name` at them in one transaction, so gc never sees them unreferenced.
  Result<hash::Digest> put_named(std::string_view name, std::string_view bytes);
  Result<std::optional<hash::Digest>> get_ref(std::string_view name);
  Result<bool> remove_ref(std::string_view name);
  Result<std::vector<std::pair<std::string, hash::Digest>>> list_refs();

  Result<StoreStats> stats();
  // Re-hashes every object; `progress(done, total)` is called now and then.
  Result<VerifyReport> verify(
      const std::function<void(std::uint64_t, std::uint64_t)>& progress = {});

  // Everything reachable from the refs: a ref's digest, and recursively every string (value or
  // member name, at any depth) of 64 lowercase hex digits that names an object in the store,
  // inside a reachable object that parses as one strict JSON document, or else inside each of its
  // '\n'-separated lines that does (JSONL: traces), under the strict reader's limits except size
  // (depth over 64 makes a leaf). Anything else is a leaf. Returns the reachable set's digests,
  // sorted.
  Result<std::vector<hash::Digest>> reachable();
  // Removes every object not reachable, in one write transaction (so no concurrent write can slip
  // between marking and sweeping); returns how many were removed. An object put but not yet
  // referenced is garbage: put it and set its ref in one batch() when gc may run concurrently.
  Result<std::uint64_t> gc();

  // Export stream (JSONL of canonical JSON, docs/store.md): one {"data_b64","digest","size"} line
  // per object in the closure of `roots` and of the refs' targets, sorted by digest, then one
  // {"digest","ref"} line per ref in `refs`, sorted by name. A missing root or ref is MF-K001; a
  // corrupt object MF-K003 (the stream then stops short). Read from one consistent snapshot.
  Status export_closure(const std::vector<hash::Digest>& roots,
                        const std::vector<std::string>& refs, int fd);
  // Imports an export stream (a path, "-" = stdin); every object's size and digest are verified
  // before it is stored, refs lines set refs. Idempotent. Returns the number of objects newly
  // added. A bad line (MF-K008 with its line number, MF-K002 for a digest mismatch) stops the
  // import: nothing from it or later lines is applied; the verified objects before it are kept.
  // `progress(read, total)` is called after each chunk read: the bytes read and the file's size
  // (0 for a pipe).
  Result<std::uint64_t> import_stream(
      std::string_view path,
      const std::function<void(std::uint64_t, std::uint64_t)>& progress = {});

 private:
  struct Impl;
  explicit Store(std::unique_ptr<Impl> impl);
  // Stores `size` bytes of an unlinked spool file, which hash to `digest` (put_file, import).
  Status put_spooled(int spool, std::uint64_t size, const hash::Digest& digest);
  std::unique_ptr<Impl> impl_;
};

// Valid ref names: 1-256 bytes of [A-Za-z0-9._/-], no empty, "." or ".." segment, no leading '/'.
bool valid_ref_name(std::string_view name);

}  // namespace mf::store
