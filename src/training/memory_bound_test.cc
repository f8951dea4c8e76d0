// Memory-bound work of a training step that kernels.h adds beside the elementwise kernels:
// FP8 recipes (plan.h Fp8Recipe) and the quantization kernels each runs (quantize_bytes),
// with the whole-step FP8 speed-up they give against the published range; rotary embeddings
// (rotary_bytes). Hand counts in each test's comment.
#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/training/kernels.h"
#include "chalk/training/plan.h"
#include "chalk/training/step.h"

namespace chalk {
namespace {

TEST(TrainingFp8Recipe, CastBytesPerRecipe) {
  // Llama 3.1 70B, TP4 with SP (kernels_test.cc, Fp8AndFp4CastTransposes): 13,312 elements
  // cast per token per layer forward (the GEMM inputs) and 20,992 backward (the output
  // gradients). Bytes per element, e = 2:
  // - delayed: read e, write two FP8 copies: 2 + 2 = 4 -> 53,248 and 83,968;
  // - tensorwise: TE's amax_kernel reads the tensor first: 2 + 2 + 2 = 6 -> 79,872 and
  //   125,952;
  // - mxfp8: 2 + 2 (1 + 1/32) = 4.0625 -> 54,080 and 85,280;
  // - blockwise: 2 + 2 (1 + 4/128) = 4.0625, the same (an fp32 scale per 128 = a byte per 32).
  const TrainingCosts c = make_training_costs(load_model("llama-3.1-70b"), 8192);
  TrainingPlan p;
  p.tp = 4;
  p.sequence_parallel = true;
  p.compute = MatmulPrecision::fp8;
  EXPECT_DOUBLE_EQ(quantize_bytes(c, p).forward, 53248);
  EXPECT_DOUBLE_EQ(quantize_bytes(c, p).backward, 83968);
  p.fp8_recipe = Fp8Recipe::tensorwise;
  EXPECT_DOUBLE_EQ(recipe_reads(p), 2);
  EXPECT_DOUBLE_EQ(quantize_bytes(c, p).forward, 79872);
  EXPECT_DOUBLE_EQ(quantize_bytes(c, p).backward, 125952);
  p.fp8_recipe = Fp8Recipe::mxfp8;
  EXPECT_DOUBLE_EQ(recipe_copy_bytes(p), 2.0625);
  EXPECT_DOUBLE_EQ(quantize_bytes(c, p).forward, 54080);
  EXPECT_DOUBLE_EQ(quantize_bytes(c, p).backward, 85280);
  p.fp8_recipe = Fp8Recipe::blockwise;
  EXPECT_DOUBLE_EQ(quantize_bytes(c, p).forward, 54080);
  // The recipe scales FP8 only: NVFP4 keeps its own copy (3.125 bytes per element, 41,600)
  // and bf16 casts nothing.
  p.fp8_recipe = Fp8Recipe::delayed;
  p.compute = MatmulPrecision::fp4;
  EXPECT_DOUBLE_EQ(quantize_bytes(c, p).forward, 41600);
  p.compute = MatmulPrecision::bf16;
  EXPECT_DOUBLE_EQ(quantize_bytes(c, p).forward, 0);
}

TEST(TrainingFp8Recipe, NamesAndErrors) {
  for (auto r : {Fp8Recipe::delayed, Fp8Recipe::tensorwise, Fp8Recipe::mxfp8, Fp8Recipe::blockwise}) {
    EXPECT_EQ(parse_fp8_recipe(to_string(r), "f"), r);
  }
  try {
    parse_fp8_recipe("current", "--fp8-recipe");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--fp8-recipe");
    EXPECT_NE(std::string(e.what()).find("expected delayed, tensorwise, mxfp8 or blockwise, got 'current'"), std::string::npos) << e.what();
  }
  // A recipe other than the default on a plan without FP8 GEMMs is refused, naming the field.
  const ModelSpec m = load_model("llama-3.1-8b");
  const SystemSpec h100 = load_system("h100-sxm");
  TrainingPlan p;
  p.global_batch = 8;
  p.seq_len = 4096;
  p.fp8_recipe = Fp8Recipe::tensorwise;
  try {
    check_plan(m, h100, 1, p);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "fp8_recipe");
    EXPECT_NE(std::string(e.what()).find("tensorwise scales FP8 GEMMs; the plan's compute is bf16 (expected fp8)"), std::string::npos) << e.what();
  }
  p.compute = MatmulPrecision::fp8;
  EXPECT_NO_THROW(check_plan(m, h100, 1, p));
  EXPECT_NE(describe_plan(p).find(", FP8 tensorwise"), std::string::npos) << describe_plan(p);
}

/// t_step of `p` under bf16 over its t_step under FP8 with `recipe`, on `hw`.
double fp8_speedup(const std::string& model, const std::string& hw, TrainingPlan p, int64_t chips, Fp8Recipe recipe) {
  const ModelSpec m = load_model(model);
  const SystemSpec s = load_system(hw);
  const TrainingCosts c = make_training_costs(m, p.seq_len);
  p.compute = MatmulPrecision::bf16;
  const Placement pl = check_plan(m, s, chips, p);
  const double bf16 = training_step(c, make_training_system(s, p.compute), p, pl).t_step.value();
  p.compute = MatmulPrecision::fp8;
  p.fp8_recipe = recipe;
  return bf16 / training_step(c, make_training_system(s, p.compute), p, pl).t_step.value();
}

TEST(TrainingFp8Recipe, WholeStepSpeedupsLandInThePublishedRange) {
  // Published FP8-over-bf16 whole-step speed-ups of Llama 3 8B, current (tensorwise)
  // scaling: torchtitan docs/performance.md, 8 H100, FSDP, 6,667 -> 8,532 tokens/s per GPU
  // = 1.28x; pytorch/ao's float8 README, 8 B200 (power-limited), bf16 8,307.5 -> float8
  // tensorwise 10,417 = 1.254x and MXFP8 9,969 = 1.200x (shared reference
  // kernel-efficiency.md C1): 1.20-1.28x. chalk derives its figures from the FP8 and bf16
  // MAMF rates (H100 1402.6 / 794.5 = 1.77x on the GEMMs alone) with attention, the head,
  // norms, rotary and loss in bf16 and the recipe's casts (none fitted): 1.308x on
  // torchtitan's plan (1.34x before current scaling's amax pass was counted), 2% above its
  // published 1.28x; what is left is work chalk does not count (torchao's per-microbatch
  // FP8 weight casts under FSDP, the amax all-reduce across TP ranks, FP8 GEMMs' lower
  // sustained clock). The bounds: the published 1.2-1.3x (issue 33's range: 1.20 B200 MXFP8
  // to 1.28 H100), within 2% above.
  TrainingPlan fsdp;  // torchtitan's plan: FSDP over 8, 2 sequences of 8192 per GPU
  fsdp.dp = 8;
  fsdp.zero_stage = 3;
  fsdp.global_batch = 16;
  fsdp.microbatch = 2;
  fsdp.seq_len = 8192;
  const double titan = fp8_speedup("llama-3.1-8b", "h100-sxm", fsdp, 8, Fp8Recipe::tensorwise);
  EXPECT_GT(titan, 1.20);
  EXPECT_LT(titan, 1.30 * 1.02);
  // The amax pass costs current scaling against delayed scaling's fused amax.
  EXPECT_LT(titan, fp8_speedup("llama-3.1-8b", "h100-sxm", fsdp, 8, Fp8Recipe::delayed));
  // A Megatron step as Megatron-Bridge runs Llama 3 70B on 64 H100 with FP8-CS
  // (MBR2511-H100-L70B): TP4 with SP, PP8 interleaved v5, DP2 with the distributed
  // optimizer, 128 sequences of 8192, microbatch 1, fp32 main gradients: 1.320x (TE caches
  // the FP8 weights once per step; its GEMMs are wider than the 8B model's, so FP8 gains more).
  TrainingPlan meg;
  meg.tp = 4;
  meg.sequence_parallel = true;
  meg.pp = 8;
  meg.dp = 2;
  meg.schedule = PipelineSchedule::interleaved;
  meg.virtual_stages = 5;
  meg.zero_stage = 1;
  meg.global_batch = 128;
  meg.seq_len = 8192;
  meg.state = parse_state_bytes("adam18", "state");
  const double mbr = fp8_speedup("llama-3.1-70b", "h100-sxm", meg, 64, Fp8Recipe::tensorwise);
  EXPECT_GT(mbr, 1.20);
  EXPECT_LT(mbr, 1.30 * 1.02);
  EXPECT_GT(mbr, titan);
}

}  // namespace
}  // namespace chalk

namespace chalk {
namespace {

TEST(TrainingKernels, RotaryEmbeddings) {
  // Per token per layer on one rank, e = 2: forward reads and writes each rotated query and
  // key element (2 e = 4 bytes), backward the same.
  // Llama 3.1 70B at TP4: q 64 x 128 = 8192, k 8 x 128 = 1024; (8192 + 1024) / 4 = 2304
  // elements x 4 = 9216 bytes each way.
  TrainingPlan p;
  p.tp = 4;
  p.sequence_parallel = true;
  const TrainingCosts llama = make_training_costs(load_model("llama-3.1-70b"), 8192);
  EXPECT_DOUBLE_EQ(rotary_bytes(llama, p).forward, 9216);
  EXPECT_DOUBLE_EQ(rotary_bytes(llama, p).backward, 9216);
  // DeepSeek-V3 (MLA) at TP1: 128 heads x 64 rope dims of queries + the one shared 64-wide
  // rope key = 8256 elements x 4 = 33,024 bytes; at TP8 the queries split, the key does not:
  // (1024 + 64) x 4 = 4352.
  TrainingPlan one;
  const TrainingCosts dsv3 = make_training_costs(load_model("deepseek-v3"), 4096);
  EXPECT_DOUBLE_EQ(rotary_bytes(dsv3, one).forward, 33024);
  TrainingPlan tp8;
  tp8.tp = 8;
  EXPECT_DOUBLE_EQ(rotary_bytes(dsv3, tp8).forward, 4352);
  // GLM-4.5 rotates half of each head (partial_rotary_factor 0.5): (96 + 8) x 128 / 2 = 6656
  // elements x 4 = 26,624 bytes.
  const ModelSpec glm = load_model("glm-4.5");
  EXPECT_DOUBLE_EQ(glm.rotary_fraction, 0.5);
  EXPECT_DOUBLE_EQ(rotary_bytes(make_training_costs(glm, 4096), one).forward, 26624);
  // GPT-3 learns absolute positions: nothing rotates.
  EXPECT_DOUBLE_EQ(rotary_bytes(make_training_costs(load_model("gpt-3-175b"), 2048), one).forward, 0);
}

TEST(TrainingKernels, RotaryEmbeddingsInTheStep) {
  // Llama 3.1 8B on one H100, one sequence of 4096: the step's memory-bound time grows by
  // the rotary bytes of its 32 layers at the HBM rate. q 4096 + k 1024 = 5120 elements x 4
  // bytes = 20,480 per token per layer each way: 2 x 4096 x 32 x 20,480 = 5.3687e9 bytes /
  // (3.35e12 x 0.87 B/s) = 1.842 ms more than the same model with learned positions.
  ModelSpec m = load_model("llama-3.1-8b");
  const SystemSpec h100 = load_system("h100-sxm");
  TrainingPlan p;
  p.global_batch = 1;
  p.seq_len = 4096;
  const TrainingSystem s = make_training_system(h100, p.compute);
  const Placement pl = check_plan(m, h100, 1, p);
  const double rope = training_step(make_training_costs(m, p.seq_len), s, p, pl).t_elementwise.value();
  m.rotary_fraction = 0;
  const double none = training_step(make_training_costs(m, p.seq_len), s, p, pl).t_elementwise.value();
  // ... and the rotary kernels' fixed time, q and k each way: 32 x 4 x 1.27 us (kernel_fixed_time.h).
  EXPECT_NEAR(rope - none, 2 * 4096 * 32 * 20480.0 / s.hbm_rate.value() + 32 * 4 * 1.27e-6, 1e-12);
  EXPECT_NEAR(s.hbm_rate.value(), 3.35e12 * 0.87, 1e9);
}

}  // namespace
}  // namespace chalk
