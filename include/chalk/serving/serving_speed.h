// The cheapest replica and batch at a stated speed per user: what a host's advertised
// tokens/s per user implies (issue 34, `prices compare`; src/serving/serving_speed.cc).
#pragma once

#include <optional>
#include <vector>

#include "chalk/serving/serving.h"

namespace chalk {

/// The cheapest decode point that streams at least `per_user` tokens/s to each sequence,
/// over every replica size the frontier sweeps (1..scale-up domain, serving_replicas.h)
/// and its layouts: on each replica the largest batch at that speed (largest_batch_at_speed;
/// cost per token n price T_step / B falls as B grows while the speed 1 / T_step does not
/// rise), then the replica with the most tokens/s per chip (the cheapest, price aside).
struct SpeedChoice {
  std::optional<ModePoint> point;         ///< empty: no replica reaches the speed
  std::optional<Deployment> deployment;   ///< the replica of `point`, ready to price a prefill
  std::optional<ModePoint> fastest;       ///< batch 1 on the fastest replica; empty: none fits
  std::vector<ExcludedReplica> excluded;  ///< replica sizes whose weights do not fit
};
/// Never throws for a speed out of reach (a value, not an error). Throws InputError for a
/// speed that is not positive ("tok_per_s_per_user"), context < 0 ("context"), bad levers,
/// or base options make_deployment refuses.
SpeedChoice cheapest_replica_at_speed(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base,
                                      int64_t context, TokensPerSecond per_user, const ServingLevers& levers = {});

/// The same for several speeds at once, one SpeedChoice per speed in order: the replicas
/// are resolved once (what `prices compare` asks for every host of a model on a system).
std::vector<SpeedChoice> cheapest_replicas_at_speeds(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base,
                                                     int64_t context, const std::vector<TokensPerSecond>& per_user,
                                                     const ServingLevers& levers = {});

}  // namespace chalk
