// Fixed GPU time per kernel of a training step (kernel_fixed_time.h): the kernels counted per
// layer and what they add. Hand counts in each test's comment (docs/formulas.md, "Fixed time
// per kernel in training").
#include <gtest/gtest.h>

#include "chalk/io/io.h"
#include "chalk/training/kernel_fixed_time.h"
#include "chalk/training/plan.h"
#include "chalk/training/step.h"

namespace chalk {
namespace {

TrainingSystem gpu_fixed_times() {
  TrainingSystem s;
  s.gemm_kernel_fixed_s = 6.3e-6;
  s.kernel_gap_s = kKernelGapS;
  return s;
}

TEST(KernelFixedTime, Qwen3MoeLayerAtEp8) {
  // Qwen3-30B-A3B (QKV and output GEMMs, 128 experts of gate/up and down, top-8, 2 norms,
  // rotary), EP8: 16 local experts, FP8 current scaling (q = 3), NeMo's TEGroupedMLP (per-expert
  // GEMMs over 4 streams: 16 / 4 = 4 each).
  // GEMM-class forward: 1 + 1 + 4 + 4 + attention 1 + router 1 = 12; backward 2 + 2 + 8 + 8 +
  // attention 1 + router 2 = 23; weight gradients 1 + 1 + 4 + 4 + router 1 = 11.
  // Others forward: dense quantize 3 + 3, experts (3 x 16 + 1 output) x 2 = 98, norms 2,
  // residual adds 2, activation 1, rotary 2, MoE router/preprocess/dispatch 39: 150.
  // Backward: 3 + 3, (3 x 16 + 2) x 2 = 100, attention's 2, 2 + 2 + 1 + 2, MoE 19: 134.
  const TrainingCosts c = make_training_costs(load_model("qwen3-30b-a3b"), 4096);
  TrainingPlan p;
  p.ep = 8;
  p.compute = MatmulPrecision::fp8;
  p.fp8_recipe = Fp8Recipe::tensorwise;
  p.per_expert_gemms = true;
  const LayerKernelCounts k = layer_kernel_counts(c, p);
  EXPECT_DOUBLE_EQ(k.gemm_forward, 12);
  EXPECT_DOUBLE_EQ(k.gemm_backward, 23);
  EXPECT_DOUBLE_EQ(k.gemm_wgrad, 11);
  EXPECT_DOUBLE_EQ(k.other_forward, 150);
  EXPECT_DOUBLE_EQ(k.other_backward, 134);
  // (12 + 23) x 6.3 us + (150 + 134) x 1.27 us = 220.5 + 360.68 = 581.18 us per layer and microbatch.
  const LayerFixedTime f = layer_fixed_time(c, gpu_fixed_times(), p);
  EXPECT_NEAR(f.forward_gemm + f.backward_gemm + f.forward_other + f.backward_other, 581.18e-6, 1e-10);
  EXPECT_NEAR(f.wgrad, 11 * 6.3e-6, 1e-12);
  // MXFP8 (q = 1, 2 swizzles per GEMM forward, 4 backward): others forward 2 x (1 + 2) + 2 x
  // (16 + 2 + 1) + 7 + 39 = 90, backward 2 x (1 + 4) + 2 x (16 + 4 + 2) + 2 + 7 + 19 = 82.
  p.fp8_recipe = Fp8Recipe::mxfp8;
  EXPECT_DOUBLE_EQ(layer_kernel_counts(c, p).other_forward, 90);
  EXPECT_DOUBLE_EQ(layer_kernel_counts(c, p).other_backward, 82);
  // One grouped kernel per expert GEMM, bf16 (DeepGEMM-like engines): GEMM-class forward
  // 1 + 1 + 1 + 1 + 1 + 1 = 6; others forward 7 + 7 = 14, backward 2 + 7 + 4 = 13.
  p.compute = MatmulPrecision::bf16;
  p.fp8_recipe = Fp8Recipe::delayed;
  p.per_expert_gemms = false;
  EXPECT_DOUBLE_EQ(layer_kernel_counts(c, p).gemm_forward, 6);
  EXPECT_DOUBLE_EQ(layer_kernel_counts(c, p).other_forward, 14);
  EXPECT_DOUBLE_EQ(layer_kernel_counts(c, p).other_backward, 13);
}

TEST(KernelFixedTime, DenseLayerFusedAndEager) {
  // Llama 3.1 8B, bf16, fused: GEMMs QKV, output, gate/up, down: forward 4 + attention 1 = 5,
  // backward 8 + 1 = 9; others forward norms 2 + residual 2 + SwiGLU 1 + rotary 2 = 7,
  // backward 7 + attention's 2 = 9: 14 x 6.3 + 16 x 1.27 = 88.2 + 20.32 = 108.52 us.
  const TrainingCosts c = make_training_costs(load_model("llama-3.1-8b"), 8192);
  TrainingPlan p;
  const LayerKernelCounts k = layer_kernel_counts(c, p);
  EXPECT_DOUBLE_EQ(k.gemm_forward, 5);
  EXPECT_DOUBLE_EQ(k.gemm_backward, 9);
  EXPECT_DOUBLE_EQ(k.other_forward, 7);
  EXPECT_DOUBLE_EQ(k.other_backward, 9);
  const LayerFixedTime f = layer_fixed_time(c, gpu_fixed_times(), p);
  EXPECT_NEAR(f.forward_gemm + f.backward_gemm + f.forward_other + f.backward_other, 108.52e-6, 1e-10);
  // PyTorch eager (torchtitan without compile): norms 2 x 8 + 2 + SwiGLU 2 + rotary 6 = 26
  // forward, 2 x 14 + 2 + 3 + 6 + attention's 2 = 41 backward.
  p.compile = false;
  EXPECT_DOUBLE_EQ(layer_kernel_counts(c, p).other_forward, 26);
  EXPECT_DOUBLE_EQ(layer_kernel_counts(c, p).other_backward, 41);
  // Materialised scores (Megatron-LM 2021): attention 2 GEMMs + softmax forward, 4 + softmax
  // backward, no FlashAttention-2 extras: GEMM-class 4 + 2 = 6 and 8 + 4 = 12.
  p.compile = true;
  p.flash_attention = false;
  EXPECT_DOUBLE_EQ(layer_kernel_counts(c, p).gemm_forward, 6);
  EXPECT_DOUBLE_EQ(layer_kernel_counts(c, p).gemm_backward, 12);
  EXPECT_DOUBLE_EQ(layer_kernel_counts(c, p).other_backward, 8);
}

TEST(KernelFixedTime, NoFixedTimeChargesNothing) {
  // A system with no fixed times (a hand-built TrainingSystem) pays none.
  const TrainingCosts c = make_training_costs(load_model("llama-3.1-8b"), 8192);
  const LayerFixedTime f = layer_fixed_time(c, TrainingSystem{}, TrainingPlan{});
  EXPECT_DOUBLE_EQ(f.forward_gemm + f.backward_gemm + f.forward_other + f.backward_other + f.wgrad, 0);
}

TEST(KernelFixedTime, StepPaysItPerLayerAndMicrobatch) {
  // The step's forward grows by the layers' forward fixed time on the busiest stage: Llama
  // 3.1 8B on one H100, microbatch 1: 32 layers x (5 x 6.3 + 7 x 1.27) us = 32 x 40.39 =
  // 1.292 ms per microbatch forward.
  const ModelSpec m = load_model("llama-3.1-8b");
  const SystemSpec h100 = load_system("h100-sxm");
  const TrainingCosts c = make_training_costs(m, 8192);
  TrainingSystem s = make_training_system(h100, MatmulPrecision::bf16);
  EXPECT_DOUBLE_EQ(s.gemm_kernel_fixed_s, 6.3e-6);
  EXPECT_DOUBLE_EQ(s.kernel_gap_s, 1.27e-6);
  TrainingPlan p;
  p.global_batch = 1;
  p.seq_len = 8192;
  const Placement pl = check_plan(m, h100, 1, p);
  const TrainingStep with = training_step(c, s, p, pl);
  s.gemm_kernel_fixed_s = 0;
  s.kernel_gap_s = 0;
  const TrainingStep without = training_step(c, s, p, pl);
  EXPECT_NEAR(with.t_forward.value() - without.t_forward.value(), 32 * 40.39e-6, 1e-9);
}

}  // namespace
}  // namespace chalk
