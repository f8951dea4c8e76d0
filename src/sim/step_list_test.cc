// The scheduler's per-step lists (scheduler.h, StepList).
#include <gtest/gtest.h>

#include <numeric>
#include <span>

#include "scheduler.h"

namespace chalk::sim::detail {
namespace {

TEST(StepList, KeepsOrderPastItsCapacityClearsAndSwaps) {
  StepList<int32_t> a;
  EXPECT_TRUE(a.empty());
  for (int32_t i = 0; i < 100; ++i) a.push_back(i);  // past 16, then 32 and 64 slots
  EXPECT_EQ(a.size(), 100u);
  EXPECT_EQ(a[57], 57);
  EXPECT_EQ(a.back(), 99);
  a.pop_back();
  EXPECT_EQ(a.back(), 98);
  // 0 + 1 + ... + 98 = 98 x 99 / 2 = 4,851, through the span the step's mix reads.
  const std::span<const int32_t> s = a;
  EXPECT_EQ(s.size(), 99u);
  EXPECT_EQ(std::accumulate(s.begin(), s.end(), 0), 4851);
  // Cleared, it refills from the front.
  a.clear();
  EXPECT_TRUE(a.empty());
  a.push_back(7);
  EXPECT_EQ(a[0], 7);
  EXPECT_EQ(a.size(), 1u);
  StepList<int32_t> b;
  b.push_back(1);
  b.push_back(2);
  a.swap(b);
  EXPECT_EQ(a.size(), 2u);
  EXPECT_EQ(a[1], 2);
  EXPECT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0], 7);
}

}  // namespace
}  // namespace chalk::sim::detail
