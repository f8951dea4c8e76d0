// PyTorch eager mode's memory-bound kernels against the fused set (eager_kernels.h): the bytes
// counted op by op from torchtitan's model code @9dec370, and what they add to a step. Hand
// counts in each test's comment.
#include <gtest/gtest.h>

#include "chalk/io/io.h"
#include "chalk/training/eager_kernels.h"
#include "chalk/training/plan.h"
#include "chalk/training/step.h"

namespace chalk {
namespace {

// torchtitan's compiled Table 1 plan (TT-L8B-H100x8-FSDP-COMPILE): FSDP (ZeRO-3) over 8
// GPUs, 2 sequences of 8,192 per GPU, op-level selective recomputation, SDPA's
// FlashAttention-2, Adam with 18 bytes of state per parameter.
TrainingPlan torchtitan_table1_plan() {
  TrainingPlan t;
  t.dp = 8;
  t.zero_stage = 3;
  t.global_batch = 16;
  t.microbatch = 2;
  t.seq_len = 8192;
  t.recompute = Recompute::selective;
  t.selective_recompute = SelectiveRecompute::every_second_matmul;
  t.attention_kernel = AttentionKernel::flash2;
  t.state = parse_state_bytes("adam18", "state");
  return t;
}

TEST(EagerKernels, BytesCountedOpByOp) {
  // Llama 3.1 8B (h 4096, SwiGLU f 14,336, 32 query and 8 KV heads of 128), e = 2, w = 4,
  // per token per layer on one rank (tp 1):
  // - RMSNorm over the two norms' 8192 elements: forward extra 2e + 7w = 32 bytes (eager
  //   float 6 + pow 8 + mean 4 + mul 8 + type_as 6 + weight mul 4 = 36, fused 4), backward
  //   extra 5e + 19w = 86 (eager 92: weight mul 12, type_as 6, rsqrt mul 24, mean 4, pow 28,
  //   the two x gradients summed 12, float 6; fused 6): 262,144 and 704,512;
  // - SwiGLU over f 14,336: forward extra 2e = 4 (silu 4 + mul 6 = 10, fused 6), backward 4e
  //   = 8 (two mul gradients 6 + 6, silu's 6 = 18, fused 10): 57,344 and 114,688;
  // - RoPE over q + k = 4096 + 1024 = 5120: extra 4w = 16 each way (float 6 + complex mul 8 +
  //   type_as 6 = 20, fused 4): 81,920.
  // Forward 262,144 + 57,344 + 81,920 = 401,408; backward 704,512 + 114,688 + 81,920 = 901,120.
  const TrainingCosts c = make_training_costs(load_model("llama-3.1-8b"), 8192);
  EXPECT_DOUBLE_EQ(c.gated_act_width, 14336);
  TrainingPlan p;
  p.compile = false;
  EXPECT_DOUBLE_EQ(eager_extra_bytes(c, p).forward, 401408);
  EXPECT_DOUBLE_EQ(eager_extra_bytes(c, p).backward, 901120);
  // Compiled (and every engine with fused kernels): nothing beyond kernels.h's set.
  p.compile = true;
  EXPECT_DOUBLE_EQ(eager_extra_bytes(c, p).forward, 0);
  EXPECT_DOUBLE_EQ(eager_extra_bytes(c, p).backward, 0);
  // Llama 3.1 70B at TP8 (h 8192, f 28,672, 64 query and 8 KV heads of 128): with sequence
  // parallelism the norms' 16,384 elements split 8 ways (2048), SwiGLU's 3584 and RoPE's
  // (8192 + 1024) / 8 = 1152 too: forward 2048 x 32 + 3584 x 4 + 1152 x 16 = 98,304, backward
  // 2048 x 86 + 3584 x 8 + 1152 x 16 = 223,232. Without it the norms run on the full 16,384:
  // forward + 14,336 x 32 = 557,056.
  const TrainingCosts c70 = make_training_costs(load_model("llama-3.1-70b"), 8192);
  TrainingPlan tp8;
  tp8.compile = false;
  tp8.tp = 8;
  tp8.sequence_parallel = true;
  EXPECT_DOUBLE_EQ(eager_extra_bytes(c70, tp8).forward, 98304);
  EXPECT_DOUBLE_EQ(eager_extra_bytes(c70, tp8).backward, 223232);
  tp8.sequence_parallel = false;
  EXPECT_DOUBLE_EQ(eager_extra_bytes(c70, tp8).forward, 98304 + 14336 * 32.0);
  // GPT-3's GeLU is one kernel eager or fused, and it learns its positions: only the norms
  // (two LayerNorms of 12,288, counted as torchtitan's RMSNorm) add, 24,576 x 32 forward.
  const TrainingCosts gpt = make_training_costs(load_model("gpt-3-175b"), 2048);
  EXPECT_DOUBLE_EQ(gpt.gated_act_width, 0);
  TrainingPlan one;
  one.compile = false;
  EXPECT_DOUBLE_EQ(eager_extra_bytes(gpt, one).forward, 24576 * 32.0);
}

TEST(EagerKernels, StepOfTorchtitansEagerRow) {
  // torchtitan's Table 1 plan (TT-L8B-H100x8-FSDP): Llama 3.1 8B, FSDP over 8 H100 (96 GB
  // HBM2e, 2.4 TB/s x STREAM 0.87 = 2.088e12 B/s), 2 sequences of 8192 per GPU, op-level
  // selective checkpointing, whose forward memory-bound kernels rerun in backward. Eager
  // adds 32 layers x 16,384 tokens x (401,408 + 901,120) bytes = 682.9 GB to the
  // memory-bound kernels (0.3271 s) and 32 x 16,384 x 401,408 = 210.5 GB to the rerun
  // (0.1008 s): 0.4279 s a step. Published, not fitted: eager 5,762 against compiled 6,667
  // tokens/s per GPU = 16,384 / 5,762 - 16,384 / 6,667 = 0.386 s (chalk counts 11% more).
  const ModelSpec m = load_model("llama-3.1-8b");
  const SystemSpec h100 = load_system(std::string(CHALK_SOURCE_DIR) + "/data/measurements/hardware/h100-sxm-96gb-hbm2e-500w.json");
  TrainingPlan p;
  p.dp = 8;
  p.zero_stage = 3;
  p.global_batch = 16;
  p.microbatch = 2;
  p.seq_len = 8192;
  p.recompute = Recompute::selective;
  p.selective_recompute = SelectiveRecompute::every_second_matmul;
  p.attention_kernel = AttentionKernel::flash2;
  const TrainingCosts c = make_training_costs(m, p.seq_len);
  const TrainingSystem s = make_training_system(h100, p.compute);
  EXPECT_NEAR(s.hbm_rate.value(), 2.4e12 * 0.87, 1e6);
  const Placement pl = check_plan(m, h100, 8, p);
  const TrainingStep fused = training_step(c, s, p, pl);
  p.compile = false;
  EXPECT_NE(describe_plan(p).find(", eager"), std::string::npos) << describe_plan(p);
  const TrainingStep eager = training_step(c, s, p, pl);
  const double tok = 32.0 * 16384;
  // Eager's extra kernels pay their fixed time too (kernel_fixed_time.h): per layer 26 - 7 =
  // 19 more forward, 41 - 9 = 32 more backward, at 1.27 us, over 32 layers.
  EXPECT_NEAR((eager.t_elementwise - fused.t_elementwise).value(), tok * (401408 + 901120) / s.hbm_rate.value() + 32 * 51 * 1.27e-6, 1e-9);
  EXPECT_NEAR((eager.t_recompute - fused.t_recompute).value(), tok * 401408 / s.hbm_rate.value() + 32 * 19 * 1.27e-6, 1e-9);
  EXPECT_NEAR((eager.t_step - fused.t_step).value(), 0.4307, 0.0005);  // 0.4279 before the fixed times
}

TEST(EagerKernels, TorchtitansLossAndOptimizer) {
  // Per logit: torchtitan's eager loss moves float 2 + 4, log_softmax 4 + 4 forward (14) and
  // nll_loss's zeros 4, log_softmax's gradient 4 + 4 + 4, the cast back 4 + 2 backward (22);
  // the fused loss 6 and 6. Per owned parameter: foreach AdamW 8 + 12 + 8 + 12 + 8 + 8 + 8 +
  // 16 = 80 and clipping 4 + 8 = 12, 92 bytes; the fused adam18 optimizer 2 x 4 + 2 x 12 + 2
  // = 34, with no housekeeping under ZeRO-3.
  TrainingPlan p;
  p.zero_stage = 3;
  p.state = parse_state_bytes("adam18", "state");  // what validate reads every non-DeepSeek row with
  EXPECT_DOUBLE_EQ(torch_loss_bytes(p, 1, false), 6);
  EXPECT_DOUBLE_EQ(torch_loss_bytes(p, 1, true), 6);
  EXPECT_DOUBLE_EQ(torch_optimizer_bytes(p, 1e9, 1e9), 34e9);
  p.torch_loss_optimizer = true;
  EXPECT_DOUBLE_EQ(torch_loss_bytes(p, 1, false), 14);
  EXPECT_DOUBLE_EQ(torch_loss_bytes(p, 1, true), 22);
  EXPECT_DOUBLE_EQ(torch_optimizer_bytes(p, 1e9, 1e9), 92e9);
  // Under ZeRO-1 the fused optimizer adds the working weights' copy (4) and the gradient
  // buffer's zeroing (4 on each held parameter): torch's path has neither.
  p.zero_stage = 1;
  EXPECT_DOUBLE_EQ(torch_optimizer_bytes(p, 1e8, 1e9), 9.2e9);
  p.torch_loss_optimizer = false;
  EXPECT_DOUBLE_EQ(torch_optimizer_bytes(p, 1e8, 1e9), 3.4e9 + 0.4e9 + 4e9);

  // The compiled Table 1 plan (TT-L8B-H100x8-FSDP-COMPILE): 16,384 tokens x 128,256 logits
  // = 2,101,346,304 per GPU, 24 more bytes each: 50.43 GB at 2.088e12 B/s = 24.15 ms; the
  // optimizer over 8,030,261,248 / 8 = 1,003,782,656 owned parameters, 92 against 34 bytes:
  // 44.23 ms against 16.35 (27.88 ms more). 52.04 ms a step of chalk's 2.04 s (2.6%).
  const ModelSpec m = load_model("llama-3.1-8b");
  const SystemSpec h100 = load_system(std::string(CHALK_SOURCE_DIR) + "/data/measurements/hardware/h100-sxm-96gb-hbm2e-500w.json");
  TrainingPlan t = torchtitan_table1_plan();
  const TrainingCosts c = make_training_costs(m, t.seq_len);
  const TrainingSystem s = make_training_system(h100, t.compute);
  const Placement pl = check_plan(m, h100, 8, t);
  const TrainingStep fused = training_step(c, s, t, pl);
  t.torch_loss_optimizer = true;
  const TrainingStep torch = training_step(c, s, t, pl);
  EXPECT_NEAR((torch.t_elementwise - fused.t_elementwise).value(), 0.024153, 1e-6);
  EXPECT_NEAR(fused.t_optimizer.value(), 0.016345, 1e-6);
  EXPECT_NEAR(torch.t_optimizer.value(), 0.044228, 1e-6);
  EXPECT_NEAR((torch.t_step - fused.t_step).value(), 0.052036, 1e-6);
}

TEST(EagerKernels, Fsdp2CopiesEachGatheredLayerOut) {
  // Llama 3.1 8B per layer: attention 4096 x (4096 + 1024 + 1024 + 4096) = 41,943,040, MLP
  // 3 x 4096 x 14,336 = 176,160,768, norms 2 x 4096, and the final norm's 4096 spread over
  // the 32 layers (128): 218,112,128 parameters. FSDP2 copies each gather out, reading and
  // writing 2 bf16 bytes a parameter, twice a microbatch: 8 x 218,112,128 = 1,744,897,024
  // bytes per layer per microbatch.
  const TrainingCosts c = make_training_costs(load_model("llama-3.1-8b"), 8192);
  EXPECT_DOUBLE_EQ(c.dense_layer_params / 32, 218112128);
  TrainingPlan p;
  p.zero_stage = 3;
  p.state = parse_state_bytes("adam18", "state");
  EXPECT_DOUBLE_EQ(fsdp2_copy_out_bytes(p, 218112128), 0);  // FSDP1 / Megatron-FSDP: views, no copy
  p.fsdp2_copy_out = true;
  EXPECT_DOUBLE_EQ(fsdp2_copy_out_bytes(p, 218112128), 1744897024);
  p.zero_stage = 2;  // the parameters stay gathered: nothing per microbatch
  EXPECT_DOUBLE_EQ(fsdp2_copy_out_bytes(p, 218112128), 0);

  // On torchtitan's compiled Table 1 plan (8 H100 96 GB at 2.088e12 B/s, one microbatch):
  // 32 layers x 1,744,897,024 bytes = 55.8 GB, 26.74 ms a step, half forward, half backward.
  const ModelSpec m = load_model("llama-3.1-8b");
  const SystemSpec h100 = load_system(std::string(CHALK_SOURCE_DIR) + "/data/measurements/hardware/h100-sxm-96gb-hbm2e-500w.json");
  TrainingPlan t = torchtitan_table1_plan();
  const TrainingSystem s = make_training_system(h100, t.compute);
  const Placement pl = check_plan(m, h100, 8, t);
  const TrainingStep views = training_step(c, s, t, pl);
  t.fsdp2_copy_out = true;
  const TrainingStep copies = training_step(c, s, t, pl);
  EXPECT_NEAR((copies.t_elementwise - views.t_elementwise).value(), 0.026742, 1e-6);
  EXPECT_NEAR((copies.t_forward - views.t_forward).value(), 0.013371, 1e-6);
  EXPECT_NEAR((copies.t_step - views.t_step).value(), 0.026742, 1e-6);
}

}  // namespace
}  // namespace chalk
