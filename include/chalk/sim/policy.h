// Engine policies: the scheduler defaults of the serving engines the simulator mimics
// (docs/simulator.md, "Engine policies"). Each policy is only a set of defaults; every
// field can be overridden.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chalk/engine/host_time.h"
#include "chalk/engine/roofline.h"

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
  /// Each request's fixed work outside the GPU steps, in seconds (>= 0): the API server
  /// (HTTP and OpenAI request handling), tokenization, the hand-off to the scheduler, and
  /// the detokenization and streaming of its first token back to the client. The simulator
  /// delays the request's arrival at the scheduler by it, so TTFT and end-to-end latency
  /// pay it once and it queues nothing on the GPU. 0 = none (a bare scheduler).
  double request_overhead_s = 0;
  /// The engine's release, "" for the current one ("0.10" from an engine named
  /// "vllm-0.10"); it decides the defaults that changed between releases (host.overlap).
  std::string version;
  /// The engine's host work per step (chalk/engine/host_time.h): time per sequence and
  /// whether it overlaps the GPU step. The simulator prices its steps with it.
  HostTime host;
  /// The scheduler forms step n+1 while step n runs on the GPU (the host overlap of vLLM's
  /// asynchronous scheduling, SGLang's overlap scheduler, TensorRT-LLM's overlap scheduler),
  /// so a request that reaches the scheduler after step n began waits for step n+1 to end
  /// and joins step n+2 at the earliest; an idle engine schedules it at once. Its TTFT pays
  /// about one more step than a scheduler that forms each step after the last ended: vLLM
  /// 0.15.1 on H100 under constant load measured 6.9 ms + 2.5 steps of median TTFT on four
  /// models (inference-sim/training default_args; data/measurements/vllm-load-suite.csv),
  /// where forming each step at the last one's end gives 6.9 ms + 1.5 (half a step waiting
  /// for the boundary, one step of prefill). engine_policy sets it with host.overlap.
  bool schedule_ahead = false;
};

/// The serving engines' per-request fixed work (EnginePolicy::request_overhead_s): 6.9 ms,
/// SGLang's OpenAI server over a mocked forward pass that busy-waits 2.632 ms per step,
/// one request at a time, 128-token prompts: median TTFT 9.54 ms - one 2.632 ms forward
/// = 6.91 ms (tenstorrent/tt-inference-server issue #3560, 2026-05-18, `vllm bench serve
/// --max-concurrency 1`). One measurement of one engine on one host CPU; taken for vLLM
/// and TensorRT-LLM too, whose OpenAI front ends have the same structure (an API-server
/// process, tokenization, IPC to the engine core, detokenization), with no figure of
/// their own yet. The prompt's tokenization is inside it for 128 tokens; its growth with
/// the prompt is not modelled.
inline constexpr double kEngineRequestOverheadS = 9.54e-3 - 2.632e-3;

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
/// Each names its request_overhead_s, kEngineRequestOverheadS, and its host work per step,
/// engine_host_time (overlapped with the GPU step in the current releases of all three).
/// A release may follow the name, "NAME-X.Y[.Z]": vllm before 0.14 and sglang before 0.4
/// run host and GPU one after the other. The name is read in any case ("VLLM", "SGLang");
/// the policy's `name` is the lower-case one. Throws InputError("engine") naming the value
/// and the three names otherwise, or a malformed release.
EnginePolicy engine_policy(std::string_view name);

/// The engine as named with its release, "vllm-0.10" ("vllm" for the current release):
/// what commands print and write for the engine simulated.
inline std::string release_name(const EnginePolicy& p) { return p.version.empty() ? p.name : p.name + "-" + p.version; }

/// The names engine_policy knows, in order.
std::vector<std::string> engine_policy_names();

/// Checks a policy: budget 1..1,048,576 tokens and at least one KV block, block size 1..1024, max sequences
/// 1..1,048,576, request overhead 0..60 s, host time per sequence 0..1 s. Throws InputError
/// naming the field ("max_batched_tokens", "block_size", "max_sequences",
/// "request_overhead_s", "host_s_per_sequence").
void validate(const EnginePolicy& p);

/// The constants of an engine profile (`chalk calibrate`; docs/file-formats.md, "Engine
/// profiles", format chalk-engine-profile/1): each one set replaces the engine's default,
/// each unset keeps it.
struct EngineConstants {
  std::optional<double> request_overhead_s;   ///< EnginePolicy::request_overhead_s, seconds per request
  std::optional<double> host_s_per_sequence;  ///< HostTime::s_per_sequence, seconds per sequence per step
  std::optional<double> kernel_floor_s;       ///< Calibration::kernel_floor, seconds per dependent kernel
  /// Calibration::allreduce_latency, seconds per barrier stage of the engine's custom TP
  /// all-reduce (collective.h tp_all_reduce); absent in profiles written before it: the default.
  std::optional<double> allreduce_latency_s;
};

/// A profile: the engine family it was fitted for ("vllm", "sglang", "trtllm") and its constants.
struct EngineProfile {
  std::string engine;
  EngineConstants constants;
  std::string source;  ///< the file it was read from, for messages
};

/// `p` with the profile's request overhead and host time per sequence (the policy prices
/// the simulator's steps with its own HostTime).
void apply(const EngineConstants& c, EnginePolicy& p);
/// `d` with the profile's kernel floor, all-reduce stage latency and host time per sequence
/// (the engine step's own).
void apply(const EngineConstants& c, Deployment& d);

/// The engine family of an engine name as engine_policy reads it ("VLLM-0.10" -> "vllm"); "" for
/// a name engine_policy does not know. Named apart from chalk::engine_family (engine_name.h),
/// which returns a view into its argument: with one name, sim code calling engine_family on a
/// string_view bound the view to this function's temporary (ASan: stack-use-after-scope).
std::string known_engine_family(std::string_view engine);

}  // namespace chalk::sim
