// The memory-bound kernels of a training step: the elementwise work between the GEMMs
// (norms, residual adds, dropout, the MLP's activation function) and the casts of an FP8 or
// FP4 GEMM recipe, as HBM bytes per token per layer on one rank. training_step prices them at
// the HBM rate. Derivations: docs/training.md, "Memory-bound kernels".
#pragma once

#include <cmath>

#include "chalk/training/plan.h"
#include "chalk/training/step.h"

namespace chalk {

/// HBM bytes of one rank's memory-bound kernels per token of its microbatch (the tokens
/// before the cp split: divide by nothing, the cp split is in the token count) and per
/// average layer, forward and backward.
struct KernelBytes {
  double forward = 0, backward = 0;
};

/// Bytes per element of the MoE router's scores and weights (fp32).
inline constexpr double kRouterBytes = 4;

/// Bytes per element of a dropout mask (Megatron-LM and PyTorch keep a bool per element).
inline constexpr double kDropoutMaskBytes = 1;

/// The elementwise kernels of one average layer, per token on one rank, at e =
/// plan.activation_bytes per activation element, in the fused kernel set of Megatron-LM
/// (apex/Transformer Engine fused LayerNorm and RMSNorm, bias-GeLU and bias-SwiGLU fusion,
/// bias-dropout-add fusion; Megatron-Core megatron/core/fusions/), which NeMo/Megatron-Bridge
/// and DeepSeek's engine share. Each kernel reads its inputs once and writes its outputs once:
/// - norm (norms_per_layer of width h): forward reads x, writes y: 2 h e; backward reads dy
///   and x, writes dx: 3 h e;
/// - residual add (2 per layer, width h), with the dropout before it when the plan trains
///   with dropout (bias-dropout-add): forward reads the branch output and the residual,
///   writes the sum: 3 h e (+ h mask bytes); backward: the residual stream's two gradients
///   are summed (autograd accumulation: reads 2, writes 1: 3 h e), and dropout's backward
///   reads dy and the mask and writes dx (2 h e + h);
/// - the MLP's activation function on the f = d_ff (MoE: top_k x expert d_ff + shared
///   experts' d_ff) wide hidden: GeLU forward reads f, writes f (2 f e), backward reads dy
///   and x, writes dx (3 f e); SwiGLU forward reads gate and up, writes their product
///   (3 f e), backward reads dy, gate and up, writes dgate and dup (5 f e).
/// - MoE token permute and unpermute (Megatron-Core's moe_utils permute/unpermute around the
///   grouped GEMMs; top_k copies of the h-wide token): forward (3k + 1) h e, backward
///   (3k + 2) h e (kernels.cc counts each read and write). Under Megatron-Core's alltoall
///   dispatcher (plan.ep_dispatcher all_to_all, ep > 1) with more than one local expert,
///   the tokens that arrive from the all-to-all come grouped by source rank and are sorted
///   again by local expert ("Permutation 2", sort_chunks_by_idxs in
///   MoEAlltoAllTokenDispatcher.token_dispatch), and the combine restores the source order
///   before its all-to-all (token_combine): each sort reads and writes every routed copy,
///   forward 2 x 2 k h e, and their gradients the same, backward 4 k h e. DeepEP/HybridEP
///   (the flex dispatcher) deliver tokens a rank permutes once: no second sort.
///   Source: NVIDIA/Megatron-LM megatron/core/transformer/moe/token_dispatcher.py and
///   moe_utils.py sort_chunks_by_idxs (core_r0.12.0 and later; fused or not, one read and
///   one write per element).
/// - the MoE router's kernels after its GEMM, in fp32 (kRouterBytes; Megatron-Core's
///   moe_router_dtype fp32 and DeepSeek-V3 3.3.1 keep the gating in fp32): forward, the score
///   function (softmax or sigmoid) reads the E logits and writes E scores (8 E), the top-k
///   reads the scores and writes k weights and k int64 indices (4 E + 12 k), the auxiliary
///   loss or the aux-loss-free bias update reads the scores once more (4 E): 16 E + 12 k;
///   backward, the k weights' gradients scattered into E (4 k + 4 E) and the score
///   function's backward reads the scores and their gradients and writes the logits'
///   gradients (12 E): 16 E + 4 k. Routing is taken as balanced (every local expert gets
///   tokens x top_k x ep / E; Megatron-Bridge's performance rows force-balance it); no
///   published imbalance figure for the recipes chalk validates is used.
/// Tensor parallelism shards the activation function over tp; the norms and residual adds
/// run on every TP rank's full hidden unless sequence parallelism splits them over tp
/// (Korthikanti et al. 2022 section 4.2.2). Bias gradients (GPT-style models): each biased
/// GEMM's output gradient is read once more and summed over the tokens, backward e x its
/// width (the row-parallel biases on the full hidden, / tp only under SP). Not counted:
/// rotary embeddings (fused into the attention kernels' inputs by Transformer
/// Engine's fused RoPE; otherwise about 2 (q + k) e / tp per token), QK norms.
inline KernelBytes elementwise_bytes(const TrainingCosts& c, const TrainingPlan& p);

/// The quantization kernels of a low-precision GEMM recipe (plan.compute fp8, fp4, mxfp8,
/// nvfp4; 0 for bf16), per token per average layer on one rank: every layer GEMM's input is
/// cast to the low-precision format with its transposed copy for the weight-gradient GEMM
/// (Transformer Engine's cast_transpose: reads e, writes recipe_copy_bytes per element: 2 x
/// (1 + the recipe's scale bytes per element) for FP8, 2 x (0.5 + a scale per 16) for
/// NVFP4), and under per-tensor current scaling (Fp8Recipe::tensorwise) an amax kernel
/// reads the e-byte tensor once before the cast (recipe_reads); in backward every layer GEMM's
/// output gradient is cast the same way. The inputs are the layer's GEMM input widths K
/// (TrainingCosts::gemm_input_width) and the output gradients its output widths N
/// (gemm_output_width), TP-sharded where the GEMM's side is (column-parallel inputs are the
/// full hidden unless sequence parallelism shards the cast before the all-gather). The
/// weights' cast (once per step under Transformer Engine's weight caching) is under 1% of a
/// step and not counted; the amax of delayed scaling comes from history (the cast records
/// the new one as it writes), block recipes (mxfp8, blockwise, NVFP4's 16-element blocks)
/// find each block's amax inside the cast, and only tensorwise pays the separate pass.
/// Attention, the output head, the router and the norms stay bf16 and cast nothing.
inline KernelBytes quantize_bytes(const TrainingCosts& c, const TrainingPlan& p);

/// Bytes per element a recipe's cast_transpose writes (the copy and its transpose, with
/// their scales): compute fp8 under delayed or tensorwise 2 x 1 = 2; mxfp8 2 x (1 + 1/32)
/// (one E8M0 byte per 32 elements; OCP MX spec v1.0 section 5); blockwise 2 x (1 + 4/128)
/// (an fp32 scale per 128; DeepSeek-V3 report 3.3.2); other compute as
/// quantized_copy_bytes(compute).
inline double recipe_copy_bytes(const TrainingPlan& p);

/// Reads of each e-byte element a recipe's quantization makes: 2 under
/// Fp8Recipe::tensorwise with compute fp8 (TE's amax_kernel, then the cast), else 1.
inline double recipe_reads(const TrainingPlan& p);

/// The outputs a layer's GEMMs write to HBM after their main loop, per token per average
/// layer on one rank, at plan.activation_bytes per element (bf16 outputs, also under FP8
/// and FP4 recipes): forward, each GEMM's output N (gemm_out_*); backward, each input
/// gradient (dgrad) output K (gemm_in_*). A row-parallel GEMM writes its partial sums of the
/// full hidden for every token the rank holds before the reduction, so its replicated widths
/// are not divided by tp even under sequence parallelism; column-parallel outputs are / tp.
/// The output is written by the kernel's epilogue, after the tile's main loop: DeepGEMM's
/// FP8 table (H800, 4096 x 32768 x 512: 751 TFLOP/s, where 137 GFLOP at the MAMF rate take
/// 97 us and the 268 MB bf16 output 92 us at the HBM rate) shows it adds to the compute
/// time (gemm_time, kernels_test.cc). The inputs stream during the main loop and are not
/// counted.
inline KernelBytes gemm_output_bytes(const TrainingCosts& c, const TrainingPlan& p);

/// The rotary position embedding kernels, per token per average layer on one rank, at e =
/// plan.activation_bytes: forward each rotated query and key element is read and written
/// once (2 e), backward its gradient is rotated back the same way (2 e), over
/// TrainingCosts::rotary_width_* (the heads' share / tp; MLA's shared rope key, computed from
/// the replicated down-projection, on every rank). Every engine runs it as a kernel of its
/// own between the QKV GEMM and the attention kernel: Megatron-Core's apply_rope_fusion
/// calls Transformer Engine's fused_apply_rotary_pos_emb, one kernel each for q and k
/// (megatron/core/models/common/embeddings/rope_utils.py; NeMo/Megatron-Bridge the same);
/// torchtitan's apply_rotary_emb (torchtitan/models/llama3/model/model.py @6404b93) is one kernel
/// per tensor under torch.compile and several unfused eager ones without (their extra
/// bytes not counted); XLA (MaxText) fuses it with the neighbouring elementwise ops, not into
/// the GEMM or the attention kernel. 0 for models without rotary embeddings
/// (rotary_fraction 0: GPT-3's learned positions, MPT's ALiBi).
inline KernelBytes rotary_bytes(const TrainingCosts& c, const TrainingPlan& p);

/// HBM bytes per parameter the weight-gradient GEMM moves into the gradient buffer per
/// microbatch: with fp32 main gradients wider than the weights (adam18, DeepSeek's fp32
/// grads), Megatron-LM's gradient-accumulation fusion runs the weight-gradient GEMM with
/// beta = 1 into main_grad, reading and writing it: 2 x state.gradients (8); with gradients
/// stored as the weights are (adam16), the same accumulation in their format (4). Under
/// ZeRO-3 (FSDP) over more than one data-parallel rank each microbatch's gradient is written
/// once (state.gradients) and reduce-scattered.
inline double weight_grad_bytes_per_param(const TrainingPlan& p);

/// Time of one GEMM of m x n x k on a chip: 2 m n k / `rate` (the dense peak of its format
/// x the chip's best-shape efficiency) plus its output of m x n x `out_bytes` bytes at
/// `hbm_rate` (gemm_output_bytes). Seconds; rates in FLOP/s and B/s.
inline double gemm_time(double m, double n, double k, double out_bytes, double rate, double hbm_rate);

/// The rate of a fused attention kernel's backward over its forward's rate (FLOP/s over
/// FLOP/s, dimensionless, in (0, 1]) at `kernel_seq` tokens per sequence per kernel call (the
/// sequence length, / cp under context parallelism). The backward does 2.5x the forward's
/// FLOPs (the scores recomputed) with more dependencies between them (dQ accumulated across
/// key blocks, five GEMMs per tile instead of two), so it runs below the forward's rate, and
/// further below at short sequences where fewer key blocks amortise each query tile.
/// Source: Shah et al. 2024, FlashAttention-3 (arXiv 2407.08608), section 4.1 figures,
/// H100 SXM5, bf16, head dim 128, the cuDNN series (the kernel Transformer Engine calls):
/// forward 497, 574, 617, 609, 600, 595 and backward 305, 408, 465, 499, 518, 516 TFLOP/s
/// at 512, 1k, 2k, 4k, 8k, 16k tokens; ratios 0.614, 0.711, 0.754, 0.819, 0.863, 0.867
/// (FlashAttention-3's own series: 0.68-0.87), linear in log2(sequence) between them and
/// held beyond. Taken for every chip and attention variant (head dims 64-192): the
/// algorithm's dependencies, not Hopper's, set it. Never throws; a non-positive
/// `kernel_seq` takes the shortest row.
inline double attention_backward_rate_ratio(double kernel_seq);

/// Forward attention-core FLOPs per token that a training step executes (QK^T and the
/// probabilities times V, summed over the layers). FlashAttention skips the key tiles above
/// the diagonal (flash_attn's causal=True), so it runs the causal count,
/// c.attention_flops_per_token (positions 1..s averaged). Materialised scores cover the
/// whole s x s square. Megatron-LM's CoreAttention multiplies every query by every key
/// (torch.baddbmm over [b np, sq, sk]), applies the causal mask inside its fused softmax
/// (FusedScaleMaskSoftmax), then multiplies the full probabilities by V (torch.bmm)
/// (NVIDIA/Megatron-LM megatron/model/transformer.py @00baee4, CoreAttention.forward). So it
/// runs c.attention_flops_per_token_noncausal: s attended keys for every token. For a model
/// without sliding windows that is 2 s / (s + 1) times the causal count. Never throws.
inline double attention_core_flops_per_token(const TrainingCosts& c, bool flash_attention) {
  return flash_attention ? c.attention_flops_per_token : c.attention_flops_per_token_noncausal;
}

/// Bytes per element a cast_transpose writes for `compute`: 2 copies x bytes per element of
/// the format (FP8 1; NVFP4 0.5 + one 1-byte scale per 16 elements; MXFP4 0.5 + one per
/// 32; MXFP8 1 + one per 32); 0 for bf16.
inline double quantized_copy_bytes(MatmulPrecision compute);

// Definitions, inline: training_step evaluates them for every plan the layout search tries
// (bench/bench_training.cc).
inline KernelBytes elementwise_bytes(const TrainingCosts& c, const TrainingPlan& p) {
  const double e = p.activation_bytes;
  const double h = static_cast<double>(c.d_model);
  const double inv_tp = 1 / static_cast<double>(p.tp), inv_rep = p.sequence_parallel ? inv_tp : 1.0;  // SP splits the replicated region
  const double mask = p.dropout ? kDropoutMaskBytes : 0.0;
  // Norms: forward 2 e, backward 3 e per element of their width.
  const double norm_f = 2 * e * c.norm_width, norm_b = 3 * e * c.norm_width;
  // Two residual adds per layer (with the dropout before each when training with dropout):
  // forward 3 e (+ mask) per element; backward the gradient accumulation 3 e, and dropout's
  // backward 2 e + mask.
  const double res_f = 2 * h * (3 * e + mask);
  const double res_b = 2 * h * (3 * e + (p.dropout ? 2 * e + mask : 0.0));
  // MoE token permute and unpermute (k = top_k copies of an h-wide token): forward, the
  // permute reads a token once per copy and writes the copy (2 k h e), the unpermute reads
  // the k expert outputs and writes their weighted sum (k h e + h e); backward, the
  // unpermute's gradient reads dy and the k outputs (for the routing weights' gradient) and
  // writes k copies (2 k h e + h e), the permute's gradient reads the k copies' gradients and
  // writes their sum (k h e + h e).
  const double kh = c.moe_routed_width, mh = c.moe_hidden_width;
  double perm_f = e * (3 * kh + mh), perm_b = e * (3 * kh + 2 * mh);
  // The alltoall dispatcher's second sort by local expert and its restore: 2 x (read + write)
  // of the k copies each way. Local experts E / ep, E the router's width per MoE layer.
  const bool local_sort = p.ep > 1 && p.ep_dispatcher == EpDispatcher::all_to_all && c.moe_layer_fraction > 0 &&
                          c.moe_router_width / c.moe_layer_fraction > static_cast<double>(p.ep);
  if (local_sort) {
    perm_f += 4 * e * kh;
    perm_b += 4 * e * kh;
  }
  // The router's fp32 kernels (E scores, k = routed_tokens_per_token picks per token).
  const double ew = c.moe_router_width, kk = c.routed_tokens_per_token;
  const double router_f = kRouterBytes * (4 * ew + 3 * kk), router_b = kRouterBytes * (4 * ew + kk);
  // Bias gradients: each biased GEMM's output gradient read once more, summed over tokens.
  const double bias_rep = e * c.bias_width_replicated, bias_sh = e * c.bias_width_sharded;
  return KernelBytes{
      .forward = (norm_f + res_f + router_f) * inv_rep + (e * c.act_fn_forward_elements + perm_f) * inv_tp,
      .backward = (norm_b + res_b + bias_rep + router_b) * inv_rep + (e * c.act_fn_backward_elements + perm_b + bias_sh) * inv_tp,
  };
}

inline double attention_backward_rate_ratio(double kernel_seq) {
  // cuDNN backward / forward TFLOP/s at 2^9 .. 2^14 tokens (FlashAttention-3 paper, H100 SXM5, hd 128).
  static constexpr double kRatio[] = {305.0 / 497, 408.0 / 574, 465.0 / 617, 499.0 / 609, 518.0 / 600, 516.0 / 595};
  constexpr int kRows = 6;
  if (!(kernel_seq > 512)) return kRatio[0];
  // The last argument's ratio, per thread: a layout search asks at one sequence length (and
  // a few cp splits of it) for every plan, and the log2 was about 5% of a plan's step
  // (bench/bench_training.cc). Same value for the same argument.
  thread_local double last_seq = 0, last_ratio = 0;
  if (kernel_seq == last_seq) return last_ratio;
  const double x = std::log2(kernel_seq) - 9;  // row index, fractional
  double r = kRatio[kRows - 1];
  if (x < kRows - 1) {
    const int i = static_cast<int>(x);
    const double f = x - i;
    r = kRatio[i] + f * (kRatio[i + 1] - kRatio[i]);
  }
  last_seq = kernel_seq;
  last_ratio = r;
  return r;
}

inline double quantized_copy_bytes(MatmulPrecision compute) {
  switch (compute) {
    case MatmulPrecision::bf16: return 0;
    case MatmulPrecision::fp8:
    case MatmulPrecision::int8: return 2 * 1.0;
    case MatmulPrecision::fp4: return 2 * (0.5 + 1.0 / 16);  // NVFP4: a 1-byte E4M3 scale per 16 elements
  }
  return 0;
}

inline double recipe_copy_bytes(const TrainingPlan& p) {
  if (p.compute != MatmulPrecision::fp8) return quantized_copy_bytes(p.compute);
  switch (p.fp8_recipe) {
    case Fp8Recipe::delayed:
    case Fp8Recipe::tensorwise: return 2 * 1.0;
    case Fp8Recipe::mxfp8: return 2 * (1.0 + 1.0 / 32);
    case Fp8Recipe::blockwise: return 2 * (1.0 + 4.0 / 128);
  }
  return 2 * 1.0;
}

inline double recipe_reads(const TrainingPlan& p) {
  return p.compute == MatmulPrecision::fp8 && p.fp8_recipe == Fp8Recipe::tensorwise ? 2.0 : 1.0;
}

inline KernelBytes quantize_bytes(const TrainingCosts& c, const TrainingPlan& p) {
  const double q = recipe_copy_bytes(p);
  if (q == 0) return {};
  // cast_transpose: read e (twice under tensorwise: the amax pass), write the copy and its transpose.
  const double per_element = recipe_reads(p) * p.activation_bytes + q;
  const double inv_tp = 1 / static_cast<double>(p.tp), inv_rep = p.sequence_parallel ? inv_tp : 1.0;
  return KernelBytes{
      .forward = per_element * (c.gemm_in_replicated * inv_rep + c.gemm_in_sharded * inv_tp),
      .backward = per_element * (c.gemm_out_replicated * inv_rep + c.gemm_out_sharded * inv_tp),
  };
}

inline KernelBytes gemm_output_bytes(const TrainingCosts& c, const TrainingPlan& p) {
  const double e = p.activation_bytes;
  const double inv_tp = 1 / static_cast<double>(p.tp);
  return KernelBytes{
      .forward = e * (c.gemm_out_replicated + c.gemm_out_sharded * inv_tp),
      .backward = e * (c.gemm_in_replicated + c.gemm_in_sharded * inv_tp),
  };
}

inline KernelBytes rotary_bytes(const TrainingCosts& c, const TrainingPlan& p) {
  const double bytes = 2 * p.activation_bytes * (c.rotary_width_sharded / static_cast<double>(p.tp) + c.rotary_width_replicated);
  return KernelBytes{.forward = bytes, .backward = bytes};
}

inline double weight_grad_bytes_per_param(const TrainingPlan& p) {
  const bool sharded = p.zero_stage >= 3 && p.dp * p.cp > 1;  // ZeRO-3 over one rank shards nothing
  return sharded ? p.state.gradients : 2 * p.state.gradients;
}

inline double gemm_time(double m, double n, double k, double out_bytes, double rate, double hbm_rate) {
  return 2 * m * n * k / rate + m * n * out_bytes / hbm_rate;
}

}  // namespace chalk
