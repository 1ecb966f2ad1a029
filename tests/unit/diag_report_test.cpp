#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "mf/diag/codes.hpp"
#include "mf/diag/report.hpp"
#include "mf/diag/secrets.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/diagnostics.hpp"
#include "mf/text/utf8.hpp"

namespace mf::diag {
namespace {

TEST(DiagReport, RendersTextWithSourcePositionAndPointer) {
  const Diagnostic d = error("MF-S006", "duplicate object key \"k\"", "/a/k", 3, 9);
  EXPECT_EQ(render_text(d, "h.json"),
            "h.json:3:9: error MF-S006: duplicate object key \"k\" (at /a/k)");
  EXPECT_EQ(render_text(error("MF-I001", "boom")), "error MF-I001: boom");
}

// The command's input is put before the diagnostics about it, not before those of the command
// line, of an output or of the program; a diagnostic about another file names that file.
TEST(DiagReport, TheSourceIsTheFileTheDiagnosticIsAbout) {
  EXPECT_EQ(render_text(error("MF-U001", "unsupported model \"bad\""), "plan.json"),
            "error MF-U001: unsupported model \"bad\"");
  EXPECT_EQ(render_text(error("MF-S018", "--stage: bad"), "h.yaml"), "error MF-S018: --stage: bad");
  EXPECT_EQ(render_text(error("MF-O003", "cannot write"), "plan.json"),
            "error MF-O003: cannot write");
  EXPECT_EQ(render_text(error("MF-I001", "boom"), "plan.json"), "error MF-I001: boom");
  Diagnostic missing = error("MF-S013", "no such input file");
  missing.source = "nope.json";
  EXPECT_EQ(render_text(missing, "plan.json"), "nope.json: error MF-S013: no such input file");
  EXPECT_EQ(render_text(error("MF-S011", "invalid value", "", 1, 1), "plan.json"),
            "plan.json:1:1: error MF-S011: invalid value");
}

// Text added to a message or pointer after diag::error built it is redacted all the same.
TEST(DiagReport, EveryPartOfTheLineIsRedacted) {
  const std::string key = "sk-ant-api03-" + std::string(40, 'A');
  Diagnostic d = error("MF-S013", "no such input file");
  d.message = key + ": " + d.message;
  d.pointer = "/" + key;
  d.source = key + ".yml";
  const std::string line = render_text(d);
  EXPECT_EQ(line.find("sk-ant"), std::string::npos) << line;
  EXPECT_EQ(line, "[REDACTED].yml: error MF-S013: [REDACTED]: no such input file (at /[REDACTED])");
}

// What a server or an input file names reaches a terminal: nothing in it may act on the terminal
// or reorder the line.
TEST(DiagReport, TextEscapesC0DelAndBytesOfNoUtf8Sequence) {
  EXPECT_EQ(printable("a\x1b[31mb\x07"
                      "c"),
            "a\\x1b[31mb\\x07c");
  EXPECT_EQ(printable("line\nnext\r\t"), "line\\x0anext\\x0d\\x09");
  EXPECT_EQ(printable(std::string("nul\0", 4)), "nul\\x00");
  EXPECT_EQ(printable("del\x7f"), "del\\x7f");
  EXPECT_EQ(printable("raw\x9b"), "raw\\x9b");  // an 8-bit CSI outside any UTF-8 sequence
  EXPECT_EQ(printable("cut\xe2\x80"), "cut\\xe2\\x80");
}

TEST(DiagReport, TextEscapesC1AndLineSeparators) {
  EXPECT_EQ(printable("csi\u009b2J"), "csi\\u{009B}2J");
  EXPECT_EQ(printable("nel\u0085"), "nel\\u{0085}");
  EXPECT_EQ(printable("\u0080\u009f"), "\\u{0080}\\u{009F}");
  EXPECT_EQ(printable("a\u2028b\u2029"), "a\\u{2028}b\\u{2029}");
}

TEST(DiagReport, TextEscapesEveryBidiControl) {
  for (const char32_t c : {0x061CU, 0x200EU, 0x200FU, 0x202AU, 0x202BU, 0x202CU, 0x202DU, 0x202EU,
                           0x2066U, 0x2067U, 0x2068U, 0x2069U}) {
    std::string raw = "x";
    text::append_utf8(c, raw);
    char want[16];
    std::snprintf(want, sizeof want, "x\\u{%04X}", static_cast<unsigned>(c));
    EXPECT_EQ(printable(raw), want) << std::hex << static_cast<unsigned>(c);
  }
}

TEST(DiagReport, TextKeepsPrintableUnicodeAsItIs) {
  const std::string kept = "caf\u00e9 \u65e5\u672c \U0001F600 \u200d \u00a0 \\x1b quote\"";
  EXPECT_EQ(printable(kept), kept);
}

TEST(DiagReport, RenderedLineEscapesMessagePointerAndSource) {
  const Diagnostic d =
      error("MF-S021", "unknown member 'a\x1b]0;owned\x07\u202eb'", "/a\x1b[2J\u202e", 2, 3);
  const std::string line = render_text(d, "in\nput.json");
  EXPECT_EQ(line,
            "in\\x0aput.json:2:3: error MF-S021: unknown member 'a\\x1b]0;owned\\x07\\u{202E}b' "
            "(at /a\\x1b[2J\\u{202E})");
  for (const unsigned char c : line) EXPECT_TRUE(c >= 0x20 && c != 0x7F) << int(c);
  // The JSON form keeps the text exact; JSON's own rules escape the C0 controls.
  EXPECT_EQ(json::canonical(json::to_json(d)),
            "{\"code\":\"MF-S021\",\"column\":3,\"line\":2,\"message\":\"unknown member "
            "'a\\u001b]0;owned\\u0007\u202eb'\",\"pointer\":\"/a\\u001b[2J\u202e\","
            "\"severity\":\"error\"}");
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
  // The warning counts toward the bound (Millforge's sentinel: 128 in all, D001 included).
  ASSERT_EQ(ds.size(), 3u);
  EXPECT_EQ(ds[1].message, "bad 1");
  EXPECT_EQ(ds[2].code, "MF-D001");
  EXPECT_EQ(ds[2].severity, Severity::Warning);
  EXPECT_EQ(ds[2].message, "8 further diagnostics were dropped (report limit)");
  EXPECT_EQ(r.dropped(), 8u);
  EXPECT_TRUE(r.has_errors());
}

TEST(DiagReport, AFullReportWithoutOverflowHasNoWarning) {
  Report r;
  for (int i = 0; i < 128; ++i) r.add(error("MF-S020", "bad " + std::to_string(i)));
  EXPECT_EQ(r.diagnostics().size(), 128u);
  EXPECT_EQ(r.diagnostics().back().message, "bad 127");
  EXPECT_EQ(r.dropped(), 0u);
  r.add(error("MF-S020", "bad 128"));
  const Diagnostics ds = r.diagnostics();
  ASSERT_EQ(ds.size(), 128u);
  EXPECT_EQ(ds[126].message, "bad 126");
  EXPECT_EQ(ds.back().code, "MF-D001");
  EXPECT_EQ(r.dropped(), 2u);
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
  std::size_t total = 0;
  for (const auto& d : r.diagnostics()) total += d.code.size() + d.message.size() + 96;
  EXPECT_LE(total, 2000u);
}

}  // namespace
}  // namespace mf::diag

namespace mf::diag {
namespace {

TEST(DiagExitClass, EachCodeCarriesItsExitStatus) {
  using mf::diag::exit_status;
  using mf::diag::Job;
  namespace codes = mf::diag::codes;
  const auto one = [](const char* code) { return Diagnostics{mf::diag::error(code, "m")}; };
  EXPECT_EQ(exit_status(one(codes::kDuplicateKey)), 2);
  EXPECT_EQ(exit_status(one(codes::kStoreLmdb)), 3);  // an I/O error of the store
  EXPECT_EQ(exit_status(one(codes::kStoreCorrupt)), 3);
  EXPECT_EQ(exit_status(one(codes::kWriteFailed)), 3);
  EXPECT_EQ(exit_status(one(codes::kInternal)), 3);
  // An integrity failure is the outcome of a check, and a refused input elsewhere.
  EXPECT_EQ(exit_status(one(codes::kTraceSeqBroken), Job::Check), 1);
  EXPECT_EQ(exit_status(one(codes::kTraceSeqBroken), Job::Work), 2);
  EXPECT_EQ(exit_status(one(codes::kPlanHash), Job::Check), 1);
  EXPECT_EQ(exit_status(one(codes::kPlanHash)), 2);
  EXPECT_EQ(exit_status(one(codes::kLoweringInvariant), Job::Check), 3);
  // The gravest class wins, whatever the order.
  Diagnostics mixed = one(codes::kSchema);
  mixed.push_back(mf::diag::error(codes::kStoreLmdb, "m"));
  mixed.push_back(mf::diag::error(codes::kTraceSeqBroken, "m"));
  EXPECT_EQ(exit_status(mixed, Job::Check), 3);
  // A code nobody declared cannot be trusted to be a refusal; warnings do not raise the status.
  EXPECT_EQ(exit_status(one("MF-Z999")), 3);
  Diagnostics warning = one(codes::kStoreLmdb);
  warning[0].severity = mf::diag::Severity::Warning;
  EXPECT_EQ(exit_status(warning), 2);
}

// Every code is in docs/diagnostics.md, and where its table row gives an exit status, that status
// is the one its exit class gives (Integrity as the outcome of a check).
TEST(DiagExitClass, EveryCodeIsDocumentedWithItsExit) {
  const std::string doc = [] {
    std::ifstream in(std::string(MF_SOURCE_DIR) + "/docs/diagnostics.md");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  ASSERT_FALSE(doc.empty());
  int rows = 0;
  for (const char* code : {
#define MF_CODE(name, id, exit_class) id,
#include "mf/diag/codes.def"
#undef MF_CODE
       }) {
    EXPECT_NE(doc.find(code), std::string::npos) << code << " is not in docs/diagnostics.md";
    const std::size_t row = doc.find("\n| `" + std::string(code) + "` |");
    if (row == std::string::npos) continue;
    const std::string line = doc.substr(row + 1, doc.find('\n', row + 1) - row - 1);
    const std::size_t last = line.rfind('|', line.size() - 2);
    std::string exit = line.substr(last + 1, line.size() - last - 2);
    exit.erase(0, exit.find_first_not_of(' '));
    exit.erase(exit.find_last_not_of(' ') + 1);
    if (exit == "—") continue;  // a warning
    ++rows;
    EXPECT_EQ(exit, std::to_string(exit_status({error(code, "m")}, Job::Check))) << code;
  }
  EXPECT_GT(rows, 90);
}

}  // namespace
}  // namespace mf::diag

namespace mf::diag {
namespace {

// A key glued to a word, inside an identifier, after a path separator: found and redacted in
// every position; hyphenated words without a digit are not keys.
TEST(DiagSecrets, KeysAreFoundWhateverPrecedesThem) {
  const std::string key = "sk-proj-4f9Xa8Qm2LwZ7bT1cV0dE3";
  for (const std::string& text :
       {key, "X" + key, "token_" + key, "path/" + key + "/x", "a=" + key, "\"" + key + "\""}) {
    EXPECT_TRUE(find_secret(text).has_value()) << text;
    const std::string redacted = redact_secrets(text);
    EXPECT_EQ(redacted.find("4f9Xa8Qm2LwZ7bT1cV0dE3"), std::string::npos) << redacted;
  }
  EXPECT_TRUE(find_secret("id_AKIAABCDEFGHIJKLMNOP").has_value());
  EXPECT_TRUE(find_secret("v=ghp_abcdefghijklmnopqrstuvwxyz0123456789").has_value());
  EXPECT_FALSE(find_secret("task-management-system-overview-page").has_value());
  EXPECT_FALSE(find_secret("desk-lamp").has_value());
  EXPECT_EQ(redact_secrets("X" + key + " y"), "X[REDACTED] y");
  // The pre-filter skips "task-" and "risk-" but never a key after them, nor a token whose
  // prefix is only a part of the text ("gh" in "high").
  EXPECT_TRUE(find_secret("task-a risk-b \"" + key + "\" disk-c").has_value());
  EXPECT_FALSE(find_secret("a high-risk-review of the length of things").has_value());
  EXPECT_TRUE(find_secret("high ghs_abcdefghijklmnopqrstuvwxyz0123456789").has_value());
  EXPECT_TRUE(find_secret(std::string(3000, 'x') + "sk-" + std::string(19, 'a') + " sk-" +
                          std::string(24, 'b') + "9")
                  .has_value());
}

TEST(DiagSecrets, RenderedDiagnosticsRedactSourceMessageAndPointer) {
  const std::string key = "Xsk-4f9Xa8Qm2LwZ7bT1cV0dE3abc";
  const Diagnostic d = error("MF-S013", "cannot open " + key, "/" + key, 1, 2);
  const std::string text = render_text(d, "/tmp/" + key + ".yaml");
  EXPECT_EQ(text.find("4f9Xa8Qm2LwZ7bT1cV0dE3"), std::string::npos) << text;
  EXPECT_NE(text.find("[REDACTED]"), std::string::npos) << text;
}

}  // namespace
}  // namespace mf::diag
