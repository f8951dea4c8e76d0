// The energy of a simulated serving run (energy.h; docs/formulas.md, "Energy").
#include "chalk/sim/energy.h"

#include <algorithm>

namespace chalk::sim {

double pool_chip_energy_j(std::span<const SimRun> runs, int64_t chips_per_replica, const ChipPower& p, double duration_s) {
  double total = 0;
  for (const SimRun& r : runs) {
    double busy_j = 0, busy_s = 0;
    for (const StepSample& st : r.steps) {
      busy_j += step_energy_j(p, Seconds(st.duration_s), Seconds(st.compute_s), Seconds(st.memory_s));
      busy_s += st.duration_s;
    }
    total += static_cast<double>(chips_per_replica) * (busy_j + p.idle_w * std::max(0.0, duration_s - busy_s));
  }
  return total;
}

ServingEnergy serving_energy(const ClusterRun& run, const SimSummary& s, int64_t chips_per_replica, int64_t prefill_chips_per_replica,
                             const ChipPower& p, const Facility& f, const ChipPower* prefill_power) {
  validate(f);
  ServingEnergy e;
  e.duration_s = s.duration_s;
  e.chips = run.chips;
  e.chip_energy_j = pool_chip_energy_j(run.runs, chips_per_replica, p, s.duration_s);
  if (run.disaggregated) e.chip_energy_j += pool_chip_energy_j(run.prefill_runs, prefill_chips_per_replica, prefill_power ? *prefill_power : p, s.duration_s);
  e.energy_j = facility_energy_j(e.chip_energy_j, f, static_cast<double>(run.chips), s.duration_s);
  e.energy_kwh = e.energy_j / 3.6e6;
  auto count = [&e](const SimRun& r) {
    for (const RequestRecord& q : r.requests) {
      if (q.rejected) continue;
      ++e.requests;
      e.output_tokens += static_cast<double>(q.output_tokens);
    }
  };
  if (run.disaggregated) {
    count(run.end_to_end);
  } else {
    for (const SimRun& r : run.runs) count(r);
  }
  if (e.output_tokens > 0) e.j_per_output_token = e.energy_j / e.output_tokens;
  if (e.requests > 0) e.j_per_request = e.energy_j / static_cast<double>(e.requests);
  if (run.chips > 0 && s.duration_s > 0) e.mean_chip_power_w = e.chip_energy_j / (static_cast<double>(run.chips) * s.duration_s);
  return e;
}

}  // namespace chalk::sim
