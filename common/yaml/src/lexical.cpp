// The YAML 1.2 rules yaml-cpp does not enforce (lexical.hpp): a prepass over the raw text and
// the scalar checks the reader calls, offsets kept so diagnostics point into the original text.
#include "lexical.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "mf/diag/codes.hpp"
#include "mf/text/utf8.hpp"

namespace mf::yaml::detail {

namespace {

namespace codes = diag::codes;

constexpr std::size_t npos = std::string_view::npos;

bool is_white(char c) {
  return c == ' ' || c == '\t';
}

bool is_break(char c) {
  return c == '\n' || c == '\r';
}

bool is_flow_indicator(char c) {
  return c == ',' || c == '[' || c == ']' || c == '{' || c == '}';
}

// White space, a line break or the end of the text at `i`.
bool blank_at(std::string_view s, std::size_t i) {
  return i >= s.size() || is_white(s[i]) || is_break(s[i]);
}

std::string hex(std::uint32_t cp, int digits) {
  constexpr std::string_view kHex = "0123456789ABCDEF";
  std::string out;
  for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 0xF];
  return out;
}

// The end of the line holding `i` (the offset of its '\n', or the text's size).
std::size_t line_end(std::string_view s, std::size_t i) {
  const std::size_t nl = s.find('\n', i);
  return nl == npos ? s.size() : nl;
}

std::size_t count_spaces(std::string_view s, std::size_t i) {
  std::size_t n = 0;
  while (i + n < s.size() && s[i + n] == ' ') ++n;
  return n;
}

// A "---" or "..." document marker at `i`, which must be a line start.
bool document_marker_at(std::string_view s, std::size_t i) {
  const std::string_view rest = s.substr(i);
  return (rest.starts_with("---") || rest.starts_with("...")) && blank_at(s, i + 3);
}

// The offset just past the quoted scalar whose quote is at `i`, or npos if it never closes.
std::size_t skip_quoted(std::string_view s, std::size_t i) {
  const char quote = s[i];
  for (std::size_t j = i + 1; j < s.size(); ++j) {
    if (quote == '"' && s[j] == '\\') {
      ++j;
    } else if (s[j] == quote) {
      if (quote == '\'' && j + 1 < s.size() && s[j + 1] == '\'') {
        ++j;
      } else {
        return j + 1;
      }
    }
  }
  return npos;
}

LexError syntax(std::size_t offset, std::string message) {
  return LexError{offset, codes::kMalformed, std::move(message)};
}

}  // namespace

int column_of(std::string_view text, std::size_t pos) {
  const std::size_t nl = pos == 0 ? npos : text.rfind('\n', pos - 1);
  return static_cast<int>(nl == npos ? pos : pos - nl - 1);
}

std::optional<LexError> check_characters(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F) {
      return syntax(i, "control character 0x" + hex(c, 2) + " is not allowed in YAML text");
    }
    const std::size_t n = text::utf8_sequence_length(s, i);
    if (n == 0) return LexError{i, codes::kNotUtf8, "invalid UTF-8"};
    const auto b1 = n > 1 ? static_cast<unsigned char>(s[i + 1]) : 0;
    if (n == 2 && c == 0xC2 && b1 < 0xA0 && b1 != 0x85) {
      return syntax(i, "C1 control character U+00" + hex(b1, 2) + " is not allowed in YAML text");
    }
    if (n == 3 && c == 0xEF && b1 == 0xBF && static_cast<unsigned char>(s[i + 2]) >= 0xBE) {
      return syntax(i, "non-character U+" + hex(0xFFC0u | (s[i + 2] & 0x3Fu), 4) +
                           " is not allowed in YAML text");
    }
    i += n;
  }
  return std::nullopt;
}

std::optional<LexError> prepass(std::string& s) {
  const std::size_t n = s.size();
  // A lone CR is a line break (§5.4) that yaml-cpp does not take for one.
  for (std::size_t i = 0; i < n; ++i) {
    if (s[i] == '\r' && (i + 1 == n || s[i + 1] != '\n')) s[i] = '\n';
  }
  enum class Last { Open, Comma, Other };
  std::vector<char> flow;  // the open flow collections, innermost last
  Last last = Last::Other;
  bool separated = true;      // the previous character is white space or a line start
  bool line_start = true;     // nothing but indentation read on this line yet
  bool plain_at_eol = false;  // the previous line ended inside a plain scalar
  bool continuation = false;  // this line's first token may continue that plain scalar
  std::size_t line_begin = 0;
  std::size_t i = 0;
  while (i < n) {
    const char c = s[i];
    if (c == '\n') {
      ++i;
      line_begin = i;
      line_start = true;
      separated = true;
      continuation = plain_at_eol;
      plain_at_eol = false;
      continue;
    }
    if (line_start) {
      std::size_t j = i;
      while (j < n && (is_white(s[j]) || s[j] == '\r')) ++j;
      if (j == n || s[j] == '\n') {
        // A line of only white space is an empty line wherever it is not block scalar content
        // (skipped below); yaml-cpp refuses a tab on it as indentation.
        std::replace(s.begin() + static_cast<std::ptrdiff_t>(i),
                     s.begin() + static_cast<std::ptrdiff_t>(j), '\t', ' ');
        i = j;
        plain_at_eol = continuation;  // a blank line does not end a plain scalar
        continue;
      }
      line_start = false;
      if (i == line_begin && flow.empty() && s[i] == '%') {  // a directive
        i = line_end(s, i);
        continue;
      }
      if (i == line_begin && document_marker_at(s, i)) {
        i += 3;
        separated = false;
        continuation = false;
        continue;
      }
    }
    if (is_white(c) || c == '\r') {
      separated = true;
      ++i;
      continue;
    }
    if (c == '#') {
      if (!separated) {
        return syntax(i, "a comment must be separated from the token before it by white space");
      }
      i = line_end(s, i);
      continue;
    }
    const bool first_on_line = continuation;
    continuation = false;
    separated = false;
    const bool in_flow = !flow.empty();
    const bool plain_continues =
        first_on_line && (c == '"' || c == '\'' || c == '|' || c == '>' || c == '&' || c == '!' ||
                          c == '*' || is_flow_indicator(c));
    if (!plain_continues) {
      if (c == '"' || c == '\'') {
        const std::size_t end = skip_quoted(s, i);
        if (end == npos) {
          return syntax(
              i, std::string(c == '"' ? "double" : "single") + "-quoted scalar is not terminated");
        }
        i = end;
        last = Last::Other;
        continue;
      }
      if (c == '[' || c == '{') {
        flow.push_back(c);
        last = Last::Open;
        ++i;
        continue;
      }
      if ((c == ']' || c == '}') && in_flow) {
        flow.pop_back();
        last = Last::Other;
        ++i;
        continue;
      }
      if (c == ',' && in_flow) {
        if (last != Last::Other) {
          return syntax(i, "empty entry in a flow collection");
        }
        last = Last::Comma;
        ++i;
        continue;
      }
      if ((c == '|' || c == '>') && !in_flow) {
        // The header: an indentation digit and a chomping indicator in either order, then white
        // space, a comment or the line break.
        std::size_t j = i + 1;
        bool digit = false, chomp = false;
        for (int k = 0; k < 2 && j < n; ++k) {
          if (!digit && s[j] >= '1' && s[j] <= '9') {
            digit = true;
            ++j;
          } else if (!chomp && (s[j] == '+' || s[j] == '-')) {
            chomp = true;
            ++j;
          }
        }
        if (!blank_at(s, j)) {
          return syntax(j, s[j] == '#' ? "a comment must be separated from the block scalar "
                                         "header by white space"
                                       : "invalid block scalar header");
        }
        while (j < n && is_white(s[j])) ++j;
        if (j < n && s[j] == '#') j = line_end(s, j);
        if (j < n && s[j] == '\r') ++j;
        if (j < n && s[j] != '\n') {
          return syntax(j, "block scalar content must start on the line after its header");
        }
        // Its content: every following line that is blank or indented more than the line of the
        // header (deeper than the real limit where the header follows a compact entry, which
        // only skips lines). At the top level content may start in column 0.
        const std::string_view before = std::string_view(s).substr(line_begin, i - line_begin);
        const bool top = before.find_first_not_of(' ') == npos ||
                         (before.starts_with("---") && before.find_first_not_of(' ', 3) == npos);
        const long threshold = top ? -1 : static_cast<long>(count_spaces(s, line_begin));
        i = j;
        while (i < n) {
          const std::size_t next = i + 1;
          if (next >= n) {
            i = n;
            break;
          }
          const std::size_t end = line_end(s, next);
          const std::size_t spaces = count_spaces(s, next);
          const bool blank =
              std::string_view(s).substr(next, end - next).find_first_not_of(" \t\r") == npos;
          if (!blank && (static_cast<long>(spaces) <= threshold ||
                         (threshold < 0 && spaces == 0 && document_marker_at(s, next)))) {
            break;
          }
          i = end;
        }
        last = Last::Other;
        continue;
      }
      if ((c == '-' || c == '?' || c == ':') &&
          (blank_at(s, i + 1) || (in_flow && is_flow_indicator(s[i + 1])))) {
        if (c == '-' && in_flow) {
          return syntax(i, "a block sequence entry '-' cannot appear inside a flow collection");
        }
        separated = true;
        ++i;
        continue;
      }
      if (c == '&' || c == '!' || c == '*') {
        while (i < n && !blank_at(s, i) && !(in_flow && is_flow_indicator(s[i]))) ++i;
        last = Last::Other;
        continue;
      }
    }
    // A plain scalar, to ": ", " #", the line end, or a flow indicator inside a flow collection.
    while (i < n && s[i] != '\n') {
      const char p = s[i];
      if (p == ':' && (blank_at(s, i + 1) || (in_flow && is_flow_indicator(s[i + 1])))) break;
      if (in_flow && is_flow_indicator(p)) break;
      if ((is_white(p) || p == '\r') && i + 1 < n && s[i + 1] == '#') break;
      ++i;
    }
    std::size_t k = i;
    while (k < n && (is_white(s[k]) || s[k] == '\r')) ++k;
    plain_at_eol = k >= n || s[k] == '\n';
    last = Last::Other;
  }
  return std::nullopt;
}

Decoded decode_quoted(std::string_view s, std::size_t pos, int min_indent) {
  Decoded d;
  const char quote = s[pos];
  const bool dq = quote == '"';
  std::string& out = d.value;
  std::size_t keep = 0;  // out's length up to its last character that is not raw white space
  std::size_t i = pos + 1;
  auto fail = [&](std::size_t at, const char* code, std::string message) {
    d.value.clear();
    d.error = LexError{at, code, std::move(message)};
    return d;
  };
  while (true) {
    if (i >= s.size()) {
      return fail(pos, codes::kMalformed,
                  std::string(dq ? "double" : "single") + "-quoted scalar is not terminated");
    }
    const char c = s[i];
    if (c == quote) {
      if (!dq && i + 1 < s.size() && s[i + 1] == '\'') {
        out += '\'';
        keep = out.size();
        i += 2;
        continue;
      }
      return d;
    }
    const bool escaped_break = dq && c == '\\' && i + 1 < s.size() && is_break(s[i + 1]);
    if (is_break(c) || escaped_break) {
      // Folding (§7.3): white space before the break is dropped; one break becomes a space, each
      // following empty line a line feed; an escaped break joins the lines with nothing.
      if (!escaped_break) out.resize(keep);
      i += escaped_break ? 1 : 0;
      std::size_t empties = 0;
      while (true) {
        i += s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n' ? 2 : 1;
        const std::size_t begin = i;
        const std::size_t spaces = count_spaces(s, i);
        while (i < s.size() && is_white(s[i])) ++i;
        if (i < s.size() && is_break(s[i])) {
          ++empties;
          continue;
        }
        if (i >= s.size()) break;  // reported as unterminated
        if (spaces == 0 && document_marker_at(s, begin)) {
          return fail(begin, codes::kMalformed, "document marker inside a quoted scalar");
        }
        if (static_cast<int>(spaces) < min_indent) {
          return fail(i, codes::kMalformed,
                      "quoted scalar continues with an indentation of " + std::to_string(spaces) +
                          " spaces; it must be indented at least " + std::to_string(min_indent));
        }
        break;
      }
      if (escaped_break || empties > 0) {
        out.append(empties, '\n');
      } else {
        out += ' ';
      }
      keep = out.size();
      continue;
    }
    if (dq && c == '\\') {
      const std::size_t at = i;
      if (i + 1 >= s.size()) continue;  // reported as unterminated
      const char e = s[i + 1];
      i += 2;
      int digits = 0;
      switch (e) {
        case '0':
          out += '\0';
          break;
        case 'a':
          out += '\a';
          break;
        case 'b':
          out += '\b';
          break;
        case 't':
        case '\t':
          out += '\t';
          break;
        case 'n':
          out += '\n';
          break;
        case 'v':
          out += '\v';
          break;
        case 'f':
          out += '\f';
          break;
        case 'r':
          out += '\r';
          break;
        case 'e':
          out += '\x1B';
          break;
        case ' ':
          out += ' ';
          break;
        case '"':
          out += '"';
          break;
        case '/':
          out += '/';
          break;
        case '\\':
          out += '\\';
          break;
        case 'N':
          text::append_utf8(U'\u0085', out);
          break;
        case '_':
          text::append_utf8(U'\u00A0', out);
          break;
        case 'L':
          text::append_utf8(U'\u2028', out);
          break;
        case 'P':
          text::append_utf8(U'\u2029', out);
          break;
        case 'x':
          digits = 2;
          break;
        case 'u':
          digits = 4;
          break;
        case 'U':
          digits = 8;
          break;
        default: {
          const std::size_t len = std::max<std::size_t>(1, text::utf8_sequence_length(s, at + 1));
          return fail(at, codes::kMalformed,
                      "invalid escape \\" + std::string(s.substr(at + 1, len)) +
                          " in a double-quoted scalar");
        }
      }
      if (digits > 0) {
        std::uint32_t cp = 0;
        for (int k = 0; k < digits; ++k, ++i) {
          const char h = i < s.size() ? s[i] : '\0';
          const int v = h >= '0' && h <= '9'   ? h - '0'
                        : h >= 'a' && h <= 'f' ? h - 'a' + 10
                        : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                               : -1;
          if (v < 0) {
            return fail(at, codes::kMalformed,
                        "escape \\" + std::string(1, e) + " needs " + std::to_string(digits) +
                            " hexadecimal digits");
          }
          cp = cp * 16 + static_cast<std::uint32_t>(v);
        }
        if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) {
          return fail(at, codes::kNotUtf8,
                      "escape \\" + std::string(1, e) + hex(cp, digits) +
                          " does not encode a Unicode scalar value");
        }
        text::append_utf8(static_cast<char32_t>(cp), out);
      }
      keep = out.size();
      continue;
    }
    out += c;
    if (!is_white(c)) keep = out.size();
    ++i;
  }
}

Decoded decode_block(std::string_view s, std::size_t pos, int parent_indent) {
  Decoded d;
  auto fail = [&](std::size_t at, std::string message) {
    d.value.clear();
    d.error = syntax(at, std::move(message));
    return d;
  };
  const bool literal = s[pos] == '|';
  std::size_t i = pos + 1;
  int explicit_indent = 0;
  char chomp = '\0';
  for (int k = 0; k < 2 && i < s.size(); ++k) {
    if (explicit_indent == 0 && s[i] >= '1' && s[i] <= '9') {
      explicit_indent = s[i++] - '0';
    } else if (chomp == '\0' && (s[i] == '+' || s[i] == '-')) {
      chomp = s[i++];
    }
  }
  if (!blank_at(s, i)) {
    return fail(i, s[i] == '#' ? "a comment must be separated from the block scalar header by "
                                 "white space"
                               : "invalid block scalar header");
  }
  i = line_end(s, i);
  long indent = explicit_indent > 0 ? parent_indent + explicit_indent : -1;
  std::string& out = d.value;
  enum class Kind { None, Normal, Spaced };
  Kind prev = Kind::None;
  std::size_t empties = 0;    // empty lines since the last text line
  std::size_t max_blank = 0;  // spaces on the leading empty lines (auto-detection)
  std::size_t max_blank_at = 0;
  while (i < s.size()) {
    const std::size_t begin = i + 1;  // past the '\n'
    if (begin > s.size()) break;
    std::size_t end = line_end(s, begin);
    const std::size_t line_end_offset = end;
    if (end > begin && s[end - 1] == '\r') --end;
    const std::string_view line = s.substr(begin, end - begin);
    const std::size_t spaces = count_spaces(s, begin);
    const bool only_spaces = spaces == line.size();
    if (begin == s.size()) break;
    if (indent < 0) {
      if (only_spaces) {
        if (spaces > max_blank) {
          max_blank = spaces;
          max_blank_at = begin;
        }
        ++empties;
        i = line_end_offset;
        continue;
      }
      if (static_cast<long>(spaces) <= parent_indent) break;
      indent = static_cast<long>(spaces);
      if (max_blank > spaces) {
        return fail(max_blank_at,
                    "a leading empty line of a block scalar has more spaces than its first "
                    "content line");
      }
    }
    const auto ind = static_cast<std::size_t>(indent);
    if (ind == 0 && document_marker_at(s, begin)) break;
    if (only_spaces && spaces <= ind) {
      ++empties;
      i = line_end_offset;
      continue;
    }
    if (spaces < ind) break;
    const std::string_view text = line.substr(ind);
    const Kind kind = !text.empty() && is_white(text[0]) ? Kind::Spaced : Kind::Normal;
    if (prev == Kind::None) {
      out.append(empties, '\n');
    } else if (literal || prev == Kind::Spaced || kind == Kind::Spaced) {
      out.append(empties + 1, '\n');
    } else {
      out.append(empties == 0 ? 1 : empties, empties == 0 ? ' ' : '\n');
    }
    out += text;
    prev = kind;
    empties = 0;
    i = line_end_offset;
  }
  if (chomp == '-') return d;
  if (prev == Kind::None) {
    if (chomp == '+') out.append(empties, '\n');
    return d;
  }
  out += '\n';
  if (chomp == '+') out.append(empties, '\n');
  return d;
}

std::optional<LexError> check_flow_indentation(std::string_view s, std::size_t pos,
                                               int min_indent) {
  std::size_t depth = 0;
  for (std::size_t i = pos; i < s.size();) {
    const char c = s[i];
    if (c == '[' || c == '{') {
      ++depth;
    } else if (c == ']' || c == '}') {
      if (--depth == 0) return std::nullopt;
    } else if (c == '"' || c == '\'') {
      if (i > pos && !is_white(s[i - 1]) && !is_break(s[i - 1]) && !is_flow_indicator(s[i - 1]) &&
          s[i - 1] != ':') {
        ++i;  // inside a plain scalar
        continue;
      }
      i = skip_quoted(s, i);
      if (i == npos) return std::nullopt;
      continue;
    } else if (c == '#' && (is_white(s[i - 1]) || is_break(s[i - 1]))) {
      i = line_end(s, i);
      continue;
    } else if (c == '\n') {
      const std::size_t begin = i + 1;
      const std::size_t spaces = count_spaces(s, begin);
      std::size_t j = begin;
      while (j < s.size() && (is_white(s[j]) || s[j] == '\r')) ++j;
      if (j < s.size() && s[j] != '\n' && s[j] != '#' && static_cast<int>(spaces) < min_indent) {
        return LexError{j, codes::kMalformed,
                        "flow collection continues with an indentation of " +
                            std::to_string(spaces) + " spaces; it must be indented at least " +
                            std::to_string(min_indent)};
      }
      i = j;
      continue;
    }
    ++i;
  }
  return std::nullopt;
}

}  // namespace mf::yaml::detail
