// grep: Pi 0.79's tool, which runs ripgrep, computed natively over walk.hpp's walk. What the
// model sees follows Pi (result texts, notices, limits, details); what is searched follows rg as
// Pi invokes it (--hidden, no links followed, .gitignore per directory). Differences and their
// reasons: docs/tools.md.
#include <fcntl.h>
#include <re2/re2.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "args.hpp"
#include "file_tools.hpp"
#include "grep_match.hpp"
#include "mf/fs/ordered_pool.hpp"
#include "mf/io/file.hpp"
#include "mf/text/find.hpp"
#include "mf/text/utf8.hpp"
#include "mf/tools/pack.hpp"
#include "search_output.hpp"
#include "walk.hpp"

namespace mf::tools {
using io::Fd;
using search::bool_arg;
using search::Output;
using search::stop_requested;

namespace {

constexpr double kDefaultGrepLimit = 100;

// A file is read with one read() of this size first; most source files fit.
constexpr std::size_t kFirstRead = 256 * 1024;
// rg's first buffer: a NUL byte in it makes a file met during the walk binary (skipped).
constexpr std::size_t kBinaryProbe = 64 * 1024;
// Larger files are searched in windows of whole lines, so memory stays bounded.
constexpr std::size_t kWindow = 64u << 20;
// A single line longer than this ends the search of its file (rg would keep growing its buffer).
constexpr std::size_t kMaxLine = 256u << 20;
// Bytes of a line kept for display: past 1,365 of them a line is over 500 UTF-16 units anyway.
constexpr std::size_t kKeptLineBytes = 4096;

// --- grep: matching ------------------------------------------------------------------------------

// A regex's matches are found by a prefilter when every match starts with one of a few literals:
// the literals are found 16 bytes at a time (text::LiteralFinder) and RE2 tries an anchored match
// at each, instead of running its DFA over every byte. The reading below is conservative: syntax
// it does not follow (flag groups, \Q, a branch that starts with anything but a literal) leaves
// the regex to the DFA alone.
constexpr std::size_t kMaxPrefixes = 8;
// Past this many bytes searched on one thread, a prefilter that stops more than once per
// kMinBytesPerCheck bytes is dropped for the DFA (an anchored match costs about what the DFA
// spends on that many bytes). Either way finds the same lines.
constexpr std::size_t kPrefilterProbation = 1u << 20;
constexpr std::size_t kMinBytesPerCheck = 48;

bool is_meta(char c) {
  return std::string_view("\\.+*?()|[]{}^$").find(c) != std::string_view::npos;
}

// The top-level branches of `p`, or nullopt for syntax not followed here.
std::optional<std::vector<std::string_view>> top_branches(std::string_view p) {
  std::vector<std::string_view> out;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\') {
      if (i + 1 < p.size() && p[i + 1] == 'Q') return std::nullopt;  // quoting to \E
      ++i;
    } else if (c == '[') {  // a class, to its closing bracket
      std::size_t j = i + 1;
      if (j < p.size() && p[j] == '^') ++j;
      if (j < p.size() && p[j] == ']') ++j;  // a leading ']' is a member
      for (;; ++j) {
        if (j >= p.size()) return std::nullopt;
        if (p[j] == '\\') {
          ++j;
        } else if (p[j] == '[' && j + 1 < p.size() && p[j + 1] == ':') {  // [:alpha:]
          const std::size_t e = p.find(":]", j + 2);
          if (e == std::string_view::npos) return std::nullopt;
          j = e + 1;
        } else if (p[j] == ']') {
          break;
        }
      }
      i = j;
    } else if (c == '(') {
      // A flag group may change case or line rules for the rest; only (?: is followed.
      if (i + 1 < p.size() && p[i + 1] == '?' && (i + 2 >= p.size() || p[i + 2] != ':')) {
        return std::nullopt;
      }
      ++depth;
    } else if (c == ')') {
      if (--depth < 0) return std::nullopt;
    } else if (c == '|' && depth == 0) {
      out.push_back(p.substr(start, i - start));
      start = i + 1;
    }
  }
  if (depth != 0) return std::nullopt;
  out.push_back(p.substr(start));
  return out;
}

// The literal every match of branch `b` starts with (empty when there is none). With `fold`
// (case-insensitive) it stops before a non-ASCII character and before k and s, whose case
// orbits hold non-ASCII characters (the Kelvin sign, the long s): the literal is then searched
// for with ASCII case folding only.
std::string branch_prefix(std::string_view b, bool fold) {
  std::size_t i = 0;
  // Zero-width assertions first: the match starts where the literal does.
  for (;;) {
    if (i < b.size() && b[i] == '^') {
      ++i;
    } else if (i + 1 < b.size() && b[i] == '\\' && (b[i + 1] == 'b' || b[i + 1] == 'A')) {
      i += 2;
    } else {
      break;
    }
  }
  const auto quantifier = [&](std::size_t at) {
    return at < b.size() && (b[at] == '*' || b[at] == '?' || b[at] == '{' || b[at] == '+');
  };
  if (quantifier(i)) return {};
  std::string lit;
  std::size_t last = 0;  // where the last character starts in `lit`
  while (i < b.size()) {
    const auto c = static_cast<unsigned char>(b[i]);
    std::size_t len = 1;
    std::size_t from = i;
    if (c == '\\') {  // escaped punctuation is itself; any other escape ends the literal
      if (i + 1 >= b.size()) break;
      const auto e = static_cast<unsigned char>(b[i + 1]);
      if (e >= 0x80 || std::ispunct(e) == 0) break;
      from = i + 1;
      len = 2;
    } else if (c >= 0x80) {
      if (fold) break;
      len = text::utf8_sequence_length(b, i);
      if (len == 0) break;
    } else if (is_meta(static_cast<char>(c))) {
      break;
    } else if (fold && (c == 'k' || c == 'K' || c == 's' || c == 'S')) {
      break;
    }
    last = lit.size();
    lit.append(b.substr(from, len - (from - i)));
    i += len;
  }
  // A repeated last character may be absent (or, for +, is there at least once: kept simple).
  if (quantifier(i) && b[i] != '+') lit.resize(last);
  return lit;
}

// Literals one of which starts every match of `source` (the regex as RE2 gets it), or nullopt.
std::optional<std::vector<std::string>> prefixes_of(std::string_view source, bool fold) {
  const auto branches = top_branches(source);
  if (!branches) return std::nullopt;
  std::vector<std::string> out;
  for (const std::string_view b : *branches) {
    std::string lit = branch_prefix(b, fold);
    if (lit.empty()) return std::nullopt;
    if (fold) {
      for (char& c : lit) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
    out.push_back(std::move(lit));
  }
  // A literal another one starts is found through that one.
  std::sort(out.begin(), out.end());
  std::vector<std::string> kept;
  for (auto& lit : out) {
    if (kept.empty() || lit.compare(0, kept.back().size(), kept.back()) != 0) {
      kept.push_back(std::move(lit));
    }
  }
  if (kept.size() > kMaxPrefixes) return std::nullopt;
  return kept;
}

class Matcher {
 public:
  static std::optional<Matcher> compile(const std::string& pattern, bool literal, bool ignore_case,
                                        std::string* error, bool prefilter = true) {
    // Pi runs rg without --multiline: a line terminator in the pattern is an error there.
    bool newline = pattern.find('\n') != std::string::npos;
    for (std::size_t i = 0; !literal && !newline && i + 1 < pattern.size(); ++i) {
      if (pattern[i] == '\\') {
        newline = pattern[i + 1] == 'n';
        ++i;
      }
    }
    if (newline) {
      *error = "the literal '\"\\n\"' is not allowed in a regex";
      return std::nullopt;
    }
    Matcher m;
    const bool plain = literal || pattern.find_first_of("\\.+*?()|[]{}^$") == std::string::npos;
    if (plain && !ignore_case) {
      m.literal_ = true;
      m.finders_.emplace_back(pattern);
      return m;
    }
    RE2::Options options;
    options.set_log_errors(false);
    options.set_case_sensitive(!ignore_case);
    options.set_never_nl(true);  // a match never spans lines, as in rg
    options.set_max_mem(64 << 20);
    const std::string source = literal ? RE2::QuoteMeta(pattern) : pattern;
    {
      // Checked alone first, so the message quotes the model's pattern and not our prefix.
      const RE2 check(source, options);
      if (!check.ok()) {
        *error = "regex parse error: " + check.error();
        return std::nullopt;
      }
    }
    m.re_ = std::make_shared<RE2>("(?m)" + source, options);
    if (!m.re_->ok()) {
      *error = "regex parse error: " + m.re_->error();
      return std::nullopt;
    }
    if (prefilter) {
      if (auto prefixes = prefixes_of(source, ignore_case)) {
        for (auto& lit : *prefixes) m.finders_.emplace_back(std::move(lit), ignore_case);
      }
    }
    return m;
  }

  // The prefilter's literals (none for a plain literal, searched without a regex).
  std::vector<std::string> prefixes() const {
    std::vector<std::string> out;
    for (const auto& f : finders_) {
      if (!literal_) out.push_back(f.needle());
    }
    return out;
  }

  // Finds matches in one text, from one position on.
  class Cursor {
   public:
    Cursor(const Matcher& m, std::string_view text)
        : m_(m), text_(text), prefiltered_(!m.literal_ && !m.finders_.empty() && m.prefilter_on_) {
      next_.fill(kUnsearched);
    }
    Cursor(const Cursor&) = delete;
    Cursor& operator=(const Cursor&) = delete;
    ~Cursor() {
      if (!prefiltered_) return;
      if (m_.too_dense(text_.size())) m_.prefilter_on_ = false;
      m_.searched_ += text_.size();
    }

    // The start of the first match in [from, text end), or nullptr. `^` and `\b` see the byte
    // before `from`; `from` never goes back between calls.
    const char* find(const char* from) {
      const char* end = text_.data() + text_.size();
      if (m_.literal_) return m_.finders_[0].find(from, end);
      const re2::StringPiece all(text_.data(), text_.size());
      if (!prefiltered_) {
        re2::StringPiece match;
        if (!m_.re_->Match(all, static_cast<std::size_t>(from - text_.data()), text_.size(),
                           RE2::UNANCHORED, &match, 1)) {
          return nullptr;
        }
        return match.data();
      }
      // Every match starts at an occurrence of a prefix: the first occurrence (of any) that an
      // anchored match starts at is where the unanchored search would have found one.
      auto off = static_cast<std::size_t>(from - text_.data());
      for (;;) {
        std::size_t at = kNone;
        for (std::size_t i = 0; i < m_.finders_.size(); ++i) {
          std::size_t& next = next_[i];
          if (next == kUnsearched || (next != kNone && next < off)) {
            const char* p = m_.finders_[i].find(text_.data() + off, end);
            next = p == nullptr ? kNone : static_cast<std::size_t>(p - text_.data());
          }
          at = std::min(at, next);
        }
        if (at == kNone) return nullptr;
        if ((++m_.checks_ & 1023) == 0 && m_.too_dense(at)) {
          // Nothing before `off` starts a match: the DFA takes over from there.
          m_.prefilter_on_ = false;
          prefiltered_ = false;
          return find(text_.data() + off);
        }
        if (m_.re_->Match(all, at, text_.size(), RE2::ANCHOR_START, nullptr, 0)) {
          return text_.data() + at;
        }
        off = at + 1;
      }
    }

   private:
    static constexpr std::size_t kUnsearched = std::numeric_limits<std::size_t>::max() - 1;
    static constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
    const Matcher& m_;
    std::string_view text_;
    bool prefiltered_;
    std::array<std::size_t, kMaxPrefixes> next_{};
  };

 private:
  bool literal_ = false;                      // finders_[0] alone, no regex
  std::vector<text::LiteralFinder> finders_;  // the literal, or the regex's prefixes
  std::shared_ptr<const RE2> re_;
  // Whether the prefilter, `more` bytes into the current text, has stopped too often.
  bool too_dense(std::size_t more) const {
    const std::size_t seen = searched_ + more;
    return seen > kPrefilterProbation && checks_ * kMinBytesPerCheck > seen;
  }

  // This thread's record of the prefilter (each thread has a Matcher of its own).
  mutable std::size_t searched_ = 0;
  mutable std::size_t checks_ = 0;
  mutable bool prefilter_on_ = true;
};

// Pi's own reading of a file for context lines: the whole file split at "\r\n", "\r" and "\n" (a
// trailing terminator leaves a last, empty line), decoded as UTF-8 with replacement. Only the lines
// in `wanted` are kept (sorted, disjoint, 1-based inclusive ranges).
struct PiLines {
  bool ok = false;
  std::uint64_t count = 0;
  std::vector<std::pair<std::uint64_t, std::string>> kept;  // ascending line numbers

  const std::string* line(std::uint64_t n) const {
    auto it = std::lower_bound(kept.begin(), kept.end(), n,
                               [](const auto& e, std::uint64_t v) { return e.first < v; });
    return it != kept.end() && it->first == n ? &it->second : nullptr;
  }
};

PiLines read_pi_lines(int fd, const std::vector<std::pair<std::uint64_t, std::uint64_t>>& wanted) {
  PiLines out;
  std::uint64_t line = 1;
  std::size_t range = 0;
  std::string current;
  auto in_range = [&] {
    while (range < wanted.size() && wanted[range].second < line) ++range;
    return range < wanted.size() && wanted[range].first <= line;
  };
  bool keep = in_range();
  auto end_line = [&] {
    if (keep) out.kept.emplace_back(line, text::decode_utf8_lossy(current));
    current.clear();
    ++line;
    keep = in_range();
  };
  bool after_cr = false;
  const int err = io::pread_chunks(fd, 0, 1 << 20, [&](std::string_view chunk) {
    for (const char c : chunk) {
      if (after_cr) {
        after_cr = false;
        if (c == '\n') continue;
      }
      if (c == '\r') {
        end_line();
        after_cr = true;
      } else if (c == '\n') {
        end_line();
      } else if (keep && current.size() < kKeptLineBytes) {
        current.push_back(c);
      }
    }
    return true;
  });
  if (err != 0) return PiLines{};
  end_line();
  out.count = line - 1;
  out.ok = true;
  return out;
}

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  return a > std::numeric_limits<std::uint64_t>::max() - b
             ? std::numeric_limits<std::uint64_t>::max()
             : a + b;
}

// What searching one file gave: its output lines, matches and flags.
struct FileResult {
  search::OutputPart out;
  std::uint64_t count = 0;  // matches reported, at most the cap the file was searched with
  bool lines_truncated = false;
  bool aborted = false;
};

// Searches files one at a time, reusing its buffer; one per thread.
class FileSearch {
 public:
  FileSearch(const Matcher& matcher, std::uint64_t context, const CallContext& ctx)
      : matcher_(matcher), context_(context), ctx_(ctx) {}

  // Searches the regular file open as `fd` (from its current offset), shown as `display`
  // (converted only if it matches), for at most `cap` matches. `explicit_file`: the model named
  // this file, so NUL bytes do not make it binary (rg searches named files whole).
  FileResult file(int fd, std::string_view display, bool explicit_file, std::uint64_t cap) {
    result_ = FileResult{};
    cap_ = cap;
    limit_reached_ = false;
    display_raw_ = display;
    display_.clear();
    deferred_.clear();
    defer_ = context_ > 0;
    stop_file_ = false;
    search(fd, explicit_file);
    if (!deferred_.empty()) emit_deferred(fd);
    return std::move(result_);
  }

 private:
  bool aborting() {
    if (stop_requested(ctx_)) result_.aborted = true;
    return result_.aborted;
  }

  struct Deferred {
    std::uint64_t line;
    std::optional<std::string> text;  // set: the formatted rg line; unset: a block from the file
  };

  const std::string& display() {
    if (display_.empty()) display_ = text::decode_utf8_lossy(display_raw_);
    return display_;
  }

  // Grows the buffer to `n` bytes, keeping its first `keep`.
  char* ensure(std::size_t n, std::size_t keep) {
    if (n > capacity_) {
      const std::size_t grown = std::max(n, capacity_ * 2);
      std::unique_ptr<char[]> bigger(new char[grown]);  // uninitialized: read() fills it
      if (keep > 0) std::memcpy(bigger.get(), buffer_.get(), keep);
      buffer_ = std::move(bigger);
      capacity_ = grown;
    }
    return buffer_.get();
  }

  // Reads on until the buffer holds `want` bytes or the file ends (a short read of a regular file
  // is its end). False on a read error. The search's hot path keeps this loop of its own rather
  // than io::read_chunks: it reads into the search window itself (grown and slid in place, so no
  // byte is copied out of a chunk buffer), and it ends at the first short read instead of paying
  // one more read(2) to see end of file.
  bool read_more(int fd, std::size_t want, std::size_t& len, bool& eof) {
    char* buf = ensure(want, len);
    while (len < want) {
      const std::int64_t n = io::read_some(fd, buf + len, want - len);
      if (n < 0) return false;
      len += static_cast<std::size_t>(n);
      if (n == 0 || len < want) {
        eof = true;
        break;
      }
    }
    return true;
  }

  void search(int fd, bool explicit_file) {
    std::size_t len = 0;
    bool eof = false;
    if (!read_more(fd, kFirstRead, len, eof)) return;
    if (!explicit_file && std::memchr(buffer_.get(), 0, std::min(len, kBinaryProbe)) != nullptr) {
      return;
    }
    std::size_t nul_checked =
        explicit_file ? std::numeric_limits<std::size_t>::max() : std::min(len, kBinaryProbe);
    // rg drops a UTF-8 byte order mark before searching.
    std::size_t begin = len >= 3 && std::memcmp(buffer_.get(), "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    std::uint64_t lines_before = 0;  // lines wholly before buffer_[0]
    for (;;) {
      if (!eof && len < kWindow) {  // a larger file: fill up to a window (or the whole file)
        std::size_t want = kWindow;
        struct stat st {};
        if (::fstat(fd, &st) == 0 && static_cast<std::size_t>(st.st_size) < kWindow) {
          want = std::max(len + kFirstRead, static_cast<std::size_t>(st.st_size) + 1);
        }
        if (!read_more(fd, want, len, eof)) return;
      }
      std::size_t stop = len;
      if (!eof) {
        const void* last = ::memrchr(buffer_.get(), '\n', len);
        if (last == nullptr) {  // one line fills the buffer: grow, within reason
          if (len >= kMaxLine) return;
          if (!read_more(fd, std::min(len * 2, kMaxLine), len, eof)) return;
          continue;
        }
        stop = static_cast<std::size_t>(static_cast<const char*>(last) - buffer_.get()) + 1;
      }
      scan(buffer_.get(), begin, stop, lines_before, nul_checked);
      if (eof || stop_file_ || limit_reached_ || aborting()) return;
      // Slide the partial last line to the front and read on.
      char* buf = buffer_.get();
      lines_before += static_cast<std::uint64_t>(std::count(buf, buf + stop, '\n'));
      std::memmove(buf, buf + stop, len - stop);
      len -= stop;
      if (nul_checked != std::numeric_limits<std::size_t>::max()) {
        nul_checked = nul_checked > stop ? nul_checked - stop : 0;
      }
      begin = 0;
    }
  }

  // Reports the matching lines of buf[begin, stop) (whole lines; buf[0, begin) is a byte order
  // mark or nothing). Line numbers continue from lines_before.
  void scan(const char* buf, std::size_t begin, std::size_t stop, std::uint64_t lines_before,
            std::size_t& nul_checked) {
    const std::string_view text(buf + begin, stop - begin);
    const char* end = buf + stop;
    const char* pos = text.data();
    const char* counted = pos;
    std::uint64_t line_no = lines_before + 1;  // the line holding `counted`
    Matcher::Cursor cursor(matcher_, text);
    while (pos < end) {
      const char* m = cursor.find(pos);
      if (m == nullptr) return;
      if (m == end && end[-1] == '\n') return;  // past the last terminator there is no line
      const void* nl_before = ::memrchr(pos, '\n', static_cast<std::size_t>(m - pos));
      const char* ls = nl_before != nullptr ? static_cast<const char*>(nl_before) + 1 : pos;
      const void* nl_after = std::memchr(m, '\n', static_cast<std::size_t>(end - m));
      const char* le = nl_after != nullptr ? static_cast<const char*>(nl_after) : end;
      const auto le_off = static_cast<std::size_t>(le - buf);
      if (nul_checked < le_off) {  // a NUL ends a walked file's text: rg stops at binary data
        if (std::memchr(buf + nul_checked, 0, le_off - nul_checked) != nullptr) {
          stop_file_ = true;
          return;
        }
        nul_checked = le_off;
      }
      line_no += static_cast<std::uint64_t>(std::count(counted, ls, '\n'));
      counted = ls;
      report(line_no, std::string_view(ls, static_cast<std::size_t>(le - ls)));
      if (limit_reached_) return;
      pos = le + 1;
    }
  }

  void report(std::uint64_t line_no, std::string_view line) {
    if (++result_.count >= cap_) limit_reached_ = true;
    if (!defer_ && text::valid_utf8(line)) {
      rg_line(line_buf_, line_no, line);
      result_.out.add(line_buf_);
      return;
    }
    // From here on this file's lines wait for the blocks, to keep their order.
    if (!defer_) defer_ = true;
    if (context_ == 0 && text::valid_utf8(line)) {
      rg_line(line_buf_, line_no, line);
      deferred_.push_back({line_no, line_buf_});
    } else {
      deferred_.push_back({line_no, std::nullopt});
    }
  }

  // `p:n: text` from rg's line: carriage returns removed, cut at 500 UTF-16 units. Written into
  // `out` (cleared first), so the hot path reuses one buffer.
  void rg_line(std::string& out, std::uint64_t line_no, std::string_view line) {
    out.clear();
    out.append(display()).push_back(':');
    char digits[24];
    const auto [end, ec] = std::to_chars(std::begin(digits), std::end(digits), line_no);
    out.append(digits, end).append(": ");
    const std::size_t text_at = out.size();
    if (line.size() <= kKeptLineBytes && std::memchr(line.data(), '\r', line.size()) == nullptr) {
      out.append(line);
    } else {
      std::string text;
      text.reserve(std::min(line.size(), kKeptLineBytes));
      for (const char c : line) {
        if (c == '\r') continue;
        if (text.size() >= kKeptLineBytes) {
          // Long lines are cut here; back off to a character boundary first.
          while (!text.empty() && (static_cast<unsigned char>(text.back()) & 0xC0) == 0x80) {
            text.pop_back();
          }
          if (!text.empty() && static_cast<unsigned char>(text.back()) >= 0xC0) text.pop_back();
          break;
        }
        text.push_back(c);
      }
      out.append(text);
    }
    if (out.size() - text_at > kGrepMaxLineLength) {  // bytes bound UTF-16 units from above
      std::string text = out.substr(text_at);
      if (truncate_line(text)) result_.lines_truncated = true;
      out.resize(text_at);
      out.append(text);
    }
  }

  void emit_deferred(int fd) {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> wanted;
    for (const auto& d : deferred_) {
      if (d.text) continue;
      const std::uint64_t first = d.line > context_ ? d.line - context_ : 1;
      const std::uint64_t last = saturating_add(d.line, context_);
      if (!wanted.empty() && first <= saturating_add(wanted.back().second, 1)) {
        wanted.back().second = std::max(wanted.back().second, last);
      } else {
        wanted.emplace_back(first, last);
      }
    }
    const PiLines lines = wanted.empty() ? PiLines{} : read_pi_lines(fd, wanted);
    const std::string& p = display();
    for (const auto& d : deferred_) {
      if (d.text) {
        result_.out.add(*d.text);
        continue;
      }
      if (!lines.ok) {
        result_.out.add(p + ":" + std::to_string(d.line) + ": (unable to read file)");
        continue;
      }
      const std::uint64_t first = d.line > context_ ? d.line - context_ : 1;
      const std::uint64_t last =
          context_ == 0 ? d.line : std::min(lines.count, saturating_add(d.line, context_));
      for (std::uint64_t n = first; n <= last; ++n) {
        const std::string* kept = lines.line(n);
        std::string text = kept != nullptr ? *kept : std::string();
        if (truncate_line(text)) result_.lines_truncated = true;
        result_.out.add(p + (n == d.line ? ":" : "-") + std::to_string(n) +
                        (n == d.line ? ": " : "- ") + text);
      }
    }
  }

  const Matcher& matcher_;
  const std::uint64_t context_;
  const CallContext& ctx_;
  FileResult result_;
  std::uint64_t cap_ = 0;
  bool limit_reached_ = false;
  std::unique_ptr<char[]> buffer_;
  std::size_t capacity_ = 0;
  std::string_view display_raw_;
  std::string display_;
  std::string line_buf_;  // the line being formatted
  std::vector<Deferred> deferred_;
  bool defer_ = false;
  bool stop_file_ = false;
};

// One file of a search: opened by the walk, searched by a worker, taken back in walk order.
struct Job {
  Fd fd;
  std::string display;
  bool explicit_file = false;
  std::size_t visit = 0;  // the walk's visit that met the file (1-based)
  FileResult result;
};

// The whole search's results, taken file by file in walk order.
struct Merge {
  search::Output out;
  std::uint64_t count = 0;
  bool limit_reached = false;
  bool lines_truncated = false;
  bool aborted = false;
  std::size_t stop_visit = 0;  // the visit whose file reached the limit
};

std::uint64_t saturating_count(double d) {
  if (!(d < 1.8e19)) return std::numeric_limits<std::uint64_t>::max();
  return static_cast<std::uint64_t>(std::ceil(d));
}

}  // namespace

namespace grep_match {

std::optional<std::vector<std::string>> prefixes(const std::string& pattern, bool literal,
                                                 bool ignore_case) {
  std::string error;
  const auto m = Matcher::compile(pattern, literal, ignore_case, &error);
  if (!m || m->prefixes().empty()) return std::nullopt;
  return m->prefixes();
}

std::optional<std::vector<std::size_t>> line_matches(const std::string& pattern, bool literal,
                                                     bool ignore_case, bool prefilter,
                                                     std::string_view text) {
  std::string error;
  const auto m = Matcher::compile(pattern, literal, ignore_case, &error, prefilter);
  if (!m) return std::nullopt;
  std::vector<std::size_t> out;
  Matcher::Cursor cursor(*m, text);
  const char* end = text.data() + text.size();
  const char* pos = text.data();
  while (pos < end) {  // as FileSearch::scan steps
    const char* found = cursor.find(pos);
    if (found == nullptr || (found == end && end[-1] == '\n')) break;
    out.push_back(static_cast<std::size_t>(found - text.data()));
    const void* nl = std::memchr(found, '\n', static_cast<std::size_t>(end - found));
    if (nl == nullptr) break;
    pos = static_cast<const char*>(nl) + 1;
  }
  return out;
}

}  // namespace grep_match

ToolResult run_grep(const json::Value& args, const CallContext& ctx) {
  if (ctx.cancelled()) return ToolResult::error(std::string(kAborted));
  if (!ctx.workspace) return ToolResult::error("grep needs a workspace");
  const std::string* pattern = string_arg(args, "pattern");
  if (pattern == nullptr) return ToolResult::error("grep needs a string pattern");
  ToolResult failure;
  auto target = search::open_target(args, ctx, &failure);
  if (!target) return failure;

  // Pi: context only when positive (whole lines here: a fractional one cannot name a line),
  // limit at least 1; the notice quotes the limit as given.
  const double context_arg = number_arg(args, "context").value_or(0);
  const std::uint64_t context =
      context_arg > 0 ? saturating_count(std::floor(context_arg)) : std::uint64_t{0};
  const double limit = std::max(1.0, number_arg(args, "limit").value_or(kDefaultGrepLimit));

  std::string error;
  const auto matcher =
      Matcher::compile(*pattern, bool_arg(args, "literal"), bool_arg(args, "ignoreCase"), &error);
  if (!matcher) return ToolResult::error(error);
  walk::IgnoreFile globs;
  if (const std::string* glob = string_arg(args, "glob"); glob != nullptr && !glob->empty()) {
    if (!globs.add_line(*glob, &error)) return ToolResult::error(error);
  }

  const std::uint64_t cap = saturating_count(limit);
  const std::size_t threads = target->directory ? fs::search_threads(ctx.search_threads) : 1;
  // One searcher per worker, and one for the calling thread (a named file, or a file searched
  // again under the cap that is left when it crosses it).
  std::vector<FileSearch> searchers;
  searchers.reserve(threads + 1);
  // A regex per thread: threads sharing one RE2 contend for its DFA cache's lock. The calling
  // thread's (the last) serves both of its searchers.
  std::vector<Matcher> matchers(threads, *matcher);
  for (std::size_t i = 1; i < threads; ++i) {
    matchers[i] = *Matcher::compile(*pattern, bool_arg(args, "literal"),
                                    bool_arg(args, "ignoreCase"), &error);
  }
  for (std::size_t i = 0; i <= threads; ++i) {
    searchers.emplace_back(matchers[std::min(i, threads - 1)], context, ctx);
  }
  Merge merged;
  // Results are taken in walk order, exactly as a search on one thread would take them. A worker
  // searches a file for up to the whole cap; the one file whose matches cross what is left of it
  // is searched again here for the first of them, so the limit keeps the same first N.
  const auto take = [&](Job& r) {
    if (r.result.aborted) {
      merged.aborted = true;
      return false;
    }
    if (r.result.count > cap - merged.count) {
      if (::lseek(r.fd.get(), 0, SEEK_SET) != 0) return false;
      r.result = searchers.back().file(r.fd.get(), r.display, r.explicit_file, cap - merged.count);
      if (r.result.aborted) {
        merged.aborted = true;
        return false;
      }
    }
    merged.out.append(r.result.out);
    merged.count += r.result.count;
    merged.lines_truncated = merged.lines_truncated || r.result.lines_truncated;
    if (merged.count < cap) return true;
    merged.limit_reached = true;
    merged.stop_visit = r.visit;
    return false;
  };
  fs::OrderedPool<Job, Job> pool(
      threads,
      [&](Job& job, std::size_t worker) {
        // On the calling thread alone the cap left is known; a worker's is not.
        const std::uint64_t room = threads == 1 ? cap - merged.count : cap;
        job.result = searchers[worker].file(job.fd.get(), job.display, job.explicit_file, room);
        // Closed here, off the walking thread, unless its matches may have to be searched again.
        if (job.result.count == 0) job.fd = Fd();
        return std::move(job);
      },
      take);
  walk::Outcome outcome;
  if (target->directory) {
    walk::Options options;
    options.require_git = true;  // Pi passes rg no --no-require-git
    options.overrides = &globs;
    options.custom_ignore = ".rgignore";
    std::size_t visits = 0;
    outcome = walk::walk(
        *ctx.workspace, target->relative, target->fd->get(), options, [&](const walk::Entry& e) {
          ++visits;
          if (e.type != walk::Type::File) return walk::Action::Continue;
          if (stop_requested(ctx)) {
            merged.aborted = true;
            return walk::Action::Stop;
          }
          Fd fd(::openat(e.parent_fd, e.name.data(),
                         O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
          if (fd.get() < 0) return walk::Action::Continue;
          Job job{std::move(fd), std::string(e.path), false, visits, {}};
          return pool.submit(std::move(job)) ? walk::Action::Continue : walk::Action::Stop;
        });
    pool.finish();
    if (merged.stop_visit != 0) outcome.stop_at(merged.stop_visit);
  } else if (target->regular) {
    // A named file is searched whatever the globs and .gitignore say, and shown by its name.
    const auto slash = target->relative.rfind('/');
    const std::string name =
        slash == std::string::npos ? target->relative : target->relative.substr(slash + 1);
    pool.submit(Job{std::move(*target->fd), name, true, 1, {}});
    pool.finish();
  }
  if (merged.aborted || ctx.cancelled()) return ToolResult::error(std::string(kAborted));

  if (merged.count == 0) return search::nothing_found("No matches found", outcome);
  const Truncation truncation = merged.out.finish();
  search::Notices notices;
  if (merged.limit_reached) notices.limit_reached(limit, "matches", "matchLimitReached");
  notices.truncated(truncation);
  if (merged.lines_truncated) {
    notices.lines.push_back("Some lines truncated to " + std::to_string(kGrepMaxLineLength) +
                            " chars. Use read tool to see full lines");
    notices.details.set("linesTruncated", true);
  }
  notices.walk_bounds(outcome);
  return notices.result(truncation.content);
}

}  // namespace mf::tools
