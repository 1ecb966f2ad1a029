// read, write and ls: Pi's own cases (tools.test.ts) through run_*, each error text and limit, and
// the three ways out of the workspace (`..`, an absolute path outside, a symlink leading out).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "edit_core.hpp"
#include "mf/json/reader.hpp"
#include "mf/text/utf8.hpp"
#include "mf/tools/pack.hpp"

namespace {

namespace fs = std::filesystem;
using mf::json::Object;
using mf::json::Value;
using mf::tools::ToolResult;

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

std::string numbered_lines(int n, const std::string& prefix = "Line ") {
  std::string s;
  for (int i = 1; i <= n; ++i) {
    if (i > 1) s += "\n";
    s += prefix + std::to_string(i);
  }
  return s;
}

// A fresh BASE/root workspace per test, with BASE/outside next to it for the escapes.
class ToolsFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "mf-files-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    base_ = tmpl;
    root_ = base_ / "root";
    fs::create_directories(root_);
    fs::create_directories(base_ / "outside" / "dir");
    write(base_ / "outside" / "secret.txt", "secret\n");
    auto ws = mf::tools::Workspace::open(root_.string());
    ASSERT_TRUE(ws.ok());
    ctx_.workspace = *ws;
    root_ = ctx_.workspace->root();  // canonical, as messages print it
  }
  void TearDown() override {
    std::error_code ec;
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
  void link(const std::string& target, const std::string& rel) const {
    ASSERT_EQ(::symlink(target.c_str(), (root_ / rel).c_str()), 0) << rel;
  }
  ToolResult read(Object args) { return mf::tools::run_read(Value(std::move(args)), ctx_); }
  ToolResult write_tool(Object args) { return mf::tools::run_write(Value(std::move(args)), ctx_); }
  ToolResult ls(Object args = {}) { return mf::tools::run_ls(Value(std::move(args)), ctx_); }

  fs::path base_;
  fs::path root_;
  mf::tools::CallContext ctx_;
};

// --- read ---

TEST_F(ToolsFiles, ReadReturnsTheTextAsIs) {
  write(root_ / "test.txt", "Hello, world!\nLine 2\nLine 3");
  auto r = read({{"path", "test.txt"}});
  ASSERT_FALSE(r.is_error) << r.text;
  EXPECT_EQ(r.text, "Hello, world!\nLine 2\nLine 3");
  EXPECT_TRUE(r.details.is_null());
  EXPECT_FALSE(contains(r.text, "Use offset="));
}

TEST_F(ToolsFiles, ReadMissingFile) {
  auto r = read({{"path", "nonexistent.txt"}});
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "ENOENT: no such file or directory, access '" +
                        (root_ / "nonexistent.txt").string() + "'");
}

// Resolution errors (docs/tools.md, "Resolution errors"): only a target that does not exist is
// soft; every other refusal of the same tools is a failure.
TEST_F(ToolsFiles, OnlyAMissingTargetIsASoftError) {
  fs::create_directories(root_ / "dir");
  write(root_ / "a.txt", "alpha\n");
  EXPECT_TRUE(read({{"path", "nonexistent.txt"}}).soft);
  EXPECT_TRUE(read({{"path", "missing/dir/x.txt"}}).soft);
  EXPECT_TRUE(ls({{"path", "nowhere"}}).soft);
  const auto edit = [&](Object args) { return mf::tools::run_edit(Value(std::move(args)), ctx_); };
  const auto one = [](const std::string& old_text) {
    return Value(mf::json::Array{Object{{"oldText", old_text}, {"newText", "x"}}});
  };
  EXPECT_TRUE(edit({{"path", "gone.txt"}, {"edits", one("alpha")}}).soft);
  EXPECT_TRUE(edit({{"path", "a.txt"}, {"edits", one("beta")}}).soft);
  auto grep = mf::tools::run_grep(Value(Object{{"pattern", "x"}, {"path", "nowhere"}}), ctx_);
  EXPECT_TRUE(grep.is_error && grep.soft) << grep.text;
  auto find = mf::tools::run_find(Value(Object{{"pattern", "*"}, {"path", "nowhere"}}), ctx_);
  EXPECT_TRUE(find.is_error && find.soft) << find.text;
  // Failures: a directory read as a file, a file listed as a directory, an escape, a success.
  EXPECT_FALSE(read({{"path", "dir"}}).soft);
  EXPECT_FALSE(ls({{"path", "a.txt"}}).soft);
  EXPECT_FALSE(read({{"path", "../outside.txt"}}).soft);
  EXPECT_FALSE(edit({{"path", "dir"}, {"edits", one("alpha")}}).soft);
  EXPECT_FALSE(read({{"path", "a.txt"}}).soft);
}

TEST_F(ToolsFiles, ReadTruncatesAtTwoThousandLines) {
  write(root_ / "large.txt", numbered_lines(2500));
  auto r = read({{"path", "large.txt"}});
  ASSERT_FALSE(r.is_error);
  EXPECT_TRUE(contains(r.text, "Line 2000\n"));
  EXPECT_FALSE(contains(r.text, "Line 2001"));
  EXPECT_TRUE(contains(r.text, "\n\n[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]"));
  const Value* t = r.details.find("truncation");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(*t->find("truncated"), Value(true));
  EXPECT_EQ(*t->find("truncatedBy"), Value("lines"));
  EXPECT_EQ(*t->find("totalLines"), Value(2500));
  EXPECT_EQ(*t->find("outputLines"), Value(2000));
  EXPECT_EQ(*t->find("maxBytes"), Value(51200));
}

TEST_F(ToolsFiles, ReadTruncatesAtFiftyKilobytes) {
  std::string text;
  for (int i = 1; i <= 500; ++i) {
    if (i > 1) text += "\n";
    text += "Line " + std::to_string(i) + ": " + std::string(200, 'x');
  }
  write(root_ / "wide.txt", text);
  auto r = read({{"path", "wide.txt"}});
  ASSERT_FALSE(r.is_error);
  EXPECT_TRUE(std::regex_search(
      r.text,
      std::regex(R"(\[Showing lines 1-\d+ of 500 \(.* limit\)\. Use offset=\d+ to continue\.\])")));
  // 243 lines of 208..210 bytes fit in 51200.
  EXPECT_TRUE(
      contains(r.text, "[Showing lines 1-243 of 500 (50.0KB limit). Use offset=244 to continue.]"))
      << r.text.substr(r.text.size() - 100);
  EXPECT_EQ(*r.details.find("truncation")->find("truncatedBy"), Value("bytes"));
}

TEST_F(ToolsFiles, ReadOffsetAndLimit) {
  write(root_ / "f.txt", numbered_lines(100));
  auto r = read({{"path", "f.txt"}, {"offset", 51}});
  EXPECT_TRUE(contains(r.text, "Line 51\n"));
  EXPECT_TRUE(contains(r.text, "Line 100"));
  EXPECT_FALSE(contains(r.text, "Line 50\n"));
  EXPECT_FALSE(contains(r.text, "Use offset="));
  EXPECT_TRUE(r.details.is_null());

  r = read({{"path", "f.txt"}, {"limit", 10}});
  EXPECT_EQ(r.text, numbered_lines(10) + "\n\n[90 more lines in file. Use offset=11 to continue.]");
  EXPECT_TRUE(r.details.is_null());

  r = read({{"path", "f.txt"}, {"offset", 41}, {"limit", 20}});
  EXPECT_TRUE(contains(r.text, "Line 41\n"));
  EXPECT_TRUE(contains(r.text, "Line 60\n"));
  EXPECT_FALSE(contains(r.text, "Line 40\n"));
  EXPECT_FALSE(contains(r.text, "Line 61"));
  EXPECT_TRUE(contains(r.text, "[40 more lines in file. Use offset=61 to continue.]"));

  // Offset 0 means the first line, like no offset.
  EXPECT_EQ(read({{"path", "f.txt"}, {"offset", 0}, {"limit", 1}}).text,
            "Line 1\n\n[99 more lines in file. Use offset=2 to continue.]");
  // A limit reaching the end adds no notice.
  EXPECT_EQ(read({{"path", "f.txt"}, {"offset", 99}, {"limit", 5}}).text, "Line 99\nLine 100");
}

TEST_F(ToolsFiles, ReadOffsetBeyondEnd) {
  write(root_ / "f.txt", "Line 1\nLine 2\nLine 3");
  auto r = read({{"path", "f.txt"}, {"offset", 100}});
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "Offset 100 is beyond end of file (3 lines total)");
  // split("\n") counts a trailing newline as one more (empty) line.
  write(root_ / "g.txt", "a\nb\n");
  EXPECT_EQ(read({{"path", "g.txt"}, {"offset", 4}}).text,
            "Offset 4 is beyond end of file (3 lines total)");
  EXPECT_EQ(read({{"path", "g.txt"}, {"limit", 1}}).text,
            "a\n\n[2 more lines in file. Use offset=2 to continue.]");
}

TEST_F(ToolsFiles, ReadFirstLineOverTheByteLimit) {
  write(root_ / "long.txt", std::string(60000, 'a') + "\nshort\n");
  auto r = read({{"path", "long.txt"}});
  ASSERT_FALSE(r.is_error);
  EXPECT_EQ(r.text,
            "[Line 1 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '1p' long.txt | head -c "
            "51200]");
  EXPECT_EQ(*r.details.find("truncation")->find("firstLineExceedsLimit"), Value(true));
  r = read({{"path", "long.txt"}, {"offset", 2}});
  EXPECT_EQ(r.text, "short\n");
}

TEST_F(ToolsFiles, ReadKeepsBytesAndReplacesInvalidUtf8) {
  write(root_ / "raw.txt", "\xEF\xBB\xBFone\r\ntwo\xFF\xC3(\xE2\x82\n");
  auto r = read({{"path", "raw.txt"}});
  // BOM and CR stay; each broken sequence is one U+FFFD.
  EXPECT_EQ(r.text, "\uFEFFone\r\ntwo\uFFFD\uFFFD(\uFFFD\n");
  write(root_ / "empty.txt", "");
  r = read({{"path", "empty.txt"}});
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.text, "");
}

TEST_F(ToolsFiles, DecodeMatchesTheWhatwgDecoder) {
  using mf::text::decode_utf8_lossy;
  EXPECT_EQ(decode_utf8_lossy("a\x80"
                              "b"),
            "a\uFFFDb");
  EXPECT_EQ(decode_utf8_lossy("\xF0\x9F\x98"), "\uFFFD");              // truncated 4-byte sequence
  EXPECT_EQ(decode_utf8_lossy("\xED\xA0\x80"), "\uFFFD\uFFFD\uFFFD");  // a surrogate
  EXPECT_EQ(decode_utf8_lossy("\xC0\xAF"), "\uFFFD\uFFFD");            // overlong
  EXPECT_EQ(decode_utf8_lossy("\xF4\x90\x80\x80"), "\uFFFD\uFFFD\uFFFD\uFFFD");
  EXPECT_EQ(decode_utf8_lossy("\xE2\x82\xAC\xE2\x82"), "\u20AC\uFFFD");
}

TEST_F(ToolsFiles, ReadRefusesImages) {
  // A 1x1 PNG: signature, IHDR, IDAT, IEND.
  const unsigned char kPng[] = {
      0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48,
      0x44, 0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00,
      0x00, 0x1F, 0x15, 0xC4, 0x89, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x44, 0x41, 0x54, 0x78,
      0x9C, 0x63, 0x00, 0x01, 0x00, 0x00, 0x05, 0x00, 0x01, 0x0D, 0x0A, 0x2D, 0xB4, 0x00,
      0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82};
  const std::string png(reinterpret_cast<const char*>(kPng), sizeof kPng);
  write(root_ / "image.txt", png);  // sniffed from the bytes, not the name
  auto r = read({{"path", "image.txt"}});
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "Image files are not supported by this tool: image.txt");
  write(root_ / "not-an-image.png", "definitely not a png");
  r = read({{"path", "not-an-image.png"}});
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.text, "definitely not a png");

  write(root_ / "a.jpg", "\xFF\xD8\xFF\xE0rest");
  EXPECT_TRUE(read({{"path", "a.jpg"}}).is_error);
  write(root_ / "a.gif", "GIF89a....");
  EXPECT_TRUE(read({{"path", "a.gif"}}).is_error);
  write(root_ / "a.webp", std::string("RIFF\x10\0\0\0WEBPVP8 ", 16));
  EXPECT_TRUE(read({{"path", "a.webp"}}).is_error);
  // JPEG-LS and animated PNG are not images to Pi either: they read as text.
  write(root_ / "ls.jpg", "\xFF\xD8\xFF\xF7");
  EXPECT_FALSE(read({{"path", "ls.jpg"}}).is_error);
  std::string apng = png.substr(0, 33) +
                     std::string(
                         "\0\0\0\x08"
                         "acTL\0\0\0\x01\0\0\0\0abcd",
                         20) +
                     png.substr(33);
  write(root_ / "anim.png", apng);
  EXPECT_FALSE(read({{"path", "anim.png"}}).is_error);
}

TEST_F(ToolsFiles, ReadFindsMacosScreenshotSpellings) {
  write(root_ / "Screenshot 2024 at 10.00.00\u202FAM.txt", "am");
  EXPECT_EQ(read({{"path", "Screenshot 2024 at 10.00.00 AM.txt"}}).text, "am");
  write(root_ / "Capture d\u2019e\u0301cran.txt", "curly nfd");
  EXPECT_EQ(read({{"path", "Capture d'\u00E9cran.txt"}}).text, "curly nfd");
}

TEST_F(ToolsFiles, ReadOtherRefusals) {
  fs::create_directories(root_ / "dir");
  EXPECT_EQ(read({{"path", "dir"}}).text, "EISDIR: illegal operation on a directory, read");
  ASSERT_EQ(::mkfifo((root_ / "fifo").c_str(), 0644), 0);
  EXPECT_EQ(read({{"path", "fifo"}}).text, "Not a regular file: fifo");  // and no hang
  {
    const int fd = ::open((root_ / "huge.bin").c_str(), O_WRONLY | O_CREAT, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, (64 << 20) + 1), 0);
    ::close(fd);
  }
  EXPECT_EQ(read({{"path", "huge.bin"}}).text,
            "File too large to read: huge.bin (67108865 bytes, the limit is 67108864)");
  link("loop", "loop");
  EXPECT_TRUE(contains(read({{"path", "loop"}}).text, "ELOOP"));
}

TEST_F(ToolsFiles, ReadEscapes) {
  EXPECT_EQ(read({{"path", "../outside/secret.txt"}}).text,
            "Path escapes the workspace: ../outside/secret.txt");
  const std::string outside = (base_ / "outside" / "secret.txt").string();
  EXPECT_EQ(read({{"path", outside}}).text, "Path escapes the workspace: " + outside);
  link("../outside/secret.txt", "link.txt");
  auto r = read({{"path", "link.txt"}});
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "Path escapes the workspace: link.txt");
  link(outside, "abs-link.txt");
  EXPECT_EQ(read({{"path", "abs-link.txt"}}).text, "Path escapes the workspace: abs-link.txt");
  // A link that stays inside is followed.
  write(root_ / "inside.txt", "inside");
  link("inside.txt", "in-link.txt");
  EXPECT_EQ(read({{"path", "in-link.txt"}}).text, "inside");
  EXPECT_EQ(read({{"path", "@inside.txt"}}).text, "inside");
}

TEST_F(ToolsFiles, ReadCancelled) {
  write(root_ / "f.txt", "x");
  std::atomic<bool> cancel{true};
  ctx_.cancel = &cancel;
  EXPECT_EQ(read({{"path", "f.txt"}}).text, "Operation aborted");
  EXPECT_EQ(write_tool({{"path", "g.txt"}, {"content", "x"}}).text, "Operation aborted");
  EXPECT_FALSE(fs::exists(root_ / "g.txt"));
  EXPECT_EQ(ls().text, "Operation aborted");
}

// --- write ---

TEST_F(ToolsFiles, WriteCreatesAFile) {
  auto r = write_tool({{"path", "test.txt"}, {"content", "Hello, world!"}});
  ASSERT_FALSE(r.is_error) << r.text;
  EXPECT_EQ(r.text, "Successfully wrote 13 bytes to test.txt");
  EXPECT_TRUE(r.details.is_null());
  EXPECT_EQ(slurp(root_ / "test.txt"), "Hello, world!");
}

TEST_F(ToolsFiles, WriteCreatesParents) {
  auto r = write_tool({{"path", "nested/dir/test.txt"}, {"content", "deep"}});
  ASSERT_FALSE(r.is_error) << r.text;
  EXPECT_TRUE(contains(r.text, "Successfully wrote"));
  EXPECT_TRUE(contains(r.text, "nested/dir/test.txt"));
  EXPECT_EQ(slurp(root_ / "nested" / "dir" / "test.txt"), "deep");
}

TEST_F(ToolsFiles, WriteCountsUtf16UnitsAndOverwrites) {
  // "héllo😀": 10 bytes, 7 UTF-16 units, and Pi reports the units.
  auto r = write_tool({{"path", "u.txt"}, {"content", "h\u00E9llo\U0001F600"}});
  EXPECT_EQ(r.text, "Successfully wrote 7 bytes to u.txt");
  EXPECT_EQ(fs::file_size(root_ / "u.txt"), 10u);
  r = write_tool({{"path", "u.txt"}, {"content", "x"}});
  EXPECT_EQ(slurp(root_ / "u.txt"), "x");
  r = write_tool({{"path", "empty.txt"}, {"content", ""}});
  EXPECT_EQ(r.text, "Successfully wrote 0 bytes to empty.txt");
  // Through a link inside the root, the target is written.
  link("u.txt", "alias.txt");
  write_tool({{"path", "alias.txt"}, {"content", "via link"}});
  EXPECT_EQ(slurp(root_ / "u.txt"), "via link");
}

TEST_F(ToolsFiles, WriteRefusals) {
  fs::create_directories(root_ / "dir");
  EXPECT_EQ(write_tool({{"path", "dir"}, {"content", "x"}}).text,
            "EISDIR: illegal operation on a directory, open '" + (root_ / "dir").string() + "'");
  EXPECT_EQ(write_tool({{"path", "."}, {"content", "x"}}).text,
            "EISDIR: illegal operation on a directory, open '" + root_.string() + "'");
  write(root_ / "file", "f");
  EXPECT_EQ(write_tool({{"path", "file/x/y.txt"}, {"content", "x"}}).text,
            "ENOTDIR: not a directory, mkdir '" + (root_ / "file" / "x").string() + "'");
  ASSERT_EQ(::mkfifo((root_ / "fifo").c_str(), 0644), 0);
  EXPECT_TRUE(write_tool({{"path", "fifo"}, {"content", "x"}}).is_error);  // and no hang
}

// A trailing "/" names a directory (POSIX): write refuses it rather than creating a file by that
// name, and read refuses a file named so.
TEST_F(ToolsFiles, TrailingSlashNamesADirectory) {
  auto r = write_tool({{"path", "newdir/"}, {"content", "x"}});
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text,
            "EISDIR: illegal operation on a directory, open '" + (root_ / "newdir").string() + "'");
  EXPECT_FALSE(fs::exists(root_ / "newdir"));
  r = write_tool({{"path", "a/b/."}, {"content", "x"}});
  EXPECT_TRUE(r.is_error);
  EXPECT_FALSE(fs::exists(root_ / "a"));
  write(root_ / "f.txt", "text");
  r = write_tool({{"path", "f.txt/"}, {"content", "x"}});
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(slurp(root_ / "f.txt"), "text");
  r = read({{"path", "f.txt/"}});
  EXPECT_EQ(r.text, "ENOTDIR: not a directory, access '" + (root_ / "f.txt").string() + "'");
  fs::create_directories(root_ / "d");
  EXPECT_EQ(read({{"path", "d/"}}).text, "EISDIR: illegal operation on a directory, read");
}

// The attack: a file outside the workspace hard-linked into it. A write must replace the name in
// the workspace and leave the outside file's bytes (and the outside name) alone.
TEST_F(ToolsFiles, WriteThroughAHardLinkNeverChangesTheOtherName) {
  const fs::path outside = base_ / "outside" / "secret.txt";
  fs::permissions(outside, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  fs::create_hard_link(outside, root_ / "linked.txt");
  auto r = write_tool({{"path", "linked.txt"}, {"content", "overwritten"}});
  ASSERT_FALSE(r.is_error) << r.text;
  EXPECT_EQ(slurp(outside), "secret\n");
  EXPECT_EQ(slurp(root_ / "linked.txt"), "overwritten");
  EXPECT_EQ(fs::hard_link_count(outside), 1u);
  EXPECT_EQ(fs::hard_link_count(root_ / "linked.txt"), 1u);
  // The new file keeps the mode of the one it replaced.
  EXPECT_EQ(fs::status(root_ / "linked.txt").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  // Through a link inside the root to a hard-linked file: the link stays, its target is replaced.
  fs::create_hard_link(outside, root_ / "second.txt");
  link("second.txt", "alias");
  r = write_tool({{"path", "alias"}, {"content", "via alias"}});
  ASSERT_FALSE(r.is_error) << r.text;
  EXPECT_EQ(slurp(outside), "secret\n");
  EXPECT_TRUE(fs::is_symlink(root_ / "alias"));
  EXPECT_EQ(slurp(root_ / "second.txt"), "via alias");
  // A file with one link is still written in place: same inode.
  write(root_ / "single.txt", "one");
  struct stat a {
  }, b{};
  ASSERT_EQ(::stat((root_ / "single.txt").c_str(), &a), 0);
  ASSERT_FALSE(write_tool({{"path", "single.txt"}, {"content", "two"}}).is_error);
  ASSERT_EQ(::stat((root_ / "single.txt").c_str(), &b), 0);
  EXPECT_EQ(a.st_ino, b.st_ino);
  EXPECT_EQ(slurp(root_ / "single.txt"), "two");
}

// Reads follow a hard link: it is the file itself (see docs/tools.md).
TEST_F(ToolsFiles, ReadThroughAHardLinkReadsTheFile) {
  fs::create_hard_link(base_ / "outside" / "secret.txt", root_ / "linked.txt");
  EXPECT_EQ(read({{"path", "linked.txt"}}).text, "secret\n");
}

TEST_F(ToolsFiles, WriteEscapes) {
  EXPECT_EQ(write_tool({{"path", "../outside/new.txt"}, {"content", "x"}}).text,
            "Path escapes the workspace: ../outside/new.txt");
  const std::string outside = (base_ / "outside" / "secret.txt").string();
  EXPECT_EQ(write_tool({{"path", outside}, {"content", "x"}}).text,
            "Path escapes the workspace: " + outside);
  link("../outside/secret.txt", "link.txt");
  EXPECT_EQ(write_tool({{"path", "link.txt"}, {"content", "pwned"}}).text,
            "Path escapes the workspace: link.txt");
  link("../outside/dir", "outdir");
  EXPECT_EQ(write_tool({{"path", "outdir/new.txt"}, {"content", "pwned"}}).text,
            "Path escapes the workspace: outdir/new.txt");
  EXPECT_EQ(write_tool({{"path", "outdir/sub/new.txt"}, {"content", "pwned"}}).text,
            "Path escapes the workspace: outdir/sub/new.txt");
  // A dangling link is not written through either.
  link("../outside/created.txt", "dangling.txt");
  EXPECT_TRUE(write_tool({{"path", "dangling.txt"}, {"content", "pwned"}}).is_error);
  EXPECT_EQ(slurp(base_ / "outside" / "secret.txt"), "secret\n");
  EXPECT_FALSE(fs::exists(base_ / "outside" / "dir" / "new.txt"));
  EXPECT_FALSE(fs::exists(base_ / "outside" / "dir" / "sub"));
  EXPECT_FALSE(fs::exists(base_ / "outside" / "created.txt"));
}

// --- ls ---

TEST_F(ToolsFiles, LsListsDotfilesAndDirectories) {
  write(root_ / ".hidden-file", "");
  fs::create_directories(root_ / ".hidden-dir");
  write(root_ / "visible.txt", "");
  auto r = ls({{"path", "."}});
  ASSERT_FALSE(r.is_error) << r.text;
  EXPECT_EQ(r.text, ".hidden-dir/\n.hidden-file\nvisible.txt");
  EXPECT_TRUE(r.details.is_null());
  EXPECT_EQ(ls().text, r.text);  // the default is the workspace root
  EXPECT_EQ(ls({{"path", ""}}).text, r.text);
}

TEST_F(ToolsFiles, LsSortsLikeLocaleCompare) {
  // The order Node 20 (ICU 74, en-US) gives for a.toLowerCase().localeCompare(b.toLowerCase()):
  // ASCII punctuation before digits before letters, accents and ligatures at the second level.
  const std::vector<std::string> expected = {
      "_x",          "-y",          ".hidden",   "@x",        "#x",     "~tilde", "$cash",
      "1.txt",       "10",          "9",         "a b",       "a_b",    "a-b",    "a,b",
      "a;b",         "a:b",         "a!b",       "a?b",       "a.b",    "A.txt",  "a'b",
      "a\"b",        "a(1)",        "a[1]",      "a{1}",      "a*b",    "a\\b",   "a&b",
      "a%b",         "a`b",         "a^b",       "a+b",       "a<b",    "a=b",    "a>b",
      "a|b",         "a~b",         "a$b",       "ae",        "\u00E6", "af",     "apple",
      "b.txt",       "cafe",        "caf\u00E9", "caf\u00E8", "cafz",   "d",      "\u0111",
      "dz",          "\u00E9clair", "\u0131",    "j",         "\u00F8", "oz",     "README.md",
      "readme.txt",  "ss",          "\u00DF",    "st",        "Zed",    "\u00FE", "\u03A9",
      "\u65E5\u672C"};
  for (auto it = expected.rbegin(); it != expected.rend(); ++it) write(root_ / *it, "");
  std::string joined;
  for (const auto& name : expected) joined += (joined.empty() ? "" : "\n") + name;
  EXPECT_EQ(ls().text, joined);
}

TEST_F(ToolsFiles, LsLinks) {
  fs::create_directories(root_ / "real-dir");
  write(root_ / "file.txt", "");
  link("real-dir", "dir-link");
  link("file.txt", "file-link");
  link("missing", "dangling");
  link("self", "self");
  link("../outside/dir", "out-dir");
  // Dangling and looping links are skipped; a link out is listed, its target left unexamined.
  EXPECT_EQ(ls().text, "dir-link/\nfile-link\nfile.txt\nout-dir\nreal-dir/");
}

TEST_F(ToolsFiles, LsEntryLimit) {
  for (const char* name : {"a", "b", "c", "d", "e"}) write(root_ / name, "");
  auto r = ls({{"limit", 2}});
  EXPECT_EQ(r.text, "a\nb\n\n[2 entries limit reached. Use limit=4 for more]");
  EXPECT_EQ(r.details, Value(Object{{"entryLimitReached", 2}}));
  r = ls({{"limit", 5}});
  EXPECT_EQ(r.text, "a\nb\nc\nd\ne");
  EXPECT_TRUE(r.details.is_null());
}

TEST_F(ToolsFiles, LsDefaultLimitAndByteLimit) {
  // 600 names of 200 bytes: the 500-entry default stops first, then 50KB.
  for (int i = 0; i < 600; ++i) {
    char prefix[16];
    std::snprintf(prefix, sizeof prefix, "%03d", i);
    write(root_ / (prefix + std::string(197, 'n')), "");
  }
  auto r = ls();
  EXPECT_TRUE(contains(
      r.text, "\n\n[500 entries limit reached. Use limit=1000 for more. 50.0KB limit reached]"));
  ASSERT_TRUE(r.details.is_object());
  EXPECT_EQ(*r.details.find("entryLimitReached"), Value(500));
  const Value* t = r.details.find("truncation");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(*t->find("truncatedBy"), Value("bytes"));
  EXPECT_EQ(*t->find("outputLines"), Value(254));  // 254 lines of 201 bytes fit in 51200
  EXPECT_EQ(*t->find("maxLines"), Value(9007199254740991.0));

  r = ls({{"limit", 100}});
  EXPECT_EQ(r.details, Value(Object{{"entryLimitReached", 100}}));
}

// limit 0 or below would list nothing and call a full directory empty: refused.
TEST_F(ToolsFiles, LsLimitMustBePositive) {
  write(root_ / "a", "");
  write(root_ / "b", "");
  for (const auto& [limit, shown] :
       std::vector<std::pair<double, std::string>>{{0.0, "0"}, {-1.0, "-1"}, {-0.5, "-0.5"}}) {
    auto r = ls({{"limit", limit}});
    EXPECT_TRUE(r.is_error) << limit;
    EXPECT_EQ(r.text, "limit must be a positive number, got " + shown);
  }
  EXPECT_EQ(ls({{"limit", 0.5}}).text, "a\n\n[0.5 entries limit reached. Use limit=1 for more]");
}

TEST_F(ToolsFiles, LsRefusals) {
  EXPECT_EQ(ls({{"path", "missing"}}).text, "Path not found: " + (root_ / "missing").string());
  write(root_ / "file.txt", "");
  EXPECT_EQ(ls({{"path", "file.txt"}}).text, "Not a directory: " + (root_ / "file.txt").string());
  fs::create_directories(root_ / "empty");
  auto r = ls({{"path", "empty"}});
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.text, "(empty directory)");
  EXPECT_TRUE(r.details.is_null());
}

TEST_F(ToolsFiles, LsEscapes) {
  EXPECT_EQ(ls({{"path", "../outside"}}).text, "Path escapes the workspace: ../outside");
  const std::string outside = (base_ / "outside").string();
  EXPECT_EQ(ls({{"path", outside}}).text, "Path escapes the workspace: " + outside);
  link("../outside", "out");
  EXPECT_EQ(ls({{"path", "out"}}).text, "Path escapes the workspace: out");
  EXPECT_EQ(ls({{"path", "~"}}).text, "Path escapes the workspace: ~");
}

}  // namespace
