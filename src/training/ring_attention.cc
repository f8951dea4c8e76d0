// Ring attention's eager merge traffic and exchange volume by engine (ring_attention.h;
// docs/formulas.md, "Ring attention's merge traffic").
#include "chalk/training/ring_attention.h"

#include "chalk/training/plan.h"
#include "chalk/training/step.h"

namespace chalk {

RingMergeBytes torch_ring_merge_bytes(double q, double o, int64_t cp) {
  if (cp <= 1) return {};
  const double n = static_cast<double>(cp);
  const double forward = 4 * n * (q + o) + (38 * n - 26) * o;
  const double backward = (10 * n + 14) * q + 4 * o + (25 * n + 3) * (q + o);
  return RingMergeBytes{.forward = forward, .backward = backward};
}

RingStepTerms ring_step_terms(const TrainingCosts& c, const TrainingPlan& p, double microbatch_tokens, double hbm_rate) {
  RingStepTerms t;
  t.exchange_elements_per_token = c.kv_elements_per_token;
  if (p.cp <= 1 || p.cp_ring != CpRing::torch_eager) return t;
  t.exchange_elements_per_token = c.q_elements_per_token + c.o_elements_per_token;
  t.gradient_exchange_factor = 4 / p.activation_bytes;
  const double rank_tokens = microbatch_tokens / static_cast<double>(p.cp) / static_cast<double>(p.tp);
  const RingMergeBytes b = torch_ring_merge_bytes(rank_tokens * c.q_elements_per_token, rank_tokens * c.o_elements_per_token, p.cp);
  t.merge_forward_s = b.forward / hbm_rate;
  t.merge_backward_s = b.backward / hbm_rate;
  return t;
}

}  // namespace chalk
