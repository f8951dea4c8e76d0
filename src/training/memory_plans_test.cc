// The published plans that ran fit in chalk's memory model as they did (issue 33 item 7):
// Llama 3 405B's TP8 PP16 interleaved with FSDP over 128 on 80 GB H100 (Llama 3 report
// section 3.3) and DeepSeek-V3's DualPipe PP16 EP64 ZeRO-1 plan on 80 GB H800 with its
// recomputation and FP8 activation caching (DeepSeek-V3 report 3.2, 3.3.2), part by part.
#include <gtest/gtest.h>

#include "chalk/io/io.h"
#include "chalk/training/memory.h"
#include "chalk/training/plan.h"
#include "chalk/training/step.h"

namespace chalk {
namespace {

TEST(TrainingMemoryPlans, PublishedPlansFit) {
  // Llama 3 405B as Meta ran it on 16,384 H100 (Llama 3 report Table 4, row 2): TP8, PP16
  // interleaved with 8 chunks, FSDP over DP128, 16 sequences of 8192 per replica, no
  // dropout, bf16. It fits in 80 GB.
  {
    const ModelSpec m = load_model("llama-3.1-405b");
    const SystemSpec h100 = load_system("h100-sxm");
    TrainingPlan p;
    p.tp = 8;
    p.pp = 16;
    p.dp = 128;
    p.sequence_parallel = true;
    p.schedule = PipelineSchedule::interleaved;
    p.virtual_stages = 8;
    p.zero_stage = 3;
    p.global_batch = 2048;
    p.seq_len = 8192;
    const TrainingCosts c = make_training_costs(m, p.seq_len);
    const TrainingMemory mem = training_memory(c, make_training_system(h100, p.compute), p, check_plan(m, h100, 16384, p));
    EXPECT_TRUE(mem.fits) << mem.total.value() / 1e9;
    // By part (`chalk train memory` prints the same): 128 slots (126 layers + embedding +
    // head) over 16 stages = 8 per stage: 8 layers of 3.1877e9 parameters and the 2.1013e9
    // head (the larger table), / TP8 = 3.45e9 parameters. FSDP over 128:
    // weights 2 B x 3.45e9 / 128 = 53.9 MB, gradients 53.9 MB, optimizer 12 B = 323.5 MB;
    // two layers gathered, 2 x 2 B x 3.1877e9 / 8 = 1.594 GB. Activations per layer per
    // microbatch (Korthikanti with SP, FlashAttention, no dropout: 8h + 2q + 2k + 2v + 2o +
    // 6f = 520,192 bytes per token over TP8) x 8192 tokens = 532.7 MB, x 8 layers x
    // p (1 + (p - 1) / (p v)) = 16 x (1 + 15/128) = 17.875 microbatches in flight = 76.17
    // GB. Total 78.20 of 80 GB.
    EXPECT_NEAR(mem.params_per_chip, 3.45e9, 0.01e9);
    EXPECT_NEAR(mem.weights.value() / 1e9, 0.0539, 0.0005);
    EXPECT_NEAR(mem.optimizer.value() / 1e9, 0.3235, 0.0005);
    EXPECT_NEAR(mem.zero3_buffers.value() / 1e9, 1.594, 0.001);
    EXPECT_NEAR(mem.activations_per_layer.value(), 8192 * 520192.0 / 8, 1);
    EXPECT_DOUBLE_EQ(mem.microbatches_in_flight, 16 * (1 + 15.0 / 128));
    EXPECT_NEAR(mem.activations.value() / 1e9, 76.17, 0.01);
    EXPECT_NEAR(mem.total.value() / 1e9, 78.20, 0.01);
  }
  // DeepSeek-V3 on 2,048 H800 (report 3.2): DualPipe over PP16, EP64, ZeRO-1 over DP128,
  // TP1, FP8 GEMMs, sequences of 4096, bf16 Adam moments with fp32 master and gradients
  // (3.3.3). With its memory savings (3.3.2: RMSNorm and MLA up-projection recomputed, GEMM
  // and SwiGLU inputs cached in FP8, the SwiGLU output recomputed) it fits; without them it
  // needs about twice the HBM.
  {
    const ModelSpec m = load_model("deepseek-v3");
    const SystemSpec h800 = load_system("h800-sxm");
    TrainingPlan p;
    p.pp = 16;
    p.dp = 128;
    p.ep = 64;
    p.schedule = PipelineSchedule::dualpipe;
    p.zero_stage = 1;
    p.global_batch = 15360;
    p.seq_len = 4096;
    p.compute = MatmulPrecision::fp8;
    p.state = parse_state_bytes("adam-bf16-moments", "state");
    p.recompute_modules = kRecomputeLayernorm | kRecomputeMlaUpProj | kRecomputeMoeAct;
    const TrainingCosts c = make_training_costs(m, p.seq_len);
    const TrainingSystem s = make_training_system(h800, p.compute);
    const Placement pl = check_plan(m, h800, 2048, p);
    const TrainingMemory saved = training_memory(c, s, p, pl);
    EXPECT_TRUE(saved.fits) << saved.total.value() / 1e9;
    // By part: DualPipe's rank holds two stages, 5.195e9 parameters; weights 2 B = 10.39 GB,
    // fp32 gradients 4 B = 20.78 GB, bf16 moments and fp32 master 8 B sharded by ZeRO-1 (the
    // dense part over DP128, the experts over their 128 / 64 = 2-way data-parallel group) = 5.60 GB;
    // activations 0.5784 GB per layer per microbatch x 4 layers (64 slots over 16 x 2 chunks,
    // two chunks) x p + 1 = 17 microbatches in flight = 39.33 GB. Total 76.10 of 80 GB.
    EXPECT_NEAR(saved.params_per_chip, 5.195e9, 0.001e9);
    EXPECT_NEAR(saved.weights.value() / 1e9, 10.39, 0.01);
    EXPECT_NEAR(saved.gradients.value() / 1e9, 20.78, 0.01);
    EXPECT_NEAR(saved.optimizer.value() / 1e9, 5.60, 0.01);
    EXPECT_DOUBLE_EQ(saved.microbatches_in_flight, 17);
    EXPECT_NEAR(saved.activations.value() / 1e9, 39.33, 0.01);
    EXPECT_NEAR(saved.total.value() / 1e9, 76.10, 0.01);
    p.recompute_modules = 0;
    p.low_precision_activations = false;
    const TrainingMemory plain = training_memory(c, s, p, pl);
    EXPECT_FALSE(plain.fits);
    EXPECT_GT(plain.total.value(), 1.8 * saved.total.value());
  }
}

}  // namespace
}  // namespace chalk
