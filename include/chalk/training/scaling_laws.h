// Compute-optimal scaling (Chinchilla): how many parameters N and training tokens D a
// compute budget C = 6 N D buys, the loss a chosen (N, D) is predicted to reach, and how
// far a run is past compute-optimal (lecture 1:18:52-1:32:42; reference
// training-and-systems.md section 7; derivations in docs/training-runs.md).
//
// N counts the parameters a token multiplies by (for an MoE the active ones), D the
// training tokens, C training FLOPs (one multiply-add = 2 FLOPs). Plain doubles: counts
// and FLOPs, no units beyond those.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace chalk {

/// A compute-optimal allocation: N_opt parameters and D_opt tokens with 6 N D = C.
struct Allocation {
  double params = 0;        ///< N_opt
  double tokens = 0;        ///< D_opt
  double flops = 0;         ///< C = 6 N_opt D_opt
  double tokens_per_param = 0;  ///< D_opt / N_opt
};

/// Hoffmann et al. 2022 (arXiv 2203.15556) Approach 3, Eq. 2: the parametric loss
/// L(N, D) = E + A / N^alpha + B / D^beta (nats per token on their data).
struct ParametricFit {
  std::string name;
  double E = 0, A = 0, B = 0, alpha = 0, beta = 0;
  std::string source;
};

/// Hoffmann App. D.2 as printed: E 1.69, A 406.4, B 410.7, alpha 0.34, beta 0.28.
ParametricFit hoffmann_printed_fit();
/// Hoffmann's unrounded values (TeX source, quoted by Besiroglu et al. 2024): E 1.6934,
/// A 406.4, B 410.7, alpha 0.3392, beta 0.2849; they reproduce the paper's ~40B for the
/// Gopher budget (Figure 4 caption).
ParametricFit hoffmann_tex_fit();
/// Besiroglu et al. 2024 (Epoch AI, arXiv 2404.10102) refit of Hoffmann's data: E 1.8172,
/// A 482.01, B 2085.43, alpha 0.3478, beta 0.3658 (about 20 tokens per parameter).
ParametricFit epoch_fit();

/// L(N, D) = E + A / N^alpha + B / D^beta. Throws InputError unless params > 0 and
/// tokens > 0 (fields "params", "tokens").
double predicted_loss(const ParametricFit& f, double params, double tokens);

/// The closed-form compute-optimal frontier of a parametric fit under C = 6 N D
/// (Hoffmann Eq. 4): N_opt = G (C/6)^(beta/(alpha+beta)), D_opt = (C/6)^(alpha/(alpha+beta)) / G,
/// G = (alpha A / (beta B))^(1/(alpha+beta)). Throws InputError unless flops > 0.
Allocation optimal_allocation(const ParametricFit& f, double flops);

/// Which rule gives the compute-optimal allocation.
enum class ChinchillaMethod {
  approach1,        ///< Hoffmann Approach 1 (training curve envelope): N_opt ∝ C^0.50
  approach2,        ///< Hoffmann Approach 2 (IsoFLOP profiles): N_opt ∝ C^0.49
  approach3,        ///< Hoffmann Approach 3, the printed parametric fit
  approach3_tex,    ///< Approach 3 with the unrounded constants
  epoch,            ///< Besiroglu et al. 2024 refit
  tokens_per_param_20,  ///< the rule of thumb D = 20 N (Hoffmann Table 3: 20.2 to 22.4)
};

/// Parses "approach1", "approach2", "approach3", "approach3-tex", "epoch", "20x".
/// Throws InputError(field, ...) naming the value and the accepted names.
ChinchillaMethod parse_chinchilla_method(std::string_view name, const std::string& field);
std::string_view to_string(ChinchillaMethod m);
/// The paper and table each method comes from.
std::string_view source_of(ChinchillaMethod m);
/// All methods, in the order above.
std::vector<ChinchillaMethod> all_chinchilla_methods();

/// The compute-optimal allocation for a budget of `flops` by method `m`.
/// Approaches 1 and 2 are the power laws N_opt = N_c (C / C_c)^a with Hoffmann Table 2's
/// exponents (a = 0.50, 0.49), anchored at the paper's own compute-optimal model,
/// Chinchilla: N_c = 70e9 on D_c = 1.4e12 tokens, C_c = 6 N_c D_c = 5.88e23 (section 4.1).
/// The 20x rule: N = sqrt(C / 120), D = 20 N. Throws InputError unless flops > 0.
Allocation chinchilla_optimal(ChinchillaMethod m, double flops);

/// The tokens that make `params` compute-optimal by method `m`: D_opt(N), the inverse of
/// chinchilla_optimal's N_opt(C) (D = C_opt(N) / 6N). Throws InputError unless params > 0.
double optimal_tokens_for_params(ChinchillaMethod m, double params);

/// How far a run of N params on D tokens is past compute-optimal, and what that costs.
struct OverTraining {
  double params = 0, tokens = 0;
  double flops = 0;              ///< 6 N D
  double optimal_tokens = 0;     ///< D_opt(N) by the method
  double factor = 0;             ///< D / D_opt(N): 1 = compute-optimal, > 1 over-trained
  double loss = 0;               ///< L(N, D) by the parametric fit
  /// The compute-optimal run reaching the same loss L(N, D) on the fit's frontier.
  Allocation iso_loss_optimal;
  double wasted_flops = 0;       ///< 6 N D - C*(L)  (>= 0)
  double wasted_fraction = 0;    ///< wasted_flops / (6 N D)
};

/// Over-training of (params, tokens): factor D / D_opt(N) by `method`; the loss and the
/// compute wasted at fixed loss by the parametric `fit` (the frontier C*(L) found by
/// bisection on log C, L decreasing along it). Throws InputError unless both are > 0.
OverTraining over_training(ChinchillaMethod method, const ParametricFit& fit, double params, double tokens);

/// Sardana et al. 2023 (arXiv 2401.00448) section 2: the (N, D) that reaches `loss` by the
/// parametric fit at the least lifetime FLOPs 6 N D + 2 N D_inf, D_inf = `inference_tokens`
/// (solved numerically: D(N) = (B / (loss - E - A / N^alpha))^(1/beta), a log-spaced scan of
/// N then golden-section refinement). With inference_tokens = 0 it is the Chinchilla
/// frontier point at that loss. Throws InputError naming "loss" unless loss > E, and
/// "inference_tokens" when negative.
Allocation inference_aware_optimal(const ParametricFit& f, double loss, double inference_tokens);

/// The parametric fit a method uses for losses: its own for approach3/approach3_tex/epoch,
/// else epoch_fit() (the replication consistent with Approaches 1-2 and the 20x rule).
ParametricFit loss_fit_for(ChinchillaMethod m);

}  // namespace chalk
