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
/// the layout search varies inside (layouts.cc). Each divisor is taken once here, so a
/// plan's step multiplies: its figures differ from dividing per plan in the last bits only
/// (bench/bench_training.cc).
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
  /// Seconds per token of the microbatch of one average layer's GEMMs at the matmul rate
  /// (before the shape factors): (matmul - LM head FLOPs per token) / (layers x tp x cp x
  /// matmul rate); of its attention core forward at the kernel's rate:
  /// attention_core_flops_per_token / (layers x tp x cp x attention rate x attention.forward);
  /// of the LM head: its FLOPs per token / (tp x cp x head matmul rate).
  double layer_matmul_s = 0, layer_attention_s = 0, head_matmul_s = 0;
  /// The attention core's backward time over its forward's: 2.5 / attention.backward under
  /// FlashAttention (the scores recomputed, Dao 2022 3.1), else 2.
  double attention_backward_time = 0;
  /// Logits per token of the microbatch on this rank: vocab / (tp x cp).
  double logits_per_token = 0;
  /// 1 / HBM rate (s/B); 1 / (HBM rate x cp), seconds per byte per token of the microbatch
  /// on this rank; 1 / the chip's bf16 peak (s/FLOP).
  double inv_hbm = 0, rank_hbm_s = 0, inv_peak = 0;
};

/// The split's terms of `p` (see TrainingStepSplit for the fields it reads). Never throws.
TrainingStepSplit prepare_training_step(const TrainingCosts& c, const TrainingSystem& s, const TrainingPlan& p);

/// training_step with the split's terms prepared (prepare_training_step of a plan with the
/// same split and engine settings as `p`); the same result as training_step(c, s, p,
/// placement, memory), which prepares them itself. Throws as training_step does.
TrainingStep training_step(const TrainingCosts& c, const TrainingSystem& s, const TrainingPlan& p, const Placement& placement,
                           const TrainingMemory& memory, const TrainingStepSplit& split);

}  // namespace chalk
