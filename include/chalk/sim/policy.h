// Engine policies: the scheduler defaults of the serving engines the simulator mimics
// (docs/simulator.md, "Engine policies"). Each policy is only a set of defaults; every
// field can be overridden.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace chalk::sim {

/// What a continuous-batching scheduler is allowed to put in one step.
struct EnginePolicy {
  std::string name;               ///< "vllm", "sglang", "trtllm" or "custom"
  int64_t max_batched_tokens = 8192;  ///< token budget of one step: decodes + prefill chunk tokens
  int64_t block_size = 16;        ///< tokens per paged KV block
  bool chunked_prefill = true;    ///< a prompt may be split over steps; off: whole prompts only
  int64_t max_sequences = 1024;   ///< running requests at most (the batch cap)
  std::string source;             ///< where the defaults come from
  /// KV admission: true reserves, when a request is admitted, the KV blocks of its whole
  /// life (prompt + every output token), so a started request is never preempted
  /// (TensorRT-LLM's default capacity scheduler, GUARANTEED_NO_EVICT:
  /// capacityScheduler.cpp counts getRemainingBlocksToCompletion of every running request);
  /// false takes blocks as tokens arrive and preempts when they run out (vLLM, SGLang,
  /// TensorRT-LLM's MAX_UTILIZATION).
  bool reserve_to_completion = false;
};

/// The defaults of a named engine:
/// - vllm: V1 engine, OpenAI server on a GPU with >= 70 GiB: max_num_batched_tokens 8192,
///   max_num_seqs 1024, block_size 16, chunked prefill on (vLLM engine arguments,
///   vllm/engine/arg_utils.py; block size 16 on CUDA: training-and-systems.md 9.1).
/// - sglang: chunked_prefill_size 8192 on 80-96 GB GPUs, page_size 1 (token-level radix
///   cache), max_running_requests bounded by the KV pool (here 4096) (SGLang server
///   arguments, python/sglang/srt/server_args.py).
/// - trtllm: trtllm-serve / LLM API: max_batch_size 2048, max_num_tokens 8192,
///   tokens_per_block 32, enable_chunked_prefill false (TensorRT-LLM "Tuning Max Batch
///   Size and Max Num Tokens" and LLM API reference); KV reserved to completion at
///   admission (capacity_scheduler_policy GUARANTEED_NO_EVICT, its default: TensorRT-LLM
///   "Useful Runtime Options", Capacity Scheduler Policy).
/// Throws InputError("engine") naming the value and the three names otherwise.
EnginePolicy engine_policy(std::string_view name);

/// The names engine_policy knows, in order.
std::vector<std::string> engine_policy_names();

/// Checks a policy: budget 1..1,048,576 tokens, block size 1..1024, max sequences
/// 1..1,048,576. Throws InputError naming the field ("max_batched_tokens", "block_size",
/// "max_sequences").
void validate(const EnginePolicy& p);

}  // namespace chalk::sim
