// The memory-bound kernels of a training step against hand counts (kernels.h), and their
// place in the step (step.cc).
#include <algorithm>
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/training/kernels.h"
#include "chalk/training/memory.h"
#include "chalk/training/plan.h"
#include "chalk/training/step.h"

namespace chalk {
namespace {

TEST(TrainingKernels, GeluMlpWithDropoutUnderTensorParallelism) {
  // GPT-3 175B (h 12288, GeLU MLP f = 49152, 2 LayerNorms), TP8 without sequence
  // parallelism, dropout on, 2-byte activations, per token per layer on one rank:
  // forward: norms 2 e x 2h = 8h; residual bias-dropout-adds 2h (3e + 1) =
  // 14h; GeLU 2 e f / 8 = f/2: 22 x 12288 + 49152 / 2 = 270,336 + 24,576 = 294,912 bytes.
  // backward: norms 3 e x 2h = 12h; accumulation and dropout 2h (3e + 2e + 1) = 22h; GeLU
  // 3 e f / 8 = 0.75 f: 34 x 12288 + 36,864 = 417,792 + 36,864 = 454,656 bytes; GPT-3's
  // biases add their gradients' reads: the output projection's and second MLP's h on every
  // rank (e x 2h = 49,152) and QKV's 3h and the first MLP's f = 4h over 8 (e x 7h / 8 =
  // 21,504): 525,312 bytes.
  const TrainingCosts c = make_training_costs(load_model("gpt-3-175b"), 2048);
  TrainingPlan p;
  p.tp = 8;
  p.dropout = true;
  const KernelBytes k = elementwise_bytes(c, p);
  EXPECT_DOUBLE_EQ(k.forward, 294912);
  EXPECT_DOUBLE_EQ(k.backward, 525312);
  // bf16 GEMMs cast nothing.
  EXPECT_DOUBLE_EQ(quantize_bytes(c, p).forward, 0);
  EXPECT_DOUBLE_EQ(quantize_bytes(c, p).backward, 0);
}

TEST(TrainingKernels, SwigluWithSequenceParallelismNoDropout) {
  // Llama 3.1 70B (h 8192, SwiGLU f = 28672), TP4 with SP, no dropout: forward: norms 8h/4
  // = 2h; residual adds 2h x 3e / 4 = 3h; SwiGLU 3 e f / 4 = 1.5 f: 5 x 8192 + 43,008 =
  // 83,968 bytes. backward: norms 12h/4 = 3h; accumulation 2h x 3e / 4 = 3h; SwiGLU 5 e f /
  // 4 = 2.5 f: 6 x 8192 + 71,680 = 120,832 bytes.
  const TrainingCosts c = make_training_costs(load_model("llama-3.1-70b"), 8192);
  TrainingPlan p;
  p.tp = 4;
  p.sequence_parallel = true;
  const KernelBytes k = elementwise_bytes(c, p);
  EXPECT_DOUBLE_EQ(k.forward, 83968);
  EXPECT_DOUBLE_EQ(k.backward, 120832);
}

TEST(TrainingKernels, Fp8AndFp4CastTransposes) {
  // Llama 3.1 70B, TP4 with SP. GEMM inputs: QKV and gate/up read the hidden h (replicated,
  // / 4 under SP), the output projection 64 x 128 = 8192 and the down projection f = 28672
  // (sharded, / 4). Output gradients: the row-parallel outputs h + h (replicated), QKV 8192
  // + 1024 + 1024 and gate + up 2 x 28672 (sharded). FP8 cast_transpose: read 2, write 1 + 1
  // = 4 bytes per element. forward: 4 (2 x 8192 / 4 + 36,864 / 4) = 4 x 13,312 = 53,248;
  // backward: 4 (16,384 / 4 + 67,584 / 4) = 4 x 21,000 = 83,968.
  const TrainingCosts c = make_training_costs(load_model("llama-3.1-70b"), 8192);
  TrainingPlan p;
  p.tp = 4;
  p.sequence_parallel = true;
  p.compute = MatmulPrecision::fp8;
  EXPECT_DOUBLE_EQ(quantize_bytes(c, p).forward, 53248);
  EXPECT_DOUBLE_EQ(quantize_bytes(c, p).backward, 83968);
  // NVFP4: two copies of 0.5 byte + a 1-byte scale per 16 elements = 1.125; with the bf16
  // read 3.125 bytes per element: 3.125 x 13,312 = 41,600.
  p.compute = MatmulPrecision::fp4;
  EXPECT_DOUBLE_EQ(quantized_copy_bytes(MatmulPrecision::fp4), 1.125);
  EXPECT_DOUBLE_EQ(quantize_bytes(c, p).forward, 41600);
}

TEST(TrainingKernels, MoeCountsEveryExpertATokenVisits) {
  // DeepSeek-V3 (h 7168; 3 dense layers of SwiGLU 18432, 58 MoE layers of 8 routed experts
  // of 2048 + 1 shared of 2048), TP1: the activation function's width per average layer is
  // (3 x 18432 + 58 x 9 x 2048) / 61 = (55,296 + 1,069,056) / 61 = 18,432.0 exactly, so
  // SwiGLU moves 3 e x 18432 forward; norms 2 x 2 e h and adds 2h x 3e: 20 h = 143,360.
  // The 58 MoE layers permute and unpermute 8 copies of each token: forward (3 x 8 + 1) h e
  // = 50 h, backward (3 x 8 + 2) h e = 52 h, times 58/61 per average layer. The router's
  // fp32 kernels over its 256 scores and 8 picks: forward 16 E + 12 k = 4096 + 96 = 4192
  // bytes, backward 16 E + 4 k = 4096 + 32 = 4128, also times 58/61.
  const TrainingCosts c = make_training_costs(load_model("deepseek-v3"), 4096);
  TrainingPlan p;
  const KernelBytes k = elementwise_bytes(c, p);
  EXPECT_NEAR(k.forward, 20 * 7168 + 6 * 18432.0 + 58.0 / 61 * (50 * 7168 + 4192), 1e-6);
  // Backward: norms 3 e x 2h = 12h, accumulation 2h x 3e = 12h, SwiGLU 5 e x 18432.
  EXPECT_NEAR(k.backward, 24 * 7168 + 10 * 18432.0 + 58.0 / 61 * (52 * 7168 + 4128), 1e-6);
}

TEST(TrainingKernels, DropoutMasksStoredOnlyWithDropout) {
  // Korthikanti et al. 2022 Eq. 2 with dropout: sbh(10 + 24/t + 5as/(ht)); without: the
  // 2sbh of masks and 3as of score dropout go: sbh(8 + 24/t + 2as/(ht)). GPT-3 175B, s 2048,
  // b 1, t 8, no FlashAttention, no recomputation: with dropout 2048 x 12288 x (10 + 3 + 5 x
  // 96 x 2048 / (12288 x 8)) = 2048 x 12288 x 23 bytes = 578.8 MB (Korthikanti's TP8 figure);
  // without 2048 x 12288 x (8 + 3 + 2 x 96 x 2048 / 98,304) = 2048 x 12288 x 15.
  const TrainingCosts c = make_training_costs(load_model("gpt-3-175b"), 2048);
  TrainingPlan p;
  p.tp = 8;
  p.flash_attention = false;
  p.dropout = true;
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(c, p, Recompute::none).value(), 2048.0 * 12288 * 23);
  p.dropout = false;
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(c, p, Recompute::none).value(), 2048.0 * 12288 * 15);
}

TEST(TrainingKernels, StepPricesTheKernelsAtTheHbmRate) {
  // Llama 3.1 8B on one H100, one sequence of 4096, bf16, FlashAttention, no dropout: the
  // step's elementwise time is 32 layers x 4096 tokens x (forward + backward kernel bytes,
  // with the rotary kernels' 2 x 20,480: q 4096 + k 1024 read and written at 2 bytes) / (3.35
  // TB/s x 0.87) plus the loss: 4096 x 128,256 logits x (6 + 6) bytes at the same rate.
  const ModelSpec m = load_model("llama-3.1-8b");
  const SystemSpec h100 = load_system("h100-sxm");
  TrainingPlan p;
  p.global_batch = 1;
  p.seq_len = 4096;
  const TrainingCosts c = make_training_costs(m, p.seq_len);
  const TrainingSystem s = make_training_system(h100, p.compute);
  const TrainingStep st = training_step(c, s, p, check_plan(m, h100, 1, p));
  const KernelBytes k = elementwise_bytes(c, p);
  // h 4096, f 14336: forward norms 8h + adds 12h + SwiGLU 6f = 81,920 + 86,016 = 167,936;
  // backward norms 12h + accumulation 12h + SwiGLU 10f = 98,304 + 143,360 = 241,664 bytes
  // per token per layer.
  EXPECT_DOUBLE_EQ(k.forward, 167936);
  EXPECT_DOUBLE_EQ(k.backward, 241664);
  const double rate = 3.35e12 * 0.87;
  EXPECT_DOUBLE_EQ(rotary_bytes(c, p).forward, 20480);
  // ... plus each memory-bound kernel's fixed time (kernel_fixed_time.h): 7 forward and 9
  // backward per layer (norms 2, residual adds 2, SwiGLU 1, rotary 2; FlashAttention's 2) at
  // 1.27 us: 32 x 16 x 1.27 us = 0.650 ms.
  const double expected = (32 * 4096 * (167936.0 + 241664.0 + 2 * 20480) + 4096.0 * 128256 * 12) / rate + 32 * 16 * 1.27e-6;
  EXPECT_NEAR(st.t_elementwise.value(), expected, 1e-9);
}

}  // namespace
}  // namespace chalk

namespace chalk {
namespace {

TEST(TrainingRecomputeModules, ParseAndName) {
  EXPECT_EQ(parse_recompute_modules("", "f"), 0u);
  EXPECT_EQ(parse_recompute_modules("layernorm,moe_act", "f"), kRecomputeLayernorm | kRecomputeMoeAct);
  EXPECT_EQ(recompute_modules_string(kRecomputeLayernorm | kRecomputeMlaUpProj | kRecomputeMoeAct), "layernorm,mla_up_proj,moe_act");
  try {
    parse_recompute_modules("layernorm,attn", "--recompute-modules");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--recompute-modules");
    EXPECT_NE(std::string(e.what()).find("'attn'"), std::string::npos);
  }
}

TEST(TrainingRecomputeModules, LowPrecisionStorageAndNormRecompute) {
  // Llama 3.1 70B (h 8192, q = o = 8192, k = v = 1024, SwiGLU f 28672), TP4 with SP, no
  // dropout, no FlashAttention scores (FlashAttention on), bytes per token per layer at
  // 2-byte activations: replicated 10h less the 2h of masks = 8h; sharded 2(q + k + v + o) +
  // 6f = 36,864 + 172,032 = 208,896. bf16: (8h + 208,896) / 4 = (65,536 + 208,896) / 4 = 68,608.
  const TrainingCosts c = make_training_costs(load_model("llama-3.1-70b"), 8192);
  TrainingPlan p;
  p.tp = 4;
  p.sequence_parallel = true;
  p.microbatch = 1;
  const double tokens = 8192;
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(c, p, Recompute::none).value(), tokens * 68608);
  // FP8: the GEMM inputs are kept as their FP8 copy, half the bytes: the norms' outputs (4h
  // of the 8h) and the output-projection and down-projection inputs (2o + 2f = 73,728) lose
  // half: (6h + 208,896 - 36,864) / 4 = (49,152 + 172,032) / 4 = 55,296.
  p.compute = MatmulPrecision::fp8;
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(c, p, Recompute::none).value(), tokens * 55296);
  // Recomputing the norms drops their outputs altogether: (4h + 172,032) / 4 = 51,200.
  p.recompute_modules = kRecomputeLayernorm;
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(c, p, Recompute::none).value(), tokens * 51200);
  // Stored in bf16 when the engine does not keep the quantized copies.
  p.low_precision_activations = false;
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(c, p, Recompute::none).value(), tokens * (4 * 8192 + 208896) / 4);
}

TEST(TrainingRecomputeModules, MlaUpProjectionRerunsItsGemms) {
  // DeepSeek-V3's MLA (128 heads, q_lora 1536, kv_lora 512, head_dim 192 = 128 nope + 64
  // rope, v 128): q_b is 1536 x (128 x 192 = 24,576), kv_b 512 x 128 x (128 + 128) = 512 x
  // 32,768: 2 (37,748,736 + 16,777,216) = 109,051,904 forward FLOPs per token per layer, on
  // all 61 layers.
  const ModelSpec m = load_model("deepseek-v3");
  const TrainingCosts c = make_training_costs(m, 4096);
  EXPECT_DOUBLE_EQ(c.mla_up_proj_flops_per_token, 109051904.0);
  // Its Q, K, V (2 (24,576 + 24,576 + 16,384) = 131,072 bytes per token) are not stored.
  EXPECT_DOUBLE_EQ(c.act_mla_qkv, 131072.0);
  // One H800, one sequence of 4096, one layer's worth: rerunning q_b and kv_b costs 4096 x
  // 109,051,904 / (1978.9e12 x 0.709) plus writing Q, K, V again (4096 x 65,536 x 2 bytes /
  // (3.35e12 x 0.87)), per layer; the step's recompute grows by 61 x that on a 1-stage plan.
  const SystemSpec h800 = load_system("h800-sxm");
  TrainingPlan p;
  p.global_batch = 1;
  p.seq_len = 4096;
  p.compute = MatmulPrecision::fp8;
  TrainingSystem s = make_training_system(h800, p.compute);
  s.gemm_shapes = false;  // the MAMF rate, as derived above (the shapes' factors: gemm_shapes_test.cc)
  const Placement pl = check_plan(m, h800, 1, p);
  const TrainingStep plain = training_step(c, s, p, pl);
  p.recompute_modules = kRecomputeMlaUpProj;
  const TrainingStep rerun = training_step(c, s, p, pl);
  const double per_layer = 4096 * 109051904.0 / (1978.9e12 * 0.709) + 4096 * 65536.0 * 2 / (3.35e12 * 0.87);
  EXPECT_NEAR((rerun.t_recompute - plain.t_recompute).value(), (61 + 1) * per_layer, 1e-9);
}

}  // namespace
}  // namespace chalk

namespace chalk {
namespace {

TEST(TrainingGemmTime, EpilogueOutputAddsToTheMainLoop) {
  // DeepGEMM's FP8 dense table on H800 SXM5 (deepseek-ai/DeepGEMM README @55ab91f,
  // docs/sources/kernel-efficiency.md C1/C2): m x n x k and the TFLOP/s measured. chalk's GEMM
  // time is 2 m n k at the H800's best-shape FP8 rate (1978.9 x 0.709 = 1403 TFLOP/s) plus
  // the bf16 output at the HBM rate (3.35 TB/s x 0.87). E.g. 4096 x 32768 x 512: 137.4
  // GFLOP / 1403e12 = 97.9 us + 268.4 MB / 2.9145e12 = 92.1 us = 190.0 us -> 723 TFLOP/s
  // against 751 measured (-3.7%); without the output, 1403 (+87%).
  struct Row {
    double m, n, k, measured;
  };
  const Row rows[] = {{4096, 24576, 1536, 1125}, {4096, 32768, 512, 751}, {4096, 7168, 16384, 1426},
                      {4096, 4096, 7168, 1265}, {4096, 7168, 2048, 1168}, {4096, 2112, 7168, 1009}};
  const double rate = 1978.9e12 * 0.709, hbm = 3.35e12 * 0.87;
  std::vector<double> with, without;
  for (const Row& r : rows) {
    const double flops = 2 * r.m * r.n * r.k;
    with.push_back(std::abs(flops / gemm_time(r.m, r.n, r.k, 2, rate, hbm) / 1e12 / r.measured - 1));
    without.push_back(std::abs(flops / gemm_time(r.m, r.n, r.k, 0, rate, hbm) / 1e12 / r.measured - 1));
  }
  EXPECT_NEAR(with[1], 0.037, 0.002);
  std::sort(with.begin(), with.end());
  std::sort(without.begin(), without.end());
  // Median |error| of the six: 4.2% with the output, 22.4% without. The 2112-wide row stays
  // +30% here: 544 tiles of 128 x 128 on 132 SMs run in 5 waves, 82% full (wave
  // quantization: TrainingGemmShapes.DeepGemmTableWithWaves prices it, +5.6%).
  EXPECT_LT((with[2] + with[3]) / 2, 0.05);
  EXPECT_GT((without[2] + without[3]) / 2, 0.20);
  EXPECT_NEAR(with[5], 0.303, 0.005);
}

TEST(TrainingGemmTime, WeightGradientAccumulation) {
  TrainingPlan p;
  p.state = parse_state_bytes("adam18", "state");
  EXPECT_DOUBLE_EQ(weight_grad_bytes_per_param(p), 8);  // fp32 main_grad read and written
  p.state = parse_state_bytes("adam16", "state");
  EXPECT_DOUBLE_EQ(weight_grad_bytes_per_param(p), 4);  // bf16 gradients accumulated
  p.zero_stage = 3;
  EXPECT_DOUBLE_EQ(weight_grad_bytes_per_param(p), 4);  // ZeRO-3 over one rank shards nothing: accumulated
  p.dp = 8;
  EXPECT_DOUBLE_EQ(weight_grad_bytes_per_param(p), 2);  // FSDP: written once, reduce-scattered
}

}  // namespace
}  // namespace chalk

namespace chalk {
namespace {

TEST(TrainingFp8, WholeStepSpeedupOfALlamaStep) {
  // FP8 GEMMs run at H100's FP8 MAMF rate (1402.6 of 1978.9 TFLOP/s) against bf16's 794.5:
  // 1.77x on the GEMMs alone. A whole step gains less: attention, the output head, the norms
  // and the loss stay bf16, the memory-bound kernels gain nothing, and FP8 adds its casts
  // (quantize_bytes). Published whole-step speed-ups: torchtitan docs/performance.md, Llama 3.1
  // 8B on 8 H100 with FSDP and torch.compile, 6,667 -> 8,532 tokens/s per GPU = 1.28x;
  // pytorch/ao's float8 README on B200, 1.20-1.25x (kernel-efficiency.md C1). Here under
  // delayed scaling (the plan's default recipe, no amax pass), chalk derives 1.33x for the
  // same plan (FSDP over 8, 2 sequences of 8192 per GPU), not fitted; torchtitan runs
  // current (tensorwise) scaling, whose amax pass brings it to 1.31x
  // (TrainingFp8Recipe.WholeStepSpeedupsLandInThePublishedRange, memory_bound_test.cc).
  const ModelSpec m = load_model("llama-3.1-8b");
  const SystemSpec h100 = load_system("h100-sxm");
  TrainingPlan p;
  p.dp = 8;
  p.zero_stage = 3;
  p.global_batch = 16;
  p.microbatch = 2;
  p.seq_len = 8192;
  const TrainingCosts c = make_training_costs(m, p.seq_len);
  const Placement pl = check_plan(m, h100, 8, p);
  const double bf16 = training_step(c, make_training_system(h100, p.compute), p, pl).t_step.value();
  p.compute = MatmulPrecision::fp8;
  const double fp8 = training_step(c, make_training_system(h100, p.compute), p, pl).t_step.value();
  const double speedup = bf16 / fp8;
  EXPECT_GT(speedup, 1.20);
  EXPECT_LT(speedup, 1.35);
  EXPECT_LT(speedup, 1402.6 / 794.5 * 0.8);  // well below the GEMMs' own 1.77x
}

}  // namespace
}  // namespace chalk

namespace chalk {
namespace {

TEST(TrainingAttention, BackwardRunsBelowTheForwardsRate) {
  // FlashAttention-3 paper (arXiv 2407.08608) 4.1, H100 SXM5, bf16, head dim 128, cuDNN:
  // 8k tokens: backward 518 over forward 600 TFLOP/s = 0.86333; 512: 305 / 497 = 0.61368;
  // 16k: 516 / 595 = 0.86723, held beyond; between 2k (465 / 617 = 0.75365) and 4k
  // (499 / 609 = 0.81938), 2^11.5 = 2896.3 tokens lies halfway: 0.78651.
  EXPECT_NEAR(attention_backward_rate_ratio(8192), 518.0 / 600, 1e-12);
  EXPECT_NEAR(attention_backward_rate_ratio(512), 305.0 / 497, 1e-12);
  EXPECT_NEAR(attention_backward_rate_ratio(100), 305.0 / 497, 1e-12);
  EXPECT_NEAR(attention_backward_rate_ratio(0), 305.0 / 497, 1e-12);
  EXPECT_NEAR(attention_backward_rate_ratio(131072), 516.0 / 595, 1e-12);
  EXPECT_NEAR(attention_backward_rate_ratio(std::pow(2.0, 11.5)), (465.0 / 617 + 499.0 / 609) / 2, 1e-12);
}

TEST(TrainingAttention, StepPricesTheBackwardAtItsOwnRate) {
  // Llama 3.1 8B on one H100, one sequence of 4096, FlashAttention: the attention core's
  // forward t_at = 4096 tokens x F_attn / (989.4 TF x 660/989.4), F_attn = the causal
  // attention FLOPs per token over the 32 layers; the backward does 2.5 t_at of work at 0.81938
  // of the forward's rate (499 / 609 at 4k), so t_attention = t_at (1 + 2.5 / 0.81938) =
  // 4.05108 t_at. Under context parallelism over 2 the kernel sees 2048 tokens: 465 / 617.
  const ModelSpec m = load_model("llama-3.1-8b");
  const SystemSpec h100 = load_system("h100-sxm");
  TrainingPlan p;
  p.global_batch = 1;
  p.seq_len = 4096;
  const TrainingCosts c = make_training_costs(m, p.seq_len);
  const TrainingSystem s = make_training_system(h100, p.compute);
  const TrainingStep st = training_step(c, s, p, check_plan(m, h100, 1, p));
  const double t_at = 4096 * c.attention_flops_per_token / s.attention_rate.value();
  EXPECT_NEAR(st.t_attention.value(), t_at * (1 + 2.5 * 609 / 499), 1e-12);
  p.cp = 2;
  p.global_batch = 1;
  const TrainingStep cp2 = training_step(c, s, p, check_plan(m, h100, 2, p));
  EXPECT_NEAR(cp2.t_attention.value(), t_at / 2 * (1 + 2.5 * 617 / 465), 1e-12);
  // Without FlashAttention the scores are materialised and the backward's 2x work is priced
  // at the forward's rate (no fused kernel to measure), over the whole square: each pass
  // attends 4096 keys per token, not the causal (4096 + 1) / 2.
  p.cp = 1;
  p.flash_attention = false;
  const TrainingStep plain = training_step(c, s, p, check_plan(m, h100, 1, p));
  EXPECT_NEAR(plain.t_attention.value(), 3 * t_at * 4096 / 2048.5, 1e-12);
}

TEST(TrainingKernels, MaterialisedScoresMultiplyTheWholeSquare) {
  // GPT-3 175B (h 12288, 96 layers) at s = 2048. Each attended key costs 4 h FLOPs per
  // layer: QK^T 2 h and probabilities x V 2 h, so 96 x 4 x 12288 = 4,718,592 per key.
  // FlashAttention's causal count averages (s + 1) / 2 = 1024.5 keys per token:
  // 4,718,592 x 1024.5 = 4,834,197,504 FLOPs. Megatron-LM's materialised scores multiply
  // all 2048 keys: 4,718,592 x 2048 = 9,663,676,416 FLOPs, 2 s / (s + 1) = 1.99902 times as many.
  const ModelSpec m = load_model("gpt-3-175b");
  const SystemSpec a100 = load_system("a100-80gb");
  const TrainingCosts c = make_training_costs(m, 2048);
  EXPECT_DOUBLE_EQ(attention_core_flops_per_token(c, true), 4834197504.0);
  EXPECT_DOUBLE_EQ(attention_core_flops_per_token(c, false), 9663676416.0);
  // In the step: TP8, one sequence, no recomputation, scores materialised. The attention
  // core's forward and its 2x backward run on one rank 3 x 2048 x 9,663,676,416 / 8 FLOPs
  // at the attention rate. HFU counts the masked half in those 3 passes:
  // 3 x (9,663,676,416 - 4,834,197,504) x 2048 = 2.9672e13 FLOPs more than MFU's count.
  TrainingPlan p;
  p.tp = 8;
  p.global_batch = 1;
  p.seq_len = 2048;
  p.zero_stage = 0;
  p.flash_attention = false;
  const TrainingSystem s = make_training_system(a100, p.compute);
  const TrainingStep st = training_step(c, s, p, check_plan(m, a100, 8, p));
  EXPECT_NEAR(st.t_attention.value(), 3 * 2048 * 9663676416.0 / 8 / s.attention_rate.value(), 1e-12);
  EXPECT_NEAR(st.hardware_flops.value() - st.model_flops.value(), 3 * (9663676416.0 - 4834197504.0) * 2048, 1e3);
  // FlashAttention keeps the causal count: its backward is 2.5x the forward at its own rate.
  p.flash_attention = true;
  const TrainingStep fa = training_step(c, s, p, check_plan(m, a100, 8, p));
  EXPECT_NEAR(fa.t_attention.value(), (1 + 2.5 / attention_backward_rate_ratio(2048)) * 2048 * 4834197504.0 / 8 / s.attention_rate.value(), 1e-12);
}

}  // namespace
}  // namespace chalk
