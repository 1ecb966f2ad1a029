// Pi's truncate.ts in C++: whole-line truncation from the head or the tail within a line and a
// byte budget, sizes formatted as Pi prints them, and JavaScript string lengths.
#include <algorithm>
#include <vector>

#include "mf/text/utf8.hpp"
#include "mf/tools/pack.hpp"

namespace mf::tools {
namespace {

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  if (text.empty()) return lines;
  std::size_t start = 0;
  while (true) {
    const std::size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) {
      lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
    if (start == text.size()) break;  // a trailing "\n" does not start another line
  }
  return lines;
}

std::string join(const std::vector<std::string_view>& lines) {
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) out.push_back('\n');
    out.append(lines[i]);
  }
  return out;
}

Truncation unchanged(std::string_view text, std::size_t lines, std::size_t max_lines,
                     std::size_t max_bytes) {
  Truncation t;
  t.content = std::string(text);
  t.total_lines = t.output_lines = lines;
  t.total_bytes = t.output_bytes = text.size();
  t.max_lines = max_lines;
  t.max_bytes = max_bytes;
  return t;
}

}  // namespace

std::size_t count_lines(std::string_view text) {
  return split_lines(text).size();
}

Truncation truncate_head(std::string_view text, std::size_t max_lines, std::size_t max_bytes) {
  const auto lines = split_lines(text);
  if (lines.size() <= max_lines && text.size() <= max_bytes) {
    return unchanged(text, lines.size(), max_lines, max_bytes);
  }
  Truncation t = unchanged("", lines.size(), max_lines, max_bytes);
  t.total_bytes = text.size();
  t.truncated = true;
  if (!lines.empty() && lines[0].size() > max_bytes) {
    t.truncated_by = "bytes";
    t.first_line_exceeds_limit = true;
    t.output_lines = 0;
    return t;
  }
  std::vector<std::string_view> kept;
  std::size_t bytes = 0;
  t.truncated_by = "lines";
  for (std::size_t i = 0; i < lines.size() && i < max_lines; ++i) {
    const std::size_t cost = lines[i].size() + (i > 0 ? 1 : 0);
    if (bytes + cost > max_bytes) {
      t.truncated_by = "bytes";
      break;
    }
    kept.push_back(lines[i]);
    bytes += cost;
  }
  t.content = join(kept);
  t.output_lines = kept.size();
  t.output_bytes = t.content.size();
  return t;
}

Truncation truncate_tail(std::string_view text, std::size_t max_lines, std::size_t max_bytes) {
  const auto lines = split_lines(text);
  if (lines.size() <= max_lines && text.size() <= max_bytes) {
    return unchanged(text, lines.size(), max_lines, max_bytes);
  }
  Truncation t = unchanged("", lines.size(), max_lines, max_bytes);
  t.total_bytes = text.size();
  t.truncated = true;
  t.truncated_by = "lines";
  std::vector<std::string_view> kept;
  std::size_t bytes = 0;
  for (std::size_t n = 0; n < lines.size() && n < max_lines; ++n) {
    const std::string_view line = lines[lines.size() - 1 - n];
    const std::size_t cost = line.size() + (n > 0 ? 1 : 0);
    if (bytes + cost > max_bytes) {
      t.truncated_by = "bytes";
      if (kept.empty()) {  // the last line alone is too long: keep its end, on a UTF-8 boundary
        std::size_t from = line.size() - max_bytes;
        while (from < line.size() && (static_cast<unsigned char>(line[from]) & 0xC0) == 0x80)
          ++from;
        kept.push_back(line.substr(from));
        t.last_line_partial = true;
      }
      break;
    }
    kept.push_back(line);
    bytes += cost;
  }
  std::reverse(kept.begin(), kept.end());
  t.content = join(kept);
  t.output_lines = kept.size();
  t.output_bytes = t.content.size();
  return t;
}

json::Value to_json(const Truncation& t) {
  return json::Object{
      {"truncated", t.truncated},
      {"truncatedBy", t.truncated_by.empty() ? json::Value() : json::Value(t.truncated_by)},
      {"totalLines", static_cast<std::uint64_t>(t.total_lines)},
      {"totalBytes", static_cast<std::uint64_t>(t.total_bytes)},
      {"outputLines", static_cast<std::uint64_t>(t.output_lines)},
      {"outputBytes", static_cast<std::uint64_t>(t.output_bytes)},
      {"lastLinePartial", t.last_line_partial},
      {"firstLineExceedsLimit", t.first_line_exceeds_limit},
      {"maxLines", static_cast<std::uint64_t>(t.max_lines)},
      {"maxBytes", static_cast<std::uint64_t>(t.max_bytes)},
  };
}

std::string format_size(std::size_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + "B";
  // JavaScript's toFixed(1) rounds half up on the exact value; integer arithmetic does the same.
  const std::size_t unit = bytes < 1024 * 1024 ? 1024 : 1024 * 1024;
  const std::size_t tenths = (bytes * 20 + unit) / (2 * unit);
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) +
         (unit == 1024 ? "KB" : "MB");
}

std::size_t utf16_length(std::string_view text) {
  std::size_t n = 0;
  for (unsigned char c : text) {
    if ((c & 0xC0) != 0x80) n += (c >= 0xF0) ? 2 : 1;  // 4-byte sequences are surrogate pairs
  }
  return n;
}

bool truncate_line(std::string& line, std::size_t max_chars) {
  if (utf16_length(line) <= max_chars) return false;
  std::size_t units = 0;
  std::size_t i = 0;
  while (i < line.size()) {
    const auto c = static_cast<unsigned char>(line[i]);
    const std::size_t width = c >= 0xF0 ? 2 : 1;
    if (units + width > max_chars) break;
    units += width;
    ++i;
    while (i < line.size() && (static_cast<unsigned char>(line[i]) & 0xC0) == 0x80) ++i;
  }
  line.resize(i);
  line += "... [truncated]";
  return true;
}

}  // namespace mf::tools
