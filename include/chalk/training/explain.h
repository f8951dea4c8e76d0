// Every number explains itself (issue 18), for training: how a plan's step time, bubble
// fraction, throughput and MFU, and its memory per chip (activations above all) are
// computed, in the vocabulary of chalk/engine/explain.h. `chalk train step --explain` and
// `chalk train memory --explain` print them; with --json (and in `chalk web`'s API) they
// are the "explanations" array the page shows when a number is clicked.
#pragma once

#include <vector>

#include "chalk/engine/explain.h"
#include "chalk/training/memory.h"
#include "chalk/training/plan.h"
#include "chalk/training/step.h"

namespace chalk {

/// The step's headline figures (training_step; docs/training.md, "Step"): t_step_s =
/// m (t_f + t_b) + bubble + exposed DP reduce + optimizer; bubble_fraction = bubble /
/// (m (t_f + t_b)) with the schedule's bubble ((p - 1)(t_f + t_b) for 1F1B, Narayanan et
/// al. 2021; zero for ZB-V; Qi et al. 2023); tok_per_s = global batch x sequence / t_step;
/// mfu = model FLOPs / (t_step x chips x bf16 dense peak) with model FLOPs 3 x (2 N_active
/// + causal attention) per token (PaLM appendix B). Results equal `chalk train step
/// --json`'s "step".
std::vector<Explanation> explain_training_step(const TrainingSystem& s, const TrainingPlan& p, const Placement& pl, const TrainingStep& st);

/// Memory per chip (training_memory; docs/training.md, "Memory"): weights, gradients and
/// optimizer states (bytes per parameter over the ZeRO shard), activations_gb =
/// per layer per microbatch x layers per stage x microbatches in flight (Korthikanti et
/// al. 2022 section 4), and memory_gb against the HBM per chip. Results equal `chalk
/// train memory --json`.
std::vector<Explanation> explain_training_memory(const TrainingPlan& p, const Placement& pl, const TrainingMemory& m);

}  // namespace chalk
