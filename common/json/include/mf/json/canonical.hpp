// RFC 8785 (JCS) canonical serialization and the canonical digest (docs/json.md).
// Members sorted by UTF-16 code units, ES6 shortest number form, minimal string escapes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mf/json/reader.hpp"
#include "mf/json/value.hpp"

namespace mf::json {

// Appends the canonical bytes of `v` (no trailing newline). Non-finite numbers cannot occur in a
// Value read by the strict reader; a constructed one is written as null, as ES6 JSON.stringify
// does.
void write_canonical(const Value& v, std::string& out);
std::string canonical(const Value& v);
// Canonical file form: the canonical bytes followed by one '\n'.
std::string canonical_file(const Value& v);

// Lowercase hex SHA-256 of the canonical bytes (without the trailing newline).
std::string canonical_digest(const Value& v);

// ES6 Number::toString for a finite double ("1e+21", "0.000001", "1e-7", "-0" -> "0").
void write_number(double d, std::string& out);
// A JSON string literal with JCS's minimal escaping.
void write_string(std::string_view s, std::string& out);
// The letter JCS escapes `c` with after a backslash ('"', '\\' and five controls), or 0 for a
// character it writes raw or, below U+0020, as \u00xx.
char short_escape(unsigned char c);

// Three-way comparison of two UTF-8 strings by their UTF-16 code units (<0, 0, >0).
int compare_utf16(std::string_view a, std::string_view b);

// JSON text to its canonical form in one pass, with no tree and no decoded copy of the strings:
// each token is written in its canonical form as it is read, and an object whose keys arrive out
// of order has its finished members moved into order when it closes. It accepts exactly what the
// tape (tape.hpp) accepts, under the same limits, and declines the rest for the strict reader to
// judge. Scratch buffers are kept between calls.
class Canonicalizer {
 public:
  // Appends canonical(parse(text)) to `out` and returns true; or returns false with `out`
  // unchanged, declining.
  bool append(std::string_view text, const ReadLimits& limits, std::string& out);

 private:
  struct Member {
    std::uint32_t begin = 0, end = 0;  // the member's written bytes in buf_, key to value
    std::uint32_t key = 0, size = 0;   // its decoded key: in buf_, or in keys_ when decoded
    bool decoded = false;
  };
  struct Frame {
    bool object = false;
    std::uint32_t count = 0;    // entries so far
    std::uint32_t members = 0;  // objects: index of the first member in members_
  };

  std::string_view key_text(const Member& m) const;
  bool sort_members(std::uint32_t first);

  std::vector<char> buf_;  // this document's canonical bytes
  std::vector<Frame> open_;
  std::vector<Member> members_;  // of the open objects, innermost last
  std::string keys_;             // keys written with escapes, decoded for comparison
  std::vector<std::uint32_t> order_;
  std::vector<char> moved_;
};

}  // namespace mf::json
