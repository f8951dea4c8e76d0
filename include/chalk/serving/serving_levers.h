// The levers a user sets on a serving deployment (lecture 0:00 "speculative decoding or
// multi-token prediction", 12:25 sparse attention), checked and resolved per context into
// roofline.h's DecodeLevers. Part of serving.h, which includes it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "chalk/engine/roofline.h"
#include "chalk/model/model.h"

namespace chalk {

/// How many KV tokens a query reads.
enum class SparseAttention {
  dense,         ///< the whole context
  top_k,         ///< a fixed top-k (DeepSeek Sparse Attention, DeepSeek-V3.2: k = 2048)
  sqrt_context,  ///< ceil(c sqrt(S)) tokens: the lecture's "~sqrt improvement" (12:25, 1:54:39)
};

/// The levers a user sets; resolved per context into roofline.h's DecodeLevers.
struct ServingLevers {
  /// Tokens drafted per step by speculative decoding or multi-token prediction (MTP);
  /// each sequence pushes 1 + draft tokens through the model per step. 0 = plain decode.
  int64_t draft_tokens = 0;
  /// Probability that each drafted token is accepted, independently (0..1).
  double acceptance = 0;
  /// acceptance is published_mtp_acceptance's default, not stated (for people).
  bool acceptance_published = false;
  /// A measured mean of tokens kept per step (accepted drafts + the verified token), in
  /// [1, 1 + draft_tokens], used instead of `acceptance` when > 0 (DeepSeek-V3 report 5.4.3:
  /// the second token accepted 85-90% of the time, so about 1.85 kept with one draft).
  double accepted_tokens = 0;
  /// Who drafts (roofline.h): its passes are part of every step. Drafter::none prices the
  /// drafts as free.
  Drafter drafter = Drafter::none;
  DraftModelCost draft_model;    ///< when drafter = Drafter::model
  std::string draft_model_name;  ///< its name, for people
  /// An EAGLE head priced as Drafter::mtp (one layer like the model's last, with its LM
  /// head: roofline.h, Deployment::mtp; EAGLE, Li et al. 2024, arXiv 2401.15077, and EAGLE-3,
  /// Li et al. 2025, arXiv 2503.01840, each a one-layer head over the target's features): "eagle" or
  /// "eagle3", as `--drafter` named it; empty for the model's own MTP module and every other
  /// drafter. It changes no price: it names the head for people and for the launch files.
  std::string eagle_head;
  SparseAttention sparse = SparseAttention::dense;
  int64_t sparse_top_k = 0;        ///< tokens read per query for SparseAttention::top_k (>= 1)
  double sparse_sqrt_factor = 0;   ///< c in ceil(c sqrt(S)) for SparseAttention::sqrt_context (> 0)
};

/// The acceptance per draft of DeepSeek-V3's multi-token-prediction module as its own
/// drafter: "the acceptance rate of the second token prediction ranges between 85% and 90%"
/// (DeepSeek-V3 technical report, arXiv 2412.19437, section 5.4.3); the midpoint. Each draft
/// is taken as accepted independently at this rate (which overstates later drafts of a
/// module trained for one).
inline constexpr double kDeepSeekV3MtpAcceptance = 0.875;

/// The published acceptance of a model's own MTP module as drafter: kDeepSeekV3MtpAcceptance
/// for DeepSeek-V3 and R1 (HF model_type deepseek_v3 with MTP modules), nullopt for every
/// other model (GLM-4.5's and Kimi K2's modules publish none). decode, serving, simulate
/// and validate take it when --acceptance and --accepted-tokens are not given
/// (docs/file-formats.md, "Defaults").
std::optional<double> published_mtp_acceptance(const ModelSpec& m);

/// Tokens kept per step: accepted_tokens when given, else expected_accepted_tokens(draft,
/// acceptance) (Leviathan et al. 2023 eq. 1). Throws as validate().
double tokens_kept_per_step(const ServingLevers& levers);

/// Checks a ServingLevers. Throws InputError naming the CLI option: --accepted-tokens (in
/// [1, 1 + draft] when given), --draft (0..64),
/// --acceptance ([0, 1]; required to be > 0 only in the sense that 0 keeps 1 token),
/// --sparse-top-k (>= 1), --sparse-sqrt (finite, > 0).
void validate(const ServingLevers& levers);

/// The DecodeLevers at context `context` (tokens): tokens_per_sequence = 1 + draft;
/// accepted = tokens_kept_per_step; the drafter and its cost as given (drafter none
/// when draft = 0);
/// sparse_attention_top_k = k, or ceil(c sqrt(S)) (at least 1), or 0 for dense.
/// Throws InputError as validate() does.
DecodeLevers resolve_levers(const ServingLevers& levers, int64_t context);

}  // namespace chalk
