// Which parallel layout serves a model best on n chips (lecture 1:05-1:20: "how do you lay
// out the model on the rack"; Pope et al. 2022 section 3: the best partitioning depends on
// batch size and phase). Every candidate is a set of identical replicas; each replica is
// priced with the mechanisms step of overhead.h (collectives, kernel floor, replicated
// KV of a data-parallel or single-KV-head layout), and its batch is what its memory holds
// (memory_plan, replica-aware) unless the caller fixes it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chalk/hardware/hardware.h"
#include "chalk/model/model.h"
#include "chalk/engine/overhead.h"
#include "chalk/engine/roofline.h"

namespace chalk {

/// The mean context of a steady state in which every request brings `prompt` tokens and
/// decodes `output`: the running sequences sit evenly over their outputs, so the decode
/// step reads prompt + output / 2 tokens per sequence (integer division; MLPerf's Llama 2
/// 70B offline, 512 + 290 / 2 = 657). Throws InputError when either is negative.
int64_t steady_state_context(int64_t prompt, int64_t output);

/// What the search ranks by.
enum class LayoutObjective {
  throughput,  ///< most decode tokens/s per chip (offline serving, cost per token)
  latency,     ///< shortest decode step (fastest tokens/s per user)
};
std::string_view to_string(LayoutObjective o);

/// The serving point every candidate is priced at.
struct LayoutQuery {
  int64_t n_chips = 1;   ///< chips available; replicas of every divisor of it are tried
  int64_t context = 0;   ///< KV tokens each decode sequence reads (tokens)
  /// Steady-state continuous batching: each step also prefills batch / output prompts of
  /// `prompt` new tokens (the requests that replace finished ones). 0 = pure decode.
  int64_t prompt = 0;
  int64_t output = 0;
  /// Sequences over all n_chips (a whole number), split over the replicas: the busiest
  /// runs ceil(batch / replicas), and tokens/s per chip counts `batch` sequences over all
  /// n_chips. 0 = each replica runs the largest batch its HBM holds at `context`, at most
  /// max_batch (throughput only).
  double batch = 0;
  double max_batch = 1e6;  ///< cap on one replica's batch when batch = 0
  /// KV tokens each sequence holds for the batch the HBM admits when batch = 0: 0 =
  /// `context` (blocks taken as tokens arrive); prompt + output for an engine that reserves
  /// a request's whole KV at admission (TensorRT-LLM's GUARANTEED_NO_EVICT). The step
  /// still reads `context` tokens per sequence.
  int64_t admitted_context = 0;
  /// The steady state's prompts run whole, one step each (no chunked prefill: TensorRT-LLM's
  /// default), instead of riding in every step (steady_state_step, step_mix.h).
  bool whole_prompts = false;
  LayoutObjective objective = LayoutObjective::throughput;
};

/// One candidate: `replicas` copies of the model, each on `replica_chips` chips.
struct LayoutCandidate {
  int64_t replica_chips = 0;
  int64_t replicas = 0;
  /// Pipeline stages of a replica (engine/pipeline.h): 1, or pp stages of replica_chips / pp
  /// chips each, one scale-up domain per stage, with pp microbatches in flight.
  int64_t pp = 1;
  ParallelLayout layout;  ///< resolved for one replica
  std::string name;       ///< e.g. "TP2 x 4 replicas", "DP-attention EP32, two micro-batches"
  bool fits = false;
  std::string reason;     ///< why it does not fit (empty when it does)
  double batch = 0;       ///< sequences per replica
  /// One replica's step (mechanisms). A pipeline (pp > 1): the busiest stage's step on one
  /// microbatch, with t_step the pipeline's cycle, the time between two tokens of a
  /// sequence (PipelineDecode::cycle).
  StepBreakdown step;
  /// Decode tokens/s per chip: batch / t_step / replica_chips when memory sets the batch;
  /// query batch / t_step / n_chips when the query fixes it.
  double tokens_per_s_per_chip = 0;
  double tokens_per_s_per_user = 0;  ///< 1 / t_step (tokens/s)
};

/// Why engines run none of the layouts search_layouts tries on one replica of `n` chips, or
/// "" when they run one (layout_split_problem; memory aside), else the problem of the first
/// candidate (TP over all n). The planner's sizes take this rule, the default chip count
/// (smallest_replica_chips) the same rule with memory. A dense model needs n to split every
/// FFN width (its attention then runs over the largest degree that splits the heads, in
/// n / t data-parallel groups, the FFN over all n: Pope et al. 2022); an MoE model always
/// has data-parallel attention with its experts over EP n. Llama 3.1 8B (32 heads, FFN
/// 14336 = 2^11 x 7) within 8 chips: 1, 2, 4, 7 (attention TP1 x 7, FFN TP7), 8; 3: "TP3
/// does not divide the 32 attention heads" (and attention TP1 x 3 leaves FFN TP3 14336 / 3).
std::string replica_size_problem(const ModelSpec& m, int64_t n);

/// Prices every candidate layout of `q.n_chips` chips and returns them best first (those
/// that fit before those that do not). Candidates per replica size r (every divisor of
/// n_chips): dense models, tensor parallel over r (attention and FFN), and when r cannot
/// split the heads, attention over the largest degree that can with the FFN over r; MoE models,
/// attention and experts both over r (attention TP r, EP r), and data-parallel attention
/// with EP r, without and with two micro-batches overlapping the expert all-to-all
/// (SGLang/DeepSeek). Pure decode queries (no prompt) also try pipelines across scale-up
/// domains (lecture 47:12-1:18:33): a replica of r chips, r a multiple of the domain d above
/// it, as r / d stages of one domain each (the first layout above for d chips on the
/// stage's layers: pipeline_stage_model), r / d microbatches in flight, priced by
/// pipeline_decode; the replica holds the batch its busiest stage's HBM holds. A model that
/// does not fit one domain then gets a pipelined layout ranked; one that fits gains
/// capacity, never speed. A layout engines refuse does not fit (layout_split_problem: a
/// tensor-parallel degree that does not divide the attention heads, or neither divides nor
/// is a multiple of the KV heads; an FFN degree that does not split the FFN or
/// shared-expert width). `base` supplies formats, efficiencies and the reserve; its
/// mechanisms are switched on and its layout replaced. Throws InputError when n_chips is
/// outside 1..2^20, context, prompt or output < 0, batch is not a whole number in 0..1e9
/// or is 0 under the latency objective, or base is invalid for the model and system
/// (make_deployment's errors: efficiencies, compute class, reserve).
std::vector<LayoutCandidate> search_layouts(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base,
                                            const LayoutQuery& q);

}  // namespace chalk
