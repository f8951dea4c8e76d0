// A step of unequal sequences, as a continuous-batching engine runs it: decodes at their
// own contexts and prefill chunks after their own prefixes (the request simulator's step,
// src/sim; docs/simulator.md). Priced by the same cost model as decode_step and
// prefill_step (roofline.h) and engine_step (overhead.h).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "chalk/base/units.h"
#include "chalk/engine/overhead.h"
#include "chalk/engine/roofline.h"

namespace chalk {

/// One prefill chunk of a mixed step: `tokens` new prompt tokens after `prefix` tokens
/// already in the KV cache (earlier chunks or prefix-cache hits).
struct PrefillChunk {
  int64_t tokens = 0;
  int64_t prefix = 0;
};

namespace detail {
struct StepMemoTable;
}

/// Reuse, across the steps of one simulation, of the engine step's parts that depend only
/// on the step's token counts: the GEMMs, dense and expert, the kernels and their floors,
/// the collectives and the CUDA graph are the same for every step with the same number of
/// decodes, number of chunks, sum of chunk tokens and tokens per sequence and, where
/// data-parallel rank loads enter them, the same busiest rank's shares of the attention
/// tokens, LM-head rows and FFN tokens (computed every step from the ranks; the attention
/// core, which reads each sequence's context, is priced every step). Results are
/// bit-identical with and without it: it keeps the values computed the first time.
/// A memo serves one Deployment, unchanged while in use:
/// it clears itself when given another one's address. Not thread-safe: one per simulation.
class StepMemo {
 public:
  StepMemo();
  ~StepMemo();
  StepMemo(const StepMemo&) = delete;
  StepMemo& operator=(const StepMemo&) = delete;
  /// The slots (step_mix.cc), allocated on first use.
  detail::StepMemoTable& table();

 private:
  std::unique_ptr<detail::StepMemoTable> table_;
};

/// A step of unequal sequences, as a continuous-batching engine runs it (the request
/// simulator, src/sim): every decode sequence at its own context, every prefill chunk of
/// its own length after its own prefix. The spans point into the caller's storage.
struct StepMix {
  std::span<const int64_t> decode_contexts;  ///< KV tokens each decode sequence reads
  /// Sum of decode_contexts (full-attention layers need only the sum, being linear in the
  /// context; sliding-window layers walk the list).
  int64_t decode_context_sum = 0;
  /// The aggregate form of the decodes: their number when decode_contexts is left empty,
  /// decode_context_sum being their contexts' sum (ignored when decode_contexts is set).
  /// Every term of the step reads the decodes through their count and that sum except the
  /// ones that walk each context: attention groups with a window or a sparse reach
  /// (attention_work.h), data-parallel rank loads (decode_ranks) and pipeline
  /// micro-batches; those throw std::logic_error on an aggregate mix. The request
  /// simulator's bulk decodes (docs/simulator.md 5) price their steps this way: the same
  /// doubles as the listed contexts, since only their integer sum enters.
  int64_t decode_count = 0;
  /// The step's decode sequences: decode_contexts' size, else decode_count.
  int64_t decodes() const { return decode_contexts.empty() ? decode_count : static_cast<int64_t>(decode_contexts.size()); }
  /// Whether each decode's context is listed (false: the aggregate form, decode_count > 0).
  bool contexts_listed() const { return decode_count == 0 || !decode_contexts.empty(); }
  std::span<const PrefillChunk> chunks;
  /// Query tokens each decode sequence pushes: 1, or 1 + K drafts verified (speculative
  /// decoding / MTP: the K + 1 tokens attend the sequence's context, its KV read once).
  double tokens_per_sequence = 1;
  /// The drafter of those drafts (speculative decoding / MTP; null: none, or free drafts):
  /// its drafter and draft_model are read, tokens_per_sequence - 1 passes over the decodes
  /// at their mean context, priced as decode_step prices them (roofline.h: merged into the
  /// roofline's compute and memory; with mechanisms added after the verify step, draft_cost.h
  /// engine_draft_time). Its tokens_per_sequence is ignored (this mix's is used).
  const DecodeLevers* drafting = nullptr;
  /// Data-parallel attention (attention TP t < n chips: n / t ranks): the rank, in
  /// [0, n / t), that holds each decode sequence's KV and runs its attention, and each
  /// chunk's (its whole prompt's). Empty: the engine step puts each sequence on the rank
  /// with the fewest tokens so far (equal sequences: ceil(S / ranks) on the busiest).
  std::span<const int32_t> decode_ranks;
  std::span<const int32_t> chunk_ranks;
  /// Where the engine step keeps its parts that depend only on token counts between steps
  /// (StepMemo; null: none kept). The same results either way.
  StepMemo* memo = nullptr;
};

/// engine_step for a mixed step (StepMix): the same mechanisms, with the attention core's
/// FLOPs and KV bytes summed per sequence and per chunk (each chunk's causal attention over
/// its own prefix), the matmul tokens = decodes x tokens_per_sequence + chunk tokens and
/// one LM-head row per decode token and per chunk. Under data-parallel attention each
/// sequence and chunk lives on one rank (decode_ranks, chunk_ranks): the attention
/// projections, LM head, router, attention core and the attention all-reduce take the
/// busiest rank's tokens, rows, FLOPs and KV bytes (each quantity's busiest rank); a dense
/// FFN under TP tp_ffn >= t the busiest group of tp_ffn / t ranks' tokens; the routed
/// experts all the step's tokens. So a lone prompt among decodes on other ranks costs at
/// least its own prefill_step. A mix of equal sequences gives exactly engine_step's
/// StepShape result. Throws InputError for negative contexts or chunks.
StepBreakdown engine_step(const Deployment& d, const StepMix& mix);

/// The time of one mixed step (StepMix: decodes at their own contexts and prefill chunks
/// after their own prefixes, as a continuous-batching engine runs them). With
/// d.mechanisms.enabled, engine_step(d, mix).t_step (overhead.h); else the roofline of the
/// whole mix as one step, max(T_compute, T_weights + T_kv), with the terms of decode_step
/// and prefill_step summed over the sequences (FLOPs: tokens x 2 N_active plus each
/// sequence's attention; weights: the experts touched by all the step's tokens, read once;
/// KV: decode contexts read, chunk prefixes read and chunk KV written). A mix of one decode
/// at context S gives decode_step(d, 1, S).t_step; one chunk of P tokens after prefix A,
/// prefill_step(d, 1, P, A).t_step. An empty mix takes 0 s. Throws InputError for negative
/// contexts or chunks.
Seconds mixed_step_time(const Deployment& d, const StepMix& mix);

/// A mixed step's time and how long the busiest chip's units were busy in it, the inputs
/// of its energy (hardware/power.h, step_energy_j).
struct MixedStepWork {
  Seconds t_step;     ///< mixed_step_time
  Seconds t_compute;  ///< matmul and attention FLOPs at the achieved rate (engine: summed per operation)
  Seconds t_memory;   ///< weights and KV read at the achieved bandwidth (engine: t_weights + t_kv)
};

/// mixed_step_time with the busy times behind it: with mechanisms engine_step(d, mix)'s
/// t_compute and t_weights + t_kv on the busiest chip; else the roofline's T_compute and
/// T_weights + T_kv. All 0 for an empty mix. Throws as mixed_step_time.
MixedStepWork mixed_step_work(const Deployment& d, const StepMix& mix);

/// A continuous-batching engine's steady step: `s.decode_sequences` decodes at context
/// `s.context` while `s.prefill_sequences` prompts of `s.prompt` tokens (on average, per
/// step) replace the requests that finish. With chunked prefill (whole_prompts false) the
/// prompts' tokens ride in every step, prefill compute filling the decode's memory-bound
/// time (Sarathi-Serve, Agrawal et al. OSDI 2024): engine_step(d, s). Without it
/// (TensorRT-LLM's default, enable_chunked_prefill false) each prompt runs whole in one
/// step: with f = s.prefill_sequences, the steps carry floor(f) or floor(f) + 1 whole
/// prompts, the latter a fraction f - floor(f) of the time, each priced as a StepMix of the
/// decodes and those prompts (under data-parallel attention a prompt lives on one rank, so
/// the others wait for it). Returns that step with t_step the expected time per step and
/// the other figures those of the more frequent kind. Throws as engine_step.
StepBreakdown steady_state_step(const Deployment& d, const StepShape& s, bool whole_prompts);

}  // namespace chalk
