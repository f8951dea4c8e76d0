// Every number explains itself (issue 18): for a decode step or a prefill, how each
// reported figure was computed: its formula in symbols, the values put in (with units
// and where each comes from), the algebra with those values, and the result. One source
// for every front end: `chalk decode --explain` prints them under the table, `chalk web`
// shows them when a number is clicked (both through the command's --json "explanations").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chalk/engine/layout_search.h"
#include "chalk/engine/roofline.h"

namespace chalk {

/// One value put into a formula.
struct ExplainInput {
  std::string symbol;  ///< as in the formula: "B", "N_active", "F"
  std::string name;    ///< in words: "batch (sequences per step)"
  double value = 0;    ///< in `unit`
  std::string unit;    ///< "sequences", "FLOP/s per chip", "bytes"
  std::string source;  ///< where it comes from: a flag, the model's config.json, a datasheet
};

/// How one reported figure was computed.
struct Explanation {
  std::string key;          ///< the output key it explains ("t_compute_ms", "cost_usd_per_mtok")
  std::string quantity;     ///< what it is, in words
  std::string formula;      ///< in symbols: "T_compute = B (2 N_active + A(S)) / (n F eff_mm)"
  std::vector<ExplainInput> inputs;
  std::string substituted;  ///< the formula with the values put in, and its value
  double result = 0;        ///< the figure as reported, in `unit`
  std::string unit;         ///< "ms", "tok/s", "USD per 1M tokens"
  std::string source;       ///< lecture timestamp, paper section, docs/formulas.md section
  std::string note;         ///< how the reported figure differs from the formula (engine step), or empty
};

/// The figures of one decode step (decode_step(d, batch, context)) in the order the
/// `chalk decode` table shows them: KV bytes per token, the roofline's compute, weight
/// and KV terms and step (lecture 2:21-15:30), the engine step's composition
/// (T_ops + T_comm + T_overhead, docs/formulas.md), tokens/s, tokens/s per user and per
/// chip, and the cost per 1M tokens (n price T_step / B). Throws as decode_step.
std::vector<Explanation> explain_decode(const Deployment& d, int64_t batch, int64_t context);

/// The same for a prefill of `batch` prompts of `prompt` tokens after `prefix` cached
/// tokens (prefill_step; lecture 1:41-1:51): compute with the quadratic attention term,
/// weights read once, KV read and written once, TTFT, tokens/s and cost per 1M input
/// tokens. Throws as prefill_step.
std::vector<Explanation> explain_prefill(const Deployment& d, int64_t batch, int64_t prompt, int64_t prefix = 0);

/// HBM of the replica by component at `batch` sequences of `context` tokens
/// (memory_plan(d, batch, context)): hbm_total_gb (n x capacity, the limit), weights_gb,
/// kv_cache_gb (B x KV bytes of one sequence at S), reserve_gb (the reserve fraction x
/// HBM) and max_batch_at_context ((HBM - weights - reserve) / KV of a sequence). Lecture
/// 19:52-21:51; DESIGN.md 1. Throws as memory_plan.
std::vector<Explanation> explain_memory(const Deployment& d, int64_t batch, int64_t context);

/// Why the winner of a layout ranking (search_layouts, best first) wins: its decode
/// tok/s per chip = batch / (T_step x chips) with T_step = T_ops + T_comm + T_overhead
/// (docs/formulas.md, Layout search), each term given, beside the runner-up's step and
/// tok/s per chip. `query_batch` as LayoutQuery::batch (0: each replica's HBM-filling
/// batch over its own chips). Empty when nothing fits. The result equals the first row of
/// `chalk layouts --json`.
std::vector<Explanation> explain_layout_winner(const std::vector<LayoutCandidate>& ranked, int64_t n_chips, double query_batch);

/// Four significant figures, plain for ordinary magnitudes ("0.01234", "1234"), from
/// 100,000 up with a K/M/B/T suffix ("327.7K"; "1.2e+16" past 1e16): how every explanation
/// writes its algebra (analyses' builders use it too).
std::string explain_number(double v);

}  // namespace chalk
