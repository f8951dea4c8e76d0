// A discrete-event simulator of one serving-engine replica (docs/simulator.md): requests
// arrive, wait, are admitted under a token budget and a KV-block budget, run in
// continuously batched steps of prefill chunks and decodes, are preempted (recompute) when
// the paged KV cache runs out, and finish. Each step's time is the engine model's for the
// exact mix in it (mixed_step_time, roofline.h). Pure and deterministic: the same inputs
// give the same run.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "chalk/engine/step_mix.h"
#include "chalk/serving/serving.h"
#include "chalk/sim/kv_offload.h"
#include "chalk/sim/lora.h"
#include "chalk/sim/policy.h"
#include "chalk/sim/traffic.h"

namespace chalk::sim {

/// Which part of a request a replica runs.
enum class Phase {
  both,     ///< aggregated serving: prefill and decode
  prefill,  ///< a disaggregated prefill pool: a request ends at its first token
  decode,   ///< a disaggregated decode pool: a request arrives with its prompt's KV and its first token
};

struct SimOptions {
  EnginePolicy policy = engine_policy("vllm");
  /// The simple mode of prefix caching: a fixed fraction of each prompt's tokens found in
  /// the prefix cache: they are neither computed nor transferred, but are read as the
  /// prefix of the first chunk and hold KV blocks. [0, 1). Traffic with token structure
  /// (Request::prefix) runs the real cache instead (hits emerge from the trace, the KV pool
  /// and LRU eviction); the two exclude each other (InputError "prefix_hit_rate").
  double prefix_hit_rate = 0;
  /// KV blocks of the replica; 0 = what HBM holds beside the weights and the reserve:
  /// floor((HBM - weights - reserve) / (block_size x KV bytes per token)) (memory_plan).
  int64_t kv_blocks = 0;
  /// Speculative decoding / MTP (the levers of `chalk decode`: --draft K, --acceptance a or
  /// --accepted-tokens, --drafter): each decoding sequence verifies K + 1 tokens a step (the
  /// step's budget and KV blocks count K + 1; the step prices them as K + 1 query tokens at
  /// the sequence's context, the drafter's K passes added as decode_step adds them) and
  /// keeps 1..K+1 of them, drawn per sequence per step (speculation.h, AcceptanceDraw).
  /// draft_tokens 0 (the default): plain decode. Checked by validate_speculation.
  ServingLevers speculation;
  /// Seed of the acceptance draws (the same seed, the same run).
  uint64_t speculation_seed = 1;
  /// KV offload tiers behind the prefix cache (kv_offload.h; docs/simulator.md 1.8): host
  /// DRAM and SSD capacities per replica and their fetch rates. They act only where the
  /// prefix cache runs (traffic with token structure, not a decode pool); all 0 (the
  /// default): the run is exactly the run without tiers.
  KvOffload kv_offload;
  /// LoRA adapters (lora.h; docs/simulator.md 1.9): the requests' Request::adapter name one
  /// of lora.adapters; max_loras HBM slots (taken from the KV cache), loaded over the host
  /// link on a miss (LRU), the step waiting; a step with adapter requests adds the
  /// multi-adapter GEMM (lora_step_work). Not enabled (the default): the run without LoRA.
  LoraSpec lora;
  /// Pipeline stages of the replica (docs/simulator.md 1.10): 1 (the default) none; N > 1:
  /// the deployment simulated is the busiest stage's (pipeline_stage_model on one stage's
  /// chips), the replica N x its chips; each step runs N microbatches in flight, formed
  /// under N x max_batched_tokens (each chunk at most max_batched_tokens), and lasts the
  /// pipeline's cycle (engine/pipeline.h): a request's tokens are one pass of every stage
  /// apart, the replica's throughput that of N stages busy at once. The KV blocks are the
  /// stage's (it holds every token's KV over its layers). Throws InputError("pp") below 1,
  /// with data-parallel attention, or on a system without a scale-out network.
  int64_t pipeline_stages = 1;
  /// Optional progress hook for a caller that bounds a run's work (chalk web: a deadline,
  /// a step budget, a client that has gone). simulate() calls it with the number of steps
  /// run since its last call: every 1,024 steps and once at the end (so the calls sum to
  /// SimRun::n_steps). It may throw to abandon the run; the exception propagates out of
  /// simulate() unchanged. Empty (the default): no calls, no cost.
  std::function<void(int64_t steps)> progress;
};

/// What happened to one request. Times in seconds from the start of the run.
struct RequestRecord {
  double arrival_s = 0;
  double scheduled_s = 0;     ///< first step that ran any of it (queueing delay = scheduled - arrival)
  /// End of the step that produced its first token; a disaggregated decode pool's request
  /// (Phase::decode): when the pool admitted it, the prefill's token then reaching the user.
  double first_token_s = 0;
  double finish_s = 0;        ///< end of the step that produced its last token
  int64_t input_tokens = 0, output_tokens = 0;
  int64_t cached_tokens = 0;  ///< prompt tokens served from the prefix cache
  int64_t preemptions = 0;
  /// Never run: over_context, or needs more KV blocks than the replica has, or the replica
  /// holds no KV cache at all (SimRun::fits false: every request is rejected).
  bool rejected = false;
  /// Rejected because input + output tokens exceed the model's max_position_embeddings
  /// (ModelSpec::max_context), as vLLM's OpenAI server refuses a request whose prompt plus
  /// max_tokens exceed max_model_len ("This model's maximum context length is ...").
  bool over_context = false;
};

/// One engine step.
struct StepSample {
  double start_s = 0, duration_s = 0;
  int32_t decodes = 0;         ///< sequences that decoded one token
  /// Of the tokens the step produced, those whose request's previous token came at the
  /// step's start: their inter-token latency is this step's duration.
  int32_t steady_tokens = 0;
  int32_t prefill_tokens = 0;  ///< prompt tokens computed (chunks)
  int32_t running = 0;         ///< requests holding KV blocks after scheduling
  int32_t waiting = 0;         ///< requests queued after scheduling
  int64_t kv_blocks_used = 0;  ///< after the step's allocations
  /// The busiest chip's matmul and HBM busy time within the step (mixed_step_work), for
  /// its energy (sim/energy.h).
  double compute_s = 0, memory_s = 0;
};

/// A replica's run.
struct SimRun {
  bool fits = true;            ///< the weights and the reserve fit in HBM
  std::string reason;          ///< why not, when !fits
  std::vector<RequestRecord> requests;  ///< in the input's order
  std::vector<StepSample> steps;        ///< every step
  int64_t n_steps = 0;
  int64_t kv_blocks_total = 0;
  int64_t kv_blocks_peak = 0;
  int64_t kv_blocks_leaked = 0;  ///< blocks still held when every request has finished (must be 0)
  /// Prefix caching ran (the traffic carries token structure, Request::prefix; docs/
  /// simulator.md, "Prefix caching"): RequestRecord::cached_tokens are the blocks found
  /// at first admission. Cached blocks of finished requests stay until evicted, and are
  /// not counted as leaked.
  bool prefix_caching = false;
  int64_t kv_blocks_evicted = 0;  ///< cached blocks evicted (LRU) to make room
  /// KV offload tiers (SimOptions::kv_offload, with the prefix cache): each tier's capacity
  /// in blocks, the prompt tokens of first admissions fetched from host DRAM and from SSD
  /// (part of RequestRecord::cached_tokens), the bytes fetched and the fetch seconds summed
  /// over every admission, and the blocks HBM evicted into the tiers.
  bool kv_offload = false;
  int64_t offload_host_blocks = 0, offload_ssd_blocks = 0;
  int64_t offload_host_tokens = 0, offload_ssd_tokens = 0;
  double kv_fetched_bytes = 0, kv_fetch_s = 0;
  int64_t kv_blocks_offloaded = 0;
  KvOffloadRates offload_rates;  ///< the rates the fetches ran at, with their sources

  int64_t preemptions = 0;
  int64_t rejected = 0;
  double end_s = 0;              ///< when the last request finished
  double busy_s = 0;             ///< sum of step times
  /// Integral of the requests in the system (arrived, not finished) over time, request-
  /// seconds, accumulated step by step (Little's law: = arrival rate x mean time in system x end_s).
  double requests_in_system_s = 0;
  /// Token gaps that are not one step long (a preempted request's resumption): seconds.
  /// Every other inter-token latency is the duration of the step that produced the token.
  std::vector<double> long_token_gaps_s;
  /// Step-time-weighted sums for means over time.
  double decode_sequences_s = 0;   ///< integral of decodes per step over busy time
  double kv_blocks_s = 0;          ///< integral of KV blocks used over busy time
  /// Speculative decoding (SimOptions::speculation): verify steps run (one per decoding
  /// sequence per step) and the tokens they kept, as drawn (AcceptanceDraw, before a
  /// request's last step cuts them to its remaining output); their ratio is the measured
  /// mean of tokens kept per step. Both 0 without drafts.
  int64_t verify_steps = 0;
  int64_t verify_tokens_kept = 0;
  /// LoRA (SimOptions::lora): one adapter's bytes (whole), the slots' HBM (all chips), one
  /// load's seconds over the host link (bytes/s per chip, with its source); loads (misses),
  /// slot evictions, the seconds the loads and the multi-adapter GEMM added to steps, and the
  /// steps that ran adapters.
  bool lora = false;
  double lora_adapter_bytes = 0, lora_hbm_bytes = 0, lora_load_s_each = 0, lora_host_bytes_per_s = 0;
  std::string lora_host_source;
  int64_t lora_loads = 0, lora_evictions = 0, lora_steps = 0;
  double lora_load_s = 0, lora_gemm_s = 0;
};

/// Simulates `requests` (any order; sorted by arrival inside) on one replica `d`:
/// each step, running requests in admission order take the budget first (a decode 1
/// token, or K + 1 with SimOptions::speculation; a chunked prompt min(what is left, the
/// budget)), allocating the KV blocks their
/// new tokens need; when none are free the most recently admitted request is preempted
/// (its blocks freed, its prompt and generated tokens recomputed later, vLLM's recompute
/// mode); then, if nothing was preempted, waiting requests are admitted first come first
/// served while the budget, the blocks and max_sequences allow (without chunked prefill a
/// prompt must fit the budget whole, unless it runs alone). The step takes
/// mixed_step_time(d, mix); a prompt whose last chunk ran yields its first token at the
/// step's end, each decode one token. A request whose input + output exceed the model's
/// max_position_embeddings, or needing more blocks than the replica has, is rejected
/// (counted, never run; RequestRecord::over_context says which). Under data-parallel attention (attention TP t < n
/// chips) an admitted request lives on the rank holding the fewest admitted requests until
/// it finishes or is preempted (StepMix::decode_ranks). Requests with token structure
/// (Request::prefix) run the prefix cache (docs/simulator.md 1.6): admission takes the
/// longest run of cached whole blocks (at most the prompt - 1 tokens) as computed, computed
/// blocks join the cache, a finished request's blocks stay cached until a request short of
/// blocks evicts them, least recently used first, before any preemption; SimOptions::
/// prefix_hit_rate must then be 0. Throws InputError for bad options,
/// and, as vLLM refuses to start with max_num_batched_tokens below max_model_len when
/// chunked prefill is off (SchedulerConfig's check), for a token budget below the longest
/// prompt with chunked prefill off (field max_batched_tokens; not in a decode pool).
SimRun simulate(const Deployment& d, std::span<const Request> requests, const SimOptions& o, Phase phase = Phase::both);

/// The deployment as the engine of `policy` runs it, which simulate() prices every step on:
/// with mechanisms on, `d` with the engine's own tensor-parallel all-reduce kernels
/// (engine_tp_all_reduce, for vllm, sglang, trtllm), its host time per step (policy.host)
/// and the CUDA graphs its release captures under the policy's max_sequences and
/// max_batched_tokens (engine_cuda_graphs; eager where `d` says so); `d` unchanged with
/// mechanisms off. A step of this deployment is the simulator's step (batch_step_work,
/// engine/step_batch.h: `chalk step`, POST /api/step, chalk.step_time).
Deployment engine_deployment(const Deployment& d, const EnginePolicy& policy);

/// KV blocks a replica holds: floor((HBM - weights - reserve) / (block_size x KV bytes
/// per token as stored)); 0 when the weights do not fit.
int64_t kv_blocks_available(const Deployment& d, int64_t block_size);

}  // namespace chalk::sim
