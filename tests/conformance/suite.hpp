// What the conformance tests share: skipping when a suite is not installed, and how a reader's
// outcome is named, described and checked.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "mf/json/canonical.hpp"
#include "mf/json/value.hpp"

namespace mf::conformance {

inline constexpr const char* kAccept = "accept";

// GTEST_SKIP()s the test when `dir` holds no suite; `hint` says where it comes from.
#define MF_REQUIRE_SUITE_AT(dir, what, hint)                                             \
  do {                                                                                   \
    if (!std::filesystem::is_directory(dir))                                             \
      GTEST_SKIP() << what << " not found at " << (dir).string() << " (" << hint << ")"; \
  } while (0)

// "accept", or the first diagnostic's code.
inline std::string outcome(const Result<json::Value>& r) {
  if (r.ok()) return kAccept;
  return r.diagnostics().empty() ? std::string("reject without a diagnostic")
                                 : r.diagnostics().front().code;
}

// The outcome with the value read or the diagnostic's position, pointer and message.
inline std::string describe(const Result<json::Value>& r) {
  if (r.ok()) return "accepted as " + json::canonical(*r);
  if (r.diagnostics().empty()) return outcome(r);
  const auto& d = r.diagnostics().front();
  return d.code + " at " + std::to_string(d.line) + ":" + std::to_string(d.column) + " [" +
         d.pointer + "] " + d.message;
}

// A refusal carries exactly one well-formed diagnostic.
inline void expect_good_diagnostic(const Result<json::Value>& r) {
  ASSERT_EQ(r.diagnostics().size(), 1u);
  const auto& d = r.diagnostics().front();
  EXPECT_TRUE(d.code.starts_with("MF-S")) << d.code;
  EXPECT_FALSE(d.message.empty());
  EXPECT_GE(d.line, 1);
  EXPECT_GE(d.column, 1);
  EXPECT_TRUE(d.pointer.empty() || d.pointer.front() == '/') << d.pointer;
}

}  // namespace mf::conformance
