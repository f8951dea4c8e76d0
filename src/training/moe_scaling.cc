// The MoE trade (moe_scaling.h; docs/training-runs.md, "The MoE trade").
#include "chalk/training/moe_scaling.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "chalk/base/error.h"

namespace chalk {
namespace {

std::string moe_num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

constexpr const char* kClark = "Clark et al. 2022, Unified Scaling Laws for Routed Language Models (arXiv 2202.01169), Eq. 1, Table 3";
constexpr const char* kKrajewski = "Krajewski et al. 2024, Scaling Laws for Fine-Grained Mixture of Experts (arXiv 2402.07871), Eq. 9, Table 1";

void check_params(double n) {
  if (!(n > 0) || !std::isfinite(n)) throw InputError("params", "must be a positive parameter count, got " + moe_num(n));
}

void check_experts(double e) {
  if (!(e >= 1) || !std::isfinite(e)) throw InputError("experts", "must be >= 1 expert (1 = dense), got " + moe_num(e));
}

void check_share(double s) {
  if (!(s > 0 && s <= 1)) throw InputError("expert_share", "must be a fraction in (0, 1] of a layer's parameters, got " + moe_num(s));
}

}  // namespace

RoutedFit clark_sbase_fit() { return {"s-base", -0.082, -0.108, 0.009, 1.104, 1.847, 314.478, kClark, 937e9}; }
RoutedFit clark_rlr_fit() { return {"rl-r", -0.083, -0.126, 0.012, 1.111, 1.880, 469.982, kClark, 85e9}; }
RoutedFit clark_hash_fit() { return {"hash", -0.087, -0.136, 0.012, 1.157, 4.175, 477.741, kClark, 83e9}; }
std::vector<RoutedFit> clark_fits() { return {clark_sbase_fit(), clark_rlr_fit(), clark_hash_fit()}; }

RoutedFit parse_routed_fit(std::string_view name, const std::string& field) {
  for (const auto& f : clark_fits()) {
    if (name == f.name) return f;
  }
  throw InputError(field, "unknown routing technique '" + std::string(name) + "' (expected s-base, rl-r or hash)");
}

double saturated_experts(const RoutedFit& f, double experts) {
  check_experts(experts);
  const double shift = 1.0 / (1.0 / f.e_start - 1.0 / f.e_max);
  return 1.0 / (1.0 / (experts - 1.0 + shift) + 1.0 / f.e_max);
}

double routed_loss(const RoutedFit& f, double params, double experts) {
  check_params(params);
  const double ln = std::log10(params), le = std::log10(saturated_experts(f, experts));
  return std::pow(10.0, f.a * ln + f.b * le + f.c * ln * le + f.d);
}

double effective_params(const RoutedFit& f, double params, double experts) {
  check_params(params);
  const double ln = std::log10(params), le = std::log10(saturated_experts(f, experts));
  const double le1 = std::log10(saturated_experts(f, 1.0));
  return std::pow(10.0, (f.a * ln + f.b * (le - le1) + f.c * ln * le) / (f.a + f.c * le1));
}

double routing_cutoff(const RoutedFit& f) { return std::pow(10.0, -f.b / f.c); }

FineGrainedFit krajewski_moe_fit() { return {"moe", 18.1, 0.115, 30.8, 0.147, 2.1, 0.58, 0.47, kKrajewski}; }
FineGrainedFit krajewski_dense_fit() { return {"dense", 16.3, 0.126, 26.7, 0.127, 0.0, 0.0, 0.47, kKrajewski}; }

double fine_grained_loss(const FineGrainedFit& f, double params, double tokens, double granularity) {
  check_params(params);
  if (!(tokens > 0) || !std::isfinite(tokens)) throw InputError("tokens", "must be a positive token count, got " + moe_num(tokens));
  if (!(granularity >= 1) || !std::isfinite(granularity)) throw InputError("granularity", "must be >= 1, got " + moe_num(granularity));
  const double g_term = f.g > 0 ? f.g / std::pow(granularity, f.gamma) : 0.0;
  return f.c + (g_term + f.a) / std::pow(params, f.alpha) + f.b / std::pow(tokens, f.beta);
}

FineGrainedOptimum fine_grained_optimum(const FineGrainedFit& f, double flops, double granularity, double active_ratio) {
  if (!(flops > 0) || !std::isfinite(flops)) throw InputError("flops", "must be a positive FLOP count, got " + moe_num(flops));
  auto loss_at = [&](double ln_n) {
    const double n = std::exp(ln_n);
    return fine_grained_loss(f, n, flops / (6.0 * n / active_ratio), granularity);
  };
  // The loss is unimodal in log N along C = 6 N_active D: a grid, then golden-section refinement.
  const double lo = std::log(1e6), hi = std::log(1e15), step = 1e-2;
  double best = lo;
  for (double x = lo; x <= hi; x += step) {
    if (loss_at(x) < loss_at(best)) best = x;
  }
  double a = best - step, b = best + step;
  const double r = (std::sqrt(5.0) - 1) / 2;
  while (b - a > 1e-6) {
    const double x1 = b - r * (b - a), x2 = a + r * (b - a);
    if (loss_at(x1) < loss_at(x2)) {
      b = x2;
    } else {
      a = x1;
    }
  }
  FineGrainedOptimum o;
  o.params = std::exp((a + b) / 2);
  o.active_params = o.params / active_ratio;
  o.tokens = flops / (6.0 * o.active_params);
  o.loss = fine_grained_loss(f, o.params, o.tokens, granularity);
  return o;
}

double dense_compute_multiplier(double flops, double granularity, double expert_share) {
  check_share(expert_share);
  // Total / active parameters with E = 64 experts, G active: 1 + 63 x share, as krajewski_trade.
  const double target = fine_grained_optimum(krajewski_moe_fit(), flops, granularity, 1.0 + 63.0 * expert_share).loss;
  const FineGrainedFit dense = krajewski_dense_fit();
  // The dense optimum's loss falls with its compute: bisect log C.
  double lo = std::log(flops) - 10, hi = std::log(flops) + 30;
  for (int i = 0; i < 200 && hi - lo > 1e-9; ++i) {
    const double mid = (lo + hi) / 2;
    (fine_grained_optimum(dense, std::exp(mid), 1.0, 1.0).loss > target ? lo : hi) = mid;
  }
  return std::exp((lo + hi) / 2) / flops;
}

MoeTrade clark_trade(const RoutedFit& f, double active_params, double experts, double expert_share) {
  check_share(expert_share);
  MoeTrade t;
  t.active_params = active_params;
  t.experts = experts;
  t.loss = routed_loss(f, active_params, experts);
  t.total_params = active_params * (1.0 + (experts - 1.0) * expert_share);
  t.dense_equivalent = effective_params(f, active_params, experts);
  t.compute_ratio = t.dense_equivalent / active_params;
  t.param_ratio = t.total_params / t.dense_equivalent;
  return t;
}

MoeTrade krajewski_trade(double active_params, double tokens, double granularity, double expert_share) {
  check_share(expert_share);
  check_params(active_params);
  MoeTrade t;
  t.active_params = active_params;
  t.experts = 64.0 * granularity;
  t.total_params = active_params * (1.0 + 63.0 * expert_share);
  t.loss = fine_grained_loss(krajewski_moe_fit(), t.total_params, tokens, granularity);
  const FineGrainedFit dense = krajewski_dense_fit();
  const double room = t.loss - dense.c - dense.b / std::pow(tokens, dense.beta);
  t.dense_equivalent = room > 0 ? std::pow(dense.a / room, 1.0 / dense.alpha) : std::numeric_limits<double>::infinity();
  t.compute_ratio = t.dense_equivalent / active_params;
  t.param_ratio = t.total_params / t.dense_equivalent;
  return t;
}

}  // namespace chalk
