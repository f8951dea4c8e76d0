// Replicas and pools (docs/simulator.md, "Replicas" and "Disaggregated prefill and
// decode"): requests spread round-robin over the replicas of a deployment, or run through a
// prefill pool, a KV transfer and a decode pool (DistServe, Splitwise, Mooncake:
// training-and-systems.md 9.1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "chalk/sim/metrics.h"
#include "chalk/sim/simulator.h"

namespace chalk::sim {

/// How a pool's router picks a replica for each request (docs/simulator.md, "Routing").
enum class Routing {
  round_robin,  ///< request i (in arrival order) to replica i mod replicas
  /// SGLang's router (sgl-model-gateway) cache_aware policy: the router keeps a tree of
  /// the prompts it sent to each replica (here: their KV blocks' hashes, LRU-bounded by
  /// the replica's KV blocks); when the load is balanced it sends a request to the replica
  /// with the longest cached prefix if that covers more than cache_threshold of the prompt,
  /// else to the replica whose tree is smallest; when unbalanced, to the least loaded.
  cache_aware,
};

/// The cache_aware policy's knobs, at sgl-model-gateway's defaults (its CLI, src/main.rs:
/// --cache-threshold 0.3, --balance-abs-threshold 64, --balance-rel-threshold 1.5). The
/// load is unbalanced when max - min > abs and max > min x rel.
struct CacheAwareRouting {
  double cache_threshold = 0.3;       ///< prefix match ratio, [0, 1]
  int64_t balance_abs_threshold = 64; ///< requests
  double balance_rel_threshold = 1.5; ///< >= 1
};

/// Identical replicas of one deployment under one scheduler policy.
struct Pool {
  Deployment replica;
  int64_t replicas = 1;
  SimOptions options;
  Routing routing = Routing::round_robin;
  CacheAwareRouting cache_aware{};
};

/// Moving one request's prompt KV from a prefill replica to a decode replica.
struct KvTransfer {
  double bytes = 0;                 ///< prompt tokens x KV bytes per token (all layers, as stored)
  double bandwidth_bytes_per_s = 0; ///< link bandwidth per chip x the chips that send in parallel
  double latency_s = 0;             ///< one hop of the link's lowest-latency protocol (collective.h)
  double seconds = 0;               ///< latency + bytes / bandwidth
  std::string link;                 ///< "scale-up" or "scale-out"
};

/// KV bytes of `prompt_tokens` tokens of one sequence: sum over layers of KV bytes per token
/// x the tokens a layer keeps (a sliding-window layer at most its window), in the KV format.
double kv_bytes(const Deployment& d, int64_t prompt_tokens);

/// The transfer of `prompt_tokens` tokens' KV from a prefill replica to a decode replica:
/// bytes = kv_bytes(prefill, prompt); the link is the scale-up network when both pools fit
/// in one scale-up domain (`total_chips` <= domain) or the system states no scale-out
/// bandwidth, else the scale-out network (collective.h: achieved per-chip bandwidth and
/// its fixed latency); min(prefill chips, decode chips) chips send their shards in
/// parallel. Links are not shared between transfers (no contention). Mixed chips (the two
/// deployments on different systems): always the scale-out network, at the per-chip NIC
/// rate of the slower side and the larger hop latency (one fabric both systems share);
/// throws InputError when either states no scale-out network.
KvTransfer kv_transfer(const Deployment& prefill, const Deployment& decode, int64_t prompt_tokens, int64_t total_chips);

/// A deployment's run: every replica's run, and each request end to end.
struct ClusterRun {
  bool fits = true;
  std::string reason;
  bool disaggregated = false;
  int64_t chips = 0;                    ///< all chips of all replicas (both pools)
  std::vector<SimRun> prefill_runs;     ///< disaggregated: the prefill pool's replicas
  std::vector<SimRun> runs;             ///< aggregated: the replicas; disaggregated: the decode pool's
  /// Disaggregated: the requests end to end (arrival at the prefill pool to the last token)
  /// with the decode pool's steps, token gaps and KV use: what summarize() reads.
  SimRun end_to_end;
  double kv_transfer_bytes_total = 0;
  double kv_transfer_s_mean = 0;
};

/// Aggregated serving: request i (in arrival order) goes to replica i mod replicas
/// (Routing::round_robin) or where the cache-aware router sends it, each replica runs
/// simulate() for `phase` (Phase::prefill: a prefill pool alone). The router's load is the
/// requests it has sent each replica: it learns of no completion (a run's replicas are
/// simulated one after another), so the imbalance it sees only grows; an approximation of
/// the gateway's in-flight count. Throws InputError for replicas < 1, bad routing knobs
/// ("cache_threshold", "balance_abs_threshold", "balance_rel_threshold") or as simulate.
ClusterRun simulate_aggregated(const Pool& pool, std::span<const Request> requests, Phase phase = Phase::both);

/// Replica of each request (by input index) under `pool`'s routing; cache-aware routing
/// reads the requests' token structure (Request::prefix) with the pool's block size.
std::vector<int64_t> route(const Pool& pool, std::span<const Request> requests);

/// Disaggregated serving: the prefill pool runs each prompt to its first token
/// (Phase::prefill); its KV then travels (kv_transfer) and the request arrives at the decode
/// pool, round-robin in order of readiness, with its first token computed (Phase::decode);
/// the prefill pool routes as `prefill.routing` says (its cache holds the prompts).
/// The user sees that token when the decode pool admits the request (the decode instance
/// streams it), so TTFT includes the transfer and the decode queue; TPOT and ITL start
/// there. Throws as simulate_aggregated.
ClusterRun simulate_disaggregated(const Pool& prefill, const Pool& decode, std::span<const Request> requests);

/// summarize() over a cluster's runs (aggregated: the replicas; disaggregated: end_to_end).
SimSummary summarize(const ClusterRun& run, const Slo& slo);

/// Whether the traffic outran the deployment, from the run itself (issue 30: a rate of
/// 1,000 req/s on 8 chips once reported TTFT p99 38 s with no word of overload).
struct Overload {
  bool overloaded = false;
  double arrival_req_per_s = 0;   ///< (requests - 1) / (last arrival - first arrival); 0 for one request
  /// Given a measured Capacity (overload_of's third argument): that capacity. Otherwise,
  /// overloaded: the rate the bottleneck pool admits, arrival / (1 + ttft_growth) (a queue
  /// that grows at g seconds per second of arrivals drains at lambda / (1 + g)); not: a
  /// lower bound, the sum over its replicas of finished requests / busy seconds, which under
  /// continuous batching is the rate it was offered, not its limit. 0 when none ran.
  double capacity_req_per_s = 0;
  double busy_fraction = 0;       ///< the bottleneck pool's least busy replica: busy time / (end - its first arrival)
  /// Least-squares slope of TTFT against arrival time over the later half of the
  /// bottleneck pool's requests (s/s, dimensionless): about 0 in a steady state, lambda /
  /// mu - 1 when the queue grows for the whole run.
  double ttft_growth = 0;
  /// The capacity's uncertainty when it was measured (saturated_capacity); 0 otherwise.
  double capacity_uncertainty_req_per_s = 0;
};

/// Requests of a capacity probe (saturated_capacity), at least: the traffic's in arrival order,
/// repeated when it has fewer; more where 4 x the batch (x pipeline stages) is more.
inline constexpr std::size_t kCapacityProbeRequests = 200;
/// Batches of the batch-means uncertainty (Capacity::uncertainty_req_per_s).
inline constexpr int kCapacityBatches = 5;

/// What a pool serves with a queue always waiting (saturated_capacity; docs/simulator.md,
/// "Overload"): an unbiased capacity, unlike finished / busy seconds of a run that keeps up
/// (the offered rate).
struct Capacity {
  double req_per_s = 0;              ///< the pool's: replicas x one replica's saturated service rate; 0 unmeasured
  /// Two standard errors of req_per_s by batch means: the window cut into kCapacityBatches
  /// equal parts, each part's completions per second one sample (Law & Kelton, "Simulation
  /// Modeling and Analysis", batch means). Scaled by the replicas as req_per_s is.
  double uncertainty_req_per_s = 0;
  int64_t requests_measured = 0;     ///< one replica's completions inside the window
  /// Enough completions to say anything: at least 2 per batch.
  bool measured() const { return requests_measured >= 2 * kCapacityBatches; }
};

/// Capacity of `pool` at its traffic's lengths: one replica runs max(kCapacityProbeRequests,
/// 4 x B x stages) requests, B = min(max_sequences, the KV tokens / the traffic's mean prompt +
/// output), `requests` in arrival order (repeated from the first
/// when fewer: their prefixes then hit the cache again), all arriving at t = 0, so its queue
/// is never empty until the last is admitted; its service rate is the completions per second
/// over the steady window (first completion, end of the last step with a request waiting]:
/// the fill before the first completion and the drain after the queue empties are left out.
/// The pool's is replicas x that (round robin splits arrivals evenly). A separate run: the
/// pool's own simulation is not touched. Unmeasured (req_per_s 0) with fewer than 10
/// completions in the window or a replica that does not fit. Throws as simulate_aggregated.
Capacity saturated_capacity(const Pool& pool, std::span<const Request> requests, Phase phase = Phase::both);

/// Arrival rate of `requests`: (n - 1) / (last arrival - first arrival), requests per second;
/// 0 for fewer than 2 or all at one instant.
double arrival_rate(std::span<const Request> requests);

/// Utilization a replica count is chosen at (replicas_for_rate): arrivals at most 0.8 of the
/// capacity. Queueing delay grows as rho / (1 - rho) (Kingman's G/G/1 approximation, E[Wq] ~
/// rho / (1 - rho) x (ca^2 + cs^2) / 2 x E[S]): 4 service times at 0.8, 9 at 0.9, unbounded at
/// 1; the 20% also covers a Poisson run's own rate (+-2.2% at 2,000 requests) and the
/// capacity's batch-means uncertainty (a few %).
inline constexpr double kReplicaUtilization = 0.8;

/// The fewest replicas of capacity `one_req_per_s` each whose pool serves `arrival_req_per_s`
/// at kReplicaUtilization: ceil(arrival / (0.8 x one)), at least 1; 1 when one is not > 0.
int64_t replicas_for_rate(double arrival_req_per_s, double one_req_per_s);

/// TTFT growth above which a busy pool is overloaded: arrivals more than 5% above what it
/// admits (ttft_growth = lambda / mu - 1 > 0.05).
inline constexpr double kOverloadGrowth = 0.05;

/// Overloaded when a pool's every replica was busy at least 95% of its run and its TTFT
/// grows with the arrival time by more than kOverloadGrowth over the later half of the run
/// (a queue that grows for the whole run: its percentiles grow with the run's length, not
/// with the deployment). Busy alone is not overload: a continuous-batching replica holds
/// requests at every step under any steady load, and finished / busy seconds then measures
/// the offered rate (a 100-request run at 4 req/s once read as overloaded). Disaggregated
/// runs are judged pool by pool; the bottleneck is the pool with the lower capacity.
/// With `capacity` (saturated_capacity of the pool that ran, measured) the run is also
/// overloaded when its arrivals exceed that capacity by more than its uncertainty (review 7
/// M10: 11.33 req/s on a replica that serves about 10 went unsaid, its TTFT growth over the
/// later half being 0.031), and capacity_req_per_s is that capacity, overloaded or not.
Overload overload_of(const ClusterRun& run, std::span<const Request> requests, const Capacity* capacity = nullptr);

}  // namespace chalk::sim
