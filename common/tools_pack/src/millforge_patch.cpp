// The unified-diff format of Millforge's apply_patch, apart from the files: parse_patch splits a
// patch into its files and hunks, apply_hunks applies one file's hunks to its bytes.
#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "millforge_builtins.hpp"

namespace mf::tools {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// The path of a ---/+++ header: up to a tab (diff's timestamp), "" for /dev/null.
std::optional<std::string> header_path(std::string_view rest, std::string* error) {
  const auto tab = rest.find('\t');
  if (tab != std::string_view::npos) rest = rest.substr(0, tab);
  while (!rest.empty() && rest.back() == '\r') rest.remove_suffix(1);
  if (rest == "/dev/null") return std::string();
  if (rest.empty()) {
    *error = "a file header names no path";
    return std::nullopt;
  }
  if (rest.front() == '"') {
    *error = "quoted paths are not supported: " + std::string(rest);
    return std::nullopt;
  }
  return std::string(rest);
}

// "@@ -a[,b] +c[,d] @@ ..." -> a, b, c, d (b and d default to 1).
bool hunk_header(std::string_view line, std::size_t counts[4]) {
  std::size_t at = 3;  // after "@@ "
  auto number = [&](std::size_t& out) {
    const std::size_t begin = at;
    out = 0;
    while (at < line.size() && line[at] >= '0' && line[at] <= '9') {
      if (out > 100000000) return false;
      out = out * 10 + static_cast<std::size_t>(line[at++] - '0');
    }
    return at > begin;
  };
  auto range = [&](char sign, std::size_t& start, std::size_t& count) {
    if (at >= line.size() || line[at] != sign) return false;
    ++at;
    if (!number(start)) return false;
    count = 1;
    if (at < line.size() && line[at] == ',') {
      ++at;
      if (!number(count)) return false;
    }
    return true;
  };
  if (!range('-', counts[0], counts[1])) return false;
  if (at >= line.size() || line[at] != ' ') return false;
  ++at;
  if (!range('+', counts[2], counts[3])) return false;
  return line.substr(at, 3) == " @@";
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t nl = text.find('\n', start);
    const std::size_t end = nl == std::string_view::npos ? text.size() : nl;
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

}  // namespace

ParsedPatch parse_patch(std::string_view patch) {
  ParsedPatch out;
  const std::vector<std::string_view> lines = split_lines(patch);
  auto fail = [&](std::size_t index, const std::string& why) {
    out.files.clear();
    out.error = "Patch line " + std::to_string(index + 1) + ": " + why;
    return out;
  };
  std::size_t i = 0;
  // After a file section, a line that looks like hunk content is an error rather than commentary:
  // a hunk whose counts are short of its lines would otherwise lose the rest silently. A
  // signature ("-- "), "diff ..." or "From ..." line starts commentary again.
  bool after_section = false;
  while (i < lines.size()) {
    const std::string_view line = lines[i];
    if (starts_with(line, "@@ ")) return fail(i, "a hunk without a ---/+++ file header");
    if (!starts_with(line, "--- ")) {
      if (line == "-- " || starts_with(line, "diff ") || starts_with(line, "From ")) {
        after_section = false;
      } else if (after_section && !line.empty() &&
                 (line[0] == '+' || line[0] == '-' || line[0] == ' ' || line[0] == '\\')) {
        return fail(i, "a hunk line outside any hunk (do the hunk's counts match its lines?)");
      }
      ++i;  // diff --git, index, mode lines, commentary
      continue;
    }
    if (i + 1 >= lines.size() || !starts_with(lines[i + 1], "+++ ")) {
      return fail(i, "a --- header must be followed by a +++ header");
    }
    std::string why;
    auto old_path = header_path(line.substr(4), &why);
    if (!old_path) return fail(i, why);
    auto new_path = header_path(lines[i + 1].substr(4), &why);
    if (!new_path) return fail(i + 1, why);
    // git's a/ and b/ prefixes, removed only when both sides carry theirs.
    const bool git_style = (old_path->empty() || starts_with(*old_path, "a/")) &&
                           (new_path->empty() || starts_with(*new_path, "b/"));
    if (git_style) {
      if (!old_path->empty()) old_path->erase(0, 2);
      if (!new_path->empty()) new_path->erase(0, 2);
    }
    if (old_path->empty() && new_path->empty()) return fail(i, "both sides are /dev/null");
    if (!old_path->empty() && !new_path->empty() && *old_path != *new_path) {
      return fail(i, "renames are not supported (" + *old_path + " -> " + *new_path + ")");
    }
    FilePatch file{*old_path, *new_path, {}};
    i += 2;
    while (i < lines.size() && starts_with(lines[i], "@@ ")) {
      std::size_t counts[4] = {};
      if (!hunk_header(lines[i], counts)) return fail(i, "malformed hunk header");
      PatchHunk hunk;
      hunk.old_start = counts[0];
      hunk.new_start = counts[2];
      hunk.header_line = i + 1;
      std::size_t old_left = counts[1];
      std::size_t new_left = counts[3];
      char last = 0;  // the side of the line a "\ No newline" marker belongs to
      ++i;
      auto marker = [&]() -> bool {
        if (last == 0) return false;
        if (last == ' ' || last == '-') hunk.old_no_newline = true;
        if (last == ' ' || last == '+') hunk.new_no_newline = true;
        return true;
      };
      while (old_left > 0 || new_left > 0) {
        if (i >= lines.size()) return fail(i - 1, "the hunk ends before its counts are met");
        const std::string_view l = lines[i];
        // An empty line is a context line whose leading space was stripped on the way.
        const char kind = l.empty() ? ' ' : l[0];
        const std::string body(l.empty() ? std::string_view() : l.substr(1));
        const bool after_old_end = hunk.old_no_newline && (kind == ' ' || kind == '-');
        const bool after_new_end = hunk.new_no_newline && (kind == ' ' || kind == '+');
        if (after_old_end || after_new_end) {
          return fail(i, "a line follows a \"\\ No newline at end of file\" marker");
        }
        if (kind == ' ' && old_left > 0 && new_left > 0) {
          hunk.old_lines.push_back(body);
          hunk.new_lines.push_back(body);
          --old_left;
          --new_left;
        } else if (kind == '-' && old_left > 0) {
          hunk.old_lines.push_back(body);
          --old_left;
        } else if (kind == '+' && new_left > 0) {
          hunk.new_lines.push_back(body);
          --new_left;
        } else if (kind == '\\') {
          if (!marker()) return fail(i, "a \"\\\" marker before any line");
          ++i;
          continue;
        } else {
          return fail(i, "the line does not fit the hunk's counts (-" + std::to_string(counts[1]) +
                             " +" + std::to_string(counts[3]) + ")");
        }
        last = kind;
        ++i;
      }
      if (i < lines.size() && starts_with(lines[i], "\\")) {
        marker();
        ++i;
      }
      file.hunks.push_back(std::move(hunk));
    }
    if (file.hunks.empty()) {
      return fail(i - 1, "no hunks for " + (file.new_path.empty() ? file.old_path : file.new_path));
    }
    out.files.push_back(std::move(file));
    after_section = true;
  }
  if (out.files.empty()) out.error = "The patch holds no ---/+++ file sections";
  return out;
}

PatchOutcome apply_hunks(std::string_view original, const std::vector<PatchHunk>& hunks,
                         std::string_view display) {
  PatchOutcome out;
  const std::vector<std::string_view> lines = split_lines(original);
  const bool ends_with_newline = original.empty() || original.back() == '\n';
  std::vector<std::string_view> result;
  bool result_newline = ends_with_newline;
  std::size_t cursor = 0;  // lines before it are settled
  for (std::size_t h = 0; h < hunks.size(); ++h) {
    const PatchHunk& hunk = hunks[h];
    const std::size_t m = hunk.old_lines.size();
    auto matches_at = [&](std::size_t at) {
      if (at < cursor || at + m > lines.size()) return false;
      for (std::size_t k = 0; k < m; ++k) {
        if (lines[at + k] != hunk.old_lines[k]) return false;
      }
      const bool reaches_end = at + m == lines.size();
      // The old side's last line ends the file without "\n" exactly when the patch says so.
      if (hunk.old_no_newline) return reaches_end && !ends_with_newline;
      return !(reaches_end && !ends_with_newline && !lines.empty());
    };
    // A stated line past the end searches from the end: no line beyond it can match.
    const std::size_t expected =
        std::min(hunk.old_start == 0 ? 0 : hunk.old_start - (m == 0 ? 0 : 1),
                 m == 0 ? hunk.old_start : lines.size());
    std::optional<std::size_t> found;
    if (m == 0) {
      if (matches_at(expected)) found = expected;
    } else {
      // The stated line first, then ever farther from it, never back into an earlier hunk.
      for (std::size_t d = 0; !found && (expected + d <= lines.size() || expected >= d); ++d) {
        if (expected + d <= lines.size() && matches_at(expected + d)) {
          found = expected + d;
        } else if (d > 0 && expected >= d && matches_at(expected - d)) {
          found = expected - d;
        }
      }
    }
    if (!found) {
      out.error = "Hunk " + std::to_string(h + 1) + " of " + std::string(display) +
                  " (patch line " + std::to_string(hunk.header_line) + ", -" +
                  std::to_string(hunk.old_start) +
                  ") does not apply: its context and removed lines are not in the file" +
                  (h > 0 ? " after the previous hunk" : "");
      return out;
    }
    const bool reaches_end = *found + m == lines.size();
    if (hunk.new_no_newline && !reaches_end) {
      out.error = "Hunk " + std::to_string(h + 1) + " of " + std::string(display) +
                  " ends its new side without a newline away from the end of the file";
      return out;
    }
    result.insert(result.end(), lines.begin() + static_cast<std::ptrdiff_t>(cursor),
                  lines.begin() + static_cast<std::ptrdiff_t>(*found));
    result.insert(result.end(), hunk.new_lines.begin(), hunk.new_lines.end());
    if (reaches_end) result_newline = hunk.new_lines.empty() || !hunk.new_no_newline;
    cursor = *found + m;
  }
  result.insert(result.end(), lines.begin() + static_cast<std::ptrdiff_t>(cursor), lines.end());
  for (std::size_t k = 0; k < result.size(); ++k) {
    out.content.append(result[k]);
    if (k + 1 < result.size() || result_newline) out.content.push_back('\n');
  }
  return out;
}

}  // namespace mf::tools
