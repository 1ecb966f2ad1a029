// mf-store's plumbing, usable without a store (plumbing.hpp): `canon` and `hash`, with JSONL
// and raw bytes streamed in chunks rather than read whole.
#include "mf/store/plumbing.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>
#include <utility>

#include "mf/diag/codes.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/jsonl.hpp"
#include "mf/json/tape.hpp"

namespace mf::store {
namespace {

constexpr std::size_t kDigestChunk = 1u << 20;

std::string display_name(const std::string& path) {
  return path == "-" ? "<stdin>" : path;
}

// An input opened for streaming. Unlike io::read_input, FIFOs and devices are accepted: streaming
// `<(zcat trace.jsonl.gz)` is the point of `canon --lines`. Only directories are refused.
class InputFd {
 public:
  InputFd() = default;
  InputFd(const InputFd&) = delete;
  InputFd& operator=(const InputFd&) = delete;
  ~InputFd() {
    if (owned_) ::close(fd_);
  }

  Status open(const std::string& path) {
    if (path == "-") {
      fd_ = STDIN_FILENO;
      return {};
    }
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) {
      return diag::error(diag::codes::kMissing,
                         "cannot open input file '" + path + "': " + std::strerror(errno));
    }
    owned_ = true;
    struct stat st {};
    if (::fstat(fd_, &st) == 0 && S_ISDIR(st.st_mode)) {
      return diag::error(diag::codes::kNotRegularFile, "input '" + path + "' is a directory");
    }
    return {};
  }

  int fd() const { return fd_; }

 private:
  int fd_ = -1;
  bool owned_ = false;
};

Status canon_lines(const std::string& path, int out_fd, const CanonOptions& options) {
  InputFd input;
  if (auto opened = input.open(path); !opened) return opened;

  const std::size_t chunk = options.buffer_bytes == 0 ? 1 : options.buffer_bytes;
  std::string out;
  out.reserve(chunk + chunk / 4);
  json::LineCanonicalizer lines(options.limits);
  Status stopped;  // a line the canonicalizer refused, or a failed write
  const int err = io::read_chunks(input.fd(), chunk, [&](std::string_view bytes) {
    Status fed = lines.feed(bytes, out);
    // The lines before a failure are still delivered, so the output is a clean prefix of the input.
    if (!fed || out.size() >= chunk) {
      if (auto written = io::write_all(out_fd, out); !written) {
        stopped = std::move(written);
        return false;
      }
      out.clear();
    }
    if (!fed) stopped = std::move(fed);
    return stopped.ok();
  });
  if (!stopped) return stopped;
  if (err != 0) {
    return diag::error(diag::codes::kInternal,
                       "cannot read " + display_name(path) + ": " + std::strerror(-err));
  }
  Status fed = lines.finish(out);
  if (auto written = io::write_all(out_fd, out); !written) return written;
  return fed;
}

// The SHA-256 of the raw bytes at `path` (stdin for "-"), streamed a chunk at a time. Unlike
// InputFd's, a directory's refusal comes from its read (EISDIR): "cannot read <path>", MF-S014.
Result<hash::Digest> digest_input(const std::string& path) {
  const bool is_stdin = path == "-";
  const io::Fd owned(is_stdin ? -1 : ::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!is_stdin && !owned.valid()) {
    return diag::error(diag::codes::kMissing, "cannot open " + path + ": " + std::strerror(errno));
  }
  hash::Sha256 h;
  const int err =
      io::read_chunks(is_stdin ? STDIN_FILENO : owned.get(), kDigestChunk, [&](std::string_view c) {
        h.update(c);
        return true;
      });
  if (err != 0) {
    const char* code = err == -EISDIR ? diag::codes::kNotRegularFile : diag::codes::kMissing;
    return diag::error(code, "cannot read " + path + ": " + std::strerror(-err));
  }
  return h.finish();
}

// The canonical file form of the JSON document at `path`, read within `limits`.
Result<std::string> canonical_text(const std::string& path, const json::ReadLimits& limits) {
  auto text = io::read_input(path, limits.max_bytes);
  if (!text) return text.take_diagnostics();
  json::Tape tape;
  std::string out;
  if (auto done = json::canonicalize_line(tape, *text, limits, out); !done) {
    return done.take_diagnostics();
  }
  return out;
}

}  // namespace

Status canon_input(const std::string& path, int out_fd, const CanonOptions& options) {
  if (options.lines) return canon_lines(path, out_fd, options);
  auto text = canonical_text(path, options.limits);
  if (!text) return text.take_diagnostics();
  return io::write_all(out_fd, *text);
}

Result<std::string> hash_input(const std::string& path, bool canonical_json,
                               std::size_t max_bytes) {
  if (!canonical_json) {
    auto digest = digest_input(path);
    if (!digest) return digest.take_diagnostics();
    return hash::to_hex(*digest);
  }
  auto text = canonical_text(path, {.max_bytes = max_bytes});
  if (!text) return text.take_diagnostics();
  text->pop_back();  // the digest is of the canonical bytes without the file's newline
  return hash::sha256_hex(*text);
}

}  // namespace mf::store
