// The rule that holds the tape (the reader's fast path) to the strict reader, shared by the
// tape_differential fuzz target and the conformance suites: whatever the tape accepts, parse()
// accepts with the same meaning; whatever parse() accepts, the tape does not decline.
#pragma once

#include <string>
#include <string_view>

#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"
#include "mf/json/tape.hpp"

namespace mf::json::oracle {

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
  if (!canonicalized && strict.ok()) return "canonicalize declines what parse() accepts";
  const bool is_canonical = strict.ok() && canon == text;
  if (tape.read_canonical(text, limits) != is_canonical) {
    return is_canonical ? "read_canonical declines a canonical document"
                        : "read_canonical accepts a document that is not canonical";
  }
  if (is_canonical && !(tape.root().to_value() == *strict)) {
    return "read_canonical reads another value";
  }
  if (is_canonical && tape.root().raw() != text) return "the root's raw bytes are not the text";
  return {};
}

}  // namespace mf::json::oracle
