// The rule that holds the tape (the reader's fast path) to the strict reader, shared by the
// tape_differential fuzz target and the conformance suites: whatever the tape accepts, parse()
// accepts with the same meaning; whatever parse() accepts, the tape does not decline (but for a
// number with a positive exponent past 308, which the tape leaves to the strict reader).
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"
#include "mf/json/tape.hpp"

namespace mf::json::oracle {

// Whether a number outside the strings of `text` has a positive exponent past 308. The tape leaves
// such a number to the strict reader, whose bound also counts the fraction's digits (RapidJSON
// takes -0.0623157e309, which is -6.23157e307), so a decline there is by design.
inline bool has_exponent_past_308(std::string_view text) {
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      continue;
    }
    const bool after_number =
        i > 0 && ((text[i - 1] >= '0' && text[i - 1] <= '9') || text[i - 1] == '.');
    if ((c != 'e' && c != 'E') || !after_number) continue;
    std::size_t j = i + 1;
    if (j < text.size() && text[j] == '-') continue;
    if (j < text.size() && text[j] == '+') ++j;
    long exponent = 0;
    for (; j < text.size() && text[j] >= '0' && text[j] <= '9'; ++j) {
      exponent = std::min(exponent * 10 + (text[j] - '0'), 100000L);
    }
    if (exponent > 308) return true;
  }
  return false;
}

// An empty string when each string value of a canonical document, read alone
// (canonical_string_at) or taken as read by a second tape, reads as the tape read it; else what
// differs. `budget` bounds how many strings are read again.
inline std::string string_disagreement(const View& v, std::string_view text, const Value& whole,
                                       const ReadLimits& limits, int& budget) {
  if (v.is_string() && budget-- > 0) {
    if (v.string_size() != v.as_string().size()) return "string_size is not the decoded size";
    const auto at = static_cast<std::size_t>(v.raw().data() - text.data());
    std::string scratch;
    KnownString where;
    const auto alone = canonical_string_at(text, at, scratch, where);
    if (!alone || *alone != v.as_string() || where.open != at ||
        where.close != at + v.raw().size() - 1 || where.size != alone->size()) {
      return "canonical_string_at reads another string";
    }
    Tape again;
    if (!again.read_canonical(text, limits, &where) || !(again.root().to_value() == whole)) {
      return "read_canonical reads another value given a string as read";
    }
  }
  std::string why;
  v.each([&](std::string_view, View child) {
    why = string_disagreement(child, text, whole, limits, budget);
    return why.empty();
  });
  return why;
}

// An empty string when the two paths agree on `text`, else what differs.
inline std::string tape_disagreement(std::string_view text, const ReadLimits& limits) {
  const Result<Value> strict = parse(text, limits);
  const std::string canon = strict.ok() ? canonical(*strict) : std::string();
  Tape tape;
  std::string out = "kept";  // canonicalize appends, and leaves what was there on a decline
  const bool canonicalized = tape.canonicalize(text, limits, out);
  if (canonicalized && !strict.ok()) return "canonicalize accepts what parse() rejects";
  if (canonicalized && out != "kept" + canon) return "canonicalize writes other bytes";
  if (!canonicalized && out != "kept") return "canonicalize declined but changed its output";
  if (!canonicalized && strict.ok() && !has_exponent_past_308(text)) {
    return "canonicalize declines what parse() accepts";
  }
  const bool is_canonical = strict.ok() && canon == text;
  if (tape.read_canonical(text, limits) != is_canonical) {
    return is_canonical ? "read_canonical declines a canonical document"
                        : "read_canonical accepts a document that is not canonical";
  }
  if (is_canonical && !(tape.root().to_value() == *strict)) {
    return "read_canonical reads another value";
  }
  if (is_canonical && tape.root().raw() != text) return "the root's raw bytes are not the text";
  if (is_canonical) {
    int budget = 8;
    return string_disagreement(tape.root(), text, *strict, limits, budget);
  }
  return {};
}

}  // namespace mf::json::oracle
