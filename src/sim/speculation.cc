// Per-sequence acceptance draws for speculative decoding in the simulator (speculation.h).
#include "chalk/sim/speculation.h"

#include <fmt/format.h>

#include "chalk/base/error.h"

namespace chalk::sim {

void validate_speculation(const ServingLevers& l) {
  validate(l);  // --draft 0..64, --acceptance [0, 1], --accepted-tokens [1, 1 + draft]
  if (l.draft_tokens == 0 && (l.acceptance > 0 || l.accepted_tokens > 0)) {
    throw InputError("--draft", "must be >= 1 drafted tokens per step when an acceptance is given, got 0");
  }
  if (l.sparse != SparseAttention::dense) {
    throw InputError("--sparse-top-k", "sparse attention is not simulated; expected dense attention in simulate and plan");
  }
}

double acceptance_for_kept(int64_t draft, double kept) {
  if (draft < 1) throw InputError("--draft", "must be >= 1 drafted tokens per step, got " + std::to_string(draft));
  const double top = static_cast<double>(draft + 1);
  if (!(kept >= 1 && kept <= top)) {
    throw InputError("--accepted-tokens", fmt::format("mean tokens kept per step must be in [1, 1 + draft] = [1, {}], got {:.6g}", draft + 1, kept));
  }
  if (kept == top) return 1;
  double lo = 0, hi = 1;
  while (hi - lo > 1e-12) {
    const double mid = 0.5 * (lo + hi);
    (expected_accepted_tokens(draft, mid) < kept ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

AcceptanceDraw::AcceptanceDraw(const ServingLevers& l, uint64_t seed) : rng_(seed) {
  validate_speculation(l);
  k_ = l.draft_tokens;
  if (k_ > 0) a_ = l.accepted_tokens > 0 ? acceptance_for_kept(k_, l.accepted_tokens) : l.acceptance;
}

int64_t AcceptanceDraw::draw() {
  int64_t kept = 1;
  for (int64_t i = 0; i < k_; ++i) {
    const double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53;  // [0, 1)
    if (!(u < a_)) break;
    ++kept;
  }
  return kept;
}

}  // namespace chalk::sim
