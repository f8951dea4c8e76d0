// The simulator's event loop, private to src/sim (simulator.cc); simulate() (simulate.cc)
// wraps it with the engine's mechanisms and the requests' fixed work outside the GPU.
#pragma once

#include <span>

#include "chalk/sim/simulator.h"

namespace chalk::sim::detail {

/// The event loop of simulate() (simulator.h), with each request arriving at the
/// scheduler at its arrival_s.
SimRun run_at_scheduler(const Deployment& d, std::span<const Request> requests, const SimOptions& o, Phase phase);

}  // namespace chalk::sim::detail
