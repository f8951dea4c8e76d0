// `chalk plan --lora` (docs/simulator.md 1.9 and "Planning"): the planner choosing vLLM's
// --max-loras as well as the deployment. Each value tried is a whole plan_deployment with
// that many HBM slots per replica (taken from the KV cache: fewer blocks, more preemption)
// and its misses (each a load over the host link that its step waits for); the choice is
// the value whose cheapest deployment meeting the SLO costs least.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "chalk/sim/plan.h"

namespace chalk::sim {

/// One --max-loras value's plan: its best deployment's cost and latency (met false: none
/// within the budget met the SLO, or the plan refused the value: then `refused` says why).
struct MaxLorasTry {
  int64_t max_loras = 0;
  bool met = false;
  std::optional<double> usd_per_hour;  ///< the best's $/hour (nullopt: unpriced or none met)
  int64_t chips = 0;                   ///< the best's chips (0: none met)
  double ttft_at_percentile_s = 0, tpot_at_percentile_s = 0;
  std::string refused;                 ///< "field: message" of the InputError the plan threw
};

struct LoraPlan {
  PlanReport report;       ///< the chosen value's plan (the first value's when none met the SLO)
  int64_t max_loras = 0;   ///< the value chosen (or the stated one)
  bool searched = false;   ///< false: max-loras was stated (LoraSpec::max_loras_stated), one plan
  std::vector<MaxLorasTry> tried;  ///< ascending max_loras
  int64_t simulations = 0;         ///< replica runs over every value's plan
};

/// The values of --max-loras tried for `adapters` adapters when the spec states none:
/// 1, 2, 4, ... below min(adapters, max_sequences), then min(adapters, max_sequences)
/// itself. vLLM takes any integer >= 1 (vllm/config/lora.py, LoRAConfig.max_loras, and
/// max_cpu_loras >= max_loras); more slots than adapters hold nothing, and more than the
/// running-request cap `max_sequences` can never all be in one batch. adapters 8,
/// max_sequences 256: {1, 2, 4, 8}; adapters 6: {1, 2, 4, 6}. Empty for adapters < 1.
std::vector<int64_t> max_loras_candidates(int64_t adapters, int64_t max_sequences);

/// plan_deployment for each max-loras value (o.lora with that max_loras; a stated one: that
/// value only): the chosen is the least $/hour (chips when unpriced) among the values whose
/// plan met the SLO, ties to fewer chips, then lower TTFT, then TPOT at the percentile, then
/// the fewer slots. A value plan_deployment refuses is recorded with its reason (and larger
/// values are not tried); throws that InputError when the first value is refused, and
/// InputError("lora") when o.lora is not enabled. `max_sequences` bounds the candidates
/// (the largest running-request cap the plan tries).
LoraPlan plan_lora(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base, std::span<const Request> traffic,
                   const PlanOptions& o, int64_t max_sequences);

/// plan_lora over any planner: `plan` is one value's whole plan (plan_deployment on one
/// system; plan_pools on a pair of chip types, plan_chips.h), called with `o` and that
/// value as max_loras. Same candidates, choice, refusals and errors as plan_lora.
LoraPlan plan_lora_with(const PlanOptions& o, int64_t max_sequences, const std::function<PlanReport(const PlanOptions&)>& plan);

/// The largest running-request cap a plan with `o` tries (the bound of max_loras_candidates):
/// the largest of o.max_sequences, or when none is stated max(the policy's cap, 256), the
/// caps plan_deployment tries by default (plan.h PlanOptions::max_sequences).
int64_t lora_search_cap(const PlanOptions& o);

}  // namespace chalk::sim
