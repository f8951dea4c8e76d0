// The best training layout: every plan of a model on a cluster at one global batch and
// sequence length (degrees, schedule, microbatch, recomputation, ZeRO stage), evaluated
// over precomputed per-model costs and ranked (docs/training.md, "Layouts").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chalk/hardware/hardware.h"
#include "chalk/model/model.h"
#include "chalk/training/plan.h"

namespace chalk {

/// A set of pipeline schedules, one bit per PipelineSchedule (bit index = its enum value).
constexpr unsigned schedule_bit(PipelineSchedule s) { return 1u << static_cast<unsigned>(s); }
/// The schedules Megatron-LM ships: get_forward_backward_func picks 1F1B
/// (forward_backward_pipelining_without_interleaving) or, with virtual stages, interleaved
/// 1F1B, and nothing else (NVIDIA/Megatron-LM megatron/core/pipeline_parallel/schedules.py
/// from megatron/schedules.py of 2022 to megatron/core of 2025): no GPipe, ZB-H1, ZB-V or DualPipe, which live in
/// their authors' forks (sail-sg/zero-bubble-pipeline-parallelism, deepseek-ai/DualPipe).
/// The default of the layout search (review finding M0: the default plan was ZB-V, a
/// schedule the engine the step prices does not run).
constexpr unsigned kMegatronSchedules = schedule_bit(PipelineSchedule::one_f_one_b) | schedule_bit(PipelineSchedule::interleaved);
/// Every schedule chalk prices.
constexpr unsigned kAllSchedules = (1u << 6) - 1;
/// "1f1b,interleaved" (any comma-separated subset of parse_schedule's names) or "all" to a
/// set. Throws InputError naming `field`, the unknown name and the names expected, or the
/// empty set.
unsigned parse_schedule_set(std::string_view text, const std::string& field);
/// The set's names, comma-separated, in PipelineSchedule order ("1f1b,interleaved").
std::string schedule_set_string(unsigned schedules);

/// What the search holds fixed.
struct TrainingQuery {
  int64_t chips = 0;         ///< every chip of the cluster
  int64_t global_batch = 0;  ///< sequences per step
  int64_t seq_len = 0;       ///< tokens per sequence
  /// Fields copied into every plan (compute, state bytes, FlashAttention, EP formats,
  /// node-limited routing); degrees, schedule, microbatch, recompute and ZeRO are searched.
  TrainingPlan base;
  int64_t limit = 20;        ///< best plans kept of those that fit, and of those that do not
  /// Pipeline schedules tried when pp > 1 (a one-stage plan has no schedule and is always
  /// tried, as 1F1B): by default Megatron-LM's, the engine the step prices; others only
  /// when asked (kAllSchedules, or the one schedule a command line states).
  unsigned schedules = kMegatronSchedules;
};

/// One plan, compact (no strings), with its figures.
struct TrainingCandidate {
  int32_t dp = 1, tp = 1, pp = 1, cp = 1, ep = 1, microbatch = 1, virtual_stages = 1;
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  Recompute recompute = Recompute::none;
  int8_t zero_stage = 0;
  bool fits = false;
  bool pareto = false;       ///< on the front of step time against memory (no fitting plan is faster with less memory)
  /// Other fitting plans with the same step time (within a relative 1e-9) folded into this
  /// one (issue 30: a ZeRO stage or recomputation that changes nothing is not a different
  /// plan): those with the same memory, and those of the same layout and microbatch (other
  /// ZeRO stage or recomputation) with more memory. This one has the least memory, then is
  /// the simplest (lower degrees, less recomputation, lower ZeRO stage). 0 in `too_big`
  /// and `pareto`.
  int32_t equivalents = 0;
  double t_step_s = 0, mfu = 0, memory_bytes = 0, capacity_bytes = 0;
};

/// The search's answer.
struct TrainingLayouts {
  /// Fastest first, at most query.limit, one per group of equivalent plans (same step time
  /// and memory: TrainingCandidate::equivalents).
  std::vector<TrainingCandidate> fitting;
  std::vector<TrainingCandidate> too_big;   ///< least over capacity first, at most query.limit
  int64_t evaluated = 0, fit = 0;           ///< plans evaluated, of which fit
  /// Valid plans left out because they cross scale-up domains on a system that states no
  /// scale-out bandwidth (its step cannot be priced); when every plan is, the search throws
  /// InputError("hardware") saying so.
  int64_t skipped_no_scale_out = 0;
  std::vector<TrainingCandidate> pareto;    ///< the whole step-time/memory front of the fitting plans, least memory first
};

/// The plan a candidate stands for (query.base with its searched fields).
TrainingPlan plan_of(const TrainingCandidate& c, const TrainingQuery& q);

/// Every valid plan: tp over the divisors of the scale-up domain that split the heads
/// (attention_split rules of check_plan), cp in {1, 2, 4, ...} while seq_len / cp >= 1024,
/// pp over the divisors whose stages split the layers, dp the rest (dividing the global
/// batch), ep over the divisors of the routed experts that divide tp x cp x dp (MoE),
/// each schedule of query.schedules (interleaved with v = 2) when pp > 1, microbatches in powers of two
/// dividing the per-replica batch, recompute none/selective/full, ZeRO 0-3; sequence
/// parallelism whenever tp > 1. Each is evaluated by training_memory and training_step
/// over one make_training_costs; ranked by step time (at a fixed global batch this is
/// also the MFU order), plans of equal step time and memory shown once. Throws InputError for chips, global batch or seq_len < 1, when
/// every valid plan crosses scale-up domains on a system without scale-out bandwidth
/// ("hardware"), or when no plan is valid ("chips").
TrainingLayouts search_training_layouts(const ModelSpec& m, const SystemSpec& s, const TrainingQuery& q);

}  // namespace chalk
