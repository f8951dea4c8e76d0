#include "chalk/moe.h"

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
  // P(X < j) accumulated term by term: P(X = i) = e^-l l^i / i!.
  double term = std::exp(-lambda), cdf = 0, sum = 0;
  const int max_j = static_cast<int>(std::ceil(cap));
  for (int j = 1; j <= max_j; ++j) {
    cdf += term;  // now P(X <= j-1) = P(X < j)
    term *= lambda / j;
    const double p_max_at_least_j = 1.0 - std::pow(std::min(cdf, 1.0), bins);
    const double weight = std::min(1.0, cap - (j - 1));  // fractional last unit of capacity
    sum += weight * p_max_at_least_j;
    if (p_max_at_least_j < 1e-12 && j > lambda) break;
  }
  return std::max(sum, std::min(lambda, cap));
}

double experts_on_busiest_chip(double n_experts, double touched, double n_chips) {
  if (touched <= 0 || n_experts <= 0) return 0;
  if (n_chips >= n_experts) return n_experts / n_chips;  // a slice of one expert per chip
  return expected_max_load(touched, n_chips, n_experts / n_chips);
}

}  // namespace chalk
