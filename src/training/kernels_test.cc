// The memory-bound kernels of a training step against hand counts (kernels.h), and their
// place in the step (step.cc).
#include <gtest/gtest.h>

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
  // 3 e f / 8 = 0.75 f: 34 x 12288 + 36,864 = 417,792 + 36,864 = 454,656 bytes.
  const TrainingCosts c = make_training_costs(load_model("gpt-3-175b"), 2048);
  TrainingPlan p;
  p.tp = 8;
  p.dropout = true;
  const KernelBytes k = elementwise_bytes(c, p);
  EXPECT_DOUBLE_EQ(k.forward, 294912);
  EXPECT_DOUBLE_EQ(k.backward, 454656);
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
  const TrainingCosts c = make_training_costs(load_model("deepseek-v3"), 4096);
  TrainingPlan p;
  const KernelBytes k = elementwise_bytes(c, p);
  EXPECT_NEAR(k.forward, 20 * 7168 + 6 * 18432.0, 1e-6);
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
  // step's elementwise time is 32 layers x 4096 tokens x (forward + backward kernel bytes)
  // / (3.35 TB/s x 0.87) plus the loss: 4096 x 128,256 logits x (6 + 6) bytes at the same rate.
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
  const double expected = (32 * 4096 * (167936.0 + 241664.0) + 4096.0 * 128256 * 12) / rate;
  EXPECT_NEAR(st.t_elementwise.value(), expected, 1e-9);
}

}  // namespace
}  // namespace chalk
