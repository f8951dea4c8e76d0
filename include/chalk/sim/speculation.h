// Speculative decoding and multi-token prediction (MTP) under load, in the request
// simulator (docs/simulator.md, "Speculative decoding"; docs/formulas.md, "Speculative
// decoding and MTP"): how many tokens each decoding sequence keeps in a step, drawn per
// sequence per step from a per-position acceptance rate with the run's seeded generator.
#pragma once

#include <cstdint>
#include <random>

#include "chalk/serving/serving.h"

namespace chalk::sim {

/// Checks the speculation of a simulation (SimOptions::speculation, the levers of `chalk
/// decode`): draft_tokens in 0..64 (0: none), and with drafts an acceptance in [0, 1] or a
/// measured accepted_tokens in [1, 1 + draft_tokens]; without drafts neither. Sparse
/// attention is not simulated. Throws InputError naming the CLI option (--draft,
/// --acceptance, --accepted-tokens, --sparse-top-k).
void validate_speculation(const ServingLevers& l);

/// The per-position acceptance a in [0, 1] whose expected tokens kept per step,
/// expected_accepted_tokens(draft, a) = (1 - a^(draft+1)) / (1 - a) (Leviathan et al. 2023
/// eq. 1), equals `kept`: a measured mean (the measurement format's accepted_tokens) turned
/// into the acceptance that draws it. Found by bisection to 1e-12 (the mean rises with a).
/// Throws InputError("--accepted-tokens") unless 1 <= kept <= 1 + draft, and
/// InputError("--draft") unless draft >= 1.
double acceptance_for_kept(int64_t draft, double kept);

/// Draws the tokens one decoding sequence keeps in one verify step: draft i (1..K) is
/// accepted with probability a given drafts 1..i-1 were (a geometric run of acceptances,
/// truncated at K), and the verify step adds one token of its own (the correction or the
/// bonus token), so 1..K+1 tokens, mean (1 - a^(K+1)) / (1 - a). a = the levers'
/// acceptance, or acceptance_for_kept(K, accepted_tokens) when a measured mean is given.
/// Deterministic for a seed (std::mt19937_64, uniform draws from its top 53 bits).
class AcceptanceDraw {
 public:
  /// Throws as validate_speculation.
  AcceptanceDraw(const ServingLevers& l, uint64_t seed);
  int64_t draft_tokens() const { return k_; }
  double acceptance() const { return a_; }
  /// Tokens kept: 1 without drafts, else 1..K+1.
  int64_t draw();

 private:
  int64_t k_ = 0;
  double a_ = 0;
  std::mt19937_64 rng_;
};

}  // namespace chalk::sim
