#include "mf/store/plumbing.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "mf/diag/codes.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/jsonl.hpp"
#include "mf/json/tape.hpp"

namespace mf::store {
namespace {

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

  // Bytes read into `buf`; 0 at the end of input.
  Result<std::size_t> read(char* buf, std::size_t size, const std::string& path) {
    for (;;) {
      ssize_t n = ::read(fd_, buf, size);
      if (n >= 0) return static_cast<std::size_t>(n);
      if (errno == EINTR) continue;
      return diag::error(diag::codes::kInternal,
                         "cannot read " + display_name(path) + ": " + std::strerror(errno));
    }
  }

 private:
  int fd_ = -1;
  bool owned_ = false;
};

Status canon_lines(const std::string& path, int out_fd, const CanonOptions& options) {
  InputFd input;
  if (auto opened = input.open(path); !opened) return opened;

  const std::size_t chunk = options.buffer_bytes == 0 ? 1 : options.buffer_bytes;
  // Uninitialized: zeroing would fault in every page up front, which costs more than the read of a
  // small input (page faults dominate process latency on the machines this runs on).
  std::unique_ptr<char[]> buf(new char[chunk]);
  std::string out;
  out.reserve(chunk + chunk / 4);
  json::LineCanonicalizer lines(options.limits);
  for (;;) {
    auto n = input.read(buf.get(), chunk, path);
    if (!n) return n.take_diagnostics();
    Status fed = *n == 0 ? lines.finish(out) : lines.feed({buf.get(), *n}, out);
    // The lines before a failure are still delivered, so the output is a clean prefix of the input.
    if (!fed || *n == 0 || out.size() >= chunk) {
      if (auto written = io::write_all(out_fd, out); !written) return written;
      out.clear();
    }
    if (!fed) return fed;
    if (*n == 0) return {};
  }
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
    auto digest = hash::sha256_file(path);
    if (!digest) return digest.take_diagnostics();
    return hash::to_hex(*digest);
  }
  auto text = canonical_text(path, {.max_bytes = max_bytes});
  if (!text) return text.take_diagnostics();
  text->pop_back();  // the digest is of the canonical bytes without the file's newline
  return hash::sha256_hex(*text);
}

}  // namespace mf::store
