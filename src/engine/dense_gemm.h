// Private to src/engine: the tile and wave quantization of a serving step's dense GEMMs
// (gemm_shape.h gemms_shape_efficiency; docs/formulas.md, "GEMM efficiency by shape").
#pragma once

#include "chalk/engine/roofline.h"

namespace chalk::detail {

/// The fraction of the MAMF rate (each in (0, 1]) that a serving step's dense GEMMs keep at
/// the rows they run on one rank: the attention projections, the dense FFNs and the LM head.
struct DenseGemmEfficiency {
  double projections = 1, ffn = 1, head = 1;
};

/// The step's dense GEMMs on one rank, each at its per-rank N x K and the given rows (M):
///   projections (GQA/MHA layers): q, k, v fused, N = (ceil(h / tp) + 2 max(1, kv / tp)) x
///     head_dim, K = d_model; output, N = d_model, K = ceil(h / tp) x v_head_dim; tp the
///     attention TP; `projection_rows` the busiest rank's tokens;
///   dense FFN: gate and up fused, N = (2 if gated else 1) x d_ff / tp_ffn, K = d_model;
///     down, N = d_model, K = d_ff / tp_ffn; `ffn_rows` the FFN group's tokens;
///   LM head: N = vocab / tp, K = d_model, `head_rows` (a prefill's last position only);
/// each at its weights' matmul class (class_of), FLOP-weighted over the layer groups by their
/// count. MLA, linear-attention layers and every MoE expert (shared and routed) are not in
/// it (their shapes differ; routed experts pay their own grouped cost). A chip without a
/// stated SM count (chip.sm_count 0) keeps 1. Never throws.
DenseGemmEfficiency dense_gemm_efficiency(const Deployment& dep, double projection_rows, double ffn_rows, double head_rows);

}  // namespace chalk::detail
