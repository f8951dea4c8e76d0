// Private to src/engine: a mixed step's work per data-parallel attention rank, for the
// engine step (overhead.cc). In a replica whose attention is data parallel (attention TP t
// < n chips: n / t ranks) every sequence lives on one rank: its prompt's chunks, its KV
// and its decode attention run there (SGLang --enable-dp-attention, vLLM
// --data-parallel-size, TensorRT-LLM enable_attention_dp). A step's attention part lasts
// as long as its busiest rank's; the experts (EP over all n chips) see every rank's tokens.
#pragma once

#include <cstdint>
#include <vector>

#include "chalk/engine/roofline.h"
#include "chalk/engine/step_mix.h"

namespace chalk::detail {

/// The work of one unit (a data-parallel rank, or a chip when KV is split by batch).
struct RankLoad {
  double tokens = 0;      ///< query tokens through the projections: decodes x q + chunk tokens
  double head_tokens = 0; ///< LM-head rows: decodes x q + one per chunk
  double core_flops = 0;  ///< attention-core FLOPs over all layers (as overhead.cc's core_flops)
  double kv_bytes = 0;    ///< KV, indexer and state bytes over all layers, before any head split
};

/// The loads of `units` units under `mix`: each decode and each chunk on the unit
/// mix.decode_ranks / mix.chunk_ranks name when `use_given` and they are set, else on
/// the unit with the fewest tokens so far (ties: the lowest; in the mix's order, decodes
/// first), so that S equal sequences put ceil(S / units) on the busiest.
/// Throws std::logic_error for a given rank outside [0, units).
std::vector<RankLoad> rank_loads(const Deployment& dep, const StepMix& mix, int64_t units, bool use_given);

/// rank_loads into `load` (resized to the units; its storage reused from call to call).
void rank_loads_into(const Deployment& dep, const StepMix& mix, int64_t units, bool use_given, std::vector<RankLoad>& load);

/// The busiest unit's share of a quantity over its mean: max / (sum / units); 1 when the
/// sum is 0 or there is one unit.
double busiest_over_mean(const std::vector<RankLoad>& loads, double RankLoad::*field);

/// The busiest of `groups` groups of consecutive ranks (each groups' tokens summed) over
/// the mean group: the share of a layer split `groups` ways whose groups gather the tokens
/// of their ranks (a dense FFN under TP tp_ffn >= t: n / tp_ffn groups). With as many
/// groups as ranks or more, or ranks not a multiple of groups, the ranks' token share.
double busiest_group_share(const std::vector<RankLoad>& loads, int64_t groups);

}  // namespace chalk::detail
