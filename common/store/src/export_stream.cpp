// The export stream (docs/store.md): JSONL of canonical JSON, one line per object of a closure and
// one per ref, written from one snapshot; and its strict import, verified line by line.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>

#include "environment.hpp"
#include "mf/diag/codes.hpp"
#include "mf/hash/base64.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"

namespace mf::store {

using detail::bad_ref;
using detail::kChunk;
using detail::missing_object;
using io::Fd;

namespace {

namespace codes = diag::codes;

constexpr std::size_t kImportBatchObjects = 1024;
constexpr std::size_t kImportBatchBytes = std::size_t{64} << 20;

}  // namespace

Status Store::export_closure(const std::vector<hash::Digest>& roots,
                             const std::vector<std::string>& refs, int fd) {
  Impl& s = *impl_;
  return s.read([&](MDB_txn* txn) -> Status {
    std::vector<hash::Digest> start = roots;
    std::vector<std::pair<std::string, hash::Digest>> named;
    for (const auto& name : refs) {
      if (!valid_ref_name(name)) return bad_ref(name);
      auto target = s.ref_in(txn, name);
      if (!target) return target.take_diagnostics();
      if (!*target) {
        return diag::error(codes::kStoreMissingObject, "ref " + name + " does not exist");
      }
      named.emplace_back(name, **target);
      start.push_back(**target);
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
      if (Status w = detail::for_each_piece(*bytes, kPiece,
                                            [&](std::string_view piece) {
                                              hash::base64_append(piece, out);
                                              return flush(kChunk);
                                            });
          !w) {
        return w;
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
  if (!data->is_string() || !hash::base64_decode(data->as_string(), out.bytes)) {
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

// An object line longer than kStreamAbove in the export's own (canonical) form is decoded as it
// arrives instead of held: its base64 into an unlinked spool file and a hash, its short tail
// (digest and size) checked at the end of the line. Other lines are read whole.
constexpr std::string_view kObjectPrefix = "{\"data_b64\":\"";
constexpr std::size_t kStreamAbove = std::size_t{8} << 20;
constexpr std::size_t kMaxTail = 128;  // ","digest":"<64 hex>","size":<digits>}

// A long line that is not an object line in the export's form: refused as soon as it is, so a line
// of any length costs at most kStreamAbove bytes of memory.
diag::Diagnostic not_streamable(std::int64_t line) {
  return bad_line(line, "a line over " + std::to_string(kStreamAbove >> 20) +
                            " MiB must be an object line in the export's canonical form");
}

class StreamedObject {
 public:
  StreamedObject(Fd spool, std::int64_t line) : spool_(std::move(spool)), line_(line) {}

  // The line's bytes after kObjectPrefix, in pieces, without its '\n'.
  Status feed(std::string_view piece) {
    if (!in_tail_) {
      const auto quote = piece.find('"');
      pending_.append(piece.substr(0, quote));
      if (pending_.size() >= 2 * kChunk) {
        // Whole quads that cannot be the last: no padding in them.
        const std::size_t n = (pending_.size() - 4) / 4 * 4;
        if (auto s = decode(std::string_view(pending_).substr(0, n), false); !s) return s;
        pending_.erase(0, n);
      }
      if (quote == std::string_view::npos) return {};
      in_tail_ = true;
      piece.remove_prefix(quote);
    }
    tail_.append(piece);
    if (tail_.size() > kMaxTail)
      return bad_line(line_, "an object line has exactly data_b64, digest and size");
    return {};
  }

  // The end of the line: the last quads, then the tail against what was decoded. Returns the
  // digest, and leaves the bytes in spool() for put_spooled.
  Result<hash::Digest> finish() {
    if (!in_tail_) return bad_line(line_, "not strict JSON: the data_b64 string does not end");
    if (auto s = decode(pending_, true); !s) return s.take_diagnostics();
    const std::string members = "{" + tail_.substr(std::min<std::size_t>(tail_.size(), 2));
    auto parsed = json::parse(members);
    const json::Value* digest = parsed ? parsed->find("digest") : nullptr;
    const json::Value* size = parsed ? parsed->find("size") : nullptr;
    hash::Digest claimed{};
    if (tail_.rfind("\",", 0) != 0 || !parsed || !parsed->is_object() ||
        parsed->as_object().size() != 2 || digest == nullptr || !digest->is_string() ||
        !hash::from_hex(digest->as_string(), claimed) || size == nullptr ||
        json::canonical(*parsed) != members) {
      return not_streamable(line_);
    }
    const auto n = size->is_number() ? size->as_exact_int() : std::nullopt;
    if (!n || static_cast<std::uint64_t>(*n) != size_) {
      return bad_line(line_, "\"data_b64\" holds " + std::to_string(size_) +
                                 " bytes, \"size\" says " + json::canonical(*size));
    }
    const hash::Digest actual = hash_.finish();
    if (actual != claimed) {
      return diag::error(codes::kStoreDigestMismatch,
                         "export stream line " + std::to_string(line_) + ": the data hashes to " +
                             hash::to_hex(actual) + ", not to " + hash::to_hex(claimed),
                         {}, line_);
    }
    return claimed;
  }

  int spool() const { return spool_.get(); }
  std::uint64_t size() const { return size_; }
  std::int64_t line() const { return line_; }

 private:
  Status decode(std::string_view quads, bool last) {
    if ((!last && quads.find('=') != std::string_view::npos) ||
        !hash::base64_decode(quads, bytes_)) {
      return bad_line(line_, "\"data_b64\" is not padded standard base64");
    }
    hash_.update(bytes_);
    size_ += bytes_.size();
    return io::write_all(spool_.get(), bytes_);
  }

  Fd spool_;
  std::int64_t line_;
  hash::Sha256 hash_;
  std::string pending_;  // base64 not decoded yet
  std::string bytes_;    // scratch for decoded bytes
  std::string tail_;     // from the closing quote on
  bool in_tail_ = false;
  std::uint64_t size_ = 0;
};

// The export stream's source: a path, or stdin for "-".
struct ImportInput {
  std::string name;  // for messages
  Fd owned;          // closed on the way out; stdin is not
  int fd = STDIN_FILENO;
};

Result<ImportInput> open_import(std::string_view path) {
  ImportInput in;
  in.name = path == "-" ? "<stdin>" : std::string(path);
  if (path == "-") return in;
  in.owned.reset(::open(in.name.c_str(), O_RDONLY | O_CLOEXEC));
  if (!in.owned.valid()) {
    return diag::error(codes::kMissing, "cannot open " + in.name + ": " + std::strerror(errno));
  }
  in.fd = in.owned.get();
  return in;
}

// What import does with the lines of the stream.
struct LineSink {
  // A line read whole (every '\n'-terminated line, and a last line without one).
  std::function<Status(std::string_view text, std::int64_t line)> line;
  // A line that has grown past kStreamAbove and starts with kObjectPrefix: streamed instead.
  std::function<Result<std::unique_ptr<StreamedObject>>(std::int64_t line)> start_object;
  std::function<Status(StreamedObject&)> end_object;
};

// Reads the stream in chunks and hands each line to the sink, until a call fails; tells
// `progress` the bytes read after each chunk.
Status for_each_line(const ImportInput& in, const LineSink& sink,
                     const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
  std::uint64_t total = 0, read = 0;
  if (struct stat st{}; progress && ::fstat(in.fd, &st) == 0 && S_ISREG(st.st_mode)) {
    total = static_cast<std::uint64_t>(st.st_size);
  }
  std::string partial;
  std::unique_ptr<StreamedObject> streamed;
  std::int64_t line = 0;
  std::unique_ptr<char[]> buf(new char[kChunk]);
  // Bytes of the current line, not its end: held, or streamed once it is long enough.
  const auto take = [&](std::string_view bytes) -> Status {
    if (streamed) return streamed->feed(bytes);
    partial.append(bytes);
    if (partial.size() <= kStreamAbove) return {};
    if (partial.rfind(kObjectPrefix, 0) != 0) return not_streamable(line + 1);
    auto started = sink.start_object(line + 1);
    if (!started) return started.take_diagnostics();
    streamed = std::move(started.value());
    const Status fed = streamed->feed(std::string_view(partial).substr(kObjectPrefix.size()));
    partial.clear();
    partial.shrink_to_fit();
    return fed;
  };
  // The end of the current line.
  const auto end = [&]() -> Status {
    ++line;
    if (!streamed) {
      Status st = sink.line(partial, line);
      partial.clear();
      return st;
    }
    Status st = sink.end_object(*streamed);
    streamed.reset();
    return st;
  };
  for (;;) {
    const std::int64_t got = io::read_some(in.fd, buf.get(), kChunk);
    if (got < 0) {
      return diag::error(codes::kMissing,
                         "cannot read " + in.name + ": " + std::strerror(static_cast<int>(-got)));
    }
    if (got == 0) break;
    read += static_cast<std::uint64_t>(got);
    if (progress) progress(read, total);
    std::string_view chunk(buf.get(), static_cast<std::size_t>(got));
    while (!chunk.empty()) {
      const std::size_t nl = chunk.find('\n');
      if (Status st = take(chunk.substr(0, nl)); !st) return st;
      if (nl == std::string_view::npos) break;
      if (Status st = end(); !st) return st;
      chunk.remove_prefix(nl + 1);
    }
  }
  if (!partial.empty() || streamed) return end();  // a last line without '\n'
  return {};
}

}  // namespace

Result<std::uint64_t> Store::import_stream(
    std::string_view path, const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
  Impl& s = *impl_;
  if (s.mode == Mode::ReadOnly) return s.read_only();
  Result<ImportInput> input = open_import(path);
  if (!input) return input.take_diagnostics();

  std::uint64_t added = 0;
  std::vector<ImportLine> pending;  // verified object lines not yet committed
  std::size_t pending_bytes = 0;
  // Commits the pending objects in one write transaction.
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
  // A ref line applies after the objects before it; a bad line keeps the verified ones before it.
  const auto take_line = [&](std::string_view text, std::int64_t line) -> Status {
    auto parsed = parse_import_line(text, line);
    if (!parsed) {
      auto ds = parsed.take_diagnostics();
      if (auto f = flush(); !f) return f;
      return ds;
    }
    if (!parsed->ref.empty()) {
      if (auto f = flush(); !f) return f;
      auto set = set_ref(parsed->ref, parsed->digest);
      if (set) return {};
      auto ds = set.take_diagnostics();
      for (auto& d : ds) d.line = line;
      return ds;
    }
    pending_bytes += parsed->bytes.size();
    pending.push_back(std::move(parsed.value()));
    if (pending.size() >= kImportBatchObjects || pending_bytes >= kImportBatchBytes) return flush();
    return {};
  };

  LineSink sink;
  sink.line = take_line;
  sink.start_object = [&](std::int64_t line) -> Result<std::unique_ptr<StreamedObject>> {
    auto spool = detail::spool_file(s.dir);
    if (!spool) return spool.take_diagnostics();
    return std::make_unique<StreamedObject>(std::move(spool.value()), line);
  };
  sink.end_object = [&](StreamedObject& obj) -> Status {
    auto digest = obj.finish();
    if (auto f = flush(); !f) return f;  // the verified lines before it come first
    if (!digest) return digest.take_diagnostics();
    auto present = has(*digest);
    if (!present) return present.take_diagnostics();
    if (Status put = put_spooled(obj.spool(), obj.size(), *digest); !put) return put;
    added += *present ? 0 : 1;
    return {};
  };
  if (Status read = for_each_line(*input, sink, progress); !read) {
    if (auto f = flush(); !f) return f.take_diagnostics();  // keep the verified lines before it
    return read.take_diagnostics();
  }
  if (auto f = flush(); !f) return f.take_diagnostics();
  return added;
}

}  // namespace mf::store
