// Internal to serving_frontier.cc: the replica sizes and layouts the frontier and the
// fast/slow modes compare, resolved against memory (docs/serving.md).
#pragma once

#include <cstdint>
#include <vector>

#include "chalk/engine/default_layout.h"
#include "chalk/engine/roofline.h"
#include "chalk/serving/serving.h"

namespace chalk::detail {

/// One replica that fits, resolved: a size and a layout.
struct Replica {
  Deployment dep;
  int64_t max_batch = 0;  ///< memory-full batch at the context (capped)
  /// Pipeline stages (FrontierOptions::pipeline_stages): `dep` is then the busiest stage
  /// and max_batch every sequence in flight through the stages.
  int64_t stages = 1;
};

/// Why the frontier does not sweep a replica of `m` on `n` chips by default, or "" when it
/// does (issue 12): tensor parallelism over all n chips splits whole heads
/// (attention_split_problem: vLLM and SGLang assert heads % tp == 0) and whole FFN and
/// shared-expert columns (vLLM's column-parallel layers), or an MoE model's routed experts
/// spread evenly and whole over the n chips under data-parallel attention (SGLang's
/// --enable-dp-attention --ep-size n). A sampling of the sizes, never a refusal: every size
/// it keeps the layout search also runs (replica_size_problem, layout_search.h, which adds
/// attention over fewer chips than the FFN and experts spread unevenly), and
/// --replica-chips takes any. Llama 3.1 8B (32 heads, 8 KV heads, FFN 14336) within an
/// 8-GPU domain: 1, 2, 4, 8; DeepSeek-V3 (128 heads, 256 experts) within 72: 1, 2, 4, 8,
/// 16, 32, 64.
std::string sweep_size_problem(const ModelSpec& m, int64_t n);

/// The replica sizes asked for (every one, runnable or not: the user asked), or else every
/// size from 1 to the scale-up domain the frontier sweeps (sweep_size_problem); sorted and
/// unique. Throws InputError (naming --replica-chips) for a size outside 1..max_chips (2^20).
std::vector<int64_t> replica_sizes(const ModelSpec& m, const SystemSpec& s, const std::vector<int64_t>& asked);

/// Resolves every replica size and layout variant (the options' own; with mechanisms, a
/// derived layout and an MoE model, also data-parallel attention). Sizes whose weights, or
/// one sequence's KV, do not fit go to `excluded` with the reason; when no size can even be
/// placed, the options' own InputError is thrown.
std::vector<Replica> resolve_replicas(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base,
                                      const std::vector<int64_t>& sizes, int64_t context, int64_t cap,
                                      std::vector<ExcludedReplica>& excluded);

/// One decode step of `dep` at `batch` sequences of `context` tokens as a point of the
/// fast/slow modes and of cheapest_replica_at_speed: the replica, its layout, the step and
/// its speed and cost per token (decode_step).
ModePoint mode_point(const Deployment& dep, int64_t batch, int64_t context, const DecodeLevers& lev);

}  // namespace chalk::detail
