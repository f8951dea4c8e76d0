// `chalk plan` (docs/simulator.md, "Planning"): the cheapest deployment of a model on a
// system that serves a stated traffic within latency SLOs, found by simulating candidate
// deployments (layouts, replicas, batch caps, aggregated or disaggregated, pool ratio),
// with the Pareto front of cost against latency; launch.h writes the engines' launch files
// for the choice.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "chalk/sim/cluster.h"
#include "chalk/sim/launch.h"
#include "chalk/sim/energy.h"
#include "chalk/sim/metrics.h"

namespace chalk::sim {

/// The most chips one plan searches (PlanOptions::chip_budget; a dollar budget that buys more
/// buys this many): a deployment of one model beyond it is several plans, each a share of
/// the traffic. The search's time grows with the budget (1,024 chips: about 25 s).
inline constexpr int64_t kMaxPlanChips = 8192;

struct PlanOptions {
  int64_t chip_budget = 0;                   ///< chips at most, 1..kMaxPlanChips (0: from the dollar budget)
  std::optional<double> usd_per_hour_budget; ///< dollars per hour at most (needs a price)
  Slo slo;                                   ///< at least one of TTFT and TPOT
  EnginePolicy policy = engine_policy("vllm");  ///< the scheduler simulated; its max_sequences is the first cap tried
  double prefix_hit_rate = 0;
  /// KV offload tiers behind every candidate's prefix cache (SimOptions::kv_offload; GB per
  /// replica). `chalk plan --kv-offload` plans with and without them to say whether they pay.
  KvOffload kv_offload;
  /// LoRA adapters of the traffic (SimOptions::lora): every candidate's HBM slots come out of
  /// its KV cache, its steps pay the multi-adapter GEMM and its misses the loads.
  LoraSpec lora;
  /// Chips per replica to try (empty: the divisors of the scale-up domain and 1, 2, 4, ...
  /// whole domains, from the smallest replica that holds the model up to the budget).
  std::vector<int64_t> replica_chips;
  /// Caps on running requests per replica to try (empty: the policy's, 256, 64).
  std::vector<int64_t> max_sequences;
  /// Speculative decoding / MTP of every candidate's decodes (SimOptions::speculation: K drafts
  /// verified a step, the drafter's passes priced, the tokens kept drawn per sequence per step;
  /// checked by validate_speculation). draft_tokens 0 (the default): plain decode. `chalk plan
  /// --draft` plans with and without it to say whether it pays.
  ServingLevers speculation;
  uint64_t speculation_seed = 1;  ///< seed of the acceptance draws (SimOptions::speculation_seed)
  bool aggregated = true;
  bool disaggregated = true;
  /// The chips' power figures (hardware/power.h); nullopt: no energy figures.
  std::optional<ChipPower> power;
  /// Mixed chips (plan_pools with two systems): the prefill pool's chip power, `power` being
  /// the decode pool's; nullopt there: no energy figures.
  std::optional<ChipPower> prefill_power;
  Facility facility;  ///< host share and PUE of every candidate's energy (checked: validate(Facility))
  /// Passed to every simulated deployment as SimOptions::progress (optional; chalk web
  /// bounds a plan's work with it): called with steps run, summed over all the plan's runs;
  /// an exception it throws abandons the plan.
  std::function<void(int64_t steps)> progress;
};

/// What a candidate's LoRA adapters cost in its own simulation (PlanOptions::lora;
/// docs/simulator.md 1.9), from the run's counters (SimRun::lora_*).
struct PlanLora {
  int64_t max_loras = 0;  ///< HBM slots per replica (vLLM --max-loras) simulated
  /// The slots on one chip of a (decode, when disaggregated) replica, bytes: max_loras x one
  /// adapter's bytes on its busiest chip (lora_adapter_bytes' bytes_per_chip).
  double adapter_hbm_bytes_per_chip = 0;
  int64_t adapter_loads = 0;  ///< misses over the run, every replica of both pools
  double misses_per_s = 0;    ///< adapter_loads / SimSummary::duration_s (first arrival to last finish), 1/s
  /// Step time the loads and the multi-adapter GEMM added, s, summed over steps and replicas.
  double load_s = 0, gemm_s = 0;
};

/// One simulated deployment.
struct PlanCandidate {
  bool disaggregated = false;
  /// Each pool's system name (SystemSpec::name; they differ with mixed chips, plan_pools);
  /// aggregated: the one system, twice.
  std::string prefill_hardware, decode_hardware;
  /// Aggregated: the replicas. Disaggregated: the prefill pool.
  int64_t replica_chips = 0, replicas = 0;
  std::string layout;
  /// The layout of one replica; with pipeline stages (pp > 1), of one stage's chips.
  ParallelLayout parallel;
  /// Pipeline stages of an aggregated replica (SimOptions::pipeline_stages): 1, or pp
  /// stages of replica_chips / pp chips each, one scale-up domain a stage (the layout
  /// search's PP candidates; disaggregated pools are searched without stages).
  int64_t pp = 1;
  /// Disaggregated: the decode pool (0 when aggregated).
  int64_t decode_replica_chips = 0, decode_replicas = 0;
  std::string decode_layout;
  ParallelLayout decode_parallel;
  int64_t max_sequences = 0;        ///< cap per (decode) replica
  int64_t max_batched_tokens = 0;   ///< token budget per step
  bool reserve_to_completion = false;  ///< KV admission simulated (EnginePolicy::reserve_to_completion)
  int64_t chips = 0;                ///< all chips
  /// Weight bytes one chip of a (prefill or aggregated) replica stores under its layout, and
  /// of a decode replica (memory_plan's weights / chips: replicated parts counted on each).
  double weight_bytes_per_chip = 0, decode_weight_bytes_per_chip = 0;
  std::optional<double> usd_per_hour;  ///< $/hour: each pool's chips x its system's price per chip-hour (nullopt: no price)
  SimSummary summary;
  bool meets_slo = false;
  /// Why not, when meets_slo is false (review 10 L5: a row failing only Little's law looked
  /// better than the choice with "meets no"): "TTFT@p 612 ms > SLO 500 ms", "steady state
  /// needs 4532 running sequences (Little's law), the pool holds 4096", ...; "" when it meets it.
  std::string why_not;
  /// Costs more than PlanOptions::usd_per_hour_budget (mixed chips only: one system's dollar
  /// budget is a chip budget); never chosen (cheapest_meeting_slo).
  bool over_budget = false;
  std::optional<ServingEnergy> energy;  ///< with PlanOptions::power: the run's energy (sim/energy.h)
  std::optional<PlanLora> lora;         ///< with PlanOptions::lora enabled (plan_lora_use)
};

/// The LoRA figures of run `c` (PlanLora): `replica_chips` is the chips of one replica of
/// c.runs (the aggregated replicas, or the decode pool), `duration_s` the run's
/// SimSummary::duration_s. nullopt when the run simulated no adapters (plan_lora.cc).
std::optional<PlanLora> plan_lora_use(const ClusterRun& c, const LoraSpec& s, int64_t replica_chips, double duration_s);

struct PlanReport {
  bool has_price = false;
  int64_t chip_budget = 0;
  std::vector<PlanCandidate> evaluated;   ///< every simulated deployment
  std::optional<std::size_t> best;        ///< index into evaluated: the cheapest meeting the SLO
  /// Indices of the Pareto front over evaluated: no other is at most as costly, as slow in
  /// TTFT and as slow in TPOT (at the SLO percentile) and better in one; by cost ascending.
  std::vector<std::size_t> pareto;
  /// Replica runs of the deployments evaluated (each one's replicas, both pools): a
  /// disaggregated prefill pool counts with every decode pool tried with it, though it is
  /// simulated once and its runs reused (cluster_internal.h).
  int64_t simulations = 0;
  std::string why_none;                   ///< when no deployment meets the SLO
  /// Stated replica sizes left out because no engine runs them (replica_size_problem):
  /// "replica size 3 left out: TP3 does not divide the 32 attention heads".
  std::vector<std::string> warnings;
  /// What each mode searched, one line a mode: "disaggregated: 12 deployments: prefill
  /// pool 1 x 1 chips (TP1), no TTFT target: the smallest that keeps up ...".
  std::vector<std::string> searched;
};

/// The cheapest of `evaluated` whose own simulation met the SLO, within the dollar budget
/// (not over_budget): lowest $/hour (chips when
/// unpriced; on one system the two order alike), ties to fewer chips, then the lower TTFT
/// then TPOT at the SLO percentile; nullopt when none met it (plan_select.cc).
std::optional<std::size_t> cheapest_meeting_slo(const std::vector<PlanCandidate>& evaluated);

/// Indices of the Pareto front of `evaluated` over cost ($/hour; chips when unpriced), TTFT
/// and TPOT at the SLO percentile: a candidate is on it unless another that finished every
/// request is no worse in all three and better in one (of twins, the first stays).
/// Candidates with a rejected request or none finished are left out. Sorted by cost, then
/// TTFT (plan_select.cc).
std::vector<std::size_t> pareto_front(const std::vector<PlanCandidate>& evaluated);

/// Searches deployments: for each replica size and each of its fitting layouts
/// (search_layouts), each batch cap, the fewest replicas within the budget that meet the SLO
/// (bisection on the replica count, which the latencies do not rise with); disaggregated,
/// the cheapest prefill pool meeting the TTFT target alone (without one: the smallest whose
/// utilisation, busy time / (replicas x arrival span), stays below 1), then for each decode layout
/// and cap the fewest decode replicas meeting both targets end to end (when none does, the
/// prefill pool grows by one replica, at most twice: TTFT end to end adds the KV transfer and
/// the decode queue to the prefill pool's own). Cost = chips x price
/// per chip-hour (chips without a price). The best is the cheapest candidate whose own
/// simulation met the SLO (ties: lower TTFT then TPOT at the percentile). Throws InputError
/// for no budget, no SLO target, a dollar budget without a price, an unknown engine, empty
/// traffic, a bad policy, or a replica size below 1; and, naming the option (field "chips",
/// "usd_budget" or "replica_chips"), when nothing can be simulated: a dollar budget below
/// one chip, a budget below the smallest replica that holds the model, stated replica
/// sizes that no engine runs (replica_size_problem, the layout search's rule) or that all
/// exceed the budget, or no replica tried that holds the weights and one sequence.
PlanReport plan_deployment(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base,
                           std::span<const Request> traffic, const PlanOptions& o);

/// Mixed chips (docs/simulator.md 1.5 and "Planning"): plan_deployment with the prefill pool
/// on `prefill` and the decode pool on `decode`, each replica a deployment of its own system
/// (its sizes, layouts and engine step), the KV between them as simulate_disaggregated
/// carries it (kv_transfer: scale-out at the slower NIC). When the two systems' names
/// differ only disaggregated deployments are searched, the chip budget bounds both pools
/// together, and cost = prefill chips x price(prefill) + decode chips x price(decode) per
/// hour (catalog prices, SystemSpec::price_per_chip); the same name is plan_deployment.
/// A dollar budget with two systems bounds the chips at what it buys of the cheaper one,
/// and a candidate costing more than it is kept but never chosen (over_budget).
/// Throws InputError as plan_deployment, and with two systems for a price per chip
/// (field "price_per_chip": it prices one chip type) or no disaggregated mode ("modes").
PlanReport plan_pools(const ModelSpec& m, const SystemSpec& prefill, const SystemSpec& decode, const DeploymentOptions& base,
                      std::span<const Request> traffic, const PlanOptions& o);

}  // namespace chalk::sim
