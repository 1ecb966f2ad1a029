// The port of jsdiff's diffLines and Pi's two diff texts (jsdiff.hpp), kept to jsdiff's shape so
// the output equals Pi's.
#include "jsdiff.hpp"

#include <algorithm>
#include <climits>
#include <optional>

namespace mf::tools::jsdiff {
namespace {

// --- Lines by offset: a token is a line with its "\n" where it has one ---

// The end of the token starting at `at` (< text.size()).
std::size_t token_end(std::string_view text, std::size_t at) {
  const std::size_t nl = text.find('\n', at);
  return nl == std::string_view::npos ? text.size() : nl + 1;
}

// The start of the token ending at `end` (> 0).
std::size_t token_start(std::string_view text, std::size_t end) {
  const std::size_t nl = end < 2 ? std::string_view::npos : text.rfind('\n', end - 2);
  return nl == std::string_view::npos ? 0 : nl + 1;
}

std::size_t token_count(std::string_view text) {
  const auto newlines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  return newlines + (!text.empty() && text.back() != '\n' ? 1 : 0);
}

// Whether the tokens starting at offsets a (of `old_text`) and b (of `new_text`) are equal;
// advances both past them when they are.
bool same_token(std::string_view old_text, std::size_t& a, std::string_view new_text,
                std::size_t& b) {
  const std::size_t a_end = token_end(old_text, a);
  const std::size_t b_end = token_end(new_text, b);
  if (a_end - a != b_end - b || old_text.compare(a, a_end - a, new_text, b, b_end - b) != 0) {
    return false;
  }
  a = a_end;
  b = b_end;
  return true;
}

struct Run {
  Op op;
  std::size_t count;
};

struct Node {  // 12 bytes: the pool is the search's memory
  std::uint32_t count;
  Op op;
  std::int32_t previous;
};

// A furthest-reaching path: its last old token, its last node, and where the next old and new
// tokens start.
struct Path {
  long old_pos = -1;
  int last = -1;
  bool valid = false;
  std::size_t old_off = 0;
  std::size_t new_off = 0;
};

// The furthest-reaching path per diagonal k = old_pos - new_pos, for k in [min_k, max_k]. Round e
// of the search touches k in [-e-1, e+1] only, so the slots are allocated as it widens: memory
// grows with the edit distance rather than with the number of lines.
class Diagonals {
 public:
  Diagonals(long min_k, long max_k) : min_k_(min_k), max_k_(max_k) {}
  // Makes [-reach, reach] addressable; slots move, so only between rounds.
  void widen(long reach) {
    if (reach <= half_) return;
    const long half = std::max(reach, 2 * half_ + 1);
    std::vector<Path> grown(static_cast<std::size_t>(2 * half + 1));
    for (long k = -half_; k <= half_; ++k) {
      grown[static_cast<std::size_t>(k + half)] = slots_[static_cast<std::size_t>(k + half_)];
    }
    slots_ = std::move(grown);
    half_ = half;
  }
  Path* at(long k) {
    if (k < min_k_ || k > max_k_ || k < -half_ || k > half_) return nullptr;
    return &slots_[static_cast<std::size_t>(k + half_)];
  }

 private:
  long min_k_;
  long max_k_;
  long half_ = -1;
  std::vector<Path> slots_;
};

// jsdiff's Myers search (base.js), kept in its exact shape -- the furthest-reaching path per
// diagonal, its choice between an insertion and a deletion, its pruning at the graph's edges --
// because another equally short edit script would give a different diff text than Pi's. Costs
// O((N+M)·D); past a budget (a rewrite of most of a large file) it gives up and the caller falls
// back to one replaced block between the common head and tail.
std::optional<std::vector<Run>> jsdiff_myers(std::string_view old_text, std::string_view new_text,
                                             std::uint64_t& work) {
  constexpr std::size_t kMaxNodes = kMaxSearchNodes;
  constexpr std::uint64_t kMaxSteps = kMaxSearchSteps;
  const auto old_len = static_cast<long>(token_count(old_text));
  const auto new_len = static_cast<long>(token_count(new_text));
  std::vector<Node> nodes;
  // Reserved once (address space only, touched as used) so growth never copies the pool.
  nodes.reserve(kMaxNodes + 4);
  std::uint64_t steps = 0;
  struct Tally {  // the work done, however the search ends
    std::uint64_t& work;
    const std::vector<Node>& nodes;
    const std::uint64_t& steps;
    ~Tally() { work = nodes.size() + steps; }
  } tally{work, nodes, steps};

  auto extract_common = [&](Path& path, long k) {
    long old_pos = path.old_pos;
    long new_pos = old_pos - k;
    std::size_t common = 0;
    while (new_pos + 1 < new_len && old_pos + 1 < old_len &&
           same_token(old_text, path.old_off, new_text, path.new_off)) {
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
    Path next{path.old_pos + old_pos_inc, -1, true, path.old_off, path.new_off};
    if (op == Op::Removed) {
      next.old_off = token_end(old_text, path.old_off);
    } else {
      next.new_off = token_end(new_text, path.new_off);
    }
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

  Path seed{-1, -1, true, 0, 0};
  long new_pos = extract_common(seed, 0);
  if (seed.old_pos + 1 >= old_len && new_pos + 1 >= new_len) return build(seed.last);

  Diagonals best(-(new_len + 1), old_len + 1);
  best.widen(1);
  *best.at(0) = seed;
  long min_diagonal = LONG_MIN / 4;
  long max_diagonal = LONG_MAX / 4;
  if (seed.old_pos + 1 >= old_len) max_diagonal = -1;
  if (new_pos + 1 >= new_len) min_diagonal = 1;

  for (long edit_length = 1; edit_length <= old_len + new_len; ++edit_length) {
    // Every round adds a node, so a longer search is past the budget anyway.
    if (static_cast<std::size_t>(edit_length) > kMaxNodes) return std::nullopt;
    best.widen(edit_length + 1);
    for (long k = std::max(min_diagonal, -edit_length); k <= std::min(max_diagonal, edit_length);
         k += 2) {
      Path remove_path;
      Path add_path;
      if (Path* s = best.at(k - 1); s != nullptr && s->valid) {
        remove_path = *s;
        s->valid = false;  // nobody else reads it again
      }
      if (Path* s = best.at(k + 1); s != nullptr) add_path = *s;
      bool can_add = false;
      if (add_path.valid) {
        const long add_new_pos = add_path.old_pos - k;
        can_add = add_new_pos >= 0 && add_new_pos < new_len;
      }
      const bool can_remove = remove_path.valid && remove_path.old_pos + 1 < old_len;
      Path* here = best.at(k);
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
std::vector<Run> head_tail_diff(std::string_view old_text, std::string_view new_text) {
  const std::size_t old_len = token_count(old_text);
  const std::size_t new_len = token_count(new_text);
  std::size_t head = 0;
  for (std::size_t a = 0, b = 0;
       head < old_len && head < new_len && same_token(old_text, a, new_text, b);) {
    ++head;
  }
  std::size_t tail = 0;
  for (std::size_t a = old_text.size(), b = new_text.size();
       tail < old_len - head && tail < new_len - head; ++tail) {
    const std::size_t a_start = token_start(old_text, a);
    const std::size_t b_start = token_start(new_text, b);
    if (old_text.substr(a_start, a - a_start) != new_text.substr(b_start, b - b_start)) break;
    a = a_start;
    b = b_start;
  }
  std::vector<Run> runs;
  if (head > 0) runs.push_back({Op::Common, head});
  if (old_len - head - tail > 0) runs.push_back({Op::Removed, old_len - head - tail});
  if (new_len - head - tail > 0) runs.push_back({Op::Added, new_len - head - tail});
  if (tail > 0) runs.push_back({Op::Common, tail});
  return runs;
}

// The first `n` tokens of a part.
std::vector<std::string_view> first_tokens(const Part& part, std::size_t n) {
  std::vector<std::string_view> out;
  for (std::size_t at = 0; out.size() < std::min(n, part.count);) {
    const std::size_t end = token_end(part.text, at);
    out.push_back(part.text.substr(at, end - at));
    at = end;
  }
  return out;
}

// The last `n` tokens of a part, in order.
std::vector<std::string_view> last_tokens(const Part& part, std::size_t n) {
  std::vector<std::string_view> out;
  for (std::size_t end = part.text.size(); out.size() < std::min(n, part.count);) {
    const std::size_t start = token_start(part.text, end);
    out.push_back(part.text.substr(start, end - start));
    end = start;
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::vector<std::string_view> all_tokens(const Part& part) {
  return first_tokens(part, part.count);
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
  d.old_line_count =
      static_cast<std::size_t>(std::count(old_text.begin(), old_text.end(), '\n')) + 1;
  d.new_line_count =
      static_cast<std::size_t>(std::count(new_text.begin(), new_text.end(), '\n')) + 1;
  auto runs = jsdiff_myers(old_text, new_text, d.search_work);
  d.search_gave_up = !runs;
  if (!runs) runs = head_tail_diff(old_text, new_text);

  // Each run's tokens, taken in order from its text.
  auto take = [](std::string_view text, std::size_t& at, std::size_t count) {
    const std::size_t start = at;
    for (std::size_t i = 0; i < count; ++i) at = token_end(text, at);
    return text.substr(start, at - start);
  };
  std::size_t old_at = 0;
  std::size_t new_at = 0;
  for (const Run& run : *runs) {
    if (run.op == Op::Removed) {
      d.parts.push_back({run.op, take(old_text, old_at, run.count), run.count});
    } else {
      d.parts.push_back({run.op, take(new_text, new_at, run.count), run.count});
      if (run.op == Op::Common) take(old_text, old_at, run.count);
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
    const std::size_t size = part.count;
    if (part.op != Op::Common) {
      if (!result.first_changed_line) result.first_changed_line = new_line;
      for (auto line : all_tokens(part)) {
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
      if (size <= context * 2) {
        for (auto line : all_tokens(part)) context_line(line);
      } else {
        for (auto line : first_tokens(part, context)) context_line(line);
        out.push_back(skipped);
        const std::size_t gap = size - 2 * context;
        old_line += gap;
        new_line += gap;
        for (auto line : last_tokens(part, context)) context_line(line);
      }
    } else if (leading_change) {
      const std::size_t shown = std::min(context, size);
      for (auto line : first_tokens(part, shown)) context_line(line);
      if (size > shown) {
        out.push_back(skipped);
        old_line += size - shown;
        new_line += size - shown;
      }
    } else if (trailing_change) {
      const std::size_t skip = size > context ? size - context : 0;
      if (skip > 0) {
        out.push_back(skipped);
        old_line += skip;
        new_line += skip;
      }
      for (auto line : last_tokens(part, size - skip)) context_line(line);
    } else {
      old_line += size;
      new_line += size;
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
  parts.push_back({Op::Common, {}, 0});  // jsdiff's empty sentinel closes the last hunk
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
          const auto previous = last_tokens(parts[i - 1], context);
          for (auto line : previous) range.push_back(prefixed(' ', line));
          old_range_start -= previous.size();
          new_range_start -= previous.size();
        }
      }
      for (auto line : all_tokens(current)) {
        range.push_back(prefixed(current.op == Op::Added ? '+' : '-', line));
      }
      (current.op == Op::Added ? new_line : old_line) += current.count;
      continue;
    }
    if (old_range_start != 0) {
      if (current.count <= context * 2 && i + 2 < parts.size()) {
        for (auto line : all_tokens(current)) range.push_back(prefixed(' ', line));
      } else {
        const auto shown = first_tokens(current, context);
        for (auto line : shown) range.push_back(prefixed(' ', line));
        hunks.push_back({old_range_start, old_line - old_range_start + shown.size(),
                         new_range_start, new_line - new_range_start + shown.size(),
                         std::move(range)});
        range.clear();
        old_range_start = 0;
        new_range_start = 0;
      }
    }
    old_line += current.count;
    new_line += current.count;
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
