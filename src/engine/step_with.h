// Internal to the engine: the GPU side of one engine step for one choice of micro-batches
// (overhead.cc), which engine_step (engine_step.cc) runs with and without two micro-batches
// and completes with the eager launches and the host's work.
#pragma once

#include "chalk/engine/overhead.h"
#include "chalk/engine/step_mix.h"
#include "step_ledger.h"

namespace chalk::detail {

/// What step_with computes before the attention core that the core and the step's total
/// need: everything but the core depends only on the step's token counts where no rank
/// loads are taken (StepMemo), so a memo can keep it. `r` holds the graph, kernels, overhead
/// and collectives; `led`, `flops` and `weight_bytes` every operation but the core's.
struct CountedStepPart {
  StepBreakdown r;
  Ledger led;
  double flops = 0;
  Bytes weight_bytes;
  bool overlap = false, low_latency_kernels = false;
  double slow = 1, tokens = 0, q_attention = 1, dp_attention = 1, kv_share = 1, core_flops_share = 1;
  FlopsPerSecond attention_rate;
  BytesPerSecond kv_rate;
  Seconds t_projections, t_shared, t_router, floor, tp_comm, ep_dispatch, ep_combine;
};


/// The busiest unit's share of each part of a step over the mean unit's (1: even), the only
/// things counted_step_part and the attention core read of a mix beyond its counts. Without
/// rank loads, whole sequences over g groups: ceil(S / g) / (S / g). Under data-parallel
/// attention (or KV sharded by batch) with a mix, from rank_loads (dp_ranks.h): the busiest
/// rank's query tokens (attention: projections, router, all-reduce), LM-head rows (head), the
/// busiest FFN group's tokens (ffn), the busiest core unit's attention FLOPs and KV bytes.
struct StepShares {
  double attention = 1, head = 1, ffn = 1, core_flops = 1, kv = 1;
};

/// Checks `s` and `mix` (InputError as engine_step: negative shapes, contexts or chunks, tokens
/// per sequence below 1) and returns the step's shares (overhead.cc).
StepShares step_shares(const Deployment& dep, const StepShape& s, const StepMix* mix);

/// step_with up to the attention core, with the collectives and kernels after it (overhead.cc),
/// for `shares` = step_shares(dep, s, mix) (which checks `s` and `mix`). Reads of a mix only its
/// counts (decodes, chunks, their tokens' sum) and tokens_per_sequence besides the shares, and
/// of the shares core_flops and kv only to keep them in the part.
CountedStepPart counted_step_part(const Deployment& dep, const StepShape& s, const StepMix* mix, bool allow_overlap, const StepShares& shares);

/// The attention core of the step (its KV reads: each sequence's context) and the step's
/// total, on `f`, the counted part of the same step (overhead.cc).
StepBreakdown with_attention_core(const Deployment& dep, const StepShape& s, const StepMix* mix, const CountedStepPart& f);

/// The step of `dep` for the shape `s` (or the batch composition `mix` when non-null) with
/// every mechanism of overhead.h: per-kernel roofline, kernel floors and memory-bound
/// kernels, collectives, expert-parallel traffic; with two overlapped micro-batches where
/// `allow_overlap` and the layout asks for them. No eager launch or host time (engine_step
/// adds them). Units as StepBreakdown's; throws as engine_step.
/// with_attention_core on counted_step_part for `shares` = step_shares(dep, s, mix), the
/// latter kept in mix->memo where set (StepMemo; step_mix.cc).
StepBreakdown step_with(const Deployment& dep, const StepShape& s, const StepMix* mix, bool allow_overlap, const StepShares& shares);

}  // namespace chalk::detail
