// Fixed GPU time per kernel of a training step (kernel_fixed_time.h; docs/formulas.md,
// "Fixed time per kernel in training").
#include "chalk/training/kernel_fixed_time.h"

namespace chalk {
namespace {

/// Quantize kernels per GEMM operand a recipe launches (kernel_fixed_time.h).
double quantize_kernels_per_operand(const TrainingPlan& p) {
  if (p.compute == MatmulPrecision::bf16) return 0;
  if (p.compute == MatmulPrecision::fp8 && p.fp8_recipe == Fp8Recipe::tensorwise) return 3;  // amax, scale, cast
  return 1;  // one cast_transpose (delayed, mxfp8, blockwise, fp4)
}

/// Scale swizzles per GEMM forward under MXFP8 (both operands; TE swizzle_scaling_factors).
double mxfp8_swizzles(const TrainingPlan& p) {
  return p.compute == MatmulPrecision::fp8 && p.fp8_recipe == Fp8Recipe::mxfp8 ? 2.0 : 0.0;
}

}  // namespace

LayerKernelCounts layer_kernel_counts(const TrainingCosts& c, const TrainingPlan& p) {
  LayerKernelCounts k;
  const double q = quantize_kernels_per_operand(p), sw = mxfp8_swizzles(p);
  const double ep = static_cast<double>(p.ep);
  // The layer GEMMs (sums over c.gemms, make_training_costs): dense ones one kernel each.
  double gemms = c.dense_gemms, other_f = c.dense_gemms * (q + sw), other_b = c.dense_gemms * (q + 2 * sw);
  if (p.per_expert_gemms) {
    // Per-expert GEMMs: one kernel per local expert, four streams at a time; their quantize
    // kernels run one expert after another on the main stream (TE split_quantize), and each
    // GroupedLinear writes its output buffer (forward 1, backward 2).
    const double local = c.expert_gemm_experts / ep;  // sum of count x local experts
    gemms += local / kTeGroupedGemmStreams;
    other_f += q * local + c.expert_gemms * (sw + 1);
    other_b += q * local + c.expert_gemms * (2 * sw + 2);
  } else {
    gemms += c.expert_gemms;  // one grouped kernel each
    other_f += c.expert_gemms * (q + sw);
    other_b += c.expert_gemms * (q + 2 * sw);
  }
  k.gemm_forward = gemms;
  k.gemm_backward = 2 * gemms;
  k.gemm_wgrad = gemms;
  k.other_forward = other_f;
  k.other_backward = other_b;
  // Attention core.
  if (p.flash_attention) {
    k.gemm_forward += 1;
    k.gemm_backward += 1;
    k.other_backward += 2;  // FlashAttention-2's dot(dO, O) preprocess and dQ conversion
  } else {
    k.gemm_forward += 2;  // QK^T, probabilities x V
    k.gemm_backward += 4;
    k.other_forward += 1;  // fused scale-mask-softmax
    k.other_backward += 1;
  }
  const double h = static_cast<double>(c.d_model);
  const double norms = h > 0 ? c.norm_width / h : 0.0;
  const bool rotary = c.rotary_width_sharded + c.rotary_width_replicated > 0;
  const bool gated = c.gated_act_width > 0;
  if (p.compile) {
    k.other_forward += norms + 2 + 1 + (rotary ? 2 : 0);
    k.other_backward += norms + 2 + 1 + (rotary ? 2 : 0);
  } else {
    // PyTorch eager: RMSNorm op by op, SwiGLU's silu and mul, rotary's float, complex mul
    // and type_as per tensor (eager_kernels.h).
    k.other_forward += norms * 8 + 2 + (gated ? 2 : 1) + (rotary ? 6 : 0);
    k.other_backward += norms * 14 + 2 + (gated ? 3 : 1) + (rotary ? 6 : 0);
  }
  if (c.moe_layer_fraction > 0) {
    const double f = c.moe_layer_fraction;
    k.gemm_forward += f;  // the router's gating GEMM
    k.gemm_backward += 2 * f;
    k.gemm_wgrad += f;
    k.other_forward += f * (p.per_expert_gemms ? 39.0 : 7.0);
    k.other_backward += f * (p.per_expert_gemms ? 19.0 : 4.0);
  }
  return k;
}

LayerFixedTime layer_fixed_time(const TrainingCosts& c, const TrainingSystem& s, const TrainingPlan& p) {
  if (s.gemm_kernel_fixed_s <= 0 && s.kernel_gap_s <= 0) return {};
  const LayerKernelCounts k = layer_kernel_counts(c, p);
  return LayerFixedTime{
      .forward_gemm = k.gemm_forward * s.gemm_kernel_fixed_s,
      .forward_other = k.other_forward * s.kernel_gap_s,
      .backward_gemm = k.gemm_backward * s.gemm_kernel_fixed_s,
      .backward_other = k.other_backward * s.kernel_gap_s,
      .wgrad = k.gemm_wgrad * s.gemm_kernel_fixed_s,
  };
}

}  // namespace chalk
