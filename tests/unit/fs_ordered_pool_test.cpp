// fs::OrderedPool: results in submission order at every thread count, and a job that throws
// stopping the pool with its exception rethrown by finish() on the calling thread (a worker
// thread that let it escape would end the process).
#include <filesystem>
#include <new>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "mf/fs/ordered_pool.hpp"

namespace mf::fs {
namespace {

std::size_t thread_count() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

TEST(OrderedPool, ResultsComeInSubmissionOrder) {
  for (const std::size_t threads : {1u, 2u, 3u, 8u}) {
    std::vector<int> taken;
    OrderedPool<int, int> pool(
        threads, [](int& job, std::size_t) { return job * 2; },
        [&](int& r) {
          taken.push_back(r);
          return true;
        });
    for (int i = 0; i < 500; ++i) ASSERT_TRUE(pool.submit(i));
    EXPECT_TRUE(pool.finish());
    ASSERT_EQ(taken.size(), 500u) << threads;
    for (int i = 0; i < 500; ++i) EXPECT_EQ(taken[static_cast<std::size_t>(i)], i * 2);
  }
}

// One job out of many throws std::bad_alloc, as a failed allocation in a search would: the pool
// stops taking jobs, finish() rethrows it on this thread, and no thread is left behind.
TEST(OrderedPool, AThrowingJobIsRethrownByFinish) {
  const std::size_t before = thread_count();
  for (const std::size_t threads : {2u, 3u, 8u}) {
    for (const int bad : {0, 7, 150}) {
      std::vector<int> taken;
      OrderedPool<int, int> pool(
          threads,
          [&](int& job, std::size_t) {
            if (job == bad) throw std::bad_alloc();
            return job;
          },
          [&](int& r) {
            taken.push_back(r);
            return true;
          });
      int submitted = 0;
      while (submitted < 400 && pool.submit(submitted)) ++submitted;
      EXPECT_THROW(pool.finish(), std::bad_alloc) << threads << " threads, job " << bad;
      // Whatever was taken came in order and stopped before the job that threw.
      for (std::size_t i = 0; i < taken.size(); ++i) EXPECT_EQ(taken[i], static_cast<int>(i));
      EXPECT_LE(taken.size(), static_cast<std::size_t>(bad));
      EXPECT_EQ(thread_count(), before);
    }
  }
  // On one thread the job runs inside submit(), which lets the exception through as it is.
  OrderedPool<int, int> one(
      1, [](int&, std::size_t) -> int { throw std::runtime_error("no"); },
      [](int&) { return true; });
  EXPECT_THROW(one.submit(1), std::runtime_error);
}

}  // namespace
}  // namespace mf::fs
