// `chalk plan -H A,B,...` (docs/simulator.md, "Planning over chip types"): the planner
// chooses chip types as well as counts. Every ordered pair (prefill chip, decode chip) of
// the systems listed is planned (plan_pools: a pair of one system is plan_deployment, both
// modes; two systems are mixed chips, disaggregated only), each at its catalog price per
// chip-hour, and the cheapest deployment that meets the SLO wins; the runner-up is the
// cheapest of another pair.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "chalk/sim/plan.h"
#include "chalk/sim/plan_lora.h"

namespace chalk::sim {

/// One pair's plan.
struct ChipPairPlan {
  std::string prefill_hardware, decode_hardware;  ///< system names; equal: one chip type (aggregated too)
  PlanReport report;                              ///< that pair's search (empty when refused)
  /// Why this pair has no plan: the InputError plan_pools threw for it, as "field: message"
  /// ("chips: the smallest replica of ... needs 16 chips of l4; the budget allows 8"); empty
  /// when it was planned.
  std::string refused;
  /// With LoRA adapters (PlanOptions::lora) whose max-loras is not stated: each value this
  /// pair's search tried (plan_lora_with over plan_pools; ascending) and the one chosen;
  /// `report` is the chosen value's plan. Empty and 0 otherwise (a stated value: that one).
  std::vector<MaxLorasTry> max_loras_tried;
  int64_t max_loras = 0;
};

struct ChipChoicePlan {
  std::vector<ChipPairPlan> pairs;  ///< prefill-major in the order listed: (A,A), (A,B), (B,A), (B,B)
  /// Indices into pairs: the pair whose best deployment (PlanReport::best) costs least per
  /// hour, ties to fewer chips then lower TTFT then TPOT at the SLO percentile; the
  /// runner-up is the next pair by the same order. nullopt: no (second) pair met the SLO.
  std::optional<std::size_t> best, runner_up;
  int64_t simulations = 0;  ///< replica runs over all pairs
};

/// Plans every ordered pair of `systems` (2 or more, names distinct) as plan_pools does,
/// with `o` for each (LoRA adapters without a stated max-loras: each pair searches it as
/// plan_lora does on one system, bounded by lora_search_cap(o), and keeps its cheapest) (a dollar budget holds every pair to the same dollars: plan_pools);
/// `powers[i]`, when given (same length as systems), is systems[i]'s chip
/// power for the energy figures (PlanOptions::power of the decode chip, prefill_power of
/// the prefill chip; a pair without both has none). A pair plan_pools refuses (a system
/// that cannot hold the model within the budget) is kept with its reason. Throws InputError:
/// "hardware" for fewer than two systems, a name listed twice, a system without a catalog
/// price (the choice is by dollars), or, when disaggregated serving is searched, a system
/// that states no scale-out network (its pools cannot send or receive another system's
/// KV: kv_transfer); "price_per_chip" when base states one price for every chip;
/// "powers" for a length mismatch; and the first pair's error when every pair is refused.
/// `on_pair`, when given, is called after each pair is planned (or refused) with that pair,
/// the pairs done and the pairs to plan in all (aggregated only: one per system; with
/// disaggregated serving: systems^2), for a caller's progress line (review 9 L4: 9 pairs of
/// gpt-oss-120b ran 559 s with nothing shown).
using PairProgress = std::function<void(const ChipPairPlan& pair, std::size_t done, std::size_t total)>;
ChipChoicePlan plan_chip_types(const ModelSpec& m, std::span<const SystemSpec> systems, const DeploymentOptions& base,
                               std::span<const Request> traffic, const PlanOptions& o,
                               std::span<const std::optional<ChipPower>> powers = {}, const PairProgress& on_pair = {});

}  // namespace chalk::sim
