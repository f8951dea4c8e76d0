// Memory per chip of a training plan: model states (weights, gradients, optimizer states)
// sharded by ZeRO stage, experts and pipeline stages, and stored activations under the
// schedule's microbatches in flight. Formulas: docs/training.md, "Memory";
// training-and-systems.md sections 2-4.
#pragma once

#include <cstdint>
#include <string>

#include "chalk/base/units.h"
#include "chalk/training/plan.h"
#include "chalk/training/step.h"

namespace chalk {

/// Stored activation bytes of one average layer for one microbatch on one chip
/// (Korthikanti et al. 2022, arXiv 2205.05198, section 4 and Table 2, with the
/// per-component constants of TrainingCosts): with A = replicated + sharded bytes per token
/// and S = scores bytes per attended token, s' = s / cp tokens per rank, b the microbatch:
/// - none:      b s' (R + (A - R)/t + S s / t) without SP (Eq. 2: sbh(10 + 24/t + 5as/(ht))),
///              b s' (A + S s) / t with SP (Eq. 4);
/// - selective: the same without the S term (Table 2, Eq. 6: 34 sbh/t);
/// - full:      b s' h x activation bytes, / t with SP (the layer input only, Table 2).
/// FlashAttention stores no scores (S = 0). Without dropout (plan.dropout false) the masks
/// are not stored: R less 2h (TrainingCosts::act_dropout_per_token) and S less 3a per
/// attended token (act_scores_dropout_per_token_per_ctx): Eq. 2 becomes sbh(8 + 24/t + 2as/(ht)).
/// Bytes scale with plan.activation_bytes / 2.
Bytes activation_bytes_per_layer(const TrainingCosts& c, const TrainingPlan& p, Recompute r);

/// Microbatches whose activations the first stage holds at its peak
/// (training-and-systems.md 4.1, 2.2): no pipeline 1; GPipe m; 1F1B and ZB-H1 min(p, m);
/// interleaved p (1 + (p-1)/(p v)), times m/p when m < p (Korthikanti 4.2.3); ZB-V p
/// (the same as 1F1B: Qi et al. 2023); DualPipe p + 1 (DeepSeek-V3 Table 2). In
/// microbatches of one stage's layers.
double microbatches_in_flight(PipelineSchedule s, int64_t p, int64_t m, int64_t v);

/// Memory of the busiest (first) stage's chip.
struct TrainingMemory {
  double params_per_chip = 0;  ///< parameters the chip's stage holds before ZeRO sharding (dense / tp + experts / (ep x etp))
  double dense_params_per_chip = 0, expert_params_per_chip = 0;  ///< its two parts (the data-parallel groups differ)
  Bytes weights, gradients, optimizer;  ///< after ZeRO sharding
  Bytes zero3_buffers;         ///< ZeRO-3: two layers' gathered weights (the one computing and the one prefetched)
  Bytes activations_per_layer; ///< per microbatch, as stored
  double microbatches_in_flight = 0;
  Bytes activations;           ///< stored: per layer x layers per stage x in flight (+ output layer when pp = 1)
  Bytes activation_working;    ///< one layer's full activations live during its backward (full recompute, reversible)
  Bytes total, capacity;
  bool fits = false;
};

/// Memory per chip (ZeRO, Rajbhandari et al. 2020 sections 5.1-5.3): weights, gradients
/// and optimizer states at plan.state bytes per parameter, dense parameters over tp (the
/// input embedding on the first stage, or both tables when pp = 1), routed experts over
/// ep x etp, layers over pp (DualPipe holds two stages: 2x); ZeRO-1 shards the optimizer,
/// ZeRO-2 also the gradients, ZeRO-3 also the weights over the data-parallel ranks (dp x
/// cp for dense parameters, tp x cp x dp / (ep x etp) for experts). Activations:
/// activation_bytes_per_layer x layers per stage x microbatches_in_flight; reversible
/// layers store none; full recomputation and reversible layers add one layer's working set;
/// with pp = 1 the output layer and loss add 4 s b h (1 + V/h) / t bytes (Megatron
/// theoretical_memory_usage.py). Fits when total <= HBM capacity.
TrainingMemory training_memory(const TrainingCosts& c, const TrainingSystem& s, const TrainingPlan& p, const Placement& pl);

/// The largest microbatch (sequences) that fits and divides the per-replica batch
/// global_batch / dp, keeping every other field of the plan; 0 when none does.
int64_t largest_microbatch(const TrainingCosts& c, const TrainingSystem& s, TrainingPlan p);

}  // namespace chalk
