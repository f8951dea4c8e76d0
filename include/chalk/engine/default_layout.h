// What a command assumes when the user names only a model and a system: the smallest
// replica an engine can run the model on, and the layout the search ranks best on it
// (issue 11: realistic by default; docs/formulas.md, "Defaults").
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "chalk/engine/layout_search.h"
#include "chalk/engine/roofline.h"

namespace chalk {

/// The best layouts for exactly `n_chips` chips as one replica (search_layouts(m, s, base,
/// {n_chips, context}), ranked by decode tokens/s per chip with each layout's HBM-filling
/// batch): `single`, the first fitting candidate without a pipeline (pp = 1), and
/// `pipeline`, a fitting pipeline candidate that ranks above it (else nullopt).
struct ReplicaLayouts {
  std::optional<LayoutCandidate> single;
  std::optional<LayoutCandidate> pipeline;
};
ReplicaLayouts replica_layouts(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base, int64_t n_chips,
                               int64_t context);

/// Every fitting layout of exactly `n_chips` chips as one replica without a pipeline, in the
/// order replica_layouts ranks them (decode tokens/s per chip at the batch HBM holds, best
/// first): for an MoE the candidates TP n with EP, attention TP t x n/t with EP, and
/// DP-attention with EP (layout_search.cc, layouts_for). The command that answers a latency
/// question (prefill TTFT, a simulated rate) picks among them by its own measure instead of
/// taking the first (issue 29 / issue 30 item 1). Empty when none fits. Throws as search_layouts.
std::vector<LayoutCandidate> single_replica_layouts(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base, int64_t n_chips,
                                                    int64_t context);

/// The best layout for exactly `n_chips` chips as one replica without a pipeline:
/// replica_layouts(...).single. A pipeline candidate is never returned (its callers deploy
/// one step of the layout on all n chips). nullopt when no such layout of one n_chips
/// replica fits (weights plus one sequence at `context`). Throws as search_layouts.
std::optional<LayoutCandidate> best_single_replica_layout(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base,
                                                          int64_t n_chips, int64_t context);

/// The smallest replica an engine can run the model on: the first size n, over the powers of
/// two up to the scale-up domain, the domain, its other divisors, and then 2, 3, ... 64
/// whole domains, on which the weights, the reserve and one sequence at `context` tokens fit in HBM. Unless `base`
/// states the layout, n is accepted exactly when the layout search lays out one replica of
/// n chips without a pipeline (best_single_replica_layout: a candidate that engines run,
/// layout_split_problem, and that fits), which the command then deploys: the default and
/// `chalk layouts` share the rule and never disagree. A stated layout is `base`'s
/// (mechanisms on with a tensor- or expert-parallel degree, or two micro-batches: sizes its
/// degrees do not divide, or whose heads it cannot split, are skipped) or the plain
/// roofline's even sharding (mechanisms off). An 8B model in bf16 on an H100 SXM: 1; Llama
/// 3.1 70B bf16 on H100 SXM (141.1 GB against 72 GB usable each): 2 (144 GB holds the
/// weights and one sequence's 1.34 GB of KV at 4096 tokens); DeepSeek-V3 on H200: 8, on
/// GB200 NVL72: 8 (data-parallel attention, EP8; 6 would hold it, but powers of two come
/// first), on H100: 16 (two 8-GPU domains); Phi-4 on TPU v5e: 4 (attention TP2 x 2 under
/// FFN TP4: TP4 splits its 40 heads but not its 10 KV heads). Throws InputError (field "chips") when
/// nothing up to 64 domains fits, and as search_layouts.
int64_t smallest_replica_chips(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base, int64_t context);

}  // namespace chalk
