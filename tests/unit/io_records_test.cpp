// RecordFile (mf/io/records.hpp): records appended, read back by position through a window, and
// sorted externally across several runs, all in an unnamed temporary file.
#include "mf/io/records.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace mf::io {
namespace {

struct Keyed {
  std::uint32_t key = 0;
  std::uint32_t seq = 0;  // the order it was appended in
};
bool by_key(const Keyed& a, const Keyed& b) {
  return a.key < b.key;
}

// An odd size, so windows do not end on a round number of bytes.
struct Odd {
  char bytes[7];
};
Odd odd(std::uint64_t i) {
  Odd o{};
  for (std::size_t k = 0; k < sizeof o.bytes; ++k) o.bytes[k] = static_cast<char>((i >> k) + k);
  return o;
}
bool same(const Odd& a, const Odd& b) {
  return std::equal(a.bytes, a.bytes + 7, b.bytes);
}

// TMPDIR set for the scope.
class TmpDir {
 public:
  explicit TmpDir(const std::string& dir) {
    if (const char* s = ::getenv("TMPDIR")) saved_ = s;
    ::setenv("TMPDIR", dir.c_str(), 1);
  }
  ~TmpDir() {
    if (saved_.empty()) {
      ::unsetenv("TMPDIR");
    } else {
      ::setenv("TMPDIR", saved_.c_str(), 1);
    }
  }

 private:
  std::string saved_;
};

TEST(IoRecords, ASortOverSeveralRunsIsStableAndComplete) {
  // 300,000 records of 8 bytes: five runs of 512 KiB, with many ties among 1,000 keys.
  RecordFile<Keyed> file("the test's records");
  std::vector<Keyed> expected;
  std::mt19937 random(7);
  for (std::uint32_t i = 0; i < 300000; ++i) {
    const Keyed k{static_cast<std::uint32_t>(random() % 1000), i};
    ASSERT_TRUE(file.push_back(k).ok());
    expected.push_back(k);
  }
  ASSERT_GT(file.size() * sizeof(Keyed), 4 * RecordFile<Keyed>::kSortBytes);
  ASSERT_TRUE(file.sort(by_key).ok());
  std::stable_sort(expected.begin(), expected.end(), by_key);
  ASSERT_EQ(file.size(), expected.size());
  RecordFile<Keyed>::Reader reader(file);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const Keyed& k = reader[i];
    ASSERT_EQ(k.key, expected[i].key) << i;
    ASSERT_EQ(k.seq, expected[i].seq) << i;  // ties keep the order they were appended in
  }
  EXPECT_TRUE(reader.status().ok());
}

// Records past 16 bytes are sorted by their positions and moved once: the same order.
template <std::size_t Pad>
struct Padded {
  std::uint32_t key = 0;
  std::uint32_t seq = 0;
  char pad[Pad] = {};
};
using Wide = Padded<40>;

TEST(IoRecords, WideRecordsSortStablyAcrossRunsAndInTheBuffer) {
  for (const std::uint32_t n : {1000u, 40000u}) {  // in the buffer; four runs
    RecordFile<Wide> file("the test's records");
    std::vector<Wide> expected;
    std::mt19937 random(n);
    for (std::uint32_t i = 0; i < n; ++i) {
      Wide w;
      w.key = static_cast<std::uint32_t>(random() % 97);
      w.seq = i;
      w.pad[i % 40] = static_cast<char>(i);
      ASSERT_TRUE(file.push_back(w).ok());
      expected.push_back(w);
    }
    const auto less = [](const Wide& a, const Wide& b) { return a.key < b.key; };
    ASSERT_TRUE(file.sort(less).ok());
    std::stable_sort(expected.begin(), expected.end(), less);
    RecordFile<Wide>::Reader reader(file);
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const Wide& w = reader[i];
      ASSERT_EQ(w.key, expected[i].key) << n << " " << i;
      ASSERT_EQ(w.seq, expected[i].seq) << n << " " << i;
      ASSERT_TRUE(std::equal(w.pad, w.pad + 40, expected[i].pad)) << n << " " << i;
    }
  }
}

// Runs sorted as they are appended (sort_runs_by), or not; either way sort() gives the same
// order, and hands every record to its visitor once, in that order: with the records in the
// buffer, in exactly one run in the file, and over several runs.
TEST(IoRecords, RunsSortedAsAppendedAndTheSortedOrderSeenOnTheWay) {
  const std::uint64_t run = RecordFile<Wide>::kSortBytes / sizeof(Wide);
  for (const bool ahead : {false, true}) {
    for (const std::uint64_t n :
         {std::uint64_t{0}, std::uint64_t{500}, run, run + 1, 3 * run + 7}) {
      RecordFile<Wide> file("the test's records");
      const auto less = [](const Wide& a, const Wide& b) { return a.key < b.key; };
      if (ahead) file.sort_runs_by(less);
      std::vector<Wide> expected;
      std::mt19937 random(static_cast<std::uint32_t>(n));
      for (std::uint64_t i = 0; i < n; ++i) {
        Wide w;
        w.key = static_cast<std::uint32_t>(random() % 61);
        w.seq = static_cast<std::uint32_t>(i);
        ASSERT_TRUE(file.push_back(w).ok());
        expected.push_back(w);
      }
      std::stable_sort(expected.begin(), expected.end(), less);
      std::vector<Wide> seen;
      ASSERT_TRUE(file.sort(less,
                            [&](std::span<const Wide> piece) {
                              seen.insert(seen.end(), piece.begin(), piece.end());
                            })
                      .ok());
      ASSERT_EQ(seen.size(), n) << ahead << " " << n;
      ASSERT_EQ(file.size(), n);
      RecordFile<Wide>::Reader reader(file);
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(seen[i].seq, expected[i].seq) << ahead << " " << n << " " << i;
        ASSERT_EQ(reader[i].seq, expected[i].seq) << ahead << " " << n << " " << i;
      }
      EXPECT_TRUE(reader.status().ok());
    }
  }
}

// More runs than one merge reads at once (kFanIn): merged in passes, with the same order, and
// the visitor sees the last pass only.
using Big = Padded<248>;

TEST(IoRecords, MoreRunsThanOneMergeTakesAreMergedInPasses) {
  const std::uint64_t run = RecordFile<Big>::kSortBytes / sizeof(Big);
  const std::uint64_t n = run * (RecordFile<Big>::kFanIn + 1) + 5;
  for (const bool ahead : {false, true}) {
    RecordFile<Big> file("the test's records");
    const auto less = [](const Big& a, const Big& b) { return a.key < b.key; };
    if (ahead) file.sort_runs_by(less);
    std::vector<std::pair<std::uint32_t, std::uint32_t>> expected;  // key, seq
    std::mt19937 random(11);
    for (std::uint64_t i = 0; i < n; ++i) {
      Big b;
      b.key = static_cast<std::uint32_t>(random() % 1009);
      b.seq = static_cast<std::uint32_t>(i);
      b.pad[i % 248] = static_cast<char>(i);
      ASSERT_TRUE(file.push_back(b).ok());
      expected.emplace_back(b.key, b.seq);
    }
    std::stable_sort(expected.begin(), expected.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::uint64_t seen = 0;
    bool in_order = true;
    ASSERT_TRUE(file.sort(less,
                          [&](std::span<const Big> piece) {
                            for (const Big& b : piece) {
                              in_order = in_order && seen < n && b.seq == expected[seen].second;
                              ++seen;
                            }
                          })
                    .ok());
    EXPECT_EQ(seen, n) << ahead;
    EXPECT_TRUE(in_order) << ahead;
    RecordFile<Big>::Reader reader(file);
    for (std::uint64_t i = 0; i < n; ++i) {
      const Big& b = reader[i];
      ASSERT_EQ(b.seq, expected[i].second) << ahead << " " << i;
      ASSERT_EQ(b.pad[b.seq % 248], static_cast<char>(b.seq)) << ahead << " " << i;
    }
    EXPECT_TRUE(reader.status().ok());
  }
}

TEST(IoRecords, ASmallSortStaysInMemoryAndAnEmptyOneIsNothing) {
  RecordFile<Keyed> empty("the test's records");
  EXPECT_TRUE(empty.sort(by_key).ok());
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_TRUE(empty.empty());
  RecordFile<Keyed> few("the test's records");
  for (std::uint32_t i = 0; i < 10; ++i) ASSERT_TRUE(few.push_back({(10 - i) / 3, i}).ok());
  ASSERT_TRUE(few.sort(by_key).ok());
  RecordFile<Keyed>::Reader reader(few);
  const std::vector<std::uint32_t> seqs = {8, 9, 5, 6, 7, 2, 3, 4, 0, 1};
  for (std::size_t i = 0; i < seqs.size(); ++i) EXPECT_EQ(reader[i].seq, seqs[i]) << i;
}

TEST(IoRecords, ReadsBackAcrossWindowEdgesInAnyOrderFromSeveralThreads) {
  RecordFile<Odd> file("the test's records");
  // Some records still in the buffer after the file's: the reader sees both.
  const std::uint64_t n = RecordFile<Odd>::kBufferBytes / sizeof(Odd) * 5 + 123;
  for (std::uint64_t i = 0; i < n; ++i) ASSERT_TRUE(file.push_back(odd(i)).ok());
  ASSERT_EQ(file.size(), n);
  const std::uint64_t window = RecordFile<Odd>::kWindowBytes / sizeof(Odd);
  const auto check = [&](bool& ok) {
    RecordFile<Odd>::Reader reader(file);
    ok = true;
    for (std::uint64_t i = 0; i < n; ++i) ok = ok && same(reader[i], odd(i));
    // Backwards over a window's edge, then the edges themselves, then the buffer's start.
    for (std::uint64_t i = window + 2; i-- > window - 2;) ok = ok && same(reader[i], odd(i));
    for (std::uint64_t i = window - 1; i < n; i += window) ok = ok && same(reader[i], odd(i));
    ok = ok && same(reader[n - 124], odd(n - 124)) && same(reader[n - 123], odd(n - 123));
    ok = ok && reader.status().ok();
  };
  bool one = false, two = false;
  std::thread other(check, std::ref(two));
  check(one);
  other.join();
  EXPECT_TRUE(one);
  EXPECT_TRUE(two);
}

TEST(IoRecords, ATemporaryDirectoryThatCannotHoldAFileIsNamed) {
  // A directory no file can be made in, even by root (a missing one would fall back to /tmp).
  const std::string proc = "/proc";
  const TmpDir tmp(proc);
  RecordFile<Keyed> file("the test's records");
  Status s;
  std::uint64_t i = 0;
  // What fits in the buffer needs no file; the first record past it does.
  for (; i < RecordFile<Keyed>::kBufferBytes / sizeof(Keyed) && s.ok(); ++i) s = file.push_back({});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(i, RecordFile<Keyed>::kBufferBytes / sizeof(Keyed));
  EXPECT_EQ(s.diagnostics()[0].code, "MF-O003");
  EXPECT_EQ(s.diagnostics()[0].message.rfind("cannot create a temporary file for the test's "
                                             "records in " +
                                                 proc + ": ",
                                             0),
            0u)
      << s.diagnostics()[0].message;
  const Result<Fd> fd = open_temporary("the report's entries");
  ASSERT_FALSE(fd.ok());
  EXPECT_EQ(fd.diagnostics()[0].code, "MF-O003");
}

}  // namespace
}  // namespace mf::io
