// Root-confined reads and searches for mf-toolread (reader.hpp); every open goes through
// fs::open_beneath, never a path string compared with the root.
#include "mf/source/reader.hpp"
#include "mf/io/file.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <iterator>
#include <memory>
#include <utility>

#include "mf/diag/codes.hpp"
#include "mf/fs/beneath.hpp"
#include "mf/fs/ordered_pool.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/text/find.hpp"
#include "mf/text/utf8.hpp"

namespace mf::source {
using io::Fd;

namespace {

namespace codes = diag::codes;

constexpr std::size_t kMaxQueryBytes = 4096;

std::string quoted(std::string_view s) {
  return "'" + std::string(s) + "'";
}

// --- Reading
// --------------------------------------------------------------------------------------

diag::Diagnostic io_error(const std::string& what, int err) {
  return diag::error(codes::kInternal, "I/O error: " + what + ": " + std::strerror(err));
}

// Reads at most cap + 1 bytes (the extra byte tells the caller the file is over the cap) into
// `buffer`, whose capacity is reused. `hint` is the size fstat reported.
Result<std::string> read_capped(int fd, std::uint64_t cap, std::uint64_t hint, std::string buffer,
                                const std::string& display) {
  const int err = io::read_capped(fd, buffer, static_cast<std::size_t>(cap), hint);
  if (err != 0 && err != -EFBIG) return io_error("cannot read " + quoted(display), -err);
  return buffer;
}

// The canonical root, opened as a directory.
Result<Fd> open_root(const std::string& root) {
  if (root.empty()) return diag::error(codes::kBadRoot, "the root is empty", "/root");
  std::unique_ptr<char, decltype(&std::free)> real(::realpath(root.c_str(), nullptr), &std::free);
  if (!real) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR || err == EACCES || err == ELOOP || err == ENAMETOOLONG) {
      return diag::error(codes::kBadRoot,
                         "root " + quoted(root) + " cannot be resolved: " + std::strerror(err),
                         "/root");
    }
    return io_error("cannot resolve root " + quoted(root), err);
  }
  Fd fd(fs::openat_retry(AT_FDCWD, real.get(), O_RDONLY | O_DIRECTORY));
  if (fd.get() < 0) {
    const int err = errno;
    if (err == ENOTDIR) {
      return diag::error(codes::kBadRoot, "root " + quoted(root) + " is not a directory", "/root");
    }
    if (err == ENOENT || err == EACCES) {
      return diag::error(codes::kBadRoot,
                         "root " + quoted(root) + " cannot be opened: " + std::strerror(err),
                         "/root");
    }
    return io_error("cannot open root " + quoted(root), err);
  }
  return fd;
}

// Turns a failed fs::open_beneath() into the refusal (or I/O error) it stands for.
diag::Diagnostic open_failure(int neg_errno, const std::string& display, const char* pointer) {
  const int err = -neg_errno;
  switch (err) {
    case EXDEV:
      return diag::error(codes::kPathEscapes, quoted(display) + " resolves outside the root",
                         pointer);
    case ELOOP:
      return diag::error(codes::kPathEscapes,
                         quoted(display) + " goes through a symbolic link loop or a magic link",
                         pointer);
    case ENOENT:
    case ENOTDIR:
      return diag::error(codes::kNotFound, quoted(display) + " does not exist under the root",
                         pointer);
    case EACCES:
    case EPERM:
      return diag::error(codes::kNotFound, quoted(display) + " is not readable: permission denied",
                         pointer);
    case ENAMETOOLONG:
      return diag::error(codes::kPathNotRelative, quoted(display) + " is too long", pointer);
    default:
      return io_error("cannot open " + quoted(display), err);
  }
}

// Opens a target beneath the root: first as O_PATH to learn its type without opening a device or
// FIFO for reading, then for reading once its type is the one wanted.
Result<Fd> open_target(int root_fd, const std::string& relative, bool want_directory,
                       fs::Resolver resolver, const char* pointer, struct stat& st) {
  const std::string display = relative.empty() ? std::string(".") : relative;
  Fd probe(fs::open_beneath(root_fd, relative, O_PATH, resolver));
  if (probe.get() < 0) return open_failure(probe.get(), display, pointer);
  if (::fstat(probe.get(), &st) != 0) return io_error("cannot stat " + quoted(display), errno);
  if (want_directory && !S_ISDIR(st.st_mode)) {
    return diag::error(codes::kWrongFileType, quoted(display) + " is not a directory", pointer);
  }
  if (!want_directory) {
    if (S_ISDIR(st.st_mode)) {
      return diag::error(codes::kIsDirectory, quoted(display) + " is a directory", pointer);
    }
    if (!S_ISREG(st.st_mode)) {
      return diag::error(codes::kWrongFileType, quoted(display) + " is not a regular file",
                         pointer);
    }
    if (static_cast<std::uint64_t>(st.st_size) > kMaxFileBytes) {
      return diag::error(codes::kFileTooLarge,
                         quoted(display) + " is " + std::to_string(st.st_size) +
                             " bytes, over the 1 MiB (1048576 bytes) limit",
                         pointer);
    }
  }
  const int flags = want_directory ? O_RDONLY | O_DIRECTORY : O_RDONLY | O_NOCTTY | O_NONBLOCK;
  Fd fd(fs::open_beneath(root_fd, relative, flags, resolver));
  if (fd.get() < 0) return open_failure(fd.get(), display, pointer);
  // The entry may have been replaced between the two opens: judge what was actually opened.
  struct stat again {};
  if (::fstat(fd.get(), &again) != 0) return io_error("cannot stat " + quoted(display), errno);
  if (again.st_dev != st.st_dev || again.st_ino != st.st_ino) {
    return diag::error(codes::kNotFound, quoted(display) + " changed while it was being opened",
                       pointer);
  }
  st = again;
  return fd;
}

std::int64_t count_lines(std::string_view text) {
  if (text.empty()) return 0;
  auto newlines = static_cast<std::int64_t>(std::count(text.begin(), text.end(), '\n'));
  return text.back() == '\n' ? newlines : newlines + 1;
}

// Byte offset where 1-based `line` starts; `line` may be one past the last line (gives size).
std::size_t line_offset(std::string_view text, std::int64_t line) {
  std::size_t pos = 0;
  for (std::int64_t l = 1; l < line; ++l) {
    auto nl = text.find('\n', pos);
    if (nl == std::string_view::npos) return text.size();
    pos = nl + 1;
  }
  return pos;
}

// Validates the requested range against the request alone (before any file is opened).
Status check_range(const SliceRequest& r) {
  const std::int64_t start = r.start_line.value_or(1);
  if (start < 1) {
    return diag::error(codes::kBadLineRange,
                       "start line " + std::to_string(start) + " is before line 1", "/start_line");
  }
  if (r.end_line) {
    const std::int64_t end = *r.end_line;
    if (end < start) {
      return diag::error(
          codes::kBadLineRange,
          "end line " + std::to_string(end) + " is before start line " + std::to_string(start),
          "/end_line");
    }
    if (end - start >= kMaxSliceLines) {
      return diag::error(codes::kRangeTooLong,
                         "lines " + std::to_string(start) + ".." + std::to_string(end) +
                             " are more than the " + std::to_string(kMaxSliceLines) +
                             " lines one read may return",
                         "/end_line");
    }
  }
  return {};
}

// --- Search
// ---------------------------------------------------------------------------------------

struct Entry {
  std::string name;
  bool directory = false;
  std::string key;  // name, plus '/' for a directory: sorting by it sorts full paths by bytes
};

// One step of a search, in walk order: a file to read (read and scanned by a worker), a bound the
// walk met, or an error that ends the search.
struct Step {
  enum class Kind : std::uint8_t { File, Bound, Error };
  Kind kind = Kind::File;
  Fd fd;                   // File: open for reading
  std::string path;        // File: relative to the root
  std::uint64_t size = 0;  // File: what fstat saw
  bool stop = false;  // Bound: the walk ends here (the entry bound) or goes on (the depth bound)
  diag::Diagnostics error;  // Error

  // What the worker found in a File.
  std::uint64_t read = 0;  // bytes read: at most kMaxFileBytes + 1
  diag::Diagnostics read_error;
  bool binary = false;               // a NUL byte or ill-formed UTF-8
  std::vector<SearchMatch> matches;  // up to max_matches + 1 (the last only says there are more)

  static Step bound(bool stop) {
    Step step;
    step.kind = Kind::Bound;
    step.stop = stop;
    return step;
  }
  static Step failure(diag::Diagnostic error) {
    Step step;
    step.kind = Kind::Error;
    step.error.push_back(std::move(error));
    return step;
  }
};

// The walk, on the calling thread: every directory and file is opened here, beneath the start
// directory, and handed over as a Step.
class Walker {
 public:
  using Submit = std::function<bool(Step)>;  // false: the search has stopped
  Walker(const SearchRequest& request, const Submit& submit) : req_(request), submit_(submit) {}

  // Walks the directory `dirfd` (paths under it are `prefix` + name) at `depth` below the start.
  // False once the walk must end.
  bool directory(int dirfd, const std::string& prefix, std::uint64_t depth) {
    std::vector<Entry> entries;
    if (!list(dirfd, prefix, entries)) return false;
    for (const auto& e : entries) {
      const std::string path = prefix + e.name;
      if (e.directory) {
        if (depth + 1 > req_.max_depth) {
          // A bound, not a policy: the result is incomplete.
          if (!submit(Step::bound(false))) return false;
          continue;
        }
        Fd child(fs::openat_retry(dirfd, e.name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
        if (child.get() < 0) {
          if (skippable(errno)) continue;
          return fail(io_error("cannot open directory " + quoted(path), errno));
        }
        if (!directory(child.get(), path + "/", depth + 1)) return false;
      } else if (!file(dirfd, e.name, path)) {
        return false;
      }
    }
    return true;
  }

 private:
  // Entries that disappeared, turned into symlinks or are unreadable are skipped, not fatal.
  static bool skippable(int err) {
    return err == ENOENT || err == ENOTDIR || err == ELOOP || err == EACCES || err == EPERM ||
           err == ENXIO;
  }

  bool submit(Step step) { return submit_(std::move(step)); }

  bool fail(diag::Diagnostic error) {
    submit(Step::failure(std::move(error)));
    return false;
  }

  // Lists the directory open as `dirfd` (opened by this walk, so at offset 0) with getdents64
  // on that descriptor itself: no duplicate descriptor, DIR stream or fstat per directory.
  bool list(int dirfd, const std::string& prefix, std::vector<Entry>& entries) {
    for (;;) {
      const ssize_t got = ::getdents64(dirfd, dents_.get(), kDentsBytes);
      if (got < 0) {
        if (errno == EINTR) continue;
        return fail(io_error("cannot list " + quoted(prefix.empty() ? "." : prefix), errno));
      }
      if (got == 0) break;
      for (ssize_t off = 0; off < got;) {
        const auto* d = reinterpret_cast<const struct dirent64*>(dents_.get() + off);
        off += d->d_reclen;
        if (!entry(dirfd, d, entries)) return false;
      }
    }
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return a.key < b.key; });
    return true;
  }

  // Keeps one listed entry; false once the entry bound ends the walk.
  bool entry(int dirfd, const struct dirent64* d, std::vector<Entry>& entries) {
    std::string_view name = d->d_name;
    if (name == "." || name == "..") return true;
    if (++entries_seen_ > req_.max_entries) {
      submit(Step::bound(true));
      return false;
    }
    unsigned char type = d->d_type;
    if (type == DT_UNKNOWN) {
      struct stat st {};
      if (::fstatat(dirfd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) return true;
      type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_LNK;
    }
    // Symlinks (to files or directories) and special files are never followed or read; names
    // that are not UTF-8 cannot be reported in JSON and are skipped too.
    if ((type != DT_DIR && type != DT_REG) || !text::valid_utf8(name)) return true;
    Entry e{std::string(name), type == DT_DIR, std::string(name)};
    if (e.directory) e.key.push_back('/');
    entries.push_back(std::move(e));
    return true;
  }

  bool file(int dirfd, const std::string& name, const std::string& path) {
    Fd fd(fs::openat_retry(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY));
    if (fd.get() < 0) {
      if (skippable(errno)) return true;
      return fail(io_error("cannot open " + quoted(path), errno));
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return fail(io_error("cannot stat " + quoted(path), errno));
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (!S_ISREG(st.st_mode) || size > kMaxFileBytes) return true;
    Step step;
    step.fd = std::move(fd);
    step.path = path;
    step.size = size;
    return submit(std::move(step));
  }

  static constexpr std::size_t kDentsBytes = 32 * 1024;
  const SearchRequest& req_;
  const Submit& submit_;
  std::uint64_t entries_seen_ = 0;
  // getdents64's buffer, one for the walk: a directory is listed whole before the walk descends.
  std::unique_ptr<char[]> dents_ = std::make_unique<char[]>(kDentsBytes);
};

// Reads the file open as `fd` into `buffer` (its capacity reused): at most kMaxFileBytes + 1
// bytes, the last telling a file over the limit. `hint` is the size fstat saw. A read shorter
// than asked is the end of a regular file, which saves the read(2) that would return 0. 0 or
// -errno.
int read_whole(int fd, std::uint64_t hint, std::string& buffer) {
  constexpr std::size_t kLimit = kMaxFileBytes + 1;
  buffer.resize(static_cast<std::size_t>(std::min<std::uint64_t>(hint, kMaxFileBytes)) + 1);
  std::size_t got = 0;
  for (;;) {
    const std::int64_t n = io::read_some(fd, buffer.data() + got, buffer.size() - got);
    if (n < 0) {
      buffer.resize(got);
      return static_cast<int>(n);
    }
    got += static_cast<std::size_t>(n);
    if (got < buffer.size() || got == kLimit) break;
    buffer.resize(std::min(kLimit, std::max(buffer.size() * 2, std::size_t{64} << 10)));
  }
  buffer.resize(got);
  return 0;
}

// Reads and scans one file, on a worker thread; `buffer` is the worker's own.
void read_file(Step& step, const SearchRequest& req, const text::LiteralFinder& query,
               std::string& buffer) {
  const int err = read_whole(step.fd.get(), step.size, buffer);
  step.fd = Fd();  // closed here, off the walking thread
  if (err != 0) {
    step.read_error.push_back(io_error("cannot read " + quoted(step.path), -err));
    return;
  }
  step.read = buffer.size();
  if (buffer.size() > kMaxFileBytes) return;
  const std::string_view text = buffer;
  if (!text::utf8_text(text)) {  // a NUL byte or ill-formed UTF-8
    step.binary = true;
    return;
  }
  const char* end = text.data() + text.size();
  std::int64_t line = 1;
  const char* counted_to = text.data();  // newlines before this are counted in `line`
  const char* pos = text.data();
  while (step.matches.size() <= req.max_matches) {
    const char* hit = query.find(pos, end);
    if (hit == nullptr) return;
    line += std::count(counted_to, hit, '\n');
    counted_to = hit;
    const void* before = ::memrchr(text.data(), '\n', static_cast<std::size_t>(hit - text.data()));
    const char* begin = before == nullptr ? text.data() : static_cast<const char*>(before) + 1;
    const void* after = std::memchr(hit, '\n', static_cast<std::size_t>(end - hit));
    const char* stop = after == nullptr ? end : static_cast<const char*>(after);
    std::string_view shown(begin, static_cast<std::size_t>(stop - begin));
    if (shown.size() > req.max_line_bytes) {
      shown = text::utf8_prefix(shown, static_cast<std::size_t>(req.max_line_bytes));
    }
    step.matches.push_back({step.path, line, std::string(shown)});
    if (stop == end) return;
    pos = stop + 1;
  }
}

// Takes the steps in walk order and applies the bounds exactly as one thread reading them in
// that order would: a worker read the file whole (up to kMaxFileBytes + 1 bytes) and found up
// to max_matches + 1 lines, which is enough to know what a read under the byte budget left here
// would have given.
class Collector {
 public:
  Collector(const SearchRequest& request, SearchResult& out) : req_(request), out_(out) {}

  bool take(Step& step) {
    switch (step.kind) {
      case Step::Kind::Error:
        status_ = std::move(step.error);
        return false;
      case Step::Kind::Bound:
        out_.truncated = true;
        return !step.stop;
      case Step::Kind::File:
        break;
    }
    if (out_.files_scanned >= req_.max_files || bytes_read_ + step.size > req_.max_bytes) {
      out_.truncated = true;
      return false;
    }
    // A file growing after fstat is read no further than either bound allows.
    const std::uint64_t budget = req_.max_bytes - bytes_read_;
    const std::uint64_t cap = std::min(kMaxFileBytes, budget);
    if (!step.read_error.empty()) {
      status_ = std::move(step.read_error);
      return false;
    }
    const std::uint64_t read = std::min(step.read, cap + 1);
    bytes_read_ += read;
    ++out_.files_scanned;
    if (read > cap) {
      if (cap != budget) return true;  // over 1 MiB: skipped
      out_.truncated = true;
      return false;
    }
    if (step.binary) return true;
    const std::size_t room = req_.max_matches - out_.matches.size();
    const std::size_t taken = std::min(room, step.matches.size());
    std::move(step.matches.begin(), step.matches.begin() + static_cast<std::ptrdiff_t>(taken),
              std::back_inserter(out_.matches));
    if (step.matches.size() <= room) return true;
    out_.truncated = true;
    return false;
  }

  Status take_status() { return std::move(status_); }

 private:
  const SearchRequest& req_;
  SearchResult& out_;
  std::uint64_t bytes_read_ = 0;
  Status status_;
};

Status check_search(const SearchRequest& r) {
  if (r.query.empty()) return diag::error(codes::kBadSearch, "the query is empty", "/query");
  if (r.query.size() > kMaxQueryBytes) {
    return diag::error(codes::kBadSearch,
                       "the query is over " + std::to_string(kMaxQueryBytes) + " bytes", "/query");
  }
  if (r.query.find('\n') != std::string::npos) {
    return diag::error(codes::kBadSearch, "the query contains a newline; matching is line by line",
                       "/query");
  }
  if (!text::valid_utf8(r.query)) {
    return diag::error(codes::kBadSearch, "the query is not valid UTF-8", "/query");
  }
  const std::pair<const char*, std::uint64_t> limits[] = {{"max_files", r.max_files},
                                                          {"max_bytes", r.max_bytes},
                                                          {"max_matches", r.max_matches},
                                                          {"max_entries", r.max_entries},
                                                          {"max_line_bytes", r.max_line_bytes}};
  for (const auto& [name, value] : limits) {
    if (value == 0) {
      return diag::error(codes::kBadSearch, std::string(name) + " must be at least 1",
                         std::string("/") + name);
    }
  }
  return {};
}

}  // namespace

Result<SourceSlice> read_slice(const SliceRequest& request) {
  if (auto range = check_range(request); !range) return range.take_diagnostics();
  // "-": standard input, under the bounds of a file (1 MiB, UTF-8, the line range); no root.
  const bool from_stdin = request.path == "-";
  std::string relative = "-";
  std::string display = "<stdin>";
  Fd opened_file;  // the file read, when not stdin
  struct stat st {};
  if (from_stdin) {
    if (::fstat(STDIN_FILENO, &st) != 0 || !S_ISREG(st.st_mode)) st.st_size = 0;
  } else {
    auto normalized = fs::normalize_relative(request.path);
    if (!normalized) return normalized.take_diagnostics();
    relative = std::move(*normalized);
    auto root = open_root(request.root);
    if (!root) return root.take_diagnostics();
    auto opened = open_target(root->get(), relative, false, request.resolver, "/path", st);
    if (!opened) return opened.take_diagnostics();
    opened_file = std::move(*opened);
    display = relative.empty() ? std::string(".") : relative;
  }

  auto content = read_capped(from_stdin ? STDIN_FILENO : opened_file.get(), kMaxFileBytes,
                             static_cast<std::uint64_t>(st.st_size), {}, display);
  if (!content) return content.take_diagnostics();
  const std::string_view text = *content;
  if (text.size() > kMaxFileBytes) {
    return diag::error(
        codes::kFileTooLarge,
        quoted(display) + (from_stdin ? " is" : " grew") + " over the 1 MiB (1048576 bytes) limit",
        "/path");
  }
  if (auto bad = text::utf8_error_offset(text); bad != std::string_view::npos) {
    const auto line = count_lines(text.substr(0, bad + 1));
    return diag::error(codes::kContentNotUtf8,
                       quoted(display) + " is not valid UTF-8 (byte " + std::to_string(bad) +
                           ", line " + std::to_string(line) + ")",
                       "/path");
  }

  const std::int64_t total = count_lines(text);
  const std::int64_t start = request.start_line.value_or(1);
  if ((request.start_line || request.end_line) && start > total) {
    return diag::error(codes::kBadLineRange,
                       "start line " + std::to_string(start) + " is past the last line of " +
                           quoted(display) + " (" + std::to_string(total) + " lines)",
                       "/start_line");
  }
  const std::int64_t end = request.end_line ? std::min(*request.end_line, total) : total;
  if (!request.end_line && end - start >= kMaxSliceLines) {
    return diag::error(codes::kRangeTooLong,
                       quoted(display) + " has " + std::to_string(total) + " lines; lines " +
                           std::to_string(start) + ".." + std::to_string(end) +
                           " are more than the " + std::to_string(kMaxSliceLines) +
                           " one read may return: give an end line",
                       "/end_line");
  }

  SourceSlice slice;
  slice.path = relative;
  slice.start_line = start;
  slice.end_line = end;
  slice.total_lines = total;
  slice.file_sha256 = hash::sha256_hex(text);
  const std::size_t begin = line_offset(text, start);
  const std::size_t stop = line_offset(text.substr(begin), end - start + 2) + begin;
  slice.text.assign(text.substr(begin, stop - begin));
  return slice;
}

json::Value to_json(const SourceSlice& slice) {
  json::Value v;
  v.set("path", slice.path);
  v.set("start_line", slice.start_line);
  v.set("end_line", slice.end_line);
  v.set("total_lines", slice.total_lines);
  v.set("file_sha256", slice.file_sha256);
  v.set("bytes", static_cast<std::uint64_t>(slice.text.size()));
  v.set("text", slice.text);
  return v;
}

Result<SearchResult> search(const SearchRequest& request) {
  if (auto checked = check_search(request); !checked) return checked.take_diagnostics();
  std::string relative;
  if (!request.path.empty()) {
    auto normalized = fs::normalize_relative(request.path);
    if (!normalized) return normalized.take_diagnostics();
    relative = std::move(*normalized);
  }
  auto root = open_root(request.root);
  if (!root) return root.take_diagnostics();
  struct stat st {};
  auto start = open_target(root->get(), relative, true, request.resolver, "/path", st);
  if (!start) return start.take_diagnostics();

  SearchResult result;
  result.root_relative = relative.empty() ? std::string(".") : relative;
  result.query = request.query;
  Collector collector(request, result);
  const std::size_t threads = fs::search_threads(request.jobs);
  std::vector<std::string> buffers(threads);
  const text::LiteralFinder query(request.query);
  fs::OrderedPool<Step, Step> pool(
      threads,
      [&](Step& step, std::size_t worker) {
        if (step.kind == Step::Kind::File) read_file(step, request, query, buffers[worker]);
        return std::move(step);
      },
      [&](Step& step) { return collector.take(step); });
  const Walker::Submit submit = [&](Step step) { return pool.submit(std::move(step)); };
  Walker walker(request, submit);
  walker.directory(start->get(), relative.empty() ? std::string() : relative + "/", 0);
  pool.finish();
  if (auto status = collector.take_status(); !status) return status.take_diagnostics();
  return result;
}

json::Value to_json(const SearchResult& result) {
  json::Array matches;
  matches.reserve(result.matches.size());
  for (const auto& m : result.matches) {
    json::Value v;
    v.set("path", m.path);
    v.set("line", m.line);
    v.set("text", m.text);
    matches.push_back(std::move(v));
  }
  json::Value v;
  v.set("root_relative", result.root_relative);
  v.set("query", result.query);
  v.set("matches", std::move(matches));
  v.set("truncated", result.truncated);
  v.set("files_scanned", result.files_scanned);
  return v;
}

}  // namespace mf::source
