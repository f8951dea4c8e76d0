// Little's law on a planned pool (plan_internal.h, steady_state_of; docs/simulator.md,
// "Planning"): whether the pool could hold, in a steady state, the sequences its arrivals
// keep running, whatever the length of the run that was simulated; and why a planned run
// missed the SLO (slo_miss_of, steady_state_miss: plan's why_not).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

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

std::string slo_miss_of(const ClusterRun& c, const SimSummary& s, const Slo& slo) {
  const auto ms = [](double x) {
    char b[32];
    std::snprintf(b, sizeof b, "%.4g", x * 1e3);
    return std::string(b);
  };
  if (!c.fits) return "does not fit";
  if (s.finished == 0) return "no request finished";
  if (s.rejected > 0) return std::to_string(s.rejected) + (s.rejected == 1 ? " request rejected" : " requests rejected");
  if (slo.ttft_s && s.ttft_at_slo_percentile_s > *slo.ttft_s) return "TTFT@p " + ms(s.ttft_at_slo_percentile_s) + " ms > SLO " + ms(*slo.ttft_s) + " ms";
  if (slo.tpot_s && s.tpot_at_slo_percentile_s > *slo.tpot_s) return "TPOT@p " + ms(s.tpot_at_slo_percentile_s) + " ms > SLO " + ms(*slo.tpot_s) + " ms";
  return "";
}

std::string steady_state_miss(const SteadyState& st) {
  return "steady state needs " + std::to_string(std::llround(st.needed_sequences)) + " running sequences (Little's law), the pool holds " +
         std::to_string(std::llround(st.slots));
}

}  // namespace chalk::sim::plan_detail
