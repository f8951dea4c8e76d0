// The parts a training step is built from (step.h): which pipeline stage is busiest, and the
// HBM bytes of the loss, the optimizer step and materialised attention scores, and the SMs
// hidden collectives hold. training_step (step.cc) assembles them.
#include <algorithm>
#include <cstdint>

#include "chalk/base/count_cast.h"
#include "chalk/training/step.h"

namespace chalk {
namespace {

using counts::d;

}  // namespace

BusiestStage busiest_stage(const TrainingCosts& c, const TrainingPlan& p, const Placement& pl, double layer_cost, double head_cost) {
  const double mtp = d(std::max<int64_t>(0, c.padded_layers - c.layers - 2));
  const double heads = 1 + mtp;
  if (p.pp <= 1) return {d(c.layers) + mtp, heads};
  const double lps = d(pl.layers_per_stage);
  const bool padded = pl.layers_per_stage * p.pp != c.layers;
  const bool v_shape = p.schedule == PipelineSchedule::zb_v || p.schedule == PipelineSchedule::dualpipe;
  auto cost = [&](const BusiestStage& b) { return b.layers * layer_cost + b.heads * head_cost; };
  BusiestStage best;
  auto take = [&](BusiestStage b) {
    if (cost(b) > cost(best)) best = b;
  };
  if (v_shape) {
    // Rank 0 holds the first and the last chunk (DeepSeek-V3 2.2: the shallowest layers with
    // the embedding and the deepest with the output head on one PP rank); the others two
    // chunks of layers.
    best = {padded ? lps - 2 : lps + mtp, heads};
    take({lps, 0});
  } else {
    best = {padded ? lps - 1 : lps, 0};  // the first stage: the embedding (a lookup) takes a slot when padded
    if (p.pp > 2) take({lps, 0});        // a middle stage
    take({padded ? lps - 1 : lps + mtp, heads});  // the last stage: the output layer(s) and the loss
  }
  return best;
}

double loss_hbm_bytes(double logits, bool backward) {
  return logits * (backward ? kLossBytesBackward : kLossBytesForward);
}

double optimizer_hbm_bytes(const StateBytes& state, double owned_params) {
  return owned_params * (2 * state.gradients + 2 * state.optimizer + state.weights);
}

double optimizer_housekeeping_bytes(const TrainingPlan& p, double owned_params, double held_params) {
  const double copy = p.zero_stage < 3 ? owned_params * kMasterWeightBytes : 0.0;
  const double zeroing = p.zero_stage <= 1 ? held_params * p.state.gradients : 0.0;
  const double unscale = p.loss_scaling ? owned_params * 2 * p.state.gradients : 0.0;
  return copy + zeroing + unscale;
}

double sm_contention(double hidden, double sm_fraction) {
  return hidden > 0 ? hidden * sm_fraction : 0.0;
}

double scores_hbm_bytes(double elements, double activation_bytes, bool backward, bool dropout) {
  const double with = backward ? kScoreBytesBackward : kScoreBytesForward;
  const double without = dropout ? 0.0 : (backward ? kScoreDropoutBytesBackward : kScoreDropoutBytesForward);
  return elements * (with - without) * activation_bytes / 2.0;
}

}  // namespace chalk
