// Which fused-attention kernel a training engine calls, and which selective-recomputation
// policy it applies (docs/formulas.md, "Attention kernel by engine" and "Selective
// recomputation by engine"). Kept apart from kernels.h: two engine properties, their
// published rates and one derived FLOP count.
#pragma once

#include <cmath>

namespace chalk {

struct ModelSpec;

/// The fused attention kernel a training step's attention core runs.
enum class AttentionKernel {
  /// A Hopper-native kernel: cuDNN's fused attention (Transformer Engine, Megatron-Core,
  /// NeMo) or FlashAttention-3; chalk's attention rate and attention_backward_rate_ratio
  /// are calibrated on these (FlashAttention-3 paper section 4.1, cuDNN series).
  cudnn,
  /// FlashAttention-2 (Dao 2023), built on Ampere's mma.sync without Hopper's warpgroup MMA
  /// or TMA: PyTorch's scaled_dot_product_attention "flash" backend, the default of
  /// torch 2.5 / nightly 2024-12 on H100 (torchtitan @9dec370 calls
  /// F.scaled_dot_product_attention; PyTorch issue #142132 measures this backend at about
  /// 329 TFLOP/s on H100 beside cuDNN's 631 and FlashAttention-3's 632), and the
  /// FlashAttention llm-foundry's MPT benchmarks name.
  flash2,
};

/// How an engine's "selective" activation recomputation chooses what to rerun.
enum class SelectiveRecompute {
  /// Korthikanti et al. 2022 section 5: only the attention scores, softmax and dropout
  /// rerun (Megatron-LM, NeMo); under FlashAttention nothing extra reruns.
  attention_core,
  /// torchtitan's op-level policy (torchtitan/parallelisms/parallelize_llama.py @9dec370,
  /// _apply_ac_to_transformer_block, selective_ac_option "op"): every op of a block is
  /// recomputed except those in _save_list (aten.mm, the SDPA flash and efficient kernels,
  /// reduce_scatter, abs, max), and of aten.mm every second call (the 2nd, 4th, ... of the
  /// block) is recomputed too. So the norms, RoPE and activation functions rerun, the
  /// attention core does not, and of the linears the even-numbered ones rerun
  /// (every_second_matmul_flops_per_token). Float8 linears count the same: torchao's
  /// Float8Linear (torchao/float8/float8_linear.py @eab345c) calls torch.mm on Float8Tensor
  /// arguments, and the checkpointing policy, a dispatch mode, sees that aten.mm before the
  /// tensor subclass turns it into _scaled_mm.
  every_second_matmul,
};

/// A fused attention kernel's rates at `kernel_seq` tokens per sequence per call (the
/// sequence length, / cp under context parallelism): `forward` is its forward rate over
/// chalk's Hopper attention rate (multiplies TrainingSystem::attention_rate), `backward` its
/// backward rate over its own forward rate (the role of attention_backward_rate_ratio).
/// Dimensionless.
struct AttentionKernelRates {
  double forward = 1;
  double backward = 1;
};

/// chalk's Hopper attention rate at the chip's full clock, TFLOP/s: Calibration's
/// attention_compute_fraction (660 / 989.4, FLASHMLA-1) of H100's 989.4 bf16 peak; Meta's
/// FlashAttention-3 causal forward at 8K on a 500 W H100 (arXiv 2411.01783 appendix A, 540)
/// over its 0.809 clock gives 667.
inline constexpr double kHopperAttentionTflops = 660;

/// FlashAttention-2's forward and backward TFLOP/s, H100 SXM5, bf16, head dim 128, at 512,
/// 1k, 2k, 4k, 8k, 16k tokens: Shah et al. 2024, FlashAttention-3 (arXiv 2407.08608)
/// section 4.1, Figure "Attention forward speed, head dim 128": FA2 309, 350, 362, 368, 370,
/// 370; Figure "Attention backward speed, head dim 128": FA2 214, 260, 291, 310, 318, 322.
/// The forward is priced at FA2's own rate over chalk's Hopper attention rate
/// (kHopperAttentionTflops): 0.468 (512) to 0.561 (8k, 16k). Not over the same paper's cuDNN
/// series (497 .. 617, 595 at 16k): chalk's rate (660) is above that cuDNN, and FA2's kernel
/// does not speed up with a newer cuDNN, so the ratio form priced FA2 at 370 x 660 / 595 =
/// 410 TFLOP/s at 16k, 11% above its measured 370. Checked on a figure not used: PyTorch
/// SDPA's flash backend (the FA2 torchtitan runs) at 329 TFLOP/s forward on (1, 24, 4608,
/// 128) in December 2024 (meta-pytorch/tritonbench PR #97, cuDNN 631 beside it); this
/// series gives 368.3 at 4,608 (12% above; the ratio form gave 400). The backward is FA2's
/// backward over its forward, 0.693 (512) to 0.870 (16k) (0.859 at 8k; cuDNN's own 0.863).
/// Linear in log2(sequence) between the rows, held beyond; a non-positive `kernel_seq` takes
/// the shortest row. The series is H100's at its full clock (a capped part's sustained
/// clock scales TrainingSystem::attention_rate and so this too); it is applied to every
/// chip (no other chip's FA2 series is recorded), and only rows on H100 take it. Never
/// throws.
inline AttentionKernelRates flash2_rates(double kernel_seq) {
  static constexpr double kFa2Forward[] = {309, 350, 362, 368, 370, 370};
  static constexpr double kFa2Backward[] = {214, 260, 291, 310, 318, 322};
  constexpr int kRows = 6;
  const double x = kernel_seq > 512 ? std::log2(kernel_seq) - 9 : 0.0;
  int i = kRows - 1;
  double f = 0;
  if (x < kRows - 1) {
    i = static_cast<int>(x);
    f = x - i;
  }
  auto at = [&](const double* row) { return i + 1 < kRows ? row[i] + f * (row[i + 1] - row[i]) : row[kRows - 1]; };
  const double fwd = at(kFa2Forward), bwd = at(kFa2Backward);
  return AttentionKernelRates{.forward = fwd / kHopperAttentionTflops, .backward = bwd / fwd};
}

/// Forward FLOPs per token, summed over the layers, of the linears torchtitan's op-level
/// selective checkpointing recomputes (SelectiveRecompute::every_second_matmul; bf16 or Float8):
/// a block's aten.mm calls in execution order are wq, wk, wv, wo (attention,
/// torchtitan/models/llama/model.py @9dec370 Attention.forward), then w1, w3, w2 (FeedForward:
/// w2(silu(w1(x)) * w3(x)) evaluates w1, then w3, then w2); the 2nd, 4th and 6th rerun: wk,
/// wo and w3, 2 h (kv_heads head_dim + heads v_head_dim + d_ff) per token per layer. An
/// ungated MLP (w1, w2) reruns wk, wo and w2 (2 h d_ff as well). Llama 3.1 8B: 2 x 4096 x
/// (1024 + 4096 + 14336) = 159.4 MFLOP per token per layer, 36.5% of the layer's 436.2.
/// Layers of another kind (MLA, MoE, linear attention: torchtitan had none at 9dec370)
/// count half their matmul FLOPs (every second of their linears, by count). Never throws.
double every_second_matmul_flops_per_token(const ModelSpec& m);

}  // namespace chalk
