// The memory-bound kernels of a training step as PyTorch eager mode runs them: torchtitan's
// model code op by op, against the fused kernel set kernels.h prices (Megatron-Core and
// Transformer Engine's fused kernels, or torch.compile's Inductor fusing the same chains).
// Derivation: docs/formulas.md, "Eager and compiled memory-bound kernels in training".
#pragma once

#include "chalk/training/kernels.h"
#include "chalk/training/plan.h"
#include "chalk/training/step.h"

namespace chalk {

/// Bytes per element of the fp32 copies torchtitan's RMSNorm and rotary embedding compute in
/// (x.float(), torch.float32).
inline constexpr double kEagerUpcastBytes = 4;

/// The HBM bytes eager mode moves beyond the fused kernel set (elementwise_bytes,
/// rotary_bytes), per token per average layer on one rank, forward and backward, at e =
/// plan.activation_bytes per activation element and w = kEagerUpcastBytes; 0 (both) when
/// plan.compile. Each eager op is one kernel that reads its inputs and writes its output at
/// its dtype; each autograd node's backward formula one kernel per tensor it produces.
/// Source: pytorch/torchtitan @9dec370 (the version of docs/performance.md @eaea6f6),
/// torchtitan/models/norms.py RMSNorm and torchtitan/models/llama/model.py
/// (apply_rotary_emb, FeedForward, TransformerBlock); PyTorch's derivatives.yaml for the
/// backward formulas. Per element of each op's width:
/// - RMSNorm (c.norm_width; replicated unless sequence parallelism): forward
///   `(x.float() * rsqrt(x.pow(2).mean(-1) + eps)).type_as(x) * weight`: float (e + w), pow
///   (2w), mean (w), mul (2w), type_as (w + e), mul by weight (2e) = 4e + 7w against the
///   fused 2e: extra 2e + 7w; backward: the weight's mul (dx 2e, dweight's product 3e and
///   its sum over tokens e), type_as (e + w), the mul by rsqrt (dx 2w, its rsqrt gradient's
///   product 3w and row sum w), mean's expanded gradient (w), pow's (self.pow(1) 2w, x 2 2w,
///   x grad 3w), the two gradients of x.float() summed (3w), float (w + e) = 8e + 19w against
///   the fused 3e: extra 5e + 19w.
/// - SwiGLU `w2(F.silu(w1(x)) * w3(x))` on the gated hidden f (c.gated_act_width, / tp):
///   forward silu (2e) and mul (3e) = 5e against the fused 3e: extra 2e; backward the mul's
///   two gradients (3e each) and silu's (3e) = 9e against the fused 5e: extra 4e. GeLU is
///   one kernel eager or fused: no extra.
/// - Rotary embedding (apply_rotary_emb, complex multiplies in fp32, over
///   rotary_width_sharded / tp + rotary_width_replicated): forward float (e + w), complex
///   mul (2w), type_as (w + e) = 2e + 4w against the fused 2e: extra 4w; backward the same
///   three in reverse: extra 4w.
/// - The residual adds: one kernel eager or fused (x + branch, and the gradients' sum): no
///   extra. Not counted (present compiled too): repeat_kv's copy of K and V for SDPA.
/// Never throws.
inline KernelBytes eager_extra_bytes(const TrainingCosts& c, const TrainingPlan& p) {
  if (p.compile) return {};
  const double e = p.activation_bytes, w = kEagerUpcastBytes;
  const double inv_tp = 1 / static_cast<double>(p.tp), inv_rep = p.sequence_parallel ? inv_tp : 1.0;
  const double norm = c.norm_width * inv_rep, gated = c.gated_act_width * inv_tp;
  const double rotary = c.rotary_width_sharded * inv_tp + c.rotary_width_replicated;
  return KernelBytes{
      .forward = norm * (2 * e + 7 * w) + gated * 2 * e + rotary * 4 * w,
      .backward = norm * (5 * e + 19 * w) + gated * 4 * e + rotary * 4 * w,
  };
}

/// HBM bytes per logit element of torchtitan's loss (train.py @9dec370, loss_fn:
/// `F.cross_entropy(pred.flatten(0, 1).float(), labels.flatten(0, 1))`, left eager in every
/// run: "compiling loss function causes CUDA errors, turning off for now"), each op one kernel
/// that reads its inputs and writes its output once (the least each moves; PyTorch's
/// log-softmax kernels over a 128k-wide row read it more than once): forward float (2 + 4),
/// log_softmax (4 + 4), nll_loss (a gather per row, 0) = 14; backward nll_loss's gradient,
/// zeros and a scatter (4), log_softmax's (reads the gradient and the output, writes the
/// input gradient: 12), float's, a cast to bf16 (4 + 2) = 22. The fused loss (step.h
/// kLossBytesForward/Backward) moves 6 and 6.
inline constexpr double kTorchLossBytesForward = 14, kTorchLossBytesBackward = 22;

/// HBM bytes per parameter of torch.optim.AdamW(foreach=True) over fp32 parameters,
/// gradients and moments (torchtitan's build_optimizers @9dec370: fused false unless
/// --optimizer.fused, foreach = not fused), torch/optim/adam.py _multi_tensor_adam with
/// decoupled weight decay, each foreach op one pass reading its inputs and writing its
/// output at 4 bytes: _foreach_mul_(params, 1 - lr wd) 8, _foreach_lerp_(exp_avgs, grads) 12,
/// _foreach_mul_(exp_avg_sqs, beta2) 8, _foreach_addcmul_(exp_avg_sqs, grads, grads) 12,
/// _foreach_sqrt(exp_avg_sqs) 8, _foreach_div_ by the bias correction 8, _foreach_add_(eps) 8,
/// _foreach_addcdiv_(params, exp_avgs, denom) 16 = 80.
inline constexpr double kTorchAdamwBytes = 80;
/// HBM bytes per parameter of torchtitan's clip_grad_norm_(foreach=True) (torchtitan/utils.py
/// @9dec370): torch.nn.utils.get_total_norm's _foreach_norm reads each fp32 gradient (4), and
/// clip_grads_with_norm_ multiplies every gradient by the clamped coefficient whether or not
/// the norm exceeds max_norm (_foreach_mul_: 8) = 12.
inline constexpr double kTorchClipBytes = 12;

/// HBM bytes of the loss over `logits` elements, forward or backward, as the plan's engine
/// runs it: torchtitan's eager fp32 cross-entropy (kTorchLossBytes*) when
/// plan.torch_loss_optimizer, else the fused loss (loss_hbm_bytes). Never throws.
inline double torch_loss_bytes(const TrainingPlan& p, double logits, bool backward) {
  if (!p.torch_loss_optimizer) return loss_hbm_bytes(logits, backward);
  return logits * (backward ? kTorchLossBytesBackward : kTorchLossBytesForward);
}

/// HBM bytes of one optimizer step over the `owned_params` parameters whose optimizer states
/// the chip keeps (`held_params` it holds), as the plan's engine runs it: with
/// plan.torch_loss_optimizer, the gradient clipping and torch's foreach AdamW over fp32
/// shards, (kTorchClipBytes + kTorchAdamwBytes) per owned parameter, and no mixed-precision
/// housekeeping (FSDP2 keeps the fp32 shard as the parameter and casts it to bf16 in its
/// all-gather; zero_grad frees the gradients; bf16 runs without loss scaling); else the fused
/// optimizer and its housekeeping (optimizer_hbm_bytes + optimizer_housekeeping_bytes).
/// Never throws.
inline double torch_optimizer_bytes(const TrainingPlan& p, double owned_params, double held_params) {
  if (!p.torch_loss_optimizer) return optimizer_hbm_bytes(p.state, owned_params) + optimizer_housekeeping_bytes(p, owned_params, held_params);
  return owned_params * (kTorchClipBytes + kTorchAdamwBytes);
}

/// HBM bytes FSDP2's all-gather copy-out moves on the compute stream per microbatch, for one
/// layer's `layer_params` parameters held unsharded on the rank (torch/distributed/fsdp/
/// _fully_shard/_fsdp_collectives.py, foreach_all_gather_copy_out: the current stream waits
/// for the all-gather's event, then split_with_sizes_copy copies the gathered buffer into
/// each parameter's own unsharded tensor, reading and writing plan.state.weights bytes per
/// parameter): 2 w per parameter per gather, two gathers per microbatch under ZeRO-3 (the
/// forward's, and the backward's after reshard_after_forward; a recomputed forward shares
/// the backward's), 4 w. 0 unless plan.fsdp2_copy_out and zero_stage 3. The copy-in (the
/// shard cast into the all-gather input) runs on its own stream and is not counted, nor are
/// the root group's embedding and head (gathered once). Never throws.
inline double fsdp2_copy_out_bytes(const TrainingPlan& p, double layer_params) {
  if (!p.fsdp2_copy_out || p.zero_stage < 3) return 0.0;
  return 2 * layer_params * 2 * p.state.weights;
}

}  // namespace chalk
