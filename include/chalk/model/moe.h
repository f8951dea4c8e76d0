// Routing statistics of a mixture-of-experts layer under uniform, independent top-k
// routing (training-and-systems.md section 6.3). Learned routers are more skewed, so
// these are lower bounds on imbalance.
#pragma once

namespace chalk {

/// Expected distinct routed experts that `tokens` tokens touch in one layer with
/// `n_experts` experts and `top_k` per token: E (1 - (1 - k/E)^tokens) (DESIGN.md 1).
double expected_experts_touched(double n_experts, double top_k, double tokens);

/// Expected largest load among `bins` bins when `balls` balls fall uniformly at random,
/// capped at `cap` per bin: E[max] = sum_{j=1..cap} P(max >= j), with P(max >= 1) = 1,
/// P(max >= 2) the birthday bound 1 - exp(-m (m-1) / 2n), and for j >= 3 bins taken as
/// independent Poisson(m / n) counts (cf. Raab and Steger 1998). Monte Carlo: 8 balls
/// in 8 bins 2.56 (this: 2.63); 1 in 64: 1.0; 8 in 72 (cap 3.5): 1.27 (this: 1.35).
double expected_max_load(double balls, double bins, double cap);

/// Routed experts the busiest chip reads in one MoE layer when `n_chips` chips hold
/// `n_experts` experts evenly (expert parallelism) and `touched` distinct experts are
/// needed: the expected maximum of `touched` balls in min(n_chips, E) bins, capped at
/// E / n_chips; with more chips than experts each expert is split over n_chips / E
/// chips, so a chip reads E / n_chips of one expert.
double experts_on_busiest_chip(double n_experts, double touched, double n_chips);

}  // namespace chalk
