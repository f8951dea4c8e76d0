// Pipeline stages in the simulator's replica (SimOptions::pipeline_stages; docs/simulator.md
// 1.10) and the run of a replica that holds no KV cache. Private to src/sim.
#pragma once

#include <cstdint>
#include <span>

#include "chalk/engine/step_mix.h"
#include "chalk/sim/simulator.h"

namespace chalk::sim::detail {

/// The stages simulated: `stages` when >= 1 (1: none). Throws InputError("pp") for stages <
/// 1, for stages > 1 with data-parallel attention (dp_ranks > 1: not simulated), and as
/// pipeline_stage_send does for a system without a scale-out bandwidth.
int64_t check_pipeline(int64_t stages, int64_t dp_ranks, const Deployment& stage);

/// One step of a replica of `pp` stages whose busiest stage is `stage`, the scheduler having
/// formed `mix` with pp x the token budget: the pp microbatches vLLM keeps in flight (its V1
/// engine core's batch queue holds max_concurrent_batches batches, which MultiprocExecutor
/// and the Ray executor set to parallel_config.pipeline_parallel_size without async
/// scheduling: vllm/v1/executor/multiproc_executor.py at vllm-project/vllm@00f6c9bf92aa). The mix's
/// decodes and chunks go, in the scheduler's order, each to the microbatch with the fewest
/// tokens so far; microbatch k costs the stage t_k = mixed_step_time(stage, mix_k) and sends
/// h_k = its tokens x d_model x 2 bytes (bf16 activations) to the next stage, and its
/// decodes' sampled ids (4 bytes each) back to the first (engine/pipeline.h's sends). The
/// step, the time between two tokens of one request, is pipeline_decode's cycle:
///   max(sum_k t_k, max_k (pp x t_k + (pp - 1) x send(h_k) + send(ids_k)))
/// (a stage runs the microbatches one after another; a lone microbatch passes every stage
/// in turn). One microbatch of one decode: pipeline_decode's t_pass at batch 1; of one
/// prompt: pipeline_prefill's ttft at one microbatch. t_compute and t_memory are the sums
/// over microbatches (each stage's chips do each microbatch's work once).
MixedStepWork pipeline_step_work(const Deployment& stage, const StepMix& mix, int64_t pp);

/// `run` (requests sized, nothing run) as a replica that holds no KV cache returns it:
/// fits false with the reason, every request never run (RequestRecord::rejected, arrival
/// and tokens filled) and counted in SimRun::rejected, so a summary reports no latency
/// (finished 0: no TTFT is measured) and an SLO attainment of 0, never the zero first-token
/// time of a request that never ran.
SimRun unfit_run(SimRun run, const Deployment& d, std::span<const Request> requests, int64_t pipeline_stages);

}  // namespace chalk::sim::detail
