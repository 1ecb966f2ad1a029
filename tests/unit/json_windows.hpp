// Test helper shared by the unit and conformance tests: a document parsed whole and through
// windows of many sizes (json::WindowedText), with what each parse gives compared.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"

namespace mf::test {

// What one streaming parse gives: the outcome (the value, or every diagnostic with its code,
// pointer, line, column and message) and each streamed element with its index and byte range.
inline std::string streamed_parse(std::string_view text, const json::ReadLimits& limits,
                                  std::string_view key, std::size_t window) {
  std::string seen;
  const json::OnElement each = [&](json::Value&& v, std::size_t i, std::size_t begin,
                                   std::size_t end) {
    seen += "element " + std::to_string(i) + " [" + std::to_string(begin) + "," +
            std::to_string(end) + ") " + json::canonical(v) + "\n";
  };
  Result<json::Value> r = json::Value();
  std::string windows;  // what on_window was given, in order
  std::size_t largest = 0;
  if (window == 0) {
    r = json::parse_object_streaming(text, limits, key, each);
  } else {
    json::WindowedText w;
    w.size = text.size();
    w.window_bytes = window;
    w.read_at = [&](char* into, std::size_t n, std::size_t offset) {
      if (offset >= text.size()) return std::size_t{0};
      n = std::min(n, text.size() - offset);
      std::memcpy(into, text.data() + offset, n);
      return n;
    };
    w.on_window = [&](std::string_view bytes) {
      windows += bytes;
      largest = std::max(largest, bytes.size());
    };
    r = json::parse_object_streaming(w, limits, key, each);
    EXPECT_LE(largest, window);
    // On success the windows are the whole text; on a refusal, the text up to where it stopped.
    EXPECT_EQ(windows, r.ok() ? std::string(text) : std::string(text.substr(0, windows.size())));
  }
  if (r.ok()) return seen + "accepted " + json::canonical(*r);
  for (const auto& d : r.diagnostics()) {
    seen += d.code + " " + std::to_string(d.line) + ":" + std::to_string(d.column) + " [" +
            d.pointer + "] " + d.message + "\n";
  }
  return seen;
}

// Parses `text` whole and through windows of 1, 2, 3, 7, 64 and 4096 bytes and of the whole text,
// and expects the same from each. Returns the whole parse's result.
inline std::string expect_same_through_windows(std::string_view text,
                                               const json::ReadLimits& limits = {},
                                               std::string_view key = "cases") {
  const std::string whole = streamed_parse(text, limits, key, 0);
  for (std::size_t window : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{7},
                             std::size_t{64}, std::size_t{4096}, text.size() + 1}) {
    EXPECT_EQ(streamed_parse(text, limits, key, window), whole)
        << "window of " << window << " bytes, text: " << text.substr(0, 200);
  }
  return whole;
}

}  // namespace mf::test
