#include "chalk/model/expert_skew.h"

#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/model/moe.h"

namespace chalk {
namespace {

TEST(ExpertSkew, ExpectedMaxOfStandardNormals) {
  // One rank: 0. Two: E[max(Z1, Z2)] = 1/sqrt(pi) = 0.564190. Eight and 32: the tabulated
  // expected maxima of normal samples (Harter 1961, Table 1): 1.42360 and 2.06973.
  EXPECT_EQ(expected_max_standard_normal(1), 0.0);
  EXPECT_NEAR(expected_max_standard_normal(2), 1 / std::sqrt(3.14159265358979), 1e-6);
  EXPECT_NEAR(expected_max_standard_normal(8), 1.42360, 1e-4);
  EXPECT_NEAR(expected_max_standard_normal(32), 2.06973, 1e-4);
}

TEST(ExpertSkew, LearnedRouterFactorAgreesWithAnIndependentMonteCarlo) {
  // numpy, 8,000 draws of 256 lognormal(sigma 1.010) popularities in consecutive blocks:
  // the busiest of 8 ranks carries 1.368x the mean share, of 32 ranks 2.381x (TensorRT-LLM
  // measured 2.564 at EP32: the fit's -7%). 1,024 draws here (1.372, 2.388): a standard error of about
  // 0.007 at EP8 and 0.016 at EP32. One rank holds every expert: 1.
  EXPECT_NEAR(learned_router_rank_factor(256, 8), 1.368, 0.02);
  EXPECT_NEAR(learned_router_rank_factor(256, 32), 2.381, 0.04);
  EXPECT_EQ(learned_router_rank_factor(256, 1), 1.0);
  // More ranks than experts: the busiest holds the hottest expert; 8 experts on 16 ranks are
  // 8 experts on 8 (the same cached draw).
  EXPECT_EQ(learned_router_rank_factor(8, 16), learned_router_rank_factor(8, 8));
}

TEST(ExpertSkew, BusiestRankUnderEachPlacement) {
  // Uniform routing is balls into bins, unchanged: 8 pairs (one token, top-8) on 8 ranks.
  EXPECT_EQ(busiest_rank_assignments(8, 256, 8, ExpertBalance::uniform), expected_max_load(8, 8, 8));
  // EPLB at EP32 with 1,024 pairs a rank (TensorRT-LLM blog 4 Table 1's EPLB rows):
  // F = 1 + 0.041 x 2.06973 = 1.08486; the noise B - mu = sqrt(1024 x 31/32) x sqrt(2 ln 32)
  // = 31.496 x 2.63290 = 82.93 (moe.h's heavy-load form), 0.08098 of the mean; the busiest
  // = 1 + hypot(0.08486, 0.08098) = 1.1173 x 1,024 = 1,144.1 (measured 1.109x).
  EXPECT_NEAR(busiest_rank_assignments(32768, 256, 32, ExpertBalance::eplb), 1144.1, 0.2);
  // A learned router at EP8 with 7,168 pairs a rank (896 sequences a rank, top-8): the skew
  // dominates the noise, mu + hypot(mu (F - 1), B - mu) with B - mu = sqrt(7168 x 7/8) x
  // sqrt(2 ln 8) = 79.20 x 2.0393 = 161.5, against mu (F - 1) of about 2,640.
  const double f = learned_router_rank_factor(256, 8);
  const double busiest = busiest_rank_assignments(57344, 256, 8, ExpertBalance::learned);
  EXPECT_NEAR(busiest, 7168 + std::hypot(7168 * (f - 1), 161.5), 0.5);
  EXPECT_GT(busiest / 7168, 1.34);
  // One token: the noise dominates: 2.63 (uniform, moe.h) against about 2.67 (learned).
  const double one = busiest_rank_assignments(8, 256, 8, ExpertBalance::learned);
  EXPECT_NEAR(one, 1 + std::hypot(f - 1, expected_max_load(8, 8, 8) - 1), 1e-12);
  // Zero pairs and a single rank hold no imbalance.
  EXPECT_EQ(busiest_rank_assignments(0, 256, 8, ExpertBalance::learned), 0.0);
  EXPECT_EQ(busiest_rank_assignments(100, 256, 1, ExpertBalance::learned), 100.0);
}

TEST(ExpertSkew, BadInputNamesTheField) {
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([] { parse_expert_balance("maybe", "--eplb"); }).find("--eplb: 'maybe' is not yes"), std::string::npos);
  EXPECT_EQ(parse_expert_balance("", "--eplb"), ExpertBalance::uniform);
  EXPECT_EQ(parse_expert_balance("no", "--eplb"), ExpertBalance::learned);
  EXPECT_EQ(parse_expert_balance("YES", "--eplb"), ExpertBalance::eplb);  // any case, as model names
  EXPECT_EQ(parse_expert_balance("No", "--eplb"), ExpertBalance::learned);
  EXPECT_EQ(parse_expert_balance("yes", "--eplb"), ExpertBalance::eplb);
  EXPECT_NE(message([] { busiest_rank_assignments(-1, 256, 8, ExpertBalance::learned); }).find("assignments: must be finite and >= 0, got -1"),
            std::string::npos);
  EXPECT_NE(message([] { busiest_rank_assignments(8, 256, 0, ExpertBalance::learned); }).find("--ep: must be >= 1 rank, got 0"), std::string::npos);
  EXPECT_NE(message([] { learned_router_rank_factor(0, 8); }).find("n_routed_experts: must be >= 1, got 0"), std::string::npos);
  EXPECT_NE(message([] { expected_max_standard_normal(0); }).find("ranks: must be >= 1, got 0"), std::string::npos);
}

}  // namespace
}  // namespace chalk
