// Pi's truncate.ts in C++: whole-line truncation from the head or the tail within a line and a
// byte budget, sizes formatted as Pi prints them, and JavaScript string lengths.
#include <algorithm>

#include "mf/text/utf8.hpp"
#include "mf/tools/pack.hpp"

namespace mf::tools {
namespace {

// Lines as Pi counts them are the pieces of `body` split at "\n", where body is the text without
// one trailing "\n" (which does not start another line); "" has none. Nothing here keeps a list
// of the lines: a file of newlines would need 16 bytes of it per byte of text.
std::string_view body_of(std::string_view text) {
  return !text.empty() && text.back() == '\n' ? text.substr(0, text.size() - 1) : text;
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

// The truncated result's frame: totals, flags and limits, no content yet.
Truncation cut(std::size_t total_bytes, std::size_t lines, std::size_t max_lines,
               std::size_t max_bytes) {
  Truncation t = unchanged("", lines, max_lines, max_bytes);
  t.total_bytes = total_bytes;
  t.truncated = true;
  t.truncated_by = "lines";
  return t;
}

}  // namespace

std::size_t count_lines(std::string_view text) {
  if (text.empty()) return 0;
  const std::string_view body = body_of(text);
  return static_cast<std::size_t>(std::count(body.begin(), body.end(), '\n')) + 1;
}

Truncation truncate_head(std::string_view text, std::size_t max_lines, std::size_t max_bytes) {
  return truncate_head_of(text, text.size(), count_lines(text), max_lines, max_bytes);
}

Truncation truncate_head_of(std::string_view head, std::size_t total_bytes, std::size_t lines,
                            std::size_t max_lines, std::size_t max_bytes) {
  const bool whole = head.size() == total_bytes;
  if (lines <= max_lines && total_bytes <= max_bytes) {
    return unchanged(head, lines, max_lines, max_bytes);
  }
  Truncation t = cut(total_bytes, lines, max_lines, max_bytes);
  // A partial head ends before the text does, so no trailing "\n" is to be dropped from it; a line
  // that runs past its end is longer than max_bytes.
  const std::string_view body = whole ? body_of(head) : head;
  const auto line_end = [&](std::size_t from) {
    const std::size_t nl = body.find('\n', from);
    if (nl != std::string_view::npos) return nl;
    return whole ? body.size() : total_bytes;
  };
  // The kept lines joined by "\n" are a prefix of the body: only its length is counted.
  if (lines > 0 && line_end(0) > max_bytes) {
    t.truncated_by = "bytes";
    t.first_line_exceeds_limit = true;
    t.output_lines = 0;
    return t;
  }
  std::size_t bytes = 0;
  std::size_t kept = 0;
  for (std::size_t start = 0; kept < lines && kept < max_lines; ++kept) {
    const std::size_t end = line_end(start);
    const std::size_t cost = end - start + (kept > 0 ? 1 : 0);
    if (bytes + cost > max_bytes) {
      t.truncated_by = "bytes";
      break;
    }
    bytes += cost;
    start = end + 1;
  }
  t.content = std::string(body.substr(0, bytes));
  t.output_lines = kept;
  t.output_bytes = t.content.size();
  return t;
}

Truncation truncate_tail(std::string_view text, std::size_t max_lines, std::size_t max_bytes) {
  const std::size_t lines = count_lines(text);
  if (lines <= max_lines && text.size() <= max_bytes) {
    return unchanged(text, lines, max_lines, max_bytes);
  }
  Truncation t = cut(text.size(), lines, max_lines, max_bytes);
  const std::string_view body = body_of(text);
  // The kept lines joined by "\n" are a suffix of the body, starting at `from`.
  std::size_t from = body.size();
  std::size_t bytes = 0;
  std::size_t kept = 0;
  for (std::size_t end = body.size(); kept < lines && kept < max_lines; ++kept) {
    const std::size_t nl = end == 0 ? std::string_view::npos : body.rfind('\n', end - 1);
    const std::size_t start = nl == std::string_view::npos ? 0 : nl + 1;
    const std::size_t cost = end - start + (kept > 0 ? 1 : 0);
    if (bytes + cost > max_bytes) {
      t.truncated_by = "bytes";
      if (kept == 0) {  // the last line alone is too long: keep its end, on a UTF-8 boundary
        from = end - max_bytes;
        while (from < end && (static_cast<unsigned char>(body[from]) & 0xC0) == 0x80) ++from;
        t.last_line_partial = true;
        kept = 1;
      }
      break;
    }
    bytes += cost;
    from = start;
    end = start == 0 ? 0 : start - 1;
  }
  t.content = std::string(body.substr(from));
  t.output_lines = kept;
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
