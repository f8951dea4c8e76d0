// Internal to the engine: what one drafter pass costs inside a decode step (roofline.h,
// DecodeLevers::drafter; docs/formulas.md, "Speculative decoding and MTP").
#pragma once

#include <cstdint>

#include "chalk/engine/roofline.h"

namespace chalk::detail {

/// One pass of the drafter over `batch` sequences, each attending `context` tokens.
struct DraftPass {
  double flops = 0;                ///< over the replica
  double weight_bytes_total = 0;   ///< distinct weight bytes read, all chips
  double weight_bytes_busiest = 0; ///< on the busiest chip (routed experts whole, moe.h)
  double kv_bytes = 0;             ///< over the replica
  double kernels = 0;              ///< dependent kernels of the pass
};

/// MTP: one module (Deployment::mtp) at `batch` tokens: the block's attention over its
/// group's window, its routed experts touched by `batch` tokens. A draft model:
/// DraftModelCost scaled by the batch, its weights spread evenly over the chips. Zero for
/// Drafter::none. `by_layout` (the engine step; needs d.mechanisms.enabled) shards the MTP
/// module's weights by the resolved layout as the main model's layers are; otherwise they
/// are spread evenly over the chips (the plain roofline).
DraftPass draft_pass(const Deployment& d, const DecodeLevers& l, double batch, int64_t context, bool by_layout = false);

/// One pass at the deployment's achievable rates: max(FLOPs / (n F eff), (busiest chip's
/// weight bytes x n + KV bytes) / (n W eff)), the roofline of the pass alone.
Seconds draft_pass_time(const Deployment& d, const DraftPass& p);

/// The drafter's time in an engine step (d.mechanisms.enabled): tokens_per_sequence - 1
/// sequential passes over `batch` sequences at `context`, each draft_pass_time of the pass
/// sharded by the layout plus its kernels x op_floor (the GPU kernel floor, or the chip's own
/// fixed time per op). 0 for Drafter::none or no drafts. decode_step and the mixed step
/// (step_mix.cc) both add it to the verify step, so that the simulator's batch-1 step is
/// decode's (docs/formulas.md, "Speculative decoding and MTP").
Seconds engine_draft_time(const Deployment& d, const DecodeLevers& l, double batch, int64_t context);

/// Deployment::mtp for model `m` in formats `f`, its routed experts being moe[i] when the
/// last layer group is an MoE group (make_deployment fills moe first).
Deployment::MtpModule mtp_module(const ModelSpec& m, const WeightFormats& f, const std::vector<Deployment::MoeGroup>& moe);

}  // namespace chalk::detail
