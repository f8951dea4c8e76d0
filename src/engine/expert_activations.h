// Private to src/engine: how a serving engine moves each token's top-k copies into expert
// order and back, through HBM (docs/formulas.md, "Routed experts' token permutation").
#pragma once

#include <string_view>

#include "chalk/base/dtype.h"

namespace chalk::detail {

/// How an engine's MoE layer gathers the routed copies of its tokens and sums them back.
enum class MoeTokenPath {
  /// Copies each token's top-k rows into expert order, quantized to the GEMM's input format,
  /// and after GEMM2 reads the k rows and writes their weighted sum: TensorRT-LLM's CUTLASS
  /// MoE (cpp/tensorrt_llm/kernels/cutlass_kernels/moe_gemm/moe_kernels.cu:
  /// expandInputRowsKernel, "duplicates and permutes rows", then finalizeMoeRoutingKernel,
  /// "the k-way reduction"), behind its all-to-all or all-gather too.
  copy_permute,
  /// GEMM1 reads the tokens by index (no copy); GEMM2 writes the k rows and a separate sum
  /// reads them and writes the token: vLLM's Triton fused_experts
  /// (vllm/model_executor/layers/fused_moe/fused_moe.py: sorted_token_ids, intermediate_cache3
  /// of M x top_k x K, then moe_sum), SGLang's Triton MoE without DeepEP.
  index_gather,
  /// DeepEP's dispatch writes the expert layout and its combine sums the k rows inside the
  /// exchange (deepseek-ai/DeepEP), whose measured time chalk already prices (the ep_dispatch
  /// and ep_combine rows): SGLang and DeepSeek's engine under expert-parallel all-to-all.
  all_to_all_kernels,
};

/// The path of `engine` ("trtllm", "vllm", "sglang", "deepseek", ...; a "-X.Y" release suffix
/// is ignored): trtllm copies; the others use DeepEP's kernels where the step exchanges
/// tokens all-to-all (`ep_all_to_all`), else gather by index. Never throws.
inline MoeTokenPath moe_token_path(std::string_view engine, bool ep_all_to_all) {
  if (engine.substr(0, 6) == "trtllm") return MoeTokenPath::copy_permute;
  return ep_all_to_all ? MoeTokenPath::all_to_all_kernels : MoeTokenPath::index_gather;
}

/// Bytes per element of a routed expert's GEMM input, with its scales: fp4 0.5 + one fp8
/// scale per 16 (NVFP4) = 0.5625; fp8 and int8 1 + one fp32 scale per 128 (DeepSeek-V3's
/// 1 x 128 activation blocks, section 3.3.2) = 1.03125; bf16 2. Never throws.
inline double expert_input_bytes_per_element(MatmulPrecision p) {
  switch (p) {
    case MatmulPrecision::fp4:
      return 0.5 + 1.0 / 16;
    case MatmulPrecision::fp8:
    case MatmulPrecision::int8:
      return 1.0 + 4.0 / 128;
    default:
      return 2.0;
  }
}

/// Bytes a token-expert pair moves through HBM on `path`, for a model width d = `d_model`,
/// `top_k` routed experts a token, the GEMM input at `input_bytes` an element (above) and
/// the expert outputs in bf16 (2 bytes):
///   copy_permute:       2 d input_bytes (read, write the copy) + 2 d (1 + 1 / top_k)
///   index_gather:       2 d (1 + 1 / top_k) (the sum reads k rows, writes one)
///   all_to_all_kernels: 0 (in the exchange's measured time)
/// DeepSeek-R1 with NVFP4 experts in TensorRT-LLM (d 7168, top-8): 8,064 + 16,128 = 24,192.
/// Not counted on any path: the activation function's pass between the GEMMs (docs/formulas.md).
/// Widths and top_k below 1 count as 1; never throws.
inline double moe_token_path_bytes_per_pair(MoeTokenPath path, double d_model, double top_k, double input_bytes) {
  const double d = d_model < 1 ? 1 : d_model, k = top_k < 1 ? 1 : top_k;
  const double sum = 2 * d * (1 + 1 / k);
  switch (path) {
    case MoeTokenPath::copy_permute:
      return 2 * d * input_bytes + sum;
    case MoeTokenPath::index_gather:
      return sum;
    default:
      return 0;
  }
}

}  // namespace chalk::detail
