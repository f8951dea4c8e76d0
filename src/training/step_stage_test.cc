// The busiest pipeline stage (the output layer on the last stage, DeepSeek-V3's rank 0), the
// loss over the logits and the SMs that hidden collectives take, against hand counts
// (step.h, docs/training.md "Step").
#include <algorithm>

#include <gtest/gtest.h>

#include "chalk/io/io.h"
#include "chalk/training/memory.h"
#include "chalk/training/plan.h"
#include "chalk/training/step.h"
#include "chalk/training/step_split.h"

namespace chalk {
namespace {

/// DeepSeek-V3's training plan (report 3.2, DSV3-TRAIN-3): DualPipe over PP16, DP128,
/// EP64, 4,096-token sequences, 15,360 per step.
TrainingPlan deepseek_v3_plan() {
  TrainingPlan p;
  p.pp = 16;
  p.dp = 128;
  p.ep = 64;
  p.schedule = PipelineSchedule::dualpipe;
  p.seq_len = 4096;
  p.global_batch = 15360;
  return p;
}

struct StagePlan {
  TrainingCosts costs;
  TrainingPlan plan;
  Placement placement;
};

StagePlan stage_plan(const std::string& model, const std::string& system, int64_t pp, int64_t dp, PipelineSchedule sched, int64_t seq) {
  const ModelSpec m = load_model(model);
  const SystemSpec s = load_system(system);
  StagePlan r;
  r.plan.pp = pp;
  r.plan.dp = dp;
  r.plan.tp = 8;
  r.plan.schedule = sched;
  r.plan.seq_len = seq;
  r.plan.global_batch = 2 * pp * dp;
  r.costs = make_training_costs(m, seq);
  r.placement = check_plan(m, s, pp * dp * 8, r.plan);
  return r;
}

TEST(TrainingBusiestStage, OutputLayerOnTheLastStage) {
  // GPT-3 175B, 96 layers on 6 stages (even): the last stage runs its 16 layers and the head.
  const StagePlan g = stage_plan("gpt-3-175b", "a100-80gb", 6, 1, PipelineSchedule::one_f_one_b, 2048);
  BusiestStage b = busiest_stage(g.costs, g.plan, g.placement, 1.0, 0.3);
  EXPECT_DOUBLE_EQ(b.layers, 16);
  EXPECT_DOUBLE_EQ(b.heads, 1);
  // No pipeline: every layer and the head.
  const StagePlan one = stage_plan("gpt-3-175b", "a100-80gb", 1, 1, PipelineSchedule::one_f_one_b, 2048);
  b = busiest_stage(one.costs, one.plan, one.placement, 1.0, 0.3);
  EXPECT_DOUBLE_EQ(b.layers, 96);
  EXPECT_DOUBLE_EQ(b.heads, 1);
}

TEST(TrainingBusiestStage, PaddedSplitGivesTheHeadALayersSlot) {
  // Llama 3 405B: 126 layers + embedding + head = 128 slots on 16 stages, 8 each. The last
  // stage runs 7 layers and the head: lighter than a middle stage's 8 layers when the head
  // costs less than a layer (2 x 16384 x 128256 = 4.2 GFLOP/token against 6.4 per layer),
  // heavier when it costs more.
  const StagePlan l = stage_plan("llama-3.1-405b", "h100-sxm", 16, 1, PipelineSchedule::one_f_one_b, 8192);
  EXPECT_EQ(l.placement.layers_per_stage, 8);
  BusiestStage b = busiest_stage(l.costs, l.plan, l.placement, 1.0, 0.66);
  EXPECT_DOUBLE_EQ(b.layers, 8);
  EXPECT_DOUBLE_EQ(b.heads, 0);
  b = busiest_stage(l.costs, l.plan, l.placement, 1.0, 1.5);
  EXPECT_DOUBLE_EQ(b.layers, 7);
  EXPECT_DOUBLE_EQ(b.heads, 1);
}

TEST(TrainingBusiestStage, UnevenSplitPutsTheSpareSlotsOnTheMiddleRanks) {
  // Llama 3.1 70B: 80 layers + embedding + head = 82 slots on 3 stages, neither 80 nor 82 a
  // multiple of 3 (before, an error): the busiest rank holds ceil(82 / 3) = 28 slots; the
  // first runs 27 layers (the embedding takes a slot), the last 27 and the head.
  const StagePlan l = stage_plan("llama-3.1-70b", "h100-sxm", 3, 1, PipelineSchedule::one_f_one_b, 4096);
  EXPECT_TRUE(l.placement.uneven);
  EXPECT_EQ(l.placement.layers_per_stage, 28);
  BusiestStage b = busiest_stage(l.costs, l.plan, l.placement, 1.0, 0.5);  // 27.5 < 28: a middle rank
  EXPECT_DOUBLE_EQ(b.layers, 28);
  EXPECT_DOUBLE_EQ(b.heads, 0);
  b = busiest_stage(l.costs, l.plan, l.placement, 1.0, 1.5);  // 28.5 > 28: the last
  EXPECT_DOUBLE_EQ(b.layers, 27);
  EXPECT_DOUBLE_EQ(b.heads, 1);
  // An even split stays even: 80 layers on 4 stages, 20 each.
  const StagePlan e = stage_plan("llama-3.1-70b", "h100-sxm", 4, 1, PipelineSchedule::one_f_one_b, 4096);
  EXPECT_FALSE(e.placement.uneven);
  EXPECT_EQ(e.placement.layers_per_stage, 20);
}

TEST(TrainingBusiestStage, DualPipeRankZeroHoldsBothEnds) {
  // DeepSeek-V3: 61 layers + embedding + head + 1 MTP module = 64 slots, 16 ranks x 2 chunks
  // x 2 slots. Rank 0: chunk 0 (embedding + 1 layer) and chunk 31 (MTP block + head): 2
  // layers and 2 output-layer passes (main head and MTP head), against 4 layers elsewhere.
  const ModelSpec m = load_model("deepseek-v3");
  const SystemSpec s = load_system("h800-sxm");
  TrainingPlan p = deepseek_v3_plan();
  const TrainingCosts c = make_training_costs(m, p.seq_len);
  const Placement pl = check_plan(m, s, 2048, p);
  EXPECT_EQ(pl.layers_per_stage, 4);
  BusiestStage b = busiest_stage(c, p, pl, 1.0, 1.5);  // 2 + 2 x 1.5 = 5 > 4
  EXPECT_DOUBLE_EQ(b.layers, 2);
  EXPECT_DOUBLE_EQ(b.heads, 2);
  b = busiest_stage(c, p, pl, 1.0, 0.9);  // 2 + 1.8 < 4: a middle rank
  EXPECT_DOUBLE_EQ(b.layers, 4);
  EXPECT_DOUBLE_EQ(b.heads, 0);
  // In the step, with the real costs: DeepSeek-V3's head (2 x 7168 x 129280 = 1.85 GFLOP per
  // token, kept in bf16: report 3.3.1) outweighs an average layer (2 x 37B / 61 = 1.2 GFLOP
  // in FP8), so rank 0 is the busiest.
  const TrainingStep st = training_step(c, make_training_system(s, MatmulPrecision::fp8), p, pl);
  EXPECT_DOUBLE_EQ(st.busy_layers, 2);
  EXPECT_DOUBLE_EQ(st.busy_output_layers, 2);
}

TEST(TrainingDualPipe, WarmUpAndCoolDownChunksRunUnpaired) {
  // deepseek-ai/DualPipe dualpipe.py, DualPipe.step on rank 0 (half_rank 0) of p = 8:
  // forwards alone in step 1 (p/2 - 1) x 2 = 6, step 2 2, step 3 p/2 - 1 = 3: 11; backwards
  // alone in step 3 (3), step 5 (3), step 6 (2), step 7 (3): 11 = 3p/2 - 1. p = 16: 23.
  EXPECT_EQ(dualpipe_unpaired_chunks(8, 20), 11);
  EXPECT_EQ(dualpipe_unpaired_chunks(16, 120), 23);
  EXPECT_EQ(dualpipe_unpaired_chunks(16, 10), 10);  // never more than the microbatches
  EXPECT_EQ(dualpipe_unpaired_chunks(1, 8), 0);
  // Table 2's bubble (p/2 - 1)(F&B + B - 3W) at p = 8, F&B 3, B 2, W 1: 3 x 2 = 6.
  EXPECT_DOUBLE_EQ(dualpipe_bubble(8, Seconds(3), Seconds(2), Seconds(1)).value(), 6.0);
  // DeepSeek-V3's plan (DSV3-TRAIN-3), with the SMs lent to communication set to 0 so a lone
  // chunk differs from its paired share by its traffic alone: a paired chunk hides its EP
  // dispatch + combine and its PP send, a lone one waits for them. Forward alone = t_f +
  // t_ep/2 + t_pp/2, backward alone = t_b + t_ep/2 + t_pp/2 (no recomputation: the backward
  // moves the forward's EP volume once more), so 23 lone pairs add 23 (t_ep + t_pp).
  const ModelSpec m = load_model("deepseek-v3");
  const SystemSpec sys = load_system("h800-sxm");
  TrainingPlan p = deepseek_v3_plan();  // 120 microbatches of 1 sequence per pipeline
  p.compute = MatmulPrecision::fp8;
  const TrainingCosts c = make_training_costs(m, p.seq_len);
  TrainingSystem s = make_training_system(sys, p.compute);
  s.communication_sm_fraction = 0;
  const TrainingStep st = training_step(c, s, p, check_plan(m, sys, 2048, p));
  EXPECT_EQ(st.microbatches, 120);
  EXPECT_EQ(st.unpaired_chunks, 23);
  EXPECT_EQ(st.t_ep_exposed.value(), 0.0);  // paired: hidden
  EXPECT_GT(st.t_ep.value(), 0.01);         // tens of ms of all-to-all per microbatch
  const double extra = (st.t_ep + st.t_pp).value() / 2;
  EXPECT_NEAR(st.t_forward_alone.value(), st.t_forward.value() + extra, 1e-12);
  EXPECT_NEAR(st.t_backward_alone.value(), st.t_backward.value() + extra, 1e-12);
  EXPECT_NEAR(st.t_unpaired.value(), 23 * 2 * extra, 1e-9);
  EXPECT_NEAR(st.t_bubble.value(), 7 * (st.t_forward + st.t_backward + st.t_backward_alone - st.t_weight_grad * 3.0).value(), 1e-9);
  EXPECT_NEAR(st.t_pipeline.value(), 120 * (st.t_forward + st.t_backward).value() + st.t_unpaired.value() + st.t_bubble.value(), 1e-9);
  // Other schedules have no lone chunks.
  p.schedule = PipelineSchedule::one_f_one_b;
  const TrainingStep one = training_step(c, s, p, check_plan(m, sys, 2048, p));
  EXPECT_EQ(one.unpaired_chunks, 0);
  EXPECT_EQ(one.t_unpaired.value(), 0.0);
}

TEST(TrainingLoss, LogitsCrossHbmTwelveBytesPerElement) {
  EXPECT_DOUBLE_EQ(loss_hbm_bytes(1, false), 6);  // read bf16 logits 2, write fp32 softmax 4
  EXPECT_DOUBLE_EQ(loss_hbm_bytes(1, true), 6);   // read softmax 4, write bf16 gradient 2
  // Llama 3.1 8B, one sequence of 2048 on one A100, no pipeline: the elementwise time is the
  // layers' memory-bound kernels (kernels.h: 167,936 bytes forward and 241,664 backward per
  // token per layer, kernels_test.cc; the rotary kernels 20,480 each way) plus 2048 x 128256 =
  // 2.627e8 logits x 12 bytes = 3.152 GB at 1.774e12 B/s = 1.777 ms.
  const ModelSpec m = load_model("llama-3.1-8b");
  const SystemSpec a100 = load_system("a100-80gb");
  TrainingPlan p;
  p.global_batch = 1;
  p.seq_len = 2048;
  const TrainingCosts c = make_training_costs(m, p.seq_len);
  const TrainingSystem s = make_training_system(a100, p.compute);
  const TrainingStep st = training_step(c, s, p, check_plan(m, a100, 1, p));
  const double hbm = 2.039e12 * 0.87;
  const double loss = 2048.0 * 128256 * 12 / hbm;
  EXPECT_NEAR(loss, 1.777e-3, 1e-6);
  const double stored = 32 * 2048 * (167936.0 + 241664.0 + 2 * 20480) / hbm;
  // ... and the memory-bound kernels' fixed time, 32 layers x 16 kernels x 1.27 us
  // (kernel_fixed_time.h).
  EXPECT_NEAR(st.t_elementwise.value(), stored + loss + 32 * 16 * 1.27e-6, 1e-9);
}

TEST(TrainingSmContention, HiddenCollectivesSlowCompute) {
  const double f = 20.0 / 132;
  EXPECT_NEAR(sm_contention(1.0, f), 0.1515, 1e-4);
  EXPECT_DOUBLE_EQ(sm_contention(-1.0, f), 0.0);
  // Llama 3.1 8B over 16 H100 (two nodes), ZeRO-3, one sequence of 8192 per replica: the
  // per-microbatch gathers and reduce-scatter hide behind the compute and take f of their
  // hidden time from it; the step grows by exactly that.
  const ModelSpec m = load_model("llama-3.1-8b");
  const SystemSpec h100 = load_system("h100-sxm");
  TrainingPlan p;
  p.dp = 16;
  p.global_batch = 16;
  p.seq_len = 8192;
  p.zero_stage = 3;
  const TrainingCosts c = make_training_costs(m, p.seq_len);
  const TrainingSystem s = make_training_system(h100, p.compute);
  const TrainingStep st = training_step(c, s, p, check_plan(m, h100, 16, p));
  const double window = (st.t_forward + st.t_backward).value();
  EXPECT_GT(st.t_dp.value(), 0.0);
  EXPECT_NEAR(st.t_dp_sm_contention.value(), f * std::min(st.t_dp.value(), window), 1e-12);
  EXPECT_NEAR(st.t_step.value(), (st.t_pipeline + st.t_dp_exposed + st.t_dp_sm_contention + st.t_optimizer).value(), 1e-12);
  // TPUs move ICI traffic with DMA engines: no contention.
  const SystemSpec tpu = load_system("tpu-v4");
  EXPECT_DOUBLE_EQ(make_training_system(tpu, p.compute).communication_sm_fraction, 0.0);
}

TEST(TrainingDataParallel, MegatronStyleReduceAfterTheBackwardIsExposed) {
  // Llama 3.1 8B over two H100 nodes, ZeRO-0: overlapped, the all-reduce hides behind the
  // last backward (the excess exposed) and takes SMs meanwhile; Megatron-LM 2021's reduce
  // after the backward is exposed whole and takes none from compute.
  const ModelSpec m = load_model("llama-3.1-8b");
  const SystemSpec h100 = load_system("h100-sxm");
  TrainingPlan p;
  p.dp = 16;
  p.global_batch = 16;
  p.seq_len = 8192;
  const TrainingCosts c = make_training_costs(m, p.seq_len);
  const TrainingSystem s = make_training_system(h100, p.compute);
  const Placement pl = check_plan(m, h100, 16, p);
  const TrainingStep hidden = training_step(c, s, p, pl);
  p.overlap_grad_reduce = false;
  const TrainingStep after = training_step(c, s, p, pl);
  EXPECT_GT(after.t_dp.value(), 0.0);
  EXPECT_DOUBLE_EQ(after.t_dp.value(), hidden.t_dp.value());
  EXPECT_DOUBLE_EQ(after.t_dp_exposed.value(), after.t_dp.value());
  EXPECT_DOUBLE_EQ(after.t_dp_sm_contention.value(), 0.0);
  EXPECT_NEAR(hidden.t_dp_exposed.value(), std::max(0.0, (hidden.t_dp - hidden.t_backward).value()), 1e-12);
  EXPECT_GT(after.t_step.value(), hidden.t_step.value());
}

// A split's prepared terms (step_split.h) read nothing the layout search's inner loops vary:
// prepared from a plan of microbatch 1, no recomputation, ZeRO-0, DP2 PP1 1F1B, they give the
// very step that training_step prepares itself for microbatch 4, full recomputation, ZeRO-3,
// DP1 PP4 interleaved (Llama 3.1 8B, TP2 CP2, H100). Hand figures: logits per token of the
// microbatch on a rank, vocab / (tp cp) = 128,256 / 4 = 32,064; the head's parameters on a
// rank, 128,256 x 4,096 / 2 = 262,668,288; cuDNN's backward over FlashAttention's forward at
// 4,096 / 2 = 2,048 tokens per call is 465 / 617 (kernels.h), so the backward takes
// 2.5 x 617 / 465 = 3.3172 times the forward.
TEST(StepSplit, PreparedTermsIgnoreTheSearchsInnerLoops) {
  const ModelSpec m = load_model("llama-3.1-8b");
  const SystemSpec sys = load_system("h100-sxm");
  TrainingPlan outer;
  outer.tp = 2;
  outer.cp = 2;
  outer.sequence_parallel = true;
  outer.dp = 2;
  outer.seq_len = 4096;
  outer.global_batch = 16;
  const TrainingCosts c = make_training_costs(m, outer.seq_len);
  const TrainingSystem s = make_training_system(sys, outer.compute);
  const TrainingStepSplit split = prepare_training_step(c, s, outer);
  EXPECT_DOUBLE_EQ(split.logits_per_token, 32064.0);
  EXPECT_DOUBLE_EQ(split.head_params, 262668288.0);
  EXPECT_NEAR(split.attention_backward_time, 2.5 * 617 / 465, 1e-12);
  TrainingPlan inner = outer;
  inner.microbatch = 4;
  inner.recompute = Recompute::full;
  inner.zero_stage = 3;
  inner.dp = 1;
  inner.pp = 4;
  inner.schedule = PipelineSchedule::interleaved;
  inner.virtual_stages = 2;
  const Placement pl = check_plan(m, sys, 16, inner);
  const TrainingMemory mem = training_memory(c, s, inner, pl);
  const TrainingStep own = training_step(c, s, inner, pl, mem), prepared = training_step(c, s, inner, pl, mem, split);
  EXPECT_GT(own.t_recompute.value(), 0.0);
  EXPECT_EQ(prepared.t_step.value(), own.t_step.value());
  EXPECT_EQ(prepared.t_forward.value(), own.t_forward.value());
  EXPECT_EQ(prepared.t_backward.value(), own.t_backward.value());
  EXPECT_EQ(prepared.mfu, own.mfu);
}

}  // namespace
}  // namespace chalk
