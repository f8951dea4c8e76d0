// The energy of a simulated serving run (issue 31, item 7; docs/formulas.md, "Energy";
// docs/simulator.md, "Energy"): every chip of every replica at its idle power for the whole
// run, plus, in each engine step, what its busy tensor cores and HBM add (hardware/power.h),
// plus the host's share per chip, times the facility's PUE; per output token and per request.
#pragma once

#include <cstdint>
#include <span>

#include "chalk/hardware/power.h"
#include "chalk/sim/cluster.h"
#include "chalk/sim/simulator.h"

namespace chalk::sim {

/// Energy of a run, joules unless named otherwise.
struct ServingEnergy {
  double chip_energy_j = 0;     ///< all chips: busy steps and idle gaps over the run
  double energy_j = 0;          ///< facility: (chip energy + host W x chips x duration) x PUE
  double energy_kwh = 0;        ///< energy_j / 3.6e6
  double output_tokens = 0;     ///< of finished requests
  int64_t requests = 0;         ///< finished requests
  double j_per_output_token = 0;  ///< energy_j / output_tokens (0 when none)
  double j_per_request = 0;       ///< energy_j / requests (0 when none)
  double mean_chip_power_w = 0;   ///< chip_energy_j / (chips x duration): the mean draw per chip
  double duration_s = 0;          ///< first arrival to last finish (SimSummary::duration_s)
  int64_t chips = 0;
};

/// Chip energy of one pool's replicas over `duration_s`, J: for each replica,
/// chips_per_replica x (sum over its steps of step_energy_j(p, duration, compute_s,
/// memory_s) + p.idle_w x max(0, duration_s - busy time)). Each step's busy times are the
/// busiest chip's (StepSample), so under data-parallel attention the others are counted as
/// busy as it: an upper bound of their draw.
double pool_chip_energy_j(std::span<const SimRun> runs, int64_t chips_per_replica, const ChipPower& p, double duration_s);

/// The energy of a simulated deployment: pool_chip_energy_j of the decode (or aggregated)
/// replicas, chips_per_replica each, and of the prefill pool's (prefill_chips_per_replica;
/// ignored unless run.disaggregated), all over `s.duration_s`; facility_energy_j over
/// run.chips; per output token and per request over the finished requests (the
/// end-to-end requests when disaggregated). `prefill_power`: the prefill pool's chips when
/// they differ from the decode pool's (mixed chips; null: `p`). Throws InputError as
/// validate(Facility).
ServingEnergy serving_energy(const ClusterRun& run, const SimSummary& s, int64_t chips_per_replica, int64_t prefill_chips_per_replica,
                             const ChipPower& p, const Facility& f, const ChipPower* prefill_power = nullptr);

}  // namespace chalk::sim
