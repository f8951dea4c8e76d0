// The busiest expert-parallel rank under a learned router's skew (docs/formulas.md,
// "Expert imbalance"): per-expert popularity drawn from the distribution TensorRT-LLM
// measured for DeepSeek-R1, the multinomial noise of a finite step on top, and the
// residual imbalance after EPLB's redundant experts.
#pragma once

#include <cstdint>
#include <string>

#include "chalk/model/model.h"

namespace chalk {

/// How a deployment's experts sit against its router's skew.
enum class ExpertBalance {
  /// Every token picks its experts uniformly at random (balls into bins): the lower bound
  /// on imbalance, and SGLang's "simulated perfect EPLB". The default where a run does not
  /// say (`--eplb` unset, measurement column `eplb` empty).
  uniform,
  /// A learned router, experts placed in order with no rebalancing (`--eplb no`: vLLM,
  /// SGLang and TensorRT-LLM without their load balancers).
  learned,
  /// A learned router with EPLB's redundant experts placed from load statistics
  /// (`--eplb yes`: DeepSeek's EPLB, SGLang --enable-eplb, TensorRT-LLM's load_balancer).
  eplb,
};

/// "yes" -> eplb, "no" -> learned, "" -> uniform; anything else throws InputError naming
/// `field`.
ExpertBalance parse_expert_balance(const std::string& text, const std::string& field);

/// Throws InputError naming `field` when `balance` places experts (eplb or learned) on a
/// model with no routed-expert (MoE) layer: the placement would silently change nothing.
void check_expert_balance(const ModelSpec& m, ExpertBalance balance, const std::string& field);

/// Lognormal sigma of one expert's share of a step's routed tokens, one layer (the log of
/// the popularity is normal with this spread over the experts). Source: TensorRT-LLM tech
/// blog 4 ("Scaling Expert Parallelism in TensorRT-LLM, Part 1", Table 1, No EPLB row):
/// DeepSeek-R1 at EP32 on 32 GB200, machine-translation data, per expert slot mean 128
/// tokens, std 164.1, averaged over layers and iterations. Without the multinomial noise of
/// 128 tokens the spread is sqrt(1.2820^2 - 1/128) = 1.2790; sigma = 1.010 gives that
/// sample CV over 256 experts. Uncertainty: fitting the same row's hottest expert (11.948x
/// the mean) instead gives 1.046; the same row's busiest rank (2.564x the mean) is
/// predicted 2.38 (-7%) with 1.010, 2.48 with 1.046. One model, one dataset: applied to
/// other learned routers (Qwen3, gpt-oss, Mixtral) for want of their histograms.
inline constexpr double kLearnedRouterLogSigma = 1.010;

/// Coefficient of variation of the ranks' shares of routed tokens left after EPLB, the
/// multinomial noise removed: TensorRT-LLM tech blog 4 Table 1, EPLB rows, rank mean 1024
/// tokens, std 52.0 (EP32, 9 slots a rank) and 53.9 (EP36, 8 slots):
/// sqrt((52.0/1024)^2 - 1/1024) = 0.0400 and sqrt((53.9/1024)^2 - 1/1024) = 0.0424; 0.041.
inline constexpr double kEplbResidualRankCv = 0.041;

/// Expected largest of `ranks` independent standard normals, R integral z phi(z) Phi(z)^(R-1)
/// (Simpson on [-9, 9]): 0 at one rank, 1/sqrt(pi) = 0.5642 at two, 1.4236 at 8, 2.0697
/// at 32. Throws InputError when ranks < 1.
double expected_max_standard_normal(int64_t ranks);

/// Expected busiest rank's share of the step's routed tokens over the mean share (>= 1)
/// when experts of lognormal popularity (sigma kLearnedRouterLogSigma, independent) sit in
/// consecutive blocks on the ranks (floor or ceil of E / ranks each, vLLM's expert map),
/// with infinitely many tokens: Monte Carlo over 1,024 draws of the E popularities with a
/// fixed seed (SplitMix64, Box-Muller: the same figure on every platform), cached per
/// (E, ranks). DeepSeek-R1's 256 experts: 1.372 at EP8, 2.388 at EP32 (numpy, 8,000 draws:
/// 1.368, 2.381); 128 experts at EP8: 1.533; Mixtral's 8 on 8 ranks: 2.866. Throws InputError when n_experts < 1 or ranks < 1.
double learned_router_rank_factor(int64_t n_experts, int64_t ranks);

/// Expected busiest EP rank's routed token-expert assignments in one MoE layer: `assignments`
/// (tokens x top_k) over min(ranks, n_experts) ranks. uniform: E[max] of balls into bins
/// (expected_max_load, moe.h). learned and eplb: the mean mu = assignments / ranks plus an
/// excess that adds the popularity's and the sampling noise's in quadrature,
/// mu + sqrt((mu (F - 1))^2 + (B - mu)^2), with B the uniform E[max] and F the rank factor:
/// learned_router_rank_factor, or 1 + kEplbResidualRankCv x expected_max_standard_normal.
/// At one token the noise dominates; at thousands per rank the skew does. Checks (the
/// table's rows it was not fitted on): EPLB at EP32, mu 1,024: 1.117x the mean against 1.109
/// measured; at EP36 1.120 against 1.115. Throws InputError for negative assignments.
double busiest_rank_assignments(double assignments, int64_t n_experts, int64_t ranks, ExpertBalance balance);

}  // namespace chalk
