// How a training engine runs context parallelism's ring attention around its fused
// attention kernel (docs/formulas.md, "Ring attention's merge traffic"). Kept apart from
// step.h: one engine property, the K/V volume its ring moves and the HBM traffic of the
// eager tensor work between its per-block kernel calls.
#pragma once

#include <cstdint>

namespace chalk {

struct TrainingCosts;
struct TrainingPlan;

/// Which ring-attention implementation a context-parallel plan (cp > 1) runs.
enum class CpRing {
  /// The merge of the per-block partial outputs and the gradient accumulation run inside
  /// the engine's fused kernels (Transformer Engine's AttnFuncWithCPAndKVP2P, Megatron-Core,
  /// NeMo): not priced beyond the attention core; the ring carries K and V as the model
  /// stores them (kv_elements_per_token) in the activation format, their gradients likewise.
  fused,
  /// PyTorch's experimental context_parallel (torch/distributed/tensor/experimental/
  /// _attention.py, torch 1963fc8 of 2024-12-23, the version torchtitan's
  /// docs/performance.md ran; torchtitan 9dec370): every block is one SDPA call, and
  /// around the calls eager PyTorch ops merge the partial outputs in fp32
  /// (_ContextParallelOptions.convert_to_f32 true), concatenate K and V for each exchange,
  /// and accumulate dQ, dK and dV in fp32, passing dK and dV round the ring in fp32
  /// (torch_ring_merge_bytes). The ring runs on SDPA's inputs, whose K and V torchtitan
  /// has already repeated to every query head (repeat_kv, torchtitan/models/llama/model.py
  /// @9dec370): it moves q + o elements per token, not the model's K/V.
  torch_eager,
};

/// HBM bytes of one rank's eager work around the ring's SDPA calls, per layer, for one
/// forward call and one backward call (a rerun forward under full recomputation pays the
/// forward again). Bytes.
struct RingMergeBytes {
  double forward = 0;
  double backward = 0;
};

/// CpRing::torch_eager's merge traffic for `cp` ranks, where `q` is the query elements one
/// rank holds per layer (tokens / cp x heads / tp x head_dim; the repeated K has as many)
/// and `o` the output elements (tokens / cp x heads / tp x v_head_dim; the repeated V has
/// as many). Counted from _attention.py's _templated_ring_attention and
/// _templated_ring_attention_backward with the round-robin load balance (enable_load_balance
/// true), for the last rank of the ring, the one that moves most: at every step after the
/// first it runs its whole query against half of the received K/V, so each merge is whole
/// (rank 0 runs half its query and merges half plus a torch.cat). bf16 tensors 2 bytes,
/// fp32 4; the log-sum-exp tensors (1 / head_dim of the outputs) are left out, and so is
/// the copy NCCL writes of each received buffer. Per element, forward:
///   K and V made contiguous: read 2 + write 2 per element of q + o;
///   cp - 1 torch.cat of K and V for the exchange: 4 per element of q + o each;
///   cp block outputs cast to fp32 (read 2, write 4) and one cast back at the end (read 4,
///   write 2): 6 (cp + 1) per element of o;
///   cp - 1 merges, out - sigmoid(lse_b - lse) x (out - out_b) in three fp32 ops
///   (read 2 write 1, read 1 write 1, read 2 write 1 tensors of 4 bytes): 32 (cp - 1) per
///   element of o.
///   forward = 4 cp (q + o) + (38 cp - 26) o.
/// Backward:
///   dQ, dK, dV zero-filled in fp32: 4 (2 q + o);
///   K and V contiguous again, and cp - 1 torch.cat for the exchange: 4 cp (q + o);
///   the first block's dK, dV added to the fp32 accumulators (read 4 + 2, write 4): 10;
///   each later block's half-length dK, dV added to the received fp32 buffers' first half
///   (5 per element of the whole) and that whole rebuilt by torch.cat (read 4 write 4): 13
///   (cp - 1);
///   cp torch.cat of dK and dV in fp32 for the exchange (read 4 write 4): 8 cp;
///   cp additions of the block's dQ to the fp32 accumulator (read 4 + 2, write 4): 10 cp
///   per element of q;
///   dQ, dK, dV cast back to bf16 at the end (read 4 write 2): 6.
///   backward = (10 cp + 14) q + 4 o + (25 cp + 3) (q + o).
/// Llama 3.1 8B at CP8 over 262,144 tokens (32,768 a rank, 32 heads of 128: q = o =
/// 134,217,728): forward 342 q = 45.9 GB, backward 504 q = 67.6 GB per layer. Zero when
/// cp <= 1. Never throws.
RingMergeBytes torch_ring_merge_bytes(double q, double o, int64_t cp);

/// What a plan's ring costs one rank per average layer: `merge_forward_s` and
/// `merge_backward_s`, the merge traffic of one forward and one backward call at the HBM
/// rate (seconds; zero unless cp > 1 under CpRing::torch_eager); the elements per token the
/// ring exchanges each step, and the gradient exchange's bytes over the forward exchange's.
/// fused: K and V as the model stores them (kv_elements_per_token), gradients in the same
/// format (1). torch_eager: q + o elements per token (K and V repeated to every query head),
/// gradients in fp32 (4 / activation_bytes).
struct RingStepTerms {
  double merge_forward_s = 0;
  double merge_backward_s = 0;
  double exchange_elements_per_token = 0;
  double gradient_exchange_factor = 1;
};

/// RingStepTerms of `p` for a microbatch of `microbatch_tokens` tokens (b s; one rank holds
/// b s / cp of them and heads / tp of each layer's) at `hbm_rate` bytes per second. Never
/// throws.
RingStepTerms ring_step_terms(const TrainingCosts& c, const TrainingPlan& p, double microbatch_tokens, double hbm_rate);

}  // namespace chalk
