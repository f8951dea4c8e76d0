// CUDA graphs in the serving engines: the batch sizes an engine captures, the padding of a
// step up to the next captured size, and eager execution above the largest, where the host
// launches every kernel itself (docs/formulas.md, "CUDA graphs").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace chalk {

/// CPU time to launch one dependent kernel of an eager (graph-less) forward pass, 28.8 us:
/// a decode step of Llama 3.1 8B on an H100 SXM5 at batch 1 takes 8.4 ms in eager mode and
/// 5.1 ms replayed as a CUDA graph (cloudai.pt, "CUDA Graphs + torch.compile: 1.65x LLM
/// Decode Speedup", 2026); eager, the step is launch-bound, so 8.4 ms is the host issuing
/// this model's 292 kernels (kernels_per_layer: 32 layers x (5 + 4) + 4 per step), 8.4e-3 /
/// 292 = 28.8 us. It is the whole Python path of one fused stage (module call, PyTorch
/// dispatch, several cudaLaunchKernel calls of ~2-5 us each), not one driver call.
/// Cross-check: vLLM PR #1440 (2023), Llama 2 7B at batch 1, 12.0 ms per token eager
/// against 10.5 ms with graphs: 12.0e-3 / 292 = 41 us in that older, heavier Python loop.
inline constexpr double kEagerLaunchSPerKernel = 8.4e-3 / 292;

/// How an engine runs its forward passes: which batch sizes replay a captured CUDA graph
/// (a step of a size between two captured ones is padded up to the next, and the GPU runs
/// the padded batch's matmuls), and where it runs eagerly instead, its host launching each
/// kernel (kEagerLaunchSPerKernel): above the largest captured size, on steps the engine
/// does not capture, or everywhere under --enforce-eager (vLLM's name). Eager work is
/// launched asynchronously: the GPU step is max(its kernels' GPU time, their launches).
struct CudaGraphs {
  /// Captured sizes, ascending, >= 1: tokens per data-parallel rank (per_token) or decode
  /// sequences per rank. Empty: the engine's graphs are not modelled (every step runs at
  /// the graph floor, unpadded: the bare GPU step, or a runtime launching from C++).
  std::vector<int64_t> sizes;
  /// true: sizes count the step's tokens (vLLM: a decode sequence pushes 1 + drafts), and
  /// a step of prefill tokens alone replays the graph of its tokens too (vLLM V1's piecewise
  /// graphs); false: its decode sequences (SGLang, TensorRT-LLM, vLLM V0), a step of
  /// prefill alone runs eagerly. SGLang and vLLM V0 run prefill and decode batches apart,
  /// so a step here that holds both is the average of the two: its decodes replay their graph.
  bool per_token = true;
  /// true: a step with any prefill tokens runs eagerly, graphs replaying decode-only steps
  /// (TensorRT-LLM, which mixes context and generation requests in one iteration).
  bool decode_only = false;
  /// true: a step between two captured sizes is padded up to the next; false: only a
  /// captured size replays its graph, any other runs eagerly (TensorRT-LLM without
  /// cuda_graph_config.enable_padding).
  bool padding = true;
  /// SGLang: the largest captured size when its tp_size (every chip of the replica,
  /// data-parallel attention included) is below 4 (its cuda_graph_max_bs default on 80-160
  /// GB GPUs); 0 = sizes.back().
  int64_t max_below_tp4 = 0;
  /// --enforce-eager: no graphs at all, every step eager.
  bool eager = false;
  /// Host time to launch one kernel eagerly, seconds >= 0.
  double launch_s_per_kernel = kEagerLaunchSPerKernel;
  std::string source;
};

/// vLLM V1's default capture sizes (vllm/config/vllm.py, VllmConfig._set_cudagraph_sizes,
/// vllm-project/vllm @ 09f030eaf851): the largest is m = min(max_num_seqs x
/// decode_query_len x 2, 512, max_num_batched_tokens), decode_query_len = 1 + speculative
/// tokens; the sizes are 1, 2, 4 (those <= m), multiples of 8 from 8 below min(m + 1, 256),
/// then multiples of 16 from 256 to m. Default max_num_seqs 1024 and 8192 tokens: 1, 2, 4,
/// 8, ..., 248, 256, 272, ..., 512 (51 sizes). Arguments >= 1, else InputError.
std::vector<int64_t> vllm_capture_sizes(int64_t max_num_seqs, int64_t max_num_batched_tokens, int64_t decode_query_len = 1);

/// vLLM V0's (releases before 0.6; vllm/worker/model_runner.py _BATCH_SIZES_TO_CAPTURE,
/// v0.4): 1, 2, 4 and multiples of 8 up to 256, those <= max_num_seqs (default 256),
/// plus the first size above it, decode steps. max_num_seqs >= 1, else InputError.
std::vector<int64_t> vllm_v0_capture_sizes(int64_t max_num_seqs);

/// SGLang's (python/sglang/srt/server_args.py, ServerArgs._generate_cuda_graph_batch_sizes,
/// no speculative decoding): 1, 2, 4, 8, 12, 16..256 by 8, 272..496 by 16, then 512 up by
/// 32, those <= cuda_graph_max_bs (default 256 below TP 4, 512 at TP 4 or more on 80-160
/// GB GPUs, 512 above 160 GB; SGLang's tp_size counts every chip of the replica).
/// cuda_graph_max_bs >= 1, else InputError.
std::vector<int64_t> sglang_capture_sizes(int64_t cuda_graph_max_bs);

/// TensorRT-LLM's PyTorch backend (tensorrt_llm/llmapi/llm_args.py, CudaGraphConfig
/// ._generate_cuda_graph_batch_sizes; cuda_graph_config on by default, max_batch_size 0 ->
/// 128, enable_padding false): without padding 1..31, 32, 64, 128, then powers of two from
/// 256 below max_batch_size, and max_batch_size itself; with padding 1, 2, 4, 8..128 by 8
/// instead of the first part. Without padding a batch that is not captured runs eagerly.
/// max_batch_size >= 1, else InputError.
std::vector<int64_t> trtllm_capture_sizes(int64_t max_batch_size, bool enable_padding);

/// The CUDA graphs of an engine as named ("vllm", "sglang", "trtllm", optionally with a
/// release "-X.Y"), given its running-sequence cap and step token budget (0 = the
/// engine's default: vLLM 1024 and 8192): vllm: vllm_capture_sizes (before 0.6:
/// vllm_v0_capture_sizes of decode sequences, max_num_seqs default 256); sglang: decode
/// sequences, sglang_capture_sizes(512), 256 below TP 4; trtllm: decode-only steps, trtllm_capture_sizes(128,
/// no padding), its PyTorch backend (the default from 1.0; before 1.0 the TensorRT engine
/// launched from C++: not modelled). Any other engine: none (empty sizes).
CudaGraphs engine_cuda_graphs(std::string_view engine, int64_t max_sequences = 0, int64_t max_batched_tokens = 0);

/// The captured size a step replays: the smallest of g.sizes >= `units` (tokens or decode
/// sequences of the busiest data-parallel rank, rounded up; without g.padding only `units`
/// itself), capped at max_below_tp4 when the replica's tp_size < 4; 0 when it runs eagerly
/// (above the largest, g.eager, or a prefill step with decode_only); `units` itself
/// (unpadded) when g.sizes is empty. For a step with no units at all, 0.
int64_t graph_batch(const CudaGraphs& g, double units, int64_t tp_size, bool has_prefill);

}  // namespace chalk
