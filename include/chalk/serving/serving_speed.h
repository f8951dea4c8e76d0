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
/// Where no size within the domain holds the model, the smallest replica that does across
/// domains (smallest_replica_chips, tensor parallel over the scale-out network) and the
/// pipelines of the fewest stages, 2, 3, ..., whose stage fits a replica within one domain
/// (each stage size the frontier sweeps; pipeline_decode's cycle with as many microbatches
/// as stages, the speed a user sees), the same rule choosing among them: what `chalk
/// layouts` ranks and the serving commands price (Llama 3.1 405B bf16 on H100 at 20 tok/s
/// per user: PP2 x (TP8) at batch 100s, where TP16 across two hosts reached it at batch 1).
struct SpeedChoice {
  std::optional<ModePoint> point;         ///< empty: no replica reaches the speed
  /// The replica of `point`, ready to price a prefill; with `stages` > 1 the busiest stage
  /// (a Deployment of pipeline_stage_model on one stage's chips).
  std::optional<Deployment> deployment;
  /// Pipeline stages of `point` (its `pp`): 1, or more where no replica within the scale-up
  /// domain holds the model and stages of one domain each serve the speed cheaper than one
  /// replica across domains (review 4 M5: Llama 3.1 405B bf16 on H100, PP2 x (TP8) where
  /// `prices compare` priced TP16 over the scale-out network).
  int64_t stages = 1;
  std::optional<ModePoint> fastest;       ///< batch 1 on the fastest replica; empty: none fits
  std::vector<ExcludedReplica> excluded;  ///< replica sizes whose weights do not fit
  /// cheapest_serving_replica at a stated batch: the cheapest point on another replica size
  /// at that batch (what the choice beat); empty otherwise, or when no other size holds it.
  std::optional<ModePoint> runner_up;
  std::vector<int64_t> replica_sizes;     ///< cheapest_serving_replica at a batch: the sizes compared
};
/// Never throws for a speed out of reach (a value, not an error). Throws InputError for a
/// speed that is not positive ("tok_per_s_per_user"), context < 0 ("context"), bad levers,
/// or base options make_deployment refuses.
SpeedChoice cheapest_replica_at_speed(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base,
                                      int64_t context, TokensPerSecond per_user, const ServingLevers& levers = {});

/// The workload an operator's replica is chosen for (issue 30): a stated batch of sequences
/// on every replica, or else a speed per user.
struct ServingWorkload {
  int64_t batch = 0;                ///< > 0: each replica runs this many sequences
  TokensPerSecond per_user{0};      ///< with batch 0: the speed floor, tokens/s per user (> 0)
};

/// The deployment an operator would run for `w`, the one replica rule of `chalk prices
/// forward` and of the page's cost headline (which asks POST /api/prices/forward; issue 30
/// item 1). With w.batch > 0: over every replica size the frontier sweeps within the
/// scale-up domain (1..domain, serving_replicas.h) and its layouts, those whose HBM holds
/// w.batch sequences of `context` tokens beside the weights, each at that batch; the one
/// with the most decode tokens/s per chip (cost per token = n price T_step / B at one price
/// per chip; ties within 1e-9 to the faster), and `runner_up` the same on another size.
/// Llama 3.1 70B bf16 on H100 at batch 64, context 4096: 4 chips (TP4), 8 the runner-up.
/// `point` is empty where no size within the domain holds the batch (or the model: the
/// caller's pipeline or cross-domain rule then stands). With w.batch == 0:
/// cheapest_replica_at_speed(w.per_user), runner_up empty. Throws what those throw, and
/// InputError("--batch") for a negative batch.
SpeedChoice cheapest_serving_replica(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base, int64_t context,
                                     const ServingWorkload& w, const ServingLevers& levers = {});

/// The same for several speeds at once, one SpeedChoice per speed in order: the replicas
/// are resolved once (what `prices compare` asks for every host of a model on a system).
std::vector<SpeedChoice> cheapest_replicas_at_speeds(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base,
                                                     int64_t context, const std::vector<TokensPerSecond>& per_user,
                                                     const ServingLevers& levers = {});

}  // namespace chalk
