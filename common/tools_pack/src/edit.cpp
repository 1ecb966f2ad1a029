// Pi's edit tool: exact (then fuzzy) text replacement with all-or-nothing semantics, a numbered
// display diff and a unified patch computed by a port of jsdiff's line diff. The pipeline mirrors
// Pi's edit-diff.ts step for step, because the model has learned its messages and its results.
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utf8proc.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "edit_core.hpp"
#include "mf/diag/codes.hpp"
#include "mf/io/file.hpp"
#include "mf/json/reader.hpp"
#include "mf/text/utf8.hpp"
#include "mf/tools/pack.hpp"

namespace mf::tools {
using io::Fd;

namespace {

diag::Diagnostic refuse(std::string message) {
  return diag::error(diag::codes::kBadSearch, std::move(message));
}

constexpr std::string_view kBom = "\xEF\xBB\xBF";

// --- Line endings ---

// CRLF when the first "\n" of the text ends a "\r\n".
bool detect_crlf(std::string_view text) {
  const std::size_t lf = text.find('\n');
  return lf != std::string_view::npos && lf > 0 && text[lf - 1] == '\r';
}

std::string normalize_to_lf(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t start = 0;
  for (std::size_t cr = text.find('\r'); cr != std::string_view::npos;
       cr = text.find('\r', start)) {
    out.append(text.substr(start, cr - start));
    out.push_back('\n');  // a lone CR ends a line too
    start = cr + 1;
    if (start < text.size() && text[start] == '\n') ++start;
  }
  out.append(text.substr(start));
  return out;
}

std::string restore_line_endings(std::string&& text, bool crlf) {
  if (!crlf) return std::move(text);
  std::string out;
  out.reserve(text.size() + text.size() / 16);
  for (char c : text) {
    if (c == '\n') out.push_back('\r');
    out.push_back(c);
  }
  return out;
}

// --- Fuzzy normalization ---

// String.prototype.trimEnd's set: WhiteSpace (Zs and U+FEFF included) and LineTerminator.
bool is_js_whitespace(std::int32_t cp) {
  switch (cp) {
    case 0x09:
    case 0x0A:
    case 0x0B:
    case 0x0C:
    case 0x0D:
    case 0x20:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
    case 0xFEFF:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

bool is_ascii(std::string_view s) {
  for (char c : s) {
    if ((static_cast<unsigned char>(c) & 0x80) != 0) return false;
  }
  return true;
}

// Start of the UTF-8 character that ends at `end` (exclusive).
std::size_t previous_char(std::string_view s, std::size_t end) {
  std::size_t at = end - 1;
  while (at > 0 && (static_cast<unsigned char>(s[at]) & 0xC0) == 0x80) --at;
  return at;
}

void trim_end(std::string& s) {
  while (!s.empty()) {
    const std::size_t at = previous_char(s, s.size());
    utf8proc_int32_t cp = -1;
    utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(s.data() + at),
                     static_cast<utf8proc_ssize_t>(s.size() - at), &cp);
    if (!is_js_whitespace(cp)) return;
    s.resize(at);
  }
}

std::string nfkc(std::string_view s) {
  utf8proc_uint8_t* out = nullptr;
  // An explicit length (no NULLTERM) lets NUL characters through like any other.
  const auto n = utf8proc_map(
      reinterpret_cast<const utf8proc_uint8_t*>(s.data()), static_cast<utf8proc_ssize_t>(s.size()),
      &out, static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT));
  if (n < 0) return std::string(s);
  std::string result(reinterpret_cast<const char*>(out), static_cast<std::size_t>(n));
  std::free(out);
  return result;
}

// Typographic quotes, dashes and spaces to their ASCII look-alikes.
std::int32_t fold(std::int32_t cp) {
  if (cp >= 0x2018 && cp <= 0x201B) return '\'';
  if (cp >= 0x201C && cp <= 0x201F) return '"';
  if ((cp >= 0x2010 && cp <= 0x2015) || cp == 0x2212) return '-';
  if (cp == 0xA0 || (cp >= 0x2002 && cp <= 0x200A) || cp == 0x202F || cp == 0x205F ||
      cp == 0x3000) {
    return ' ';
  }
  return cp;
}

void append_folded(std::string& out, std::string_view line) {
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(line.data());
  auto left = static_cast<utf8proc_ssize_t>(line.size());
  while (left > 0) {
    utf8proc_int32_t cp = 0;
    const auto n = utf8proc_iterate(p, left, &cp);
    if (n <= 0) {  // not reachable for decoded text; keep the byte
      out.push_back(static_cast<char>(*p));
      ++p;
      --left;
      continue;
    }
    const std::int32_t folded = fold(cp);
    if (folded == cp) {
      out.append(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n));
    } else {
      out.push_back(static_cast<char>(folded));
    }
    p += n;
    left -= n;
  }
}

// `split(needle).length - 1`, counted as JavaScript counts it (an empty needle splits between
// UTF-16 units).
long long count_occurrences(std::string_view haystack, std::string_view needle) {
  if (needle.empty()) return static_cast<long long>(utf16_length(haystack)) - 1;
  long long count = 0;
  for (std::size_t at = haystack.find(needle); at != std::string_view::npos;
       at = haystack.find(needle, at + needle.size())) {
    ++count;
  }
  return count;
}

// --- jsdiff's diffLines ---

enum class Op : std::uint8_t { Common, Added, Removed };

// Lines with their "\n"; a last line without one is a token of its own.
std::vector<std::string_view> tokenize_lines(std::string_view text) {
  std::vector<std::string_view> tokens;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t nl = text.find('\n', start);
    const std::size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    tokens.push_back(text.substr(start, end - start));
    start = end;
  }
  return tokens;
}

struct Run {
  Op op;
  std::size_t count;
};

// A line with its hash, so that unequal lines almost always differ at the first comparison.
struct Token {
  std::string_view text;
  std::size_t hash;
  bool operator==(const Token& o) const { return hash == o.hash && text == o.text; }
};

std::vector<Token> hashed(const std::vector<std::string_view>& lines) {
  std::vector<Token> out;
  out.reserve(lines.size());
  for (auto line : lines) out.push_back({line, std::hash<std::string_view>{}(line)});
  return out;
}

// jsdiff's Myers search (base.js), kept in its exact shape -- the furthest-reaching path per
// diagonal, its choice between an insertion and a deletion, its pruning at the graph's edges --
// because another equally short edit script would give a different diff text than Pi's. Costs
// O((N+M)·D); past a budget (a rewrite of most of a large file) it gives up and the caller falls
// back to one replaced block between the common head and tail.
std::optional<std::vector<Run>> jsdiff_myers(const std::vector<Token>& old_ids,
                                             const std::vector<Token>& new_ids) {
  constexpr std::size_t kMaxNodes = 2'000'000;
  constexpr std::uint64_t kMaxSteps = 400'000'000;
  struct Node {  // 12 bytes: the pool is the search's memory
    std::uint32_t count;
    Op op;
    std::int32_t previous;
  };
  struct Path {
    long old_pos = -1;
    int last = -1;
    bool valid = false;
  };
  const long old_len = static_cast<long>(old_ids.size());
  const long new_len = static_cast<long>(new_ids.size());
  std::vector<Node> nodes;
  // Reserved once (address space only, touched as used) so growth never copies the pool.
  nodes.reserve(kMaxNodes + 4);
  std::uint64_t steps = 0;

  auto extract_common = [&](Path& path, long k) {
    long old_pos = path.old_pos;
    long new_pos = old_pos - k;
    std::size_t common = 0;
    while (new_pos + 1 < new_len && old_pos + 1 < old_len &&
           old_ids[static_cast<std::size_t>(old_pos + 1)] ==
               new_ids[static_cast<std::size_t>(new_pos + 1)]) {
      ++new_pos;
      ++old_pos;
      ++common;
    }
    steps += common + 1;
    if (common > 0) {
      nodes.push_back({static_cast<std::uint32_t>(common), Op::Common, path.last});
      path.last = static_cast<int>(nodes.size() - 1);
    }
    path.old_pos = old_pos;
    return new_pos;
  };
  auto add_to_path = [&](const Path& path, Op op, long old_pos_inc) {
    Path next{path.old_pos + old_pos_inc, -1, true};
    if (path.last >= 0 && nodes[static_cast<std::size_t>(path.last)].op == op) {
      const Node& last = nodes[static_cast<std::size_t>(path.last)];
      nodes.push_back({last.count + 1, op, last.previous});
    } else {
      nodes.push_back({1, op, path.last});
    }
    next.last = static_cast<int>(nodes.size() - 1);
    return next;
  };
  auto build = [&](int last) {
    std::vector<Run> runs;
    for (int at = last; at >= 0; at = nodes[static_cast<std::size_t>(at)].previous) {
      runs.push_back(
          {nodes[static_cast<std::size_t>(at)].op, nodes[static_cast<std::size_t>(at)].count});
    }
    std::reverse(runs.begin(), runs.end());
    return runs;
  };

  Path seed{-1, -1, true};
  long new_pos = extract_common(seed, 0);
  if (seed.old_pos + 1 >= old_len && new_pos + 1 >= new_len) return build(seed.last);

  // best[offset + k] is the furthest-reaching path on diagonal k = old_pos - new_pos.
  const long offset = new_len + 1;
  std::vector<Path> best(static_cast<std::size_t>(old_len + new_len + 3));
  auto slot = [&](long k) -> Path* {
    const long at = offset + k;
    if (at < 0 || at >= static_cast<long>(best.size())) return nullptr;
    return &best[static_cast<std::size_t>(at)];
  };
  *slot(0) = seed;
  long min_diagonal = LONG_MIN / 4;
  long max_diagonal = LONG_MAX / 4;
  if (seed.old_pos + 1 >= old_len) max_diagonal = -1;
  if (new_pos + 1 >= new_len) min_diagonal = 1;

  for (long edit_length = 1; edit_length <= old_len + new_len; ++edit_length) {
    for (long k = std::max(min_diagonal, -edit_length); k <= std::min(max_diagonal, edit_length);
         k += 2) {
      Path remove_path;
      Path add_path;
      if (Path* s = slot(k - 1); s != nullptr && s->valid) {
        remove_path = *s;
        s->valid = false;  // nobody else reads it again
      }
      if (Path* s = slot(k + 1); s != nullptr) add_path = *s;
      bool can_add = false;
      if (add_path.valid) {
        const long add_new_pos = add_path.old_pos - k;
        can_add = add_new_pos >= 0 && add_new_pos < new_len;
      }
      const bool can_remove = remove_path.valid && remove_path.old_pos + 1 < old_len;
      Path* here = slot(k);
      if (!can_add && !can_remove) {
        if (here != nullptr) here->valid = false;
        continue;
      }
      Path base;
      if (!can_remove || (can_add && remove_path.old_pos < add_path.old_pos)) {
        base = add_to_path(add_path, Op::Added, 0);
      } else {
        base = add_to_path(remove_path, Op::Removed, 1);
      }
      new_pos = extract_common(base, k);
      if (base.old_pos + 1 >= old_len && new_pos + 1 >= new_len) return build(base.last);
      if (here != nullptr) *here = base;
      if (base.old_pos + 1 >= old_len) max_diagonal = std::min(max_diagonal, k - 1);
      if (new_pos + 1 >= new_len) min_diagonal = std::max(min_diagonal, k + 1);
      if (nodes.size() > kMaxNodes || steps > kMaxSteps) return std::nullopt;
    }
  }
  return std::nullopt;
}

// The common head, everything between removed then added, the common tail.
std::vector<Run> head_tail_diff(const std::vector<Token>& old_ids,
                                const std::vector<Token>& new_ids) {
  std::size_t head = 0;
  while (head < old_ids.size() && head < new_ids.size() && old_ids[head] == new_ids[head]) ++head;
  std::size_t tail = 0;
  while (tail < old_ids.size() - head && tail < new_ids.size() - head &&
         old_ids[old_ids.size() - 1 - tail] == new_ids[new_ids.size() - 1 - tail]) {
    ++tail;
  }
  std::vector<Run> runs;
  if (head > 0) runs.push_back({Op::Common, head});
  if (old_ids.size() - head - tail > 0) runs.push_back({Op::Removed, old_ids.size() - head - tail});
  if (new_ids.size() - head - tail > 0) runs.push_back({Op::Added, new_ids.size() - head - tail});
  if (tail > 0) runs.push_back({Op::Common, tail});
  return runs;
}

struct Part {
  Op op;
  std::span<const std::string_view> lines;  // tokens, each with its "\n" where it has one
};

// jsdiff's diffLines result. The parts view the token vectors, which move with the object.
struct LineDiff {
  std::vector<std::string_view> old_tokens;
  std::vector<std::string_view> new_tokens;
  std::vector<Part> parts;
  std::size_t old_line_count = 0;  // text.split("\n").length, for the number width
  std::size_t new_line_count = 0;
};

LineDiff diff_lines(std::string_view old_text, std::string_view new_text) {
  LineDiff d;
  d.old_tokens = tokenize_lines(old_text);
  d.new_tokens = tokenize_lines(new_text);
  d.old_line_count =
      static_cast<std::size_t>(std::count(old_text.begin(), old_text.end(), '\n')) + 1;
  d.new_line_count =
      static_cast<std::size_t>(std::count(new_text.begin(), new_text.end(), '\n')) + 1;
  const auto old_ids = hashed(d.old_tokens);
  const auto new_ids = hashed(d.new_tokens);
  auto runs = jsdiff_myers(old_ids, new_ids);
  if (!runs) runs = head_tail_diff(old_ids, new_ids);

  std::size_t old_pos = 0;
  std::size_t new_pos = 0;
  const std::span<const std::string_view> old_span(d.old_tokens);
  const std::span<const std::string_view> new_span(d.new_tokens);
  for (const Run& run : *runs) {
    if (run.op == Op::Removed) {
      d.parts.push_back({run.op, old_span.subspan(old_pos, run.count)});
      old_pos += run.count;
    } else {
      d.parts.push_back({run.op, new_span.subspan(new_pos, run.count)});
      new_pos += run.count;
      if (run.op == Op::Common) old_pos += run.count;
    }
  }
  return d;
}

std::string_view without_newline(std::string_view line) {
  return !line.empty() && line.back() == '\n' ? line.substr(0, line.size() - 1) : line;
}

std::string pad_start(std::string s, std::size_t width) {
  if (s.size() < width) s.insert(0, width - s.size(), ' ');
  return s;
}

// --- Applying matched edits ---

struct Matched {
  std::size_t edit_index;
  std::size_t index;
  std::size_t length;
  std::string_view new_text;
};

// Replacements applied to `content`, whose first byte is at `offset` of the text they were
// matched in. They are sorted and disjoint, so building forwards equals Pi's reverse splicing.
std::string apply_replacements(std::string_view content, const std::vector<Matched>& reps,
                               std::size_t offset = 0) {
  std::string out;
  out.reserve(content.size());
  std::size_t at = 0;
  for (const Matched& r : reps) {
    const std::size_t start = std::min(content.size(), std::max(at, r.index - offset));
    out.append(content.substr(at, start - at));
    out.append(r.new_text);
    at = std::min(content.size(), start + r.length);
  }
  out.append(content.substr(at));
  return out;
}

struct Span {
  std::size_t start;
  std::size_t end;
};

// `content.match(/[^\n]*\n|[^\n]+/g)`: lines with their "\n", no empty last piece.
std::vector<Span> line_spans(std::string_view text) {
  std::vector<Span> spans;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t nl = text.find('\n', start);
    const std::size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    spans.push_back({start, end});
    start = end;
  }
  return spans;
}

// After a fuzzy match, only the lines an edit touches are taken from the normalized text; every
// other line keeps its original bytes (Pi 0.79.9).
Result<std::string> apply_preserving_unchanged_lines(std::string_view original,
                                                     std::string_view base,
                                                     const std::vector<Matched>& reps) {
  const auto original_lines = line_spans(original);
  const auto base_lines = line_spans(base);
  if (original_lines.size() != base_lines.size()) {
    return refuse(
        "Cannot preserve unchanged lines because the base content has a different line count.");
  }
  struct Group {
    std::size_t start_line;
    std::size_t end_line;
    std::vector<Matched> reps;
  };
  std::vector<Group> groups;
  for (const Matched& r : reps) {  // already sorted by index
    const auto containing =
        std::upper_bound(base_lines.begin(), base_lines.end(), r.index,
                         [](std::size_t index, const Span& span) { return index < span.end; });
    if (containing == base_lines.end() || r.index < containing->start) {
      return refuse("Replacement range is outside the base content.");
    }
    const auto start_line = static_cast<std::size_t>(containing - base_lines.begin());
    std::size_t end_line = start_line;
    const std::size_t end = r.index + r.length;
    while (end_line < base_lines.size() && base_lines[end_line].end < end) ++end_line;
    if (end_line >= base_lines.size()) {
      return refuse("Replacement range is outside the base content.");
    }
    if (!groups.empty() && start_line < groups.back().end_line) {
      groups.back().end_line = std::max(groups.back().end_line, end_line + 1);
      groups.back().reps.push_back(r);
      continue;
    }
    groups.push_back({start_line, end_line + 1, {r}});
  }
  std::string out;
  out.reserve(original.size());
  std::size_t next_line = 0;
  for (const Group& g : groups) {
    if (g.start_line > next_line) {
      out.append(
          original.substr(original_lines[next_line].start,
                          original_lines[g.start_line].start - original_lines[next_line].start));
    }
    const std::size_t from = base_lines[g.start_line].start;
    const std::size_t to = base_lines[g.end_line - 1].end;
    out += apply_replacements(base.substr(from, to - from), g.reps, from);
    next_line = g.end_line;
  }
  if (next_line < original_lines.size()) {
    out.append(original.substr(original_lines[next_line].start));
  }
  return out;
}

// Lazily computed fuzzy forms of the content, each at most once per call: Pi renormalizes the
// whole file for every edit, which is the same text each time.
class FuzzyCache {
 public:
  explicit FuzzyCache(std::string_view text) : text_(text) {}
  const std::string& get() {
    if (!value_) value_ = normalize_for_fuzzy_match(text_);
    return *value_;
  }

 private:
  std::string_view text_;
  std::optional<std::string> value_;
};

struct Found {
  bool found = false;
  bool fuzzy = false;
  std::size_t index = 0;
  std::size_t length = 0;
};

// Pi's fuzzyFindText: indexOf first, then both sides normalized.
Found fuzzy_find(std::string_view content, FuzzyCache& fuzzy_content, std::string_view old_text,
                 const std::string& fuzzy_old) {
  if (const auto at = content.find(old_text); at != std::string_view::npos) {
    return {true, false, at, old_text.size()};
  }
  const auto at = std::string_view(fuzzy_content.get()).find(fuzzy_old);
  if (at == std::string_view::npos) return {};
  return {true, true, at, fuzzy_old.size()};
}

struct Applied {
  std::string base;
  std::string content;
};

// Pi's applyEditsToNormalizedContent over LF-only text.
Result<Applied> apply_to_normalized(std::string normalized, const std::vector<Edit>& edits,
                                    std::string_view path) {
  const std::size_t n = edits.size();
  const std::string p(path);
  std::vector<Edit> lf;
  lf.reserve(n);
  for (const Edit& e : edits)
    lf.push_back({normalize_to_lf(e.old_text), normalize_to_lf(e.new_text)});
  for (std::size_t i = 0; i < n; ++i) {
    if (lf[i].old_text.empty()) {
      return refuse(n == 1 ? "oldText must not be empty in " + p + "."
                           : "edits[" + std::to_string(i) + "].oldText must not be empty in " + p +
                                 ".");
    }
  }
  std::vector<std::string> fuzzy_old;
  fuzzy_old.reserve(n);
  for (const Edit& e : lf) fuzzy_old.push_back(normalize_for_fuzzy_match(e.old_text));

  FuzzyCache fuzzy_content(normalized);
  bool used_fuzzy = false;
  for (std::size_t i = 0; i < n && !used_fuzzy; ++i) {
    used_fuzzy = fuzzy_find(normalized, fuzzy_content, lf[i].old_text, fuzzy_old[i]).fuzzy;
  }
  // Every edit is matched in one space: the fuzzy one as soon as any edit needed it.
  const std::string_view base = used_fuzzy ? std::string_view(fuzzy_content.get()) : normalized;
  FuzzyCache fuzzy_of_fuzzy(base);
  FuzzyCache& fuzzy_base = used_fuzzy ? fuzzy_of_fuzzy : fuzzy_content;

  std::vector<Matched> matched;
  for (std::size_t i = 0; i < n; ++i) {
    const Found f = fuzzy_find(base, fuzzy_base, lf[i].old_text, fuzzy_old[i]);
    if (!f.found) {
      return refuse((n == 1 ? "Could not find the exact text in " + p + "."
                            : "Could not find edits[" + std::to_string(i) + "] in " + p + ".") +
                    (n == 1 ? " The old text must match exactly including all whitespace and "
                              "newlines."
                            : " The oldText must match exactly including all whitespace and "
                              "newlines."));
    }
    const long long occurrences = count_occurrences(fuzzy_base.get(), fuzzy_old[i]);
    if (occurrences > 1) {
      const std::string count = std::to_string(occurrences);
      return refuse(n == 1 ? "Found " + count + " occurrences of the text in " + p +
                                 ". The text must be unique. Please provide more context to make "
                                 "it unique."
                           : "Found " + count + " occurrences of edits[" + std::to_string(i) +
                                 "] in " + p +
                                 ". Each oldText must be unique. Please provide more context to "
                                 "make it unique.");
    }
    matched.push_back({i, f.index, f.length, lf[i].new_text});
  }
  std::stable_sort(matched.begin(), matched.end(),
                   [](const Matched& a, const Matched& b) { return a.index < b.index; });
  for (std::size_t i = 1; i < matched.size(); ++i) {
    const Matched& previous = matched[i - 1];
    const Matched& current = matched[i];
    if (previous.index + previous.length > current.index) {
      return refuse("edits[" + std::to_string(previous.edit_index) + "] and edits[" +
                    std::to_string(current.edit_index) + "] overlap in " + p +
                    ". Merge them into one edit or target disjoint regions.");
    }
  }
  std::string content;
  if (used_fuzzy) {
    auto preserved = apply_preserving_unchanged_lines(normalized, base, matched);
    if (!preserved) return preserved.take_diagnostics();
    content = std::move(*preserved);
  } else {
    content = apply_replacements(base, matched);
  }
  if (content == normalized) {
    return refuse(n == 1 ? "No changes made to " + p +
                               ". The replacement produced identical content. This might indicate "
                               "an issue with special characters or the text not existing as "
                               "expected."
                         : "No changes made to " + p +
                               ". The replacements produced identical content.");
  }
  return Applied{std::move(normalized), std::move(content)};
}

std::string escape_message(std::string_view user_path) {
  return "Path escapes the workspace: " + std::string(user_path);
}

std::string could_not_edit(std::string_view path, int err) {
  const char* name = ::strerrorname_np(err);
  return "Could not edit file: " + std::string(path) +
         ". Error code: " + std::string(name != nullptr ? name : "EUNKNOWN") + ".";
}

// --- The per-file lock registry ---

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

struct FileLock::Entry {
  std::mutex mutex;
  int users = 0;
};

namespace {
std::map<std::string, std::unique_ptr<FileLock::Entry>, std::less<>>& registry() {
  static std::map<std::string, std::unique_ptr<FileLock::Entry>, std::less<>> r;
  return r;
}
}  // namespace

FileLock::FileLock(std::string key) : key_(std::move(key)) {
  {
    std::lock_guard<std::mutex> guard(registry_mutex());
    auto& slot = registry()[key_];
    if (!slot) slot = std::make_unique<Entry>();
    ++slot->users;
    entry_ = slot.get();
  }
  entry_->mutex.lock();
}

FileLock::~FileLock() {
  entry_->mutex.unlock();
  std::lock_guard<std::mutex> guard(registry_mutex());
  if (--entry_->users == 0) registry().erase(key_);
}

std::string file_lock_key(const Workspace& ws, const std::string& relative) {
  Fd probe(ws.open_at(relative, O_PATH));
  if (probe.get() >= 0) {
    char target[PATH_MAX];
    const std::string link = "/proc/self/fd/" + std::to_string(probe.get());
    const ssize_t n = ::readlink(link.c_str(), target, sizeof target);
    if (n > 0 && static_cast<std::size_t>(n) < sizeof target) {
      return std::string(target, static_cast<std::size_t>(n));
    }
  }
  return ws.absolute(relative);
}

std::string normalize_for_fuzzy_match(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t start = 0;
  // NFKC never joins characters across "\n" (a starter that composes with nothing), so the text
  // can be normalized line by line, and pure-ASCII lines, already in NFKC, skip utf8proc.
  for (;;) {
    const std::size_t nl = text.find('\n', start);
    const std::string_view line =
        text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    if (is_ascii(line)) {
      std::size_t end = line.size();
      while (end > 0 && is_js_whitespace(static_cast<unsigned char>(line[end - 1]))) --end;
      out.append(line.substr(0, end));
    } else {
      std::string normalized = nfkc(line);
      trim_end(normalized);
      append_folded(out, normalized);
    }
    if (nl == std::string_view::npos) break;
    out.push_back('\n');
    start = nl + 1;
  }
  return out;
}

namespace {

DisplayDiff display_diff(const LineDiff& d, std::size_t context) {
  const auto& parts = d.parts;
  const std::size_t width = std::to_string(std::max(d.old_line_count, d.new_line_count)).size();
  const std::string skipped = " " + std::string(width, ' ') + " ...";

  std::vector<std::string> out;
  std::size_t old_line = 1;
  std::size_t new_line = 1;
  bool last_was_change = false;
  DisplayDiff result;
  auto context_line = [&](std::string_view line) {
    out.push_back(" " + pad_start(std::to_string(old_line), width) + " " +
                  std::string(without_newline(line)));
    ++old_line;
    ++new_line;
  };
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const Part& part = parts[i];
    const auto& raw = part.lines;
    if (part.op != Op::Common) {
      if (!result.first_changed_line) result.first_changed_line = new_line;
      for (auto line : raw) {
        if (part.op == Op::Added) {
          out.push_back("+" + pad_start(std::to_string(new_line), width) + " " +
                        std::string(without_newline(line)));
          ++new_line;
        } else {
          out.push_back("-" + pad_start(std::to_string(old_line), width) + " " +
                        std::string(without_newline(line)));
          ++old_line;
        }
      }
      last_was_change = true;
      continue;
    }
    const bool leading_change = last_was_change;
    const bool trailing_change = i + 1 < parts.size() && parts[i + 1].op != Op::Common;
    if (leading_change && trailing_change) {
      if (raw.size() <= context * 2) {
        for (auto line : raw) context_line(line);
      } else {
        for (std::size_t j = 0; j < context; ++j) context_line(raw[j]);
        out.push_back(skipped);
        const std::size_t gap = raw.size() - 2 * context;
        old_line += gap;
        new_line += gap;
        for (std::size_t j = raw.size() - context; j < raw.size(); ++j) context_line(raw[j]);
      }
    } else if (leading_change) {
      const std::size_t shown = std::min(context, raw.size());
      for (std::size_t j = 0; j < shown; ++j) context_line(raw[j]);
      if (raw.size() > shown) {
        out.push_back(skipped);
        old_line += raw.size() - shown;
        new_line += raw.size() - shown;
      }
    } else if (trailing_change) {
      const std::size_t skip = raw.size() > context ? raw.size() - context : 0;
      if (skip > 0) {
        out.push_back(skipped);
        old_line += skip;
        new_line += skip;
      }
      for (std::size_t j = skip; j < raw.size(); ++j) context_line(raw[j]);
    } else {
      old_line += raw.size();
      new_line += raw.size();
    }
    last_was_change = false;
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (i > 0) result.diff.push_back('\n');
    result.diff += out[i];
  }
  return result;
}

std::string unified_patch(std::string_view path, const LineDiff& d, std::size_t context) {
  std::vector<Part> parts = d.parts;
  parts.push_back({Op::Common, {}});  // jsdiff's empty sentinel closes the last hunk
  struct Hunk {
    std::size_t old_start;
    std::size_t old_lines;
    std::size_t new_start;
    std::size_t new_lines;
    std::vector<std::string> lines;
  };
  std::vector<Hunk> hunks;
  std::size_t old_range_start = 0;
  std::size_t new_range_start = 0;
  std::vector<std::string> range;
  std::size_t old_line = 1;
  std::size_t new_line = 1;
  auto prefixed = [](char mark, std::string_view line) { return std::string(1, mark) += line; };
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const Part& current = parts[i];
    if (current.op != Op::Common) {
      if (old_range_start == 0) {
        old_range_start = old_line;
        new_range_start = new_line;
        if (i > 0) {
          range.clear();
          const auto& previous = parts[i - 1].lines;
          const std::size_t take = std::min(context, previous.size());
          for (std::size_t j = previous.size() - take; j < previous.size(); ++j) {
            range.push_back(prefixed(' ', previous[j]));
          }
          old_range_start -= take;
          new_range_start -= take;
        }
      }
      for (auto line : current.lines) {
        range.push_back(prefixed(current.op == Op::Added ? '+' : '-', line));
      }
      (current.op == Op::Added ? new_line : old_line) += current.lines.size();
      continue;
    }
    const auto& lines = current.lines;
    if (old_range_start != 0) {
      if (lines.size() <= context * 2 && i + 2 < parts.size()) {
        for (auto line : lines) range.push_back(prefixed(' ', line));
      } else {
        const std::size_t size = std::min(lines.size(), context);
        for (std::size_t j = 0; j < size; ++j) range.push_back(prefixed(' ', lines[j]));
        hunks.push_back({old_range_start, old_line - old_range_start + size, new_range_start,
                         new_line - new_range_start + size, std::move(range)});
        range.clear();
        old_range_start = 0;
        new_range_start = 0;
      }
    }
    old_line += lines.size();
    new_line += lines.size();
  }

  std::string out = "--- " + std::string(path) + "\n+++ " + std::string(path) + "\n";
  for (const Hunk& h : hunks) {
    // A range of zero lines names the line before it, as unified diffs do.
    const std::size_t old_start = h.old_lines == 0 ? h.old_start - 1 : h.old_start;
    const std::size_t new_start = h.new_lines == 0 ? h.new_start - 1 : h.new_start;
    out += "@@ -" + std::to_string(old_start) + "," + std::to_string(h.old_lines) + " +" +
           std::to_string(new_start) + "," + std::to_string(h.new_lines) + " @@\n";
    for (const std::string& line : h.lines) {
      if (!line.empty() && line.back() == '\n') {
        out.append(line, 0, line.size() - 1);
        out.push_back('\n');
      } else {
        out += line;
        out += "\n\\ No newline at end of file\n";
      }
    }
  }
  return out;
}

}  // namespace

DisplayDiff generate_diff_string(std::string_view old_text, std::string_view new_text,
                                 std::size_t context) {
  return display_diff(diff_lines(old_text, new_text), context);
}

std::string generate_unified_patch(std::string_view path, std::string_view old_text,
                                   std::string_view new_text, std::size_t context) {
  return unified_patch(path, diff_lines(old_text, new_text), context);
}

Result<EditOutcome> apply_edits(std::string_view original, const std::vector<Edit>& edits,
                                std::string_view display_path) {
  // The model never sees the BOM, so it is set aside before matching and put back after.
  const bool bom = original.substr(0, kBom.size()) == kBom;
  const std::string_view text = bom ? original.substr(kBom.size()) : original;
  const bool crlf = detect_crlf(text);
  auto applied = apply_to_normalized(normalize_to_lf(text), edits, display_path);
  if (!applied) return applied.take_diagnostics();
  EditOutcome outcome;
  {
    // One line diff serves both the display diff and the patch.
    const LineDiff diff = diff_lines(applied->base, applied->content);
    auto display = display_diff(diff, 4);
    outcome.diff = std::move(display.diff);
    outcome.first_changed_line = display.first_changed_line;
    outcome.patch = unified_patch(display_path, diff, 4);
  }
  outcome.content = restore_line_endings(std::move(applied->content), crlf);
  if (bom) outcome.content.insert(0, kBom);
  return outcome;
}

json::Value prepare_edit_arguments(const json::Value& args) {
  if (!args.is_object()) return args;
  json::Value out = args;
  // Some models send `edits` as a JSON string; it counts only when it holds an array.
  if (json::Value* edits = out.find("edits"); edits != nullptr && edits->is_string()) {
    auto parsed = json::parse(edits->as_string());
    if (parsed && parsed->is_array()) *edits = std::move(*parsed);
  }
  const json::Value* old_text = out.find("oldText");
  const json::Value* new_text = out.find("newText");
  if (old_text == nullptr || new_text == nullptr || !old_text->is_string() ||
      !new_text->is_string()) {
    return out;
  }
  // The single-edit form of older releases becomes the last entry of `edits`; `edits` keeps its
  // place among the members, or comes last when it was absent.
  json::Array edits;
  if (const json::Value* existing = out.find("edits");
      existing != nullptr && existing->is_array()) {
    edits = existing->as_array();
  }
  edits.push_back(json::Object{{"oldText", *old_text}, {"newText", *new_text}});
  json::Object rebuilt;
  bool placed = false;
  for (const json::Member& m : out.as_object()) {
    if (m.key == "oldText" || m.key == "newText") continue;
    if (m.key == "edits") {
      if (!placed) rebuilt.push_back({"edits", edits});
      placed = true;
      continue;
    }
    rebuilt.push_back(m);
  }
  if (!placed) rebuilt.push_back({"edits", std::move(edits)});
  return rebuilt;
}

ToolResult run_edit(const json::Value& args, const CallContext& ctx) {
  constexpr std::string_view kInvalid =
      "Edit tool input is invalid. edits must contain at least one replacement.";
  if (ctx.cancelled()) return ToolResult::error("Operation aborted");
  const json::Value* path_value = args.find("path");
  if (path_value == nullptr || !path_value->is_string() || !ctx.workspace) {
    return ToolResult::error("edit needs a string path");
  }
  const std::string& path = path_value->as_string();
  const json::Value* edits_value = args.find("edits");
  if (edits_value == nullptr || !edits_value->is_array() || edits_value->as_array().empty()) {
    return ToolResult::error(std::string(kInvalid));
  }
  std::vector<Edit> edits;
  for (const json::Value& e : edits_value->as_array()) {
    const json::Value* o = e.find("oldText");
    const json::Value* n = e.find("newText");
    if (o == nullptr || n == nullptr || !o->is_string() || !n->is_string()) {
      return ToolResult::error(std::string(kInvalid));
    }
    edits.push_back({o->as_string(), n->as_string()});
  }

  auto resolved = ctx.workspace->resolve(path);
  if (!resolved) return ToolResult::error(resolved.diagnostics().front().message);
  const Workspace& ws = *ctx.workspace;
  const std::string& relative = *resolved;
  FileLock lock(file_lock_key(ws, relative));
  if (ctx.cancelled()) return ToolResult::error("Operation aborted");

  // Type first, through O_PATH, so a FIFO or device is never opened for reading.
  Fd probe(ws.open_at(relative, O_PATH));
  if (probe.get() == -EXDEV) return ToolResult::error(escape_message(path));
  if (probe.get() < 0) return ToolResult::error(could_not_edit(path, -probe.get()));
  struct stat st {};
  if (::fstat(probe.get(), &st) != 0) return ToolResult::error(could_not_edit(path, errno));
  if (S_ISDIR(st.st_mode)) return ToolResult::error(node_error(EISDIR, "read"));
  if (!S_ISREG(st.st_mode)) return ToolResult::error("Not a regular file: " + path);
  if (static_cast<std::uint64_t>(st.st_size) > kMaxToolFileBytes) {
    return ToolResult::error(too_large_message("edit", path, std::to_string(st.st_size)));
  }
  // Read and write through one descriptor: what is written back replaces exactly what was read.
  Fd fd(ws.open_at(relative, O_RDWR | O_NONBLOCK | O_NOCTTY));
  if (fd.get() == -EXDEV) return ToolResult::error(escape_message(path));
  if (fd.get() < 0) return ToolResult::error(could_not_edit(path, -fd.get()));
  struct stat again {};
  if (::fstat(fd.get(), &again) != 0 || !S_ISREG(again.st_mode)) {
    return ToolResult::error("Not a regular file: " + path);
  }
  // One byte over the size fstat gave shows the end without growing the buffer.
  std::string bytes(static_cast<std::size_t>(again.st_size) + 1, '\0');
  std::size_t got = 0;
  for (;;) {
    if (got == bytes.size()) {
      if (bytes.size() > kMaxToolFileBytes) break;
      bytes.resize(std::min(kMaxToolFileBytes + 1, bytes.size() * 2));
    }
    const ssize_t n = ::read(fd.get(), bytes.data() + got, bytes.size() - got);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return ToolResult::error(node_error(errno, "read"));
    }
    got += static_cast<std::size_t>(n);
  }
  bytes.resize(got);
  if (bytes.size() > kMaxToolFileBytes) {
    return ToolResult::error(too_large_message("edit", path, "more than"));
  }
  if (ctx.cancelled()) return ToolResult::error("Operation aborted");

  std::string text = text::valid_utf8(bytes) ? std::move(bytes) : text::decode_utf8_lossy(bytes);
  auto outcome = apply_edits(text, edits, path);
  if (!outcome) return ToolResult::error(outcome.diagnostics().front().message);
  if (ctx.cancelled()) return ToolResult::error("Operation aborted");

  // In place, as Pi's writeFile does: the file keeps its inode, mode and links.
  if (::ftruncate(fd.get(), 0) != 0) return ToolResult::error(node_error(errno, "write"));
  std::size_t done = 0;
  const std::string& content = outcome->content;
  while (done < content.size()) {
    const ssize_t n =
        ::pwrite(fd.get(), content.data() + done, content.size() - done, static_cast<off_t>(done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ToolResult::error(node_error(errno, "write"));
    }
    done += static_cast<std::size_t>(n);
  }
  if (ctx.cancelled()) return ToolResult::error("Operation aborted");

  json::Object details{{"diff", outcome->diff}, {"patch", outcome->patch}};
  if (outcome->first_changed_line) {
    details.push_back(
        {"firstChangedLine", static_cast<std::uint64_t>(*outcome->first_changed_line)});
  }
  return {false,
          "Successfully replaced " + std::to_string(edits.size()) + " block(s) in " + path + ".",
          std::move(details)};
}

}  // namespace mf::tools
