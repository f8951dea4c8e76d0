#include "chalk/model/moe.h"

#include <gtest/gtest.h>

#include <cmath>

#include "chalk/base/error.h"

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

TEST(MaxLoad, MemoizedValuesStayEachArgumentsOwn) {
  // The per-thread memo (moe.cc) has 1,024 slots: 3,000 other arguments in between collide
  // with every slot, and each hand value above must come back unchanged.
  const double first = expected_max_load(8000, 8, 1e9);
  double last = 0;
  for (int b = 1; b <= 3000; ++b) {
    const double v = expected_max_load(b, 64, 1e9);
    EXPECT_GE(v, last) << b;  // more balls, no smaller a maximum: a slot of another key would break it
    last = v;
  }
  EXPECT_EQ(expected_max_load(8000, 8, 1e9), first);
  EXPECT_NEAR(first, 1060.3, 0.1);  // as in BallsIntoBins
  EXPECT_NEAR(expected_max_load(1, 64, 100), 1.0, 0.01);
  // busiest_chip_experts likewise: 1.125 at 1.5 tokens (WholeExpertsByHand) after 3,000 others.
  for (int t = 1; t <= 3000; ++t) busiest_chip_experts({4, 1}, 1 + t / 3001.0, 2);
  EXPECT_NEAR(busiest_chip_experts({4, 1}, 1.5, 2), 1.125, 1e-12);
  EXPECT_NEAR(busiest_chip_experts({4, 1}, 2, 2), 1.25, 1e-12);
}

TEST(BusiestChip, WholeExpertsByHand) {
  // 4 experts, top-1, on 2 chips of 2 experts, 2 tokens. Same expert (1/4): max 1. Two
  // distinct (3/4): both on one chip with probability 2 / C(4, 2) = 1/3 (max 2), else max 1.
  // E[max] = 1/4 + 3/4 (2/3 + 2/3) = 1.25.
  EXPECT_NEAR(busiest_chip_experts({4, 1}, 2, 2), 1.25, 1e-12);
  // One token touches one expert; a half token interpolates towards none.
  EXPECT_NEAR(busiest_chip_experts({4, 1}, 1, 2), 1.0, 1e-12);
  EXPECT_NEAR(busiest_chip_experts({4, 1}, 1.5, 2), 1.125, 1e-12);
  EXPECT_EQ(busiest_chip_experts({4, 1}, 0, 2), 0.0);
}

TEST(BusiestChip, DeepSeekV3ExactAgainstEnumeration) {
  // 256 experts, top-8, one token: its 8 experts are a uniform 8-subset, so the busiest
  // chip's count is the largest part of a multivariate hypergeometric draw. Enumerating
  // every count vector, sum over (c_1..c_n) with sum 8 of max(c) prod C(b_i, c_i) / C(256, 8):
  // 8 chips of 32: 2.563748; 72 chips (40 of 4, 32 of 3): 1.263342. (Monte Carlo, 5k
  // draws: 2.54 and 1.25; the old Poisson approximation said 2.63 and 1.35.)
  const ExpertRouting ds{256, 8};
  EXPECT_NEAR(busiest_chip_experts(ds, 1, 8), 2.563748338, 1e-8);
  EXPECT_NEAR(busiest_chip_experts(ds, 1, 72), 1.263342418, 1e-8);
  // Two tokens overlap in j experts with probability C(8, j) C(248, 8-j) / C(256, 8), then
  // 16 - j are uniform: sum_j of that x the enumeration above at 16 - j = 4.066576 (8 chips),
  // 1.765630 (72 chips).
  EXPECT_NEAR(busiest_chip_experts(ds, 2, 8), 4.066575977, 1e-8);
  EXPECT_NEAR(busiest_chip_experts(ds, 2, 72), 1.765629983, 1e-8);
  // Every expert touched: experts are whole, so the chips holding ceil(256/72) = 4 read 4,
  // not 256/72 = 3.556 (the weight term was 11% low).
  EXPECT_DOUBLE_EQ(busiest_chip_experts(ds, 1e6, 72), 4.0);
  EXPECT_NEAR(busiest_chip_experts(ds, 4096, 72), 4.0, 1e-9);
  EXPECT_NEAR(busiest_chip_experts(ds, 4096, 8), 32.0, 1e-9);
  // Monotone in tokens.
  double last = 0;
  for (double t : {1.0, 2.0, 3.0, 8.0, 32.0, 64.0, 128.0, 512.0}) {
    const double b = busiest_chip_experts(ds, t, 72);
    EXPECT_GE(b, last);
    last = b;
  }
  // One chip reads every touched expert: 256 (1 - (1 - 8/256)^2) = 15.75 at two tokens.
  EXPECT_DOUBLE_EQ(busiest_chip_experts(ds, 2, 1), 15.75);
  // More chips than experts: each chip reads its slice of one expert.
  EXPECT_DOUBLE_EQ(busiest_chip_experts({8, 2}, 2, 16), 0.5);
}

TEST(BusiestChip, GroupLimitedRouting) {
  // DeepSeek-V3: 8 groups of 32, a token uses at most 4. On 8 chips each chip holds one
  // group, so one token's 8 experts are a uniform 8-subset of its 4 groups' 128 experts:
  // enumeration over 4 blocks of 32 gives 3.485903 on the busiest chip (Monte Carlo 3.50),
  // against 2.563748 without the limit: 36% more expert weight read.
  const ExpertRouting grouped{256, 8, 8, 4};
  EXPECT_NEAR(busiest_chip_experts(grouped, 1, 8), 3.485902501, 1e-8);
  // Every expert touched: the limit no longer matters.
  EXPECT_NEAR(busiest_chip_experts(grouped, 4096, 8), 32.0, 1e-9);
  // Between, an approximation (see moe.h): above the ungrouped exact value and below Monte
  // Carlo of the true group-limited routing (5,000 draws: 5.07 at 2 tokens and 7.81 at 4
  // on 8 chips, where this gives 4.73 and 6.83; ungrouped 4.07 and 6.57). It is known low.
  const ExpertRouting plain{256, 8};
  for (const double t : {2.0, 4.0}) {
    EXPECT_GT(busiest_chip_experts(grouped, t, 8), busiest_chip_experts(plain, t, 8));
  }
  EXPECT_LT(busiest_chip_experts(grouped, 2, 8), 5.07);
  EXPECT_LT(busiest_chip_experts(grouped, 4, 8), 7.81);
  // 72 chips straddle the groups; one token: Monte Carlo 1.49 (ungrouped exact 1.263).
  EXPECT_NEAR(busiest_chip_experts(grouped, 1, 72), 1.49, 0.05);
  // topk_group = n_group is no limit.
  EXPECT_DOUBLE_EQ(busiest_chip_experts({256, 8, 8, 8}, 3, 8), busiest_chip_experts(plain, 3, 8));
}

TEST(BusiestChip, Errors) {
  EXPECT_THROW(busiest_chip_experts({0, 1}, 1, 2), InputError);
  EXPECT_THROW(busiest_chip_experts({8, 9}, 1, 2), InputError);
  EXPECT_THROW(busiest_chip_experts({256, 8, 7, 4}, 1, 8), InputError);  // 7 does not divide 256
  EXPECT_THROW(busiest_chip_experts({256, 8, 8, 9}, 1, 8), InputError);
  EXPECT_THROW(busiest_chip_experts({256, 40, 8, 1}, 1, 8), InputError);  // 40 > one group of 32
  EXPECT_THROW(busiest_chip_experts({256, 8}, -1, 8), InputError);
  EXPECT_THROW(busiest_chip_experts({256, 8}, 1, 0), InputError);
}

}  // namespace
}  // namespace chalk
