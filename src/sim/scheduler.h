// Internal to sim: the event loop of one replica (simulator.cc), which simulate()
// (simulate.cc) wraps with the engine's mechanisms and the requests' fixed work.
#pragma once

#include <span>

#include "chalk/sim/simulator.h"

namespace chalk::sim::detail {

/// The event loop of simulate() (simulator.h), each request arriving at the scheduler at
/// its arrival_s, on `d` as given (its mechanisms already the engine's).
SimRun run_at_scheduler(const Deployment& d, std::span<const Request> requests, const SimOptions& o, Phase phase);

}  // namespace chalk::sim::detail
