// The data of `chalk train plot run`: cost shares and iso-loss curves.
#include "chalk/training/run_charts.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "chalk/base/error.h"

namespace chalk {
namespace {

// Hand-made equilibrium: D_opt 1e12 tokens at 1e-6 chip-seconds each; RL and serving 1e6
// chip-seconds each. At k = 1 pre-training costs 1e6 too: a third each. At k = 100 it
// costs 1e8: 1e8 / 1.02e8 = 0.98039.
TEST(CostShares, ByHand) {
  Equilibrium e;
  e.chinchilla_tokens = 1e12;
  e.training_chip_seconds_per_token = 1e-6;
  e.rl_chip_seconds = 1e6;
  e.serving_chip_seconds = 1e6;
  const auto s = cost_shares(e, {1, 100});
  ASSERT_EQ(s.size(), 2u);
  EXPECT_NEAR(s[0].pretraining, 1.0 / 3, 1e-12);
  EXPECT_NEAR(s[0].rl, 1.0 / 3, 1e-12);
  EXPECT_NEAR(s[1].pretraining, 1e8 / 1.02e8, 1e-12);
  EXPECT_NEAR(s[1].pretraining + s[1].rl + s[1].serving, 1.0, 1e-12);
  EXPECT_DOUBLE_EQ(s[1].pretraining_tokens, 1e14);
  EXPECT_THROW(cost_shares(e, {0}), InputError);
  EXPECT_THROW(cost_shares(Equilibrium{}, {1}), InputError);
}

TEST(CostShares, LogSpaced) {
  const auto f = log_spaced(1, 1000, 4);
  ASSERT_EQ(f.size(), 4u);
  EXPECT_NEAR(f[1], 10, 1e-9);
  EXPECT_NEAR(f[2], 100, 1e-9);
  EXPECT_EQ(f[3], 1000);
  EXPECT_THROW(log_spaced(10, 1, 4), InputError);
  EXPECT_THROW(log_spaced(1, 10, 1), InputError);
}

// Every point of the curve has the loss it was drawn for, and its cheapest point (least
// 6 N D) is the compute-optimal allocation of that budget (Hoffmann Eq. 4): at the
// Chinchilla budget 5.76e23 the printed fit's optimum, within the 2% grid step.
TEST(IsoLoss, CurveHoldsItsLossAndTouchesTheFrontier) {
  const ParametricFit f = hoffmann_printed_fit();
  const Allocation opt = optimal_allocation(f, 5.76e23);
  const double loss = predicted_loss(f, opt.params, opt.tokens);
  const auto curve = iso_loss_curve(f, loss, 1e9, 1e13, 466);
  ASSERT_GT(curve.size(), 100u);
  for (const auto& p : curve) EXPECT_NEAR(predicted_loss(f, p.params, p.tokens), loss, 1e-9);
  const auto cheapest = std::min_element(curve.begin(), curve.end(), [](const auto& a, const auto& b) { return a.flops < b.flops; });
  EXPECT_NEAR(cheapest->params / opt.params, 1.0, 0.02);
  EXPECT_NEAR(cheapest->flops / 5.76e23, 1.0, 0.001);
  // Below the loss A / N^alpha alone reaches, no D suffices: those N are left out.
  EXPECT_LT(iso_loss_curve(f, 1.70, 1e6, 1e13, 50).size(), 50u);
  EXPECT_THROW(iso_loss_curve(f, 1.0, 1e9, 1e10, 10), InputError);
  EXPECT_THROW(iso_loss_curve(f, 2.0, 1e10, 1e9, 10), InputError);
}

}  // namespace
}  // namespace chalk
