// GEMM efficiency by shape: the fraction of a chip's best-shape matmul rate (its MAMF,
// Efficiency::matmul) that a GEMM of a given M x N x K reaches once its output is cut into
// the kernel's tiles and the tiles are run in waves over the chip's SMs. Derivation:
// docs/formulas.md, "GEMM efficiency by shape".
#pragma once

#include <cstdint>

#include "chalk/base/dtype.h"

namespace chalk {

/// One output tile of a GEMM kernel: m x n outputs per thread block (CTA), k of the
/// reduction per main-loop stage.
struct GemmTile {
  int64_t m = 128, n = 128, k = 64;
};

/// The tiles a Hopper/Blackwell GEMM library picks among for a large GEMM, all at the
/// tensor cores' full rate (both sides >= 128 keep the tensor cores fed from shared memory):
/// 128 x 128 (NVIDIA/cutlass examples/48_hopper_warp_specialized_gemm: TileShape
/// Shape<_128,_128,_64>), 128 x 256 and 256 x 128 (the wide tiles of CUTLASS's SM90 kernel
/// generator; DeepGEMM's get_best_configs, deep_gemm/jit_kernels/gemm.py @c4a7116, likewise
/// picks BLOCK_M among 64/128/256 by the fewest waves). k: 128 bytes of each operand per
/// stage: 64 elements for bf16 (CUTLASS's _64), 128 for fp8 and int8 (DeepGEMM BLOCK_K 128),
/// 256 for fp4.
inline constexpr int kGemmTiles = 3;
/// The tiles a serving step's GEMMs pick among: the three above and the 64-row tiles 64 x 128
/// and 64 x 256 (indexes 3, 4) that a library picks for a GEMM of few rows (DeepGEMM's
/// get_best_configs tries BLOCK_M 64, 128 and 256, deep_gemm/jit_kernels/gemm.py @c4a7116;
/// CUTLASS's SM90 generator lists 64 x N tiles). A decode step has a few hundred rows, a
/// training microbatch thousands, where the 64-row tiles never win; training keeps the three.
inline constexpr int kServingGemmTiles = 5;
/// Tile `index` of the lists above (0 to 4; any other index gives the last), with its k
/// step for precision `p`.
GemmTile gemm_tile(int index, MatmulPrecision p);

/// The fraction in (0, 1] of the best-shape rate that `groups` GEMMs of m x n x k each (a
/// grouped GEMM: one per local expert, run as one launch; 1 for a plain GEMM) reach on a chip
/// with `sm_count` SMs, for the best of gemm_tile's tiles:
///   tiles = groups x ceil(m / tm) x ceil(n / tn), waves = ceil(tiles / sm_count),
///   efficiency = 2 m n k groups / (waves x sm_count x 2 tm tn ceil(k / tk) tk),
/// the useful FLOPs over the FLOPs the SMs spend in the waves: wave quantization (the last
/// wave's idle SMs) times tile quantization (M, N and K padded to the tile). Every tile
/// runs at the same per-SM rate, the MAMF rate, which a large GEMM reaches (the asymptote:
/// 1 as m, n and k grow). The epilogue's output write is priced apart (training's
/// gemm_output_bytes), and it is the small-K falloff: DeepGEMM's H800 FP8 table (4096 x
/// 32768 x 512: 751 TFLOP/s) leaves no room for a per-tile pipeline fill besides it.
/// m, n, k, groups below 1 count as 1; sm_count <= 0 (not stated) returns 1. Never throws.
/// Source of the wave model: NVIDIA Deep Learning Performance Guide, "Matrix Multiplication
/// Background", sections "Tile Quantization" and "Wave Quantization"
/// (docs.nvidia.com/deeplearning/performance/dl-performance-matrix-multiplication).
/// `tiles` is how many of gemm_tile's list the library picks among (kGemmTiles, or
/// kServingGemmTiles with the 64-row tiles).
double gemm_shape_efficiency(double m, double n, double k, double groups, int64_t sm_count, MatmulPrecision p, int tiles = kGemmTiles);

/// A serving step's GEMM of m x n x k: the best of gemm_shape_efficiency over the serving
/// tiles (kServingGemmTiles) and, where one wave of tiles leaves SMs idle, of split-K: the
/// reduction cut into s = min(stages, floor(sm_count / tiles)) slices run side by side
/// (CUTLASS, media/docs/efficient_gemm.md, "Parallelized Reductions", Split K: "partition
/// the reduction across threadblocks" for GEMMs whose M and N give too few tiles), each tile
/// of ceil(ceil(k / tk) / s) stages:
///   efficiency = m n k / (ceil(tiles s / sm_count) x sm_count x tm tn x ceil(stages / s) tk).
/// The slices' partial sums (an m x n reduction) are not priced. A decode GEMM of 40 rows at
/// TP4 (Llama 2 70B's q, k, v: 40 x 2560 x 8192, bf16, 132 SMs): 10 tiles of 64 x 256, 13
/// slices of 10 stages, 40 x 2560 x 8192 / (132 x 16384 x 640) = 0.6061, where one wave of
/// 20 tiles of 64 x 128 gives 40 / 64 x 20 / 132 = 0.0947. sm_count <= 0 gives 1. Never throws.
double serving_gemm_efficiency(double m, double n, double k, int64_t sm_count, MatmulPrecision p);

/// One GEMM's output width and reduction on a rank: N x K of its weight (M is the step's).
struct GemmNK {
  double n = 0, k = 0;
};

/// The FLOP-weighted harmonic mean of serving_gemm_efficiency over `gemms`, each m x n x k
/// at the same `m` (the rows of a serving step on one rank): the fraction of the MAMF rate the step's dense GEMMs keep from tile
/// and wave quantization. 1 when `gemms` is empty or sm_count <= 0. Llama 2 70B's FFN at TP2
/// on an H100 (132 SMs), FP8, m 1100 (rows padded to 1152 = 18 x 64: 1100 / 1152 = 0.95486):
/// gate/up 1100 x 28672 x 8192 runs 18 x 224 = 4,032 tiles of 64 x 128 in 31 waves (4032 /
/// 4092 x 0.95486 = 0.94086), down 1100 x 8192 x 14336 runs 18 x 64 = 1,152 such tiles in 9
/// waves (1152 / 1188 x 0.95486 = 0.92593); the 2:1 FLOP-weighted harmonic mean is 0.93583
/// (docs/formulas.md, "GEMM efficiency by shape"). Never throws.
double gemms_shape_efficiency(double m, const GemmNK* gemms, int count, int64_t sm_count, MatmulPrecision p);

/// The per-tile fixed cost of a pointer-array grouped GEMM (one launch over the local
/// experts, each group's operands found through its own pointers and TMA descriptors:
/// CUTLASS's grouped GEMM, cuBLAS's grouped GEMM behind Transformer Engine's GroupedLinear,
/// torch._grouped_mm, Triton's fused MoE), in reduction elements of bf16 main loop: each
/// output tile of a group spends about this long, besides its K-long main loop and the
/// epilogue's output write (priced apart), fetching its group's problem and descriptors and
/// filling its pipeline. 500 bf16 elements, about 2.7 us per 128 x 128 tile on an H100.
/// Derived from linkedin/Liger-Kernel PR #1294 (2026-07-08): Qwen3-30B-A3B's experts (E 128,
/// h 2048, width 768, top-8) forward at 501 TFLOP/s on an H100, where the MAMF rate (794.5
/// TFLOP/s) with the epilogue's output write (272.6 K-equivalent: 794.5 / 2,915 GB/s) gives
/// 658: the 2:1 FLOP-weighted harmonic mean of K / (K + 272.6 + K_g) over the gate-up
/// (K 2048) and down (K 768) GEMMs equals 501 / 794.5 at K_g = 498 (docs/formulas.md,
/// "Grouped GEMM"). Uncertainty: 0 to about 2,700. DeepGEMM's contiguous layout (one
/// descriptor, experts padded to the M block) shows none (H800 FP8: 8 groups of 4096 x 7168
/// x 2048 at 61% of peak, the dense 4096 x 7168 x 2048 at 59%); torch._grouped_mm at the same
/// Qwen3 shape and 2,048 tokens per expert, 242 TFLOP/s (ByteDance-Seed/VeOmni PR #460),
/// implies about 2,700. Both in docs/sources/kernel-efficiency.md, C1/C2.
inline constexpr double kGroupedTileFixedK = 500;

/// The fraction in (0, 1] of the rate a grouped GEMM's tiles keep over a reduction of
/// `k` elements: k / (k + K_g), K_g = kGroupedTileFixedK x the tile's k step over bf16's
/// (gemm_tile: 64 bf16, 128 fp8/int8, 256 fp4 elements per stage: a fixed time is twice as
/// many FP8 elements). The reduction is K forward, the output width N for the input
/// gradient and the expert's tokens M for the weight gradient, so narrow experts and few
/// tokens per expert both lose. k below 1 counts as 1. Never throws.
double grouped_gemm_reduction_efficiency(double k, MatmulPrecision p);

/// The forward rate fraction in (0, 1] a routed expert's grouped GEMMs keep from their
/// per-tile fixed cost (grouped_gemm_reduction_efficiency) in a serving step: the
/// FLOP-weighted harmonic mean over the gate/up GEMM (K = `d_model`; 2 of 3 FLOPs when
/// `gated`, else 1 of 2) and the down GEMM (K = `d_ff_per_chip`, the expert's hidden width
/// over its expert tensor parallelism). Qwen3-235B-A22B in FP8 (d 4096, width 1536):
/// 4096 / 5096 and 1536 / 2536 give 1 / (2/3 / 0.8038 + 1/3 / 0.6057) = 0.7252. Used by
/// engine_step on the routed experts' compute time (docs/formulas.md, "Grouped GEMM").
/// Never throws (widths below 1 count as 1).
double routed_expert_grouped_efficiency(double d_model, double d_ff_per_chip, bool gated, MatmulPrecision p);

}  // namespace chalk
