// Internal to the engine: the GPU side of one engine step for one choice of micro-batches
// (overhead.cc), which engine_step (engine_step.cc) runs with and without two micro-batches
// and completes with the eager launches and the host's work.
#pragma once

#include "chalk/engine/overhead.h"
#include "chalk/engine/step_mix.h"

namespace chalk::detail {

/// The step of `dep` for the shape `s` (or the batch composition `mix` when non-null) with
/// every mechanism of overhead.h: per-kernel roofline, kernel floors and memory-bound
/// kernels, collectives, expert-parallel traffic; with two overlapped micro-batches where
/// `allow_overlap` and the layout asks for them. No eager launch or host time (engine_step
/// adds them). Units as StepBreakdown's; throws as engine_step.
StepBreakdown step_with(const Deployment& dep, const StepShape& s, const StepMix* mix, bool allow_overlap);

}  // namespace chalk::detail
