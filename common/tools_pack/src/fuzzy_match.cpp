// Pi's fuzzy matching for edit (fuzzy_match.hpp): exact first, then both texts normalized the way
// Pi normalizes them, so an edit finds what Pi would find.
#include "fuzzy_match.hpp"

#include <utf8proc.h>

#include <cstdint>
#include <cstdlib>

#include "edit_core.hpp"

namespace mf::tools {
namespace {

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

}  // namespace

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

namespace fuzzy {

long long count_occurrences(std::string_view haystack, std::string_view needle) {
  if (needle.empty()) return static_cast<long long>(utf16_length(haystack)) - 1;
  long long count = 0;
  for (std::size_t at = haystack.find(needle); at != std::string_view::npos;
       at = haystack.find(needle, at + needle.size())) {
    ++count;
  }
  return count;
}

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

}  // namespace fuzzy
}  // namespace mf::tools
