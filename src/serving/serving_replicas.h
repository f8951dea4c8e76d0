// Internal to the serving library (serving_frontier.cc, serving_points.cc): the replica sizes
// and layouts the frontier and the fast/slow modes compare, resolved against memory, and the
// points and searches read off them (docs/serving.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
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

/// The frontier's point for `dep`'s decode step `s` (its terms, speed and cost per token);
/// `memory_full` marks the batch that fills HBM.
FrontierPoint make_point(const Deployment& dep, const DecodeStep& s, bool memory_full);

/// A point of a pipelined replica whose busiest stage is `stage` (FrontierOptions::
/// pipeline_stages): pipeline_decode's cycle, speed and cost at `batch` sequences of `context`
/// tokens over `stages` stages with every stage busy; the terms of its stage step.
FrontierPoint pipeline_point(const Deployment& stage, int64_t stages, int64_t batch, int64_t context, bool memory_full);

/// A mode point of replica `r` at `batch`: mode_point, or for a pipeline (r.stages > 1)
/// pipeline_point's figures with the stage's step terms and the cycle as its t_step.
ModePoint replica_point(const Replica& r, int64_t batch, int64_t context, const DecodeLevers& lev);

/// Values within this relative difference are ties (compute-bound points on different
/// replica sizes share one cost per token up to rounding).
inline constexpr double kTie = 1e-9;
/// a > b by more than a tie.
bool clearly_more(double a, double b);

/// Orders for the searches: cheaper = more tokens/s per chip, ties (within 1e-9 relative) to
/// the faster; faster = more tokens/s per user, ties to the cheaper.
bool cheaper(const ModePoint& a, const ModePoint& b);
bool faster(const ModePoint& a, const ModePoint& b);

/// The cheapest point at least `per_user` tokens/s per user fast, over every replica (the
/// largest batch that fast on each: speed per user falls with batch); empty if none.
std::optional<ModePoint> cheapest_at_speed(const std::vector<Replica>& reps, int64_t context, const ServingLevers& levers,
                                           const DecodeLevers& lev, TokensPerSecond per_user);

/// The fastest point with tokens/s per chip >= `per_chip` (cost <= budget), over every
/// replica; empty if none (the smallest batch that meets it on each, by bisection).
std::optional<ModePoint> fastest_at_cost(const std::vector<Replica>& reps, int64_t context, const DecodeLevers& lev,
                                         TokensPerSecond per_chip);

/// Each replica at its cheapest batch up to the one that fills its HBM at `context`
/// (cheapest_decode_point; a pipeline at the batch its stages hold).
std::vector<ModePoint> memory_full_points(const std::vector<Replica>& reps, int64_t context, const DecodeLevers& lev);

/// The index of the cheapest of `points` (cheaper()), skipping replicas of `skip_chips`
/// chips; the first of equals; points.size() when every point is skipped.
size_t cheapest_of(const std::vector<ModePoint>& points, int64_t skip_chips = 0);

/// The pipeline stages of a frontier or modes search (FrontierOptions/ModesOptions::
/// pipeline_stages), checked: InputError naming --pp for fewer than 1, or for stages beside
/// speculative drafting or sparse attention (priced without a pipeline).
int64_t checked_stages(int64_t stages, const ServingLevers& levers);

}  // namespace chalk::detail
