// The scheduler's per-step lists (scheduler.h, StepList) and the step samples' growth (reserve_steps).
#include <gtest/gtest.h>

#include <numeric>
#include <span>
#include <vector>

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

TEST(StepList, RoomTakesValuesWrittenInPlaceAfterThoseThere) {
  StepList<int64_t> a;
  a.push_back(5);
  // Room for 40 past the one value: at least 41 slots, the first free one at index 1.
  int64_t* at = a.room(40);
  for (int64_t k = 0; k < 40; ++k) at[k] = 10 + k;
  a.added(30);  // only 30 of them counted
  EXPECT_EQ(a.size(), 31u);
  EXPECT_EQ(a[0], 5);
  EXPECT_EQ(a[1], 10);
  EXPECT_EQ(a.back(), 39);  // 10 + 29
  a.push_back(-1);
  EXPECT_EQ(a[31], -1);
}

TEST(ReserveSteps, ExtrapolatesTheStepsPerRequestWithinTwiceToEightTimesTheCapacity) {
  std::vector<StepSample> steps;
  // Empty: at least 16 slots doubled, 32 (0 steps project 0).
  reserve_steps(steps, 0, 1000);
  EXPECT_EQ(steps.capacity(), 32u);
  for (int k = 0; k < 32; ++k) steps.push_back(StepSample{.start_s = static_cast<double>(k)});
  // 32 steps after 4 of 1,000 requests: 1.25 x 32 x 1000 / 4 = 10,000, above 8 x 32 = 256.
  reserve_steps(steps, 4, 1000);
  EXPECT_EQ(steps.capacity(), 256u);
  for (int k = 32; k < 256; ++k) steps.push_back(StepSample{.start_s = static_cast<double>(k)});
  // 256 steps after 200 of 1,000: 1.25 x 256 x 5 = 1,600, within [512, 2048].
  reserve_steps(steps, 200, 1000);
  EXPECT_EQ(steps.capacity(), 1600u);
  EXPECT_EQ(steps.size(), 256u);  // the samples are kept
  EXPECT_EQ(steps[100].start_s, 100.0);
  steps.resize(1600);
  // Every request seen: 1.25 x 1,600 = 2,000, below twice the capacity, 3,200.
  reserve_steps(steps, 1000, 1000);
  EXPECT_EQ(steps.capacity(), 3200u);
}

}  // namespace
}  // namespace chalk::sim::detail
