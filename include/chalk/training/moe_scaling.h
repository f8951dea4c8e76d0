// The MoE trade (lecture 29:46; issue 14 item 4): compute per token against parameters for a
// sparse model at equal quality, from two published MoE scaling laws (reference
// training-and-systems.md section 7.4; derivations in docs/training-runs.md, "The MoE trade").
//
// Counts are plain doubles: parameters, tokens, experts. Losses are the papers' own (Clark:
// validation loss on their MassiveText setup, log base 10 in the law; Krajewski: nats on C4),
// comparable only within one law.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace chalk {

/// Clark et al. 2022, "Unified Scaling Laws for Routed Language Models" (arXiv 2202.01169),
/// Eq. 1 with the saturating expert count of Eq. 4:
///   log10 L(N, E) = a log10 N + b log10 Ê + c log10 N log10 Ê + d,
///   1/Ê = 1 / (E - 1 + (1/E_start - 1/E_max)^-1) + 1/E_max,
/// N the dense (base) model's parameters, which set the compute per token (one expert per
/// token), E the experts per routed layer. Table 3's fits, one per routing technique.
struct RoutedFit {
  std::string name;  ///< "s-base", "rl-r", "hash"
  double a = 0, b = 0, c = 0, d = 0, e_start = 0, e_max = 0;
  std::string source;
  /// The paper's own N_cutoff (section 5, from its unrounded fit): 937B S-BASE, 85B RL-R,
  /// 83B HASH. Table 3's rounded b and c give 10^(-b/c) = 1.0e12, 3.2e10 and 2.2e11: the
  /// ratio is so sensitive to c's third decimal (0.012 stands for 0.0115-0.0125, a factor
  /// of 2.7 in RL-R's cutoff) that the paper's figure is the one to quote. The RL-R and HASH
  /// values agree with the shared reference's "far lower for RL-R/Hash" (training-and-systems
  /// section 7.4) and come from a transcription of the paper's text (a public research-notes
  /// file in the code index that also gives Table 3's coefficients exactly as here).
  double paper_cutoff_params = 0;
};

/// Table 3: S-BASE a -0.082, b -0.108, c 0.009, d 1.104, E_start 1.847, E_max 314.478.
RoutedFit clark_sbase_fit();
/// Table 3: RL-R a -0.083, b -0.126, c 0.012, d 1.111, E_start 1.880, E_max 469.982.
RoutedFit clark_rlr_fit();
/// Table 3: HASH a -0.087, b -0.136, c 0.012, d 1.157, E_start 4.175, E_max 477.741.
RoutedFit clark_hash_fit();
/// The three fits, S-BASE first.
std::vector<RoutedFit> clark_fits();
/// Parses "s-base", "rl-r" or "hash"; throws InputError(field) naming the value and the names.
RoutedFit parse_routed_fit(std::string_view name, const std::string& field);

/// Ê, the saturating transform of E (Eq. 4): Ê(1) = E_start, Ê -> E_max as E grows.
/// Throws InputError("experts") unless experts >= 1.
double saturated_experts(const RoutedFit& f, double experts);
/// L(N, E) of Eq. 1. Throws InputError("params") unless params > 0, and as saturated_experts.
double routed_loss(const RoutedFit& f, double params, double experts);
/// The effective parameter count N̄ (section 5): the dense size with the same loss,
/// L(N̄, 1) = L(N, E), solved in closed form:
///   log N̄ = (a log N + b (log Ê - log Ê_1) + c log N log Ê) / (a + c log Ê_1), Ê_1 = Ê(1).
/// Throws as routed_loss.
double effective_params(const RoutedFit& f, double params, double experts);
/// The dense size beyond which more experts stop helping: -dlogL/dlogÊ = -(b + c log N) = 0,
/// N_cutoff = 10^(-b / c) from Table 3's rounded values (S-BASE 1.0e12 against the paper's
/// 937B; see RoutedFit::paper_cutoff_params for why the paper's figures are quoted).
double routing_cutoff(const RoutedFit& f);

/// Krajewski et al. 2024, "Scaling Laws for Fine-Grained Mixture of Experts" (arXiv
/// 2402.07871), Eq. 9: L(N, D, G) = c + (g / G^gamma + a) / N^alpha + b / D^beta, N the
/// model's non-embedding parameters (for the MoE all of them, every expert), D training
/// tokens, G granularity (experts d_ff / G wide, G times more of them, G picked per token),
/// with the expansion rate E = 64 (expert parameters 64x the active FFN's) fixed in every
/// run. The dense law drops the g term. With the expert FFN 2/3 of a block (d_ff = 4
/// d_model), N = (1/3 + 64 x 2/3) = 43 x the active parameters.
struct FineGrainedFit {
  std::string name;  ///< "moe" or "dense"
  double a = 0, alpha = 0, b = 0, beta = 0, g = 0, gamma = 0, c = 0;
  std::string source;
};

/// Table 1, MoE: a 18.1, alpha 0.115, b 30.8, beta 0.147, g 2.1, gamma 0.58, c 0.47.
FineGrainedFit krajewski_moe_fit();
/// Table 1, dense: a 16.3, alpha 0.126, b 26.7, beta 0.127, c 0.47 (g = 0).
FineGrainedFit krajewski_dense_fit();

/// Eq. 9. granularity is ignored when f.g = 0 (dense). Throws InputError ("params",
/// "tokens", "granularity") unless params > 0, tokens > 0 and granularity >= 1.
double fine_grained_loss(const FineGrainedFit& f, double params, double tokens, double granularity);

/// The lowest loss a budget of `flops` training FLOPs buys under `f`, over every split of
/// C = 6 N_active D (N_active = N / active_ratio: 43 for Krajewski's E = 64 MoE, 1 dense),
/// found by a search over log N (1e6 to 1e15 parameters in 1% steps, refined by golden section to 1e-6 in log N).
/// Throws InputError("flops") unless flops > 0, and as fine_grained_loss.
struct FineGrainedOptimum {
  double params = 0, active_params = 0, tokens = 0, loss = 0;
};
FineGrainedOptimum fine_grained_optimum(const FineGrainedFit& f, double flops, double granularity, double active_ratio);

/// The dense compute that reaches the compute-optimal MoE's loss at `flops` (granularity
/// G, expansion 64, experts `expert_share` of a block: total = active x (1 + 63 x share),
/// as krajewski_trade): the paper's headline comparison (section 6: at 1e20 FLOPs the MoE
/// matches a dense model trained with about 20x the compute, share 2/3). The router's
/// FLOPs are left out (they bound the best G in the paper; here G is given). Returns the
/// ratio dense FLOPs / flops. Throws as fine_grained_optimum, and InputError
/// ("expert_share") unless 0 < expert_share <= 1.
double dense_compute_multiplier(double flops, double granularity, double expert_share = 2.0 / 3.0);

/// One sparse model against its dense equivalent.
struct MoeTrade {
  double active_params = 0;       ///< N: compute per token is 6 N training FLOPs (2 N inference)
  double total_params = 0;        ///< active x (1 + (experts - 1) x expert_share): what memory holds
  double experts = 0;             ///< Clark's E (Krajewski: E = 64 x granularity experts, G active)
  double dense_equivalent = 0;    ///< parameters of the dense model with the same loss
  double compute_ratio = 0;       ///< dense_equivalent / active_params: dense FLOPs per token over the MoE's at equal quality
  double param_ratio = 0;         ///< total_params / dense_equivalent: memory the MoE spends for that saving
  double loss = 0;                ///< of the MoE, in the law's own units
};

/// The trade under Clark's law: a routed model of `active_params` with `experts` experts
/// whose expert layers hold `expert_share` of a dense layer's parameters (2/3 for a
/// d_ff = 4 d_model FFN in every layer). Throws InputError ("params", "experts",
/// "expert_share") unless params > 0, experts >= 1 and 0 < expert_share <= 1.
MoeTrade clark_trade(const RoutedFit& f, double active_params, double experts, double expert_share);
/// The trade under Krajewski's law at `tokens` training tokens and granularity G with the
/// paper's E = 64: total = active x (1 + 63 x expert_share) enters the MoE law; the dense
/// equivalent is the dense law's N with the same loss on the same tokens (+infinity when no
/// dense model gets there on them). Throws as clark_trade and fine_grained_loss.
MoeTrade krajewski_trade(double active_params, double tokens, double granularity, double expert_share);

}  // namespace chalk
