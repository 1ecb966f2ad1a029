// Reachability: the digests an object mentions, the closure of the refs under "mentions", and the
// garbage collection that keeps exactly that closure.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "environment.hpp"
#include "mf/json/reader.hpp"
#include "mf/text/utf8.hpp"

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

// The strict reader's verdict on a document (json::parse under the store's limits: every limit
// but size and string length), reached in one pass that holds no value: only the open containers
// (at most max_depth), the member names of the open objects (to refuse a duplicate) and the
// strings of 64 bytes met, which become mentions only if the whole text is one document. A large
// text's pages are released as the pass leaves them, so memory stays flat however large the value.
// It accepts exactly what parse() accepts (tests/unit/store_test.cpp holds the two together).
class MentionScanner {
 public:
  // True when `text` is one strict JSON document; its 64-byte strings are then in candidates().
  bool scan(std::string_view text) {
    text_ = text;
    at_ = 0;
    released_ = 0;
    depth_ = 0;
    candidates_.clear();
    skip_space();
    if (!value()) return false;
    skip_space();
    return at_ == text_.size();
  }
  const std::vector<std::string>& candidates() const { return candidates_; }

 private:
  static bool is_digit(char c) { return c >= '0' && c <= '9'; }

  bool more() const { return at_ < text_.size(); }
  char peek() const { return more() ? text_[at_] : '\0'; }

  void skip_space() {
    while (more()) {
      const char c = text_[at_];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
      ++at_;
    }
  }

  // Gives back the pages of a large text the pass has left.
  void release_behind() {
    if (text_.size() <= detail::kChunk || at_ - released_ < detail::kChunk) return;
    detail::release(text_.data() + released_, at_ - released_);
    released_ = at_;
  }

  bool value() {
    switch (peek()) {
      case '{':
        return container(true);
      case '[':
        return container(false);
      case '"':
        return string(nullptr);
      case 't':
        return literal("true");
      case 'f':
        return literal("false");
      case 'n':
        return literal("null");
      default:
        return number();
    }
  }

  bool literal(std::string_view word) {
    if (text_.substr(at_, word.size()) != word) return false;
    at_ += word.size();
    return true;
  }

  // As the reader: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, at most max_number_length
  // characters, a finite double.
  bool number() {
    const std::size_t start = at_;
    if (peek() == '-') ++at_;
    if (peek() == '0') {
      ++at_;
    } else if (is_digit(peek())) {
      while (is_digit(peek())) ++at_;
    } else {
      return false;
    }
    if (peek() == '.') {
      ++at_;
      if (!is_digit(peek())) return false;
      while (is_digit(peek())) ++at_;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++at_;
      if (peek() == '+' || peek() == '-') ++at_;
      if (!is_digit(peek())) return false;
      while (is_digit(peek())) ++at_;
    }
    const std::string_view lexeme = text_.substr(start, at_ - start);
    if (lexeme.size() > limits_.max_number_length) return false;
    double d = 0;
    const auto [end, ec] = std::from_chars(lexeme.data(), lexeme.data() + lexeme.size(), d);
    return ec == std::errc() && end == lexeme.data() + lexeme.size() && std::isfinite(d);
  }

  bool container(bool object) {
    if (depth_ >= limits_.max_depth) return false;
    ++depth_;
    ++at_;
    std::unordered_set<std::string> keys;
    std::size_t entries = 0;
    skip_space();
    if (peek() == (object ? '}' : ']')) {
      ++at_;
      --depth_;
      return true;
    }
    for (;;) {
      if (entries++ >= limits_.max_entries) return false;
      if (object) {
        std::string key;
        if (peek() != '"' || !string(&key) || !keys.insert(std::move(key)).second) return false;
        skip_space();
        if (peek() != ':') return false;
        ++at_;
        skip_space();
      }
      if (!value()) return false;
      release_behind();
      skip_space();
      const char c = peek();
      ++at_;
      if (c == (object ? '}' : ']')) break;
      if (c != ',') return false;
      skip_space();
    }
    --depth_;
    return true;
  }

  bool hex4(std::uint32_t& cp) {
    if (at_ + 4 > text_.size()) return false;
    cp = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = text_[at_++];
      const int v = is_digit(c)              ? c - '0'
                    : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                    : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                             : -1;
      if (v < 0) return false;
      cp = cp << 4 | static_cast<std::uint32_t>(v);
    }
    return true;
  }

  // The continuation bytes a UTF-8 sequence led by `lead` needs, and the range of the first.
  static int sequence(unsigned char lead, unsigned char& lo, unsigned char& hi) {
    lo = 0x80;
    hi = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) return 1;
    if (lead == 0xE0) lo = 0xA0;
    if (lead == 0xED) hi = 0x9F;
    if (lead >= 0xE0 && lead <= 0xEF) return 2;
    if (lead == 0xF0) lo = 0x90;
    if (lead == 0xF4) hi = 0x8F;
    if (lead >= 0xF0 && lead <= 0xF4) return 3;
    return -1;
  }

  // A string at at_: valid UTF-8, no control character, valid escapes, no lone surrogate. Its
  // decoded bytes go to *key when given; a string of 64 decoded bytes becomes a candidate.
  bool string(std::string* key) {
    ++at_;
    std::string head;  // the first 65 decoded bytes, for a candidate
    std::string* out = key != nullptr ? key : &head;
    std::size_t decoded = 0;
    auto keep = [&](std::string_view bytes) {
      decoded += bytes.size();
      if (key != nullptr || head.size() <= 64)
        out->append(bytes.substr(0, key ? bytes.size() : 65));
    };
    for (;;) {
      if (!more()) return false;
      const auto c = static_cast<unsigned char>(text_[at_]);
      if (c == '"') {
        ++at_;
        break;
      }
      if (c < 0x20) return false;
      if (c == '\\') {
        ++at_;
        if (!more()) return false;
        const char e = text_[at_++];
        std::string one;
        switch (e) {
          case '"':
            one = "\"";
            break;
          case '\\':
            one = "\\";
            break;
          case '/':
            one = "/";
            break;
          case 'b':
            one = "\b";
            break;
          case 'f':
            one = "\f";
            break;
          case 'n':
            one = "\n";
            break;
          case 'r':
            one = "\r";
            break;
          case 't':
            one = "\t";
            break;
          case 'u': {
            std::uint32_t cp = 0;
            if (!hex4(cp)) return false;
            if (cp >= 0xDC00 && cp <= 0xDFFF) return false;  // a lone low surrogate
            if (cp >= 0xD800 && cp <= 0xDBFF) {
              std::uint32_t low = 0;
              if (text_.substr(at_, 2) != "\\u") return false;
              at_ += 2;
              if (!hex4(low) || low < 0xDC00 || low > 0xDFFF) return false;
              cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            }
            text::append_utf8(static_cast<char32_t>(cp), one);
            break;
          }
          default:
            return false;
        }
        keep(one);
        continue;
      }
      if (c < 0x80) {
        // A run of plain ASCII at once, at most a chunk, so a long one is released as it goes.
        std::size_t end = at_ + 1;
        const std::size_t stop = std::min(text_.size(), at_ + detail::kChunk);
        while (end < stop) {
          const auto d = static_cast<unsigned char>(text_[end]);
          if (d < 0x20 || d >= 0x80 || d == '"' || d == '\\') break;
          ++end;
        }
        keep(text_.substr(at_, end - at_));
        at_ = end;
        release_behind();
        continue;
      }
      unsigned char lo = 0, hi = 0;
      const int n = sequence(c, lo, hi);
      if (n < 0 || at_ + static_cast<std::size_t>(n) >= text_.size()) return false;
      for (int i = 1; i <= n; ++i) {
        const auto d = static_cast<unsigned char>(text_[at_ + static_cast<std::size_t>(i)]);
        if (d < (i == 1 ? lo : 0x80) || d > (i == 1 ? hi : 0xBF)) return false;
      }
      keep(text_.substr(at_, static_cast<std::size_t>(n) + 1));
      at_ += static_cast<std::size_t>(n) + 1;
    }
    if (decoded == 64) candidates_.push_back(out->substr(0, 64));
    return true;
  }

  json::ReadLimits limits_;
  std::string_view text_;
  std::size_t at_ = 0;
  std::size_t released_ = 0;
  std::size_t depth_ = 0;
  std::vector<std::string> candidates_;
};

// Calls on_digest for every 64-lowercase-hex string in `bytes` read as one strict JSON document,
// or else in each of its lines that is one.
template <class F>
void scan_mentions(std::string_view bytes, F&& on_digest) {
  if (!might_mention_digest(bytes)) return;
  MentionScanner scanner;
  const auto visit = [&] {
    for (const std::string& s : scanner.candidates()) {
      hash::Digest d;
      if (hash::from_hex(s, d)) on_digest(d);
    }
  };
  if (scanner.scan(bytes)) {
    visit();
    return;
  }
  const std::size_t first_nl = bytes.find('\n');
  if (first_nl == std::string_view::npos || first_nl + 1 == bytes.size()) return;  // one line
  while (!bytes.empty()) {
    const std::size_t nl = bytes.find('\n');
    const std::string_view line = bytes.substr(0, nl);
    bytes.remove_prefix(nl == std::string_view::npos ? bytes.size() : nl + 1);
    if (!might_mention_digest(line)) continue;
    if (scanner.scan(line)) visit();
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
