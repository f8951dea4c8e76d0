// Private to src/engine: the memory-bound kernels of a serving step that are neither GEMMs
// nor attention (RMSNorm, the gated activation, rotary), priced by the bytes they move
// through HBM instead of a flat per-kernel floor (docs/formulas.md, "Memory-bound kernels").
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string_view>
#include <vector>

#include "chalk/base/dtype.h"
#include "chalk/engine/roofline.h"
#include "chalk/model/model.h"
#include "matmul_rate.h"

namespace chalk::detail {

/// What an engine's norm and activation kernels write: the next GEMM's input format when the
/// engine fuses the activation quantization into them, else bf16 (the quantization, where
/// there is one, is a pass of its own that kernels_per_layer does not count, so not priced).
///   trtllm: fused. Its SwiGLU runs as a kernel of its own after the fused gate/up GEMM
///     (TensorRT-LLM examples/llama README: use_fused_mlp "combines two Matmul operations
///     into one Matmul followed by a separate SwiGLU kernel"); the single GEMM + SwiGLU
///     kernel, FP8 on Hopper only, is the opt-in gemm_swiglu_plugin, which NVIDIA's MLPerf
///     v4.1 llama2-70b configs do not set (mlcommons/inference_results_v4.1 @a2f5d66,
///     closed/NVIDIA/configs/llama2-70b/Offline/__init__.py). The next round's Blackwell
///     configs build with norm_quant_fusion (RMSNorm writes NVFP4; kernels/
///     fusedLayernormKernels); on Hopper TensorRT fusing the FP8 quantize into the norm's
///     pointwise kernel is assumed (no per-kernel trace of these engines is in reach).
///   vllm, sglang and any other engine: bf16 out of fused_add_rms_norm and silu_and_mul
///     (vllm csrc/layernorm_kernels.cu, csrc/activation_kernels.cu; SGLang's sgl-kernel
///     ports), the FP8 cast separate (ops.scaled_fp8_quant) or fused only by opt-in passes.
/// Returns bytes per element written: 1 for fp8 and int8, 0.5625 for fp4 (NVFP4: an fp8
/// scale per 16), 2 otherwise or for the other engines. Never throws.
inline double memory_kernel_output_bytes(std::string_view engine, MatmulPrecision gemm_input) {
  if (engine.substr(0, 6) != "trtllm") return 2.0;
  switch (gemm_input) {
    case MatmulPrecision::fp8:
    case MatmulPrecision::int8:
      return 1.0;
    case MatmulPrecision::fp4:
      return 0.5 + 1.0 / 16;
    default:
      return 2.0;
  }
}

/// Bytes per token of one fused residual-add + RMSNorm over a hidden state of d = `d_model`
/// elements: it reads the block output and the residual and writes the new residual (bf16,
/// 2 bytes each: 6 d) and the normalized state at `out_bytes` an element (vllm
/// fused_add_rms_norm; TensorRT-LLM's residual RMSNorm): 6 d + d out_bytes. Llama 2 70B
/// (d 8192) into an FP8 GEMM in TensorRT-LLM: 8192 x 7 = 57,344 bytes. Never throws.
inline double norm_kernel_bytes_per_token(double d_model, double out_bytes) { return d_model * (6.0 + out_bytes); }

/// Bytes per token of the FFN's activation kernel over a hidden width f = `width` on one
/// rank: a gated unit (SwiGLU, GeGLU) reads both halves of the up-projection (2 f, bf16) and
/// writes f at `out_bytes` (silu_and_mul): 4 f + f out_bytes; a plain one (GELU) reads f
/// and writes f: 2 f + f out_bytes. Llama 2 70B's 28,672 over TP2 in FP8 (TensorRT-LLM):
/// 14,336 x 5 = 71,680 bytes. Never throws.
inline double activation_kernel_bytes_per_token(double width, bool gated, double out_bytes) {
  return width * ((gated ? 4.0 : 2.0) + out_bytes);
}

/// Bytes per token-expert pair of the activation kernel between a routed expert's two
/// grouped GEMMs, over its hidden width f = `width` on one rank (d_ff / tp_expert): as
/// activation_kernel_bytes_per_token, 4 f + f `out_bytes` gated (2 f + f out_bytes plain),
/// out_bytes the down GEMM's input where the engine quantizes in this pass
/// (memory_kernel_output_bytes), else bf16. Every engine runs it as a kernel of its own:
/// TensorRT-LLM's CUTLASS MoE `doActivation` (cpp/tensorrt_llm/kernels/cutlass_kernels/
/// moe_gemm/moe_kernels.cu: reads the FC1 output, writes the FC2 input quantized to FP8 or
/// NVFP4 with its block scales), vLLM's Triton `fused_experts` (silu_and_mul into
/// intermediate_cache2, bf16), SGLang under DeepEP (silu_and_mul_masked_post_quant).
/// Mixtral 8x7B (f 14,336, gated) into NVFP4 in TensorRT-LLM: 14,336 x 4.5625 = 65,408
/// bytes. Never throws.
inline double routed_expert_activation_bytes_per_pair(double width, bool gated, double out_bytes) {
  return activation_kernel_bytes_per_token(width, gated, out_bytes);
}

/// Bytes per token of the rotary kernel of a GQA/MHA/MQA layer on one rank: it reads and
/// writes in place the rotated part of the rank's query heads and its key heads (bf16):
/// 2 x 2 x (q_heads + kv_heads) x head_dim x rotary_fraction (vllm rotary_embedding, in
/// place on query and key). Llama 2 70B on TP2 (32 query heads, 4 KV heads of 128):
/// 4 x 36 x 128 = 18,432 bytes. Never throws.
inline double rotary_kernel_bytes_per_token(double q_heads, double kv_heads, double head_dim, double rotary_fraction) {
  return 4.0 * (q_heads + kv_heads) * head_dim * std::clamp(rotary_fraction, 0.0, 1.0);
}

/// The time one memory-bound kernel takes beyond the fixed floor it already pays in
/// kernels x floor: max(floor, bytes / rate) - floor = max(0, bytes / rate - floor), with
/// `bytes` over a step and `rate` the HBM rate in bytes/s (HBM peak x the chip's STREAM
/// fraction). Over `passes` micro-batches each pass moves bytes / passes and pays its own
/// floor. 0 when rate <= 0 or passes < 1. Never throws.
inline double memory_kernel_excess_s(double bytes, double rate, double floor_s, double passes) {
  if (!(rate > 0) || !(passes >= 1)) return 0.0;
  return passes * std::max(0.0, bytes / passes / rate - floor_s);
}

/// The time a serving step's norm, activation and rotary kernels take beyond the floor
/// kernels x floor already charges them (kernels_per_layer counts each), on the busiest rank:
/// per layer of each group, 2 - fused_norms[i] norms (norm_kernel_bytes_per_token; TensorRT-
/// LLM's custom all-reduce replaces the norm it fuses, engine_step) and the rotary kernel of
/// a GQA/MHA/MQA layer (rotary_kernel_bytes_per_token) over `attention_tokens`, and the
/// activation of a dense FFN or of the shared experts (activation_kernel_bytes_per_token,
/// width d_ff / tp_ffn) over `ffn_tokens`; each kernel memory_kernel_excess_s at `rate`
/// (bytes/s), `floor_s` and `passes` micro-batches. Not priced here: the routed experts'
/// activation (engine_step prices it over the busiest rank's pairs:
/// routed_expert_activation_bytes_per_pair), MLA's latent norms, and separate quantization
/// passes, which kernels_per_layer does not count.
/// `fused_norms` holds one entry per model group (missing entries count 0). Seconds; never
/// throws.
inline double memory_kernels_excess_s(const Deployment& dep, double attention_tokens, double ffn_tokens, const std::vector<double>& fused_norms,
                                      double rate, double floor_s, double passes) {
  const auto& m = dep.model;
  const auto& L = dep.mechanisms.layout;
  const std::string_view engine = dep.mechanisms.tp_all_reduce.name;
  const double tp_a = static_cast<double>(std::max<int64_t>(L.tp_attention, 1));
  const double tp_f = static_cast<double>(std::max<int64_t>(L.tp_ffn, 1));
  const double norm_out = memory_kernel_output_bytes(engine, class_of(dep.weights.attention, dep.system.chip));
  const double act_out = memory_kernel_output_bytes(engine, class_of(dep.weights.dense_ffn, dep.system.chip));
  const double norm = memory_kernel_excess_s(attention_tokens * norm_kernel_bytes_per_token(static_cast<double>(m.d_model), norm_out), rate, floor_s, passes);
  double total = 0;
  for (std::size_t i = 0; i < m.groups.size(); ++i) {
    const LayerGroup& g = m.groups[i];
    const double fused = i < fused_norms.size() ? std::clamp(fused_norms[i], 0.0, 2.0) : 0.0;
    double layer = (2.0 - fused) * norm;
    if (g.attention.kind == AttentionKind::gqa && g.attention.n_heads > 0) {
      const double q = std::ceil(static_cast<double>(g.attention.n_heads) / tp_a);
      const double kv = std::max(1.0, static_cast<double>(g.attention.n_kv_heads) / tp_a);
      layer += memory_kernel_excess_s(attention_tokens * rotary_kernel_bytes_per_token(q, kv, static_cast<double>(g.attention.head_dim), m.rotary_fraction),
                                      rate, floor_s, passes);
    }
    double width = 0;
    if (g.ffn.kind == FfnKind::dense) width = static_cast<double>(g.ffn.d_ff) / tp_f;
    else width = static_cast<double>(g.ffn.n_shared_experts * g.ffn.d_shared_expert) / tp_f;
    if (width > 0) layer += memory_kernel_excess_s(ffn_tokens * activation_kernel_bytes_per_token(width, g.ffn.gated, act_out), rate, floor_s, passes);
    total += layer * static_cast<double>(g.count);
  }
  return total;
}

}  // namespace chalk::detail
