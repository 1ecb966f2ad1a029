// Pi's read, write and ls tools over a confined workspace. Every file is reached through
// Workspace::open_at, so the kernel keeps each call beneath the root; the texts the model sees are
// Pi's own, with Node's error strings where Pi lets a filesystem error through.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utf8proc.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "args.hpp"
#include "edit_core.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/text/utf8.hpp"
#include "mf/tools/pack.hpp"

namespace mf::tools {
using io::Fd;

namespace {

constexpr std::string_view kAborted = "Operation aborted";
// ls hands truncate_head JavaScript's Number.MAX_SAFE_INTEGER as its line limit, and Pi reports
// that number back in details.truncation.maxLines.
constexpr std::size_t kMaxSafeInteger = 9007199254740991ULL;
constexpr double kDefaultLsLimit = 500;

std::string escape_message(std::string_view user_path) {
  return "Path escapes the workspace: " + std::string(user_path);
}

// JavaScript's ToIntegerOrInfinity followed by Array.prototype.slice's clamping to [0, length].
std::size_t slice_index(double d, std::size_t length) {
  if (std::isnan(d)) return 0;
  d = std::trunc(d);
  if (d < 0) d = std::max(0.0, static_cast<double>(length) + d);
  return d >= static_cast<double>(length) ? length : static_cast<std::size_t>(d);
}

// String.prototype.split("\n"): "" gives one empty piece, a trailing "\n" one more.
std::vector<std::string_view> split_all(std::string_view text) {
  std::vector<std::string_view> pieces;
  std::size_t start = 0;
  for (;;) {
    const std::size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) {
      pieces.push_back(text.substr(start));
      return pieces;
    }
    pieces.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
}

// Reads the whole of `fd`, at most `cap` bytes; nullopt plus errno on a read error, and a string
// one byte over `cap` when the file grew past it.
std::optional<std::string> read_all(int fd, std::size_t size_hint, std::size_t cap) {
  std::string buffer;
  buffer.resize(std::min(size_hint, cap) + 1);
  std::size_t got = 0;
  for (;;) {
    if (got == buffer.size()) {
      if (got > cap) break;
      buffer.resize(std::min(cap + 1, buffer.size() * 2));
    }
    const ssize_t n = ::read(fd, buffer.data() + got, buffer.size() - got);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return std::nullopt;
    }
    got += static_cast<std::size_t>(n);
  }
  buffer.resize(got);
  return buffer;
}

bool write_all(int fd, std::string_view bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// --- read ---

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

// Pi's resolveReadPath: when the path is missing, the spellings macOS gives screenshot names.
std::string read_path_variant(const Workspace& ws, const std::string& relative) {
  auto exists = [&](const std::string& candidate) {
    Fd fd(ws.open_at(candidate, O_PATH));
    return fd.get() >= 0;
  };
  if (exists(relative)) return relative;
  const std::string am_pm = am_pm_variant(relative);
  if (am_pm != relative && exists(am_pm)) return am_pm;
  const std::string decomposed = nfd(relative);
  if (decomposed != relative && exists(decomposed)) return decomposed;
  std::string curly = relative;
  replace_all(curly, "'", "\u2019");
  if (curly != relative && exists(curly)) return curly;
  std::string decomposed_curly = decomposed;
  replace_all(decomposed_curly, "'", "\u2019");
  if (decomposed_curly != relative && exists(decomposed_curly)) return decomposed_curly;
  return relative;
}

ToolResult read_text(std::string_view text, const std::string& path, std::optional<double> offset,
                     std::optional<double> limit) {
  const auto all_lines = split_all(text);
  const double total = static_cast<double>(all_lines.size());
  // `offset ? max(0, offset - 1) : 0`: 0 and a missing offset both mean the first line.
  const double given = offset.value_or(0);
  const double start = given != 0 ? std::max(0.0, given - 1) : 0.0;
  const double start_display = start + 1;
  if (start >= total) {
    return ToolResult::error("Offset " + js_number(offset.value_or(0)) +
                             " is beyond end of file (" + js_number(total) + " lines total)");
  }
  auto join = [&](std::size_t from, std::size_t to) {
    if (from >= to) return std::string();
    const char* begin = all_lines[from].data();
    const char* end = all_lines[to - 1].data() + all_lines[to - 1].size();
    return std::string(begin, static_cast<std::size_t>(end - begin));
  };
  const std::size_t first = slice_index(start, all_lines.size());
  std::string selected;
  std::optional<double> user_limited;
  if (limit) {
    const double end = std::min(start + *limit, total);
    selected = join(first, slice_index(end, all_lines.size()));
    user_limited = end - start;
  } else {
    selected = join(first, all_lines.size());
  }

  Truncation t = truncate_head(selected);
  ToolResult r;
  if (t.first_line_exceeds_limit) {
    const std::string size = format_size(all_lines[std::min(first, all_lines.size() - 1)].size());
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
  return r;
}

// --- ls ---

// JavaScript's localeCompare is ICU's root collation; this approximates it. Exact for ASCII names
// once lowercased (Pi lowercases both sides first): each character has a primary weight in ICU's
// order -- whitespace, punctuation and symbols in the order below, currency, digits, letters --
// and names compare weight by weight, a prefix first. Beyond ASCII, names are decomposed (NFKD):
// accents only weigh at the secondary level, in ICU's order for U+0300..U+036F; ø đ ł ħ are their
// base letter with a stroke, æ œ ß the two letters they stand for; other characters rank by class
// (space, punctuation, currency, digit, letter) and then by code point, which is where this stops
// being ICU. Equal weights fall back to the canonically decomposed code points, and names equal
// even there keep Node's readdir order (bytewise), as V8's stable sort does.
constexpr std::string_view kAsciiWhitespace = "\t\n\v\f\r ";
constexpr std::string_view kAsciiPunctuation = "_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~";

// ICU's secondary order of the combining marks U+0300..U+036F (1 = lightest), read off ICU 74.
constexpr std::uint8_t kMarkRank[] = {
    6,  5,  8,  15, 20, 25, 7,  16, 12, 26, 10, 14, 9,  21, 21, 27, 28, 29, 21, 3,  4,  21, 22,
    22, 22, 22, 21, 30, 22, 22, 22, 22, 22, 31, 32, 33, 34, 35, 36, 18, 19, 22, 22, 22, 22, 37,
    38, 22, 39, 40, 2,  22, 41, 24, 23, 23, 17, 42, 22, 22, 22, 21, 21, 21, 6,  5,  11, 3,  13,
    43, 21, 22, 22, 22, 21, 21, 21, 22, 22, 1,  21, 21, 21, 22, 22, 22, 22, 21, 44, 22, 22, 21,
    22, 21, 21, 22, 45, 46, 22, 47, 50, 52, 54, 57, 48, 49, 51, 53, 55, 56, 58, 59};
constexpr std::uint32_t kBaseSecondary = 0;  // what every base character carries
constexpr std::uint32_t kLigatureSecondary = 0xF0;

std::uint32_t mark_rank(std::int32_t cp) {
  if (cp >= 0x300 && cp <= 0x36F) return kMarkRank[cp - 0x300];
  return 0x100 + static_cast<std::uint32_t>(cp);
}

enum Band : std::uint64_t {
  kWhitespace = 1,
  kPunctuation = 2,
  kCurrency = 3,
  kDigit = 4,
  kLatin = 5,
  kOtherLetter = 6,
};

struct SortKey {
  std::vector<std::uint64_t> primary;
  std::vector<std::uint32_t> secondary;
  std::vector<std::int32_t> tie;  // canonically decomposed code points
};

void add_weight(SortKey& key, Band band, std::uint64_t sub) {
  key.primary.push_back((static_cast<std::uint64_t>(band) << 32) | sub);
  key.secondary.push_back(kBaseSecondary);
}

void add_latin(SortKey& key, char letter, std::uint64_t step = 0) {
  add_weight(key, kLatin, static_cast<std::uint64_t>(letter - 'a') * 4 + step);
}

void add_character(SortKey& key, std::int32_t cp) {
  if (cp < 0x80) {
    const char c = static_cast<char>(cp);
    if (const auto at = kAsciiWhitespace.find(c); at != std::string_view::npos) {
      add_weight(key, kWhitespace, at);
    } else if (const auto p = kAsciiPunctuation.find(c); p != std::string_view::npos) {
      add_weight(key, kPunctuation, p);
    } else if (c == '$') {
      add_weight(key, kCurrency, 0);
    } else if (c >= '0' && c <= '9') {
      add_weight(key, kDigit, static_cast<std::uint64_t>(c - '0'));
    } else if (c >= 'a' && c <= 'z') {
      add_latin(key, c);
    } else if (c >= 'A' && c <= 'Z') {
      add_latin(key, static_cast<char>(c - 'A' + 'a'));
    }
    return;  // other control characters are ignorable
  }
  switch (cp) {  // Latin letters without a canonical decomposition
    case 0xDF:   // ß, æ, œ: their two letters, heavier than any accent in between
    case 0xE6:
    case 0x153:
      add_latin(key, cp == 0xDF ? 's' : cp == 0xE6 ? 'a' : 'o');
      key.secondary.push_back(kLigatureSecondary);
      add_latin(key, cp == 0xDF ? 's' : 'e');
      return;
    case 0xF8:  // ø: o with a long solidus overlay
      add_latin(key, 'o');
      key.secondary.push_back(mark_rank(0x338));
      return;
    case 0x111:  // đ, ł, ħ: the letter with a short stroke overlay
    case 0x142:
    case 0x127:
      add_latin(key, cp == 0x111 ? 'd' : cp == 0x142 ? 'l' : 'h');
      key.secondary.push_back(mark_rank(0x335));
      return;
    case 0x131:  // dotless i sorts after i
      add_latin(key, 'i', 1);
      return;
    case 0xFE:  // þ after z
      add_weight(key, kLatin, 26 * 4);
      return;
    default:
      break;
  }
  const auto sub = static_cast<std::uint64_t>(cp);
  switch (utf8proc_category(cp)) {
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
      key.secondary.push_back(mark_rank(cp));
      return;
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CF:
      return;  // format characters are ignorable
    case UTF8PROC_CATEGORY_ZS:
    case UTF8PROC_CATEGORY_ZL:
    case UTF8PROC_CATEGORY_ZP:
      add_weight(key, kWhitespace, 0x100 + sub);
      return;
    case UTF8PROC_CATEGORY_SC:
      add_weight(key, kCurrency, 0x100 + sub);
      return;
    case UTF8PROC_CATEGORY_PC:
    case UTF8PROC_CATEGORY_PD:
    case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE:
    case UTF8PROC_CATEGORY_PI:
    case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO:
    case UTF8PROC_CATEGORY_SM:
    case UTF8PROC_CATEGORY_SK:
    case UTF8PROC_CATEGORY_SO:
      add_weight(key, kPunctuation, 0x100 + sub);
      return;
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
      add_weight(key, kDigit, 0x100 + sub);
      return;
    default:
      add_weight(key, kOtherLetter, sub);
      return;
  }
}

SortKey sort_key(std::string_view name) {
  SortKey key;
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(name.data());
  auto left = static_cast<utf8proc_ssize_t>(name.size());
  while (left > 0) {
    utf8proc_int32_t cp = 0;
    const auto n = utf8proc_iterate(p, left, &cp);
    if (n <= 0) {  // cannot happen for decoded names; skip a byte rather than loop
      ++p;
      --left;
      continue;
    }
    p += n;
    left -= n;
    // Weights come from the compatibility decomposition (U+00A0 weighs as a space); the last
    // resort compares canonical decompositions, so canonically equal names stay equal.
    for (const bool compat : {true, false}) {
      utf8proc_int32_t parts[18];
      int last_boundary = 0;
      const auto options = static_cast<utf8proc_option_t>(
          compat ? UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT : UTF8PROC_DECOMPOSE);
      auto count = utf8proc_decompose_char(cp, parts, 18, options, &last_boundary);
      if (count < 0 || count > 18) {
        parts[0] = cp;
        count = 1;
      }
      for (utf8proc_ssize_t i = 0; i < count; ++i) {
        const std::int32_t c = utf8proc_tolower(parts[i]);
        if (compat) {
          add_character(key, c);
        } else {
          key.tie.push_back(c);
        }
      }
    }
  }
  return key;
}

bool key_less(const SortKey& a, const SortKey& b) {
  if (a.primary != b.primary) return a.primary < b.primary;
  if (a.secondary != b.secondary) return a.secondary < b.secondary;
  return a.tie < b.tie;
}

std::string lowercase(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(s.data());
  auto left = static_cast<utf8proc_ssize_t>(s.size());
  while (left > 0) {
    utf8proc_int32_t cp = 0;
    const auto n = utf8proc_iterate(p, left, &cp);
    if (n <= 0) {
      out.push_back(static_cast<char>(*p));
      ++p;
      --left;
      continue;
    }
    utf8proc_uint8_t buf[4];
    const auto w = utf8proc_encode_char(utf8proc_tolower(cp), buf);
    out.append(reinterpret_cast<const char*>(buf), static_cast<std::size_t>(w));
    p += n;
    left -= n;
  }
  return out;
}

std::string join_relative(const std::string& dir, const std::string& name) {
  return dir.empty() ? name : dir + "/" + name;
}

}  // namespace

std::string too_large_message(std::string_view verb, std::string_view path, std::string_view size) {
  return "File too large to " + std::string(verb) + ": " + std::string(path) + " (" +
         std::string(size) + " bytes, the limit is " + std::to_string(kMaxToolFileBytes) + ")";
}

std::string node_error(int err, std::string_view syscall, std::string_view path) {
  // libuv's wording for the codes a file tool meets; anything else takes the C library's.
  const char* name = ::strerrorname_np(err);
  std::string desc;
  switch (err) {
    case ENOENT:
      desc = "no such file or directory";
      break;
    case EACCES:
      desc = "permission denied";
      break;
    case EPERM:
      desc = "operation not permitted";
      break;
    case EISDIR:
      desc = "illegal operation on a directory";
      break;
    case ENOTDIR:
      desc = "not a directory";
      break;
    case ELOOP:
      desc = "too many symbolic links encountered";
      break;
    case EEXIST:
      desc = "file already exists";
      break;
    case ENAMETOOLONG:
      desc = "name too long";
      break;
    case ENOSPC:
      desc = "no space left on device";
      break;
    case EROFS:
      desc = "read-only file system";
      break;
    case EIO:
      desc = "i/o error";
      break;
    case EMFILE:
      desc = "too many open files";
      break;
    case ENXIO:
      desc = "no such device or address";
      break;
    case EBUSY:
      desc = "resource busy or locked";
      break;
    case ETXTBSY:
      desc = "text file is busy";
      break;
    case EFBIG:
      desc = "file too large";
      break;
    default: {
      const char* d = ::strerrordesc_np(err);
      desc = d != nullptr ? d : "unknown error";
      std::transform(desc.begin(), desc.end(), desc.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    }
  }
  std::string out =
      std::string(name != nullptr ? name : "EUNKNOWN") + ": " + desc + ", " + std::string(syscall);
  if (!path.empty()) out += " '" + std::string(path) + "'";
  return out;
}

ToolResult run_read(const json::Value& args, const CallContext& ctx) {
  if (ctx.cancelled()) return ToolResult::error(std::string(kAborted));
  const std::string* path = string_arg(args, "path");
  if (path == nullptr || !ctx.workspace) return ToolResult::error("read needs a string path");
  auto resolved = ctx.workspace->resolve(*path);
  if (!resolved) return ToolResult::error(resolved.diagnostics().front().message);
  const Workspace& ws = *ctx.workspace;
  const std::string absolute = ws.absolute(*resolved);
  const std::string relative = read_path_variant(ws, *resolved);

  // Learn the type through O_PATH first: opening a FIFO or a device for reading could block.
  Fd probe(ws.open_at(relative, O_PATH));
  if (probe.get() < 0) {
    if (probe.get() == -EXDEV) return ToolResult::error(escape_message(*path));
    return ToolResult::error(node_error(-probe.get(), "access", absolute));
  }
  struct stat st {};
  if (::fstat(probe.get(), &st) != 0) return ToolResult::error(node_error(errno, "stat", absolute));
  if (S_ISDIR(st.st_mode)) return ToolResult::error(node_error(EISDIR, "read"));
  if (!S_ISREG(st.st_mode)) return ToolResult::error("Not a regular file: " + *path);
  if (static_cast<std::uint64_t>(st.st_size) > kMaxToolFileBytes) {
    return ToolResult::error(too_large_message("read", *path, std::to_string(st.st_size)));
  }
  Fd fd(ws.open_at(relative, O_RDONLY | O_NONBLOCK | O_NOCTTY));
  if (fd.get() < 0) {
    if (fd.get() == -EXDEV) return ToolResult::error(escape_message(*path));
    return ToolResult::error(node_error(-fd.get(), "access", absolute));
  }
  struct stat again {};
  if (::fstat(fd.get(), &again) != 0 || !S_ISREG(again.st_mode)) {
    return ToolResult::error("Not a regular file: " + *path);
  }
  auto bytes = read_all(fd.get(), static_cast<std::size_t>(again.st_size), kMaxToolFileBytes);
  if (!bytes) return ToolResult::error(node_error(errno, "read"));
  if (bytes->size() > kMaxToolFileBytes) {
    return ToolResult::error(too_large_message("read", *path, "more than"));
  }
  if (ctx.cancelled()) return ToolResult::error(std::string(kAborted));
  if (looks_like_supported_image(*bytes)) {
    return ToolResult::error("Image files are not supported by this tool: " + *path);
  }
  const std::string text =
      text::valid_utf8(*bytes) ? std::move(*bytes) : text::decode_utf8_lossy(*bytes);
  return read_text(text, *path, number_arg(args, "offset"), number_arg(args, "limit"));
}

ToolResult run_write(const json::Value& args, const CallContext& ctx) {
  if (ctx.cancelled()) return ToolResult::error(std::string(kAborted));
  const std::string* path = string_arg(args, "path");
  const std::string* content = string_arg(args, "content");
  if (path == nullptr || content == nullptr || !ctx.workspace) {
    return ToolResult::error("write needs a string path and a string content");
  }
  auto resolved = ctx.workspace->resolve(*path);
  if (!resolved) return ToolResult::error(resolved.diagnostics().front().message);
  const Workspace& ws = *ctx.workspace;
  const std::string& relative = *resolved;
  const std::string absolute = ws.absolute(relative);
  FileLock lock(file_lock_key(ws, relative));  // one writer per file, shared with edit

  const auto slash = relative.rfind('/');
  if (slash != std::string::npos) {
    const std::string parent = relative.substr(0, slash);
    const int made = ws.make_directories(parent);
    if (made == -EXDEV) return ToolResult::error(escape_message(*path));
    if (made < 0) return ToolResult::error(node_error(-made, "mkdir", ws.absolute(parent)));
  }
  if (ctx.cancelled()) return ToolResult::error(std::string(kAborted));

  // An existing file (or a link to one inside the root) is truncated in place, as Pi does; a new
  // one is created without following a link at its last component. O_NONBLOCK keeps a FIFO with
  // no reader from hanging the call.
  constexpr int kFlags = O_WRONLY | O_TRUNC | O_NONBLOCK | O_NOCTTY;
  int opened = relative.empty() ? -EISDIR : ws.open_at(relative, kFlags);
  if (opened == -ENOENT) opened = ws.open_at(relative, kFlags | O_CREAT, 0666);
  Fd fd(opened);
  if (fd.get() < 0) {
    if (fd.get() == -EXDEV) return ToolResult::error(escape_message(*path));
    return ToolResult::error(node_error(-fd.get(), "open", absolute));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return ToolResult::error("Not a regular file: " + *path);
  }
  if (!write_all(fd.get(), *content)) return ToolResult::error(node_error(errno, "write"));
  if (ctx.cancelled()) return ToolResult::error(std::string(kAborted));
  return {false,
          "Successfully wrote " + std::to_string(utf16_length(*content)) + " bytes to " + *path,
          {}};
}

ToolResult run_ls(const json::Value& args, const CallContext& ctx) {
  if (ctx.cancelled()) return ToolResult::error(std::string(kAborted));
  if (!ctx.workspace) return ToolResult::error("ls needs a workspace");
  const std::string* arg_path = string_arg(args, "path");
  const std::string path = arg_path == nullptr || arg_path->empty() ? "." : *arg_path;
  auto resolved = ctx.workspace->resolve(path);
  if (!resolved) return ToolResult::error(resolved.diagnostics().front().message);
  const Workspace& ws = *ctx.workspace;
  const std::string& relative = *resolved;
  const std::string absolute = ws.absolute(relative);
  const double limit = number_arg(args, "limit").value_or(kDefaultLsLimit);

  Fd probe(ws.open_at(relative, O_PATH));
  if (probe.get() == -EXDEV) return ToolResult::error(escape_message(path));
  if (probe.get() < 0) return ToolResult::error("Path not found: " + absolute);
  struct stat st {};
  if (::fstat(probe.get(), &st) != 0) return ToolResult::error("Path not found: " + absolute);
  if (!S_ISDIR(st.st_mode)) return ToolResult::error("Not a directory: " + absolute);

  Fd dirfd(ws.open_at(relative, O_RDONLY | O_DIRECTORY));
  if (dirfd.get() < 0) {
    return ToolResult::error("Cannot read directory: " +
                             node_error(-dirfd.get(), "scandir", absolute));
  }
  struct Entry {
    std::string raw;   // the bytes on disk, for fstatat
    std::string name;  // what the model sees (UTF-8, invalid bytes replaced)
    SortKey key;
  };
  std::vector<Entry> entries;
  {
    const int listing = ::dup(dirfd.get());
    DIR* dir = listing < 0 ? nullptr : ::fdopendir(listing);
    if (dir == nullptr) {
      const int err = errno;
      if (listing >= 0) ::close(listing);
      return ToolResult::error("Cannot read directory: " + node_error(err, "scandir", absolute));
    }
    for (;;) {
      errno = 0;
      const dirent* e = ::readdir(dir);
      if (e == nullptr) {
        const int err = errno;
        if (err != 0) {
          ::closedir(dir);
          return ToolResult::error("Cannot read directory: " +
                                   node_error(err, "scandir", absolute));
        }
        break;
      }
      const std::string_view raw = e->d_name;
      if (raw == "." || raw == "..") continue;
      Entry entry{std::string(raw), text::decode_utf8_lossy(raw), {}};
      entry.key = sort_key(lowercase(entry.name));
      entries.push_back(std::move(entry));
    }
    ::closedir(dir);
  }
  // Node's readdir hands entries over in strcmp order (libuv sorts scandir's result), and V8's
  // sort is stable, so names the collation cannot tell apart keep that order.
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.raw < b.raw; });
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry& a, const Entry& b) { return key_less(a.key, b.key); });

  std::vector<std::string> results;
  bool limit_reached = false;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (static_cast<double>(results.size()) >= limit) {
      limit_reached = true;
      break;
    }
    if ((i & 255) == 255 && ctx.cancelled()) return ToolResult::error(std::string(kAborted));
    const Entry& e = entries[i];
    struct stat es {};
    if (::fstatat(dirfd.get(), e.raw.c_str(), &es, AT_SYMLINK_NOFOLLOW) != 0) continue;
    bool directory = S_ISDIR(es.st_mode);
    if (S_ISLNK(es.st_mode)) {
      // Follow the link only beneath the root: a link that leads out is listed as a plain entry
      // (its name is inside the workspace; its target's type is not the model's to learn), and
      // one that dangles or loops is skipped, as Pi skips entries it cannot stat.
      Fd target(ws.open_at(join_relative(relative, e.raw), O_PATH));
      if (target.get() == -EXDEV) {
        directory = false;
      } else if (target.get() < 0) {
        continue;
      } else {
        struct stat ts {};
        if (::fstat(target.get(), &ts) != 0) continue;
        directory = S_ISDIR(ts.st_mode);
      }
    }
    results.push_back(directory ? e.name + "/" : e.name);
  }
  if (results.empty()) return {false, "(empty directory)", {}};

  std::string raw_output;
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (i > 0) raw_output.push_back('\n');
    raw_output += results[i];
  }
  Truncation t = truncate_head(raw_output, kMaxSafeInteger, kMaxBytes);
  ToolResult r{false, t.content, {}};
  std::vector<std::string> notices;
  json::Object details;
  if (limit_reached) {
    notices.push_back(js_number(limit) +
                      " entries limit reached. Use limit=" + js_number(limit * 2) + " for more");
    details.push_back({"entryLimitReached", limit});
  }
  if (t.truncated) {
    notices.push_back(format_size(kMaxBytes) + " limit reached");
    details.push_back({"truncation", to_json(t)});
  }
  if (!notices.empty()) {
    r.text += "\n\n[";
    for (std::size_t i = 0; i < notices.size(); ++i) {
      if (i > 0) r.text += ". ";
      r.text += notices[i];
    }
    r.text += "]";
  }
  if (!details.empty()) r.details = std::move(details);
  return r;
}

}  // namespace mf::tools
