// Private to src/engine: the attention core's work in one step for one attention group,
// shared by the engine step (overhead.cc) and the simulator's mixed-step roofline
// (step_mix.cc), so that both price windows, sparse reach, indexer keys and linear-attention
// state the same way as decode_step and prefill_step (roofline.cc).
#pragma once

#include <cstdint>
#include <span>

#include "chalk/engine/overhead.h"
#include "chalk/engine/roofline.h"
#include "chalk/engine/step_mix.h"

namespace chalk::detail {

/// Per-layer attention-core work of one step, summed over its sequences (not yet times the
/// group's layers). Token counts are KV tokens read or written; FLOPs are per layer.
struct AttentionWork {
  double kv_tokens = 0;      ///< tokens of main KV read (decode: over the reach) or held (prefill)
  double index_tokens = 0;   ///< tokens of a sparse layer's indexer keys (over the window: all it holds)
  double sequences = 0;      ///< sequences whose fixed state is read and written once (2 x state_bytes)
  double decode_flops = 0;   ///< per query token of each decode sequence (times tokens per sequence)
  double prefill_flops = 0;  ///< causal attention of each prefill chunk over its prefix, with MLA's prefix term
};

/// The work of group `g` (spec: its AttentionSpec) for a uniform step `s`, or for `mix` when
/// it is not null (each decode at its own context, each chunk after its own prefix; `s` is
/// then ignored). Main attention reads min(context, reach) tokens (reach: sliding window or
/// sparse top-k; 0 = all), a sparse layer's indexer scores min(context, window) keys; a
/// prefill writes min(prefix + prompt, window) tokens of each. Formulas: docs/formulas.md
/// (attention core, sparse attention, linear attention) and docs/models.md.
AttentionWork attention_work(const Deployment::AttentionGroup& g, const AttentionSpec& spec, const StepShape& s, const StepMix* mix);

/// attention_work for a mix given by its parts: `decodes` decode sequences whose contexts sum
/// to `context_sum`, `contexts` each one's (read only where the group has a window or a reach,
/// which walk them; may be empty for full attention, linear in the context), and `chunks`.
/// The same values as the StepMix form.
AttentionWork attention_work(const Deployment::AttentionGroup& g, const AttentionSpec& spec, int64_t decodes, int64_t context_sum,
                             std::span<const int64_t> contexts, std::span<const PrefillChunk> chunks);

}  // namespace chalk::detail
