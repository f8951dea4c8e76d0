// Tile and wave quantization of a serving step's dense GEMMs (dense_gemm.h).
#include "dense_gemm.h"

#include <algorithm>
#include <cmath>

#include "chalk/base/count_cast.h"
#include "chalk/engine/gemm_shape.h"
#include "matmul_rate.h"

namespace chalk::detail {

namespace {

using counts::d;

/// Adds `count` copies of the GEMMs' FLOPs (up to 2 m) and their time at `eff` to the sums.
void add(double count, const GemmNK* g, int n, double eff, double& flops, double& spent) {
  double w = 0;
  for (int i = 0; i < n; ++i) w += g[i].n * g[i].k;
  flops += count * w;
  spent += count * w / eff;
}

DenseGemmEfficiency compute(const Deployment& dep, double projection_rows, double ffn_rows, double head_rows);

}  // namespace

DenseGemmEfficiency dense_gemm_efficiency(const Deployment& dep, double projection_rows, double ffn_rows, double head_rows) {
  return compute(dep, projection_rows, ffn_rows, head_rows);
}

namespace {

DenseGemmEfficiency compute(const Deployment& dep, double projection_rows, double ffn_rows, double head_rows) {
  DenseGemmEfficiency r;
  const auto& chip = dep.system.chip;
  const int64_t sms = chip.sm_count;
  if (sms <= 0) return r;
  const auto& L = dep.mechanisms.layout;
  const double tp = d(std::max<int64_t>(L.tp_attention, 1)), tp_ffn = d(std::max<int64_t>(L.tp_ffn, 1));
  const double h = d(dep.model.d_model);
  const MatmulPrecision proj_p = class_of(dep.weights.attention, chip), ffn_p = class_of(dep.weights.dense_ffn, chip);
  double pf = 0, ps = 0, ff = 0, fs = 0;
  for (const auto& g : dep.model.groups) {
    const auto& a = g.attention;
    if (a.kind == AttentionKind::gqa && a.n_heads > 0 && a.head_dim > 0) {
      const double q_heads = std::ceil(d(a.n_heads) / tp), kv_heads = std::max(1.0, d(std::max<int64_t>(a.n_kv_heads, 1)) / tp);
      const double v_dim = d(a.v_head_dim > 0 ? a.v_head_dim : a.head_dim);
      const GemmNK proj[] = {{(q_heads + 2 * kv_heads) * d(a.head_dim), h}, {h, q_heads * v_dim}};
      add(d(g.count), proj, 2, gemms_shape_efficiency(projection_rows, proj, 2, sms, proj_p), pf, ps);
    }
    if (g.ffn.kind == FfnKind::dense && g.ffn.d_ff > 0) {
      const double width = d(g.ffn.d_ff) / tp_ffn;
      const GemmNK mlp[] = {{(g.ffn.gated ? 2.0 : 1.0) * width, h}, {h, width}};
      add(d(g.count), mlp, 2, gemms_shape_efficiency(ffn_rows, mlp, 2, sms, ffn_p), ff, fs);
    }
  }
  if (ps > 0) r.projections = pf / ps;
  if (fs > 0) r.ffn = ff / fs;
  if (dep.model.vocab_size > 0 && h > 0) {
    const GemmNK head[] = {{d(dep.model.vocab_size) / tp, h}};
    r.head = gemms_shape_efficiency(head_rows, head, 1, sms, class_of(dep.weights.embedding, chip));
  }
  return r;
}

}  // namespace

}  // namespace chalk::detail
