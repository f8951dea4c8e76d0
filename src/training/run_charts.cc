// The data of `chalk train plot run` (run_charts.h).
#include "chalk/training/run_charts.h"

#include <cmath>
#include <cstdio>

#include "chalk/base/error.h"

namespace chalk {
namespace {

std::string chart_num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

std::vector<double> log_spaced(double lo, double hi, int count) {
  if (!(lo > 0 && hi > lo && std::isfinite(hi)) || count < 2) {
    throw InputError("over_training_factor", "expected 0 < low < high and 2 or more points, got " + chart_num(lo) + " to " + chart_num(hi));
  }
  std::vector<double> out;
  out.reserve(static_cast<size_t>(count));
  const double a = std::log(lo), step = (std::log(hi) - a) / (count - 1);
  for (int i = 0; i < count; ++i) out.push_back(i == count - 1 ? hi : std::exp(a + step * i));
  return out;
}

std::vector<CostShare> cost_shares(const Equilibrium& e, const std::vector<double>& factors) {
  if (!(e.chinchilla_tokens > 0) || !(e.serving_chip_seconds > 0) || !(e.training_chip_seconds_per_token > 0)) {
    throw InputError("equilibrium", "needs positive Chinchilla tokens, serving cost and training cost per token");
  }
  std::vector<CostShare> out;
  out.reserve(factors.size());
  for (double k : factors) {
    if (!(k > 0) || !std::isfinite(k)) throw InputError("over_training_factor", "must be > 0, got " + chart_num(k));
    CostShare c;
    c.over_training_factor = k;
    c.pretraining_tokens = k * e.chinchilla_tokens;
    const double pre = c.pretraining_tokens * e.training_chip_seconds_per_token;
    const double total = pre + e.rl_chip_seconds + e.serving_chip_seconds;
    c.pretraining = pre / total;
    c.rl = e.rl_chip_seconds / total;
    c.serving = e.serving_chip_seconds / total;
    out.push_back(c);
  }
  return out;
}

std::vector<IsoLossPoint> iso_loss_curve(const ParametricFit& f, double loss, double n_lo, double n_hi, int count) {
  if (!(loss > f.E) || !std::isfinite(loss)) {
    throw InputError("loss", "must exceed the fit's irreducible loss E = " + chart_num(f.E) + ", got " + chart_num(loss));
  }
  if (!(n_lo > 0 && n_hi > n_lo && std::isfinite(n_hi)) || count < 2) {
    throw InputError("params", "expected 0 < low < high and 2 or more points, got " + chart_num(n_lo) + " to " + chart_num(n_hi));
  }
  std::vector<IsoLossPoint> out;
  const double a = std::log(n_lo), step = (std::log(n_hi) - a) / (count - 1);
  for (int i = 0; i < count; ++i) {
    const double n = std::exp(a + step * i);
    const double room = loss - f.E - f.A / std::pow(n, f.alpha);
    if (!(room > 0)) continue;
    IsoLossPoint p;
    p.loss = loss;
    p.params = n;
    p.tokens = std::pow(f.B / room, 1.0 / f.beta);
    p.flops = 6 * n * p.tokens;
    out.push_back(p);
  }
  return out;
}

}  // namespace chalk
