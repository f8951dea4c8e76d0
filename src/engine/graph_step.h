// CUDA graphs inside the engine step (overhead.cc): internal to src/engine.
#pragma once

#include <cstdint>

#include "chalk/engine/overhead.h"

namespace chalk::detail {

/// How one step runs under dep.mechanisms.graphs (cuda_graphs.h).
struct GraphChoice {
  int64_t batch = 0;  ///< the captured size replayed (graph_batch); 0 = eager or no graph modelled
  bool eager = false;  ///< launched by the host kernel by kernel
  /// Tokens the padding adds on each data-parallel rank: (batch - units) x tokens per unit
  /// (1 per_token, else the tokens each decode sequence pushes, q). The GPU runs them
  /// through every matmul (projections, FFNs, router, experts) and the TP all-reduces;
  /// attention and the LM head see only the real sequences.
  double extra_tokens_per_rank = 0;
};

/// The graph a step of `n_decode` decodes of `q` tokens each and `n_prefill` prefill
/// chunks replays, from the busiest data-parallel rank's tokens `rank_tokens` and decode
/// sequences `rank_decodes` (whole sequences; its share of the prefill tokens). Each rank
/// pads its own batch; the padding counted on every rank is the busiest one's (the engines'
/// dummy runs on idle ranks are not modelled). Nothing on TPUs (one compiled program).
GraphChoice choose_graph(const Deployment& dep, double n_decode, double n_prefill, double q, double rank_tokens, double rank_decodes);

/// An eager step's host launches: t_launch = r.kernels x launch_s_per_kernel; the GPU
/// cannot run ahead of them, so t_step = max(t_step, t_launch), governs "launch" where they
/// bind. Nothing unless r.eager. Call before the host's per-step work (add_host_time).
void add_eager_launch(const Deployment& dep, StepBreakdown& r);

}  // namespace chalk::detail
