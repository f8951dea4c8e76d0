// Chinchilla allocations against the paper's own tables and the reference's derived frontier.
#include "chalk/training/scaling_laws.h"

#include <cmath>

#include <gtest/gtest.h>

#include "chalk_testing/expect.h"

#include "chalk/base/error.h"

namespace chalk {
namespace {

using chalk::testing::expect_rel;

TEST(Chinchilla, ApproachOneReproducesTheirTableThree) {
  // Hoffmann et al. 2022 Table 3 (Approach 1 projections): FLOPs -> parameters, tokens.
  // N = 70e9 (C / 5.88e23)^0.5; e.g. 1.21e20: 70e9 x sqrt(2.058e-4) = 1.004e9 (table: 1B, 20.2B
  // tokens); 1.27e26: 70e9 x sqrt(216.0) = 1.029e12 (table: 1T, 21.2T). The table's exponent is
  // the fitted one, a hair under 0.50, so rows sit within 3.5%.
  struct Row { double flops, params, tokens; };
  for (const Row r : {Row{1.21e20, 1e9, 20.2e9}, Row{1.23e22, 10e9, 205.1e9}, Row{5.76e23, 67e9, 1.5e12},
                      Row{3.85e24, 175e9, 3.7e12}, Row{1.27e26, 1e12, 21.2e12}}) {
    const Allocation a = chinchilla_optimal(ChinchillaMethod::approach1, r.flops);
    expect_rel(a.params, r.params, 0.035);
    expect_rel(a.tokens, r.tokens, 0.08);  // 67B row: the table rounds 1.386T to 1.5T
    expect_rel(a.flops, r.flops, 1e-12);
  }
}

TEST(Chinchilla, ChinchillaItselfIsOptimalForItsBudget) {
  // The anchor: 6 x 70e9 x 1.4e12 = 5.88e23 FLOPs -> 70B on 1.4T, 20 tokens per parameter,
  // by Approach 1 and 2 alike; the 20x rule agrees: sqrt(5.88e23 / 120) = 70.0e9.
  for (ChinchillaMethod m : {ChinchillaMethod::approach1, ChinchillaMethod::approach2, ChinchillaMethod::tokens_per_param_20}) {
    const Allocation a = chinchilla_optimal(m, 5.88e23);
    expect_rel(a.params, 70e9, 1e-9);
    expect_rel(a.tokens, 1.4e12, 1e-9);
    expect_rel(a.tokens_per_param, 20, 1e-9);
  }
}

TEST(Chinchilla, TwentyTokensPerParameterRule) {
  // C = 6 N (20 N) = 120 N^2: 1.2e23 FLOPs -> N = sqrt(1e21) = 31.62e9, D = 632.5e9.
  const Allocation a = chinchilla_optimal(ChinchillaMethod::tokens_per_param_20, 1.2e23);
  expect_rel(a.params, 31.623e9, 1e-4);
  expect_rel(a.tokens, 632.46e9, 1e-4);
  EXPECT_DOUBLE_EQ(optimal_tokens_for_params(ChinchillaMethod::tokens_per_param_20, 7e9), 140e9);
}

TEST(Chinchilla, ApproachThreeFrontierMatchesTheReferenceTable) {
  // training-and-systems.md 7.2, derived frontier (G = (alpha A / (beta B))^(1/(alpha+beta))):
  // printed fit at 5.76e23 -> 32B, 3.0T (93 tok/param); TeX fit -> 40B, 2.4T (the paper's own
  // "~40B" for Gopher's budget, Figure 4 caption); Epoch at 1e21 -> 2.8B, 0.06T (22), at 1e26
  // -> 1.02T, 16T.
  Allocation p = optimal_allocation(hoffmann_printed_fit(), 5.76e23);
  expect_rel(p.params, 32.2e9, 0.01);
  expect_rel(p.tokens, 2.98e12, 0.01);
  Allocation t = chinchilla_optimal(ChinchillaMethod::approach3_tex, 5.76e23);
  expect_rel(t.params, 40.3e9, 0.01);
  expect_rel(t.tokens_per_param, 59.1, 0.01);
  Allocation e = chinchilla_optimal(ChinchillaMethod::epoch, 1e21);
  expect_rel(e.params, 2.78e9, 0.01);
  expect_rel(e.tokens_per_param, 21.6, 0.01);
  e = chinchilla_optimal(ChinchillaMethod::epoch, 1e26);
  expect_rel(e.params, 1.02e12, 0.01);
  expect_rel(e.tokens, 16.4e12, 0.01);
}

TEST(Chinchilla, OptimalTokensInvertsTheAllocation) {
  // D_opt(N_opt(C)) = D_opt(C) for every method: the inverse is exact.
  for (ChinchillaMethod m : all_chinchilla_methods()) {
    const Allocation a = chinchilla_optimal(m, 3e24);
    expect_rel(optimal_tokens_for_params(m, a.params), a.tokens, 1e-9);
  }
}

TEST(Chinchilla, PredictedLossOfChinchilla) {
  // Printed fit at (70e9, 1.4e12): 1.69 + 406.4 / 70e9^0.34 + 410.7 / 1.4e12^0.28
  // = 1.69 + 406.4 / 4,867.8 + 410.7 / 2,517.2 = 1.69 + 0.0835 + 0.1632 = 1.9366.
  expect_rel(predicted_loss(hoffmann_printed_fit(), 70e9, 1.4e12), 1.9366, 1e-4);
}

TEST(OverTraining, ComputeOptimalRunWastesNothing) {
  const Allocation a = chinchilla_optimal(ChinchillaMethod::epoch, 1e24);
  const OverTraining o = over_training(ChinchillaMethod::epoch, epoch_fit(), a.params, a.tokens);
  expect_rel(o.factor, 1, 1e-9);
  EXPECT_NEAR(o.wasted_fraction, 0, 1e-6);
}

TEST(OverTraining, EightBillionOnFifteenTrillion) {
  // An 8B model on 15T tokens (Llama 3 8B's published budget): 20x rule D_opt = 160e9, factor
  // 15e12 / 160e9 = 93.75. Epoch fit: L = 1.8172 + 482.01 / 8e9^0.3478 + 2085.43 / 15e12^0.3658.
  const OverTraining o = over_training(ChinchillaMethod::tokens_per_param_20, epoch_fit(), 8e9, 15e12);
  EXPECT_DOUBLE_EQ(o.factor, 93.75);
  expect_rel(o.loss, 1.8172 + 482.01 / std::pow(8e9, 0.3478) + 2085.43 / std::pow(15e12, 0.3658), 1e-12);
  // The same loss reached on the frontier costs less, and the frontier point lies on the loss.
  EXPECT_GT(o.wasted_fraction, 0.3);
  EXPECT_LT(o.wasted_fraction, 0.9);
  expect_rel(predicted_loss(epoch_fit(), o.iso_loss_optimal.params, o.iso_loss_optimal.tokens), o.loss, 1e-9);
  EXPECT_GT(o.iso_loss_optimal.params, 8e9);  // a larger model on fewer tokens
}

TEST(OverTraining, MoreTokensOnTheSameModelWasteMore) {
  double last = -1;
  for (double d : {1e12, 3e12, 1e13, 3e13}) {
    const OverTraining o = over_training(ChinchillaMethod::epoch, epoch_fit(), 8e9, d);
    EXPECT_GT(o.wasted_fraction, last);
    last = o.wasted_fraction;
  }
}

TEST(InferenceAware, SardanasThirteenBillionExample) {
  // Sardana et al. 2023 (reference 7.3): a 13B-quality model with 2T tokens of lifetime
  // inference is cheapest as a ~7B model trained longer, saving 1.7e22 FLOPs (17%). With
  // Hoffmann's unrounded fit: 13B is compute-optimal on D = (N/G)^((a+b)/b) / N = 619B tokens,
  // loss 2.0237; the minimum of 6 N D(N) + 2 N 2e12 along that loss is N = 7.12e9 on 1.30T,
  // 1.63e22 FLOPs (16.3%) below 6 x 13e9 x 619e9 + 2 x 13e9 x 2e12.
  const ParametricFit f = hoffmann_tex_fit();
  const double d13 = optimal_tokens_for_params(ChinchillaMethod::approach3_tex, 13e9);
  expect_rel(d13, 619e9, 0.01);
  const double loss = predicted_loss(f, 13e9, d13);
  const Allocation a = inference_aware_optimal(f, loss, 2e12);
  expect_rel(a.params, 7.12e9, 0.01);
  expect_rel(a.tokens, 1.30e12, 0.01);
  expect_rel(predicted_loss(f, a.params, a.tokens), loss, 1e-9);
  const double base = 6 * 13e9 * d13 + 2 * 13e9 * 2e12, best = a.flops + 2 * a.params * 2e12;
  expect_rel(base - best, 1.7e22, 0.05);
  expect_rel((base - best) / base, 0.17, 0.05);
  // Without inference it is the Chinchilla point at that loss: 13B on 619B again.
  const Allocation c = inference_aware_optimal(f, loss, 0);
  expect_rel(c.params, 13e9, 1e-3);
  EXPECT_THROW(inference_aware_optimal(f, 1.5, 2e12), InputError);  // below E = 1.6934
  EXPECT_THROW(inference_aware_optimal(f, loss, -1), InputError);
}

TEST(Chinchilla, BadInputsAreRejected) {
  EXPECT_THROW(chinchilla_optimal(ChinchillaMethod::approach1, 0), InputError);
  EXPECT_THROW(chinchilla_optimal(ChinchillaMethod::epoch, -1e21), InputError);
  EXPECT_THROW(chinchilla_optimal(ChinchillaMethod::epoch, std::nan("")), InputError);
  EXPECT_THROW(predicted_loss(epoch_fit(), 0, 1e12), InputError);
  EXPECT_THROW(over_training(ChinchillaMethod::epoch, epoch_fit(), 8e9, -5), InputError);
  try {
    parse_chinchilla_method("approach4", "method");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "method");
    EXPECT_NE(std::string(e.what()).find("'approach4'"), std::string::npos);
  }
}

}  // namespace
}  // namespace chalk
