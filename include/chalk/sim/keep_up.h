// Whether a run kept up with its traffic, judged after the fact on the run's own figures
// (docs/simulator.md, "Keeping up"; review 11 H1): a capacity probe (saturated_capacity)
// measures a pool with its queue always full, and a mechanism that needs a deep queue to reach
// that rate (one LoRA slot for 8 adapters: requests of the other adapters wait until the
// running ones finish, so a queue of ~100 requests forms at 40% of the probe's rate) passes
// the probe and the OVERLOADED check while its requests wait tens of seconds. This check reads
// only the records, so no mechanism, present or future, slips past it.
#pragma once

#include <span>
#include <string>

#include "chalk/sim/cluster.h"

namespace chalk::sim {

/// A run's pace against its traffic. Over the requests that finished (aggregated: every
/// replica's; disaggregated: end to end): `tokens` their output tokens, `span` the traffic's
/// last arrival - first arrival (every request), `S` the mean service time (first scheduled to
/// last token), `Q` the mean queueing delay (arrival to first scheduled).
struct KeepUp {
  /// arrival_rate(requests) x tokens / finished: the output rate the traffic asks for, tok/s.
  double offered_output_tok_per_s = 0;
  /// tokens / (last finish - first arrival): what the run delivered, tok/s.
  double served_output_tok_per_s = 0;
  /// tokens / (max over the finished of arrival + own service time - first arrival): what the
  /// run delivers with no queue, each request served as it arrives in the time it took, tok/s.
  /// 0 when span is 0.
  double queue_free_output_tok_per_s = 0;
  double queue_mean_s = 0;    ///< Q, s
  double service_mean_s = 0;  ///< S, s
  double ttft_growth = 0;     ///< Overload::ttft_growth of the run (s/s)
  /// False when any of, in this order (`why` names the first):
  ///  - "queue grows": ttft_growth > kOverloadGrowth, however busy the replicas were;
  ///  - "queue holds": Q > S (requests wait longer than they take to serve: a standing queue
  ///    that a steady state under the capacity rule's 80% keeps far below S);
  ///  - "falls short": served < (1 - kOverloadGrowth) x queue_free (the queue drained after
  ///    the arrivals stopped).
  /// Every rule needs the arrivals spread in time (span > 0): traffic arriving at one instant
  /// is a queue by design.
  bool keeps_up = true;
  std::string why;
};

/// Judges `run` on `requests` (the traffic it ran) with `overload` = overload_of(run,
/// requests, ...). No request finished: keeps_up true, every figure 0 (the rejections are
/// reported on their own).
KeepUp keep_up_of(const ClusterRun& run, std::span<const Request> requests, const Overload& overload);

}  // namespace chalk::sim
