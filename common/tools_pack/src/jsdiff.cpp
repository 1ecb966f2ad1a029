#include "jsdiff.hpp"

#include <algorithm>
#include <functional>
#include <optional>

namespace mf::tools::jsdiff {
namespace {

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

std::string_view without_newline(std::string_view line) {
  return !line.empty() && line.back() == '\n' ? line.substr(0, line.size() - 1) : line;
}

std::string pad_start(std::string s, std::size_t width) {
  if (s.size() < width) s.insert(0, width - s.size(), ' ');
  return s;
}

}  // namespace

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

}  // namespace mf::tools::jsdiff

namespace mf::tools {

DisplayDiff generate_diff_string(std::string_view old_text, std::string_view new_text,
                                 std::size_t context) {
  return jsdiff::display_diff(jsdiff::diff_lines(old_text, new_text), context);
}

std::string generate_unified_patch(std::string_view path, std::string_view old_text,
                                   std::string_view new_text, std::size_t context) {
  return jsdiff::unified_patch(path, jsdiff::diff_lines(old_text, new_text), context);
}

}  // namespace mf::tools
