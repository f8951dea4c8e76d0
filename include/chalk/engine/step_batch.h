// chalk as a step-time predictor for other simulators (issue 31 item 9; docs/simulator.md,
// "chalk as a step-time predictor"): the time of one engine step for a batch composition
// that another simulator formed (BLIS's StepConfig, SGLang simulator's ScheduleBatch,
// llm-d's per-request figures), priced by the very function the request simulator prices
// its own steps with (mixed_step_work, step_mix.h). No second step model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chalk/engine/step_mix.h"

namespace chalk {

/// One step's batch as a scheduler formed it, in owned storage.
struct StepBatch {
  /// Prefill chunks: `tokens` new prompt tokens (>= 1) computed after `prefix` tokens (>= 0)
  /// already in the KV cache (earlier chunks of the same prompt, or prefix-cache hits). BLIS:
  /// num_new_prefill_tokens after progress_index; SGLang: extend_length after past_kv_length.
  std::vector<PrefillChunk> prefill;
  /// Decodes: the tokens each decoding sequence already holds in the KV cache (>= 1), which
  /// its one new token attends to: prompt + tokens generated so far, the new one excluded
  /// (the simulator's kv_tokens; BLIS's progress_index). One token per decode and step.
  std::vector<int64_t> decode;
};

/// Checks `b` against the model's context window: every chunk's tokens >= 1 and prefix
/// >= 0 with prefix + tokens <= max_context, every decode context in 1..max_context - 1
/// (its new token is position `context`, and positions run 0..max_context - 1:
/// max_position_embeddings, ModelSpec::max_context). Throws InputError naming the item
/// after `prefix` ("batches[3]." + "prefill[1].tokens", "--" + "decode[0]"), its value and
/// what was expected. max_context <= 0: no window check.
void check_step_batch(const StepBatch& b, int64_t max_context, const std::string& prefix);

/// The time of one engine step of `b` on replica `d`, and the busiest chip's compute and
/// memory busy time in it: mixed_step_work(d, mix) with mix the batch's decodes (contexts
/// and their sum) and chunks, one token per decode, no drafter, and ranks under
/// data-parallel attention left to the engine step (each sequence on the rank with the
/// fewest tokens so far; step_mix.h). This is exactly what the request simulator
/// (sim/simulator.h) computes for a step of that composition on the same deployment; the
/// simulator adjusts `d` to its engine first (sim::engine_deployment, sim/policy.h), so a
/// caller that wants the simulator's step passes that deployment. Seconds; all 0 for an
/// empty batch. Throws InputError as check_step_batch (prefix "batch.").
MixedStepWork batch_step_work(const Deployment& d, const StepBatch& b);

}  // namespace chalk
