// The per-layer terms of a training step that a plan's split of the model and its engine
// settings fix, prepared once outside the layout search's inner loops (docs/training.md,
// "Step"; bench/bench_training.cc).
#pragma once

#include "chalk/training/attention_kernels.h"
#include "chalk/training/kernel_fixed_time.h"
#include "chalk/training/kernels.h"
#include "chalk/training/plan.h"
#include "chalk/training/step.h"

namespace chalk {

/// What training_step reads of one average layer's kernels that depends on the costs, the
/// system and the plan's split (tp, cp, ep, etp, sequence_parallel) and engine settings
/// (compute, fp8_recipe, activation_bytes, dropout, flash_attention, attention_kernel,
/// compile, per_expert_gemms, ep_dispatcher), never on microbatch, recompute,
/// recompute_modules, zero_stage, dp, pp, schedule, virtual_stages or global_batch, which
/// the layout search varies inside (layouts.cc). Every figure is the one training_step
/// computed per plan before (same expressions, same order), so a prepared split gives
/// byte-identical steps.
struct TrainingStepSplit {
  /// The fused attention kernel's forward rate over the chip's attention rate and its
  /// backward's over its forward's (attention_kernels.h flash2_rates; kernels.h
  /// attention_backward_rate_ratio) at s / cp tokens per call; dimensionless.
  AttentionKernelRates attention;
  /// HBM bytes per token of the rank's microbatch per average layer of the memory-bound
  /// kernels: elementwise_bytes + quantize_bytes + rotary_bytes + eager_extra_bytes.
  KernelBytes memory_bound;
  /// HBM bytes per token per average layer the GEMMs' epilogues write (gemm_output_bytes).
  KernelBytes gemm_outputs;
  /// Each kernel's fixed time per average layer, seconds (kernel_fixed_time.h).
  LayerFixedTime fixed;
  /// Parameters this rank holds per average layer: dense / tp + experts / (ep etp), / layers.
  double layer_params = 0;
  /// Parameters of the output head this rank holds: vocab x d_model / tp.
  double head_params = 0;
};

/// The split's terms of `p` (see TrainingStepSplit for the fields it reads). Never throws.
TrainingStepSplit prepare_training_step(const TrainingCosts& c, const TrainingSystem& s, const TrainingPlan& p);

/// training_step with the split's terms prepared (prepare_training_step of a plan with the
/// same split and engine settings as `p`); the same result as training_step(c, s, p,
/// placement, memory), which prepares them itself. Throws as training_step does.
TrainingStep training_step(const TrainingCosts& c, const TrainingSystem& s, const TrainingPlan& p, const Placement& placement,
                           const TrainingMemory& memory, const TrainingStepSplit& split);

}  // namespace chalk
