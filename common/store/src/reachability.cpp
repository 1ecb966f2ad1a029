// Reachability: the digests an object mentions, the closure of the refs under "mentions", and the
// garbage collection that keeps exactly that closure.
#include <algorithm>
#include <set>

#include "environment.hpp"
#include "mf/json/reader.hpp"
#include "mf/json/value.hpp"

namespace mf::store {

using detail::digest_of;
using detail::val_of;
using detail::view_of;

namespace {

bool is_hex_lower(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

// Cheap pre-filter before a JSON parse: a mention needs 64 hex digits in a row, or an escape that
// could spell them. A large value's pages are released from memory as the scan passes them.
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
    if ((i + 1) % detail::kChunk == 0 && bytes.size() > detail::kChunk) {
      detail::release(bytes.data() + i + 1 - detail::kChunk, detail::kChunk);
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

std::vector<hash::Digest> ref_targets(const std::vector<std::pair<std::string, hash::Digest>>& r) {
  std::vector<hash::Digest> out;
  out.reserve(r.size());
  for (const auto& [name, d] : r) out.push_back(d);
  return out;
}

}  // namespace

Result<std::vector<hash::Digest>> Store::Impl::closure_in(MDB_txn* txn,
                                                          std::vector<hash::Digest> work) {
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

}  // namespace mf::store
