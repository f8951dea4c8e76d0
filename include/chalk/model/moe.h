// Routing statistics of a mixture-of-experts layer under uniform, independent top-k
// routing (training-and-systems.md section 6.3). Learned routers are more skewed, so
// these are lower bounds on imbalance.
#pragma once

#include <cstdint>

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

/// How one MoE layer routes a token: `top_k` of `n_experts`; with group-limited routing
/// (DeepSeek-V2 section 2.1.2 "device-limited routing", DeepSeek-V3 section 2.1.2 and HF's
/// `n_group` / `topk_group`) the experts form `n_group` equal groups of consecutive
/// experts, a token first picks `topk_group` groups and then its top_k experts among them.
struct ExpertRouting {
  int64_t n_experts = 0;
  int64_t top_k = 0;
  int64_t n_group = 1;     ///< 1 = no group limit
  int64_t topk_group = 1;  ///< groups a token may use (= n_group: no limit)
};

/// Routed experts (whole ones) the busiest of `n_chips` chips reads in one MoE layer when
/// `tokens` tokens are routed uniformly at random (expected over the routing).
///
/// Experts are whole: chip i holds the consecutive experts of a block of floor(E/c) or
/// ceil(E/c) (the first E mod c chips one more: vLLM's expert map), so once every expert
/// is touched the busiest chip reads ceil(E/c) (256 experts on 72 chips: 4, not 3.556).
/// With n_chips >= E each expert is split over the chips and a chip reads a slice, E/c.
///
/// Without a group limit the result is exact (to ~1e-13): the touched set S after T
/// tokens has an exact distribution of its size |S| (a Markov chain over tokens, each
/// token adding j new experts with the hypergeometric probability
/// C(E-t, j) C(t, k-j) / C(E, k)), and given |S| = t, S is a uniform t-subset (the experts
/// are exchangeable), so P(max over chips <= m | t) = [x^t] prod_i sum_{j<=m} C(b_i, j) x^j
/// / C(E, t) for blocks b_i. Then E[max] = sum_t P(|S| = t) sum_m P(max > m | t). The chain
/// runs until P(some expert untouched) <= E (1 - k/E)^T < 1e-15, beyond which the answer is
/// ceil(E/c); non-integer T interpolates linearly between the neighbouring integers. Each
/// (routing, chips) pair is computed once per thread and cached (tens of ms at most).
///
/// With a group limit (n_group > 1, topk_group < n_group) the number u of groups the
/// tokens touch is exact (the same chain over groups), and given u the touched experts are
/// taken as T tokens choosing top_k uniformly among the u groups' experts, over every
/// choice of the u groups (which sets the blocks the chips hold of them). This is exact at
/// one token and once every expert is touched, an approximation between (tokens are
/// confined to their own topk_group groups, not to the union), known to be low: DeepSeek-V3
/// on 8 chips gives 4.73 and 6.83 at 2 and 4 tokens against Monte Carlo 5.07 and 7.81
/// (ungrouped exact 4.07 and 6.57). At one token: the 8 experts fall in 4 groups, busiest
/// 3.486 (2.564 without the limit). With C(n_group, u) above 4096 for some u, the group limit is
/// ignored. Throws InputError when E, k, the groups or the chips are invalid or tokens < 0.
double busiest_chip_experts(const ExpertRouting& r, double tokens, int64_t n_chips);

}  // namespace chalk
