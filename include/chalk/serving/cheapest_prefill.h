// The replica a prefill question prices by default (review 5 M1): the cheapest per prompt
// token, not the decode cost floor (src/serving/cheapest_prefill.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "chalk/engine/roofline.h"

namespace chalk {

/// One replica's prefill of `batch` prompts of `prompt` tokens after `prefix` cached ones.
struct PrefillReplicaPoint {
  int64_t n_chips = 0;
  std::string layout;                          ///< the layout's description
  int64_t batch = 0, prompt = 0, prefix = 0;
  Seconds ttft;                                ///< prefill_step's TTFT (no queueing)
  TokensPerSecond tokens_per_s_per_chip;       ///< prompt tokens: batch x prompt / TTFT / n
  std::optional<UsdPerToken> cost_per_token;   ///< per prompt token: n x price x TTFT / (batch x prompt); none without a price
};

/// `d`'s prefill of `batch` prompts of `prompt` tokens after `prefix` as a point
/// (prefill_step). Throws as prefill_step.
PrefillReplicaPoint prefill_replica_point(const Deployment& d, int64_t batch, int64_t prompt, int64_t prefix);

/// The choice and what it beat.
struct PrefillReplicaChoice {
  PrefillReplicaPoint choice;
  Deployment deployment;                         ///< the chosen replica and layout
  std::optional<PrefillReplicaPoint> runner_up;  ///< the cheapest replica of another size
  std::vector<int64_t> replica_sizes;            ///< the sizes compared (serving_replicas.h: 1..scale-up domain)
};

/// The cheapest replica per prompt token for a prefill of `batch` prompts of `prompt`
/// tokens after `prefix` cached ones, over every replica size and layout variant the
/// serving frontier sweeps within the scale-up domain (those cheapest_replica compares),
/// among those whose HBM holds `hold_batch` sequences of prompt + prefix tokens beside the
/// weights (memory_plan fits; the largest batch the command prices). Cost per prompt token
/// is n x price x TTFT / (batch x prompt), compared as prompt tokens/s per chip so that the
/// choice exists without a price; ties within a relative 1e-9 (compute-bound prefills on
/// several sizes) go to the shorter TTFT. Llama 3.1 8B on H100 SXM, batch 1 of 32,768
/// tokens: 1 chip (TP8's all-reduces and per-chip kernel floors make each prompt token
/// dearer on 8). Throws InputError("--chips") when no size within the domain holds them,
/// or what make_deployment throws for bad options (batch, prompt < 1 or prefix < 0 as
/// prefill_step). `base.n_chips` is ignored.
PrefillReplicaChoice cheapest_prefill_replica(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base, int64_t batch,
                                              int64_t prompt, int64_t prefix, int64_t hold_batch);

}  // namespace chalk
