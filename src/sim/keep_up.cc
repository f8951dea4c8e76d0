// Whether a run kept up with its traffic, from its own records (keep_up.h; review 11 H1).
#include "chalk/sim/keep_up.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace chalk::sim {

KeepUp keep_up_of(const ClusterRun& run, std::span<const Request> requests, const Overload& overload) {
  KeepUp k;
  k.ttft_growth = overload.ttft_growth;
  std::vector<const RequestRecord*> done;
  if (run.disaggregated) {
    for (const auto& q : run.end_to_end.requests) {
      if (!q.rejected) done.push_back(&q);
    }
  } else {
    for (const auto& r : run.runs) {
      for (const auto& q : r.requests) {
        if (!q.rejected) done.push_back(&q);
      }
    }
  }
  if (done.empty() || requests.empty()) return k;
  double first = requests.front().arrival_s, last = first;
  for (const auto& q : requests) {
    first = std::min(first, q.arrival_s);
    last = std::max(last, q.arrival_s);
  }
  // end_free: when the run would end with no queue, each request served on arrival in its
  // own service time (a long last request is its service, not a queue: a trace's tail).
  double tokens = 0, queue = 0, service = 0, end = first, end_free = first;
  for (const auto* q : done) {
    tokens += static_cast<double>(q->output_tokens);
    queue += q->scheduled_s - q->arrival_s;
    service += q->finish_s - q->scheduled_s;
    end = std::max(end, q->finish_s);
    end_free = std::max(end_free, q->arrival_s + q->finish_s - q->scheduled_s);
  }
  const double n = static_cast<double>(done.size());
  k.queue_mean_s = queue / n;
  k.service_mean_s = service / n;
  k.offered_output_tok_per_s = arrival_rate(requests) * tokens / n;
  if (end > first) k.served_output_tok_per_s = tokens / (end - first);
  const double span = last - first;
  if (!(span > 0)) return k;  // all at one instant: a queue by design
  if (end_free > first) k.queue_free_output_tok_per_s = tokens / (end_free - first);
  if (k.ttft_growth > kOverloadGrowth) {
    k.keeps_up = false;
    k.why = "queue grows";
  } else if (k.queue_mean_s > k.service_mean_s) {
    k.keeps_up = false;
    k.why = "queue holds";
  } else if (k.served_output_tok_per_s < (1 - kOverloadGrowth) * k.queue_free_output_tok_per_s) {
    k.keeps_up = false;
    k.why = "falls short";
  }
  return k;
}

}  // namespace chalk::sim
