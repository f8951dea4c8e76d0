// The lecture's pre-training / RL / serving equilibrium (equilibrium.h; docs/training-runs.md).
#include "chalk/training/equilibrium.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "chalk/base/error.h"
#include "chalk/engine/layout_search.h"
#include "chalk/engine/roofline.h"
#include "chalk/training/run.h"

namespace chalk {
namespace {

std::string equilibrium_num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

void require_positive(double v, const char* field, const char* what) {
  if (!(v > 0) || !std::isfinite(v)) throw InputError(field, std::string("must be a positive ") + what + ", got " + equilibrium_num(v));
}

}  // namespace

DecodePrice price_decode(const ModelSpec& m, const SystemSpec& s, int64_t n_chips, int64_t context, int64_t max_batch) {
  if (context < 1) throw InputError("decode_context", "must be a positive number of KV tokens, got " + std::to_string(context));
  if (n_chips < 0) throw InputError("decode_chips", "must be >= 0 (0 = the scale-up domain), got " + std::to_string(n_chips));
  if (max_batch < 0)
    throw InputError("decode_batch", "must be >= 0 (0 = the largest that fits), got " + std::to_string(max_batch));
  LayoutQuery q;
  q.n_chips = n_chips > 0 ? n_chips : std::max<int64_t>(1, s.scale_up_domain);
  q.context = context;
  if (max_batch > 0) q.max_batch = static_cast<double>(max_batch);
  const DeploymentOptions base;
  std::vector<LayoutCandidate> ranked = search_layouts(m, s, base, q);
  while (n_chips == 0 && (ranked.empty() || !ranked.front().fits) && q.n_chips < (1 << 16)) {
    q.n_chips *= 2;
    ranked = search_layouts(m, s, base, q);
  }
  if (ranked.empty() || !ranked.front().fits)
    throw InputError("decode_chips", "no decode layout of " + std::to_string(q.n_chips) + " x " + s.chip.name +
                                         " holds the model and one sequence at " + std::to_string(context) + " tokens" +
                                         (ranked.empty() ? "" : " (" + ranked.front().reason + ")"));
  const LayoutCandidate& best = ranked.front();
  DecodePrice p;
  p.n_chips = q.n_chips;
  p.context = context;
  p.layout = best.name;
  p.replica_chips = best.replica_chips;
  p.batch = best.batch;
  p.t_step = best.step.t_step;
  p.tokens_per_s_per_chip = TokensPerSecond(best.tokens_per_s_per_chip);
  p.chip_seconds_per_token = 1 / best.tokens_per_s_per_chip;
  const FlopsPerSecond peak = s.chip.peak_for(make_deployment(m, s, base).compute);
  p.mfu = decode_flops_per_token(m, context).value() / (peak.value() * p.chip_seconds_per_token);
  // The roofline on one replica's chips at the same batch: the lower bound.
  DeploymentOptions o = base;
  o.n_chips = best.replica_chips;
  const DecodeStep floor = decode_step(make_deployment(m, s, o), static_cast<int64_t>(std::ceil(best.batch)), context);
  p.roofline_chip_seconds_per_token = 1 / floor.tokens_per_s_per_chip.value();
  return p;
}

double lecture_flops_pretraining_tokens(double serving_tokens, double pretraining_to_serving_cost) {
  require_positive(serving_tokens, "serving_tokens", "token count");
  require_positive(pretraining_to_serving_cost, "pretraining_to_serving_cost", "cost ratio");
  // 6 N D_pre = r (2 N D_serve)  =>  D_pre = r D_serve / 3.
  return pretraining_to_serving_cost * serving_tokens * 2 / 6;
}

Equilibrium solve_equilibrium(const EquilibriumInputs& in) {
  require_positive(in.serving_tokens_per_s, "serving_tokens_per_s", "serving rate in tokens/s");
  require_positive(in.deployment_window.value(), "deployment_window", "time");
  require_positive(in.training_mfu, "training_mfu", "fraction of peak");
  if (in.training_mfu > 1) throw InputError("training_mfu", "must be a fraction in (0, 1], got " + equilibrium_num(in.training_mfu));
  if (!(in.rl_trained_fraction > 0 && in.rl_trained_fraction <= 1))
    throw InputError("rl_trained_fraction", "must be a fraction in (0, 1], got " + equilibrium_num(in.rl_trained_fraction));
  require_positive(in.pretraining_to_serving_cost, "pretraining_to_serving_cost", "cost ratio");
  require_positive(in.rl_to_serving_cost, "rl_to_serving_cost", "cost ratio");
  if (in.rl_sequence_length < 2)
    throw InputError("rl_sequence_length", "must be >= 2 tokens, got " + std::to_string(in.rl_sequence_length));
  if (in.training_sequence_length < 1)
    throw InputError("training_sequence_length", "must be >= 1 token, got " + std::to_string(in.training_sequence_length));

  Equilibrium e;
  e.params = count_params(in.model).active_matmul();
  e.serving_tokens = in.serving_tokens_per_s * in.deployment_window.value();
  e.serving_decode = price_decode(in.model, in.system, in.decode_chips, in.serving_context, in.decode_batch);
  e.rl_decode = price_decode(in.model, in.system, in.decode_chips, in.rl_sequence_length / 2, in.decode_batch);

  // Training chip-seconds per token: FLOPs per token / (peak x MFU), bf16 peak (run.h).
  const double peak = in.system.chip.peak_for(MatmulPrecision::bf16).value();
  if (!(peak > 0)) throw InputError("system", in.system.chip.name + " has no dense bf16 peak to measure an MFU against");
  auto train_cost = [&](int64_t seq) { return training_flops_per_token(in.model, seq).value() / (peak * in.training_mfu); };
  e.training_chip_seconds_per_token = train_cost(in.training_sequence_length);
  e.rl_update_chip_seconds_per_token = train_cost(in.rl_sequence_length);

  e.serving_chip_seconds = e.serving_tokens * e.serving_decode.chip_seconds_per_token;
  e.pretraining_chip_seconds = in.pretraining_to_serving_cost * e.serving_chip_seconds;
  e.rl_chip_seconds = in.rl_to_serving_cost * e.serving_chip_seconds;
  e.pretraining_tokens = e.pretraining_chip_seconds / e.training_chip_seconds_per_token;
  e.rl_rollout_tokens = e.rl_chip_seconds / (e.rl_decode.chip_seconds_per_token +
                                             in.rl_trained_fraction * e.rl_update_chip_seconds_per_token);
  e.rl_trained_tokens = in.rl_trained_fraction * e.rl_rollout_tokens;
  e.pretraining_flops = e.pretraining_tokens * training_flops_per_token(in.model, in.training_sequence_length).value();
  e.chinchilla_tokens = optimal_tokens_for_params(in.chinchilla, e.params);
  e.over_training_factor = e.pretraining_tokens / e.chinchilla_tokens;
  if (in.system.price_per_chip)
    e.total_cost = Usd((e.serving_chip_seconds + e.pretraining_chip_seconds + e.rl_chip_seconds) *
                       in.system.price_per_chip->value());

  const ParametricFit fit = epoch_fit();
  e.loss = predicted_loss(fit, e.params, e.pretraining_tokens);
  e.inference_aware = inference_aware_optimal(fit, e.loss, e.serving_tokens + e.rl_rollout_tokens);
  e.chinchilla_at_loss = inference_aware_optimal(fit, e.loss, 0);
  return e;
}

}  // namespace chalk
