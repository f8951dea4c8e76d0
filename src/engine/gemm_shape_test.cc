// GEMM efficiency by shape (gemm_shape.h) against hand counts of tiles and waves, and a
// serving step's dense GEMMs at their shape (dense_gemm.h, overhead.cc).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "chalk/engine/gemm_shape.h"
#include "chalk/engine/overhead.h"
#include "chalk/io/io.h"
#include "chalk_testing/engine_deploy.h"
#include "dense_gemm.h"

namespace chalk {
namespace {

using chalk::testing::engine_deploy;

TEST(GemmShape, OneWaveOfSixtyFourTilesOnOneHundredThirtyTwoSms) {
  // 1024 x 1024 x 1024 in bf16 on an H100 (132 SMs). 128 x 128 tiles: 8 x 8 = 64 tiles, one
  // wave, 68 SMs idle: 64 / 132 = 0.4848. 128 x 256 or 256 x 128: 8 x 4 = 32 tiles, one
  // wave: 32 x 32768 / (132 x 32768) = 0.2424. K = 1024 = 16 stages of 64: no K padding.
  // Best: 64 / 132.
  EXPECT_DOUBLE_EQ(gemm_shape_efficiency(1024, 1024, 1024, 1, 132, MatmulPrecision::bf16), 64.0 / 132);
}

TEST(GemmShape, WavesAndTilePaddingOfAWideGemm) {
  // DeepGEMM's 4096 x 2112 x 7168 (FP8, 132 SMs). 128 x 128: 32 x ceil(2112 / 128 = 16.5) =
  // 32 x 17 = 544 tiles, ceil(544 / 132) = 5 waves = 660 tile slots; K = 7168 = 56 x 128.
  // Useful / spent = 4096 x 2112 / (660 x 128 x 128) = 8,650,752 / 10,813,440 = 0.8000.
  // 128 x 256: 32 x 9 = 288 tiles, 3 waves, 8,650,752 / (396 x 32768) = 0.667; 256 x 128:
  // 16 x 17 = 272 tiles, 3 waves: 0.667. Best 0.8.
  EXPECT_NEAR(gemm_shape_efficiency(4096, 2112, 7168, 1, 132, MatmulPrecision::fp8), 0.8, 1e-12);
}

TEST(GemmShape, KPaddedToTheStageAndTheAsymptote) {
  // 128 x 16896 x 100 in bf16, 132 SMs: 128 x 128 tiles 1 x 132 = 132 tiles, one full wave;
  // K 100 padded to 2 stages of 64 = 128: 100 / 128 = 0.78125.
  EXPECT_DOUBLE_EQ(gemm_shape_efficiency(128, 16896, 100, 1, 132, MatmulPrecision::bf16), 100.0 / 128);
  // fp8 stages are 128 elements: K 100 -> 128 as well; fp4 256: 100 / 256.
  EXPECT_DOUBLE_EQ(gemm_shape_efficiency(128, 16896, 100, 1, 132, MatmulPrecision::fp4), 100.0 / 256);
  // 8192^3: 128 x 128: 64 x 64 = 4096 tiles, 32 waves = 4224 slots: 4096 / 4224 = 0.9697.
  EXPECT_DOUBLE_EQ(gemm_shape_efficiency(8192, 8192, 8192, 1, 132, MatmulPrecision::bf16), 4096.0 / 4224);
  // No SM count stated: the MAMF rate, whatever the shape.
  EXPECT_EQ(gemm_shape_efficiency(64, 64, 64, 1, 0, MatmulPrecision::bf16), 1);
}

TEST(GemmShape, GroupedGemmCountsEveryGroupsTiles) {
  // 8 local experts of 256 tokens x 2048 x 7168 (bf16, 148 SMs, B200). 128 x 128: 8 x 2 x 16
  // = 256 tiles, 2 waves = 296 slots: 256 / 296 = 0.8649. 128 x 256 (or 256 x 128): 8 x 2 x
  // 8 = 128 tiles, 1 wave: 128 / 148 = 0.8649. Best 0.8649 (32 / 37).
  EXPECT_NEAR(gemm_shape_efficiency(256, 2048, 7168, 8, 148, MatmulPrecision::bf16), 32.0 / 37, 1e-12);
}

TEST(GemmShape, GroupedGemmPerTileFixedCost) {
  // K_g = 500 bf16 elements (kGroupedTileFixedK): Qwen3-30B-A3B's down projection K 768:
  // 768 / (768 + 500) = 0.60568; its gate-up K 2048: 2048 / 2548 = 0.80377.
  EXPECT_NEAR(grouped_gemm_reduction_efficiency(768, MatmulPrecision::bf16), 768.0 / 1268, 1e-12);
  EXPECT_NEAR(grouped_gemm_reduction_efficiency(2048, MatmulPrecision::bf16), 0.80377, 1e-5);
  // A fixed time is twice as many FP8 elements (stage k 128 against 64): 768 / 1768 = 0.43439;
  // FP4 (k 256) four times: 768 / 2768.
  EXPECT_NEAR(grouped_gemm_reduction_efficiency(768, MatmulPrecision::fp8), 0.43439, 1e-5);
  EXPECT_NEAR(grouped_gemm_reduction_efficiency(768, MatmulPrecision::fp4), 768.0 / 2768, 1e-12);
  // The derivation's check (Liger-Kernel PR #1294, H100 bf16): MAMF 794.5 TFLOP/s, epilogue
  // 794.5 / (3.35 x 0.87 = 2.9145 TB/s) = 272.6 K-equivalent; 2:1 FLOP-weighted harmonic mean
  // of K / (K + 272.6 + 500) over K 2048 and 768: 3 / (2 x 2820.6 / 2048 + 1540.6 / 768) =
  // 3 / (2.7545 + 2.0060) = 0.63018 -> 500.7 TFLOP/s against 501 measured.
  const double epilogue = 794.5 / 2914.5 * 1000;
  const auto eff = [&](double k) { return 1 / (1 / grouped_gemm_reduction_efficiency(k, MatmulPrecision::bf16) + epilogue / k); };
  EXPECT_NEAR(794.5 * 3 / (2 / eff(2048) + 1 / eff(768)), 501, 1.5);
  // Below 1 counts as 1: 1 / 501.
  EXPECT_NEAR(grouped_gemm_reduction_efficiency(0, MatmulPrecision::bf16), 1.0 / 501, 1e-12);
}

TEST(GemmShape, RoutedExpertGroupedEfficiencyIsTheFlopWeightedHarmonicMean) {
  // Qwen3-235B-A22B in FP8 (d 4096, expert width 1536, gated): K_g = 500 x 128 / 64 = 1,000
  // FP8 elements; gate/up 4096 / 5096 = 0.803768, down 1536 / 2536 = 0.605678;
  // 1 / (2/3 / 0.803768 + 1/3 / 0.605678) = 1 / (0.829427 + 0.550347) = 0.724757.
  EXPECT_NEAR(routed_expert_grouped_efficiency(4096, 1536, true, MatmulPrecision::fp8), 0.724757, 1e-6);
  // Qwen3-30B-A3B in bf16 (d 2048, width 768): the same ratios at K_g = 500, the same 0.724757.
  EXPECT_NEAR(routed_expert_grouped_efficiency(2048, 768, true, MatmulPrecision::bf16), 0.724757, 1e-6);
  // A plain 2-matrix expert weighs the GEMMs 1:1: bf16 d 1024, width 500: 1024 / 1524 =
  // 0.671916 and 500 / 1000 = 0.5; 1 / (0.5 / 0.671916 + 0.5 / 0.5) = 1 / 1.744141 = 0.573348.
  EXPECT_NEAR(routed_expert_grouped_efficiency(1024, 500, false, MatmulPrecision::bf16), 0.573348, 1e-6);
  // Expert tensor parallelism narrows the down GEMM's K: DeepSeek-V3 FP8 (7168, 2048) at
  // TP2 = width 1024: 7168 / 8168 = 0.877571, 1024 / 2024 = 0.505929; 1 / (0.759672 +
  // 0.658857) = 0.704957.
  EXPECT_NEAR(routed_expert_grouped_efficiency(7168, 1024, true, MatmulPrecision::fp8), 0.704957, 1e-6);
}

TEST(GemmShape, ServingTilesAddSixtyFourRowTilesForFewRows) {
  // 128 x 6144 x 4096 in FP8 on 132 SMs (vLLM PR #17126's Llama 3.1 8B q/k/v at batch 128).
  // Training's tiles: 128 x 128 gives 1 x 48 = 48 tiles in one wave, 48 / 132 = 0.3636 (the
  // wide tiles 24 tiles: 0.1818). With 64 x 128: 2 x 48 = 96 tiles, one wave: 96 / 132 =
  // 0.7273; x the FP8 MAMF 1402.6 TFLOP/s = 1,020 TFLOP/s, above the 693 measured there,
  // where the weights' stream (6144 x 4096 bytes at 2.91 TB/s, 8.6 us: 743 TFLOP/s) binds.
  EXPECT_NEAR(gemm_shape_efficiency(128, 6144, 4096, 1, 132, MatmulPrecision::fp8), 48.0 / 132, 1e-12);
  EXPECT_NEAR(gemm_shape_efficiency(128, 6144, 4096, 1, 132, MatmulPrecision::fp8, kServingGemmTiles), 96.0 / 132, 1e-12);
  // 100 rows: 64-row tiles pad 100 to 128 as 128-row ones do; 96 tiles of 64 x 128 in one
  // wave: 100 / 128 x 96 / 132 = 0.5682.
  EXPECT_NEAR(gemm_shape_efficiency(100, 6144, 4096, 1, 132, MatmulPrecision::fp8, kServingGemmTiles), 100.0 / 128 * 96 / 132, 1e-12);
  // The list: index 3 is 64 x 128, 4 (and beyond) 64 x 256.
  EXPECT_EQ(gemm_tile(3, MatmulPrecision::bf16).m, 64);
  EXPECT_EQ(gemm_tile(4, MatmulPrecision::bf16).n, 256);
  EXPECT_EQ(gemm_tile(9, MatmulPrecision::fp8).k, 128);
}

TEST(GemmShape, ServingGemmSplitsKOverAnUnderFilledWave) {
  // Llama 2 70B's q, k, v at TP4 in a decode step of 40 sequences: 40 x 2560 x 8192, bf16
  // (128 stages of 64), 132 SMs. One wave of 64 x 128 tiles: 1 x 20 = 20 tiles, 40 / 64 x 20
  // / 132 = 0.0947. Split K over 64 x 128 tiles: s = min(128, floor(132 / 20) = 6), 120
  // slices in one wave of ceil(128 / 6) = 22 stages = 1408: 40 x 2560 x 8192 / (132 x 64 x
  // 128 x 1408) = 0.5510; over 64 x 256 tiles (10): s = 13, 130 slices of ceil(128 / 13) = 10
  // stages = 640: 40 x 2560 x 8192 / (132 x 64 x 256 x 640) = 0.6061, the best.
  EXPECT_NEAR(gemm_shape_efficiency(40, 2560, 8192, 1, 132, MatmulPrecision::bf16, kServingGemmTiles), 40.0 / 64 * 20 / 132, 1e-12);
  EXPECT_NEAR(serving_gemm_efficiency(40, 2560, 8192, 132, MatmulPrecision::bf16), 40.0 * 2560 * 8192 / (132.0 * 64 * 256 * 640), 1e-12);
  // A GEMM that fills the SMs does not split: 1100 x 28672 x 8192 FP8 keeps its 0.940860.
  EXPECT_NEAR(serving_gemm_efficiency(1100, 28672, 8192, 132, MatmulPrecision::fp8), 0.940860, 1e-6);
  EXPECT_EQ(serving_gemm_efficiency(40, 2560, 8192, 0, MatmulPrecision::bf16), 1);
}

TEST(GemmShape, DenseLayerGemmsAreTheFlopWeightedHarmonicMean) {
  // Llama 2 70B's FFN at TP2 on an H100 (132 SMs), FP8, 1100 rows (padded to 18 x 64 = 1152:
  // 1100 / 1152 = 0.954861). Gate/up 28672 x 8192: 64 x 128 tiles 18 x 224 = 4032 in 31
  // waves (4092 slots): 0.954861 x 4032 / 4092 = 0.940860. Down 8192 x 14336: 18 x 64 =
  // 1152 tiles in 9 waves (1188): 0.954861 x 1152 / 1188 = 0.925926. Weights n k: 2:1, so
  // 3 / (2 / 0.940860 + 1 / 0.925926) = 3 / (2.125714 + 1.08) = 0.935829.
  const GemmNK ffn[] = {{28672, 8192}, {8192, 14336}};
  EXPECT_NEAR(gemms_shape_efficiency(1100, ffn, 2, 132, MatmulPrecision::fp8), 0.935829, 1e-6);
  // No SM count, or no GEMM: 1.
  EXPECT_EQ(gemms_shape_efficiency(1100, ffn, 2, 0, MatmulPrecision::fp8), 1);
  EXPECT_EQ(gemms_shape_efficiency(1100, ffn, 0, 132, MatmulPrecision::fp8), 1);
}

TEST(DenseGemm, Llama70bAtTp2OnH100ByHand) {
  // Llama 3.1 70B (d 8192, 64 heads, 8 KV heads of 128, FFN 28672, vocab 128256) in bf16
  // (64 elements of K per stage) at TP2 on H100 (132 SMs), 1100 rows (64-row tiles pad them
  // to 1152: 1100 / 1152 = 0.954861; 128-row tiles the same 9 x 128 = 1152).
  const Deployment d = engine_deploy("llama-3.1-70b", "h100-sxm", 2);
  const detail::DenseGemmEfficiency e = detail::dense_gemm_efficiency(d, 1100, 1100, 1);
  // q, k, v: N = (32 + 2 x 4) x 128 = 5120, K 8192: 128 x 128 tiles 9 x 40 = 360 in 3 waves
  // (396): 0.954861 x 360 / 396 = 0.868056. Output: N 8192, K 4096: 64 x 128 tiles 18 x 64
  // = 1152 in 9 waves (1188): 0.954861 x 1152 / 1188 = 0.925926. Weighted by N K (41.94M and
  // 33.55M): 75,497,472 / (48,318,382 + 36,238,787) = 0.892857.
  EXPECT_NEAR(e.projections, 0.892857, 1e-6);
  // FFN: gate/up N 28672 K 8192 (4032 tiles of 64 x 128 in 31 waves: 0.940860), down N 8192
  // K 14336 (0.925926), 2:1: 0.935829, as GemmShape.DenseLayerGemmsAreTheFlopWeightedHarmonicMean.
  EXPECT_NEAR(e.ffn, 0.935829, 1e-6);
  // LM head at one row (a prefill's last position): N 64128 = 501 tiles of 64 x 128 in 4
  // waves (528): 1 / 64 x 501 / 528 = 0.0148260.
  EXPECT_NEAR(e.head, 0.0148260, 1e-7);
  // A chip without an SM count keeps the MAMF rate.
  Deployment none = d;
  none.system.chip.sm_count = 0;
  const auto n = detail::dense_gemm_efficiency(none, 1100, 1100, 1);
  EXPECT_EQ(n.projections, 1);
  EXPECT_EQ(n.ffn, 1);
  EXPECT_EQ(n.head, 1);
}

TEST(DenseGemm, StepPaysItOnTheComputeSideOnly) {
  // A 1,100-token prompt on the same 2 H100s (TP2: every rank runs all 1,100 rows).
  // Projection FLOPs per chip 2 x 12,079,595,520 x 1100 / 2 = 13.2876 TFLOP, FFN 2 x
  // 56,371,445,760 x 1100 / 2 = 62.0086 TFLOP, at 989.4 x 0.803 = 794.5 TFLOP/s: 16.7247 and
  // 78.0485 ms. The shape adds 16.7247 x (1 / 0.892857 - 1) = 2.0070 ms and 78.0485 x (1 /
  // 0.935829 - 1) = 5.3519 ms; the head (2 x 1,050,673,152 / 2 at one row: 1.3225 us at the
  // MAMF rate) 1.3225 x (1 / 0.0148260 - 1) us = 0.0879 ms. 7.4468 ms in all; the FLOPs
  // counted and the weights streamed do not move.
  const Deployment d = engine_deploy("llama-3.1-70b", "h100-sxm", 2);
  Deployment flat = d;
  flat.system.chip.sm_count = 0;
  StepShape s;
  s.prefill_sequences = 1;
  s.prompt = 1100;
  const StepBreakdown with = engine_step(d, s), without = engine_step(flat, s);
  EXPECT_NEAR(to_ms(with.t_compute - without.t_compute), 7.4468, 0.01);
  EXPECT_DOUBLE_EQ(with.flops_per_chip.value(), without.flops_per_chip.value());
  EXPECT_DOUBLE_EQ(with.weight_bytes_per_chip.value(), without.weight_bytes_per_chip.value());
}


TEST(GemmShape, Fp4FractionIsTheMedianOfThePublishedB200Gemms) {
  // B200's fp4 matmul fraction (data/hardware/b200.json, docs/formulas.md section 2) is the
  // median of six published block-scaled FP4 GEMMs on B200, each over the serving tile model
  // at its shape (148 SMs, k step 256):
  //   8192^3: 128 x 256 tiles, 64 x 32 = 2,048 in 14 waves of 148 = 2,072 slots: 0.98842;
  //     cuBLASLt 13.3 5,239 and DeepGEMM 5,702 of 9,000 -> 0.5889, 0.6410;
  //   16384 x 6144 x 4096: 128 x 256, 128 x 24 = 3,072 tiles in 21 waves = 3,108: 0.98842;
  //     vLLM's CUTLASS 3,904 -> 0.4389;
  //   1024 x 7168 x 4608: 64 x 128, 16 x 56 = 896 tiles in 7 waves = 1,036: 0.86486; K 4608
  //     = 18 x 256; FlashInfer cutlass 3,370, cudnn 2,976, trtllm 2,187 -> 0.4330, 0.3823, 0.2810.
  // Sorted, the middle two are 0.4330 and 0.4389: median 0.43591, stated as 0.436.
  const auto e8192 = serving_gemm_efficiency(8192, 8192, 8192, 148, MatmulPrecision::fp4);
  const auto e_vllm = serving_gemm_efficiency(16384, 6144, 4096, 148, MatmulPrecision::fp4);
  const auto e_fi = serving_gemm_efficiency(1024, 7168, 4608, 148, MatmulPrecision::fp4);
  EXPECT_NEAR(e8192, 2048.0 / 2072, 1e-12);
  EXPECT_NEAR(e_vllm, 3072.0 / 3108, 1e-12);
  EXPECT_NEAR(e_fi, 896.0 / 1036, 1e-12);
  std::vector<double> a = {5239 / 9000.0 / e8192, 5702 / 9000.0 / e8192, 3904 / 9000.0 / e_vllm,
                           3370 / 9000.0 / e_fi,  2976 / 9000.0 / e_fi,  2187 / 9000.0 / e_fi};
  std::sort(a.begin(), a.end());
  const double median = (a[2] + a[3]) / 2;
  EXPECT_NEAR(median, 0.43591, 1e-4);
  // The files state the burst figure; matmul_for applies the chip's sustained clock (B200
  // 0.853, flashinfer PR #2899; GB200 none stated).
  const auto b200 = load_system("b200").efficiency;
  EXPECT_NEAR(b200.matmul_for(MatmulPrecision::fp4) / b200.sustained_clock, median, 5e-4);
  EXPECT_NEAR(load_system("gb200-nvl72").efficiency.matmul_for(MatmulPrecision::fp4), median, 5e-4);
}

}  // namespace
}  // namespace chalk
