// Ring attention's merge traffic and exchange volume by engine (ring_attention.h) against
// hand counts from torch/distributed/tensor/experimental/_attention.py (torch 1963fc8).
#include <gtest/gtest.h>

#include <string>

#include "chalk/io/io.h"
#include "chalk/training/plan.h"
#include "chalk/training/ring_attention.h"
#include "chalk/training/step.h"

namespace chalk {
namespace {

TEST(RingAttention, TorchMergeBytesCountedFromTheRingLoops) {
  // Llama 3.1 8B at CP8 over 262,144 tokens: one rank holds 32,768 tokens x 32 heads x 128 =
  // 134,217,728 elements of Q (and of the repeated K), as many of the output (and repeated V).
  // Forward 4 x 8 x 2q + (38 x 8 - 26) q = 64 q + 278 q = 342 q = 45,902,462,976 bytes;
  // backward (10 x 8 + 14) q + 4 q + (25 x 8 + 3) 2q = 94 q + 4 q + 406 q = 504 q =
  // 67,645,734,912 bytes.
  const double q = 32768.0 * 32 * 128;
  EXPECT_DOUBLE_EQ(q, 134217728);
  const RingMergeBytes cp8 = torch_ring_merge_bytes(q, q, 8);
  EXPECT_DOUBLE_EQ(cp8.forward, 45902462976);
  EXPECT_DOUBLE_EQ(cp8.backward, 67645734912);
  // The Q and output widths enter apart (q = 1, o = 2, cp 2): forward 4 x 2 x 3 + (76 - 26) x 2
  // = 24 + 100 = 124; backward (20 + 14) x 1 + 4 x 2 + (50 + 3) x 3 = 34 + 8 + 159 = 201.
  const RingMergeBytes cp2 = torch_ring_merge_bytes(1, 2, 2);
  EXPECT_DOUBLE_EQ(cp2.forward, 124);
  EXPECT_DOUBLE_EQ(cp2.backward, 201);
  // No ring, no merge.
  EXPECT_DOUBLE_EQ(torch_ring_merge_bytes(q, q, 1).forward, 0);
  EXPECT_DOUBLE_EQ(torch_ring_merge_bytes(q, q, 1).backward, 0);
}

TEST(RingAttention, StepTermsByRing) {
  // Llama 3.1 8B: 8 KV heads of 128 (K and V: 2,048 elements per token per layer), 32 query
  // heads of 128 (q = o = 4,096). Fused (Transformer Engine): the ring moves the 2,048 in the
  // activation format and the gradients likewise (factor 1), no merge priced.
  const TrainingCosts c = make_training_costs(load_model("llama-3.1-8b"), 262144);
  EXPECT_DOUBLE_EQ(c.q_elements_per_token, 4096);
  EXPECT_DOUBLE_EQ(c.o_elements_per_token, 4096);
  TrainingPlan p;
  p.cp = 8;
  p.seq_len = 262144;
  const RingStepTerms fused = ring_step_terms(c, p, 262144, 2e12);
  EXPECT_DOUBLE_EQ(fused.exchange_elements_per_token, 2048);
  EXPECT_DOUBLE_EQ(fused.gradient_exchange_factor, 1);
  EXPECT_DOUBLE_EQ(fused.merge_forward_s, 0);
  // PyTorch's ring: K and V repeated to 32 heads, 8,192 elements; dK and dV in fp32 over bf16
  // activations, 4 / 2 = 2; the merges at 2e12 B/s: 45,902,462,976 / 2e12 = 22.951 ms forward,
  // 67,645,734,912 / 2e12 = 33.823 ms backward.
  p.cp_ring = CpRing::torch_eager;
  const RingStepTerms torch = ring_step_terms(c, p, 262144, 2e12);
  EXPECT_DOUBLE_EQ(torch.exchange_elements_per_token, 8192);
  EXPECT_DOUBLE_EQ(torch.gradient_exchange_factor, 2);
  EXPECT_DOUBLE_EQ(torch.merge_forward_s, 45902462976 / 2e12);
  EXPECT_DOUBLE_EQ(torch.merge_backward_s, 67645734912 / 2e12);
  // Under TP2 a rank holds half the heads: half the bytes.
  p.tp = 2;
  EXPECT_DOUBLE_EQ(ring_step_terms(c, p, 262144, 2e12).merge_forward_s, 45902462976 / 4e12);
  // Without context parallelism PyTorch's SDPA runs one call: nothing to merge.
  p.tp = 1;
  p.cp = 1;
  const RingStepTerms none = ring_step_terms(c, p, 262144, 2e12);
  EXPECT_DOUBLE_EQ(none.merge_backward_s, 0);
  EXPECT_DOUBLE_EQ(none.gradient_exchange_factor, 1);
}

TEST(RingAttention, StepOfTorchtitansCp8Row) {
  // torchtitan's Table 2 plan (TT-L8B-H100x8-CP8-256K): Llama 3.1 8B, CP8 over 8 H100 (96 GB
  // HBM2e, 2.4 TB/s x STREAM 0.87 = 2.088e12 B/s), one sequence of 262,144, full
  // recomputation. The merges add 32 layers x (342 q forward + 342 q rerun + 504 q backward)
  // = 32 x 1188 x 134,217,728 = 5.1024e12 bytes, 2.4437 s, to the step's memory-bound kernels
  // (the rerun's share, 32 x 342 q = 1.4690e12 bytes, 0.7035 s, under recomputation).
  const ModelSpec m = load_model("llama-3.1-8b");
  const SystemSpec h100 = load_system(std::string(CHALK_SOURCE_DIR) + "/data/measurements/hardware/h100-sxm-96gb-hbm2e-500w.json");
  TrainingPlan p;
  p.cp = 8;
  p.zero_stage = 3;
  p.global_batch = 1;
  p.microbatch = 1;
  p.seq_len = 262144;
  p.recompute = Recompute::full;
  p.attention_kernel = AttentionKernel::flash2;
  const TrainingCosts c = make_training_costs(m, p.seq_len);
  const TrainingSystem s = make_training_system(h100, p.compute);
  const Placement pl = check_plan(m, h100, 8, p);
  const TrainingStep fused = training_step(c, s, p, pl);
  p.cp_ring = CpRing::torch_eager;
  const TrainingStep torch = training_step(c, s, p, pl);
  const double q = 134217728, hbm = s.hbm_rate.value();
  EXPECT_NEAR((torch.t_elementwise - fused.t_elementwise).value(), 32 * (342 + 504) * q / hbm, 1e-9);
  EXPECT_NEAR((torch.t_recompute - fused.t_recompute).value(), 32 * 342 * q / hbm, 1e-9);
  EXPECT_NEAR(32 * 1188 * q / hbm, 2.4437, 0.0001);
  // The exchange: 4 x the K/V bytes forward (8,192 against 2,048 elements), and the backward's
  // gradients twice that again: (1 + 1 + 1 + 2) x 4 = 20 against fused's (1 + 1 + 1 + 1) = 4,
  // 5x the time at most; a little under, as each send takes the link's fastest protocol for
  // its size (a smaller send can take a lower-latency one at a lower bandwidth fraction).
  // Without the repeat (1.25x) or with bf16 gradients (4x) it would fall outside.
  const double ratio = torch.t_cp.value() / fused.t_cp.value();
  EXPECT_LE(ratio, 5.0 + 1e-9);
  EXPECT_GT(ratio, 4.8);
  // Both stay behind the attention core (cp exposed 0).
  EXPECT_DOUBLE_EQ(torch.t_cp_exposed.value(), 0);
  EXPECT_GT((torch.t_step - fused.t_step).value(), 32 * 1188 * q / hbm);
}

}  // namespace
}  // namespace chalk
