#include "mf/source/reader.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "mf/diag/codes.hpp"
#include "mf/fs/beneath.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/json/canonical.hpp"
#include "mf/text/utf8.hpp"

namespace {

namespace fs = std::filesystem;
namespace codes = mf::diag::codes;
using mf::fs::Resolver;

// A fresh tree per test: BASE/safe-root is the root, BASE/safe-root-other a sibling whose name
// starts with the root's (the case a string-prefix check gets wrong), BASE/outside another sibling.
class SourceTree : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "mf-source-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    base_ = tmpl;
    root_ = base_ / "safe-root";
    fs::create_directories(root_ / "sub");
    fs::create_directories(base_ / "safe-root-other");
    fs::create_directories(base_ / "outside");
    write(base_ / "safe-root-other" / "f", "secret other\n");
    write(base_ / "outside" / "secret.txt", "secret outside\n");
    write(root_ / "f.txt", "one\ntwo\nthree\n");
    write(root_ / "sub" / "real.txt", "real\n");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(base_, ec);
  }

  static void write(const fs::path& p, const std::string& bytes) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  void link(const std::string& target, const std::string& rel) const {
    ASSERT_EQ(::symlink(target.c_str(), (root_ / rel).c_str()), 0) << rel;
  }
  static std::string lines(int n) {
    std::string s;
    for (int i = 1; i <= n; ++i) s += "line " + std::to_string(i) + "\n";
    return s;
  }

  fs::path base_;
  fs::path root_;
};

// --- Reading, under each resolver
// -----------------------------------------------------------------

class SourceRead : public SourceTree, public ::testing::WithParamInterface<Resolver> {
 protected:
  void SetUp() override {
    SourceTree::SetUp();
    if (GetParam() == Resolver::Openat2) {
      const int fd = ::open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      const int probe = mf::fs::open_beneath(fd, "f.txt", O_RDONLY, Resolver::Openat2);
      ::close(fd);
      if (probe == -ENOSYS) GTEST_SKIP() << "kernel without openat2";
      if (probe >= 0) ::close(probe);
    }
  }

  mf::Result<mf::source::SourceSlice> read(const std::string& path,
                                           std::optional<std::int64_t> start = {},
                                           std::optional<std::int64_t> end = {}) const {
    mf::source::SliceRequest r;
    r.root = root_.string();
    r.path = path;
    r.start_line = start;
    r.end_line = end;
    r.resolver = GetParam();
    return mf::source::read_slice(r);
  }

  // Asserts a refusal with `code`; returns its message.
  std::string refused(const mf::Result<mf::source::SourceSlice>& r, const char* code) const {
    EXPECT_FALSE(r.ok());
    if (r.ok()) return {};
    EXPECT_EQ(r.diagnostics().size(), 1u);
    EXPECT_EQ(r.diagnostics()[0].code, code) << r.diagnostics()[0].message;
    return r.diagnostics()[0].message;
  }
};

TEST_P(SourceRead, WholeSmallFileByDefault) {
  auto r = read("f.txt");
  ASSERT_TRUE(r.ok()) << r.diagnostics()[0].message;
  EXPECT_EQ(r->path, "f.txt");
  EXPECT_EQ(r->start_line, 1);
  EXPECT_EQ(r->end_line, 3);
  EXPECT_EQ(r->total_lines, 3);
  EXPECT_EQ(r->text, "one\ntwo\nthree\n");
  EXPECT_EQ(r->file_sha256, mf::hash::sha256_hex("one\ntwo\nthree\n"));
  EXPECT_EQ(mf::json::canonical_file(mf::source::to_json(*r)),
            "{\"bytes\":14,\"end_line\":3,\"file_sha256\":\"" + r->file_sha256 +
                "\",\"path\":\"f.txt\",\"start_line\":1,\"text\":\"one\\ntwo\\nthree\\n\","
                "\"total_lines\":3}\n");
}

TEST_P(SourceRead, RangeIsInclusiveAndEndIsClampedToTheLastLine) {
  auto r = read("f.txt", 2, 2);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->text, "two\n");
  r = read("f.txt", 2, 150);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->end_line, 3);
  EXPECT_EQ(r->text, "two\nthree\n");
  EXPECT_EQ(r->file_sha256, mf::hash::sha256_hex("one\ntwo\nthree\n"));  // whole file
}

TEST_P(SourceRead, LastLineWithoutNewlineAndCrlfKeptExactly) {
  write(root_ / "g.txt", "a\r\nb");
  auto r = read("g.txt", 2, 2);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->total_lines, 2);
  EXPECT_EQ(r->text, "b");
  r = read("g.txt");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->text, "a\r\nb");
}

TEST_P(SourceRead, EmptyFileIsLinesOneToZeroUnlessARangeIsAsked) {
  write(root_ / "empty", "");
  auto r = read("empty");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->start_line, 1);
  EXPECT_EQ(r->end_line, 0);
  EXPECT_EQ(r->total_lines, 0);
  EXPECT_EQ(r->text, "");
  refused(read("empty", 1, 1), codes::kBadLineRange);
}

TEST_P(SourceRead, PathIsNormalized) {
  auto r = read("./sub//../sub/real.txt");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->path, "sub/real.txt");
  EXPECT_EQ(r->text, "real\n");
}

TEST_P(SourceRead, RefusesAbsolutePath) {
  refused(read((root_ / "f.txt").string()), codes::kPathNotRelative);
  refused(read("/etc/passwd"), codes::kPathNotRelative);
}

TEST_P(SourceRead, RefusesEmptyPath) {
  refused(read(""), codes::kPathNotRelative);
}

TEST_P(SourceRead, RefusesParentEscape) {
  refused(read("../outside/secret.txt"), codes::kPathEscapes);
  refused(read("sub/../../outside/secret.txt"), codes::kPathEscapes);
}

TEST_P(SourceRead, RefusesSiblingWithTheRootAsPrefix) {
  // "/x/safe-root-other" starts with the string "/x/safe-root": only component-aware (here,
  // kernel-enforced) containment refuses it.
  refused(read("../safe-root-other/f"), codes::kPathEscapes);
  link("../safe-root-other/f", "other-link");
  refused(read("other-link"), codes::kPathEscapes);
  link((base_ / "safe-root-other").string(), "other-dir");
  refused(read("other-dir/f"), codes::kPathEscapes);
}

TEST_P(SourceRead, RefusesSymlinkEscapeForAFile) {
  link("../outside/secret.txt", "leak.txt");
  refused(read("leak.txt"), codes::kPathEscapes);
  link((base_ / "outside" / "secret.txt").string(), "leak-abs.txt");
  refused(read("leak-abs.txt"), codes::kPathEscapes);
  link("sub/../../outside/secret.txt", "leak-via-sub.txt");
  refused(read("leak-via-sub.txt"), codes::kPathEscapes);
}

TEST_P(SourceRead, RefusesSymlinkEscapeForADirectory) {
  link("../outside", "outdir");
  refused(read("outdir/secret.txt"), codes::kPathEscapes);
  link((base_ / "outside").string(), "outdir-abs");
  refused(read("outdir-abs/secret.txt"), codes::kPathEscapes);
  link("..", "sub/up");
  ASSERT_TRUE(read("sub/up/f.txt").ok());  // .. from sub is the root: still inside
  // ".." is resolved lexically before opening (sub/up/.. is sub), so this is a missing file.
  refused(read("sub/up/../outside/secret.txt"), codes::kNotFound);
  link("../..", "sub/upup");
  refused(read("sub/upup/outside/secret.txt"), codes::kPathEscapes);
}

TEST_P(SourceRead, AllowsSymlinksThatStayInsideTheRoot) {
  link("sub/real.txt", "alias.txt");
  link("../f.txt", "sub/up.txt");
  link("sub", "subdir");
  auto r = read("alias.txt");
  ASSERT_TRUE(r.ok()) << r.diagnostics()[0].message;
  EXPECT_EQ(r->path, "alias.txt");  // the path as asked, not the link's target
  EXPECT_EQ(r->text, "real\n");
  r = read("sub/up.txt");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->text, "one\ntwo\nthree\n");
  r = read("subdir/real.txt");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->text, "real\n");
}

TEST_P(SourceRead, RefusesSymlinkLoop) {
  link("loop-b", "loop-a");
  link("loop-a", "loop-b");
  refused(read("loop-a"), codes::kPathEscapes);
}

TEST_P(SourceRead, RefusesDirectory) {
  refused(read("sub"), codes::kIsDirectory);
  refused(read("."), codes::kIsDirectory);
  link("sub", "subdir");
  refused(read("subdir"), codes::kIsDirectory);
}

TEST_P(SourceRead, RefusesFifoWithoutBlocking) {
  ASSERT_EQ(::mkfifo((root_ / "pipe").c_str(), 0600), 0);
  refused(read("pipe"), codes::kWrongFileType);
}

TEST_P(SourceRead, RefusesFileOverOneMiB) {
  write(root_ / "big", std::string(mf::source::kMaxFileBytes + 1, 'x'));
  refused(read("big", 1, 1), codes::kFileTooLarge);
  write(root_ / "limit", std::string(mf::source::kMaxFileBytes, 'x'));
  EXPECT_TRUE(read("limit", 1, 1).ok());
}

TEST_P(SourceRead, RefusesOver200Lines) {
  write(root_ / "long", lines(201));
  EXPECT_NE(refused(read("long"), codes::kRangeTooLong).find("201 lines"), std::string::npos);
  refused(read("long", 1, 201), codes::kRangeTooLong);
  refused(read("long", 1), codes::kRangeTooLong);         // 1..201 by default
  refused(read("f.txt", 1, 1000), codes::kRangeTooLong);  // the request, before clamping
  auto r = read("long", 2, 201);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->end_line - r->start_line + 1, 200);
  r = read("long", 201);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->text, "line 201\n");
}

TEST_P(SourceRead, RefusesStartLineZero) {
  EXPECT_NE(refused(read("f.txt", 0, 2), codes::kBadLineRange).find("before line 1"),
            std::string::npos);
  refused(read("f.txt", -5), codes::kBadLineRange);
}

TEST_P(SourceRead, RefusesEndBeforeStart) {
  EXPECT_NE(refused(read("f.txt", 3, 2), codes::kBadLineRange).find("before start line 3"),
            std::string::npos);
}

TEST_P(SourceRead, RefusesStartPastTheLastLine) {
  EXPECT_NE(refused(read("f.txt", 4, 5), codes::kBadLineRange).find("(3 lines)"),
            std::string::npos);
  refused(read("f.txt", 4), codes::kBadLineRange);
}

TEST_P(SourceRead, RefusesInvalidUtf8) {
  write(root_ / "latin1.txt", "ok\ncaf\xe9\n");
  EXPECT_NE(refused(read("latin1.txt"), codes::kContentNotUtf8).find("line 2"), std::string::npos);
  write(root_ / "surrogate.txt", "\xed\xa0\x80");
  refused(read("surrogate.txt"), codes::kContentNotUtf8);
}

TEST_P(SourceRead, RefusesMissingFileAndBadRoot) {
  refused(read("nope.txt"), codes::kNotFound);
  refused(read("f.txt/x"), codes::kNotFound);
  mf::source::SliceRequest r;
  r.path = "f.txt";
  r.root = (base_ / "missing").string();
  EXPECT_EQ(mf::source::read_slice(r).diagnostics()[0].code, codes::kBadRoot);
  r.root = (root_ / "f.txt").string();
  EXPECT_EQ(mf::source::read_slice(r).diagnostics()[0].code, codes::kBadRoot);
}

TEST_P(SourceRead, RootGivenThroughASymlinkIsCanonicalized) {
  ASSERT_EQ(::symlink(root_.c_str(), (base_ / "root-link").c_str()), 0);
  mf::source::SliceRequest r;
  r.root = (base_ / "root-link").string();
  r.path = "f.txt";
  r.resolver = GetParam();
  EXPECT_TRUE(mf::source::read_slice(r).ok());
  r.path = "../outside/secret.txt";
  EXPECT_FALSE(mf::source::read_slice(r).ok());
}

INSTANTIATE_TEST_SUITE_P(Source, SourceRead,
                         ::testing::Values(Resolver::Auto, Resolver::Openat2, Resolver::Walk),
                         [](const auto& info) {
                           switch (info.param) {
                             case Resolver::Openat2:
                               return std::string("Openat2");
                             case Resolver::Walk:
                               return std::string("Walk");
                             default:
                               return std::string("Auto");
                           }
                         });

// --- The fallback walker, called directly, against the kernel
// ---------------------------------------

class SourceWalk : public SourceTree {
 protected:
  void SetUp() override {
    SourceTree::SetUp();
    root_fd_ = ::open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(root_fd_, 0);
    link("../outside/secret.txt", "leak.txt");
    link((base_ / "outside" / "secret.txt").string(), "leak-abs.txt");
    link("../outside", "outdir");
    link("../safe-root-other/f", "other-link");
    link("sub/real.txt", "alias.txt");
    link("..", "sub/up");
    link("up/sub/up/f.txt", "sub/zigzag.txt");
    link("loop-b", "loop-a");
    link("loop-a", "loop-b");
    link("/proc/self/root", "magic");
  }
  void TearDown() override {
    ::close(root_fd_);
    SourceTree::TearDown();
  }
  // The first bytes read through `fd` (which it closes), or the negative errno.
  static std::string outcome(int fd) {
    if (fd < 0) return "errno " + std::to_string(-fd);
    char buf[64];
    ssize_t n = ::read(fd, buf, sizeof buf);
    ::close(fd);
    return n < 0 ? "read failed" : std::string(buf, static_cast<std::size_t>(n));
  }
  int root_fd_ = -1;
};

TEST_F(SourceWalk, RefusesEveryEscapeAndAgreesWithOpenat2) {
  struct Case {
    const char* path;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"f.txt", "one\ntwo\nthree\n"},
      {"alias.txt", "real\n"},
      {"sub/up/f.txt", "one\ntwo\nthree\n"},
      {"sub/zigzag.txt", "one\ntwo\nthree\n"},
      {"..", "errno " + std::to_string(EXDEV)},
      {"../safe-root-other/f", "errno " + std::to_string(EXDEV)},
      {"sub/../../outside/secret.txt", "errno " + std::to_string(EXDEV)},
      {"leak.txt", "errno " + std::to_string(EXDEV)},
      {"leak-abs.txt", "errno " + std::to_string(EXDEV)},
      {"outdir/secret.txt", "errno " + std::to_string(EXDEV)},
      {"other-link", "errno " + std::to_string(EXDEV)},
      {"sub/up/../outside/secret.txt", "errno " + std::to_string(EXDEV)},
      {"magic/etc/hostname", "errno " + std::to_string(EXDEV)},
      {"loop-a", "errno " + std::to_string(ELOOP)},
      {"nope", "errno " + std::to_string(ENOENT)},
  };
  const int probe = mf::fs::open_beneath(root_fd_, "f.txt", O_RDONLY, Resolver::Openat2);
  const bool have_openat2 = probe != -ENOSYS;
  if (probe >= 0) ::close(probe);
  for (const auto& c : cases) {
    EXPECT_EQ(outcome(mf::fs::open_beneath_walk(root_fd_, c.path, O_RDONLY)), c.expected)
        << "walk: " << c.path;
    if (have_openat2) {
      EXPECT_EQ(outcome(mf::fs::open_beneath(root_fd_, c.path, O_RDONLY, Resolver::Openat2)),
                c.expected)
          << "openat2: " << c.path;
    }
  }
}

TEST_F(SourceWalk, OPathOpensTheTargetNotTheLink) {
  const int fd = mf::fs::open_beneath_walk(root_fd_, "alias.txt", O_PATH);
  ASSERT_GE(fd, 0);
  struct stat st {};
  ASSERT_EQ(::fstat(fd, &st), 0);
  ::close(fd);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(mf::fs::open_beneath_walk(root_fd_, "leak.txt", O_PATH), -EXDEV);
}

TEST_F(SourceWalk, EmptyPathIsTheRootItself) {
  const int fd = mf::fs::open_beneath_walk(root_fd_, "", O_RDONLY | O_DIRECTORY);
  ASSERT_GE(fd, 0);
  ::close(fd);
}

// --- Path normalization and UTF-8
// ------------------------------------------------------------------

TEST(SourceNormalize, LexicalAndConfined) {
  using mf::fs::normalize_relative;
  EXPECT_EQ(*normalize_relative("a/./b//c/"), "a/b/c");
  EXPECT_EQ(*normalize_relative("a/../b"), "b");
  EXPECT_EQ(*normalize_relative("."), "");
  EXPECT_EQ(normalize_relative("").diagnostics()[0].code, codes::kPathNotRelative);
  EXPECT_EQ(normalize_relative("/a").diagnostics()[0].code, codes::kPathNotRelative);
  EXPECT_EQ(normalize_relative(std::string("a\0b", 3)).diagnostics()[0].code,
            codes::kPathNotRelative);
  EXPECT_EQ(normalize_relative("a\xff").diagnostics()[0].code, codes::kPathNotRelative);
  EXPECT_EQ(normalize_relative("a/../..").diagnostics()[0].code, codes::kPathEscapes);
  EXPECT_EQ(normalize_relative("..").diagnostics()[0].code, codes::kPathEscapes);
}

TEST(SourceUtf8, RejectsOverlongsSurrogatesAndOutOfRange) {
  using mf::text::valid_utf8;
  EXPECT_TRUE(valid_utf8("h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  EXPECT_FALSE(valid_utf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(valid_utf8("\xe0\x80\xaf"));      // overlong
  EXPECT_FALSE(valid_utf8("\xed\xb0\x80"));      // surrogate
  EXPECT_FALSE(valid_utf8("\xf4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(valid_utf8("\xe2\x82"));          // truncated
  EXPECT_FALSE(valid_utf8("\x80"));              // lone continuation
}

// --- Search
// ----------------------------------------------------------------------------------------

class SourceSearch : public SourceTree {
 protected:
  mf::Result<mf::source::SearchResult> search(const std::string& query,
                                              const std::string& path = {}) const {
    auto r = request(query);
    r.path = path;
    return mf::source::search(r);
  }
  mf::source::SearchRequest request(const std::string& query) const {
    mf::source::SearchRequest r;
    r.root = root_.string();
    r.query = query;
    return r;
  }
  static std::vector<std::string> paths(const mf::source::SearchResult& r) {
    std::vector<std::string> out;
    for (const auto& m : r.matches) out.push_back(m.path + ":" + std::to_string(m.line));
    return out;
  }
};

TEST_F(SourceSearch, FindsLinesInPathByteOrder) {
  fs::create_directories(root_ / "a");
  write(root_ / "a" / "b.txt", "x\nneedle here\n");
  write(root_ / "a.txt", "needle\nno\nneedle needle\n");
  write(root_ / "Z.txt", "needle");
  auto r = search("needle");
  ASSERT_TRUE(r.ok());
  // "a.txt" < "a/b.txt" because '.' < '/'; one match per line however often it occurs.
  EXPECT_EQ(paths(*r), (std::vector<std::string>{"Z.txt:1", "a.txt:1", "a.txt:3", "a/b.txt:2"}));
  EXPECT_EQ(r->matches[3].text, "needle here");
  EXPECT_FALSE(r->truncated);
  EXPECT_EQ(r->files_scanned, 5u);  // the three above plus f.txt and sub/real.txt
  EXPECT_EQ(r->root_relative, ".");
  EXPECT_EQ(mf::json::canonical(mf::source::to_json(*r))
                .rfind("{\"files_scanned\":5,\"matches\":[{\"line\":1,\"path\":\"Z.txt\",\"text\":"
                       "\"needle\"}",
                       0),
            0u);
}

TEST_F(SourceSearch, SkipsSymlinksToFilesAndDirectories) {
  link("../outside/secret.txt", "leak.txt");
  link("../outside", "outdir");
  link("sub/real.txt", "alias.txt");
  link("sub", "subdir");
  auto r = search("secret");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->matches.empty());
  r = search("real");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(paths(*r), std::vector<std::string>{"sub/real.txt:1"});
  EXPECT_EQ(r->files_scanned, 2u);
}

TEST_F(SourceSearch, SkipsLargeBinaryAndNonUtf8Files) {
  write(root_ / "big.txt", std::string(mf::source::kMaxFileBytes, 'x') + "needle");
  write(root_ / "bin.dat", std::string("needle\0", 7));
  write(root_ / "latin1.txt", "needle caf\xe9");
  write(root_ / "ok.txt", "needle");
  auto r = search("needle");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(paths(*r), std::vector<std::string>{"ok.txt:1"});
}

TEST_F(SourceSearch, BoundsMatches) {
  write(root_ / "m.txt", "hit\nhit\nhit\nhit\nhit\n");
  auto req = request("hit");
  req.max_matches = 3;
  auto r = mf::source::search(req);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->matches.size(), 3u);
  EXPECT_TRUE(r->truncated);
  req.max_matches = 5;  // exactly as many as there are: complete
  r = mf::source::search(req);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->matches.size(), 5u);
  EXPECT_FALSE(r->truncated);
}

TEST_F(SourceSearch, BoundsFiles) {
  for (int i = 0; i < 4; ++i) write(root_ / "sub" / ("h" + std::to_string(i)), "hit\n");
  auto req = request("hit");
  req.path = "sub";
  req.max_files = 2;
  auto r = mf::source::search(req);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->files_scanned, 2u);
  EXPECT_EQ(paths(*r), (std::vector<std::string>{"sub/h0:1", "sub/h1:1"}));
  EXPECT_TRUE(r->truncated);
  req.max_files = 5;  // four hits plus real.txt
  r = mf::source::search(req);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->files_scanned, 5u);
  EXPECT_FALSE(r->truncated);
}

TEST_F(SourceSearch, BoundsBytes) {
  for (int i = 0; i < 3; ++i) write(root_ / "sub" / ("b" + std::to_string(i)), lines(10));
  const auto size = lines(10).size();
  auto req = request("line 10");
  req.path = "sub";
  req.max_bytes = 2 * size + 1;
  auto r = mf::source::search(req);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->files_scanned, 2u);
  EXPECT_EQ(r->matches.size(), 2u);
  EXPECT_TRUE(r->truncated);
  req.max_bytes = 3 * size + 5;  // + real.txt
  r = mf::source::search(req);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->matches.size(), 3u);
  EXPECT_FALSE(r->truncated);
}

TEST_F(SourceSearch, BoundsDepth) {
  fs::create_directories(root_ / "d1" / "d2");
  write(root_ / "d1" / "d2" / "deep.txt", "hit\n");
  auto req = request("hit");
  req.max_depth = 1;
  auto r = mf::source::search(req);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->matches.empty());
  EXPECT_TRUE(r->truncated);
  req.max_depth = 2;
  r = mf::source::search(req);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->matches.size(), 1u);
  EXPECT_FALSE(r->truncated);
}

TEST_F(SourceSearch, CutsLongLinesOnACharacterBoundary) {
  write(root_ / "long.txt", "hit" + std::string(600, 'a') + "\n");
  write(root_ / "euro.txt", "hit" + std::string(508, 'a') + "\xe2\x82\xac tail\n");
  auto r = search("hit");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->matches.size(), 2u);
  EXPECT_EQ(r->matches[0].path, "euro.txt");
  EXPECT_EQ(r->matches[0].text.size(), 511u);  // the euro sign would straddle byte 512
  EXPECT_EQ(r->matches[1].text.size(), 512u);
}

TEST_F(SourceSearch, SubdirectoryIsConfinedToo) {
  auto r = search("real", "sub");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->root_relative, "sub");
  EXPECT_EQ(paths(*r), std::vector<std::string>{"sub/real.txt:1"});
  EXPECT_EQ(search("secret", "../safe-root-other").diagnostics()[0].code, codes::kPathEscapes);
  EXPECT_EQ(search("secret", "/tmp").diagnostics()[0].code, codes::kPathNotRelative);
  link("../outside", "outdir");
  EXPECT_EQ(search("secret", "outdir").diagnostics()[0].code, codes::kPathEscapes);
  EXPECT_EQ(search("x", "f.txt").diagnostics()[0].code, codes::kWrongFileType);
  EXPECT_EQ(search("x", "nope").diagnostics()[0].code, codes::kNotFound);
}

TEST_F(SourceSearch, RefusesBadQueriesAndLimits) {
  EXPECT_EQ(search("").diagnostics()[0].code, codes::kBadSearch);
  EXPECT_EQ(search("a\nb").diagnostics()[0].code, codes::kBadSearch);
  EXPECT_EQ(search("\xff").diagnostics()[0].code, codes::kBadSearch);
  auto req = request("x");
  req.max_matches = 0;
  EXPECT_EQ(mf::source::search(req).diagnostics()[0].code, codes::kBadSearch);
}

// A tree with many files and directories, read on one thread and on several: the same JSON at
// every bound, since results are taken in walk order whatever thread read them.
TEST_F(SourceSearch, SameResultAtEveryThreadCount) {
  for (int d = 0; d < 12; ++d) {
    const fs::path dir = root_ / ("d" + std::to_string(d % 10)) / ("e" + std::to_string(d));
    fs::create_directories(dir / "deeper");
    for (int f = 0; f < 25; ++f) {
      std::string text;
      for (int l = 0; l < (d * 7 + f) % 9; ++l) text += "line " + std::to_string(l) + " hit\n";
      text += "tail\n";
      write(dir / ("f" + std::to_string(f) + ".txt"), text);
    }
    write(dir / "deeper" / "x.txt", "hit deep\n");
    write(dir / "bin.dat", std::string("hit\0", 4));                        // binary: skipped
    write(dir / "latin1.txt", "hit caf\xe9\n");                             // not UTF-8: skipped
    write(dir / "z.txt", std::string(mf::source::kMaxFileBytes + 1, 'h'));  // too large
  }
  link("d0", "d-link");
  struct Bounds {
    std::uint64_t matches, files, bytes, depth, entries;
  };
  const Bounds cases[] = {
      {1, 10000, 64u << 20, 64, 1000000},       {7, 10000, 64u << 20, 64, 1000000},
      {500, 10000, 64u << 20, 64, 1000000},     {100000, 13, 64u << 20, 64, 1000000},
      {100000, 10000, 3000, 64, 1000000},       {100000, 10000, 2u << 20, 64, 1000000},
      {100000, 10000, 64u << 20, 2, 1000000},   {100000, 10000, 64u << 20, 64, 90},
      {100000, 100000, 1ull << 40, 64, 1000000}};
  for (const Bounds& b : cases) {
    auto req = request("hit");
    req.max_matches = b.matches;
    req.max_files = b.files;
    req.max_bytes = b.bytes;
    req.max_depth = b.depth;
    req.max_entries = b.entries;
    req.jobs = 1;
    auto one = mf::source::search(req);
    ASSERT_TRUE(one.ok());
    const std::string expected = mf::json::canonical(mf::source::to_json(*one));
    for (const std::size_t jobs : {2u, 3u, 8u}) {
      req.jobs = jobs;
      auto many = mf::source::search(req);
      ASSERT_TRUE(many.ok());
      EXPECT_EQ(mf::json::canonical(mf::source::to_json(*many)), expected)
          << "jobs " << jobs << ", max_matches " << b.matches << ", max_files " << b.files
          << ", max_bytes " << b.bytes << ", max_depth " << b.depth << ", max_entries "
          << b.entries;
    }
  }
  // The whole search finds every text file's hits and no binary, non-UTF-8 or linked one.
  auto req = request("hit");
  req.max_matches = 100000;
  req.jobs = 4;
  auto all = mf::source::search(req);
  ASSERT_TRUE(all.ok());
  std::size_t expected_hits = 0;
  for (int d = 0; d < 12; ++d) {
    for (int f = 0; f < 25; ++f) expected_hits += static_cast<std::size_t>((d * 7 + f) % 9);
  }
  EXPECT_EQ(all->matches.size(), expected_hits + 12);
  EXPECT_FALSE(all->truncated);
}

// Files the search skips (a FIFO, a file it may not open) are skipped at every thread count.
TEST_F(SourceSearch, SkippedFilesAtEveryThreadCount) {
  for (int f = 0; f < 40; ++f) write(root_ / "sub" / ("a" + std::to_string(f)), "hit\n");
  ASSERT_EQ(::mkfifo((root_ / "sub" / "a5-fifo").c_str(), 0600), 0);
  // Unreadable to anyone but root (which reads it anyway, and finds no hit in it).
  write(root_ / "sub" / "a6-closed", "closed\n");
  ::chmod((root_ / "sub" / "a6-closed").c_str(), 0);
  const std::uint64_t scanned = ::geteuid() == 0 ? 42 : 41;  // the 40, real.txt (and a6-closed)
  for (const std::size_t jobs : {1u, 2u, 8u}) {
    auto req = request("hit");
    req.path = "sub";
    req.max_matches = 1000;
    req.jobs = jobs;
    auto r = mf::source::search(req);
    ASSERT_TRUE(r.ok()) << jobs;
    EXPECT_EQ(r->matches.size(), 40u);
    EXPECT_EQ(r->files_scanned, scanned);
  }
}

}  // namespace
