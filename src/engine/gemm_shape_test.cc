// GEMM efficiency by shape (gemm_shape.h) against hand counts of tiles and waves.
#include <gtest/gtest.h>

#include "chalk/engine/gemm_shape.h"

namespace chalk {
namespace {

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

}  // namespace
}  // namespace chalk
