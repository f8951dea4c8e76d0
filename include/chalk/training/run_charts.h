// The data of `chalk train plot run` (issue 14 item 5; docs/training-runs.md, "Charts"):
// the cost shares of pre-training, RL and serving as the over-training factor varies, and
// Chinchilla iso-loss curves with the chosen (N, D) marked. Pure functions of an
// Equilibrium and a ParametricFit; the front end draws them with vega-lite.
#pragma once

#include <vector>

#include "chalk/training/equilibrium.h"
#include "chalk/training/scaling_laws.h"

namespace chalk {

/// One over-training factor k: pre-training on k x D_opt(N) tokens, RL and serving as
/// solved (their chip-seconds do not depend on the pre-training tokens).
struct CostShare {
  double over_training_factor = 0;
  double pretraining_tokens = 0;  ///< k x e.chinchilla_tokens
  double pretraining = 0, rl = 0, serving = 0;  ///< shares of the total chip-seconds, summing to 1
};

/// Shares at each factor: pre-training chip-seconds k D_opt x e.training_chip_seconds_per_token
/// against e.rl_chip_seconds and e.serving_chip_seconds. At k = e.over_training_factor the
/// pre-training share equals the equilibrium's (1/3 each with the lecture's equal ratios).
/// Throws InputError("over_training_factor") for a factor <= 0, and ("equilibrium") when e
/// has no positive Chinchilla tokens or serving cost.
std::vector<CostShare> cost_shares(const Equilibrium& e, const std::vector<double>& factors);

/// `count` factors spaced evenly in log from lo to hi (inclusive), count >= 2.
/// Throws InputError("over_training_factor") unless 0 < lo < hi and count >= 2.
std::vector<double> log_spaced(double lo, double hi, int count);

/// One point of an iso-loss curve: parameters N and tokens D with L(N, D) = loss.
struct IsoLossPoint {
  double loss = 0, params = 0, tokens = 0, flops = 0;  ///< flops = 6 N D
};

/// The curve L(N, D) = loss of fit `f`: D(N) = (B / (loss - E - A / N^alpha))^(1/beta) at
/// `count` N spaced in log from n_lo to n_hi, leaving out the N whose A / N^alpha alone
/// reaches the loss (no D suffices). Throws InputError("loss") unless loss > f.E, and
/// ("params") unless 0 < n_lo < n_hi and count >= 2.
std::vector<IsoLossPoint> iso_loss_curve(const ParametricFit& f, double loss, double n_lo, double n_hi, int count);

}  // namespace chalk
