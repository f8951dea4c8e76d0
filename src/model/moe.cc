#include "chalk/model/moe.h"

#include <algorithm>
#include <cmath>

namespace chalk {

double expected_experts_touched(double n_experts, double top_k, double tokens) {
  if (n_experts <= 0 || tokens <= 0) return 0;
  if (top_k >= n_experts) return n_experts;
  return n_experts * (1.0 - std::pow(1.0 - top_k / n_experts, tokens));
}

double expected_max_load(double balls, double bins, double cap) {
  if (balls <= 0 || bins <= 0 || cap <= 0) return 0;
  if (bins <= 1) return std::min(balls, cap);
  const double lambda = balls / bins;
  // Heavy load: the Poisson sum cannot be evaluated (e^-lambda underflows past ~700) and
  // is not needed: E[max] ~ mu + sigma sqrt(2 ln n) (Raab and Steger 1998; the
  // training-and-systems.md 6.3 table: 1.29 x the mean at 128 per bin, Monte Carlo 1.26).
  if (lambda >= 64) return std::min(cap, lambda + std::sqrt(lambda * (1 - 1 / bins)) * std::sqrt(2 * std::log(bins)));
  // E[max] = sum_j P(max >= j). P(max >= 1) = 1 for any ball; P(max >= 2) is the
  // birthday bound 1 - exp(-m (m - 1) / (2 n)); from j = 3 on, bins are treated as
  // independent Poisson(m / n) counts (Poissonization is poor only for j <= 2 at m << n).
  double sum = std::min(1.0, cap) * std::min(1.0, balls);
  if (cap > 1) sum += std::min(1.0, cap - 1) * (1.0 - std::exp(-balls * std::max(balls - 1, 0.0) / (2 * bins)));
  double term = std::exp(-lambda);  // P(X = 0)
  double cdf = term;
  term *= lambda;  // P(X = 1)
  cdf += term;
  term *= lambda / 2;  // P(X = 2)
  cdf += term;         // P(X < 3)
  const int max_j = static_cast<int>(std::ceil(cap));
  for (int j = 3; j <= max_j; ++j) {
    const double p_max_at_least_j = 1.0 - std::pow(std::min(cdf, 1.0), bins);
    sum += std::min(1.0, cap - (j - 1)) * p_max_at_least_j;
    if (p_max_at_least_j < 1e-12 && j > lambda) break;
    term *= lambda / j;  // P(X = j)
    cdf += term;         // P(X < j + 1)
  }
  return std::max(sum, std::min(lambda, cap));
}

double experts_on_busiest_chip(double n_experts, double touched, double n_chips) {
  if (touched <= 0 || n_experts <= 0) return 0;
  if (n_chips >= n_experts) return n_experts / n_chips;  // a slice of one expert per chip
  if (touched >= n_experts * (1 - 1e-9)) return n_experts / n_chips;  // all touched: every chip reads all its own
  return expected_max_load(touched, n_chips, n_experts / n_chips);
}

}  // namespace chalk
