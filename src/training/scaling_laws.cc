// Chinchilla allocations, losses and over-training (scaling_laws.h; docs/training-runs.md).
#include "chalk/training/scaling_laws.h"

#include <cmath>

#include <sstream>

#include "chalk/base/error.h"

namespace chalk {
namespace {

std::string law_num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

void law_require_positive(double v, const char* field, const char* what) {
  if (!(v > 0) || !std::isfinite(v)) throw InputError(field, std::string("must be a positive ") + what + ", got " + law_num(v));
}

// Chinchilla itself (Hoffmann section 4.1): 70B parameters on 1.4T tokens, the paper's
// compute-optimal model for Gopher's budget; the anchor of the Approach 1/2 power laws.
constexpr double kChinchillaParams = 70e9;
constexpr double kChinchillaTokens = 1.4e12;
constexpr double kChinchillaFlops = 6 * kChinchillaParams * kChinchillaTokens;

double power_law_exponent(ChinchillaMethod m) { return m == ChinchillaMethod::approach1 ? 0.50 : 0.49; }

Allocation make_allocation(double n, double d) { return {n, d, 6 * n * d, d / n}; }

double frontier_g(const ParametricFit& f) {
  return std::pow(f.alpha * f.A / (f.beta * f.B), 1.0 / (f.alpha + f.beta));
}

}  // namespace

ParametricFit hoffmann_printed_fit() {
  return {"approach3", 1.69, 406.4, 410.7, 0.34, 0.28, "Hoffmann et al. 2022 (arXiv 2203.15556) App. D.2, as printed"};
}
ParametricFit hoffmann_tex_fit() {
  return {"approach3-tex", 1.6934, 406.4, 410.7, 0.3392, 0.2849,
          "Hoffmann et al. 2022 unrounded (TeX source), as quoted by Besiroglu et al. 2024"};
}
ParametricFit epoch_fit() {
  return {"epoch", 1.8172, 482.01, 2085.43, 0.3478, 0.3658, "Besiroglu et al. 2024 (arXiv 2404.10102) refit"};
}

double predicted_loss(const ParametricFit& f, double params, double tokens) {
  law_require_positive(params, "params", "parameter count");
  law_require_positive(tokens, "tokens", "token count");
  return f.E + f.A / std::pow(params, f.alpha) + f.B / std::pow(tokens, f.beta);
}

Allocation optimal_allocation(const ParametricFit& f, double flops) {
  law_require_positive(flops, "flops", "training FLOP budget");
  const double g = frontier_g(f);
  const double c6 = flops / 6;
  const double n = g * std::pow(c6, f.beta / (f.alpha + f.beta));
  const double d = std::pow(c6, f.alpha / (f.alpha + f.beta)) / g;
  return make_allocation(n, d);
}

ChinchillaMethod parse_chinchilla_method(std::string_view name, const std::string& field) {
  for (ChinchillaMethod m : all_chinchilla_methods())
    if (to_string(m) == name) return m;
  throw InputError(field, "unknown Chinchilla method '" + std::string(name) +
                              "', expected one of approach1, approach2, approach3, approach3-tex, epoch, 20x");
}

std::string_view to_string(ChinchillaMethod m) {
  switch (m) {
    case ChinchillaMethod::approach1: return "approach1";
    case ChinchillaMethod::approach2: return "approach2";
    case ChinchillaMethod::approach3: return "approach3";
    case ChinchillaMethod::approach3_tex: return "approach3-tex";
    case ChinchillaMethod::epoch: return "epoch";
    case ChinchillaMethod::tokens_per_param_20: return "20x";
  }
  return "?";
}

std::string_view source_of(ChinchillaMethod m) {
  switch (m) {
    case ChinchillaMethod::approach1:
      return "Hoffmann et al. 2022 Table 2 (a = 0.50), anchored at Chinchilla 70B / 1.4T";
    case ChinchillaMethod::approach2:
      return "Hoffmann et al. 2022 Table 2 (a = 0.49), anchored at Chinchilla 70B / 1.4T";
    case ChinchillaMethod::approach3: return "Hoffmann et al. 2022 App. D.2 parametric fit, as printed";
    case ChinchillaMethod::approach3_tex: return "Hoffmann et al. 2022 parametric fit, unrounded (Besiroglu et al. 2024)";
    case ChinchillaMethod::epoch: return "Besiroglu et al. 2024 (arXiv 2404.10102) parametric refit";
    case ChinchillaMethod::tokens_per_param_20: return "20 tokens per parameter (Hoffmann et al. 2022 Table 3)";
  }
  return "?";
}

std::vector<ChinchillaMethod> all_chinchilla_methods() {
  return {ChinchillaMethod::approach1, ChinchillaMethod::approach2, ChinchillaMethod::approach3,
          ChinchillaMethod::approach3_tex, ChinchillaMethod::epoch, ChinchillaMethod::tokens_per_param_20};
}

ParametricFit loss_fit_for(ChinchillaMethod m) {
  switch (m) {
    case ChinchillaMethod::approach3: return hoffmann_printed_fit();
    case ChinchillaMethod::approach3_tex: return hoffmann_tex_fit();
    default: return epoch_fit();
  }
}

Allocation chinchilla_optimal(ChinchillaMethod m, double flops) {
  law_require_positive(flops, "flops", "training FLOP budget");
  switch (m) {
    case ChinchillaMethod::approach1:
    case ChinchillaMethod::approach2: {
      const double n = kChinchillaParams * std::pow(flops / kChinchillaFlops, power_law_exponent(m));
      return make_allocation(n, flops / (6 * n));
    }
    case ChinchillaMethod::tokens_per_param_20: {
      const double n = std::sqrt(flops / 120);
      return make_allocation(n, 20 * n);
    }
    default: return optimal_allocation(loss_fit_for(m), flops);
  }
}

double optimal_tokens_for_params(ChinchillaMethod m, double params) {
  law_require_positive(params, "params", "parameter count");
  switch (m) {
    case ChinchillaMethod::approach1:
    case ChinchillaMethod::approach2: {
      // N = N_c (C / C_c)^a  =>  C = C_c (N / N_c)^(1/a).
      const double c = kChinchillaFlops * std::pow(params / kChinchillaParams, 1 / power_law_exponent(m));
      return c / (6 * params);
    }
    case ChinchillaMethod::tokens_per_param_20: return 20 * params;
    default: {
      // N = G (C/6)^(beta/(alpha+beta))  =>  C/6 = (N/G)^((alpha+beta)/beta), D = (C/6) / N.
      const ParametricFit f = loss_fit_for(m);
      const double c6 = std::pow(params / frontier_g(f), (f.alpha + f.beta) / f.beta);
      return c6 / params;
    }
  }
}

OverTraining over_training(ChinchillaMethod method, const ParametricFit& fit, double params, double tokens) {
  OverTraining o;
  o.params = params;
  o.tokens = tokens;
  o.loss = predicted_loss(fit, params, tokens);  // validates both
  o.flops = 6 * params * tokens;
  o.optimal_tokens = optimal_tokens_for_params(method, params);
  o.factor = tokens / o.optimal_tokens;
  // The frontier's loss falls monotonically with C: bisect log C for L_frontier(C) = L.
  double lo = std::log(1e-6 * o.flops), hi = std::log(o.flops);
  auto frontier_loss = [&](double log_c) {
    const Allocation a = optimal_allocation(fit, std::exp(log_c));
    return predicted_loss(fit, a.params, a.tokens);
  };
  if (frontier_loss(lo) < o.loss) lo = std::log(1e-30 * o.flops);  // extremely under-sized runs
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (frontier_loss(mid) > o.loss ? lo : hi) = mid;
  }
  o.iso_loss_optimal = optimal_allocation(fit, std::exp(hi));
  o.wasted_flops = std::max(0.0, o.flops - o.iso_loss_optimal.flops);
  o.wasted_fraction = o.wasted_flops / o.flops;
  return o;
}

Allocation inference_aware_optimal(const ParametricFit& f, double loss, double inference_tokens) {
  if (!(loss > f.E) || !std::isfinite(loss))
    throw InputError("loss", "must exceed the fit's irreducible loss E = " + law_num(f.E) + ", got " + law_num(loss));
  if (!(inference_tokens >= 0) || !std::isfinite(inference_tokens))
    throw InputError("inference_tokens", "must be >= 0 tokens, got " + law_num(inference_tokens));
  // Below N_min = (A / (loss - E))^(1/alpha) no amount of data reaches the loss.
  const double log_n_min = std::log(f.A / (loss - f.E)) / f.alpha;
  auto tokens_at = [&](double log_n) {
    const double gap = loss - f.E - f.A * std::exp(-f.alpha * log_n);
    return std::pow(f.B / gap, 1 / f.beta);
  };
  auto lifetime = [&](double log_n) {
    const double n = std::exp(log_n);
    return std::log(6 * n * tokens_at(log_n) + 2 * n * inference_tokens);
  };
  // The lifetime cost is infinite at N_min and grows as N^1 far above it: scan 40 e-folds.
  const int steps = 4000;
  const double lo = log_n_min + 1e-9, span = 40;
  int best = 0;
  double best_cost = lifetime(lo);
  for (int i = 1; i <= steps; ++i) {
    const double c = lifetime(lo + span * i / steps);
    if (c < best_cost) best_cost = c, best = i;
  }
  double a = lo + span * std::max(0, best - 1) / steps, b = lo + span * std::min(steps, best + 1) / steps;
  const double phi = (std::sqrt(5.0) - 1) / 2;
  for (int i = 0; i < 200; ++i) {
    const double x1 = b - phi * (b - a), x2 = a + phi * (b - a);
    (lifetime(x1) < lifetime(x2) ? b : a) = (lifetime(x1) < lifetime(x2) ? x2 : x1);
  }
  const double log_n = 0.5 * (a + b);
  return make_allocation(std::exp(log_n), tokens_at(log_n));
}

}  // namespace chalk
