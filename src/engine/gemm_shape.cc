// GEMM efficiency by shape (gemm_shape.h; docs/formulas.md, "GEMM efficiency by shape").
#include "chalk/engine/gemm_shape.h"

#include <algorithm>
#include <cmath>

namespace chalk {

GemmTile gemm_tile(int index, MatmulPrecision p) {
  // 128 bytes of K per stage for each operand.
  const int64_t k = p == MatmulPrecision::bf16 ? 64 : p == MatmulPrecision::fp4 ? 256 : 128;
  switch (index) {
    case 0: return {128, 128, k};
    case 1: return {128, 256, k};
    default: return {256, 128, k};
  }
}

double gemm_shape_efficiency(double m, double n, double k, double groups, int64_t sm_count, MatmulPrecision p) {
  if (sm_count <= 0) return 1;
  m = std::max(1.0, std::ceil(m));
  n = std::max(1.0, std::ceil(n));
  k = std::max(1.0, std::ceil(k));
  groups = std::max(1.0, std::ceil(groups));
  const double sms = static_cast<double>(sm_count);
  double best = 0;
  for (int i = 0; i < kGemmTiles; ++i) {
    const GemmTile t = gemm_tile(i, p);
    const double tm = static_cast<double>(t.m), tn = static_cast<double>(t.n), tk = static_cast<double>(t.k);
    const double tiles = groups * std::ceil(m / tm) * std::ceil(n / tn);
    const double waves = std::ceil(tiles / sms);
    const double spent = waves * sms * tm * tn * std::ceil(k / tk) * tk;  // multiply-adds the SMs' waves cost
    best = std::max(best, groups * m * n * k / spent);
  }
  return std::min(1.0, best);
}

double grouped_gemm_reduction_efficiency(double k, MatmulPrecision p) {
  k = std::max(1.0, k);
  const double fixed = kGroupedTileFixedK * static_cast<double>(gemm_tile(0, p).k) / static_cast<double>(gemm_tile(0, MatmulPrecision::bf16).k);
  return k / (k + fixed);
}

double routed_expert_grouped_efficiency(double d_model, double d_ff_per_chip, bool gated, MatmulPrecision p) {
  const double up = gated ? 2.0 / 3.0 : 0.5;  // the gate/up GEMM's share of the expert's FLOPs
  return 1.0 / (up / grouped_gemm_reduction_efficiency(d_model, p) + (1.0 - up) / grouped_gemm_reduction_efficiency(d_ff_per_chip, p));
}

}  // namespace chalk
