// The engine step (overhead.h): the better of one and two micro-batches where the layout
// overlaps them, plus an eager step's launches and the host's work (docs/formulas.md,
// fidelity). The GPU side of each choice: overhead.cc.
#include "chalk/engine/overhead.h"
#include "chalk/engine/step_mix.h"

#include "graph_step.h"
#include "host_step.h"
#include "step_with.h"

namespace chalk {

Mechanisms::Mechanisms() = default;

Seconds op_floor(const SystemSpec& sys, const Calibration& cal) { return sys.op_floor.value_or(cal.kernel_floor); }

namespace {

StepBreakdown best_micro_batching(const Deployment& dep, const StepShape& s, const StepMix* mix) {
  const detail::StepShares shares = detail::step_shares(dep, s, mix);  // checks s and mix; once for both choices
  StepBreakdown r = detail::step_with(dep, s, mix, true, shares);
  if (dep.mechanisms.layout.overlap_micro_batches) {
    // An engine splits a step into two micro-batches where that pays (engines gate it by
    // batch size): below that the second pass over the weights and kernels costs more than
    // it hides.
    StepBreakdown without = detail::step_with(dep, s, mix, false, shares);
    if (without.t_step < r.t_step) r = without;
  }
  detail::add_eager_launch(dep, r);      // an eager step's kernel launches (graph_step.h)
  detail::add_host_time(dep, s, mix, r);  // and the host's work (host_step.h)
  return r;
}

}  // namespace

StepBreakdown engine_step(const Deployment& dep, const StepShape& s) { return best_micro_batching(dep, s, nullptr); }
StepBreakdown engine_step(const Deployment& dep, const StepMix& mix) { return best_micro_batching(dep, StepShape{}, &mix); }

}  // namespace chalk
