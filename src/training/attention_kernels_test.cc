// The attention kernel by engine and torchtitan's op-level selective recomputation against
// hand derivations (attention_kernels.h; docs/formulas.md).
#include <gtest/gtest.h>

#include "chalk/io/io.h"
#include "chalk/training/attention_kernels.h"
#include "chalk/training/kernel_fixed_time.h"
#include "chalk/training/kernels.h"
#include "chalk/training/plan.h"
#include "chalk/training/step.h"

namespace chalk {
namespace {

TEST(AttentionKernels, FlashAttention2RatesFromTheFa3PaperSeries) {
  // FlashAttention-3 paper 4.1, H100 SXM5, head dim 128. 8k: FA2 forward 370 over chalk's
  // Hopper attention rate 660 = 0.56061; FA2 backward 318 over its forward 370 = 0.85946.
  const AttentionKernelRates at8k = flash2_rates(8192);
  EXPECT_NEAR(at8k.forward, 370.0 / 660, 1e-12);
  EXPECT_NEAR(at8k.backward, 318.0 / 370, 1e-12);
  // 512 and below: the first row, 309 / 660 = 0.46818 and 214 / 309 = 0.69256.
  EXPECT_NEAR(flash2_rates(512).forward, 0.46818, 1e-5);
  EXPECT_NEAR(flash2_rates(-1).backward, 0.69256, 1e-5);
  // Halfway between 1k and 2k in log2 (1448.15 tokens): forward (350 + 362) / 2 = 356 over
  // 660 -> 0.53939; backward (260 + 291) / 2 = 275.5 over 356 -> 0.77388.
  const AttentionKernelRates mid = flash2_rates(1024 * std::sqrt(2.0));
  EXPECT_NEAR(mid.forward, 356.0 / 660, 1e-9);
  EXPECT_NEAR(mid.backward, 275.5 / 356, 1e-9);
  // Past 16k: the last row held, 370 / 660 and 322 / 370.
  EXPECT_NEAR(flash2_rates(262144).forward, 370.0 / 660, 1e-12);
  EXPECT_NEAR(flash2_rates(262144).backward, 322.0 / 370, 1e-12);
  // PyTorch SDPA's flash backend measured 329 TFLOP/s at (1, 24, 4608, 128) (tritonbench PR
  // #97): log2(4608) - 9 = 3.1699 -> 368 + 0.1699 x 2 = 368.34 over 660, 12% above it.
  EXPECT_NEAR(flash2_rates(4608).forward * kHopperAttentionTflops / 329 - 1, 0.1196, 0.0001);
}

TEST(AttentionKernels, TorchtitanOpPolicyRerunsWkWoW3) {
  // Llama 3.1 8B: h 4096, 8 KV heads of 128 (1024), 32 heads of 128 (4096), d_ff 14336,
  // 32 layers: 32 x 2 x 4096 x (1024 + 4096 + 14336) = 5,100,273,664 FLOPs per token.
  EXPECT_DOUBLE_EQ(every_second_matmul_flops_per_token(load_model("llama-3.1-8b")), 5100273664.0);
  // Llama 3.1 70B: h 8192, 8 KV heads of 128, 64 heads of 128, d_ff 28672, 80 layers:
  // 80 x 2 x 8192 x (1024 + 8192 + 28672) = 49,660,559,360.
  EXPECT_DOUBLE_EQ(every_second_matmul_flops_per_token(load_model("llama-3.1-70b")), 49660559360.0);
}

TrainingStep tt_step(Recompute rc, SelectiveRecompute policy, AttentionKernel kernel, MatmulPrecision compute) {
  const ModelSpec m = load_model("llama-3.1-8b");
  const SystemSpec h100 = load_system("h100-sxm");
  TrainingPlan p;
  p.global_batch = 1;
  p.seq_len = 8192;
  p.recompute = rc;
  p.selective_recompute = policy;
  p.attention_kernel = kernel;
  p.compute = compute;
  const TrainingCosts c = make_training_costs(m, p.seq_len);
  const TrainingSystem s = make_training_system(h100, p.compute);
  return training_step(c, s, p, check_plan(m, h100, 1, p));
}

TEST(AttentionKernels, FlashAttention2SlowsTheAttentionCore) {
  // Same step, attention time over cuDNN's: (660 / 370) x (1 + 2.5 x 370 / 318) /
  // (1 + 2.5 x 600 / 518) = 1.78378 x 3.90881 / 3.89575 = 1.78976 at 8k tokens.
  const auto bf16 = MatmulPrecision::bf16;
  const TrainingStep cudnn = tt_step(Recompute::none, SelectiveRecompute::attention_core, AttentionKernel::cudnn, bf16);
  const TrainingStep fa2 = tt_step(Recompute::none, SelectiveRecompute::attention_core, AttentionKernel::flash2, bf16);
  const double expected = (660.0 / 370) * (1 + 2.5 * 370 / 318) / (1 + 2.5 * 600 / 518);
  EXPECT_NEAR(expected, 1.78976, 1e-5);
  EXPECT_NEAR(fa2.t_attention.value() / cudnn.t_attention.value(), expected, 1e-9);
  EXPECT_DOUBLE_EQ(fa2.t_matmul.value(), cudnn.t_matmul.value());
}

TEST(AttentionKernels, OpPolicyRecomputesAShareOfTheForward) {
  // Full recomputation reruns the layers' GEMMs G, attention forward A and memory-bound
  // forward kernels E: t_full = G + A + E, A = t_attention / (1 + 2.5 / 0.86333) (cuDNN's
  // backward ratio at 8k, 518 / 600). The op policy reruns E and the share 5.100e9 /
  // (2 x 6,979,321,856) = 19456 / 53248 = 0.36538 of G (wk, wo, w3 of the layers' matmul FLOPs per token):
  // t_op = 0.36538 G + E, E = the forward bytes of the elementwise, quantize and rotary
  // kernels of 8192 tokens x 32 layers / the HBM rate. Float8 counts the same linears.
  const SelectiveRecompute op = SelectiveRecompute::every_second_matmul;
  const AttentionKernel kc = AttentionKernel::cudnn;
  for (const MatmulPrecision compute : {MatmulPrecision::bf16, MatmulPrecision::fp8}) {
    const TrainingStep full = tt_step(Recompute::full, op, kc, compute), sel = tt_step(Recompute::selective, op, kc, compute);
    TrainingPlan p;
    p.seq_len = 8192;
    p.compute = compute;
    const TrainingCosts c = make_training_costs(load_model("llama-3.1-8b"), p.seq_len);
    const TrainingSystem s = make_training_system(load_system("h100-sxm"), compute);
    const double share = 5100273664.0 / (c.matmul_flops_per_token - c.lm_head_flops_per_token);
    EXPECT_NEAR(share, 19456.0 / 53248, 1e-12);
    // ... plus their fixed time (kernel_fixed_time.h), 32 layers' forward memory-bound kernels.
    const double e = 8192.0 * 32 * (elementwise_bytes(c, p).forward + quantize_bytes(c, p).forward + rotary_bytes(c, p).forward) / s.hbm_rate.value() +
                     32 * layer_fixed_time(c, s, p).forward_other;
    const double g = full.t_recompute.value() - full.t_attention.value() / (1 + 2.5 / (518.0 / 600)) - e;
    EXPECT_GT(g, 0.0);
    EXPECT_NEAR(sel.t_recompute.value(), share * g + e, 1e-9);
    // HFU counts the rerun FLOPs: 0.36538 x 13.96e9 = 5.100e9 more per token than none.
    const TrainingStep none = tt_step(Recompute::none, op, kc, compute);
    EXPECT_NEAR((sel.hardware_flops - none.hardware_flops).value() / sel.tokens_per_step, 5100273664.0, 1.0);
  }
  // Korthikanti's policy under FlashAttention reruns nothing.
  EXPECT_DOUBLE_EQ(tt_step(Recompute::selective, SelectiveRecompute::attention_core, kc, MatmulPrecision::bf16).t_recompute.value(), 0.0);
}

}  // namespace
}  // namespace chalk
