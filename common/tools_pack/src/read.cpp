// Pi's read tool over a confined workspace: every file is reached through Workspace::open_at, so
// the kernel keeps each call beneath the root; the texts the model sees are Pi's own, with Node's
// error strings where Pi lets a filesystem error through.
#include <fcntl.h>
#include <sys/stat.h>
#include <utf8proc.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "args.hpp"
#include "file_tools.hpp"
#include "mf/io/file.hpp"
#include "mf/text/utf8.hpp"
#include "mf/tools/pack.hpp"

namespace mf::tools {
using io::Fd;

namespace {

// JavaScript's ToIntegerOrInfinity followed by Array.prototype.slice's clamping to [0, length].
std::size_t slice_index(double d, std::size_t length) {
  if (std::isnan(d)) return 0;
  d = std::trunc(d);
  if (d < 0) d = std::max(0.0, static_cast<double>(length) + d);
  return d >= static_cast<double>(length) ? length : static_cast<std::size_t>(d);
}

// How many bytes at the end of `s` begin a sequence that runs past it (0 to 3).
std::size_t cut_sequence(std::string_view s) {
  for (std::size_t back = 1; back <= std::min<std::size_t>(3, s.size()); ++back) {
    const auto c = static_cast<unsigned char>(s[s.size() - back]);
    if (text::is_continuation(c)) continue;
    const std::size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return len > back ? back : 0;
  }
  return 0;
}

// The text read selects from, by offset: the file itself when it is valid UTF-8, read a chunk at a
// time and never held whole, or else its lossy decoding in memory. Lines are the pieces of
// String.prototype.split("\n") ("" gives one empty piece, a trailing "\n" one more), found by
// offset rather than kept in a list: a file of newlines would need 16 bytes per byte.
class Source {
 public:
  // The most bytes read from the file at a time.
  static constexpr std::size_t kChunk = 256u << 10;

  explicit Source(std::string_view text) : text_(text), size_(text.size()) {}
  Source(int fd, std::size_t size) : fd_(fd), size_(size), buf_(kChunk) {}

  std::size_t size() const { return size_; }
  // False when the file could not be read as far as its size said (it changed or failed).
  bool ok() const { return ok_; }

  std::size_t count_newlines(std::size_t from, std::size_t to) const {
    std::size_t n = 0;
    each_chunk(from, to, [&](std::string_view c, std::size_t) {
      n += static_cast<std::size_t>(std::count(c.begin(), c.end(), '\n'));
      return true;
    });
    return n;
  }
  // The offset after the n-th '\n' from `from` (n of them exist), that is the start of the piece
  // n pieces on.
  std::size_t advance(std::size_t from, std::size_t n) const {
    std::size_t at = from;
    if (n == 0) return at;
    each_chunk(from, size_, [&](std::string_view c, std::size_t offset) {
      for (std::size_t i = c.find('\n'); i != std::string_view::npos; i = c.find('\n', i + 1)) {
        if (--n == 0) {
          at = offset + i + 1;
          return false;
        }
      }
      return true;
    });
    return at;
  }
  // Where the piece starting at `start` ends: its '\n', or the end of the text.
  std::size_t end_from(std::size_t start) const {
    std::size_t end = size_;
    each_chunk(start, size_, [&](std::string_view c, std::size_t offset) {
      const std::size_t i = c.find('\n');
      if (i != std::string_view::npos) end = offset + i;
      return i == std::string_view::npos;
    });
    return end;
  }
  // Whether the bytes are UTF-8: a sequence cut by a chunk's end is checked with the next chunk.
  bool is_utf8() const {
    std::string pending;  // the chunk, after what an earlier chunk left of a cut sequence
    bool valid = true;
    each_chunk(0, size_, [&](std::string_view c, std::size_t at) {
      pending.append(c);
      const std::size_t cut = at + c.size() < size_ ? cut_sequence(pending) : 0;
      valid = text::valid_utf8(std::string_view(pending).substr(0, pending.size() - cut));
      pending.erase(0, pending.size() - cut);
      return valid;
    });
    return valid && ok_;
  }
  std::string read(std::size_t from, std::size_t to) const {
    std::string out;
    out.reserve(to - from);
    each_chunk(from, to, [&](std::string_view c, std::size_t) {
      out.append(c);
      return true;
    });
    return out;
  }

 private:
  // Calls f(chunk, offset of the chunk) over [from, to) in order until f returns false.
  template <class F>
  void each_chunk(std::size_t from, std::size_t to, F&& f) const {
    if (fd_ < 0) {
      if (from < to) f(text_.substr(from, to - from), from);
      return;
    }
    for (std::size_t at = from; at < to && ok_;) {
      const std::size_t want = std::min(kChunk, to - at);
      const std::int64_t got = io::pread_all(fd_, buf_.data(), want, at);
      if (got != static_cast<std::int64_t>(want)) {
        ok_ = false;
        return;
      }
      if (!f(std::string_view(buf_.data(), want), at)) return;
      at += want;
    }
  }

  std::string_view text_;
  int fd_ = -1;
  std::size_t size_ = 0;
  mutable std::vector<char> buf_;
  mutable bool ok_ = true;
};

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::uint32_t big_endian32(std::string_view s, std::size_t at) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

// Pi sends these four formats to the model as images; this port has no image blocks, so read
// refuses them instead of dumping binary as text. The rules follow Pi's sniffing of the first
// 4100 bytes: JPEG-LS (FF D8 FF F7) and animated PNG (acTL before IDAT) are not images to Pi and
// read as text here too.
bool looks_like_supported_image(std::string_view bytes) {
  const std::string_view head = bytes.substr(0, 4100);
  if (starts_with(head, "\xFF\xD8\xFF")) {
    return !(head.size() > 3 && static_cast<unsigned char>(head[3]) == 0xF7);
  }
  if (starts_with(head, "\x89PNG\r\n\x1A\n")) {
    if (head.size() < 16 || head.substr(12, 4) != "IHDR") return false;
    std::size_t at = 8;
    while (at + 8 <= head.size()) {
      const std::uint32_t length = big_endian32(head, at);
      const std::string_view type = head.substr(at + 4, 4);
      if (type == "acTL") return false;
      if (type == "IDAT" || type == "IEND") break;
      if (length > head.size()) break;
      at += 12 + length;
    }
    return true;
  }
  if (starts_with(head, "GIF")) return true;
  return starts_with(head, "RIFF") && head.size() >= 12 && head.substr(8, 4) == "WEBP";
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
}

// " AM." / " PM." (any case) with U+202F before the marker, as macOS names screenshots.
std::string am_pm_variant(std::string_view path) {
  std::string out;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path[i] == ' ' && i + 3 < path.size() && path[i + 3] == '.') {
      const char a = static_cast<char>(std::tolower(static_cast<unsigned char>(path[i + 1])));
      const char m = static_cast<char>(std::tolower(static_cast<unsigned char>(path[i + 2])));
      if ((a == 'a' || a == 'p') && m == 'm') {
        out += "\u202F";
        continue;
      }
    }
    out.push_back(path[i]);
  }
  return out;
}

std::string nfd(std::string_view s) {
  utf8proc_uint8_t* out = nullptr;
  const auto n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(s.data()),
                              static_cast<utf8proc_ssize_t>(s.size()), &out,
                              static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_DECOMPOSE));
  if (n < 0) return std::string(s);
  std::string result(reinterpret_cast<const char*>(out), static_cast<std::size_t>(n));
  std::free(out);
  return result;
}

// Opens `relative` for reading: O_NONBLOCK and O_NOCTTY, so that a FIFO or a terminal can neither
// block the open nor become the controlling terminal (fstat then refuses anything but a regular
// file before a byte is read). The descriptor or -errno.
int open_for_read(const Workspace& ws, const std::string& relative) {
  return ws.open_at(relative, O_RDONLY | O_NONBLOCK | O_NOCTTY);
}

// Pi's resolveReadPath: when the path is missing, the spellings macOS gives screenshot names. The
// path as given is opened first, so a file that exists is opened once; `relative` becomes the
// spelling that was opened.
Fd open_read_path(const Workspace& ws, std::string& relative) {
  Fd fd(open_for_read(ws, relative));
  if (fd.get() != -ENOENT) return fd;
  const std::string decomposed = nfd(relative);
  std::string curly = relative;
  replace_all(curly, "'", "\u2019");
  std::string decomposed_curly = decomposed;
  replace_all(decomposed_curly, "'", "\u2019");
  for (const std::string& candidate :
       {am_pm_variant(relative), decomposed, curly, decomposed_curly}) {
    if (candidate == relative) continue;
    Fd variant(open_for_read(ws, candidate));
    if (variant.get() >= 0) {
      relative = candidate;
      return variant;
    }
  }
  return fd;
}

ToolResult read_text(const Source& text, const std::string& path, std::optional<double> offset,
                     std::optional<double> limit) {
  const std::size_t count = text.count_newlines(0, text.size()) + 1;
  const double total = static_cast<double>(count);
  // `offset ? max(0, offset - 1) : 0`: 0 and a missing offset both mean the first line.
  const double given = offset.value_or(0);
  const double start = given != 0 ? std::max(0.0, given - 1) : 0.0;
  const double start_display = start + 1;
  if (start >= total) {
    return ToolResult::error("Offset " + js_number(offset.value_or(0)) +
                             " is beyond end of file (" + js_number(total) + " lines total)");
  }
  const std::size_t first = slice_index(start, count);
  const std::size_t from = text.advance(0, first);
  // Pieces [first, to) joined by "\n": the text from the first one's start to the last one's end.
  std::size_t selected_end = text.size();
  std::optional<double> user_limited;
  if (limit) {
    const double end = std::min(start + *limit, total);
    const std::size_t to = slice_index(end, count);
    selected_end = first >= to ? from : text.end_from(text.advance(from, to - 1 - first));
    user_limited = end - start;
  }
  // What truncate_head needs of the selection: its size, its lines, and its first bytes.
  const std::size_t selected_size = selected_end - from;
  std::size_t lines = 0;
  if (selected_size > 0) {
    const std::size_t body_end =
        text.read(selected_end - 1, selected_end) == "\n" ? selected_end - 1 : selected_end;
    lines = text.count_newlines(from, body_end) + 1;
  }
  const std::string head = text.read(from, from + std::min(selected_size, kMaxBytes + 1));
  Truncation t = truncate_head_of(head, selected_size, lines);
  ToolResult r;
  if (t.first_line_exceeds_limit) {
    const std::string size = format_size(text.end_from(from) - from);
    r.text = "[Line " + js_number(start_display) + " is " + size + ", exceeds " +
             format_size(kMaxBytes) + " limit. Use bash: sed -n '" + js_number(start_display) +
             "p' " + path + " | head -c " + std::to_string(kMaxBytes) + "]";
    r.details = json::Object{{"truncation", to_json(t)}};
  } else if (t.truncated) {
    const double end_display = start_display + static_cast<double>(t.output_lines) - 1;
    r.text = t.content + "\n\n[Showing lines " + js_number(start_display) + "-" +
             js_number(end_display) + " of " + js_number(total);
    if (t.truncated_by == "lines") {
      r.text += ". Use offset=" + js_number(end_display + 1) + " to continue.]";
    } else {
      r.text += " (" + format_size(kMaxBytes) +
                " limit). Use offset=" + js_number(end_display + 1) + " to continue.]";
    }
    r.details = json::Object{{"truncation", to_json(t)}};
  } else if (user_limited && start + *user_limited < total) {
    const double remaining = total - (start + *user_limited);
    r.text = t.content + "\n\n[" + js_number(remaining) +
             " more lines in file. Use offset=" + js_number(start + *user_limited + 1) +
             " to continue.]";
  } else {
    r.text = std::move(t.content);
  }
  if (!text.ok()) return ToolResult::error(node_error(EIO, "read"));
  return r;
}

}  // namespace

ToolResult run_read(const json::Value& args, const CallContext& ctx) {
  if (ctx.cancelled()) return ToolResult::error(std::string(kAborted));
  const std::string* path = string_arg(args, "path");
  if (path == nullptr || !ctx.workspace) return ToolResult::error("read needs a string path");
  auto resolved = ctx.workspace->resolve(*path);
  if (!resolved) return ToolResult::error(resolved.diagnostics().front().message);
  const Workspace& ws = *ctx.workspace;
  const std::string absolute = ws.absolute(*resolved);
  std::string relative = *resolved;
  Fd fd = open_read_path(ws, relative);
  if (fd.get() < 0) {
    if (fd.get() == -EXDEV) return ToolResult::error(escape_message(*path));
    // A file that does not exist: the model named the wrong one (a resolution error).
    if (fd.get() == -ENOENT) return ToolResult::not_found(node_error(ENOENT, "access", absolute));
    return ToolResult::error(node_error(-fd.get(), "access", absolute));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return ToolResult::error(node_error(errno, "stat", absolute));
  if (S_ISDIR(st.st_mode)) return ToolResult::error(node_error(EISDIR, "read"));
  if (names_directory(*path)) return ToolResult::error(node_error(ENOTDIR, "access", absolute));
  if (!S_ISREG(st.st_mode)) return ToolResult::error("Not a regular file: " + *path);
  if (static_cast<std::uint64_t>(st.st_size) > kMaxToolFileBytes) {
    return ToolResult::error(too_large_message("read", *path, std::to_string(st.st_size)));
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  const auto offset = number_arg(args, "offset");
  const auto limit = number_arg(args, "limit");
  // A file of up to one chunk is read with one pread(2) into a buffer of its size; a larger one is
  // read a chunk at a time, so only the image sniff's bytes, the selection's head and a chunk are
  // held, and whole only when it is not UTF-8 and must be decoded as Pi decodes it.
  std::string small;
  if (size <= Source::kChunk) {
    small.resize(size);
    if (io::pread_all(fd.get(), small.data(), size, 0) != static_cast<std::int64_t>(size)) {
      return ToolResult::error(node_error(EIO, "read"));
    }
  }
  const Source file = size <= Source::kChunk ? Source(small) : Source(fd.get(), size);
  if (looks_like_supported_image(file.read(0, std::min<std::size_t>(size, 4100)))) {
    return ToolResult::error("Image files are not supported by this tool: " + *path);
  }
  if (ctx.cancelled()) return ToolResult::error(std::string(kAborted));
  if (file.is_utf8()) return read_text(file, *path, offset, limit);
  std::string bytes;
  if (size <= Source::kChunk) {
    bytes = std::move(small);
  } else {
    bytes.reserve(size + 1);
    if (const int err = io::read_all(fd.get(), bytes, kMaxToolFileBytes); err != 0) {
      return ToolResult::error(node_error(-err, "read"));
    }
    if (bytes.size() > kMaxToolFileBytes) {
      return ToolResult::error(too_large_message("read", *path, "more than"));
    }
  }
  const std::string text = text::decode_utf8_lossy(bytes);
  return read_text(Source(text), *path, offset, limit);
}

}  // namespace mf::tools
