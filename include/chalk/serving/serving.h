// Serving economics on top of the decode roofline (lecture 0:00-27:38; DESIGN.md section
// 1, "Fast and slow modes"; docs/formulas.md, section "serving"): sweeps of step time,
// speed and cost against batch and context with every term kept apart; balance points
// solved from the step function; the batching window; the latency-cost frontier over
// batch and chips per replica; and the fast- and slow-mode answers read off it.
//
// Every function here is pure: it calls decode_step / memory_plan (roofline.h) and does
// no I/O. Units live in the types (units.h) or in the names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "chalk/hardware/hardware.h"
#include "chalk/model/model.h"
#include "chalk/engine/roofline.h"
#include "chalk/base/units.h"
#include "chalk/serving/serving_levers.h"

namespace chalk {

// The levers (speculative decoding, MTP, sparse attention): serving_levers.h.

// ---------------------------------------------------------------------------------------
// Sweeps (lecture 7:46-15:30: the latency plot and the cost plot against batch).

/// Batch sizes 1, 2, 4, ... up to `hi` (and `hi` itself when it is not a power of two),
/// starting at the first power of two >= `lo`. Throws InputError("--batch") unless
/// 1 <= lo <= hi.
std::vector<int64_t> powers_of_two(int64_t lo, int64_t hi);

/// Every integer lo..hi. Throws InputError("--batch") unless 1 <= lo <= hi and the range
/// holds at most 1,048,576 values.
std::vector<int64_t> every_integer(int64_t lo, int64_t hi);

/// Cost per token of each term of a step: n x price x T_term / (B x tokens kept), for
/// T_compute, T_weights, T_kv, T_comm and T_overhead, and the total (n x price x T_step /
/// (B x kept)). The total is not the sum: T_step = max(T_compute, T_weights + T_kv) +
/// T_comm + T_overhead. Empty when the deployment has no price. Divided by B, the constant
/// weight term becomes the hyperbola and the terms linear in B become floors (lecture
/// 13:30-14:44).
struct TermCosts {
  UsdPerToken compute, weights, kv, comm, overhead, total;
};
std::optional<TermCosts> term_costs(const Deployment& d, const DecodeStep& step);

/// One point of a sweep: a decode step and whether it fits in HBM.
struct ServingPoint {
  int64_t batch = 0;            ///< sequences
  int64_t context = 0;          ///< tokens in each sequence's KV cache
  int64_t tokens_read = 0;      ///< KV tokens each query reads (context, or the sparse k)
  DecodeStep step;              ///< every term: t_compute, t_weights, t_kv, t_comm, t_overhead, t_step
  std::optional<TermCosts> cost;
  bool fits = false;            ///< weights + KV + reserve <= HBM of the replica
  int64_t max_batch = 0;        ///< largest batch that fits at this context (INT64_MAX: no KV)
};

/// decode_step and memory_plan at every (batch, context) pair, contexts outer, batches
/// inner, each with the levers resolved at its context. Throws InputError for a batch < 1,
/// a context < 0 or bad levers (validate()).
std::vector<ServingPoint> serving_sweep(const Deployment& d, const std::vector<int64_t>& batches,
                                        const std::vector<int64_t>& contexts, const ServingLevers& levers = {});

// ---------------------------------------------------------------------------------------
// Balance points (lecture 10:43-11:25 and 15:53-19:52).

/// Balance points of a deployment, solved from decode_step (so MoE expert touching, the
/// busiest chip under expert parallelism, attention FLOPs, sliding windows and the levers
/// all count), next to the lecture's closed form.
struct BalancePoints {
  int64_t context = 0;  ///< tokens, for the "with KV" figures
  /// B* = N_read b_w F / (2 N_active W) at peak F, W (lecture 15:53; roofline.h), with
  /// N_read the weights a step reads (every weight but an untied input embedding, which
  /// no step reads whole), b_w their mean stored bytes and N_active the matmul
  /// parameters. Llama 3.1 8B bf16 on H100: 7.505e9 x 2 x 989.4 / (2 x 7.505e9 x 3.35)
  /// = 295.
  double lecture_batch_peak = 0;
  /// The same with the achievable F x eff_mm and W x eff_hbm the deployment uses.
  double lecture_batch_effective = 0;
  /// Smallest integer B with T_compute >= T_weights at context 0 (no KV, no attention).
  std::optional<int64_t> batch_without_kv;
  /// Smallest integer B with T_compute >= T_weights + T_kv at `context`; empty when
  /// reading one sequence's KV takes at least as long as its compute, so no batch is
  /// compute-bound (lecture 11:00: "really sensitive to the context length").
  std::optional<int64_t> batch_with_kv;
  /// Smallest context at which one sequence's KV read takes as long as its compute: beyond
  /// it, decode stays memory-bound at every batch. Empty if none up to 2^30 tokens.
  std::optional<int64_t> context_never_compute_bound;
  /// Batch for the crossover below, and the smallest context at which T_kv >= T_weights at
  /// that batch (KV fetch overtakes weight fetch). Empty if none up to 2^30 tokens (a
  /// sparse top-k or sliding windows can cap the KV read).
  int64_t crossover_batch = 0;
  std::optional<int64_t> kv_overtakes_weights_context;
};

/// Solves the balance points by doubling and bisection on integers (the MoE terms make
/// the step non-linear in B). `crossover_batch` >= 1. Throws InputError for context < 0,
/// crossover_batch < 1 or bad levers.
BalancePoints balance_points(const Deployment& d, int64_t context, int64_t crossover_batch,
                             const ServingLevers& levers = {});

// ---------------------------------------------------------------------------------------
// The batching window (lecture 21:51-27:38).

/// How often "the train departs" and what a full train carries.
struct BatchingWindow {
  int64_t context = 0;
  /// HBM capacity / peak bandwidth of one chip: the time to read all of HBM once
  /// (lecture 22:44: tens of milliseconds on every HBM generation).
  Seconds hbm_sweep_peak;
  /// The same at the achievable bandwidth (W x eff_hbm).
  Seconds hbm_sweep_effective;
  bool weights_fit = false;
  /// The largest batch whose KV fits beside the weights and reserve at `context`: the
  /// sequences one replica can hold (0 when the weights do not fit; capped at 2^24).
  int64_t max_batch_at_context = 0;
  /// The decode step at that batch: a memory-bound step then reads (almost) all of HBM,
  /// so T_step ~ (1 - reserve) x hbm_sweep_effective.
  std::optional<DecodeStep> step;
  double steps_per_second = 0;               ///< 1 / T_step
  TokensPerSecond replica_tokens_per_s;      ///< B x kept / T_step (lecture 27:00: 2,000 x 64 = 128k)
  TokensPerSecond tokens_per_s_per_user;     ///< kept / T_step
};

/// The batching window of a deployment at `context`. Throws InputError for context < 0 or
/// bad levers.
BatchingWindow batching_window(const Deployment& d, int64_t context, const ServingLevers& levers = {});

/// Tokens per second of a deployment that runs `batch` sequences per step, one step every
/// `step` seconds: batch / step (lecture 26:15-27:00: 2,000 x 64 steps/s = 128,000 tok/s).
/// Throws InputError("--batch") for batch < 0 or a non-positive step.
TokensPerSecond deployment_tokens_per_s(double batch, Seconds step);

// ---------------------------------------------------------------------------------------
// The latency-cost frontier (DESIGN.md section 1, "Fast and slow modes").

struct FrontierOptions {
  int64_t context = 4096;                 ///< tokens in each sequence's KV cache
  std::vector<int64_t> batches;           ///< candidate batches (empty: powers of two 1..65,536)
  /// Chips per replica to try (empty: every size 1..scale-up domain that a serving engine
  /// can run, whole heads or whole experts per chip (issue 12; serving_replicas.h): an expert layer's
  /// all-to-all and a TP all-reduce stay on the scale-up network, lecture 36:27).
  std::vector<int64_t> replica_chips;
  ServingLevers levers;
  /// The largest batch at which each replica fills its HBM is added to the candidates,
  /// so the frontier reaches the cost floor.
  bool add_memory_full_batch = true;
  /// Pipeline stages of every replica (engine/pipeline.h): 1, or the model cut into this
  /// many stages (pipeline_stage_model), each stage on `replica_chips` chips (the sizes are
  /// then per stage, 1..scale-up domain), as many microbatches in flight as stages, each
  /// point priced by pipeline_decode. What a model that no scale-up domain holds runs on
  /// (Llama 3.1 405B bf16 on H100: PP2 x TP8, as `chalk layouts` ranks it). Levers (drafts,
  /// sparse attention) are priced without a pipeline: InputError("--pp").
  int64_t pipeline_stages = 1;
};

/// One (chips per replica, batch) point.
struct FrontierPoint {
  int64_t n_chips = 0;
  int64_t batch = 0;
  std::string layout;  ///< with mechanisms, the replica's parallel layout (describe_layout); empty for the roofline
  bool memory_full = false;       ///< the batch that fills HBM at this context
  Seconds t_compute, t_weights, t_kv, t_comm, t_overhead, t_step;
  Seconds t_host;  ///< the engine's host work for the step (DecodeStep::t_host)
  Bound bound = Bound::compute;
  TokensPerSecond tokens_per_s_per_user;   ///< kept / T_step
  TokensPerSecond tokens_per_s_per_chip;   ///< B x kept / T_step / n
  std::optional<UsdPerToken> cost_per_token;
  bool on_frontier = false;
  /// Pipeline (FrontierOptions::pipeline_stages > 1; else pp 1, one microbatch of `batch`,
  /// t_stage = t_step, no hop): n_chips counts every stage's chips, batch every sequence in
  /// flight, the t_compute..t_host terms are the busiest stage's on one microbatch, t_step
  /// is the cycle a user waits between tokens (PipelineDecode::cycle).
  int64_t pp = 1, microbatches = 1, microbatch = 0;
  Seconds t_stage, t_hop, t_pass;
  double stage_busy = 1;
};

/// A replica size left out, and why (the weights and the reserve exceed its HBM).
struct ExcludedReplica {
  int64_t n_chips = 0;
  std::string reason;
};

struct Frontier {
  int64_t context = 0;
  bool has_price = false;
  std::vector<FrontierPoint> points;     ///< every point that fits in HBM
  std::vector<FrontierPoint> frontier;   ///< the Pareto set, tokens/s per user ascending
  std::vector<ExcludedReplica> excluded;
  int64_t points_beyond_memory = 0;      ///< candidate points dropped because KV did not fit
};

/// The Pareto frontier of tokens/s per user against cost per token over batch size and
/// chips per replica. A point is on it when no other point is at least as fast and
/// strictly cheaper, or strictly faster and as cheap. Cost per token = price / (tokens/s
/// per chip), so the frontier in cost is the frontier in tokens/s per chip and exists
/// without a price. Along `frontier`, speed and cost both rise strictly. `base` supplies
/// formats, efficiencies and price; its n_chips is ignored. Throws InputError for bad
/// options (context < 0, a batch < 1, a replica size < 1, more than 8,000,000 candidate
/// points, bad levers) or from make_deployment.
Frontier latency_cost_frontier(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base,
                               const FrontierOptions& o);

// ---------------------------------------------------------------------------------------
// Fast and slow modes (the lecture's opening question, 0:00-1:40).

struct ModesOptions {
  int64_t context = 4096;
  std::vector<int64_t> replica_chips;     ///< empty: 1..scale-up domain
  ServingLevers levers;
  /// Speed multiples to price (the lecture: Claude's fast mode sells 2.5x the speed for 6x
  /// the price).
  std::vector<double> speed_multiples = {2.5};
  /// Price multiples to spend (6x as sold; 100x as the lecture asks).
  std::vector<double> price_multiples = {6, 100};
  /// The baseline: empty = the fastest point whose cost is within
  /// `baseline_cost_tolerance` of the cost floor within HBM (providers price near cost,
  /// lecture 1:41:22, and "the train" departs full; where the floor is compute-bound many
  /// replica sizes share it and the fastest of them is the natural standard mode); else
  /// the cheapest point at least this fast (tokens/s per user).
  std::optional<double> baseline_tokens_per_s_per_user;
  double baseline_cost_tolerance = 0.01;  ///< fraction above the floor cost (0..1)
  int64_t max_batch = 1 << 24;            ///< cap on batch when KV is tiny
  /// Pipeline stages of every replica, as FrontierOptions::pipeline_stages: the answers'
  /// points are then whole pipelines (chips of every stage, the cycle as their step).
  int64_t pipeline_stages = 1;
};

/// A chosen operating point.
struct ModePoint {
  int64_t n_chips = 0;
  int64_t batch = 0;
  std::string layout;  ///< with mechanisms, the replica's parallel layout; empty for the roofline
  DecodeStep step;
  TokensPerSecond tokens_per_s_per_user;
  TokensPerSecond tokens_per_s_per_chip;
  std::optional<UsdPerToken> cost_per_token;
  int64_t memory_full_batch = 0;  ///< HBM's batch when chosen up to it (cheapest_batch.h), else 0
  /// Pipeline stages (ModesOptions::pipeline_stages): n_chips then counts every stage's, the
  /// step's terms are the busiest stage's on one microbatch and step.t_step the cycle.
  int64_t pp = 1;
};

/// The cheapest point at least `speed_multiple` x the baseline's speed.
struct PriceForSpeed {
  double speed_multiple = 0;
  std::optional<ModePoint> point;   ///< empty: faster than any point
  double price_multiple = 0;        ///< cost / baseline cost (0 when unreachable)
};

/// The fastest point costing at most `price_multiple` x the baseline's cost per token.
struct SpeedForPrice {
  double price_multiple = 0;
  ModePoint point;
  double speed_multiple = 0;        ///< speed / baseline speed
  double price_multiple_used = 0;   ///< the point's cost / baseline cost (<= price_multiple)
  bool capped_by_fastest = false;   ///< the budget exceeds the fastest point's cost
  /// The budget is below the cost floor: nothing fits it, and `point` is the cost floor
  /// (which costs more than the budget).
  bool below_floor = false;
};

struct ModesReport {
  int64_t context = 0;
  bool has_price = false;
  std::string baseline_rule;
  ModePoint baseline;
  std::vector<PriceForSpeed> fast;       ///< one per speed multiple
  std::vector<SpeedForPrice> budget;     ///< one per price multiple
  ModePoint fastest;                     ///< batch 1 on the replica that is fastest
  double max_speed_multiple = 0;         ///< fastest / baseline speed
  double price_multiple_at_fastest = 0;  ///< fastest / baseline cost
  /// What bounds the fastest point: its dominant term, the chips it uses of the scale-up
  /// domain, MoE expert imbalance, communication if modelled. One paragraph for people.
  std::string what_stops_it;
  ModePoint cheapest;                    ///< the cost floor within HBM
  /// The floor of the hyperbola: as B -> infinity the weight term vanishes and the cost
  /// per token tends to n price x (the per-sequence slope of T_step) / kept: for the
  /// roofline max(T_compute, T_kv) / B (lecture 14:44); with mechanisms each operation's
  /// linear term and the traffic's. Evaluated on the cheapest point's replica as
  /// (T(2M) - T(M)) / M with M a multiple of its chips far past any batch that fits, so
  /// bounded terms and whole-sequence rounding drop out. Expressed in tokens/s per chip
  /// (its inverse times the price is the cost).
  TokensPerSecond asymptotic_tokens_per_s_per_chip;
  std::optional<UsdPerToken> asymptotic_cost_per_token;
  double floor_gap = 0;                  ///< cheapest cost / asymptotic floor (>= 1)
  double slow_price_multiple = 0;        ///< cheapest cost / baseline cost (<= 1)
  double slow_speed_multiple = 0;        ///< cheapest speed / baseline speed
  std::vector<ExcludedReplica> excluded;
};

/// Fast- and slow-mode answers, solved exactly from the step function: for a fixed
/// replica both speed per user and cost per token fall as the batch grows (T_step does not
/// fall, T_step / B does not rise), so the best batch for a speed or price target is found
/// by bisection on each replica size, and the best replica by comparison. Throws
/// InputError for non-positive multiples (--speed-multiple, --price-multiple), a
/// baseline speed that is not positive or that no point reaches
/// (--baseline-tok-per-s-per-user), no replica that fits (--replica-chips), or what
/// latency_cost_frontier throws.
ModesReport fast_and_slow_modes(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base,
                                const ModesOptions& o);

/// The largest batch in [1, max_batch] whose tokens/s per user is at least `per_user`
/// (bisection; speed per user does not rise with batch); 0 if even batch 1 is slower.
int64_t largest_batch_at_speed(const Deployment& d, int64_t context, const ServingLevers& levers,
                               TokensPerSecond per_user, int64_t max_batch);

// ---------------------------------------------------------------------------------------
// The default deployment (issue 30: a newcomer's headline must be one an operator would run).

/// The replica a command prices when the user states no chips: the cheapest point within
/// HBM over every replica size the frontier sweeps (1..scale-up domain, serving_replicas.h)
/// and its layouts, each at its cheapest batch within HBM at `context` (the cost floor
/// fast_and_slow_modes names `cheapest`: cheapest_batch.h); ties within a
/// relative 1e-9 in tokens/s per chip go to the faster point. Cost is compared as tokens/s
/// per chip, so the choice exists without a price.
struct ReplicaChoice {
  ModePoint choice;                    ///< the chosen replica at its cheapest batch (cheapest_decode_point)
  Deployment deployment;               ///< that replica, ready to price any batch
  /// The cheapest point on any other replica size: what the choice beat, and by how much.
  std::optional<ModePoint> runner_up;
  std::vector<int64_t> replica_sizes;  ///< the sizes compared (those that fit and those that did not)
  std::vector<ExcludedReplica> excluded;
};

/// Throws InputError("--replica-chips") when no replica size within the scale-up domain
/// holds the weights and one sequence of `context` tokens, or what latency_cost_frontier
/// throws for bad options. `base` supplies formats, efficiencies, price and the layout
/// (derived layouts are searched as the frontier does); its n_chips is ignored.
ReplicaChoice cheapest_replica(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base, int64_t context,
                               const ServingLevers& levers = {});

// ---------------------------------------------------------------------------------------
// End to end: prefill plus decode of a static batch.

struct EndToEnd {
  int64_t batch = 0, input_tokens = 0, output_tokens = 0;
  PrefillStep prefill;          ///< all B prompts in one chunk
  DecodeStep mean_step;         ///< at the mean context input + output / 2
  double decode_steps = 0;      ///< output / tokens kept per step
  Seconds t_total;              ///< prefill + decode_steps x mean step
  TokensPerSecond output_tokens_per_s;  ///< B x output / t_total
};

/// A batch of `batch` requests of `input_tokens` prompt and `output_tokens` output run to
/// completion together: TTFT = prefill_step(B, input); then output/kept decode steps whose
/// KV grows linearly, so their mean is the step at context input + output/2 (exact when
/// T_kv is linear in S, as without sliding windows). An upper bound on the output
/// throughput of continuous batching at the same batch. Throws InputError for batch < 1,
/// input < 1, output < 1, bad levers.
EndToEnd end_to_end(const Deployment& d, int64_t batch, int64_t input_tokens, int64_t output_tokens,
                    const ServingLevers& levers = {});

}  // namespace chalk
