#include <gtest/gtest.h>

#include "mf/diag/report.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/diagnostics.hpp"

namespace mf::diag {
namespace {

TEST(DiagReport, RendersTextWithSourcePositionAndPointer) {
  const Diagnostic d = error("MF-S006", "duplicate object key \"k\"", "/a/k", 3, 9);
  EXPECT_EQ(render_text(d, "h.json"),
            "h.json:3:9: error MF-S006: duplicate object key \"k\" (at /a/k)");
  EXPECT_EQ(render_text(error("MF-I001", "boom")), "error MF-I001: boom");
}

TEST(DiagReport, JsonFormMatchesSpec) {
  const Diagnostic d = error("MF-S006", "m", "/graph/nodes/a", 12, 5);
  EXPECT_EQ(
      json::canonical(json::to_json(d)),
      R"({"code":"MF-S006","column":5,"line":12,"message":"m","pointer":"/graph/nodes/a","severity":"error"})");
}

TEST(DiagReport, BoundsCountAndAnnouncesTruncation) {
  Report r(ReportLimits{3, 1024, 1 << 20});
  for (int i = 0; i < 10; ++i) r.add(error("MF-S020", "bad " + std::to_string(i)));
  const Diagnostics ds = r.diagnostics();
  ASSERT_EQ(ds.size(), 4u);
  EXPECT_EQ(ds[2].message, "bad 2");
  EXPECT_EQ(ds[3].code, "MF-D001");
  EXPECT_EQ(ds[3].severity, Severity::Warning);
  EXPECT_EQ(r.dropped(), 7u);
  EXPECT_TRUE(r.has_errors());
}

TEST(DiagReport, CutsLongMessagesAtUtf8Boundary) {
  Report r(ReportLimits{10, 8, 1 << 20});
  r.add(error("MF-S020", "abcdefg\xC3\xA9xyz"));  // 'é' straddles the 8-byte cut
  EXPECT_EQ(r.diagnostics()[0].message, "abcdefg...");
}

TEST(DiagReport, BoundsTotalSize) {
  Report r(ReportLimits{1000, 1024, 2000});
  for (int i = 0; i < 100; ++i) r.add(error("MF-S020", std::string(500, 'x')));
  EXPECT_LT(r.diagnostics().size(), 5u);
  EXPECT_EQ(r.diagnostics().back().code, "MF-D001");
}

}  // namespace
}  // namespace mf::diag
