// Which all-to-all kernels a step's expert-parallel exchange runs (the engines' rule), used
// by the engine step (overhead.cc) and defined beside ep_scale_out_copies (parallel_layout.cc).
#pragma once

namespace chalk {

/// Whether a step's expert-parallel exchange runs the low-latency (decode) all-to-all
/// kernels rather than the normal (high-throughput, prefill) ones, for a step of
/// `decode_sequences` decodes and `prefill_sequences` prompt chunks over all its ranks:
/// low-latency only for a pure decode step (decodes, no chunk); a step with any chunk runs
/// the normal kernels for every token of the step, the decodes' too (their copies per
/// domain, the normal kernels' SM share and overlap slowdown, no decode pipeline windows).
/// The engines' rule, the same for each: SGLang's default --deepep-mode auto resolves per
/// step to NORMAL when any attention-DP rank extends (is_extend_in_batch, OR-reduced over
/// the ranks) and LOW_LATENCY otherwise (sgl-project/sglang @ 004813e1dd46,
/// python/sglang/srt/layers/moe/utils.py, DeepEPMode.resolve). vLLM and TensorRT-LLM pick one
/// kernel family per process: vLLM's --all2all-backend (vllm-project/vllm @ 840e7972c6ab,
/// vllm/config/parallel.py: deepep_high_throughput or deepep_low_latency; its Expert Parallel
/// Deployment guide, Backend Selection Guide: high-throughput for multi-node prefill,
/// low-latency for multi-node decode), TensorRT-LLM's CommunicationFactory.create_strategy at start-up
/// (NVIDIA/TensorRT-LLM @ 03c36d6222ad, tensorrt_llm/_torch/modules/fused_moe/communication/
/// communication_factory.py: NVLinkOneSided, NVLinkTwoSided, then DeepEP before
/// DeepEPLowLatency); chalk prices their steps by the same rule, the kernels suited to the
/// step (docs/formulas.md, Expert-parallel traffic). Counts below 0 count as 0; never throws.
bool ep_low_latency_step(double decode_sequences, double prefill_sequences);

}  // namespace chalk
