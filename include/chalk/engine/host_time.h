// The serving engine's host (CPU) work per step: what its scheduler, input preparation,
// sampler post-processing and detokenizer spend on each running sequence, and whether the
// engine overlaps that work with the GPU's step (docs/formulas.md, "Host time per step").
#pragma once

#include <string>
#include <string_view>

namespace chalk {

/// Host time per sequence per step of vLLM's engine loop: 5.5 ms between two decode steps
/// at batch 256 (Llama 2 7B, ShareGPT; "about 5-6 ms", vLLM issue #10634, 2024-11-25),
/// 5.5e-3 / 256 = 21.5 us. Taken for SGLang too, which publishes no figure of its own.
inline constexpr double kVllmHostSPerSequence = 5.5e-3 / 256;

/// Host time per sequence per step of TensorRT-LLM's PyTorch executor: 45.11 ms of
/// host_step_time per iteration at 1,536 running sequences per rank (gpt-oss-120b on GB200,
/// attention DP2, max_batch_size 1536, concurrency 3072; TensorRT-LLM PR #10273,
/// 2025-12-24), 45.11e-3 / 1536 = 29.4 us.
inline constexpr double kTrtllmHostSPerSequence = 45.11e-3 / 1536;

/// An engine's host work per step.
struct HostTime {
  /// Seconds per sequence the step runs (decodes and prefill chunks), >= 0. One scheduler
  /// process per attention data-parallel rank: a step's host time is this x the sequences
  /// of its busiest rank. 0 = none (a bare GPU step).
  double s_per_sequence = 0;
  /// true: the host prepares step n+1 while the GPU runs step n (vLLM's async scheduling,
  /// SGLang's and TensorRT-LLM's overlap schedulers), so a step lasts max(GPU, host);
  /// false: one after the other, GPU + host.
  bool overlap = true;
  std::string source;
};

/// The host work of an engine's current release ("vllm", "sglang", "trtllm"; a release
/// suffix "-X.Y" is ignored here: sim::engine_policy turns overlap off for old releases):
/// kVllmHostSPerSequence for vllm and sglang, kTrtllmHostSPerSequence for trtllm, all
/// overlapped (vLLM since v0.14.0, async scheduling on by default, PR #27614 and its release
/// notes; SGLang since v0.4, lmsys.org 2024-12-04; TensorRT-LLM's PyTorch backend unless
/// disable_overlap_scheduler). Any other engine: none (0 s).
HostTime engine_host_time(std::string_view engine);

/// A step's length from its GPU time and its host time, both seconds >= 0: max(gpu, host)
/// when the engine overlaps them, gpu + host when it does not. Host time below the GPU's
/// is hidden; above it the GPU idles (vLLM issue #6854: 5-13 ms GPU bubbles per decode step
/// without overlap).
inline double step_with_host(double gpu_s, double host_s, bool overlap) {
  return overlap ? (gpu_s > host_s ? gpu_s : host_s) : gpu_s + host_s;
}

}  // namespace chalk
