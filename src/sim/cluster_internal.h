// Private to src/sim: a pool's replica runs kept apart from the ClusterRun they make, so that
// a plan (plan.cc) runs a disaggregated deployment's prefill pool once for every decode pool
// it tries with it: the prefill pool's runs do not depend on the decode pool (cluster.h,
// simulate_disaggregated).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "chalk/sim/cluster.h"

namespace chalk::sim::detail {

/// One pool's replicas, run.
struct PoolRun {
  std::vector<SimRun> runs;             ///< each replica's run, in replica order (up to the first that does not fit)
  std::vector<RequestRecord> records;   ///< with `gather`: every request's record at its input index
  bool fits = true;                     ///< every replica fits (else `reason`: the first that did not)
  std::string reason;
};

/// Runs `pool` over `requests` for `phase` (simulate() per replica, the requests split by the
/// pool's routing, in arrival order), stopping at the first replica that does not fit. With
/// `gather`, records holds every request's record at its input index (default records for
/// those of replicas not run). Throws as simulate().
PoolRun run_pool(const Pool& pool, std::span<const Request> requests, Phase phase, bool gather);

/// simulate_disaggregated(prefill, decode, requests) with its prefill pool already run:
/// `pre` = run_pool(prefill, requests, Phase::prefill, true), taken (a plan passes a copy of
/// the runs it keeps). The same ClusterRun, field for field, its prefill_runs pre.runs.
/// Throws as simulate_disaggregated.
ClusterRun disaggregated_after(const Pool& prefill, PoolRun pre, const Pool& decode, std::span<const Request> requests);

}  // namespace chalk::sim::detail
