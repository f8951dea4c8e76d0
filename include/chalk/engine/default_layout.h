// What a command assumes when the user names only a model and a system: the smallest
// replica an engine can run the model on, and the layout the search ranks best on it
// (issue 11: realistic by default; docs/formulas.md, "Defaults").
#pragma once

#include <cstdint>
#include <optional>

#include "chalk/engine/layout_search.h"
#include "chalk/engine/roofline.h"

namespace chalk {

/// The best layout for exactly `n_chips` chips as one replica: the first fitting candidate
/// of search_layouts(m, s, base, {n_chips, context}) whose replica spans all n_chips, ranked
/// by decode tokens/s per chip with each layout's HBM-filling batch (throughput objective).
/// nullopt when no layout of one n_chips replica fits (weights plus one sequence at
/// `context`). Throws as search_layouts.
std::optional<LayoutCandidate> best_single_replica_layout(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base,
                                                          int64_t n_chips, int64_t context);

/// The smallest replica an engine can run the model on: the first size n, over the divisors
/// of the scale-up domain in ascending order and then 2, 3, ... 64 whole domains, on which
/// the weights, the reserve and one sequence at `context` tokens fit in HBM with a layout
/// whose attention splits whole heads. The layout is `base`'s when it states one
/// (mechanisms on with a tensor- or expert-parallel degree, or two micro-batches: sizes its
/// degrees do not divide are skipped) or the plain roofline's even sharding (mechanisms
/// off); otherwise any candidate of best_single_replica_layout. An 8B model in bf16 on an
/// H100 SXM: 1; Llama 3.1 70B bf16 on H100 SXM (141.1 GB against 72 GB usable each): 2
/// (144 GB holds the weights and one sequence's 1.34 GB of KV at 4096 tokens); DeepSeek-V3
/// on H200: 8, on GB200 NVL72: 6, on H100: 16 (two 8-GPU domains). Throws
/// InputError (field "chips") when nothing up to 64 domains fits, and as search_layouts.
int64_t smallest_replica_chips(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base, int64_t context);

}  // namespace chalk
