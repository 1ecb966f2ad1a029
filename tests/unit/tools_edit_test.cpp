// The edit tool: Pi's own edit cases (tools.test.ts, edit-tool-legacy-input.test.ts,
// file-mutation-queue.test.ts) against the pure core and through run_edit, plus every refusal.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "edit_core.hpp"
#include "jsdiff.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"
#include "mf/tools/pack.hpp"

namespace {

namespace fs = std::filesystem;
using mf::tools::apply_edits;
using mf::tools::Edit;
using mf::tools::EditOutcome;
using mf::tools::ToolResult;

mf::json::Value parse(std::string_view text) {
  auto v = mf::json::parse(text);
  EXPECT_TRUE(v.ok()) << text;
  return v.ok() ? *v : mf::json::Value();
}

std::string edited(std::string_view original, std::vector<Edit> edits,
                   std::string_view path = "f.txt") {
  auto r = apply_edits(original, edits, path);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.diagnostics().front().message);
  return r.ok() ? r->content : std::string("<error>");
}

std::string refusal(std::string_view original, std::vector<Edit> edits,
                    std::string_view path = "f.txt") {
  auto r = apply_edits(original, edits, path);
  EXPECT_FALSE(r.ok());
  return r.ok() ? std::string("<ok>") : r.diagnostics().front().message;
}

// Applies a unified patch the way jsdiff's applyPatch does for a clean patch: every context and
// removed line must be found at its stated place.
std::optional<std::string> apply_patch(const std::string& original, const std::string& patch) {
  std::vector<std::string> lines;
  {
    std::size_t start = 0;
    while (start <= original.size()) {
      const auto nl = original.find('\n', start);
      if (nl == std::string::npos) {
        lines.push_back(original.substr(start));
        break;
      }
      lines.push_back(original.substr(start, nl - start));
      start = nl + 1;
    }
  }
  std::vector<std::string> patch_lines;
  {
    std::istringstream in(patch);
    for (std::string l; std::getline(in, l);) patch_lines.push_back(l);
  }
  std::vector<std::string> out;
  std::size_t next = 0;  // next original line (0-based) not yet copied
  bool old_has_newline = true;
  bool new_has_newline = true;
  char last_mark = ' ';
  for (std::size_t i = 2; i < patch_lines.size(); ++i) {
    const std::string& l = patch_lines[i];
    if (l.rfind("@@ -", 0) == 0) {
      std::size_t old_start = std::stoul(l.substr(4));
      const std::size_t old_count = std::stoul(l.substr(l.find(',') + 1));
      if (old_count == 0) ++old_start;
      const std::size_t first = old_start - 1;
      if (first < next) return std::nullopt;
      while (next < first) out.push_back(lines[next++]);
      continue;
    }
    if (l == "\\ No newline at end of file") {
      if (last_mark != '+') old_has_newline = false;
      if (last_mark != '-') new_has_newline = false;
      continue;
    }
    last_mark = l[0];
    const std::string text = l.substr(1);
    if (l[0] == ' ' || l[0] == '-') {
      if (next >= lines.size() || lines[next] != text) return std::nullopt;
      ++next;
      if (l[0] == ' ') out.push_back(text);
    } else if (l[0] == '+') {
      out.push_back(text);
    }
  }
  while (next < lines.size()) out.push_back(lines[next++]);
  // The split above yields a final "" for a text ending in "\n"; an edit at the end says so.
  if (!old_has_newline && !out.empty() && new_has_newline) out.push_back("");
  if (old_has_newline && !new_has_newline && !out.empty() && out.back().empty()) out.pop_back();
  std::string joined;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (i > 0) joined += "\n";
    joined += out[i];
  }
  return joined;
}

void expect_patch_applies(std::string_view original, std::vector<Edit> edits) {
  auto r = apply_edits(original, edits, "f.txt");
  ASSERT_TRUE(r.ok()) << r.diagnostics().front().message;
  // The patch is over the LF-normalized, BOM-less texts.
  auto applied = apply_patch(std::string(original), r->patch);
  ASSERT_TRUE(applied.has_value()) << r->patch;
  EXPECT_EQ(*applied, r->content) << r->patch;
}

// --- The pure core: Pi's cases ---

TEST(ToolsEdit, ReplacesTextWithDiffAndPatch) {
  auto r = apply_edits("Hello, world!", {{"world", "testing"}}, "test.txt");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->content, "Hello, testing!");
  EXPECT_EQ(r->diff, "-1 Hello, world!\n+1 Hello, testing!");
  EXPECT_EQ(r->patch,
            "--- test.txt\n+++ test.txt\n@@ -1,1 +1,1 @@\n-Hello, world!\n"
            "\\ No newline at end of file\n+Hello, testing!\n\\ No newline at end of file\n");
  EXPECT_EQ(r->first_changed_line, 1u);
  EXPECT_EQ(apply_patch("Hello, world!", r->patch), "Hello, testing!");
}

TEST(ToolsEdit, TextNotFound) {
  EXPECT_EQ(refusal("Hello, world!", {{"nonexistent", "x"}}),
            "Could not find the exact text in f.txt. The old text must match exactly including "
            "all whitespace and newlines.");
}

TEST(ToolsEdit, DuplicateText) {
  EXPECT_EQ(refusal("foo foo foo", {{"foo", "bar"}}),
            "Found 3 occurrences of the text in f.txt. The text must be unique. Please provide "
            "more context to make it unique.");
}

TEST(ToolsEdit, MultipleEdits) {
  auto r = apply_edits("alpha\nbeta\ngamma\ndelta\n",
                       {{"alpha\n", "ALPHA\n"}, {"gamma\n", "GAMMA\n"}}, "f.txt");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->content, "ALPHA\nbeta\nGAMMA\ndelta\n");
  EXPECT_EQ(r->diff, "-1 alpha\n+1 ALPHA\n 2 beta\n-3 gamma\n+3 GAMMA\n 4 delta");
  EXPECT_EQ(r->patch,
            "--- f.txt\n+++ f.txt\n@@ -1,4 +1,4 @@\n-alpha\n+ALPHA\n beta\n-gamma\n+GAMMA\n "
            "delta\n");
}

TEST(ToolsEdit, DistantEditsKeepTheDiffShort) {
  std::string text;
  for (int i = 1; i <= 600; ++i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "line %03d\n", i);
    text += buf;
  }
  auto r = apply_edits(
      text,
      {{"line 100\n", "LINE 100\n"}, {"line 300\n", "LINE 300\n"}, {"line 500\n", "LINE 500\n"}},
      "f.txt");
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r->diff.find("LINE 100"), std::string::npos);
  EXPECT_NE(r->diff.find("LINE 300"), std::string::npos);
  EXPECT_NE(r->diff.find("LINE 500"), std::string::npos);
  EXPECT_NE(r->diff.find("..."), std::string::npos);
  EXPECT_EQ(r->diff.find("line 250"), std::string::npos);
  EXPECT_LT(std::count(r->diff.begin(), r->diff.end(), '\n') + 1, 50);
  EXPECT_EQ(r->first_changed_line, 100u);
  // Width 3 (601 lines), 4 lines of context each side, "..." for the rest.
  EXPECT_EQ(r->diff.substr(0, 60),
            "     ...\n  96 line 096\n  97 line 097\n  98 line 098\n  99 line");
  expect_patch_applies(text, {{"line 100\n", "LINE 100\n"}, {"line 300\n", "LINE 300\n"}});
}

TEST(ToolsEdit, EditsMatchTheOriginalNotEachOther) {
  EXPECT_EQ(edited("foo\nbar\nbaz\n", {{"foo\n", "foo bar\n"}, {"bar\n", "BAR\n"}}),
            "foo bar\nBAR\nbaz\n");
}

TEST(ToolsEdit, OverlappingEdits) {
  EXPECT_EQ(refusal("one\ntwo\nthree\n", {{"one\ntwo\n", "ONE\nTWO\n"}, {"two\nthree\n", "x\n"}}),
            "edits[0] and edits[1] overlap in f.txt. Merge them into one edit or target disjoint "
            "regions.");
  // Reported in file order, whatever the order of the edits.
  EXPECT_EQ(refusal("one\ntwo\nthree\n", {{"two\nthree\n", "x\n"}, {"one\ntwo\n", "y\n"}}),
            "edits[1] and edits[0] overlap in f.txt. Merge them into one edit or target disjoint "
            "regions.");
}

TEST(ToolsEdit, MultiEditRefusalsNameTheEdit) {
  EXPECT_EQ(refusal("alpha\nbeta\n", {{"alpha\n", "A\n"}, {"missing\n", "M\n"}}),
            "Could not find edits[1] in f.txt. The oldText must match exactly including all "
            "whitespace and newlines.");
  EXPECT_EQ(refusal("x\nx\ny\n", {{"x\n", "X\n"}, {"y", "Y"}}),
            "Found 2 occurrences of edits[0] in f.txt. Each oldText must be unique. Please "
            "provide more context to make it unique.");
  EXPECT_EQ(refusal("abc", {{"", "x"}}), "oldText must not be empty in f.txt.");
  EXPECT_EQ(refusal("abc", {{"a", "b"}, {"", "x"}}),
            "edits[1].oldText must not be empty in f.txt.");
  // A lone CR is a line end, so this oldText is "\n", which is not in the text.
  EXPECT_EQ(refusal("abc", {{"\r", "x"}}),
            "Could not find the exact text in f.txt. The old text must match exactly including "
            "all whitespace and newlines.");
}

TEST(ToolsEdit, NoChangeRefusals) {
  EXPECT_EQ(refusal("abc", {{"b", "b"}}),
            "No changes made to f.txt. The replacement produced identical content. This might "
            "indicate an issue with special characters or the text not existing as expected.");
  EXPECT_EQ(refusal("abc", {{"a", "a"}, {"c", "c"}}),
            "No changes made to f.txt. The replacements produced identical content.");
}

// --- Fuzzy matching ---

TEST(ToolsEdit, FuzzyTrailingWhitespace) {
  EXPECT_EQ(
      edited("line one   \nline two  \nline three\n", {{"line one\nline two\n", "replaced\n"}}),
      "replaced\nline three\n");
}

TEST(ToolsEdit, FuzzyNfkcFullwidth) {
  EXPECT_EQ(
      edited("你好，世界\n你好（世界）\n", {{"你好,世界\n你好(世界)\n", "你好，pi\n你好(pi)\n"}}),
      "你好，pi\n你好(pi)\n");
  EXPECT_EQ(edited("ＡＢＣ１２３\ncafe\u0301\n", {{"ABC123\ncafé\n", "XYZ789\ncoffee\n"}}),
            "XYZ789\ncoffee\n");
}

TEST(ToolsEdit, FuzzyQuotesDashesSpaces) {
  EXPECT_EQ(edited("say \u2018hello\u2019\n", {{"say 'hello'\n", "say hi\n"}}), "say hi\n");
  EXPECT_EQ(edited("\u201CHello World\u201D\n", {{"\"Hello World\"\n", "bye\n"}}), "bye\n");
  EXPECT_EQ(edited("a \u2013 b \u2014 c\n", {{"a - b - c", "abc"}}), "abc\n");
  EXPECT_EQ(edited("x\u00A0y\n", {{"x y", "xy"}}), "xy\n");
  EXPECT_EQ(edited("minus \u2212 sign\n", {{"minus - sign", "ok"}}), "ok\n");
}

TEST(ToolsEdit, FuzzyUniquenessIsCountedInFuzzySpace) {
  EXPECT_EQ(refusal("hello world   \nhello world\n", {{"hello world", "x"}}),
            "Found 2 occurrences of the text in f.txt. The text must be unique. Please provide "
            "more context to make it unique.");
}

TEST(ToolsEdit, FuzzyMultiEdit) {
  EXPECT_EQ(edited("a = \u2018x\u2019  \nb = 1\nc = 2\n",
                   {{"a = 'x'\n", "a = 'y'\n"}, {"c = 2\n", "c = 3\n"}}),
            "a = 'y'\nb = 1\nc = 3\n");
}

TEST(ToolsEdit, FuzzyKeepsUntouchedLines) {
  EXPECT_EQ(edited("replace me   \nafter   \n", {{"replace me\n", "after\n"}}),
            "after\nafter   \n");
  expect_patch_applies("replace me   \nafter   \n", {{"replace me\n", "after\n"}});

  const std::string original =
      "keep before  \nfirst target   \nfirst after\nkeep middle   \nsecond target  \nsecond "
      "after\n";
  const std::vector<Edit> edits{{"first target\nfirst after\n", "FIRST\nFIRST2\n"},
                                {"second target\nsecond after\n", "SECOND\nSECOND2\n"}};
  EXPECT_EQ(edited(original, edits),
            "keep before  \nFIRST\nFIRST2\nkeep middle   \nSECOND\nSECOND2\n");
  expect_patch_applies(original, edits);
}

TEST(ToolsEdit, FuzzyNormalization) {
  using mf::tools::normalize_for_fuzzy_match;
  EXPECT_EQ(normalize_for_fuzzy_match("a  \nb\t\n c \u00A0\u2003\n"), "a\nb\n c\n");
  // trimEnd takes U+FEFF, U+1680 and the line separators too.
  EXPECT_EQ(normalize_for_fuzzy_match("x\uFEFF\ny\u1680\nz\u2028"), "x\ny\nz");
  EXPECT_EQ(normalize_for_fuzzy_match("\u2018\u201B\u201C\u201F\u2010\u2015\u2212"), "''\"\"---");
  EXPECT_EQ(normalize_for_fuzzy_match("ﬁ ①"), "fi 1");  // compatibility forms fold
  EXPECT_EQ(normalize_for_fuzzy_match(""), "");
  EXPECT_EQ(normalize_for_fuzzy_match("\n\n"), "\n\n");
}

// --- Line endings and BOM ---

TEST(ToolsEdit, CrlfIsKept) {
  EXPECT_EQ(edited("first\r\nsecond\r\nthird\r\n", {{"second\n", "REPLACED\n"}}),
            "first\r\nREPLACED\r\nthird\r\n");
  EXPECT_EQ(edited("first\nsecond\nthird\n", {{"second\n", "REPLACED\n"}}),
            "first\nREPLACED\nthird\n");
  // oldText written with CRLF still matches (it is normalized too).
  EXPECT_EQ(edited("a\r\nb\r\n", {{"a\r\nb", "c\r\nd"}}), "c\r\nd\r\n");
  // Only the first line ending decides; a lone CR counts as a line end.
  EXPECT_EQ(edited("a\nb\r\nc\rd", {{"c\nd", "x"}}), "a\nb\nx");
}

TEST(ToolsEdit, CrlfAndLfMatchAlike) {
  EXPECT_EQ(refusal("hello\r\nworld\r\n---\r\nhello\nworld\n", {{"hello\nworld\n", "x\n"}}),
            "Found 2 occurrences of the text in f.txt. The text must be unique. Please provide "
            "more context to make it unique.");
}

TEST(ToolsEdit, BomIsKept) {
  EXPECT_EQ(edited("\uFEFFfirst\r\nsecond\r\nthird\r\n", {{"second\n", "REPLACED\n"}}),
            "\uFEFFfirst\r\nREPLACED\r\nthird\r\n");
  EXPECT_EQ(edited("\uFEFFfirst\r\nsecond\r\nthird\r\nfourth\r\n",
                   {{"second\n", "SECOND\n"}, {"fourth\n", "FOURTH\n"}}),
            "\uFEFFfirst\r\nSECOND\r\nthird\r\nFOURTH\r\n");
  auto r = apply_edits("\uFEFFa\r\nb\r\n", {{"b", "c"}}, "f.txt");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->patch, "--- f.txt\n+++ f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n");
}

// --- The display diff and the patch (outputs checked against jsdiff 8.0.4) ---

TEST(ToolsEdit, DiffShapes) {
  using mf::tools::generate_diff_string;
  using mf::tools::generate_unified_patch;
  // An appended line: the old last line gains its newline, so jsdiff replaces it.
  auto d = generate_diff_string("a\nb", "a\nb\nc");
  EXPECT_EQ(d.diff, " 1 a\n-2 b\n+2 b\n+3 c");
  EXPECT_EQ(d.first_changed_line, 2u);
  EXPECT_EQ(generate_unified_patch("p", "a\nb", "a\nb\nc"),
            "--- p\n+++ p\n@@ -1,2 +1,3 @@\n a\n-b\n\\ No newline at end of file\n+b\n+c\n"
            "\\ No newline at end of file\n");
  // Deleting the only line leaves a zero-length range, numbered from the line before.
  EXPECT_EQ(generate_unified_patch("p", "x\n", ""), "--- p\n+++ p\n@@ -1,1 +0,0 @@\n-x\n");
  // Two changes nine unchanged lines apart: 4 + "..." + 4 in the diff, and separate hunks in the
  // patch only past 8 lines of context.
  std::string a;
  std::string b;
  for (int i = 1; i <= 20; ++i) {
    a += "l" + std::to_string(i) + "\n";
    b += (i == 2 || i == 12 ? "X" : "l") + std::to_string(i) + "\n";
  }
  d = generate_diff_string(a, b);
  EXPECT_EQ(d.diff,
            "  1 l1\n- 2 l2\n+ 2 X2\n  3 l3\n  4 l4\n  5 l5\n  6 l6\n    ...\n  8 l8\n  9 l9\n"
            " 10 l10\n 11 l11\n-12 l12\n+12 X12\n 13 l13\n 14 l14\n 15 l15\n 16 l16\n    ...");
  EXPECT_EQ(generate_unified_patch("p", a, b),
            "--- p\n+++ p\n@@ -1,6 +1,6 @@\n l1\n-l2\n+X2\n l3\n l4\n l5\n l6\n"
            "@@ -8,9 +8,9 @@\n l8\n l9\n l10\n l11\n-l12\n+X12\n l13\n l14\n l15\n l16\n");
}

TEST(ToolsEdit, DiffPrefersJsdiffsEditScript) {
  using mf::tools::generate_diff_string;
  // Equally short scripts exist; jsdiff's search picks this one.
  EXPECT_EQ(generate_diff_string("a\nb\na\n", "a\n").diff, " 1 a\n-2 b\n-3 a");
  // Context lines carry their old-file number.
  EXPECT_EQ(generate_diff_string("x\ny\n", "y\nx\n").diff, "-1 x\n 2 y\n+2 x");
}

TEST(ToolsEdit, WholeFileRewriteStaysBounded) {
  // jsdiff needs minutes for 20000 lines replaced by 20000 others; past its search budget the port
  // falls back to one removed and one added block, which is also what jsdiff ends up with here.
  // The bound is on the search's work (a count), never on a clock.
  std::string a;
  std::string b;
  for (int i = 0; i < 20000; ++i) {
    a += "a" + std::to_string(i) + "\n";
    b += "b" + std::to_string(i) + "\n";
  }
  const std::string before = "keep\n" + a + "tail\n";
  const std::string after = "keep\n" + b + "tail\n";
  const auto d = mf::tools::jsdiff::diff_lines(before, after);
  EXPECT_TRUE(d.search_gave_up);
  // One round of the search past the budget at most: a path per diagonal and a token compared each.
  EXPECT_LE(d.search_work, mf::tools::jsdiff::kMaxSearchNodes + mf::tools::jsdiff::kMaxSearchSteps +
                               2 * (20002 + 20002));
  // A full Myers search would extend (N+M)·D/2 = 800 million paths here.
  EXPECT_LT(d.search_work, 40004ull * 40004ull / 2);
  // A small edit of the same file is searched to the end, with work in proportion to the file.
  std::string c = a;
  c.replace(c.find("a100\n"), 5, "x100\n");
  const auto small =
      mf::tools::jsdiff::diff_lines("keep\n" + a + "tail\n", "keep\n" + c + "tail\n");
  EXPECT_FALSE(small.search_gave_up);
  EXPECT_LT(small.search_work, 4u * 20002u);

  auto r = apply_edits(before, {{a, b}}, "f.txt");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->diff.substr(0, 32), "     1 keep\n-    2 a0\n-    3 a1\n");
  EXPECT_NE(r->diff.find("+    2 b0\n+    3 b1\n"), std::string::npos);
  EXPECT_EQ(r->patch.rfind("--- f.txt\n+++ f.txt\n@@ -1,20002 +1,20002 @@\n keep\n-a0\n", 0), 0u);
}

// --- Legacy input ---

TEST(ToolsEdit, PrepareArgumentsLegacyForms) {
  using mf::tools::prepare_edit_arguments;
  EXPECT_EQ(prepare_edit_arguments(parse(R"({"path":"a","oldText":"x","newText":"y"})")),
            parse(R"({"path":"a","edits":[{"oldText":"x","newText":"y"}]})"));
  EXPECT_EQ(
      prepare_edit_arguments(parse(
          R"({"path":"a","edits":[{"oldText":"1","newText":"2"}],"oldText":"x","newText":"y"})")),
      parse(
          R"({"path":"a","edits":[{"oldText":"1","newText":"2"},{"oldText":"x","newText":"y"}]})"));
  const auto valid = parse(R"({"path":"a","edits":[{"oldText":"1","newText":"2"}]})");
  EXPECT_EQ(prepare_edit_arguments(valid), valid);
  EXPECT_EQ(prepare_edit_arguments(mf::json::Value()), mf::json::Value());
  EXPECT_EQ(prepare_edit_arguments(mf::json::Value("garbage")), mf::json::Value("garbage"));
  EXPECT_EQ(prepare_edit_arguments(
                parse(R"({"path":"a","edits":"[{\"oldText\":\"1\",\"newText\":\"2\"}]"})")),
            valid);
  const auto not_json = parse(R"({"path":"a","edits":"not json"})");
  EXPECT_EQ(prepare_edit_arguments(not_json), not_json);
  // A string holding JSON that is not an array stays a string.
  const auto object_string = parse(R"({"path":"a","edits":"{\"oldText\":\"1\"}"})");
  EXPECT_EQ(prepare_edit_arguments(object_string), object_string);
  // Only both legacy strings together count.
  const auto half = parse(R"({"path":"a","oldText":"x"})");
  EXPECT_EQ(prepare_edit_arguments(half), half);
}

// --- run_edit over a workspace ---

class ToolsEditFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "mf-edit-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    base_ = tmpl;
    root_ = base_ / "root";
    fs::create_directories(root_);
    fs::create_directories(base_ / "outside");
    write(base_ / "outside" / "secret.txt", "secret\n");
    auto ws = mf::tools::Workspace::open(root_.string());
    ASSERT_TRUE(ws.ok());
    ctx_.workspace = *ws;
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(root_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(base_, ec);
  }
  static void write(const fs::path& p, const std::string& bytes) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  static std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  ToolResult edit(const std::string& args_json) {
    return mf::tools::run_edit(parse(args_json), ctx_);
  }

  fs::path base_;
  fs::path root_;
  mf::tools::CallContext ctx_;
};

TEST_F(ToolsEditFiles, EditsAFile) {
  write(root_ / "test.txt", "Hello, world!");
  auto r = edit(R"({"path":"test.txt","edits":[{"oldText":"world","newText":"testing"}]})");
  ASSERT_FALSE(r.is_error) << r.text;
  EXPECT_EQ(r.text, "Successfully replaced 1 block(s) in test.txt.");
  EXPECT_EQ(slurp(root_ / "test.txt"), "Hello, testing!");
  ASSERT_TRUE(r.details.is_object());
  EXPECT_NE(r.details.find("diff")->as_string().find("testing"), std::string::npos);
  const std::string& patch = r.details.find("patch")->as_string();
  for (const char* part : {"--- ", "+++ ", "@@", "-Hello, world!", "+Hello, testing!"}) {
    EXPECT_NE(patch.find(part), std::string::npos) << part;
  }
  EXPECT_EQ(r.details.find("firstChangedLine")->as_number(), 1);
}

TEST_F(ToolsEditFiles, MultipleBlocksAndAllOrNothing) {
  write(root_ / "f.txt", "alpha\nbeta\ngamma\ndelta\n");
  auto r = edit(
      R"({"path":"f.txt","edits":[{"oldText":"alpha\n","newText":"ALPHA\n"},{"oldText":"gamma\n","newText":"GAMMA\n"}]})");
  EXPECT_EQ(r.text, "Successfully replaced 2 block(s) in f.txt.");
  EXPECT_EQ(slurp(root_ / "f.txt"), "ALPHA\nbeta\nGAMMA\ndelta\n");

  write(root_ / "g.txt", "alpha\nbeta\n");
  r = edit(
      R"({"path":"g.txt","edits":[{"oldText":"alpha\n","newText":"ALPHA\n"},{"oldText":"missing\n","newText":"M\n"}]})");
  EXPECT_TRUE(r.is_error);
  EXPECT_NE(r.text.find("Could not find"), std::string::npos);
  EXPECT_EQ(slurp(root_ / "g.txt"), "alpha\nbeta\n");
}

TEST_F(ToolsEditFiles, Refusals) {
  auto r = edit(R"({"path":"missing.txt","edits":[{"oldText":"a","newText":"b"}]})");
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "Could not edit file: missing.txt. Error code: ENOENT.");
  const std::string abs = (root_ / "missing.txt").string();
  r = edit(R"({"path":")" + abs + R"(","edits":[{"oldText":"a","newText":"b"}]})");
  EXPECT_EQ(r.text, "Could not edit file: " + abs + ". Error code: ENOENT.");

  r = edit(R"({"path":"x.txt","edits":[]})");
  EXPECT_EQ(r.text, "Edit tool input is invalid. edits must contain at least one replacement.");

  fs::create_directories(root_ / "dir");
  r = edit(R"({"path":"dir","edits":[{"oldText":"a","newText":"b"}]})");
  EXPECT_EQ(r.text, "EISDIR: illegal operation on a directory, read");

  write(root_ / "foo.txt", "foo foo foo");
  r = edit(R"({"path":"foo.txt","edits":[{"oldText":"foo","newText":"bar"}]})");
  EXPECT_EQ(r.text,
            "Found 3 occurrences of the text in foo.txt. The text must be unique. Please provide "
            "more context to make it unique.");
  r = edit(R"({"path":"foo.txt","edits":[{"oldText":"nonexistent","newText":"bar"}]})");
  EXPECT_EQ(r.text,
            "Could not find the exact text in foo.txt. The old text must match exactly including "
            "all whitespace and newlines.");
}

TEST_F(ToolsEditFiles, ReadOnlyFile) {
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores file modes";
  write(root_ / "ro.txt", "abc");
  fs::permissions(root_ / "ro.txt", fs::perms::owner_read);
  auto r = edit(R"({"path":"ro.txt","edits":[{"oldText":"a","newText":"b"}]})");
  EXPECT_EQ(r.text, "Could not edit file: ro.txt. Error code: EACCES.");
}

TEST_F(ToolsEditFiles, Escapes) {
  const auto args = [](const std::string& p) {
    return R"({"path":")" + p + R"(","edits":[{"oldText":"secret","newText":"pwned"}]})";
  };
  auto r = edit(args("../outside/secret.txt"));
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "Path escapes the workspace: ../outside/secret.txt");
  const std::string outside = (base_ / "outside" / "secret.txt").string();
  r = edit(args(outside));
  EXPECT_EQ(r.text, "Path escapes the workspace: " + outside);
  ASSERT_EQ(::symlink("../outside/secret.txt", (root_ / "link.txt").c_str()), 0);
  r = edit(args("link.txt"));
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "Path escapes the workspace: link.txt");
  EXPECT_EQ(slurp(base_ / "outside" / "secret.txt"), "secret\n");
}

TEST_F(ToolsEditFiles, LegacyInputThroughPrepare) {
  write(root_ / "legacy.txt", "old value\n");
  auto args = mf::tools::prepare_edit_arguments(
      parse(R"({"path":"legacy.txt","oldText":"old","newText":"new"})"));
  auto r = mf::tools::run_edit(args, ctx_);
  EXPECT_EQ(mf::json::canonical(mf::tools::to_json(r).find("content") != nullptr
                                    ? *mf::tools::to_json(r).find("content")
                                    : mf::json::Value()),
            R"([{"text":"Successfully replaced 1 block(s) in legacy.txt.","type":"text"}])");
  EXPECT_EQ(slurp(root_ / "legacy.txt"), "new value\n");
}

TEST_F(ToolsEditFiles, KeepsCrlfBomAndMode) {
  write(root_ / "w.txt",
        "\xEF\xBB\xBF"
        "first\r\nsecond\r\nthird\r\n");
  fs::permissions(root_ / "w.txt",
                  fs::perms::owner_read | fs::perms::owner_write | fs::perms::owner_exec);
  auto r = edit(R"({"path":"w.txt","edits":[{"oldText":"second\n","newText":"REPLACED\n"}]})");
  ASSERT_FALSE(r.is_error) << r.text;
  EXPECT_EQ(slurp(root_ / "w.txt"),
            "\xEF\xBB\xBF"
            "first\r\nREPLACED\r\nthird\r\n");
  EXPECT_EQ(fs::status(root_ / "w.txt").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::owner_exec);
}

// The attack: a file outside the workspace hard-linked into it. The edit replaces the name in the
// workspace (a new file with the old one's mode, renamed over it), never the shared inode.
TEST_F(ToolsEditFiles, EditThroughAHardLinkNeverChangesTheOtherName) {
  const fs::path outside = base_ / "outside" / "secret.txt";
  fs::permissions(outside, fs::perms::owner_read | fs::perms::owner_write | fs::perms::others_read);
  fs::create_hard_link(outside, root_ / "linked.txt");
  auto r = edit(R"({"path":"linked.txt","edits":[{"oldText":"secret","newText":"leaked"}]})");
  ASSERT_FALSE(r.is_error) << r.text;
  EXPECT_EQ(slurp(outside), "secret\n");
  EXPECT_EQ(slurp(root_ / "linked.txt"), "leaked\n");
  EXPECT_EQ(fs::hard_link_count(outside), 1u);
  EXPECT_EQ(fs::status(root_ / "linked.txt").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::others_read);
  // No temporary file is left beside it.
  std::size_t entries = 0;
  for (const auto& e : fs::directory_iterator(root_)) entries += e.path().filename() != "" ? 1 : 0;
  EXPECT_EQ(entries, 1u);
  // Edits of the replaced name serialize on the same lock key as before: a second edit sees the
  // first one's bytes.
  r = edit(R"({"path":"linked.txt","edits":[{"oldText":"leaked","newText":"again"}]})");
  ASSERT_FALSE(r.is_error) << r.text;
  EXPECT_EQ(slurp(root_ / "linked.txt"), "again\n");
}

TEST_F(ToolsEditFiles, InvalidUtf8BecomesReplacementCharacters) {
  // Pi decodes the file as UTF-8 before matching, so stray bytes come back as U+FFFD.
  write(root_ / "bin.txt",
        "a\xFF"
        "b\nkeep\n");
  auto r = edit(R"({"path":"bin.txt","edits":[{"oldText":"keep","newText":"kept"}]})");
  ASSERT_FALSE(r.is_error) << r.text;
  EXPECT_EQ(slurp(root_ / "bin.txt"), "a\uFFFDb\nkept\n");
}

TEST_F(ToolsEditFiles, ParallelEditsOfOneFileAreSerialized) {
  write(root_ / "q.txt", "alpha\nbeta\ngamma\n");
  ASSERT_EQ(::symlink("q.txt", (root_ / "alias.txt").c_str()), 0);
  for (int round = 0; round < 20; ++round) {
    write(root_ / "q.txt", "alpha\nbeta\ngamma\n");
    ToolResult a;
    ToolResult b;
    std::thread t1(
        [&] { a = edit(R"({"path":"q.txt","edits":[{"oldText":"alpha","newText":"ALPHA"}]})"); });
    std::thread t2(
        [&] { b = edit(R"({"path":"alias.txt","edits":[{"oldText":"beta","newText":"BETA"}]})"); });
    t1.join();
    t2.join();
    ASSERT_FALSE(a.is_error) << a.text;
    ASSERT_FALSE(b.is_error) << b.text;
    ASSERT_EQ(slurp(root_ / "q.txt"), "ALPHA\nBETA\ngamma\n");
  }
}

TEST_F(ToolsEditFiles, EditAndWriteShareTheLock) {
  for (int round = 0; round < 20; ++round) {
    write(root_ / "w.txt", "alpha\nbeta\n");
    ToolResult a;
    ToolResult b;
    std::thread t1(
        [&] { a = edit(R"({"path":"w.txt","edits":[{"oldText":"alpha","newText":"ALPHA"}]})"); });
    std::thread t2([&] {
      b = mf::tools::run_write(parse(R"({"path":"w.txt","content":"alpha\nfresh\n"})"), ctx_);
    });
    t1.join();
    t2.join();
    ASSERT_FALSE(b.is_error) << b.text;
    // Either the edit ran first (and the write replaced everything) or it ran on the new text.
    const std::string after = slurp(root_ / "w.txt");
    ASSERT_TRUE(after == "alpha\nfresh\n" || after == "ALPHA\nfresh\n") << after;
    ASSERT_FALSE(a.is_error) << a.text;
  }
}

TEST_F(ToolsEditFiles, Cancelled) {
  write(root_ / "c.txt", "abc");
  std::atomic<bool> cancel{true};
  ctx_.cancel = &cancel;
  auto r = edit(R"({"path":"c.txt","edits":[{"oldText":"a","newText":"b"}]})");
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "Operation aborted");
  EXPECT_EQ(slurp(root_ / "c.txt"), "abc");
}

// A 10 MB file with three small edits: matching, the fuzzy-space uniqueness count and the line diff
// must all stay linear in the file.
// A field of /proc/self/status in KiB ("VmRSS", "VmHWM").
long status_kib(const std::string& field) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field + ":", 0) == 0) return std::atol(line.c_str() + field.size() + 1);
  }
  return -1;
}

// How far a forked child's resident set grows while it runs `body`, in KiB: its peak (VmHWM,
// reset at the start through clear_refs) above its resident set before.
long child_peak_kib(const std::function<void()>& body) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    { std::ofstream("/proc/self/clear_refs") << "5"; }
    const long before = status_kib("VmRSS");
    body();
    const long grown = status_kib("VmHWM") - before;
    (void)::write(fds[1], &grown, sizeof grown);
    ::_exit(0);
  }
  ::close(fds[1]);
  long grown = -1;
  EXPECT_EQ(::read(fds[0], &grown, sizeof grown), static_cast<ssize_t>(sizeof grown));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  return grown;
}

// The worst shape for anything kept per line: 32 MiB of newlines around one marker line (one line
// per byte). Edit and read stay within a small factor of the file (docs/tools.md states the
// measured one; a list of lines would take 16 bytes and more per byte).
TEST_F(ToolsEditFiles, PeakMemoryIsASmallFactorOfTheFile) {
  constexpr std::size_t kSize = 32u << 20;
  std::string text(kSize / 2, '\n');
  text += "MARKER\n";
  text.append(kSize - text.size(), '\n');
  write(root_ / "big.txt", text);
  text.clear();
  text.shrink_to_fit();
  const long edit_kib = child_peak_kib([&] {
    auto r = edit(R"({"path":"big.txt","edits":[{"oldText":"MARKER\n","newText":"CHANGED\n"}]})");
    if (r.is_error) ::_exit(1);
  });
  const long read_kib = child_peak_kib([&] {
    auto r = mf::tools::run_read(parse(R"({"path":"big.txt","offset":16000000,"limit":3})"), ctx_);
    if (r.is_error) ::_exit(1);
  });
  std::printf("[ memory ] 32 MiB of newlines: edit %.1fx the file, read %ld KiB\n",
              edit_kib * 1024.0 / kSize, read_kib);
  EXPECT_LT(edit_kib * 1024, static_cast<long>(8 * kSize));
  // read holds what it returns and two 256 KiB chunks, not the file (about 1.5 MiB measured, 9 MiB
  // under AddressSanitizer, whose shadow and quarantine grow with every allocation).
#if defined(__SANITIZE_ADDRESS__)
  EXPECT_LT(read_kib, 24 * 1024);
#else
  EXPECT_LT(read_kib, 8 * 1024);
#endif
  EXPECT_NE(slurp(root_ / "big.txt").find("\nCHANGED\n"), std::string::npos);
}

// read takes a UTF-8 file a chunk at a time: a character cut by a chunk's end is still one
// character, and an invalid byte anywhere still makes the whole file decode as Pi decodes it.
TEST_F(ToolsEditFiles, ReadJoinsCharactersAcrossChunks) {
  for (const std::size_t at : {(256u << 10) - 1, (256u << 10) - 2, (256u << 10) - 3}) {
    std::string text(at, 'a');
    text += "\xF0\x9F\x98\x80 end\nsecond";
    write(root_ / "chunked.txt", text);
    auto r = mf::tools::run_read(parse(R"({"path":"chunked.txt","offset":2})"), ctx_);
    EXPECT_FALSE(r.is_error) << r.text;
    EXPECT_EQ(r.text, "second") << at;
    text += "\xFF";
    write(root_ / "chunked.txt", text);
    r = mf::tools::run_read(parse(R"({"path":"chunked.txt","offset":2})"), ctx_);
    EXPECT_EQ(r.text, "second\xEF\xBF\xBD") << at;
  }
}

TEST_F(ToolsEditFiles, TenMegabyteFileCostsInProportion) {
  // Three edits of a 10 MiB file against the same three edits of a 1 MiB file: linear work is 10
  // times as long, a quadratic one 100 times. The bound is on that ratio (the best of three runs of
  // each), whatever the machine, the build or the load.
  const auto make = [](std::size_t bytes) {
    std::string text;
    text.reserve(bytes + 128);
    for (int i = 0; text.size() < bytes; ++i) {
      text += "line " + std::to_string(i) + ": the quick brown fox jumps over the lazy dog\n";
    }
    return text;
  };
  const auto best_of_three = [&](const std::string& text, const char* edits) {
    double best = 1e9;
    for (int i = 0; i < 3; ++i) {
      write(root_ / "big.txt", text);
      const auto start = std::chrono::steady_clock::now();
      auto r = edit(edits);
      best = std::min(
          best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      EXPECT_FALSE(r.is_error) << r.text;
      EXPECT_EQ(r.details.find("firstChangedLine")->as_number(), 1001);
    }
    return best;
  };
  const std::string small = make(1u << 20);
  const std::string text = make(10u << 20);
  const double t_small = best_of_three(
      small,
      R"({"path":"big.txt","edits":[{"oldText":"line 1000: the","newText":"LINE 1000: the"},)"
      R"({"oldText":"line 9000: the","newText":"LINE 9000: the"},)"
      R"({"oldText":"line 18000: the","newText":"LINE 18000: the"}]})");
  const double t_big = best_of_three(
      text, R"({"path":"big.txt","edits":[{"oldText":"line 1000: the","newText":"LINE 1000: the"},)"
            R"({"oldText":"line 90000: the","newText":"LINE 90000: the"},)"
            R"({"oldText":"line 180000: the","newText":"LINE 180000: the"}]})");
  std::printf("[ timing   ] run_edit with 3 edits: %.3f s on 1 MiB, %.3f s on 10 MiB\n", t_small,
              t_big);
  EXPECT_LT(t_big, 30 * std::max(t_small, 0.002));
  const std::string after = slurp(root_ / "big.txt");
  EXPECT_EQ(after.size(), text.size());
  EXPECT_NE(after.find("LINE 90000: the"), std::string::npos);
}

}  // namespace
