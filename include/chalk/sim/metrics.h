// What a simulated run means to users (docs/simulator.md, "Outputs"): latency
// percentiles (TTFT, TPOT, ITL, E2E, queueing delay), throughput per replica and per chip,
// goodput under an SLO, Little's law, and batch and KV occupancy over time.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "chalk/sim/simulator.h"

namespace chalk::sim {

/// Latency targets a request must meet to count toward goodput (DistServe's attainment).
struct Slo {
  std::optional<double> ttft_s;  ///< time to first token at most this
  std::optional<double> tpot_s;  ///< time per output token after the first at most this
  double percentile = 90;        ///< TTFT and TPOT are checked at this percentile (50..99.9)
};

/// p50, p90, p99 and the mean of a sample, seconds (nearest-rank percentiles: the
/// ceil(p/100 x n)-th smallest value). count 0: no sample (every figure 0, not a latency;
/// front ends print null).
struct Percentiles {
  double p50 = 0, p90 = 0, p99 = 0, mean = 0;
  int64_t count = 0;
};

/// Nearest-rank percentile p (0 < p <= 100) of `values` (which it reorders); 0 if empty.
double percentile(std::vector<double>& values, double p);

/// The summary of one run (or of several replicas' runs together).
struct SimSummary {
  int64_t requests = 0, finished = 0, rejected = 0, preemptions = 0;
  int64_t rejected_over_context = 0;  ///< of `rejected`: input + output over max_position_embeddings
  int64_t chips = 0;  ///< all chips serving (replicas x chips per replica, both pools)
  Percentiles ttft, tpot, itl, e2e, queue;
  /// TTFT and TPOT at the percentile the SLO names (Slo::percentile).
  double ttft_at_slo_percentile_s = 0, tpot_at_slo_percentile_s = 0;
  /// Every request finished (none rejected) within the SLO's targets at its percentile.
  bool meets_slo = false;
  double duration_s = 0;                   ///< first arrival to last finish
  double output_tok_per_s = 0;             ///< output tokens / duration
  double total_tok_per_s = 0;              ///< (input + output tokens) / duration
  double output_tok_per_s_per_chip = 0;
  double total_tok_per_s_per_chip = 0;
  double goodput_req_per_s = 0;            ///< requests meeting every SLO / duration
  /// Requests meeting every SLO / all requests that arrived: rejected ones count as missing
  /// (never a first token). Without an SLO: finished / requests. 0 when none arrived.
  double slo_attainment = 0;
  /// Little's law: L = time-average requests in the system (integral / end time), lambda =
  /// finished requests / end time, W = mean time in system; L = lambda W.
  double little_l = 0, little_lambda_per_s = 0, little_w_s = 0;
  double mean_decode_batch = 0;            ///< time-average decodes per step while busy
  double mean_kv_occupancy = 0;            ///< time-average fraction of KV blocks used while busy
  double peak_kv_occupancy = 0;
  double busy_fraction = 0;                ///< busy time / end time (first replica's when several)
  int64_t steps = 0;
  int64_t kv_blocks_leaked = 0;
  /// Speculative decoding / MTP: the mean tokens a decoding sequence kept per verify step
  /// in the run (SimRun::verify_tokens_kept / verify_steps, the draws before a request's
  /// last step cuts them), to set beside the levers' expected (1 - a^(K+1)) / (1 - a).
  /// 0 without drafts.
  double accepted_tokens_per_step = 0;
};

/// Summarises the runs of the replicas of one deployment (each run's requests are whole
/// requests: TTFT = first token - arrival; TPOT = (finish - first token) / (output - 1),
/// requests with one output token excluded; ITL = every gap between consecutive tokens,
/// each steady token weighted as its step's duration; E2E = finish - arrival; queueing
/// delay = first scheduled - arrival). Rejected requests count in `rejected` only.
SimSummary summarize(std::span<const SimRun* const> runs, int64_t chips, const Slo& slo);

/// Checks an SLO: targets positive and finite, percentile in [50, 99.9]. Throws InputError
/// naming "ttft_slo", "tpot_slo" or "slo_percentile".
void validate(const Slo& slo);

/// Up to `max_points` samples of (time, decode batch, KV occupancy fraction, waiting) for a
/// chart: every step when there are fewer, else the step at each of max_points even times.
struct OccupancyPoint {
  double t_s = 0;
  int32_t batch = 0;
  int32_t waiting = 0;
  double kv_occupancy = 0;
};
std::vector<OccupancyPoint> occupancy_timeline(const SimRun& run, int64_t max_points);

}  // namespace chalk::sim
