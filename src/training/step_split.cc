// The step's per-split terms (include/chalk/training/step_split.h): what a layout search
// computes once per (tp, cp, ep) split and reuses over its inner loops.
#include "chalk/training/step_split.h"

#include "chalk/base/count_cast.h"
#include "chalk/training/eager_kernels.h"
#include "chalk/training/kernel_fixed_time.h"
#include "chalk/training/kernels.h"
#include "chalk/training/step.h"

namespace chalk {
namespace {

using counts::d;

}  // namespace

TrainingStepSplit prepare_training_step(const TrainingCosts& c, const TrainingSystem& s, const TrainingPlan& p) {
  const double S = d(c.seq_len);
  TrainingStepSplit k;
  // The engine's attention kernel's rates (attention_kernels.h): FlashAttention-2 runs its
  // forward and backward below the cuDNN-class rate the chip's attention rate states.
  k.attention = p.flash_attention && p.attention_kernel == AttentionKernel::flash2
                    ? flash2_rates(S / d(p.cp))
                    : AttentionKernelRates{.forward = 1, .backward = p.flash_attention ? attention_backward_rate_ratio(S / d(p.cp)) : 1.0};
  // The memory-bound kernels between the GEMMs (norms, residual adds, dropout, the
  // activation function; kernels.h), the low-precision recipe's casts, the rotary kernels
  // and PyTorch eager mode's extra bytes (eager_kernels.h).
  const KernelBytes el = elementwise_bytes(c, p), qz = quantize_bytes(c, p), ro = rotary_bytes(c, p), ea = eager_extra_bytes(c, p);
  k.memory_bound = KernelBytes{.forward = el.forward + qz.forward + ro.forward + ea.forward,
                               .backward = el.backward + qz.backward + ro.backward + ea.backward};
  k.gemm_outputs = gemm_output_bytes(c, p);
  k.fixed = layer_fixed_time(c, s, p);
  // Seconds per token of the microbatch (per replica) and per average layer, each divisor
  // taken once here: the GEMMs at the MAMF rate, the attention core at the kernel's rate.
  const double L = d(c.layers), shard = d(p.tp * p.cp);
  k.layer_matmul_s = (c.matmul_flops_per_token - c.lm_head_flops_per_token) / (L * shard * s.matmul_rate.value());
  k.layer_attention_s = attention_core_flops_per_token(c, p.flash_attention) / (L * shard * s.attention_rate.value() * k.attention.forward);
  // FlashAttention's backward does 2.5x the forward's FLOPs (the scores recomputed; Dao 2022
  // 3.1) at the backward's rate; materialised scores 2x at the forward's.
  k.attention_backward_time = p.flash_attention ? 2.5 / k.attention.backward : 2.0;
  k.head_matmul_s = c.lm_head_flops_per_token / (shard * s.head_matmul_rate.value());
  k.logits_per_token = d(c.vocab) / shard;
  k.inv_hbm = 1 / s.hbm_rate.value();
  k.rank_hbm_s = k.inv_hbm / d(p.cp);
  k.inv_peak = 1 / s.peak_bf16.value();
  k.layer_params = (c.dense_layer_params / d(p.tp) + c.expert_params / d(p.ep * p.etp)) / d(c.layers);
  k.head_params = d(c.vocab) * d(c.d_model) / d(p.tp);
  return k;
}

}  // namespace chalk
