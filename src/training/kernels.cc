// The memory-bound kernels of a training step (docs/training.md, "Memory-bound kernels").
#include "chalk/training/kernels.h"

namespace chalk {

KernelBytes elementwise_bytes(const TrainingCosts& c, const TrainingPlan& p) {
  const double e = p.activation_bytes;
  const double h = static_cast<double>(c.d_model);
  const double rep = p.sequence_parallel ? static_cast<double>(p.tp) : 1.0;  // SP splits the replicated region
  const double tp = static_cast<double>(p.tp);
  const double mask = p.dropout ? kDropoutMaskBytes : 0.0;
  // Norms: forward 2 e, backward 3 e per element of their width.
  const double norm_f = 2 * e * c.norm_width, norm_b = 3 * e * c.norm_width;
  // Two residual adds per layer (with the dropout before each when training with dropout):
  // forward 3 e (+ mask) per element; backward the gradient accumulation 3 e, and dropout's
  // backward 2 e + mask.
  const double res_f = 2 * h * (3 * e + mask);
  const double res_b = 2 * h * (3 * e + (p.dropout ? 2 * e + mask : 0.0));
  // MoE token permute and unpermute (k = top_k copies of an h-wide token): forward, the
  // permute reads a token once per copy and writes the copy (2 k h e), the unpermute reads
  // the k expert outputs and writes their weighted sum (k h e + h e); backward, the
  // unpermute's gradient reads dy and the k outputs (for the routing weights' gradient) and
  // writes k copies (2 k h e + h e), the permute's gradient reads the k copies' gradients and
  // writes their sum (k h e + h e).
  const double kh = c.moe_routed_width, mh = c.moe_hidden_width;
  const double perm_f = e * (3 * kh + mh), perm_b = e * (3 * kh + 2 * mh);
  return KernelBytes{
      .forward = (norm_f + res_f) / rep + (e * c.act_fn_forward_elements + perm_f) / tp,
      .backward = (norm_b + res_b) / rep + (e * c.act_fn_backward_elements + perm_b) / tp,
  };
}

double quantized_copy_bytes(MatmulPrecision compute) {
  switch (compute) {
    case MatmulPrecision::bf16: return 0;
    case MatmulPrecision::fp8:
    case MatmulPrecision::int8: return 2 * 1.0;
    case MatmulPrecision::fp4: return 2 * (0.5 + 1.0 / 16);  // NVFP4: a 1-byte E4M3 scale per 16 elements
  }
  return 0;
}

KernelBytes quantize_bytes(const TrainingCosts& c, const TrainingPlan& p) {
  const double q = quantized_copy_bytes(p.compute);
  if (q == 0) return {};
  const double per_element = p.activation_bytes + q;  // cast_transpose: read e, write the copy and its transpose
  const double rep = p.sequence_parallel ? static_cast<double>(p.tp) : 1.0;
  const double tp = static_cast<double>(p.tp);
  return KernelBytes{
      .forward = per_element * (c.gemm_in_replicated / rep + c.gemm_in_sharded / tp),
      .backward = per_element * (c.gemm_out_replicated / rep + c.gemm_out_sharded / tp),
  };
}

KernelBytes gemm_output_bytes(const TrainingCosts& c, const TrainingPlan& p) {
  const double e = p.activation_bytes;
  const double tp = static_cast<double>(p.tp);
  return KernelBytes{
      .forward = e * (c.gemm_out_replicated + c.gemm_out_sharded / tp),
      .backward = e * (c.gemm_in_replicated + c.gemm_in_sharded / tp),
  };
}

double weight_grad_bytes_per_param(const TrainingPlan& p) {
  return p.zero_stage >= 3 ? p.state.gradients : 2 * p.state.gradients;
}

double gemm_time(double m, double n, double k, double out_bytes, double rate, double hbm_rate) {
  return 2 * m * n * k / rate + m * n * out_bytes / hbm_rate;
}

}  // namespace chalk
