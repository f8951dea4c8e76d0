// Private to plan.cc and plan_sizes.cc: the replica shapes a plan tries on one system
// (docs/simulator.md, "Planning").
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "chalk/sim/plan.h"

namespace chalk::sim::plan_detail {

/// One replica shape: chips and a parallel layout. A pipeline (pp > 1, the layout search's
/// PP candidates: one scale-up domain a stage) holds `dep`, the busiest stage's deployment
/// (pipeline_stage_model on one stage's chips), pp times: chips() = pp x dep.n_chips.
struct Shape {
  Deployment dep;
  std::string name;
  int64_t pp = 1;
  int64_t chips() const { return dep.n_chips * pp; }
};

/// The replica sizes a plan tries on `s` within `budget` chips: PlanOptions::replica_chips
/// when stated, else the divisors of the scale-up domain and 2, 4, ... whole domains from
/// the smallest replica that holds the model and one sequence of `context` tokens; with the
/// engine step, only sizes an engine runs (replica_size_problem; each one dropped adds a
/// line to `warnings`). Throws InputError ("chips", "replica_chips") as plan_deployment.
struct ReplicaSizes {
  std::vector<int64_t> sizes;
  bool stated = false;
};
ReplicaSizes replica_sizes(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base, const PlanOptions& o, int64_t budget,
                           int64_t context, std::vector<std::string>& warnings);

/// Every fitting layout of one replica of each size in `sizes` up to `budget` chips (the
/// plain roofline: one layout per size, even sharding), and, where every size crosses a
/// scale-up domain (no replica within one holds the model, or the stated sizes say so), the
/// layout search's pipelines across domains (its PP candidates with tensor-parallel stages,
/// as `chalk layouts` ranks them).
std::vector<Shape> shapes_within(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base, const std::vector<int64_t>& sizes,
                                 int64_t budget, int64_t context);

/// Little's law (L = lambda W: Little, "A Proof for the Queuing Formula L = lambda W",
/// Operations Research 9(3), 1961) on a pool's run (review 9 H1): in a steady state the pool
/// runs arrival rate x mean service time sequences at once (service: admission to the last
/// token, seconds), and it can run at most its slots: per replica the batch cap (x pipeline
/// stages), and, without prefix caching, its KV tokens over a sequence's mean KV (prompt +
/// output / 2 tokens). The service time is measured at the run's own batch, never above the
/// steady state's (a step is not faster at a larger batch), so needed > slots is a lower
/// bound that holds however short the run: a run that ends before its queue forms (1,000
/// requests each living 26 s, all admitted at once) cannot hide the overload.
struct SteadyState {
  double service_s = 0;         ///< mean admission-to-last-token time of the served requests, s
  double needed_sequences = 0;  ///< arrival rate x service_s
  double slots = 0;             ///< the sequences the pool's replicas can run at once, summed
  bool overloaded() const { return needed_sequences > slots; }
};
/// `runs`: the pool's replica runs; `sequences_per_replica`: max sequences x stages;
/// `block_size`: tokens per KV block; `arrival_req_per_s`: the traffic's (arrival_rate).
SteadyState steady_state_of(std::span<const SimRun> runs, int64_t sequences_per_replica, int64_t block_size, double arrival_req_per_s);

/// Why a run missed the SLO as summarize judged it (plan's `why_not`, review 10 L5), or ""
/// when it met it: "does not fit", "no request finished", "N requests rejected", "TTFT@p X ms
/// > SLO Y ms", "TPOT@p X ms > SLO Y ms" (the first that applies).
std::string slo_miss_of(const ClusterRun& c, const SimSummary& s, const Slo& slo);
/// The row's reason when only Little's law refutes the run: "steady state needs N running
/// sequences (Little's law), the pool holds M".
std::string steady_state_miss(const SteadyState& st);

}  // namespace chalk::sim::plan_detail
