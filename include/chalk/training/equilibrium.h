// The lecture's equilibrium (1:18:52-1:32:42): a lab spends about as much on pre-training as
// on RL and as on serving a model over its deployment window; solving those equalities for
// the pre-training tokens shows how far past Chinchilla-optimal frontier models are trained
// (the lecture: about 100x). Derivation in docs/training-runs.md.
//
// Costs are chip-seconds on one system. Serving and RL rollouts are decode, priced by the
// engine's best decode layout (layout_search.h) at the largest batch that fits; pre-training and the
// RL update are training FLOPs at an MFU (run.h) until the training step (issue 13) lands.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "chalk/base/units.h"
#include "chalk/hardware/hardware.h"
#include "chalk/model/model.h"
#include "chalk/training/scaling_laws.h"

namespace chalk {

/// A decoded token priced by the engine: the best decode layout of `n_chips` chips by tokens/s
/// per chip (engine/layout_search.h: tensor/expert/data-parallel attention layouts with their
/// collectives, kernel launch floor and kernel efficiencies, each replica at the largest
/// batch its HBM holds), with the plain roofline (roofline.h decode_step, the lower bound)
/// beside it.
struct DecodePrice {
  int64_t n_chips = 0;   ///< chips searched (replicas x replica_chips)
  int64_t context = 0;   ///< KV tokens per sequence
  std::string layout;    ///< the chosen layout, e.g. "DP-attention EP72, two micro-batches"
  int64_t replica_chips = 0;
  double batch = 0;      ///< sequences per replica
  Seconds t_step;        ///< one replica's engine step
  TokensPerSecond tokens_per_s_per_chip;
  double chip_seconds_per_token = 0;  ///< 1 / tokens_per_s_per_chip (engine)
  double mfu = 0;        ///< decode FLOPs per token / (chip peak x chip-seconds per token)
  /// The roofline on the same chips at the same batch per chip: the lower bound.
  double roofline_chip_seconds_per_token = 0;
};

/// Prices one decoded token at `context` on `n_chips` chips (0 = the system's scale-up
/// domain, doubled until the weights fit), each replica's batch capped at `max_batch`
/// (0 = 1e6). Throws InputError naming "decode_context" for context < 1, "decode_chips"
/// when n_chips < 0 or no layout fits, "decode_batch" when max_batch < 0.
DecodePrice price_decode(const ModelSpec& m, const SystemSpec& s, int64_t n_chips, int64_t context, int64_t max_batch);

/// The lecture's inputs; defaults are the lecture's values where it gives them.
struct EquilibriumInputs {
  ModelSpec model;
  SystemSpec system;
  /// Serving traffic of this one model, tokens/s (lecture 1:30:37: "maybe 50 million tokens
  /// per second per specific model").
  double serving_tokens_per_s = 50e6;
  /// How long the model serves before it is replaced (1:30:37: "live for two months"):
  /// 2/12 of 365.25 days = 5.2596e6 s.
  Seconds deployment_window = Seconds(365.25 * 86400 / 6);
  /// Mean KV length a served output token attends to: DeepSeek's production 4,989
  /// (reference 9.2, open-infra-index day 6).
  int64_t serving_context = 4989;
  /// Fraction of RL rollout tokens trained on (1:26:18: "we can make this 2 in 10").
  double rl_trained_fraction = 0.2;
  /// RL rollout length: DeepSeek-R1-Zero's maximum of 32,768 (reference 8.2); rollouts decode
  /// at a mean context of half of it and are trained at this sequence length.
  int64_t rl_sequence_length = 32768;
  /// Pre-training: MFU and sequence length (default: DeepSeek-V3's 38.94% at 4K with causal
  /// attention FLOPs, the definition training_flops_per_token uses by default, ISCA'25
  /// Table 4; replaceable by the training step's own figure).
  double training_mfu = 0.3894;
  int64_t training_sequence_length = 4096;
  /// Cost of pre-training and of RL relative to serving (1:23:25: "equality of all three").
  double pretraining_to_serving_cost = 1;
  double rl_to_serving_cost = 1;
  /// Decode: chips searched and the cap on one replica's batch (0 = price_decode's defaults).
  int64_t decode_chips = 0;
  int64_t decode_batch = 0;
  /// D_opt(N) for the over-training factor (1:32:12: "the token count the Chinchilla
  /// scaling model would recommend"): 20 tokens per parameter by default.
  ChinchillaMethod chinchilla = ChinchillaMethod::tokens_per_param_20;
};

/// The solved equilibrium.
struct Equilibrium {
  double params = 0;                ///< N: active matmul parameters (count_params().active_matmul())
  double serving_tokens = 0;        ///< D_serve = tokens/s x window
  DecodePrice serving_decode, rl_decode;
  double training_chip_seconds_per_token = 0;     ///< pre-training, at its sequence length
  double rl_update_chip_seconds_per_token = 0;    ///< training on rollouts, at rl_sequence_length
  double serving_chip_seconds = 0;  ///< S = D_serve x serving decode chip-seconds per token
  double pretraining_chip_seconds = 0, rl_chip_seconds = 0;
  double pretraining_tokens = 0;    ///< D_pre = ratio x S / training chip-seconds per token
  double rl_rollout_tokens = 0;     ///< D_RL = ratio x S / (rollout + fraction x update cost)
  double rl_trained_tokens = 0;     ///< fraction x D_RL
  double chinchilla_tokens = 0;     ///< D_opt(N)
  double over_training_factor = 0;  ///< D_pre / D_opt(N)
  double pretraining_flops = 0;     ///< D_pre x training FLOPs per token
  std::optional<Usd> total_cost;    ///< all three at the system's price per chip-hour
  /// Sardana et al. 2023: the (N, D) reaching the same loss L(N, D_pre) (Epoch fit) at the
  /// least lifetime FLOPs 6 N D + 2 N (D_serve + D_RL).
  double loss = 0;
  Allocation inference_aware;
  Allocation chinchilla_at_loss;    ///< the compute-optimal run at that loss
};

/// Solves the equalities: chip-seconds of pre-training = r_pre x S, of RL (rollouts as
/// decode at rl_sequence_length / 2 of context, plus the trained fraction at training cost)
/// = r_rl x S, where S = serving chip-seconds. Throws InputError naming the field for a
/// non-positive traffic, window, MFU or cost ratio, a fraction outside (0, 1], and as
/// price_decode.
Equilibrium solve_equilibrium(const EquilibriumInputs& in);

/// The lecture's own arithmetic, FLOPs only (decode at 2 N per token and the same
/// utilisation as training): D_pre = r_pre x D_serve x 2N / 6N = r_pre x D_serve / 3.
double lecture_flops_pretraining_tokens(double serving_tokens, double pretraining_to_serving_cost = 1);

}  // namespace chalk
