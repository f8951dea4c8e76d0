// What a command assumes when the user names only a model and a system: the smallest
// replica an engine can run the model on, and the layout the search ranks best on it
// (issue 11: realistic by default; docs/formulas.md, "Defaults").
#pragma once

#include <cstdint>
#include <optional>

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

/// The best layout for exactly `n_chips` chips as one replica without a pipeline:
/// replica_layouts(...).single. A pipeline candidate is never returned (its callers deploy
/// one step of the layout on all n chips). nullopt when no such layout of one n_chips
/// replica fits (weights plus one sequence at `context`). Throws as search_layouts.
std::optional<LayoutCandidate> best_single_replica_layout(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base,
                                                          int64_t n_chips, int64_t context);

/// Why no serving engine runs one replica of `m` on `n` chips, or "" when one does (issue
/// 12: frontiers, and the default replica, offer only sizes an engine can run). Tensor parallelism over all n chips
/// needs whole heads (attention_split_problem: vLLM and SGLang assert heads % tp == 0) and
/// whole FFN columns (n divides every dense FFN's width and the shared experts' width:
/// vLLM's column-parallel layers assert it); an MoE model may instead run data-parallel
/// attention with its routed experts spread evenly and whole over the n chips (n divides
/// the experts of every MoE layer, as SGLang's --enable-dp-attention --ep-size n and
/// vLLM's expert parallelism assert). Llama 3.1 8B (32 heads, 8 KV heads, FFN 14336) within
/// an 8-GPU domain: 1, 2, 4, 8; DeepSeek-V3 (128 heads, 256 experts) within 72: 1, 2, 4,
/// 8, 16, 32, 64.
std::string replica_size_problem(const ModelSpec& m, int64_t n);

/// The smallest replica an engine can run the model on: the first size n, over the divisors
/// of the scale-up domain in ascending order and then 2, 3, ... 64 whole domains, on which
/// the weights, the reserve and one sequence at `context` tokens fit in HBM with a layout
/// whose attention splits whole heads; unless `base` states the layout, only sizes an
/// engine can run (replica_size_problem). The layout is `base`'s when it states one
/// (mechanisms on with a tensor- or expert-parallel degree, or two micro-batches: sizes its
/// degrees do not divide are skipped) or the plain roofline's even sharding (mechanisms
/// off); otherwise any candidate of best_single_replica_layout. An 8B model in bf16 on an
/// H100 SXM: 1; Llama 3.1 70B bf16 on H100 SXM (141.1 GB against 72 GB usable each): 2
/// (144 GB holds the weights and one sequence's 1.34 GB of KV at 4096 tokens); DeepSeek-V3
/// on H200: 8, on GB200 NVL72: 8 (6 would hold it, but 6 chips split neither its 128
/// heads nor its 256 experts evenly), on H100: 16 (two 8-GPU domains). Throws
/// InputError (field "chips") when nothing up to 64 domains fits, and as search_layouts.
int64_t smallest_replica_chips(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base, int64_t context);

}  // namespace chalk
