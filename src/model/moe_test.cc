#include "chalk/model/moe.h"

#include <gtest/gtest.h>

#include <cmath>

namespace chalk {
namespace {

TEST(ExpertsTouched, ByHand) {
  // One token touches exactly k experts.
  EXPECT_DOUBLE_EQ(expected_experts_touched(256, 8, 1), 8.0);
  // Two tokens: 256 (1 - (1 - 8/256)^2) = 256 (1 - 0.96875^2) = 15.75.
  EXPECT_DOUBLE_EQ(expected_experts_touched(256, 8, 2), 15.75);
  // Many tokens touch them all.
  EXPECT_NEAR(expected_experts_touched(256, 8, 4096), 256.0, 1e-9);
  // Dense limit: E = k = 1.
  EXPECT_DOUBLE_EQ(expected_experts_touched(1, 1, 7), 1.0);
}

TEST(MaxLoad, BallsIntoBins) {
  // 8 balls into 8 bins: Monte Carlo (5k trials) gives 2.56; the approximation 2.63 (3% high).
  EXPECT_NEAR(expected_max_load(8, 8, 100), 2.56, 0.1);
  // 8 into 72 (DeepSeek-V3 batch 1 on an NVL72): Monte Carlo 1.27; birthday bound gives
  // P(max >= 2) = 1 - exp(-8 x 7 / 144) = 0.322, so about 1.32-1.35.
  EXPECT_NEAR(expected_max_load(8, 72, 3.5), 1.33, 0.03);
  // One ball: max load 1.
  EXPECT_NEAR(expected_max_load(1, 64, 100), 1.0, 0.01);
  // Heavily loaded: max/mean 1.26 at 4096 tokens x 8 / 256 experts = 128 per expert
  // (training-and-systems.md 6.3, Monte-Carlo 1.26, formula 1.29).
  EXPECT_NEAR(expected_max_load(4096 * 8, 256, 1e9) / 128.0, 1.27, 0.03);
  // Very heavy load (mean 1000 per bin: e^-1000 underflows) stays near the mean:
  // 1000 + sqrt(1000 x 7/8) x sqrt(2 ln 8) = 1000 + 29.580 x 2.0393 = 1060.3.
  EXPECT_NEAR(expected_max_load(8000, 8, 1e9), 1060.3, 0.1);
  // The cap binds.
  EXPECT_DOUBLE_EQ(expected_max_load(1000, 8, 4), 4.0);
}

TEST(BusiestChip, ExpertParallelReads) {
  // DeepSeek-V3 on 72 chips at batch 1: 8 experts touched, each chip holds 256/72 = 3.56;
  // the busiest chip holds more than one touched expert only by collision.
  const double b1 = experts_on_busiest_chip(256, 8, 72);
  EXPECT_GT(b1, 1.0);
  EXPECT_LT(b1, 2.0);
  // All 256 touched: every chip reads all of its 256/72.
  EXPECT_NEAR(experts_on_busiest_chip(256, 256, 72), 256.0 / 72, 1e-6);
  // More chips than experts: each chip reads its slice of one expert.
  EXPECT_DOUBLE_EQ(experts_on_busiest_chip(8, 2, 16), 0.5);
}

}  // namespace
}  // namespace chalk
