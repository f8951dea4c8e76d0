// The MoE trade: the published MoE scaling laws reproduce their papers' own numbers.
#include "chalk/training/moe_scaling.h"

#include <gtest/gtest.h>

#include <cmath>

#include "chalk/base/error.h"

namespace chalk {
namespace {

// Eq. 4 by hand, S-BASE: shift = 1 / (1/1.847 - 1/314.478) = 1.8579; E = 128:
// 1/Ê = 1 / (127 + 1.8579) + 1/314.478 = 0.0077605 + 0.0031799 = 0.0109404 -> Ê = 91.40.
// A dense model (E = 1) sits at Ê = E_start.
TEST(ClarkRoutedLaw, SaturatingExpertCount) {
  const RoutedFit f = clark_sbase_fit();
  EXPECT_NEAR(saturated_experts(f, 1), 1.847, 1e-9);
  EXPECT_NEAR(saturated_experts(f, 128), 91.40, 0.01);
  EXPECT_LT(saturated_experts(f, 1e6), 314.478);
}

// The paper's cutoff beyond which routing stops helping: 937B dense parameters for S-BASE
// (section 5). From Table 3's rounded b / c = 0.108 / 0.009 = 12: 1.0e12, 6.7% above.
TEST(ClarkRoutedLaw, RoutingCutoffNearThePapers937B) {
  EXPECT_NEAR(routing_cutoff(clark_sbase_fit()), 1e12, 1e6);
  EXPECT_NEAR(routing_cutoff(clark_sbase_fit()) / 937e9, 1.0, 0.08);
  // The paper's cutoffs, quoted: rounding c to 0.012 moves 10^(-b/c) by 2.7x for RL-R
  // (10^(0.126/0.012) = 3.16e10 against 85B) and HASH (10^(0.136/0.012) = 2.15e11 against 83B).
  EXPECT_EQ(clark_sbase_fit().paper_cutoff_params, 937e9);
  EXPECT_EQ(clark_rlr_fit().paper_cutoff_params, 85e9);
  EXPECT_EQ(clark_hash_fit().paper_cutoff_params, 83e9);
  EXPECT_NEAR(routing_cutoff(clark_rlr_fit()), 3.162e10, 1e7);
  EXPECT_NEAR(routing_cutoff(clark_hash_fit()), 2.154e11, 1e8);
  // Below the cutoff more experts lower the loss; above it they raise it.
  const RoutedFit f = clark_sbase_fit();
  EXPECT_LT(routed_loss(f, 1e9, 64), routed_loss(f, 1e9, 8));
  EXPECT_GT(routed_loss(f, 1e13, 64), routed_loss(f, 1e13, 8));
}

// The effective parameter count: a 5M-parameter base model with 128 experts performs like
// a dense model of about 55M (Clark section 5, as read in the reference notes). By hand:
// log N = 6.699, log Ê = 1.961, log Ê_1 = 0.2665;
// log N̄ = (-0.082 x 6.699 - 0.108 x (1.961 - 0.2665) + 0.009 x 6.699 x 1.961) / (-0.082 + 0.009 x 0.2665)
//        = (-0.5493 - 0.1830 + 0.1182) / -0.0796 = 7.715 -> 51.8M (6% under 55M; rounded coefficients).
TEST(ClarkRoutedLaw, EffectiveParameterCount) {
  const RoutedFit f = clark_sbase_fit();
  EXPECT_NEAR(effective_params(f, 5e6, 128) / 1e6, 51.8, 0.5);
  EXPECT_NEAR(effective_params(f, 5e6, 128) / 55e6, 1.0, 0.1);
  // Equal loss by construction; a dense model is its own effective count.
  EXPECT_NEAR(routed_loss(f, effective_params(f, 5e6, 128), 1), routed_loss(f, 5e6, 128), 1e-9);
  EXPECT_NEAR(effective_params(f, 1e9, 1), 1e9, 1.0);
  // The trade at equal quality: 10.4x less compute per token for 8.2x more parameters than
  // the dense equivalent (128 experts, 2/3 of each layer routed: total 5M x 85.67 = 428M).
  const MoeTrade t = clark_trade(f, 5e6, 128, 2.0 / 3.0);
  EXPECT_NEAR(t.total_params, 5e6 * (1 + 127 * 2.0 / 3.0), 1.0);
  EXPECT_NEAR(t.compute_ratio, 51.83 / 5, 0.05);
  EXPECT_NEAR(t.param_ratio, 428.33 / 51.83, 0.05);
}

// Krajewski Eq. 9 at one point, by hand (N total 43e9, D 1e11, G 8):
// 0.47 + (2.1 / 8^0.58 + 18.1) / 43e9^0.115 + 30.8 / 1e11^0.147
// = 0.47 + (0.6287 + 18.1) / 16.705 + 30.8 / 41.400 = 0.47 + 1.1211 + 0.7440 = 2.3351.
TEST(KrajewskiFineGrainedLaw, LossByHand) {
  EXPECT_NEAR(fine_grained_loss(krajewski_moe_fit(), 43e9, 1e11, 8), 2.3351, 0.0005);
  // Finer experts lower the loss at equal parameters and tokens; the dense law ignores G.
  EXPECT_LT(fine_grained_loss(krajewski_moe_fit(), 43e9, 1e11, 16), fine_grained_loss(krajewski_moe_fit(), 43e9, 1e11, 1));
  EXPECT_EQ(fine_grained_loss(krajewski_dense_fit(), 1e9, 1e11, 1), fine_grained_loss(krajewski_dense_fit(), 1e9, 1e11, 16));
}

// The paper's headline (section 6): a compute-optimal MoE at 1e20 FLOPs matches a dense
// model trained with about 20x the compute. With G = 8, E = 64, experts 2/3 of a block and
// the router's FLOPs left out, the laws give 21.8x. The gap widens with the budget (27.6x
// at 1e25 with G = 8, 34x with G = 64); the paper's "over 40x beyond 1e25" is NOT
// reproduced by this accounting (docs/training-runs.md says so).
TEST(KrajewskiFineGrainedLaw, MoeMatchesDenseAtAbout20xCompute) {
  const double m20 = dense_compute_multiplier(1e20, 8);
  EXPECT_NEAR(m20, 21.8, 0.3);
  EXPECT_NEAR(m20 / 20.0, 1.0, 0.1);
  const double m25 = dense_compute_multiplier(1e25, 8);
  EXPECT_NEAR(m25, 27.6, 0.4);
  EXPECT_GT(dense_compute_multiplier(1e25, 64), m25);
  EXPECT_GT(dense_compute_multiplier(1e20, 8), dense_compute_multiplier(1e20, 1));  // finer experts help
  // The experts' share of a block sets total / active = 1 + 63 x share: 43 at 2/3 (the
  // default, the same 1/3 + 64 x 2/3), 32.5 at 1/2, fewer parameters for the same compute,
  // so a smaller dense multiple: 16.4x at 1e20.
  EXPECT_DOUBLE_EQ(dense_compute_multiplier(1e20, 8, 2.0 / 3.0), m20);
  EXPECT_NEAR(dense_compute_multiplier(1e20, 8, 0.5), 16.4, 0.3);
}

TEST(KrajewskiFineGrainedLaw, TradeAtEqualTokens) {
  // 1B active, 43B total, 100B tokens, G 8: loss 2.3351; the dense law reaches it at
  // N = (16.3 / (2.3367 - 0.47 - 26.7 / 1e11^0.127))^(1/0.126) on the same tokens.
  const MoeTrade t = krajewski_trade(1e9, 1e11, 8, 2.0 / 3.0);
  const double room = 2.3351 - 0.47 - 26.7 / std::pow(1e11, 0.127);
  EXPECT_NEAR(t.dense_equivalent / std::pow(16.3 / room, 1 / 0.126), 1.0, 0.03);
  EXPECT_GT(t.compute_ratio, 1.0);
  EXPECT_NEAR(t.total_params, 43e9, 1e3);
  EXPECT_NEAR(t.loss, 2.3351, 0.0005);
}

TEST(MoeScaling, BadInputsNameTheField) {
  auto field = [](auto f) {
    try {
      f();
    } catch (const InputError& e) {
      return e.field();
    }
    return std::string("none");
  };
  EXPECT_EQ(field([] { saturated_experts(clark_sbase_fit(), 0.5); }), "experts");
  EXPECT_EQ(field([] { routed_loss(clark_sbase_fit(), -1, 8); }), "params");
  EXPECT_EQ(field([] { clark_trade(clark_sbase_fit(), 1e9, 8, 1.5); }), "expert_share");
  EXPECT_EQ(field([] { fine_grained_loss(krajewski_moe_fit(), 1e9, 0, 8); }), "tokens");
  EXPECT_EQ(field([] { fine_grained_loss(krajewski_moe_fit(), 1e9, 1e9, 0.5); }), "granularity");
  EXPECT_EQ(field([] { dense_compute_multiplier(-1, 8); }), "flops");
  EXPECT_EQ(field([] { parse_routed_fit("switch", "--routing"); }), "--routing");
}

}  // namespace
}  // namespace chalk
