// Little's law on a planned pool (plan_internal.h, steady_state_of; docs/simulator.md,
// "Planning"): whether the pool could hold, in a steady state, the sequences its arrivals
// keep running, whatever the length of the run that was simulated.
#include <algorithm>

#include "plan_internal.h"

namespace chalk::sim::plan_detail {

SteadyState steady_state_of(std::span<const SimRun> runs, int64_t sequences_per_replica, int64_t block_size, double arrival_req_per_s) {
  SteadyState st;
  double service_sum = 0;
  int64_t finished = 0;
  for (const SimRun& run : runs) {
    double tokens = 0;  // mean KV tokens a sequence holds over its life: prompt + output / 2
    int64_t served = 0;
    for (const RequestRecord& q : run.requests) {
      if (q.rejected) continue;
      service_sum += q.finish_s - q.scheduled_s;
      tokens += static_cast<double>(q.input_tokens) + 0.5 * static_cast<double>(q.output_tokens);
      ++served;
    }
    finished += served;
    double slots = static_cast<double>(sequences_per_replica);
    // The KV cache bounds the mean running sequences too, where no prefix is shared (a
    // shared prefix's blocks count once, so the cap alone is the bound there).
    if (!run.prefix_caching && served > 0 && tokens > 0 && run.kv_blocks_total > 0) {
      const double kv_tokens = static_cast<double>(run.kv_blocks_total) * static_cast<double>(block_size);
      slots = std::min(slots, kv_tokens / (tokens / static_cast<double>(served)));
    }
    st.slots += slots;
  }
  if (finished > 0) st.service_s = service_sum / static_cast<double>(finished);
  st.needed_sequences = arrival_req_per_s * st.service_s;
  return st;
}

}  // namespace chalk::sim::plan_detail
