// The LMDB-backed content-addressed store. The only file that includes <lmdb.h>.
//
// Transactions are short and scoped to one operation (a batch() spans its callback), so the map can
// be grown between them: LMDB allows mdb_env_set_mapsize only while this process has no transaction
// open. A write that finds the map full (MDB_MAP_FULL, from a put or from the commit) is aborted,
// the map doubled and the write run again; a transaction that finds the map grown by another
// process (MDB_MAP_RESIZED) adopts the new size and starts again.
#include "mf/store/store.hpp"

#include <fcntl.h>
#include <lmdb.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>
#include <type_traits>
#include <utility>

#include "mf/diag/codes.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"

namespace mf::store {

namespace detail {
// Test seam: when set, put_file calls it between its hashing pass and its storing pass.
extern std::function<void(const std::string&)> put_file_between_passes;
std::function<void(const std::string&)> put_file_between_passes;
}  // namespace detail

using io::Fd;

namespace {

namespace codes = diag::codes;

constexpr int kMaxRetries = 48;                 // map growths / resize adoptions per operation
constexpr std::uint64_t kProgressEvery = 1000;  // verify() progress callback period
constexpr std::size_t kChunk = std::size_t{1} << 20;
constexpr std::size_t kImportBatchObjects = 1024;
constexpr std::size_t kImportBatchBytes = std::size_t{64} << 20;

MDB_val val_of(const hash::Digest& d) {
  return {d.size(), const_cast<std::uint8_t*>(d.data())};
}
MDB_val val_of(std::string_view s) {
  return {s.size(), const_cast<char*>(s.data())};
}
std::string_view view_of(const MDB_val& v) {
  return {static_cast<const char*>(v.mv_data), v.mv_size};
}
bool digest_of(const MDB_val& v, hash::Digest& out) {
  if (v.mv_size != out.size()) return false;
  std::memcpy(out.data(), v.mv_data, out.size());
  return true;
}

// Names from users go into messages; keep messages printable ASCII (and valid UTF-8 in JSON).
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

// ---- base64 (RFC 4648, standard alphabet, padded) ----

constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void b64_encode(std::string_view in, std::string& out) {
  std::size_t i = 0;
  out.reserve(out.size() + (in.size() + 2) / 3 * 4);
  for (; i + 3 <= in.size(); i += 3) {
    const std::uint32_t v = (std::uint32_t(std::uint8_t(in[i])) << 16) |
                            (std::uint32_t(std::uint8_t(in[i + 1])) << 8) | std::uint8_t(in[i + 2]);
    out += kB64[(v >> 18) & 63];
    out += kB64[(v >> 12) & 63];
    out += kB64[(v >> 6) & 63];
    out += kB64[v & 63];
  }
  const std::size_t rest = in.size() - i;
  if (rest == 0) return;
  std::uint32_t v = std::uint32_t(std::uint8_t(in[i])) << 16;
  if (rest == 2) v |= std::uint32_t(std::uint8_t(in[i + 1])) << 8;
  out += kB64[(v >> 18) & 63];
  out += kB64[(v >> 12) & 63];
  out += rest == 2 ? kB64[(v >> 6) & 63] : '=';
  out += '=';
}

int b64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// Strict: whole quads, padding only at the end, unused bits zero (one encoding per byte string).
bool b64_decode(std::string_view in, std::string& out) {
  if (in.size() % 4 != 0) return false;
  out.clear();
  out.reserve(in.size() / 4 * 3);
  for (std::size_t i = 0; i < in.size(); i += 4) {
    const bool last = i + 4 == in.size();
    int pad = 0;
    if (last && in[i + 3] == '=') pad = in[i + 2] == '=' ? 2 : 1;
    std::uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      const int d = k >= 4 - pad ? 0 : b64_value(in[i + k]);
      if (d < 0) return false;
      v = (v << 6) | std::uint32_t(d);
    }
    out += char((v >> 16) & 0xff);
    if (pad < 2) out += char((v >> 8) & 0xff);
    if (pad < 1) out += char(v & 0xff);
    if ((pad == 2 && (v & 0xffff) != 0) || (pad == 1 && (v & 0xff) != 0)) return false;
  }
  return true;
}

// ---- reachability: digests mentioned inside an object ----

bool is_hex_lower(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

// Cheap pre-filter before a JSON parse: a mention needs 64 hex digits in a row, or an escape that
// could spell them.
bool might_mention_digest(std::string_view bytes) {
  std::size_t run = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const char c = bytes[i];
    if (is_hex_lower(c)) {
      if (++run >= 64) return true;
    } else {
      run = 0;
      if (c == '\\' && i + 1 < bytes.size() && bytes[i + 1] == 'u') return true;
    }
  }
  return false;
}

template <class F>
void walk_strings(const json::Value& root, F&& on_string) {
  std::vector<const json::Value*> stack{&root};  // iterative: user data may be deep
  while (!stack.empty()) {
    const json::Value* v = stack.back();
    stack.pop_back();
    switch (v->kind()) {
      case json::Kind::String:
        on_string(v->as_string());
        break;
      case json::Kind::Array:
        for (const auto& e : v->as_array()) stack.push_back(&e);
        break;
      case json::Kind::Object:
        for (const auto& m : v->as_object()) {
          on_string(m.key);
          stack.push_back(&m.value);
        }
        break;
      default:
        break;
    }
  }
}

// Calls on_digest for every 64-lowercase-hex string in `bytes` read as one strict JSON document,
// or else in each of its lines that is one.
template <class F>
void scan_mentions(std::string_view bytes, F&& on_digest) {
  if (!might_mention_digest(bytes)) return;
  json::ReadLimits limits;
  limits.max_bytes = std::max(limits.max_bytes, bytes.size());
  limits.max_string_bytes = std::max(limits.max_string_bytes, bytes.size());
  const auto visit = [&](const json::Value& v) {
    walk_strings(v, [&](const std::string& s) {
      hash::Digest d;
      if (s.size() == 64 && hash::from_hex(s, d)) on_digest(d);
    });
  };
  if (auto whole = json::parse(bytes, limits)) {
    visit(whole.value());
    return;
  }
  const std::size_t first_nl = bytes.find('\n');
  if (first_nl == std::string_view::npos || first_nl + 1 == bytes.size()) return;  // one line
  while (!bytes.empty()) {
    const std::size_t nl = bytes.find('\n');
    const std::string_view line = bytes.substr(0, nl);
    bytes.remove_prefix(nl == std::string_view::npos ? bytes.size() : nl + 1);
    if (!might_mention_digest(line)) continue;
    if (auto v = json::parse(line, limits)) visit(v.value());
  }
}

// ---- file helpers ----

Result<std::string> read_all(int fd, const std::string& name) {
  std::string out;
  std::unique_ptr<char[]> buf(new char[kChunk]);
  for (;;) {
    const ssize_t n = ::read(fd, buf.get(), kChunk);
    if (n == 0) return out;
    if (n < 0) {
      if (errno == EINTR) continue;
      return diag::error(codes::kMissing, "cannot read " + name + ": " + std::strerror(errno));
    }
    out.append(buf.get(), static_cast<std::size_t>(n));
  }
}

// Reads up to `size` bytes at `offset`; returns how many were read (fewer only at end of file).
Result<std::size_t> pread_full(int fd, char* dst, std::size_t size, off_t offset,
                               const std::string& name) {
  std::size_t done = 0;
  while (done < size) {
    const std::size_t want = std::min(size - done, kChunk * 16);
    const ssize_t n = ::pread(fd, dst + done, want, offset + static_cast<off_t>(done));
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return diag::error(codes::kMissing, "cannot read " + name + ": " + std::strerror(errno));
    }
    done += static_cast<std::size_t>(n);
  }
  return done;
}

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

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
    if (env != nullptr) mdb_env_close(env);
    if (registered) {
      const std::lock_guard lock(open_dirs_mutex());
      open_dirs().erase(dir_id);
    }
  }

  // Every LMDB failure inside a transaction goes through here so MAP_FULL is noticed.
  diag::Diagnostic fail(int rc, std::string_view what) {
    if (rc == MDB_MAP_FULL) map_full = true;
    return lmdb_error(rc, what);
  }

  diag::Diagnostic read_only() const {
    return diag::error(codes::kStoreLmdb, "store " + dir + " is open read-only");
  }

  // mdb_txn_begin, adopting a map another process has grown.
  int begin(unsigned flags, MDB_txn** txn) const {
    for (int attempt = 0;; ++attempt) {
      const int rc = mdb_txn_begin(env, nullptr, flags, txn);
      if (rc != MDB_MAP_RESIZED || attempt >= kMaxRetries) return rc;
      const int rs = mdb_env_set_mapsize(env, 0);
      if (rs != 0) return rs;
    }
  }

  std::uint64_t map_size() const {
    MDB_envinfo info;
    mdb_env_info(env, &info);
    return info.me_mapsize;
  }

  Status set_map_size(std::uint64_t bytes) {
    const int rc = mdb_env_set_mapsize(env, static_cast<std::size_t>(bytes));
    if (rc != 0) return lmdb_error(rc, "cannot resize the map of " + dir);
    return {};
  }

  Status grow() { return set_map_size(map_size() * 2); }

  // Grows the map ahead of a large write so that it is not retried (and its input re-read) once per
  // doubling. Only outside a batch: the map cannot change under an open transaction.
  Status ensure_room(std::uint64_t extra) {
    if (batch_txn != nullptr) return {};
    MDB_envinfo info;
    MDB_stat st;
    mdb_env_info(env, &info);
    mdb_env_stat(env, &st);
    const std::uint64_t used = (std::uint64_t(info.me_last_pgno) + 1) * st.ms_psize;
    const std::uint64_t need = used + extra + extra / 8 + (std::uint64_t{1} << 20);
    if (need <= info.me_mapsize) return {};
    constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
    return set_map_size(std::max<std::uint64_t>(std::uint64_t(info.me_mapsize) * 2,
                                                (need + kMiB - 1) / kMiB * kMiB));
  }

  // Runs fn(txn) in a read-only snapshot (or inside the active batch, to see its writes).
  template <class F>
  std::invoke_result_t<F&, MDB_txn*> read(F&& fn) {
    if (batch_txn != nullptr) return fn(batch_txn);
    MDB_txn* txn = nullptr;
    const int rc = begin(MDB_RDONLY, &txn);
    if (rc != 0) return lmdb_error(rc, "cannot begin a read transaction on " + dir);
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
      if (rc != 0) return lmdb_error(rc, "cannot begin a write transaction on " + dir);
      auto result = fn(txn);
      if (!result.ok()) {
        mdb_txn_abort(txn);
        if (!map_full || attempt >= kMaxRetries) return result;
      } else {
        rc = mdb_txn_commit(txn);  // frees txn, committed or not
        if (rc == 0) return result;
        if (rc != MDB_MAP_FULL || attempt >= kMaxRetries) {
          return lmdb_error(rc, "cannot commit to " + dir);
        }
      }
      if (auto grown = grow(); !grown) return grown.take_diagnostics();
    }
  }

  // Stores bytes under digest in txn unless present; true when newly added.
  Result<bool> put_in(MDB_txn* txn, const hash::Digest& digest, std::string_view bytes) {
    MDB_val key = val_of(digest);
    MDB_val val = val_of(bytes);
    const int rc = mdb_put(txn, objects, &key, &val, MDB_NOOVERWRITE);
    if (rc == MDB_KEYEXIST) return false;
    if (rc != 0) return fail(rc, "cannot store object " + hash::to_hex(digest));
    return true;
  }

  // put() once the digest is known to be right.
  Status store_bytes(const hash::Digest& digest, std::string_view bytes) {
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

  Result<bool> has_in(MDB_txn* txn, const hash::Digest& digest) {
    MDB_val key = val_of(digest);
    MDB_val val;
    const int rc = mdb_get(txn, objects, &key, &val);
    if (rc == MDB_NOTFOUND) return false;
    if (rc != 0) return fail(rc, "cannot look up object " + hash::to_hex(digest));
    return true;
  }

  // The verified bytes of an object, viewing LMDB's map (valid while txn lives).
  Result<std::string_view> get_in(MDB_txn* txn, const hash::Digest& digest) {
    MDB_val key = val_of(digest);
    MDB_val val;
    const int rc = mdb_get(txn, objects, &key, &val);
    if (rc == MDB_NOTFOUND) return missing_object(digest);
    if (rc != 0) return fail(rc, "cannot read object " + hash::to_hex(digest));
    const std::string_view bytes = view_of(val);
    if (hash::sha256(bytes) != digest) {
      return diag::error(codes::kStoreCorrupt, "object " + hash::to_hex(digest) + " is corrupt");
    }
    return bytes;
  }

  // Visits every entry of `dbi` in key order until `visit` fails; LMDB errors name `what`. The
  // cursor is passed along so a visitor may delete the current entry.
  using Visitor = std::function<Status(const MDB_val& key, const MDB_val& val, MDB_cursor* cur)>;
  Status scan(MDB_txn* txn, MDB_dbi dbi, std::string_view what, const Visitor& visit) {
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

  Result<std::vector<std::pair<std::string, hash::Digest>>> refs_in(MDB_txn* txn) {
    std::vector<std::pair<std::string, hash::Digest>> out;
    Status scanned =
        scan(txn, refs, "cannot list refs",
             [&](const MDB_val& key, const MDB_val& val, MDB_cursor*) -> Status {
               hash::Digest d{};
               if (!digest_of(val, d)) {
                 return diag::error(codes::kStoreLmdb, "ref \"" + printable(view_of(key)) +
                                                           "\" does not hold a 32-byte digest");
               }
               out.emplace_back(std::string(view_of(key)), d);
               return {};
             });
    if (!scanned) return scanned.take_diagnostics();
    return out;
  }

  // The closure of `roots` under "mentions a stored digest" (see reachable() in the header),
  // sorted. Roots absent from the store are skipped.
  Result<std::vector<hash::Digest>> closure_in(MDB_txn* txn, std::vector<hash::Digest> work) {
    std::set<hash::Digest> seen;
    while (!work.empty()) {
      const hash::Digest d = work.back();
      work.pop_back();
      if (seen.count(d) != 0) continue;
      MDB_val key = val_of(d);
      MDB_val val;
      const int rc = mdb_get(txn, objects, &key, &val);
      if (rc == MDB_NOTFOUND) continue;
      if (rc != 0) return fail(rc, "cannot read object " + hash::to_hex(d));
      seen.insert(d);
      scan_mentions(view_of(val), [&](const hash::Digest& m) {
        if (seen.count(m) == 0) work.push_back(m);
      });
    }
    return std::vector<hash::Digest>(seen.begin(), seen.end());
  }
};

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::~Store() = default;

std::string Store::resolve_dir(const std::string& flag) {
  if (!flag.empty()) return flag;
  const char* env = std::getenv("MF_STORE");
  if (env != nullptr && *env != '\0') return env;
  return kDefaultDir;
}

Result<std::unique_ptr<Store>> Store::open(const std::string& dir, Mode mode,
                                           const OpenOptions& options) {
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

  auto impl = std::make_unique<Impl>();
  impl->dir = dir;
  impl->mode = mode;
  struct stat dst {};
  if (::stat(dir.c_str(), &dst) != 0 || !S_ISDIR(dst.st_mode)) {
    return diag::error(codes::kStoreLmdb, "store directory " + dir + " is not a directory");
  }
  {
    const std::lock_guard lock(open_dirs_mutex());
    impl->dir_id = {dst.st_dev, dst.st_ino};
    if (!open_dirs().insert(impl->dir_id).second) {
      return diag::error(codes::kStoreLmdb, "store " + dir + " is already open in this process");
    }
    impl->registered = true;
  }

  int rc = mdb_env_create(&impl->env);
  if (rc != 0) return lmdb_error(rc, "cannot create an LMDB environment");
  mdb_env_set_maxdbs(impl->env, 2);
  if (!have_data && options.initial_map_bytes > 0) {
    mdb_env_set_mapsize(impl->env, static_cast<std::size_t>(options.initial_map_bytes));
  }
  const unsigned flags = MDB_NOTLS | (mode == Mode::ReadOnly ? MDB_RDONLY : 0u);
  rc = mdb_env_open(impl->env, dir.c_str(), flags, 0644);
  if (rc != 0) {
    mdb_env_close(impl->env);
    impl->env = nullptr;
    return lmdb_error(rc, "cannot open the store at " + dir);
  }
  int dead = 0;
  mdb_reader_check(impl->env, &dead);  // free reader slots of killed processes
  if (mode == Mode::ReadWrite && impl->map_size() < options.initial_map_bytes) {
    if (auto s = impl->set_map_size(options.initial_map_bytes); !s) return s.take_diagnostics();
  }

  // Open both databases in a read transaction; only a new store needs a write to create them.
  MDB_txn* txn = nullptr;
  rc = impl->begin(MDB_RDONLY, &txn);
  if (rc != 0) return lmdb_error(rc, "cannot begin a read transaction on " + dir);
  rc = mdb_dbi_open(txn, "objects", 0, &impl->objects);
  if (rc == 0) rc = mdb_dbi_open(txn, "refs", 0, &impl->refs);
  if (rc == 0) {
    rc = mdb_txn_commit(txn);  // keeps the handles
    if (rc != 0) return lmdb_error(rc, "cannot open the databases of " + dir);
  } else {
    mdb_txn_abort(txn);
    if (rc != MDB_NOTFOUND) return lmdb_error(rc, "cannot open the databases of " + dir);
    if (mode == Mode::ReadOnly) return diag::error(codes::kStoreAbsent, "no store at " + dir);
    Impl& self = *impl;
    auto created = self.write([&](MDB_txn* w) -> Status {
      int r = mdb_dbi_open(w, "objects", MDB_CREATE, &self.objects);
      if (r == 0) r = mdb_dbi_open(w, "refs", MDB_CREATE, &self.refs);
      if (r != 0) return self.fail(r, "cannot create the databases of " + dir);
      return {};
    });
    if (!created) return created.take_diagnostics();
  }
  return std::unique_ptr<Store>(new Store(std::move(impl)));
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

Result<hash::Digest> Store::put_file(const std::string& path) {
  Impl& s = *impl_;
  if (s.mode == Mode::ReadOnly) return s.read_only();
  if (path == "-") {
    auto bytes = read_all(STDIN_FILENO, "<stdin>");
    if (!bytes) return bytes.take_diagnostics();
    return put(*bytes);
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
    auto bytes = read_all(fd.get(), path);
    if (!bytes) return bytes.take_diagnostics();
    return put(*bytes);
  }

  // Pass 1: hash, streaming.
  hash::Sha256 first;
  std::uint64_t size = 0;
  {
    std::unique_ptr<char[]> buf(new char[kChunk]);
    for (;;) {
      auto n = pread_full(fd.get(), buf.get(), kChunk, static_cast<off_t>(size), path);
      if (!n) return n.take_diagnostics();
      if (*n == 0) break;
      first.update(buf.get(), *n);
      size += *n;
    }
  }
  const hash::Digest digest = first.finish();
  if (detail::put_file_between_passes) detail::put_file_between_passes(path);
  if (s.batch_txn == nullptr) {
    auto present = has(digest);
    if (!present) return present.take_diagnostics();
    if (*present) return digest;
    if (auto room = s.ensure_room(size); !room) return room.take_diagnostics();
  }

  // Pass 2: read the file straight into the space LMDB reserves for the value, and check that
  // what was stored is what was hashed.
  auto stored = s.write([&](MDB_txn* txn) -> Status {
    MDB_val key = val_of(digest);
    MDB_val val{static_cast<std::size_t>(size), nullptr};
    const int rc = mdb_put(txn, s.objects, &key, &val, MDB_RESERVE | MDB_NOOVERWRITE);
    if (rc == MDB_KEYEXIST) return {};
    if (rc != 0) return s.fail(rc, "cannot store object " + hash::to_hex(digest));
    char* dst = static_cast<char*>(val.mv_data);
    auto n = pread_full(fd.get(), dst, static_cast<std::size_t>(size), 0, path);
    if (!n) return n.take_diagnostics();
    char extra = 0;
    auto more = pread_full(fd.get(), &extra, 1, static_cast<off_t>(size), path);
    if (!more) return more.take_diagnostics();
    if (*n != size || *more != 0 || hash::sha256({dst, static_cast<std::size_t>(size)}) != digest) {
      return diag::error(codes::kStoreInputChanged,
                         path + " changed while it was being stored; nothing was stored");
    }
    return {};
  });
  if (!stored) return stored.take_diagnostics();
  return digest;
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
      if (!full || attempt >= kMaxRetries) {
        return result.ok() ? lmdb_error(MDB_MAP_FULL, "batch on " + s.dir) : std::move(result);
      }
    } else {
      rc = mdb_txn_commit(txn);
      if (rc == 0) return {};
      if (rc != MDB_MAP_FULL || attempt >= kMaxRetries) {
        return lmdb_error(rc, "cannot commit to " + s.dir);
      }
    }
    if (auto grown = s.grow(); !grown) return grown;
  }
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
    return io::write_all(fd, *bytes);
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
  return s.read([&](MDB_txn* txn) -> Result<std::optional<hash::Digest>> {
    MDB_val key = val_of(name);
    MDB_val val;
    const int rc = mdb_get(txn, s.refs, &key, &val);
    if (rc == MDB_NOTFOUND) return std::optional<hash::Digest>();
    if (rc != 0) return s.fail(rc, "cannot read ref " + std::string(name));
    hash::Digest d{};
    if (!digest_of(val, d)) {
      return diag::error(codes::kStoreLmdb,
                         "ref " + std::string(name) + " does not hold a 32-byte digest");
    }
    return std::optional<hash::Digest>(d);
  });
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

namespace {
std::vector<hash::Digest> ref_targets(const std::vector<std::pair<std::string, hash::Digest>>& r) {
  std::vector<hash::Digest> out;
  out.reserve(r.size());
  for (const auto& [name, d] : r) out.push_back(d);
  return out;
}
}  // namespace

Result<std::vector<hash::Digest>> Store::reachable() {
  Impl& s = *impl_;
  return s.read([&](MDB_txn* txn) -> Result<std::vector<hash::Digest>> {
    auto refs = s.refs_in(txn);
    if (!refs) return refs.take_diagnostics();
    return s.closure_in(txn, ref_targets(*refs));
  });
}

Result<std::uint64_t> Store::gc() {
  Impl& s = *impl_;
  return s.write([&](MDB_txn* txn) -> Result<std::uint64_t> {
    auto refs = s.refs_in(txn);
    if (!refs) return refs.take_diagnostics();
    auto keep = s.closure_in(txn, ref_targets(*refs));
    if (!keep) return keep.take_diagnostics();
    std::uint64_t removed = 0;
    Status swept =
        s.scan(txn, s.objects, "cannot collect garbage",
               [&](const MDB_val& key, const MDB_val&, MDB_cursor* cur) -> Status {
                 hash::Digest d{};
                 if (digest_of(key, d) && std::binary_search(keep->begin(), keep->end(), d)) {
                   return {};
                 }
                 // The next MDB_NEXT lands on the entry after the deleted one.
                 const int rc = mdb_cursor_del(cur, 0);
                 if (rc != 0) return s.fail(rc, "cannot collect garbage");
                 ++removed;
                 return {};
               });
    if (!swept) return swept.take_diagnostics();
    return removed;
  });
}

Status Store::export_closure(const std::vector<hash::Digest>& roots,
                             const std::vector<std::string>& refs, int fd) {
  Impl& s = *impl_;
  return s.read([&](MDB_txn* txn) -> Status {
    std::vector<hash::Digest> start = roots;
    std::vector<std::pair<std::string, hash::Digest>> named;
    for (const auto& name : refs) {
      if (!valid_ref_name(name)) return bad_ref(name);
      MDB_val key = val_of(name);
      MDB_val val;
      const int rc = mdb_get(txn, s.refs, &key, &val);
      if (rc == MDB_NOTFOUND) {
        return diag::error(codes::kStoreMissingObject, "ref " + name + " does not exist");
      }
      if (rc != 0) return s.fail(rc, "cannot read ref " + name);
      hash::Digest d{};
      if (!digest_of(val, d)) {
        return diag::error(codes::kStoreLmdb, "ref " + name + " does not hold a 32-byte digest");
      }
      named.emplace_back(name, d);
      start.push_back(d);
    }
    for (const auto& d : start) {
      auto present = s.has_in(txn, d);
      if (!present) return present.take_diagnostics();
      if (!*present) return missing_object(d);
    }
    auto closure = s.closure_in(txn, std::move(start));
    if (!closure) return closure.take_diagnostics();

    std::string out;
    const auto flush = [&](std::size_t above) -> Status {
      if (out.size() <= above) return {};
      auto w = io::write_all(fd, out);
      out.clear();
      return w;
    };
    for (const auto& d : *closure) {
      auto bytes = s.get_in(txn, d);
      if (!bytes) return bytes.take_diagnostics();
      out += "{\"data_b64\":\"";
      constexpr std::size_t kPiece = 3 * (std::size_t{1} << 18);  // a multiple of 3: no padding
      for (std::size_t at = 0; at < bytes->size(); at += kPiece) {
        b64_encode(bytes->substr(at, kPiece), out);
        if (auto w = flush(kChunk); !w) return w;
      }
      out += "\",\"digest\":\"" + hash::to_hex(d) + "\",\"size\":" + std::to_string(bytes->size()) +
             "}\n";
      if (auto w = flush(kChunk); !w) return w;
    }
    std::sort(named.begin(), named.end());
    named.erase(std::unique(named.begin(), named.end()), named.end());
    for (const auto& [name, d] : named) {
      out += "{\"digest\":\"" + hash::to_hex(d) + "\",\"ref\":";
      json::write_string(name, out);
      out += "}\n";
    }
    return flush(0);
  });
}

namespace {

// One parsed, verified line of an export stream.
struct ImportLine {
  std::int64_t line = 0;
  hash::Digest digest{};
  std::string ref;    // a ref line when non-empty
  std::string bytes;  // an object line's data
};

diag::Diagnostic bad_line(std::int64_t line, const std::string& what) {
  return diag::error(codes::kStoreBadExport,
                     "export stream line " + std::to_string(line) + ": " + what, {}, line);
}

Result<ImportLine> parse_import_line(std::string_view text, std::int64_t line) {
  json::ReadLimits limits;
  limits.max_bytes = std::max(limits.max_bytes, text.size());
  limits.max_string_bytes = std::max(limits.max_string_bytes, text.size());
  auto parsed = json::parse(text, limits);
  if (!parsed) {
    const auto& d = parsed.diagnostics().front();
    auto out = bad_line(line, "not strict JSON: " + d.message);
    out.column = d.column;
    return out;
  }
  const json::Value& v = parsed.value();
  if (!v.is_object()) return bad_line(line, "not a JSON object");
  ImportLine out;
  out.line = line;
  const json::Value* digest = v.find("digest");
  if (digest == nullptr || !digest->is_string() ||
      !hash::from_hex(digest->as_string(), out.digest)) {
    return bad_line(line, "\"digest\" must be 64 lowercase hex digits");
  }
  if (const json::Value* ref = v.find("ref")) {
    if (v.as_object().size() != 2) return bad_line(line, "a ref line has exactly digest and ref");
    if (!ref->is_string() || !valid_ref_name(ref->as_string())) {
      auto d = bad_ref(ref->is_string() ? ref->as_string() : std::string());
      d.line = line;
      return d;
    }
    out.ref = ref->as_string();
    return out;
  }
  const json::Value* data = v.find("data_b64");
  const json::Value* size = v.find("size");
  if (v.as_object().size() != 3 || data == nullptr || size == nullptr) {
    return bad_line(line, "an object line has exactly data_b64, digest and size");
  }
  const auto n = size->is_number() ? size->as_exact_int() : std::nullopt;
  if (!n || *n < 0) return bad_line(line, "\"size\" must be a non-negative integer");
  if (!data->is_string() || !b64_decode(data->as_string(), out.bytes)) {
    return bad_line(line, "\"data_b64\" is not padded standard base64");
  }
  if (out.bytes.size() != static_cast<std::uint64_t>(*n)) {
    return bad_line(line, "\"data_b64\" holds " + std::to_string(out.bytes.size()) +
                              " bytes, \"size\" says " + std::to_string(*n));
  }
  const hash::Digest actual = hash::sha256(out.bytes);
  if (actual != out.digest) {
    return diag::error(codes::kStoreDigestMismatch,
                       "export stream line " + std::to_string(line) + ": the data hashes to " +
                           hash::to_hex(actual) + ", not to " + hash::to_hex(out.digest),
                       {}, line);
  }
  return out;
}

}  // namespace

Result<std::uint64_t> Store::import_stream(std::string_view path) {
  Impl& s = *impl_;
  if (s.mode == Mode::ReadOnly) return s.read_only();
  const std::string name = path == "-" ? "<stdin>" : std::string(path);
  int raw = STDIN_FILENO;
  if (path != "-") {
    raw = ::open(std::string(path).c_str(), O_RDONLY | O_CLOEXEC);
    if (raw < 0) {
      return diag::error(codes::kMissing, "cannot open " + name + ": " + std::strerror(errno));
    }
  }
  const Fd owned(path == "-" ? -1 : raw);

  std::uint64_t added = 0;
  std::vector<ImportLine> pending;  // verified object lines not yet committed
  std::size_t pending_bytes = 0;
  const auto flush = [&]() -> Status {
    if (pending.empty()) return {};
    if (auto room = s.ensure_room(pending_bytes + pending.size() * 64); !room) return room;
    auto n = s.write([&](MDB_txn* txn) -> Result<std::uint64_t> {
      std::uint64_t fresh = 0;  // counted per attempt: a retried transaction starts over
      for (const auto& obj : pending) {
        auto put = s.put_in(txn, obj.digest, obj.bytes);
        if (!put) return put.take_diagnostics();
        fresh += *put ? 1 : 0;
      }
      return fresh;
    });
    if (!n) return n.take_diagnostics();
    added += *n;
    pending.clear();
    pending_bytes = 0;
    return {};
  };
  const auto apply_ref = [&](const ImportLine& r) -> Status {
    if (auto f = flush(); !f) return f;
    auto set = set_ref(r.ref, r.digest);
    if (!set) {
      auto ds = set.take_diagnostics();
      for (auto& d : ds) d.line = r.line;
      return ds;
    }
    return {};
  };
  const auto take_line = [&](std::string_view text, std::int64_t line) -> Status {
    auto parsed = parse_import_line(text, line);
    if (!parsed) {
      auto ds = parsed.take_diagnostics();
      if (auto f = flush(); !f) return f;  // keep the verified lines before this one
      return ds;
    }
    if (!parsed->ref.empty()) return apply_ref(*parsed);
    pending_bytes += parsed->bytes.size();
    pending.push_back(std::move(parsed.value()));
    if (pending.size() >= kImportBatchObjects || pending_bytes >= kImportBatchBytes) return flush();
    return {};
  };

  std::string partial;
  std::int64_t line = 0;
  std::unique_ptr<char[]> buf(new char[kChunk]);
  for (;;) {
    const ssize_t got = ::read(raw, buf.get(), kChunk);
    if (got < 0) {
      if (errno == EINTR) continue;
      return diag::error(codes::kMissing, "cannot read " + name + ": " + std::strerror(errno));
    }
    if (got == 0) break;
    std::string_view chunk(buf.get(), static_cast<std::size_t>(got));
    while (!chunk.empty()) {
      const std::size_t nl = chunk.find('\n');
      if (nl == std::string_view::npos) {
        partial.append(chunk);
        break;
      }
      ++line;
      Status st;
      if (partial.empty()) {
        st = take_line(chunk.substr(0, nl), line);
      } else {
        partial.append(chunk.substr(0, nl));
        st = take_line(partial, line);
        partial.clear();
      }
      if (!st) return st.take_diagnostics();
      chunk.remove_prefix(nl + 1);
    }
  }
  if (!partial.empty()) {  // a last line without '\n'
    if (auto st = take_line(partial, ++line); !st) return st.take_diagnostics();
  }
  if (auto f = flush(); !f) return f.take_diagnostics();
  return added;
}

}  // namespace mf::store
