// libFuzzer target for the strict JSON reader and the canonical writer.
// Accepted input: canonical(v) must be valid UTF-8, must re-parse, and must be a fixed point
// (canonical(parse(canonical(v))) == canonical(v)). Rejected input: at least one diagnostic, each
// with an MF- code and a 1-based line and column. Any violation traps so libFuzzer records the
// input. The same text read in windows (json::WindowedText) must give the same elements, value or
// diagnostics as read whole.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_limits.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"

namespace {

// Strict RFC 3629 UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF. Written from
// the RFC on purpose, not taken from mf/text: an oracle that shares the code under test cannot
// catch its mistakes.
bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    if (b0 < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    std::uint32_t cp = 0;
    std::uint32_t min = 0;
    if ((b0 & 0xe0) == 0xc0) {
      len = 2, cp = b0 & 0x1f, min = 0x80;
    } else if ((b0 & 0xf0) == 0xe0) {
      len = 3, cp = b0 & 0x0f, min = 0x800;
    } else if ((b0 & 0xf8) == 0xf0) {
      len = 4, cp = b0 & 0x07, min = 0x10000;
    } else {
      return false;
    }
    if (s.size() - i < len) return false;
    for (std::size_t k = 1; k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += len;
  }
  return true;
}

void check(bool condition) {
  if (!condition) __builtin_trap();
}

// What a streaming parse of `text` gives, the whole text at once (window 0) or read in windows of
// `window` bytes: the elements of "cases" with their offsets, then the value or the diagnostics.
std::string streamed(std::string_view text, const mf::json::ReadLimits& limits,
                     std::size_t window) {
  std::string out;
  const mf::json::OnElement each = [&](mf::json::Value&& v, std::size_t i, std::size_t begin,
                                       std::size_t end) {
    out += std::to_string(i) + " " + std::to_string(begin) + " " + std::to_string(end) + " " +
           mf::json::canonical(v) + "\n";
  };
  mf::Result<mf::json::Value> r = mf::json::Value();
  if (window == 0) {
    r = mf::json::parse_object_streaming(text, limits, "cases", each);
  } else {
    mf::json::WindowedText w;
    w.size = text.size();
    w.window_bytes = window;
    w.read_at = [&](char* into, std::size_t n, std::size_t offset) {
      const std::string_view part = text.substr(std::min(offset, text.size()), n);
      part.copy(into, part.size());
      return part.size();
    };
    r = mf::json::parse_object_streaming(w, limits, "cases", each);
  }
  if (r.ok()) return out + mf::json::canonical(r.value());
  for (const auto& d : r.diagnostics()) {
    out += d.code + " " + std::to_string(d.line) + ":" + std::to_string(d.column) + " " +
           d.pointer + " " + d.message + "\n";
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const mf::json::ReadLimits limits = mf::json::fuzz_limits();
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  // Read in windows (a suite file), the text gives what it gives whole.
  const std::string whole = streamed(text, limits, 0);
  for (std::size_t window : {std::size_t{1}, std::size_t{3}, std::size_t{64}}) {
    check(streamed(text, limits, window) == whole);
  }

  auto parsed = mf::json::parse(text, limits);
  if (!parsed.ok()) {
    const auto& diagnostics = parsed.diagnostics();
    check(!diagnostics.empty());
    for (const auto& d : diagnostics) {
      check(d.code.rfind("MF-", 0) == 0);
      check(d.line >= 1);
      check(d.column >= 1);
    }
    return 0;
  }

  const std::string canon = mf::json::canonical(parsed.value());
  check(valid_utf8(canon));
  // Canonical form may be longer than the input ("1e300" -> "1e+300"), so re-read with the
  // default limits; depth and entry counts are unchanged by canonicalization.
  auto reparsed = mf::json::parse(canon);
  check(reparsed.ok());
  check(mf::json::canonical(reparsed.value()) == canon);
  return 0;
}
