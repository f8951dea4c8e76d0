// GEMM efficiency by shape (gemm_shape.h; docs/formulas.md, "GEMM efficiency by shape").
#include "chalk/engine/gemm_shape.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

namespace chalk {

GemmTile gemm_tile(int index, MatmulPrecision p) {
  // 128 bytes of K per stage for each operand.
  const int64_t k = p == MatmulPrecision::bf16 ? 64 : p == MatmulPrecision::fp4 ? 256 : 128;
  switch (index) {
    case 0: return {128, 128, k};
    case 1: return {128, 256, k};
    case 2: return {256, 128, k};
    case 3: return {64, 128, k};
    default: return {64, 256, k};
  }
}

double gemm_shape_efficiency(double m, double n, double k, double groups, int64_t sm_count, MatmulPrecision p, int tiles) {
  if (sm_count <= 0) return 1;
  m = std::max(1.0, std::ceil(m));
  n = std::max(1.0, std::ceil(n));
  k = std::max(1.0, std::ceil(k));
  groups = std::max(1.0, std::ceil(groups));
  const double sms = static_cast<double>(sm_count);
  double best = 0;
  for (int i = 0; i < tiles; ++i) {
    const GemmTile t = gemm_tile(i, p);
    const double tm = static_cast<double>(t.m), tn = static_cast<double>(t.n), tk = static_cast<double>(t.k);
    const double tiles = groups * std::ceil(m / tm) * std::ceil(n / tn);
    const double waves = std::ceil(tiles / sms);
    const double spent = waves * sms * tm * tn * std::ceil(k / tk) * tk;  // multiply-adds the SMs' waves cost
    best = std::max(best, groups * m * n * k / spent);
  }
  return std::min(1.0, best);
}

namespace {

double serving_gemm_efficiency_uncached(double m, double n, double k, int64_t sm_count, MatmulPrecision p) {
  m = std::max(1.0, std::ceil(m));
  n = std::max(1.0, std::ceil(n));
  k = std::max(1.0, std::ceil(k));
  const double sms = static_cast<double>(sm_count);
  double best = gemm_shape_efficiency(m, n, k, 1, sm_count, p, kServingGemmTiles);
  for (int i = 0; i < kServingGemmTiles; ++i) {
    const GemmTile t = gemm_tile(i, p);
    const double tm = static_cast<double>(t.m), tn = static_cast<double>(t.n), tk = static_cast<double>(t.k);
    const double tiles = std::ceil(m / tm) * std::ceil(n / tn), stages = std::ceil(k / tk);
    // Split K over the idle SMs of a single under-filled wave: s slices of ceil(stages / s).
    const double s = std::min(stages, std::floor(sms / tiles));
    if (s < 2) continue;
    const double spent = std::ceil(tiles * s / sms) * sms * tm * tn * std::ceil(stages / s) * tk;
    best = std::max(best, m * n * k / spent);
  }
  return std::min(1.0, best);
}

}  // namespace

// A simulation prices hundreds of thousands of steps at a few hundred distinct row counts:
// each thread keeps recent results in a small table, keyed by every argument (a pure function).
double serving_gemm_efficiency(double m, double n, double k, int64_t sm_count, MatmulPrecision p) {
  if (sm_count <= 0) return 1;
  struct Entry {
    double m = -1, n = -1, k = -1;
    int64_t sms = -1;
    MatmulPrecision p = MatmulPrecision::bf16;
    double value = 1;
  };
  // 4,096 entries (192 KiB): a step's row count takes thousands of values (every chunk and
  // decode mix up to the token budget) for each of a layer's few GEMM shapes; 256 entries
  // missed most lookups of a day's simulation (38% of its time in this function).
  static thread_local std::array<Entry, 4096> table;
  const auto bits = [](double x) { return static_cast<uint64_t>(std::clamp(x, 0.0, 1e15)); };
  const uint64_t h = (bits(m) * 0x9E3779B97F4A7C15ull) ^ (bits(n) * 0xC2B2AE3D27D4EB4Full) ^ (bits(k) * 0x165667B19E3779F9ull) ^
                     static_cast<uint64_t>(sm_count) ^ (static_cast<uint64_t>(p) << 7);
  const auto slot = (h >> 40) & 4095u;
  Entry& e = table[slot];
  if (e.m == m && e.n == n && e.k == k && e.sms == sm_count && e.p == p) return e.value;
  const double v = serving_gemm_efficiency_uncached(m, n, k, sm_count, p);
  e = Entry{m, n, k, sm_count, p, v};
  return v;
}

double gemms_shape_efficiency(double m, const GemmNK* gemms, int count, int64_t sm_count, MatmulPrecision p) {
  if (sm_count <= 0 || count <= 0) return 1;
  double flops = 0, spent = 0;  // sum of n k, and of n k / efficiency (m is common)
  for (int i = 0; i < count; ++i) {
    const double w = gemms[i].n * gemms[i].k;
    if (w <= 0) continue;
    flops += w;
    spent += w / serving_gemm_efficiency(m, gemms[i].n, gemms[i].k, sm_count, p);
  }
  return spent > 0 ? flops / spent : 1.0;
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
