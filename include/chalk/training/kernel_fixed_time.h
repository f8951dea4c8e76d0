// The fixed GPU time of each kernel of a training step: every kernel pays its launch, its
// ramp and tail and the dispatch gap before the next dependent kernel besides its work, so
// a layer of hundreds of small kernels (a fine-grained MoE layer's router, permutes,
// per-expert quantize kernels and GEMMs) pays it hundreds of times per microbatch.
// Derivation and sources: docs/formulas.md, "Fixed time per kernel in training".
#pragma once

#include "chalk/training/plan.h"
#include "chalk/training/step.h"

namespace chalk {

/// Fixed GPU time of a memory-bound (or empty) kernel on a GPU, seconds: the dispatch gap
/// between two dependent kernels (0.55 us) plus an empty kernel's time (0.72 us), measured
/// inside a CUDA graph, so paid with graphs on or off (NVIDIA/Megatron-LM PR #6453). A
/// streaming kernel's bytes then run at the HBM rate (kernels.h): time = this + bytes / rate.
inline constexpr double kKernelGapS = 0.55e-6 + 0.72e-6;

/// Compute streams over which Transformer Engine 2.x's GroupedLinear spreads its per-expert
/// cuBLAS GEMMs (te_general_grouped_gemm via nvte_multi_stream_cublas_gemm,
/// get_num_compute_streams: 4): their fixed times overlap four at a time.
inline constexpr double kTeGroupedGemmStreams = 4;

/// Kernels of one average layer on one rank, per microbatch: `gemm_*` are the compute-bound
/// ones (GEMMs, the attention core), each paying TrainingSystem::gemm_kernel_fixed_s;
/// `other_*` the memory-bound ones (norms, residual adds, activation, rotary, quantize,
/// router, permute), each paying TrainingSystem::kernel_gap_s. `gemm_wgrad` is the part of
/// gemm_backward that computes weight gradients. Per-expert GEMMs spread over
/// kTeGroupedGemmStreams count 1 / 4 each. Fractional: per average layer (MoE layers x
/// moe_layer_fraction).
struct LayerKernelCounts {
  double gemm_forward = 0, gemm_backward = 0, gemm_wgrad = 0;
  double other_forward = 0, other_backward = 0;
};

/// The kernels of one average layer of `c` under plan `p` (docs/formulas.md, "Fixed time per
/// kernel in training", which lists each count and its source):
/// - every layer GEMM in c.gemms: 1 forward, 2 backward (input and weight gradient);
///   a routed expert's GEMM under p.per_expert_gemms one per local expert (E / ep), else one
///   grouped kernel;
/// - under a low-precision recipe, q quantize kernels per GEMM input forward and per output
///   gradient backward (delayed, mxfp8, blockwise, fp4: 1 cast_transpose; tensorwise 3: amax,
///   scale, cast), per local expert under p.per_expert_gemms; MXFP8 adds 2 scale swizzles
///   per GEMM forward, 4 backward;
/// - attention: FlashAttention 1 forward, 1 backward GEMM-class + 2 others (FlashAttention-2's
///   dot(dO, O) preprocess and dQ conversion); materialised scores 2 GEMMs + 1 softmax
///   forward, 4 GEMMs + 1 softmax backward;
/// - norms (c.norm_width / d_model), 2 residual adds, the MLP activation, rotary (q and k):
///   one kernel each way, fused; under PyTorch eager (p.compile false) RMSNorm 8 forward and
///   14 backward ops, SwiGLU 2 and 3, rotary 3 and 3 per tensor (eager_kernels.h's op lists);
/// - each MoE layer's router gating GEMM (1 forward, 2 backward, GEMM-class) and its router,
///   preprocess, permute and combine kernels: Megatron-Core's MoE layer (p.per_expert_gemms)
///   39 forward, 19 backward (docs/training.md's count at Megatron-Core 0d8e0714 less the
///   gating GEMM, the collectives and the residual add); otherwise 7 and 4 (score, top-k, aux
///   loss, counts, permute, unpermute).
/// Full recomputation reruns the forward's (training_step adds them through its forward).
/// Never throws.
LayerKernelCounts layer_kernel_counts(const TrainingCosts& c, const TrainingPlan& p);

/// Fixed kernel time of one average layer per microbatch, seconds: forward, backward and the
/// backward's weight-gradient part, at s.gemm_kernel_fixed_s per GEMM-class kernel and
/// s.kernel_gap_s per other kernel.
struct LayerFixedTime {
  double forward_gemm = 0, forward_other = 0, backward_gemm = 0, backward_other = 0, wgrad = 0;
};
LayerFixedTime layer_fixed_time(const TrainingCosts& c, const TrainingSystem& s, const TrainingPlan& p);

}  // namespace chalk
