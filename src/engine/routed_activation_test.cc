// The routed experts' activation pass between their two grouped GEMMs (memory_kernels.h
// routed_expert_activation_bytes_per_pair; docs/formulas.md "Routed experts' activation pass").
#include <gtest/gtest.h>

#include "chalk/engine/collective.h"
#include "chalk/engine/overhead.h"
#include "chalk/engine/roofline.h"
#include "chalk_testing/engine_deploy.h"
#include "memory_kernels.h"

namespace chalk {
namespace {

TEST(RoutedActivation, BytesPerPairFollowTheEnginesOutputFormat) {
  // Mixtral 8x7B's expert (f 14,336, gated): the kernel reads both halves of the FC1 output
  // (2 x 14,336 bf16 = 4 f bytes) and writes f. TensorRT-LLM's doActivation quantizes to the
  // FC2 input: NVFP4 0.5 + 1/16 a value, 14,336 x 4.5625 = 65,408 bytes; FP8 14,336 x 5 =
  // 71,680. vLLM's silu_and_mul writes bf16: 14,336 x 6 = 86,016. A plain (GELU) expert reads
  // f: 14,336 x (2 + 2) = 57,344.
  EXPECT_DOUBLE_EQ(detail::routed_expert_activation_bytes_per_pair(14336, true, detail::memory_kernel_output_bytes("trtllm", MatmulPrecision::fp4)), 65408);
  EXPECT_DOUBLE_EQ(detail::routed_expert_activation_bytes_per_pair(14336, true, detail::memory_kernel_output_bytes("trtllm-1.0", MatmulPrecision::fp8)), 71680);
  EXPECT_DOUBLE_EQ(detail::routed_expert_activation_bytes_per_pair(14336, true, detail::memory_kernel_output_bytes("vllm", MatmulPrecision::fp8)), 86016);
  EXPECT_DOUBLE_EQ(detail::routed_expert_activation_bytes_per_pair(14336, false, 2.0), 57344);
}

TEST(RoutedActivation, AStepPaysThePassBeyondItsKernelFloor) {
  // Mixtral 8x7B in NVFP4 on one B200 under TensorRT-LLM, 4,096 decodes: 8,192 token-expert
  // pairs a layer, all on the one rank; 8,192 x 65,408 = 535.8 MB a layer at the KV's rate
  // (8 TB/s x 0.87 = 6.96 TB/s): 76.98 us, of which the 6.3 us kernel floor is already paid:
  // 32 layers x 70.686 us = 2.2620 ms more overhead. An expert without a hidden width (the
  // baseline, d_ff 0) pays none; FLOPs and weight bytes do not move.
  Deployment with = testing::engine_deploy("mixtral-8x7b", "b200", 1, {}, DType::nvfp4);
  with.mechanisms.tp_all_reduce = engine_tp_all_reduce("trtllm");
  ASSERT_EQ(with.moe.size(), 1u);
  Deployment without = with;
  without.moe[0].d_ff = 0;
  StepShape s;
  s.decode_sequences = 4096;
  s.context = 1024;
  const StepBreakdown a = engine_step(with, s), b = engine_step(without, s);
  const double per_layer = 8192 * 65408 / (8e12 * 0.87) - 6.3e-6;
  EXPECT_NEAR(to_ms(a.t_overhead - b.t_overhead), 32 * per_layer * 1e3, 1e-9);
  EXPECT_NEAR(to_ms(a.t_overhead - b.t_overhead), 2.2620, 0.0001);
  EXPECT_DOUBLE_EQ(a.weight_bytes_per_chip.value(), b.weight_bytes_per_chip.value());
  EXPECT_DOUBLE_EQ(a.flops_per_chip.value(), b.flops_per_chip.value());
  // A decode step of 8 sequences moves 16 pairs a layer (1 MB, 0.15 us): under the floor, free.
  s.decode_sequences = 8;
  EXPECT_DOUBLE_EQ(engine_step(with, s).t_overhead.value(), engine_step(without, s).t_overhead.value());
}

}  // namespace
}  // namespace chalk
