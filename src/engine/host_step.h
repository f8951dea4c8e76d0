// The host's work inside the engine step (overhead.cc): internal to src/engine.
#pragma once

#include "chalk/engine/overhead.h"
#include "chalk/engine/step_mix.h"

namespace chalk::detail {

/// Adds the engine's host work (dep.mechanisms.host: time per sequence, overlapped or not)
/// to a GPU step `r` of shape `s` or mix `mix` (non-null: the mix): t_host = time per
/// sequence x the sequences of the busiest attention data-parallel rank (each rank runs its
/// own scheduler; a StepShape spreads them evenly, fractionally; a StepMix counts each
/// decode and chunk on its rank, or ceil(all / ranks) when it names none), t_step =
/// step_with_host(GPU step, t_host), governs "host" where t_host >= the GPU step. Nothing on
/// TPUs (one compiled program, no per-step Python loop measured) or without host time.
void add_host_time(const Deployment& dep, const StepShape& s, const StepMix* mix, StepBreakdown& r);

}  // namespace chalk::detail
