// Private to src/engine: the compute that two micro-batches put beside one decode step's
// expert-parallel traffic (two-batch overlap: SGLang --enable-two-batch-overlap, DeepSeek's
// decode profile), for the engine step (overhead.cc).
#pragma once

#include "chalk/engine/roofline.h"

namespace chalk::detail {

/// Compute that hides one decode step's EP traffic under two micro-batches (both
/// micro-batches, all MoE layers): the dispatch behind the shared expert and the
/// attention before its core, the combine behind the core, the output projection and
/// the router; each with its kernels' floor. Attention times are the step's, scaled to
/// the MoE layers' share of the layers. Times in seconds; zero windows for a dense model.
struct DecodeWindows {
  Seconds dispatch, combine;
};

/// The windows of `dep`'s step from its parts: `projections` (attention projections, all
/// layers), `shared` (shared experts), `core` (attention core), `router` (router GEMMs and
/// top-k) and `floor`, one kernel's launch-and-drain floor.
DecodeWindows decode_windows(const Deployment& dep, Seconds projections, Seconds shared, Seconds core, Seconds router, Seconds floor);

}  // namespace chalk::detail
