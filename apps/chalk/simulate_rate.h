// `chalk simulate`'s deployment for a stated rate (review 10 M1): the cheapest replica size x
// count, in $/hour, that serves the rate within the capacity rule of replicas_serving_rate
// (sim_cli.h), as `plan` and `fleet` choose; docs/simulator.md, "Replicas for a rate".
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "deployment_options.h"
#include "layout_choice.h"
#include "sim_cli.h"

namespace chalk::cli {

/// One replica size compared for a rate: `replicas` of `deployment` (its n_chips each) serve
/// the arrivals at kReplicaUtilization of their saturated capacity; `usd_per_hour` the pool's
/// rent (nullopt when the chip is unpriced: then chips x replicas compare).
struct RateCandidate {
  Deployment deployment;
  RateReplicas count;
  std::optional<double> usd_per_hour;
  std::optional<LayoutNote> layout_note;  ///< simulate's layout choice on that size
  int64_t chips() const { return deployment.n_chips * count.replicas; }
};

/// What simulate chose for the rate: the cheapest candidate, the next cheapest (runner-up),
/// and the sizes left unsimulated because one replica of them already costs more than the choice.
struct RateChoice {
  RateCandidate choice;
  std::optional<RateCandidate> runner_up;
  std::vector<int64_t> sizes_priced_out;
};

/// Compares the replica sizes `sizes` (ascending, chips per replica) for the arrivals of
/// `requests`: each resolved by `resolve_size` and probed by `one_replica_pool` (one replica's
/// saturated capacity), the count N = ceil(lambda / (0.8 mu_1)); the choice is the least
/// $/hour (N x chips x price), ties to the more capacity. A size whose single replica costs at
/// least the best found so far is priced out without a simulation, once a runner-up is
/// known. `asked` names the rate. nullopt when no size's capacity is measured (every request
/// rejected, --allow-infeasible): the caller keeps the cost floor's replica.
/// `phase` and `sets` as replicas_serving_rate's: a disaggregated pool is sized on its own
/// part of each request (docs/simulator.md, "Replicas for a rate", disaggregated).
std::optional<RateChoice> cheapest_for_rate(const std::vector<int64_t>& sizes, const std::function<Deployment(int64_t)>& resolve_size,
                             const std::function<sim::Pool(const Deployment&)>& one_replica_pool, std::span<const sim::Request> requests,
                             const std::string& asked, std::optional<LayoutNote>* layout_note, sim::Phase phase = sim::Phase::both,
                             const std::string& sets = "--replicas or -n sets them");

/// Disaggregated pools for a rate (review 11 M2): each pool the cheapest size x count
/// (cheapest_for_rate over `sizes`) whose one replica's saturated capacity at its own part of
/// the requests (Phase::prefill, Phase::decode) serves the rate. `line` is the replicas line
/// ("prefill pool 2 replicas of 4 chips: ...; decode pool ..."), `capacity` the bottleneck
/// pool's (replicas x one replica's, the lower of the two: the overload check's). nullopt when
/// either pool's capacity is not measured.
struct PoolsForRate {
  RateChoice prefill, decode;
  std::string line;
  sim::Capacity capacity;
};
std::optional<PoolsForRate> pools_for_rate(const std::vector<int64_t>& sizes, const std::function<Deployment(int64_t)>& resolve_size,
                                           const std::function<sim::Pool(const Deployment&)>& one_replica_pool,
                                           std::span<const sim::Request> requests, const std::string& asked);

/// The replica line's text: "1 chip x 1 replica, $2.35/hour: the cheapest size x count that
/// serves --rate 5 req/s; runner-up 2 chips x 1 replica, $4.70/hour; ...".
/// `sets`: the flag that sets the size, ending the line.
std::string rate_choice_text(const RateChoice& r, const std::string& asked, const std::string& sets = "-n sets the size");

/// The "rate_choice" object (docs/output-schema.md): rate_chosen and rate_runner_up (null when
/// none), each {chips, replicas, cost_usd_per_hour, capacity_req_per_s} (chips a replica, one
/// replica's capacity), and sizes_priced_out.
nlohmann::json rate_choice_json(const RateChoice& r);

}  // namespace chalk::cli
