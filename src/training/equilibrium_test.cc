// The lecture's equilibrium (1:18:52-1:32:42): serving, RL and pre-training at equal cost.
#include "chalk/training/equilibrium.h"

#include <cmath>

#include <gtest/gtest.h>

#include "chalk_testing/expect.h"

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/training/run.h"

namespace chalk {
namespace {

using chalk::testing::expect_rel;

EquilibriumInputs lecture_defaults() {
  EquilibriumInputs in;
  in.model = load_model("deepseek-v3");
  in.system = load_system("gb200-nvl72");
  return in;
}

TEST(Equilibrium, LectureServingArithmetic) {
  // 1:30:37: 50M tokens/s for two months = 50e6 x (365.25 / 6 x 86,400 s = 5.2596e6 s)
  // = 2.63e14 tokens. The transcript's "2.6 times 10 to the 15th" (1:30:12) is a slip.
  const Equilibrium e = solve_equilibrium(lecture_defaults());
  expect_rel(e.serving_tokens, 2.63e14, 0.001);
}

TEST(Equilibrium, LectureOverTrainingFromFlopsAlone) {
  // The lecture's accounting: 6 N D_pre = 2 N D_serve, so D_pre = 2.63e14 / 3 = 8.77e13.
  // Against 20 tokens per active parameter for a DeepSeek-V3-sized model (N = 36.6e9 active
  // matmul parameters: 37.5B active less the 0.93B input embedding, D_opt = 732e9): 120x,
  // the lecture's "about 100 times" (1:31:57). The transcript copy does not say which model
  // size the lecture assumed; at N = 43.8e9 the factor is exactly 100.
  const double d_pre = lecture_flops_pretraining_tokens(2.6298e14);
  expect_rel(d_pre, 8.766e13, 0.001);
  const double n = count_params(load_model("deepseek-v3")).active_matmul();
  expect_rel(n, 36.62e9, 0.001);
  const double factor = d_pre / optimal_tokens_for_params(ChinchillaMethod::tokens_per_param_20, n);
  expect_rel(factor, 8.766e13 / (20 * 36.62e9), 0.001);  // 119.7
  expect_rel(d_pre / optimal_tokens_for_params(ChinchillaMethod::tokens_per_param_20, 43.83e9), 100, 0.001);
}

TEST(Equilibrium, EngineDecodeMakesServingDearerPerToken) {
  // With decode priced by the engine (DeepSeek-V3 on one GB200 NVL72: the best layout is
  // DP-attention EP72 with two micro-batches at 28.6K sequences, 8.45K tok/s per chip, 27% of
  // the FP8 peak, the checkpoint's format, in decode FLOPs), a served token costs 1.18e-4 chip-seconds against
  // 2.57e-4 for a pre-training token (281 GFLOPs at 43.73% of 2.5 PFLOP/s), so the serving
  // bill buys D_pre = 2.63e14 x 1.18e-4 / 2.57e-4 = 1.21e14 tokens, more than the FLOP-only
  // D_serve / 3 = 8.77e13: decode runs further below peak than training does.
  const Equilibrium e = solve_equilibrium(lecture_defaults());
  EXPECT_GT(e.pretraining_tokens, e.serving_tokens / 3);
  expect_rel(e.pretraining_tokens,
             e.serving_tokens * e.serving_decode.chip_seconds_per_token / e.training_chip_seconds_per_token, 1e-12);
  EXPECT_EQ(e.serving_decode.n_chips, 72);  // one NVL72 rack holds DeepSeek-V3
  // 1.21e14 and 165 before the routed experts' grouped GEMMs paid their per-tile fixed
  // cost in the decode step (1.18e-4 -> 1.22e-4 chip-seconds per served token).
  expect_rel(e.pretraining_tokens, 1.249e14, 0.02);
  expect_rel(e.over_training_factor, 170.6, 0.02);  // 1.249e14 / (20 x 36.62e9)
  // Equal thirds: each cost is the serving bill.
  expect_rel(e.pretraining_chip_seconds, e.serving_chip_seconds, 1e-12);
  expect_rel(e.rl_chip_seconds, e.serving_chip_seconds, 1e-12);
  // RL trains on 2 in 10 rollout tokens (1:26:18), so fewer RL tokens than pre-training tokens
  // pass through a backward pass (1:28:07-1:28:14: "RL is less efficient in machine time").
  EXPECT_LT(e.rl_trained_tokens, e.pretraining_tokens);
  expect_rel(e.rl_trained_tokens, 0.2 * e.rl_rollout_tokens, 1e-12);
}

TEST(Equilibrium, InferenceAwareOptimumIsSmallerAndLonger) {
  // Sardana et al. 2023: with 2.6e14+ inference tokens the cheapest model at the same loss has
  // fewer parameters than the Chinchilla-optimal one and more tokens per parameter.
  const Equilibrium e = solve_equilibrium(lecture_defaults());
  EXPECT_LT(e.inference_aware.params, e.chinchilla_at_loss.params);
  EXPECT_GT(e.inference_aware.tokens_per_param, e.chinchilla_at_loss.tokens_per_param);
}

TEST(Equilibrium, ServingMoreRaisesOverTraining) {
  EquilibriumInputs in = lecture_defaults();
  const double base = solve_equilibrium(in).over_training_factor;
  in.serving_tokens_per_s *= 2;
  expect_rel(solve_equilibrium(in).over_training_factor, 2 * base, 1e-9);  // linear in D_serve
}

TEST(Equilibrium, DecodePriceIsTheEngineStep) {
  // chip-seconds per token = replica chips x t_step / batch, never below the roofline's.
  const DecodePrice p = price_decode(load_model("llama-3.1-70b"), load_system("h100-sxm"), 8, 4096, 64);
  expect_rel(p.chip_seconds_per_token, p.replica_chips * p.t_step.value() / p.batch, 1e-9);
  EXPECT_LE(p.batch, 64);
  EXPECT_GE(p.chip_seconds_per_token, p.roofline_chip_seconds_per_token);
}

TEST(Equilibrium, BadInputsAreRejected) {
  auto field_of = [](EquilibriumInputs in) {
    try {
      solve_equilibrium(in);
    } catch (const InputError& e) {
      return e.field();
    }
    return std::string("no error");
  };
  const EquilibriumInputs ok = lecture_defaults();
  EquilibriumInputs in = ok;
  in.serving_tokens_per_s = 0;
  EXPECT_EQ(field_of(in), "serving_tokens_per_s");
  in = ok, in.deployment_window = seconds(-1);
  EXPECT_EQ(field_of(in), "deployment_window");
  in = ok, in.rl_trained_fraction = 0;
  EXPECT_EQ(field_of(in), "rl_trained_fraction");
  in = ok, in.rl_trained_fraction = 1.5;
  EXPECT_EQ(field_of(in), "rl_trained_fraction");
  in = ok, in.training_mfu = 2;
  EXPECT_EQ(field_of(in), "training_mfu");
  in = ok, in.pretraining_to_serving_cost = 0;
  EXPECT_EQ(field_of(in), "pretraining_to_serving_cost");
  in = ok, in.serving_context = 0;
  EXPECT_EQ(field_of(in), "decode_context");
  in = ok, in.decode_chips = 1;  // 671B parameters on one GB200
  EXPECT_EQ(field_of(in), "decode_chips");
  in = ok, in.decode_batch = -1;
  EXPECT_EQ(field_of(in), "decode_batch");
  in = ok, in.rl_sequence_length = 1;
  EXPECT_EQ(field_of(in), "rl_sequence_length");
}

}  // namespace
}  // namespace chalk
