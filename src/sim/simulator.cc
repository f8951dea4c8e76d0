// The request simulator's event loop (simulator.h; docs/simulator.md): a replica's steps
// one after another, each a pass over the running requests (step_running.cc), the waiting
// requests' admission (step_admit.cc), the engine step's time, then the step's tokens out
// (step_tokens.cc). The state between steps is StepLoop (step_loop.h).
#include "chalk/sim/simulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "chalk/base/error.h"
#include "chalk/sim/speculation.h"
#include "pipeline_step.h"
#include "step_loop.h"

namespace chalk::sim {
namespace detail {

StepLoop::StepLoop(const Deployment& d, std::span<const Request> requests, const SimOptions& o, Phase phase, bool caching, AcceptanceDraw accept,
                   LoraSlots lora, std::vector<Live> live, int64_t total_blocks, int64_t dp_ranks, SimRun& run)
    : d(d),
      requests(requests),
      o(o),
      pol(o.policy),
      phase(phase),
      run(run),
      caching(caching),
      accept(std::move(accept)),
      verify(1 + this->accept.draft_tokens()),
      block(o.policy.block_size),
      pow2(block > 0 && (block & (block - 1)) == 0),
      shift(std::countr_zero(static_cast<uint64_t>(block))),
      lora(std::move(lora)),
      total_blocks(total_blocks),
      dp(dp_ranks > 1),
      live(std::move(live)),
      ranks(dp_ranks, o.policy.max_batched_tokens, o.policy.chunked_prefill),
      pool(total_blocks),
      offload(caching && enable_offload(pool, d, o.kv_offload, block, run)) {}

SimRun run_at_scheduler(const Deployment& d, std::span<const Request> requests, const SimOptions& o, Phase phase, bool allow_bulk) {
  const bool caching = detail::check_sim_options(requests, o, phase);
  // Speculative decoding: a decode verifies K + 1 tokens and keeps a drawn 1..K+1 of them.
  AcceptanceDraw accept(o.speculation, o.speculation_seed);
  const DecodeLevers drafting = resolve_levers(o.speculation, 0);
  const int64_t n = static_cast<int64_t>(requests.size());
  SimRun run;
  run.requests.resize(requests.size());
  const int64_t block = o.policy.block_size;
  // LoRA slots (lora_slots.h) take their HBM from the KV cache, as vLLM allocates them first.
  detail::LoraSlots lora(d, requests, o, run);
  const int64_t total_blocks = o.kv_blocks > 0 ? o.kv_blocks : lora.kv_blocks_left(d, kv_blocks_available(d, block), block);
  run.kv_blocks_total = total_blocks;
  if (total_blocks <= 0) return detail::unfit_run(std::move(run), d, requests, o.pipeline_stages);

  const std::vector<int32_t> order = detail::arrival_order(requests);
  std::vector<Live> live = detail::start_requests(d, requests, o, phase, run);
  // Data-parallel attention ranks, each with its share of the step's budget (rank_budget.h).
  const int64_t dp_ranks = d.mechanisms.enabled ? std::max<int64_t>(1, d.n_chips / std::max<int64_t>(1, d.mechanisms.layout.tp_attention)) : 1;
  const int64_t pp = detail::check_pipeline(o.pipeline_stages, dp_ranks, d);  // pipeline_step.h: pp microbatches a step
  StepLoop s(d, requests, o, phase, caching, std::move(accept), std::move(lora), std::move(live), total_blocks, dp_ranks, run);
  s.bulk = allow_bulk && detail::bulk_decodes(d, s.verify, caching, dp_ranks, pp, s.lora.on());
  const EnginePolicy& pol = o.policy;
  const int64_t verify = s.verify;
  StepMemo memo;  // the engine step's parts that depend only on token counts (step_mix.h)
  int64_t next = 0;
  double& t = s.t;

  // With schedule_ahead, the step about to run was formed when the previous one began:
  // requests that arrived after that start wait for the next step (EnginePolicy). -1: no
  // step in flight (the engine was idle), so every arrival up to now is seen.
  double formed_at = -1;
  while (s.finished + run.rejected < n) {
    // Arrivals up to now join the queue; their time before now counts in the system.
    const double seen_by = pol.schedule_ahead && formed_at >= 0 ? formed_at : t;
    while (next < n && requests[order[next]].arrival_s <= seen_by) {
      const int32_t i = order[next++];
      const Request& q = requests[i];
      // The verify step writes K slots past the kept tokens (freed when rejected).
      const int64_t peak = phase == Phase::prefill ? q.input_tokens : q.input_tokens + q.output_tokens - 1 + (verify - 1);
      const bool over_context = d.model.max_context > 0 && q.input_tokens + q.output_tokens > d.model.max_context;
      if (over_context || s.blocks_for(peak) > total_blocks) {
        run.requests[i].over_context = over_context;
        run.requests[i].rejected = true;
        ++run.rejected;
        continue;
      }
      if (s.live[i].output <= s.live[i].generated) {  // decode phase, one output token: nothing to do here
        run.requests[i].scheduled_s = q.arrival_s;
        run.requests[i].first_token_s = q.arrival_s;  // it reaches the user with its KV
        s.finish(i, q.arrival_s);
        continue;
      }
      run.requests_in_system_s += t - q.arrival_s;
      s.waiting.push_back(i);
    }
    if (s.running.empty() && s.waiting.empty()) {
      if (next >= n) break;
      // Nothing to run: an engine whose last step has ended is idle; the first arrival after
      // it is scheduled at once.
      if (formed_at < 0 || requests[order[next]].arrival_s >= t) {
        t = std::max(t, requests[order[next]].arrival_s);
        formed_at = -1;
      } else {
        formed_at = -1;  // arrived during the last step: seen at its end
      }
      continue;
    }

    // Schedule: running requests first, in admission order, then waiting ones.
    s.decode_ctx.clear();
    s.decode_owner.clear();
    s.decode_rank.clear();
    s.chunks.clear();
    s.chunk_owner.clear();
    s.chunk_rank.clear();
    s.lora.begin_step();
    s.ranks.begin_step();
    StepLoop::Scheduled ran = s.bulk ? s.schedule_bulk(pol.max_batched_tokens * pp) : s.schedule_running(pol.max_batched_tokens * pp);
    if (!ran.preempted && !s.waiting.empty()) s.admit_waiting(ran);  // its loop's first test, without the call
    // Something always runs: the first running request, or (none running, all blocks free)
    // the first waiting one, whose prompt fits since larger requests were rejected.
    if (ran.decodes == 0 && s.chunks.empty()) throw std::logic_error("simulate: a step with nothing to run");

    StepMix mix;
    mix.memo = &memo;
    if (s.bulk) {
      mix.decode_count = ran.decodes;  // contexts not listed: StepMix's aggregate form
    } else {
      mix.decode_contexts = s.decode_ctx;
    }
    mix.decode_context_sum = ran.context_sum;
    mix.chunks = s.chunks;
    mix.tokens_per_sequence = static_cast<double>(verify);
    if (verify > 1) mix.drafting = &drafting;
    if (s.dp) {
      mix.decode_ranks = s.decode_rank;
      mix.chunk_ranks = s.chunk_rank;
    }
    const MixedStepWork work = pp > 1 ? detail::pipeline_step_work(d, mix, pp) : mixed_step_work(d, mix);
    const auto adapters = s.lora.end_step(d, run);  // adapter loads, then the multi-adapter GEMM
    const double dt = adapters.seconds + (s.offload ? layerwise_step_seconds(work.t_step.value(), std::exchange(s.step_fetch_s, 0.0), n_layers(d.model))
                                                  : work.t_step.value());
    const double end = t + dt;
    run.requests_in_system_s += static_cast<double>(s.running.size() + s.waiting.size()) * dt;
    StepSample sample;
    sample.start_s = t;
    sample.duration_s = dt;
    sample.decodes = static_cast<int32_t>(ran.decodes);
    sample.prefill_tokens = static_cast<int32_t>(ran.prefill_tokens);
    sample.running = static_cast<int32_t>(s.running.size());
    sample.waiting = static_cast<int32_t>(s.waiting.size());
    sample.kv_blocks_used = s.pool.used();  // held by running requests
    sample.compute_s = work.t_compute.value();
    sample.memory_s = work.t_memory.value() + adapters.memory_s;
    run.kv_blocks_peak = std::max(run.kv_blocks_peak, sample.kv_blocks_used);

    const int64_t finished_before = s.finished;
    sample.steady_tokens = s.emit_tokens(t, end);
    if (s.bulk) s.park(end);
    if (s.finished > finished_before) s.drop_finished();  // only a finish (emit) leaves a request done in the list

    run.decode_sequences_s += static_cast<double>(sample.decodes) * dt;
    run.kv_blocks_s += static_cast<double>(sample.kv_blocks_used) * dt;
    run.busy_s += dt;
    ++run.n_steps;
    if (run.steps.size() == run.steps.capacity()) [[unlikely]] detail::reserve_steps(run.steps, next, n);
    run.steps.push_back(sample);
    formed_at = t;  // the next step was formed as this one began
    t = end;
    if (o.progress && run.n_steps % kProgressEvery == 0) o.progress(kProgressEvery);
  }
  if (o.progress && run.n_steps % kProgressEvery != 0) o.progress(run.n_steps % kProgressEvery);
  run.kv_blocks_leaked = s.pool.leaked();  // cached blocks are unreferenced at the end
  run.prefix_caching = caching;
  run.kv_blocks_evicted = s.pool.cache().evictions();
  if (s.offload) run.kv_blocks_offloaded = s.pool.tiers()->offloaded();
  return run;
}

}  // namespace detail

}  // namespace chalk::sim
