// run_grep and run_find: Pi 0.79.10's grep and find cases (tools.test.ts, regressions 3302 and
// 3303), the rg/fd behaviour they rely on (hidden files, .gitignore scoping, globs, binary files),
// confinement, limits and notices; and the glob and .gitignore semantics of walk.hpp directly.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"
#include "mf/tools/pack.hpp"
#include "walk.hpp"

namespace mf::tools {
namespace {

namespace fs = std::filesystem;

std::string make_temp_dir(const char* stem) {
  std::string templ = (fs::temp_directory_path() / (std::string(stem) + "-XXXXXX")).string();
  return ::mkdtemp(templ.data()) != nullptr ? templ : std::string();
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto nl = text.find('\n', start);
    out.push_back(text.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return out;
}

// The paths of a find result, as Pi's regression tests read them: trimmed, no notices, sorted.
std::vector<std::string> paths_of(const ToolResult& r) {
  std::vector<std::string> out;
  if (r.text == "No files found matching pattern") return out;
  for (auto& line : split_lines(r.text)) {
    if (!line.empty() && line[0] != '[') out.push_back(line);
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

class ToolsSearch : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = make_temp_dir("mf-search");
    ASSERT_FALSE(root_.empty());
    auto ws = Workspace::open(root_);
    ASSERT_TRUE(ws.ok());
    ctx_.workspace = *ws;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
    if (!outside_.empty()) fs::remove_all(outside_, ec);
  }

  void write(const std::string& rel, const std::string& content) {
    const fs::path p = fs::path(root_) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
  }
  void mkdir(const std::string& rel) { fs::create_directories(fs::path(root_) / rel); }
  std::string abs(const std::string& rel) const { return root_ + "/" + rel; }

  ToolResult call(bool grep, const std::string& json_args) {
    auto args = json::parse_object(json_args);
    EXPECT_TRUE(args.ok()) << json_args;
    if (!args.ok()) return ToolResult::error("bad test arguments");
    return grep ? run_grep(*args, ctx_) : run_find(*args, ctx_);
  }
  ToolResult grep(const std::string& json_args) { return call(true, json_args); }
  ToolResult find(const std::string& json_args) { return call(false, json_args); }

  std::string root_;
  std::string outside_;
  CallContext ctx_;
};

// --- Pi's grep cases -----------------------------------------------------------------------------

TEST_F(ToolsSearch, GrepFindsMatchingLineWithPathAndNumber) {
  write("example.txt", "first line\nmatch line\nlast line");
  const ToolResult r = grep(R"({"pattern":"match"})");
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.text, "example.txt:2: match line");
  EXPECT_TRUE(r.details.is_null());
}

TEST_F(ToolsSearch, GrepContextLinesAndMatchLimit) {
  write("context.txt", "before\nmatch one\nafter\nmiddle\nmatch two\nafter two\n");
  const ToolResult r = grep(R"({"pattern":"match","limit":1,"context":1})");
  ASSERT_FALSE(r.is_error) << r.text;
  EXPECT_EQ(r.text,
            "context.txt-1- before\ncontext.txt:2: match one\ncontext.txt-3- after\n\n"
            "[1 matches limit reached. Use limit=2 for more, or refine pattern]");
  EXPECT_EQ(r.text.find("match two"), std::string::npos);
  ASSERT_NE(r.details.find("matchLimitReached"), nullptr);
  EXPECT_EQ(r.details.find("matchLimitReached")->as_number(), 1);
  EXPECT_EQ(r.details.find("truncation"), nullptr);
}

TEST_F(ToolsSearch, GrepPatternLikeAnOptionIsOnlyAPattern) {
  // Pi passes `--` before the pattern so rg cannot read `--pre=<script>` as an option; here
  // nothing is ever executed, and the script must stay untouched.
  write("pre.sh", "#!/bin/sh\ntouch \"$(dirname \"$0\")/pre-ran\"\ncat \"$1\"\n");
  fs::permissions(fs::path(root_) / "pre.sh", fs::perms::owner_all);
  write("data.txt", "hello\n");
  const ToolResult r = grep(R"({"pattern":"--pre=)" + abs("pre.sh") + R"("})");
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.text, "No matches found");
  EXPECT_FALSE(fs::exists(fs::path(root_) / "pre-ran"));
  write("flags.txt", "use --help for help\n");
  EXPECT_EQ(grep(R"({"pattern":"--help"})").text, "flags.txt:1: use --help for help");
}

// --- Pi's find cases -----------------------------------------------------------------------------

TEST_F(ToolsSearch, FindListsHiddenFiles) {
  write(".secret/hidden.txt", "x");
  write("visible.txt", "x");
  const auto paths = paths_of(find(R"({"pattern":"**/*.txt"})"));
  EXPECT_TRUE(contains(paths, ".secret/hidden.txt"));
  EXPECT_TRUE(contains(paths, "visible.txt"));
}

TEST_F(ToolsSearch, FindRespectsGitignore) {
  write(".gitignore", "ignored.txt\n");
  write("ignored.txt", "x");
  write("kept.txt", "x");
  const auto paths = paths_of(find(R"({"pattern":"**/*.txt"})"));
  EXPECT_EQ(paths, (std::vector<std::string>{"kept.txt"}));
}

TEST_F(ToolsSearch, FindBadGlobIsAnError) {
  write("a.txt", "x");
  const ToolResult r = find(R"({"pattern":"["})");
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "error parsing glob '[': unclosed character class; missing ']'");
}

TEST_F(ToolsSearch, FindPatternLikeAnOptionMatchesNothing) {
  write("a.txt", "x");
  const ToolResult r = find(R"({"pattern":"--help"})");
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.text, "No files found matching pattern");
  EXPECT_TRUE(r.details.is_null());
}

// Regression 3302: patterns with '/' match whole paths.
class ToolsSearch3302 : public ToolsSearch {
 protected:
  void SetUp() override {
    ToolsSearch::SetUp();
    write("some/parent/child/file.ext", "");
    write("some/parent/child/test.spec.ts", "");
    write("src/foo/bar/example.spec.ts", "");
  }
};

TEST_F(ToolsSearch3302, BasenamePatternStillMatches) {
  EXPECT_EQ(
      paths_of(find(R"({"pattern":"*.spec.ts"})")),
      (std::vector<std::string>{"some/parent/child/test.spec.ts", "src/foo/bar/example.spec.ts"}));
}

TEST_F(ToolsSearch3302, DirectoryPrefixWithDoubleStarTail) {
  const auto paths = paths_of(find(R"({"pattern":"some/parent/child/**"})"));
  EXPECT_TRUE(contains(paths, "some/parent/child/file.ext"));
  EXPECT_TRUE(contains(paths, "some/parent/child/test.spec.ts"));
}

TEST_F(ToolsSearch3302, LeadingDoubleStarWithPathSegments) {
  const auto paths = paths_of(find(R"({"pattern":"**/parent/child/*"})"));
  EXPECT_TRUE(contains(paths, "some/parent/child/file.ext"));
  EXPECT_TRUE(contains(paths, "some/parent/child/test.spec.ts"));
}

TEST_F(ToolsSearch3302, SrcDoubleStarSpec) {
  EXPECT_EQ(paths_of(find(R"({"pattern":"src/**/*.spec.ts"})")),
            (std::vector<std::string>{"src/foo/bar/example.spec.ts"}));
}

// Regression 3303: each .gitignore speaks for its own subtree only.
TEST_F(ToolsSearch, NestedGitignoreStaysInItsSubtree3303) {
  write("a/.gitignore", "ignored.txt\n");
  write("a/ignored.txt", "");
  write("a/kept.txt", "");
  write("b/ignored.txt", "");
  write("b/kept.txt", "");
  write("root.txt", "");
  EXPECT_EQ(paths_of(find(R"({"pattern":"**/*.txt"})")),
            (std::vector<std::string>{"a/kept.txt", "b/ignored.txt", "b/kept.txt", "root.txt"}));
}

TEST_F(ToolsSearch, DeeplyNestedGitignore3303) {
  write("a/.gitignore", "ignored.txt\n");
  write("a/deep/.gitignore", "secret.txt\n");
  write("a/ignored.txt", "");
  write("a/kept.txt", "");
  write("a/deep/ignored.txt", "");
  write("a/deep/secret.txt", "");
  write("a/deep/kept.txt", "");
  write("b/ignored.txt", "");
  write("b/kept.txt", "");
  write("root.txt", "");
  EXPECT_EQ(paths_of(find(R"({"pattern":"**/*.txt"})")),
            (std::vector<std::string>{"a/deep/kept.txt", "a/kept.txt", "b/ignored.txt",
                                      "b/kept.txt", "root.txt"}));
}

// --- grep: what is searched ----------------------------------------------------------------------

TEST_F(ToolsSearch, GrepSearchesHiddenFilesButNeverDotGit) {
  write(".hidden/notes.txt", "needle\n");
  write(".git/config", "needle\n");
  write("visible.txt", "needle\n");
  EXPECT_EQ(grep(R"({"pattern":"needle"})").text,
            ".hidden/notes.txt:1: needle\nvisible.txt:1: needle");
}

TEST_F(ToolsSearch, GrepAppliesGitignoreOnlyInsideARepository) {
  write(".gitignore", "*.log\n");
  write("app.log", "needle\n");
  write("main.c", "needle\n");
  // rg without --no-require-git: outside a repository .gitignore means nothing.
  EXPECT_EQ(grep(R"({"pattern":"needle"})").text, "app.log:1: needle\nmain.c:1: needle");
  mkdir(".git");
  EXPECT_EQ(grep(R"({"pattern":"needle"})").text, "main.c:1: needle");
}

TEST_F(ToolsSearch, GrepUsesAncestorGitignoreForASubdirectory) {
  mkdir(".git");
  write(".gitignore", "*.log\n");
  write("sub/a.log", "needle\n");
  write("sub/a.c", "needle\n");
  EXPECT_EQ(grep(R"({"pattern":"needle","path":"sub"})").text, "a.c:1: needle");
}

TEST_F(ToolsSearch, NestedRepositoryIsABoundaryForOuterRules) {
  mkdir(".git");
  write(".gitignore", "*.log\n");
  write("top.log", "needle\n");
  write("inner/.git/HEAD", "ref\n");
  write("inner/x.log", "needle\n");
  write("inner/.gitignore", "*.tmp\n");
  write("inner/y.tmp", "needle\n");
  EXPECT_EQ(grep(R"({"pattern":"needle"})").text, "inner/x.log:1: needle");
  // find sees a repository above the search path, so it requires git the same way.
  EXPECT_EQ(paths_of(find(R"({"pattern":"*.{log,tmp}"})")),
            (std::vector<std::string>{"inner/x.log"}));
}

TEST_F(ToolsSearch, FindWithoutRepositoryAppliesAllGitignores) {
  write(".gitignore", "*.log\n");
  write("inner/deeper/x.log", "");
  write("inner/deeper/x.txt", "");
  EXPECT_EQ(paths_of(find(R"({"pattern":"x.*"})")),
            (std::vector<std::string>{"inner/deeper/x.txt"}));
}

TEST_F(ToolsSearch, IgnoreFilesBesideGitignore) {
  // .ignore needs no repository and outranks .gitignore; each tool's own file outranks both.
  write(".ignore", "*.tmp\n");
  write("a.tmp", "needle\n");
  write("b.txt", "needle\n");
  write("c.rg", "needle\n");
  write(".rgignore", "*.rg\n");
  write(".fdignore", "b.txt\n");
  EXPECT_EQ(grep(R"({"pattern":"needle"})").text, "b.txt:1: needle");
  EXPECT_EQ(paths_of(find(R"({"pattern":"*.{tmp,txt,rg}"})")), (std::vector<std::string>{"c.rg"}));
  mkdir(".git");
  write(".gitignore", "!a.tmp\nb.txt\n");
  write("sub/.ignore", "!b.txt\n");
  write("sub/b.txt", "needle\n");
  EXPECT_EQ(grep(R"({"pattern":"needle"})").text, "sub/b.txt:1: needle");
}

TEST_F(ToolsSearch, GitignoreDirectoryRuleHidesTheSubtree) {
  mkdir(".git");
  write(".gitignore", "build/\n!keep.txt\n");
  write("build/out.txt", "needle\n");
  write("build/keep.txt", "needle\n");  // re-including a file under an ignored dir cannot work
  write("src/build", "needle\n");       // a file named build: the rule is for directories
  EXPECT_EQ(grep(R"({"pattern":"needle"})").text, "src/build:1: needle");
}

TEST_F(ToolsSearch, GrepGlobFilters) {
  write("a.ts", "needle\n");
  write("src/b.ts", "needle\n");
  write("src/c.spec.ts", "needle\n");
  write("src/deep/d.ts", "needle\n");
  write("README.md", "needle\n");
  EXPECT_EQ(grep(R"({"pattern":"needle","glob":"*.ts"})").text,
            "a.ts:1: needle\nsrc/b.ts:1: needle\nsrc/c.spec.ts:1: needle\nsrc/deep/d.ts:1: needle");
  EXPECT_EQ(grep(R"({"pattern":"needle","glob":"src/*.ts"})").text,
            "src/b.ts:1: needle\nsrc/c.spec.ts:1: needle");
  EXPECT_EQ(grep(R"({"pattern":"needle","glob":"**/*.spec.ts"})").text, "src/c.spec.ts:1: needle");
  EXPECT_EQ(grep(R"({"pattern":"needle","glob":"!*.ts"})").text, "README.md:1: needle");
  EXPECT_EQ(grep(R"({"pattern":"needle","glob":"*.{md,txt}"})").text, "README.md:1: needle");
  // Relative to the search directory.
  EXPECT_EQ(grep(R"({"pattern":"needle","path":"src","glob":"deep/*.ts"})").text,
            "deep/d.ts:1: needle");
  const ToolResult bad = grep(R"({"pattern":"needle","glob":"[z-a]"})");
  EXPECT_TRUE(bad.is_error);
  EXPECT_EQ(bad.text, "error parsing glob '[z-a]': invalid range; 'z' > 'a'");
}

TEST_F(ToolsSearch, GrepGlobShowsAGitignoredFileAsRgDoes) {
  mkdir(".git");
  write(".gitignore", "*.log\nbuild/\n");
  write("app.log", "needle\n");
  write("build/gen.log", "needle\n");
  EXPECT_EQ(grep(R"({"pattern":"needle","glob":"*.log"})").text, "app.log:1: needle");
}

TEST_F(ToolsSearch, GrepNamedFileIgnoresGlobAndGitignore) {
  mkdir(".git");
  write(".gitignore", "*.log\n");
  write("logs/app.log", "one\nneedle\n");
  EXPECT_EQ(grep(R"({"pattern":"needle","path":"logs/app.log","glob":"*.c"})").text,
            "app.log:2: needle");
}

TEST_F(ToolsSearch, GrepPathsAreRelativeToTheSearchDirectory) {
  write("pkg/sub/x.c", "needle\n");
  EXPECT_EQ(grep(R"({"pattern":"needle","path":"pkg"})").text, "sub/x.c:1: needle");
  EXPECT_EQ(grep(R"({"pattern":"needle","path":"pkg/sub/"})").text, "x.c:1: needle");
  EXPECT_EQ(grep(R"({"pattern":"needle","path":")" + abs("pkg") + R"("})").text,
            "sub/x.c:1: needle");
}

TEST_F(ToolsSearch, GrepOrderIsPathByteOrder) {
  write("b.txt", "needle\n");
  write("a/x.txt", "needle\n");
  write("a.txt", "needle\n");
  write("B.txt", "needle\n");
  EXPECT_EQ(grep(R"({"pattern":"needle"})").text,
            "B.txt:1: needle\na.txt:1: needle\na/x.txt:1: needle\nb.txt:1: needle");
}

TEST_F(ToolsSearch, GrepSkipsBinaryFilesItWalksInto) {
  write("bin.dat", std::string("needle\0more\n", 12));
  write("text.txt", "needle\n");
  EXPECT_EQ(grep(R"({"pattern":"needle"})").text, "text.txt:1: needle");
  // A NUL after rg's first 64 KiB: the lines before it are reported, the rest is binary.
  std::string late(70000, 'x');
  late += "\nneedle early\n";
  late += std::string("\0\n", 2);
  late += "needle late\n";
  write("late.dat", late);
  EXPECT_EQ(grep(R"({"pattern":"needle","glob":"late.dat"})").text, "late.dat:2: needle early");
  // Named explicitly, a file is searched whole, NUL bytes and all (rg's JSON carries them).
  EXPECT_EQ(grep(R"({"pattern":"needle","path":"bin.dat"})").text,
            std::string("bin.dat:1: needle\0more", 22));
}

TEST_F(ToolsSearch, GrepLargeFilesAndHugeLines) {
  // Over one 64 MiB window: the search slides over whole lines, and a single line longer than
  // the window grows the buffer; line numbers carry on across both.
  {
    std::ofstream out(fs::path(root_) / "huge.txt", std::ios::binary);
    out << "first needle\n";
    const std::string chunk(1 << 20, 'y');
    for (int i = 0; i < 70; ++i) out << chunk;
    out << " needle tail\nlast needle\n";
  }
  const ToolResult r = grep(R"({"pattern":"needle"})");
  const auto lines = split_lines(r.text);
  ASSERT_EQ(lines.size(), 5u) << r.text.substr(0, 200);
  EXPECT_EQ(lines[0], "huge.txt:1: first needle");
  EXPECT_EQ(lines[1], "huge.txt:2: " + std::string(500, 'y') + "... [truncated]");
  EXPECT_EQ(lines[2], "huge.txt:3: last needle");
  EXPECT_EQ(lines[4], "[Some lines truncated to 500 chars. Use read tool to see full lines]");
}

TEST_F(ToolsSearch, SpecialFilesAreListedButNotRead) {
  write("a.txt", "needle\n");
  ASSERT_EQ(::mkfifo((root_ + "/pipe").c_str(), 0644), 0);
  EXPECT_EQ(grep(R"({"pattern":"needle"})").text, "a.txt:1: needle");
  EXPECT_EQ(find(R"({"pattern":"*"})").text, "a.txt\npipe");
  EXPECT_EQ(grep(R"({"pattern":"needle","path":"pipe"})").text, "No matches found");
}

// --- grep: matching and formatting ---------------------------------------------------------------

TEST_F(ToolsSearch, GrepRegexLiteralAndIgnoreCase) {
  write("f.txt", "a.c\nabc\nABC\n");
  EXPECT_EQ(grep(R"({"pattern":"a.c"})").text, "f.txt:1: a.c\nf.txt:2: abc");
  EXPECT_EQ(grep(R"({"pattern":"a.c","literal":true})").text, "f.txt:1: a.c");
  EXPECT_EQ(grep(R"({"pattern":"abc","ignoreCase":true})").text, "f.txt:2: abc\nf.txt:3: ABC");
  EXPECT_EQ(grep(R"({"pattern":"A.C","literal":true,"ignoreCase":true})").text, "f.txt:1: a.c");
  EXPECT_EQ(grep(R"({"pattern":"^ab"})").text, "f.txt:2: abc");
  EXPECT_EQ(grep(R"({"pattern":"c$"})").text, "f.txt:1: a.c\nf.txt:2: abc");
  EXPECT_EQ(grep(R"({"pattern":"(?i)^abc$"})").text, "f.txt:2: abc\nf.txt:3: ABC");
}

TEST_F(ToolsSearch, GrepMatchesNeverSpanLines) {
  write("f.txt", "foo\nxbar\n");
  EXPECT_EQ(grep(R"({"pattern":"foo\\sx"})").text, "No matches found");
  EXPECT_EQ(grep(R"({"pattern":"foo[^a]x"})").text, "No matches found");
  const ToolResult nl = grep(R"({"pattern":"foo\\nx"})");
  EXPECT_TRUE(nl.is_error);
  EXPECT_EQ(nl.text, "the literal '\"\\n\"' is not allowed in a regex");
  EXPECT_TRUE(grep(R"({"pattern":"foo\nx","literal":true})").is_error);
}

TEST_F(ToolsSearch, GrepInvalidRegexIsAnError) {
  write("f.txt", "x\n");
  const ToolResult r = grep(R"({"pattern":"a("})");
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "regex parse error: missing ): a(");
}

TEST_F(ToolsSearch, GrepEmptyPatternMatchesEveryLine) {
  write("f.txt", "one\n\nthree\n");
  EXPECT_EQ(grep(R"({"pattern":""})").text, "f.txt:1: one\nf.txt:2: \nf.txt:3: three");
  EXPECT_EQ(grep(R"({"pattern":"^$"})").text, "f.txt:2: ");
  write("g.txt", "");
  EXPECT_EQ(grep(R"({"pattern":"","path":"g.txt"})").text, "No matches found");
}

TEST_F(ToolsSearch, GrepCarriageReturnsAndByteOrderMark) {
  write("crlf.txt", "first\r\nsecond\r\n");
  EXPECT_EQ(grep(R"({"pattern":"second"})").text, "crlf.txt:2: second");
  EXPECT_EQ(grep(R"({"pattern":"first$"})").text, "No matches found");  // no --crlf, as in Pi
  write("bom.txt", "\xEF\xBB\xBFhello\n");
  EXPECT_EQ(grep(R"({"pattern":"^hello","path":"bom.txt"})").text, "bom.txt:1: hello");
}

TEST_F(ToolsSearch, GrepContextBlocksAreNotMerged) {
  write("f.txt", "a\nhit1\nhit2\nb\n");
  EXPECT_EQ(grep(R"({"pattern":"hit","context":1})").text,
            "f.txt-1- a\nf.txt:2: hit1\nf.txt-3- hit2\n"
            "f.txt-2- hit1\nf.txt:3: hit2\nf.txt-4- b");
  // Pi reads context from the file split on "\n": a trailing newline leaves an empty last line.
  write("g.txt", "x\nend hit\n");
  EXPECT_EQ(grep(R"({"pattern":"hit","path":"g.txt","context":2})").text,
            "g.txt-1- x\ng.txt:2: end hit\ng.txt-3- ");
}

TEST_F(ToolsSearch, GrepContextReadsTheFileAsPiDoes) {
  // Pi splits context on "\r\n", "\r" and "\n" alike; rg numbers lines by "\n" only.
  write("cr.txt", "one\r\ntwo\rthree\nhit\n");
  EXPECT_EQ(grep(R"({"pattern":"hit","context":1})").text,
            "cr.txt-2- two\ncr.txt:3: three\ncr.txt-4- hit");
}

TEST_F(ToolsSearch, GrepInvalidUtf8IsReplaced) {
  write("bad.txt", "ok\nhello \xFF\xFE world\n");
  EXPECT_EQ(grep(R"({"pattern":"hello"})").text, "bad.txt:2: hello \xEF\xBF\xBD\xEF\xBF\xBD world");
  write("trunc.txt", "hi \xE2\x82 there\n");  // a cut sequence is one replacement
  EXPECT_EQ(grep(R"({"pattern":"there","path":"trunc.txt"})").text,
            "trunc.txt:1: hi \xEF\xBF\xBD there");
}

TEST_F(ToolsSearch, GrepLongLinesAreCut) {
  write("long.txt", "needle " + std::string(600, 'y') + "\n");
  const ToolResult r = grep(R"({"pattern":"needle"})");
  const std::string expected_line =
      "long.txt:1: needle " + std::string(493, 'y') + "... [truncated]";
  EXPECT_EQ(r.text, expected_line +
                        "\n\n[Some lines truncated to 500 chars. Use read tool to see full lines]");
  ASSERT_NE(r.details.find("linesTruncated"), nullptr);
  EXPECT_TRUE(r.details.find("linesTruncated")->as_bool());
  EXPECT_EQ(r.details.find("matchLimitReached"), nullptr);
}

TEST_F(ToolsSearch, GrepDefaultLimitAndLimitFloor) {
  std::string many;
  for (int i = 1; i <= 150; ++i) many += "hit " + std::to_string(i) + "\n";
  write("many.txt", many);
  ToolResult r = grep(R"({"pattern":"hit"})");
  auto lines = split_lines(r.text);
  ASSERT_EQ(lines.size(), 102u);
  EXPECT_EQ(lines[99], "many.txt:100: hit 100");
  EXPECT_EQ(lines[101], "[100 matches limit reached. Use limit=200 for more, or refine pattern]");
  r = grep(R"({"pattern":"hit","limit":0})");  // max(1, limit)
  EXPECT_EQ(
      r.text,
      "many.txt:1: hit 1\n\n[1 matches limit reached. Use limit=2 for more, or refine pattern]");
  r = grep(R"({"pattern":"hit","limit":150})");  // exactly reached counts as reached, as in Pi
  EXPECT_NE(r.text.find("[150 matches limit reached. Use limit=300"), std::string::npos);
  r = grep(R"({"pattern":"hit","limit":151})");
  EXPECT_EQ(r.text.find("limit reached"), std::string::npos);
  EXPECT_TRUE(r.details.is_null());
}

TEST_F(ToolsSearch, GrepByteLimitWithAllNotices) {
  std::string big;
  for (int i = 0; i < 2000; ++i) big += "needle " + std::string(40, 'z') + "\n";
  big += "needle " + std::string(700, 'w') + "\n";
  write("big.txt", big);
  const ToolResult r = grep(R"({"pattern":"needle","limit":3000})");
  ASSERT_FALSE(r.is_error);
  const auto cut = r.text.find("\n\n[");
  ASSERT_NE(cut, std::string::npos);
  EXPECT_LE(cut, kMaxBytes);
  EXPECT_EQ(r.text.substr(cut),
            "\n\n[50.0KB limit reached. Some lines truncated to 500 chars. Use read tool to see "
            "full lines]");
  const json::Value* t = r.details.find("truncation");
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(t->find("truncated")->as_bool());
  EXPECT_EQ(t->find("truncatedBy")->as_string(), "bytes");
  EXPECT_EQ(t->find("totalLines")->as_number(), 2001);
  const std::size_t line_bytes = std::string("big.txt:1: needle ").size() + 40;
  EXPECT_GT(t->find("totalBytes")->as_number(), 2000.0 * line_bytes);
  EXPECT_EQ(t->find("maxLines")->as_number(), 9007199254740991.0);
  EXPECT_EQ(t->find("maxBytes")->as_number(), 51200);
  // Pi's detail keys, in Pi's order.
  const auto& members = r.details.as_object();
  ASSERT_EQ(members.size(), 2u);
  EXPECT_EQ(members[0].key, "truncation");
  EXPECT_EQ(members[1].key, "linesTruncated");
}

// The number of threads of this process, from /proc.
std::size_t thread_count() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/task")) ++n;
  return n;
}

// grep on one thread and on several, over many files and directories with binary, invalid UTF-8
// and special files among them: the same result, text and details, at every limit (the first N
// matches are the same N), with and without context, past the byte limit too; and no thread
// outlives a call.
TEST_F(ToolsSearch, GrepGivesTheSameResultAtEveryThreadCount) {
  write(".gitignore", "ignored/\n");
  mkdir(".git");
  for (int d = 0; d < 15; ++d) {
    const std::string dir = "p" + std::to_string(d % 4) + "/m" + std::to_string(d);
    for (int f = 0; f < 20; ++f) {
      std::string text;
      for (int l = 0; l < (d * 5 + f) % 7; ++l) {
        text +=
            "line " + std::to_string(l) + " needle " + std::string((d + l) % 3 * 30, 'q') + "\n";
      }
      text += "tail\n";
      write(dir + "/f" + std::to_string(f) + ".txt", text);
    }
    write(dir + "/bin.dat", std::string("needle\0", 7));  // binary: skipped
    write(dir + "/latin1.txt", "needle caf\xe9\n");       // shown with U+FFFD
    write(dir + "/ignored/x.txt", "needle ignored\n");    // ignored by .gitignore
  }
  // One file with more than 50KB of matching lines, one whose name holds a newline.
  std::string many;
  for (int l = 0; l < 2000; ++l)
    many += "line " + std::to_string(l) + " of many " + std::string(40, 'm') + "\n";
  write("p0/m4/many.txt", many);
  write("p1/m1/new\nline.txt", "line needle\n");
  ASSERT_EQ(::mkfifo(abs("p0/m0/fifo").c_str(), 0600), 0);  // never opened for reading
  write("p1/closed.txt", "needle closed\n");
  ::chmod(abs("p1/closed.txt").c_str(), 0);  // skipped unless run as root
  ASSERT_EQ(::symlink("../p2", abs("p1/link").c_str()), 0);

  const std::size_t threads_before = thread_count();
  const char* cases[] = {
      R"({"pattern":"needle"})",
      R"({"pattern":"needle","limit":1})",
      R"({"pattern":"needle","limit":7})",
      R"({"pattern":"needle","limit":250})",
      R"({"pattern":"needle","limit":1e9})",
      R"({"pattern":"needle","limit":13,"context":1})",
      R"({"pattern":"ne+dle q","limit":1e9,"context":2})",
      R"({"pattern":"caf","limit":5})",
      R"({"pattern":"needle","glob":"*.txt","limit":40})",
      R"({"pattern":"needle","path":"p2","limit":30})",
      // Regexes searched by their literals first (grep.cpp's prefilter).
      R"({"pattern":"needle|line [0-9]","limit":250})",
      R"({"pattern":"NEEDLE|Tail","ignoreCase":true,"limit":1e9,"context":1})",
  };
  for (const char* args : cases) {
    ctx_.search_threads = 1;
    const ToolResult one = grep(args);
    ASSERT_FALSE(one.is_error) << args << ": " << one.text;
    for (const std::size_t threads : {2u, 3u, 8u}) {
      ctx_.search_threads = threads;
      const ToolResult many = grep(args);
      EXPECT_EQ(many.text, one.text) << args << " on " << threads << " threads";
      EXPECT_EQ(json::canonical(many.details), json::canonical(one.details)) << args;
      EXPECT_EQ(thread_count(), threads_before) << args;
    }
  }
  // The case the limit matters for: the first 7 matches in path order, whatever finished first.
  ctx_.search_threads = 8;
  const auto lines = split_lines(grep(R"({"pattern":"needle","limit":7})").text);
  ASSERT_EQ(lines.size(), 9u);
  EXPECT_EQ(lines[0], "p0/m0/f1.txt:1: line 0 needle ");
  EXPECT_EQ(lines[8], "[7 matches limit reached. Use limit=14 for more, or refine pattern]");
  // Over 50KB of output: the byte limit cuts the same lines, and the totals count them all.
  ctx_.search_threads = 1;
  const ToolResult big_one = grep(R"({"pattern":"line","limit":1e9})");
  ASSERT_NE(big_one.details.find("truncation"), nullptr);
  ctx_.search_threads = 3;
  const ToolResult big_many = grep(R"({"pattern":"line","limit":1e9})");
  EXPECT_EQ(big_many.text, big_one.text);
  EXPECT_EQ(json::canonical(big_many.details), json::canonical(big_one.details));
}

// The walk runs ahead of the results on several threads; a bound it meets past the file that
// reached the limit is not reported, since a walk stopped there would not have met it.
TEST_F(ToolsSearch, GrepWalkBoundsPastTheLimitAreNotReported) {
  write("a.txt", "needle 1\nneedle 2\n");
  std::string deep = "z";
  for (std::size_t i = 0; i < walk::kMaxDepth + 2; ++i) deep += "/d";
  mkdir(deep);
  write(deep + "/x.txt", "needle deep\n");
  for (const std::size_t threads : {1u, 2u, 8u}) {
    ctx_.search_threads = threads;
    EXPECT_EQ(grep(R"({"pattern":"needle","limit":2})").text,
              "a.txt:1: needle 1\na.txt:2: needle 2\n\n"
              "[2 matches limit reached. Use limit=4 for more, or refine pattern]")
        << threads;
    // Without the limit the walk gets there, and says so.
    EXPECT_NE(grep(R"({"pattern":"needle"})").text.find("Directories nested deeper than 256"),
              std::string::npos)
        << threads;
  }
}

TEST_F(ToolsSearch, GrepFractionalLimitIsQuotedAsGiven) {
  write("f.txt", "hit\nhit\nhit\nhit\n");
  const ToolResult r = grep(R"({"pattern":"hit","limit":2.5})");
  EXPECT_EQ(r.text,
            "f.txt:1: hit\nf.txt:2: hit\nf.txt:3: hit\n\n"
            "[2.5 matches limit reached. Use limit=5 for more, or refine pattern]");
}

// --- find: what is listed ------------------------------------------------------------------------

TEST_F(ToolsSearch, FindListsDirectoriesWithASlash) {
  write("src/a.c", "");
  write("src/lib/b.c", "");
  mkdir("srcs");
  EXPECT_EQ(find(R"({"pattern":"src*"})").text, "src/\nsrcs/");
  EXPECT_EQ(find(R"({"pattern":"*"})").text, "src/\nsrc/a.c\nsrc/lib/\nsrc/lib/b.c\nsrcs/");
  EXPECT_EQ(find(R"({"pattern":""})").text, find(R"({"pattern":"*"})").text);  // fd: "" is all
}

TEST_F(ToolsSearch, FindIsSmartCase) {
  write("Makefile", "");
  write("readme.TXT", "");
  EXPECT_EQ(find(R"({"pattern":"makefile"})").text, "Makefile");
  EXPECT_EQ(find(R"({"pattern":"*.txt"})").text, "readme.TXT");
  EXPECT_EQ(find(R"({"pattern":"*.Txt"})").text, "No files found matching pattern");
}

TEST_F(ToolsSearch, FindPathPatterns) {
  write("src/main.rs", "");
  write("lib/src/util.rs", "");
  EXPECT_EQ(find(R"({"pattern":"src/*.rs"})").text, "lib/src/util.rs\nsrc/main.rs");
  // A leading '/' is an absolute path, as fd's --full-path reads it.
  EXPECT_EQ(find(R"({"pattern":")" + abs("src") + R"(/*.rs"})").text, "src/main.rs");
  EXPECT_EQ(find(R"({"pattern":"/src/*.rs"})").text, "No files found matching pattern");
  EXPECT_EQ(find(R"({"pattern":"*.rs","path":"lib"})").text, "src/util.rs");
}

TEST_F(ToolsSearch, FindLimitsAndNotices) {
  for (int i = 0; i < 5; ++i) write("f" + std::to_string(i) + ".txt", "");
  ToolResult r = find(R"({"pattern":"*.txt","limit":2})");
  EXPECT_EQ(r.text,
            "f0.txt\nf1.txt\n\n[2 results limit reached. Use limit=4 for more, or refine pattern]");
  EXPECT_EQ(r.details.find("resultLimitReached")->as_number(), 2);
  r = find(R"({"pattern":"*.txt","limit":5})");  // exactly `limit` found: Pi says reached
  EXPECT_NE(r.text.find("[5 results limit reached. Use limit=10"), std::string::npos);
  r = find(R"({"pattern":"*.txt","limit":6})");
  EXPECT_EQ(r.text, "f0.txt\nf1.txt\nf2.txt\nf3.txt\nf4.txt");
  EXPECT_TRUE(r.details.is_null());
  r = find(R"({"pattern":"*.txt","limit":0})");  // fd: no limit; Pi still prints its notice
  EXPECT_EQ(split_lines(r.text).size(), 7u);
  EXPECT_NE(r.text.find("[0 results limit reached. Use limit=0"), std::string::npos);
  EXPECT_TRUE(find(R"({"pattern":"*.txt","limit":-1})").is_error);
  EXPECT_TRUE(find(R"({"pattern":"*.txt","limit":2.5})").is_error);
}

TEST_F(ToolsSearch, FindByteLimit) {
  for (int i = 0; i < 1500; ++i) {
    write("d/" + std::string(40, 'n') + std::to_string(1000 + i) + ".txt", "");
  }
  const ToolResult r = find(R"({"pattern":"*.txt","limit":2000})");
  EXPECT_NE(r.text.find("\n\n[50.0KB limit reached]"), std::string::npos);
  const json::Value* t = r.details.find("truncation");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->find("totalLines")->as_number(), 1500);
  EXPECT_EQ(r.details.find("resultLimitReached"), nullptr);
}

TEST_F(ToolsSearch, FindSkipsDotGitButListsOtherHiddenEntries) {
  write(".git/HEAD", "");
  write(".github/workflows/ci.yml", "");
  EXPECT_EQ(find(R"({"pattern":"*"})").text,
            ".github/\n.github/workflows/\n.github/workflows/ci.yml");
}

TEST_F(ToolsSearch, FindNeedsADirectory) {
  write("f.txt", "");
  const ToolResult r = find(R"({"pattern":"*","path":"f.txt"})");
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "Search path '" + abs("f.txt") + "' is not a directory.");
}

// --- confinement and errors ----------------------------------------------------------------------

TEST_F(ToolsSearch, MissingPathIsNotFound) {
  EXPECT_EQ(grep(R"({"pattern":"x","path":"nope"})").text, "Path not found: " + abs("nope"));
  EXPECT_TRUE(grep(R"({"pattern":"x","path":"nope"})").is_error);
  EXPECT_EQ(find(R"({"pattern":"x","path":"nope/deeper"})").text,
            "Path not found: " + abs("nope/deeper"));
}

TEST_F(ToolsSearch, DotDotAndOutsidePathsAreRefused) {
  ToolResult r = grep(R"({"pattern":"x","path":"../etc"})");
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "Path escapes the workspace: ../etc");
  r = find(R"({"pattern":"*","path":"/etc"})");
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "Path escapes the workspace: /etc");
  r = find(R"({"pattern":"*","path":"a/../../x"})");
  EXPECT_TRUE(r.is_error);
}

TEST_F(ToolsSearch, SymlinksAreNeverFollowedOut) {
  outside_ = make_temp_dir("mf-search-outside");
  ASSERT_FALSE(outside_.empty());
  std::ofstream(fs::path(outside_) / "secret.txt") << "needle\n";
  fs::create_directory_symlink(outside_, fs::path(root_) / "escape");
  fs::create_symlink(fs::path(outside_) / "secret.txt", fs::path(root_) / "secret-link.txt");
  write("inside.txt", "needle\n");
  fs::create_symlink("inside.txt", fs::path(root_) / "alias.txt");

  // Walking: links are not followed (rg and fd default); find lists them, grep reads none.
  EXPECT_EQ(grep(R"({"pattern":"needle"})").text, "inside.txt:1: needle");
  EXPECT_EQ(find(R"({"pattern":"*"})").text, "alias.txt\nescape\ninside.txt\nsecret-link.txt");
  // Named: a link that leads out is an escape; one that stays inside is followed, as rg would.
  ToolResult r = grep(R"({"pattern":"needle","path":"escape"})");
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "Path escapes the workspace: escape");
  r = grep(R"({"pattern":"needle","path":"secret-link.txt"})");
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "Path escapes the workspace: secret-link.txt");
  EXPECT_TRUE(find(R"({"pattern":"*","path":"escape"})").is_error);
  EXPECT_EQ(grep(R"({"pattern":"needle","path":"alias.txt"})").text, "alias.txt:1: needle");
}

TEST_F(ToolsSearch, CancelledCallsAreAborted) {
  write("f.txt", "needle\n");
  std::atomic<bool> cancel{true};
  ctx_.cancel = &cancel;
  EXPECT_EQ(grep(R"({"pattern":"needle"})").text, "Operation aborted");
  EXPECT_TRUE(grep(R"({"pattern":"needle"})").is_error);
  EXPECT_EQ(find(R"({"pattern":"*"})").text, "Operation aborted");
  cancel = false;
  ctx_.deadline = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  EXPECT_EQ(grep(R"({"pattern":"needle"})").text, "Operation aborted");
}

TEST_F(ToolsSearch, WorkspaceRootDefaultsAndEmptyPath) {
  write("f.txt", "needle\n");
  EXPECT_EQ(grep(R"({"pattern":"needle","path":""})").text, "f.txt:1: needle");
  EXPECT_EQ(grep(R"({"pattern":"needle","path":"."})").text, "f.txt:1: needle");
  EXPECT_EQ(find(R"({"pattern":"f.txt","path":")" + root_ + R"("})").text, "f.txt");
}

// --- walk.hpp: globs -----------------------------------------------------------------------------

bool glob_matches(const std::string& pattern, const std::string& subject, bool ci = false) {
  std::string error;
  auto g = walk::Glob::compile(pattern, ci, &error);
  EXPECT_TRUE(g.has_value()) << pattern << ": " << error;
  return g && g->matches(subject);
}

std::string glob_error(const std::string& pattern) {
  std::string error;
  EXPECT_FALSE(walk::Glob::compile(pattern, false, &error).has_value()) << pattern;
  return error;
}

TEST(GitignoreGlob, StarsQuestionMarksAndClasses) {
  EXPECT_TRUE(glob_matches("*.rs", "main.rs"));
  EXPECT_TRUE(glob_matches("*.rs", ".rs"));
  EXPECT_FALSE(glob_matches("*.rs", "src/main.rs"));  // `*` stops at '/'
  EXPECT_TRUE(glob_matches("?.c", "a.c"));
  EXPECT_FALSE(glob_matches("?.c", "ab.c"));
  EXPECT_FALSE(glob_matches("a?b", "a/b"));
  EXPECT_TRUE(glob_matches("[a-c]x", "bx"));
  EXPECT_FALSE(glob_matches("[a-c]x", "dx"));
  EXPECT_TRUE(glob_matches("[!a-c]x", "dx"));
  EXPECT_TRUE(glob_matches("[^a-c]x", "dx"));
  EXPECT_TRUE(glob_matches("[]]", "]"));
  EXPECT_TRUE(glob_matches("[a-]", "-"));
  EXPECT_TRUE(glob_matches("\\*", "*"));
  EXPECT_FALSE(glob_matches("\\*", "x"));
  EXPECT_TRUE(glob_matches("é?", "éü"));  // characters, not bytes
  EXPECT_TRUE(glob_matches("{a,b}.txt", "b.txt"));
  EXPECT_TRUE(glob_matches("{*.c,*.h}", "x.h"));
  EXPECT_TRUE(glob_matches("a}", "a}"));
  EXPECT_TRUE(glob_matches("x,y", "x,y"));
  EXPECT_TRUE(glob_matches("*.TXT", "a.txt", true));
  EXPECT_FALSE(glob_matches("*.TXT", "a.txt", false));
}

TEST(GitignoreGlob, DoubleStar) {
  EXPECT_TRUE(glob_matches("**", "a/b/c"));
  EXPECT_TRUE(glob_matches("**/x", "x"));
  EXPECT_TRUE(glob_matches("**/x", "a/b/x"));
  EXPECT_FALSE(glob_matches("**/x", "a/bx"));
  EXPECT_TRUE(glob_matches("a/**", "a/b/c"));
  EXPECT_FALSE(glob_matches("a/**", "a"));
  EXPECT_TRUE(glob_matches("a/**/b", "a/b"));
  EXPECT_TRUE(glob_matches("a/**/b", "a/x/y/b"));
  EXPECT_FALSE(glob_matches("a/**/b", "ab"));
  EXPECT_TRUE(glob_matches("a**", "abc"));  // not a whole component: a plain star
  EXPECT_FALSE(glob_matches("a**", "a/bc"));
  EXPECT_TRUE(glob_matches("**/*.ts", "src/a.ts"));
  EXPECT_TRUE(glob_matches("**/*.ts", "a.ts"));
  EXPECT_FALSE(glob_matches("**/*.ts", "a.tsx"));
  EXPECT_TRUE(glob_matches("{**/a,b}", "x/a"));
}

TEST(GitignoreGlob, ErrorsInGlobsetsWords) {
  EXPECT_EQ(glob_error("["), "unclosed character class; missing ']'");
  EXPECT_EQ(glob_error("[b-a]"), "invalid range; 'b' > 'a'");
  EXPECT_EQ(glob_error("a{b"),
            "unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)");
  EXPECT_EQ(glob_error("a\\"), "dangling '\\'");
}

// --- walk.hpp: .gitignore rules ------------------------------------------------------------------

walk::Verdict verdict(const std::string& rules, const std::string& path, bool dir = false) {
  return walk::IgnoreFile::parse(rules).match(path, dir);
}

TEST(Gitignore, BlankLinesCommentsAndEscapes) {
  EXPECT_TRUE(walk::IgnoreFile::parse("\n# a comment\n   \n").empty());
  EXPECT_EQ(verdict("\\#hash\n", "#hash"), walk::Verdict::Ignore);
  EXPECT_EQ(verdict("# hash\n", "# hash"), walk::Verdict::None);
  EXPECT_EQ(verdict("\\!bang\n", "!bang"), walk::Verdict::Ignore);
  EXPECT_EQ(verdict("trail   \n", "trail"), walk::Verdict::Ignore);
  EXPECT_EQ(verdict("space\\ \n", "space "), walk::Verdict::Ignore);
  EXPECT_EQ(verdict("crlf\r\n", "crlf"), walk::Verdict::Ignore);
}

TEST(Gitignore, NegationAndLastRuleWins) {
  const std::string rules = "*.log\n!keep.log\n";
  EXPECT_EQ(verdict(rules, "a.log"), walk::Verdict::Ignore);
  EXPECT_EQ(verdict(rules, "keep.log"), walk::Verdict::Whitelist);
  EXPECT_EQ(verdict("!keep.log\n*.log\n", "keep.log"), walk::Verdict::Ignore);
  EXPECT_EQ(verdict(rules, "a.txt"), walk::Verdict::None);
}

TEST(Gitignore, DirectoryOnlyRules) {
  EXPECT_EQ(verdict("build/\n", "build", true), walk::Verdict::Ignore);
  EXPECT_EQ(verdict("build/\n", "build", false), walk::Verdict::None);
  EXPECT_EQ(verdict("build/\n", "src/build", true), walk::Verdict::Ignore);
}

TEST(Gitignore, AnchoredAndUnanchoredRules) {
  EXPECT_EQ(verdict("/root.txt\n", "root.txt"), walk::Verdict::Ignore);
  EXPECT_EQ(verdict("/root.txt\n", "sub/root.txt"), walk::Verdict::None);
  EXPECT_EQ(verdict("doc/*.md\n", "doc/a.md"), walk::Verdict::Ignore);
  EXPECT_EQ(verdict("doc/*.md\n", "x/doc/a.md"), walk::Verdict::None);  // an inner '/' anchors
  EXPECT_EQ(verdict("doc/*.md\n", "doc/x/a.md"), walk::Verdict::None);
  EXPECT_EQ(verdict("name.txt\n", "a/b/name.txt"), walk::Verdict::Ignore);  // a name, anywhere
  EXPECT_EQ(verdict("*.o\n", "deep/er/x.o"), walk::Verdict::Ignore);
  EXPECT_EQ(verdict("te?t\n", "test"), walk::Verdict::Ignore);
  EXPECT_EQ(verdict("[Tt]mp\n", "Tmp"), walk::Verdict::Ignore);
}

TEST(Gitignore, DoubleStarRules) {
  EXPECT_EQ(verdict("**/logs\n", "a/b/logs", true), walk::Verdict::Ignore);
  EXPECT_EQ(verdict("**/logs/x\n", "logs/x"), walk::Verdict::Ignore);
  EXPECT_EQ(verdict("abc/**\n", "abc/d/e"), walk::Verdict::Ignore);
  EXPECT_EQ(verdict("abc/**\n", "abc", true), walk::Verdict::None);  // its contents, not itself
  EXPECT_EQ(verdict("a/**/b\n", "a/b"), walk::Verdict::Ignore);
  EXPECT_EQ(verdict("a/**/b\n", "a/x/y/b"), walk::Verdict::Ignore);
}

TEST(Gitignore, MalformedLinesAreDropped) {
  walk::IgnoreFile f;
  std::string error;
  EXPECT_FALSE(f.add_line("[", &error));
  EXPECT_EQ(error, "error parsing glob '[': unclosed character class; missing ']'");
  EXPECT_TRUE(f.empty());
  const auto parsed = walk::IgnoreFile::parse("[\n*.tmp\n");
  EXPECT_EQ(parsed.size(), 1u);
  EXPECT_EQ(parsed.match("x.tmp", false), walk::Verdict::Ignore);
}

}  // namespace
}  // namespace mf::tools
