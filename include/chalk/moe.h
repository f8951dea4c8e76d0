// Routing statistics of a mixture-of-experts layer under uniform, independent top-k
// routing (training-and-systems.md section 6.3). Learned routers are more skewed, so
// these are lower bounds on imbalance.
#pragma once

namespace chalk {

/// Expected distinct routed experts that `tokens` tokens touch in one layer with
/// `n_experts` experts and `top_k` per token: E (1 - (1 - k/E)^tokens) (DESIGN.md 1).
double expected_experts_touched(double n_experts, double top_k, double tokens);

/// Expected largest load among `bins` bins when `balls` balls fall uniformly at random,
/// capped at `cap` per bin: E[max] = sum_{j=1..cap} (1 - P(X < j)^bins) with
/// X ~ Poisson(balls / bins) (Poissonization; cf. Raab and Steger 1998). 8 balls in 8
/// bins gives about 2.3; balls >> bins approaches balls / bins.
double expected_max_load(double balls, double bins, double cap);

/// Routed experts the busiest chip reads in one MoE layer when `n_chips` chips hold
/// `n_experts` experts evenly (expert parallelism) and `touched` distinct experts are
/// needed: the expected maximum of `touched` balls in min(n_chips, E) bins, capped at
/// E / n_chips; with more chips than experts each expert is split over n_chips / E
/// chips, so a chip reads E / n_chips of one expert.
double experts_on_busiest_chip(double n_experts, double touched, double n_chips);

}  // namespace chalk
