// Private to src/engine: the HBM traffic of a serving step's memory-bound elementwise
// kernels, the residual-add RMSNorms and the gated activation, beyond the kernel floor
// (docs/formulas.md, "Elementwise kernels in a serving step").
#pragma once

#include "chalk/engine/roofline.h"

namespace chalk::detail {

/// Time (s) one kernel of each kind spends beyond the kernel floor on one rank, 0 when its
/// bytes stream within the floor:
///   norm: a residual add fused with RMSNorm (vLLM csrc/layernorm_kernels.cu
///     fused_add_rms_norm; TensorRT-LLM's residual + RMSNorm): reads the input and the
///     residual and writes both, 4 x rows x d_model x 2 bytes (bf16 activations);
///   activation: a dense FFN's gated activation (vLLM csrc/activation_kernels.cu
///     act_and_mul_kernel: SiLU(gate) x up): reads 2 x width and writes width, width =
///     d_ff / tp_ffn, (3 if gated else 2) x rows x width x 2 bytes; 0 for a model whose
///     groups have no dense FFN;
/// each at `bandwidth` (bytes/s: the chip's HBM peak x its STREAM fraction), time =
/// max(0, bytes / bandwidth - floor). Rows: `norm_rows` the busiest attention rank's tokens,
/// `ffn_rows` the FFN group's. The activation takes the first dense FFN group's width (the
/// models chalk ships have one). Never throws.
struct ElementwiseExcess {
  double norm_s = 0, activation_s = 0;
  double dense_ffn_layers = 0;  ///< layers whose FFN is dense (they run the activation kernel)
};
ElementwiseExcess elementwise_excess(const Deployment& dep, double norm_rows, double ffn_rows, double floor_s, double bandwidth);

}  // namespace chalk::detail
