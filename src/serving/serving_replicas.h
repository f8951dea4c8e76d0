// Internal to serving_frontier.cc: the replica sizes and layouts the frontier and the
// fast/slow modes compare, resolved against memory (docs/serving.md).
#pragma once

#include <cstdint>
#include <vector>

#include "chalk/engine/default_layout.h"
#include "chalk/engine/roofline.h"
#include "chalk/serving/serving.h"

namespace chalk::detail {

/// One replica that fits, resolved: a size and a layout.
struct Replica {
  Deployment dep;
  int64_t max_batch = 0;  ///< memory-full batch at the context (capped)
};

/// Why no serving engine runs one replica of `m` on `n` chips (chalk/engine/default_layout.h).
using chalk::replica_size_problem;

/// The replica sizes asked for (every one, runnable or not: the user asked), or else every
/// size from 1 to the scale-up domain that an engine can run (replica_size_problem); sorted
/// and unique. Throws InputError (naming --replica-chips) for a size outside 1..max_chips (2^20).
std::vector<int64_t> replica_sizes(const ModelSpec& m, const SystemSpec& s, const std::vector<int64_t>& asked);

/// Resolves every replica size and layout variant (the options' own; with mechanisms, a
/// derived layout and an MoE model, also data-parallel attention). Sizes whose weights, or
/// one sequence's KV, do not fit go to `excluded` with the reason; when no size can even be
/// placed, the options' own InputError is thrown.
std::vector<Replica> resolve_replicas(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base,
                                      const std::vector<int64_t>& sizes, int64_t context, int64_t cap,
                                      std::vector<ExcludedReplica>& excluded);

}  // namespace chalk::detail
