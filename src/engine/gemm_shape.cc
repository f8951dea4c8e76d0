// GEMM efficiency by shape (gemm_shape.h; docs/formulas.md, "GEMM efficiency by shape").
#include "chalk/engine/gemm_shape.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

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

namespace {

/// Results of a pure function of (whole rows m, a shape) kept per thread: the serving GEMM
/// efficiencies depend on max(1, ceil(m)) only (serving_gemm_efficiency_uncached rounds m
/// first), and a simulation prices millions of steps at a few thousand row counts over the
/// few shapes of one deployment (a layer's projections, FFN, LM head). Each of up to 16
/// shapes (the oldest replaced) holds a table indexed by the whole rows, up to kRows.
/// `Key` compares with ==; a stored -1 is "not yet computed" (the values are fractions).
template <class Key>
class RowMemo {
 public:
  static constexpr double kRows = 65536;  // 512 KiB of doubles a shape at most
  /// The slot of (key, rows), rows = max(1, ceil(m)) <= kRows: < 0 until set.
  double& at(const Key& key, double rows) {
    std::size_t found = shapes_.size();
    for (std::size_t j = 0; j < shapes_.size(); ++j) {
      const std::size_t i = (last_ + j) % shapes_.size();
      if (shapes_[i].used && shapes_[i].key == key) {
        found = i;
        break;
      }
    }
    if (found == shapes_.size()) {
      found = victim_;
      victim_ = (victim_ + 1) % shapes_.size();
      shapes_[found].used = true;
      shapes_[found].key = key;
      shapes_[found].by_rows.clear();
    }
    last_ = found;
    std::vector<double>& v = shapes_[found].by_rows;
    const auto row = static_cast<std::size_t>(rows);
    if (row >= v.size()) v.resize(std::max(row + 1, std::min(2 * v.size(), static_cast<std::size_t>(kRows) + 1)), -1.0);
    return v[row];
  }

 private:
  struct Shape {
    bool used = false;
    Key key{};
    std::vector<double> by_rows;
  };
  std::array<Shape, 16> shapes_;
  std::size_t last_ = 0, victim_ = 0;
};

/// One GEMM's shape beside m: serving_gemm_efficiency's key.
struct GemmKey {
  double n = 0, k = 0;
  int64_t sms = 0;
  MatmulPrecision p = MatmulPrecision::bf16;
  bool operator==(const GemmKey&) const = default;
};

/// Up to four GEMMs sharing m: gemms_shape_efficiency's key (more go uncached).
struct GemmsKey {
  std::array<GemmNK, 4> gemms{};
  int count = 0;
  int64_t sms = 0;
  MatmulPrecision p = MatmulPrecision::bf16;
  bool operator==(const GemmsKey& o) const {
    if (count != o.count || sms != o.sms || p != o.p) return false;
    for (int i = 0; i < count; ++i) {
      if (gemms[i].n != o.gemms[i].n || gemms[i].k != o.gemms[i].k) return false;
    }
    return true;
  }
};

double gemms_shape_efficiency_uncached(double m, const GemmNK* gemms, int count, int64_t sm_count, MatmulPrecision p) {
  double flops = 0, spent = 0;  // sum of n k, and of n k / efficiency (m is common)
  for (int i = 0; i < count; ++i) {
    const double w = gemms[i].n * gemms[i].k;
    if (w <= 0) continue;
    flops += w;
    spent += w / serving_gemm_efficiency(m, gemms[i].n, gemms[i].k, sm_count, p);
  }
  return spent > 0 ? flops / spent : 1.0;
}

}  // namespace

double serving_gemm_efficiency(double m, double n, double k, int64_t sm_count, MatmulPrecision p) {
  if (sm_count <= 0) return 1;
  m = std::max(1.0, std::ceil(m));
  n = std::max(1.0, std::ceil(n));
  k = std::max(1.0, std::ceil(k));
  if (m > RowMemo<GemmKey>::kRows) return serving_gemm_efficiency_uncached(m, n, k, sm_count, p);
  static thread_local RowMemo<GemmKey> memo;
  double& slot = memo.at(GemmKey{n, k, sm_count, p}, m);
  if (slot < 0) slot = serving_gemm_efficiency_uncached(m, n, k, sm_count, p);
  return slot;
}

double gemms_shape_efficiency(double m, const GemmNK* gemms, int count, int64_t sm_count, MatmulPrecision p) {
  if (sm_count <= 0 || count <= 0) return 1;
  // Depends on m through serving_gemm_efficiency alone: on max(1, ceil(m)).
  const double rows = std::max(1.0, std::ceil(m));
  if (count > 4 || rows > RowMemo<GemmsKey>::kRows) return gemms_shape_efficiency_uncached(m, gemms, count, sm_count, p);
  GemmsKey key;
  for (int i = 0; i < count; ++i) key.gemms[static_cast<std::size_t>(i)] = gemms[i];
  key.count = count;
  key.sms = sm_count;
  key.p = p;
  static thread_local RowMemo<GemmsKey> memo;
  double& slot = memo.at(key, rows);
  if (slot < 0) slot = gemms_shape_efficiency_uncached(m, gemms, count, sm_count, p);
  return slot;
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
