// A system's links for the engine step, built once per thread (overhead.cc).
#pragma once

#include "chalk/engine/collective.h"
#include "chalk/hardware/hardware.h"

namespace chalk::detail {

/// A system's scale-up link (scale_up_link) and, where it states a scale-out bandwidth,
/// its scale-out link (scale_out_link; has_out false and `out` empty otherwise).
struct SystemLinks {
  LinkModel up, out;
  bool has_out = false;
};

/// The links of `sys`, the same values scale_up_link and scale_out_link return, built once
/// per thread while the fields they read stay the same (is_tpu, the scale-up and scale-out
/// bandwidths, the scale-up topology, the system's collective_efficiency and
/// collective_latency and small_all_reduce). Building a LinkModel allocates its name, source and
/// protocol list; the request simulator prices hundreds of thousands of steps of one
/// deployment (bench/bench_sim.cc, bench/bench_traces.cc), where building both links per
/// step was about a tenth of a step's time. The reference stays valid until the next call
/// on the same thread. Throws nothing scale_up_link does not.
const SystemLinks& system_links(const SystemSpec& sys);

}  // namespace chalk::detail
