// The request simulator's event loop (simulator.h; docs/simulator.md).
#include "chalk/sim/simulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <deque>
#include <stdexcept>
#include <utility>

#include "chalk/base/error.h"
#include "chalk/sim/speculation.h"
#include "kv_pool.h"
#include "lora_slots.h"
#include "pipeline_step.h"
#include "rank_budget.h"
#include "scheduler.h"

namespace chalk::sim {
namespace detail {

SimRun run_at_scheduler(const Deployment& d, std::span<const Request> requests, const SimOptions& o, Phase phase) {
  const bool caching = detail::check_sim_options(requests, o, phase);
  // Speculative decoding: a decode verifies K + 1 tokens and keeps a drawn 1..K+1 of them.
  AcceptanceDraw accept(o.speculation, o.speculation_seed);
  const int64_t verify = 1 + accept.draft_tokens();  // tokens a decode pushes
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
  // ceil(tokens / block) for tokens >= 0, a shift where the block is a power of two (vLLM's
  // 16 and the other engines' sizes are): the division was the scheduler's costliest
  // instruction per running request per step. Same integers either way.
  const bool pow2 = block > 0 && (block & (block - 1)) == 0;
  const int shift = std::countr_zero(static_cast<uint64_t>(block));
  auto blocks_for = [block, pow2, shift](int64_t tokens) { return pow2 ? (tokens + block - 1) >> shift : (tokens + block - 1) / block; };

  const std::vector<int32_t> order = detail::arrival_order(requests);

  std::vector<Live> live = detail::start_requests(d, requests, o, phase, run);

  const EnginePolicy& pol = o.policy;
  std::deque<int32_t> waiting;
  StepList<Running> running;
  StepList<int32_t> done;  // places in `running` of the requests the step finished
  StepList<int64_t> decode_ctx;
  // The step's decodes and chunks: their places in `running`, and their ranks (read only
  // under data-parallel attention, so kept only then).
  StepList<int32_t> decode_owner, chunk_owner, decode_rank, chunk_rank;
  // Data-parallel attention ranks and their shares of the step's budget (rank_budget.h).
  const int64_t dp_ranks = d.mechanisms.enabled ? std::max<int64_t>(1, d.n_chips / std::max<int64_t>(1, d.mechanisms.layout.tp_attention)) : 1;
  const bool dp = dp_ranks > 1;
  const int64_t pp = detail::check_pipeline(o.pipeline_stages, dp_ranks, d);  // pipeline_step.h: pp microbatches a step
  detail::RankBudgets ranks(dp_ranks, pol.max_batched_tokens, pol.chunked_prefill);
  StepList<PrefillChunk> chunks;
  StepMemo memo;  // the engine step's parts that depend only on token counts (step_mix.h)
  int64_t finished = 0, next = 0;
  double t = 0;
  // The KV blocks, with the prefix cache over them (kv_pool.h).
  detail::KvPool pool(total_blocks);
  // Offload tiers behind the cache (kv_offload.h): fetches of a step load layer by layer.
  const bool offload = caching && detail::enable_offload(pool, d, o.kv_offload, block, run);
  detail::TierFetch fetch;
  double step_fetch_s = 0;
  const auto own = [](int32_t i) { return static_cast<uint64_t>(i) + 1; };
  const auto commit = [&](const Running& r) { pool.commit(live[r.id].kv, requests[r.id], own(r.id), r.kv_tokens, block); };
  const auto release = [&](int32_t i) { pool.release(live[i].kv); };

  auto finish = [&](int32_t i, double when) {
    auto& rec = run.requests[i];
    rec.finish_s = when;
    release(i);
    ranks.drop(live[i].rank);
    ++finished;
    run.end_s = std::max(run.end_s, when);
  };
  auto preempt = [&](const Running& r) {
    const int32_t i = r.id;
    auto& L = live[i];
    release(i);
    L.kv_tokens = 0;
    L.generated = r.generated;
    L.last_token_s = r.last_token_s;
    ranks.drop(live[i].rank);
    L.upstream_prefilled = false;  // its KV is gone: recompute prompt and generated tokens here
    L.prefill_target = requests[i].input_tokens + L.generated;
    ++run.requests[i].preemptions;
    ++run.preemptions;
  };

  // A step's two passes over the running requests, out of line: inlined in the loop below,
  // their counters lived on the stack (too few registers) and each iteration waited on its
  // own stores (perf annotate). First the running requests take the budget, in admission order.
  struct Scheduled { int64_t budget, context_sum, prefill_tokens; bool preempted; };
  const auto schedule_running = [&](int64_t budget) __attribute__((noinline)) {
    int64_t context_sum = 0, prefill_tokens = 0;
    bool preempted = false;
    // The loop's invariants and the decodes' lists as locals (each running request adds at
    // most one decode): through the closure, each was loaded again after every store.
    const int64_t q = verify, tokens_per_block = block;
    const bool ranked = dp, adapters = lora.on();
    const auto blocks = blocks_for;
    int64_t* const ctx = decode_ctx.room(running.size());
    int32_t* const owner = decode_owner.room(running.size());
    std::size_t decodes = 0;
    for (std::size_t k = 0; k < running.size() && budget > 0; ++k) {
      if (!adapters && pool.available() >= 0) {
        // The common case first: a run of decodes whose tokens fit the blocks they hold
        // (need 0: kv_tokens + q <= held x block), which the general path below would take
        // with no preemption, no block and no adapter to count. Same order, same budget,
        // same rank shares; a request that needs more (a chunk, a new block) goes the
        // general way.
        const std::size_t size = running.size();
        const Running* const rs = &running[0];
        for (; k < size && budget > 0; ++k) {
          const Running& R = rs[k];
          if (R.prefill_target > 0 || R.kv_tokens + q > R.held * tokens_per_block) break;
          budget -= q;
          if (ranked) {
            ranks.spend(R.rank, q);
            decode_rank.push_back(R.rank);
          }
          ctx[decodes] = R.kv_tokens;
          owner[decodes++] = static_cast<int32_t>(k);
          context_sum += R.kv_tokens;
        }
        if (k >= size || budget <= 0) break;
      }
      Running& R = running[k];
      const int32_t i = R.id;
      const bool prefilling = R.prefill_target > 0;
      // A chunk waits for a step where its rank has budget left; a decode always runs.
      if (prefilling && ranks.budget(R.rank) <= 0) continue;
      const int64_t want = prefilling ? std::min({R.prefill_target - R.kv_tokens, budget, ranks.budget(R.rank)}) : q;
      // Blocks reserved at admission (reserve_to_completion) already cover the growth.
      const int64_t need = std::max<int64_t>(0, blocks(R.kv_tokens + want) - R.held);
      bool self = false;
      while (need > pool.available()) {
        const Running victim = running.back();
        running.pop_back();
        preempt(victim);
        waiting.push_front(victim.id);
        preempted = true;
        if (victim.id == i) {
          self = true;
          break;
        }
      }
      if (self) break;
      if (need > 0) {  // mostly 0 (a decode within its last block): no call
        pool.take(need);
        live[i].kv.blocks += need;
        R.held += need;
      }
      budget -= want;
      if (adapters) lora.use(requests[i].adapter, want);
      if (ranked) ranks.spend(R.rank, want);  // a single rank keeps no shares
      if (prefilling) {
        chunks.push_back({want, R.kv_tokens});
        chunk_owner.push_back(static_cast<int32_t>(k));
        if (ranked) chunk_rank.push_back(R.rank);
        prefill_tokens += want;
      } else {
        ctx[decodes] = R.kv_tokens;
        owner[decodes++] = static_cast<int32_t>(k);
        if (ranked) decode_rank.push_back(R.rank);
        context_sum += R.kv_tokens;
      }
    }
    decode_ctx.added(decodes);
    decode_owner.added(decodes);
    return Scheduled{budget, context_sum, prefill_tokens, preempted};
  };

  // Then the step's tokens at its `end`: a chunk completing its prompt yields the first, a decode
  // its kept ones. Returns those one step after their previous token (StepSample::steady_tokens).
  const auto emit_tokens = [&](double start, double end) __attribute__((noinline)) {
    int32_t steady = 0;
    // The loop's invariants as locals (through the closure each was loaded again after every
    // store); the running list does not move while the tokens go out.
    const int64_t q = verify;
    const bool cache = caching;
    Running* const rs = running.empty() ? nullptr : &running[0];
    auto emit = [&](Running& R, int64_t tokens) {  // `tokens` arrive together: one gap
      R.generated += tokens;
      if (R.generated == 1) {
        run.requests[R.id].first_token_s = end;
      } else if (R.last_token_s == start) {
        ++steady;
      } else {
        run.long_token_gaps_s.push_back(end - R.last_token_s);
      }
      R.last_token_s = end;
      if (R.generated >= R.output) {
        finish(R.id, end);
        done.push_back(static_cast<int32_t>(&R - rs));
      }
    };
    for (std::size_t k = 0; k < chunks.size(); ++k) {
      Running& R = rs[chunk_owner[k]];
      R.kv_tokens += chunks[k].tokens;
      if (cache) commit(R);
      if (R.kv_tokens >= R.prefill_target) {
        R.prefill_target = 0;
        emit(R, 1);
      }
    }
    if (q == 1 && !cache) {
      // Plain decodes (no drafts, no prefix cache): the common token (not a first one, one
      // step after the last, not the last) inline; the others through emit, out of line, so
      // that this loop's counters stay in registers.
      const auto emit_rare = [&](Running& R, int64_t tokens) __attribute__((noinline)) { emit(R, tokens); };
      for (const int32_t p : decode_owner) {
        Running& R = rs[p];
        const int64_t kept = std::min<int64_t>(1, R.output - R.generated);
        R.kv_tokens += kept;
        const int64_t generated = R.generated + kept;
        if (generated != 1 && generated < R.output && R.last_token_s == start) [[likely]] {
          R.generated = generated;
          ++steady;
          R.last_token_s = end;
        } else {
          emit_rare(R, kept);
        }
      }
      return steady;
    }
    for (const int32_t p : decode_owner) {
      Running& R = rs[p];
      const int64_t drawn = q > 1 ? accept.draw() : 1;  // no drafts: one token, no draw
      if (q > 1) {
        ++run.verify_steps;
        run.verify_tokens_kept += drawn;
      }
      const int64_t kept = std::min(drawn, R.output - R.generated);
      R.kv_tokens += kept;
      if (cache) commit(R);  // the whole blocks the kept tokens completed join the cache
      emit(R, kept);
    }
    return steady;
  };

  // With schedule_ahead, the step about to run was formed when the previous one began:
  // requests that arrived after that start wait for the next step (EnginePolicy). -1: no
  // step in flight (the engine was idle), so every arrival up to now is seen.
  double formed_at = -1;
  while (finished + run.rejected < n) {
    // Arrivals up to now join the queue; their time before now counts in the system.
    const double seen_by = pol.schedule_ahead && formed_at >= 0 ? formed_at : t;
    while (next < n && requests[order[next]].arrival_s <= seen_by) {
      const int32_t i = order[next++];
      const Request& q = requests[i];
      // The verify step writes K slots past the kept tokens (freed when rejected).
      const int64_t peak = phase == Phase::prefill ? q.input_tokens : q.input_tokens + q.output_tokens - 1 + (verify - 1);
      const bool over_context = d.model.max_context > 0 && q.input_tokens + q.output_tokens > d.model.max_context;
      if (over_context || blocks_for(peak) > total_blocks) {
        run.requests[i].over_context = over_context;
        run.requests[i].rejected = true;
        ++run.rejected;
        continue;
      }
      if (live[i].output <= live[i].generated) {  // decode phase, one output token: nothing to do here
        run.requests[i].scheduled_s = q.arrival_s;
        run.requests[i].first_token_s = q.arrival_s;  // it reaches the user with its KV
        finish(i, q.arrival_s);
        continue;
      }
      run.requests_in_system_s += t - q.arrival_s;
      waiting.push_back(i);
    }
    if (running.empty() && waiting.empty()) {
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

    // Schedule: running requests first, in admission order.
    decode_ctx.clear();
    decode_owner.clear();
    decode_rank.clear();
    chunks.clear();
    chunk_owner.clear();
    chunk_rank.clear();
    lora.begin_step();
    ranks.begin_step();
    const Scheduled ran = schedule_running(pol.max_batched_tokens * pp);
    int64_t budget = ran.budget, context_sum = ran.context_sum, prefill_tokens = ran.prefill_tokens;
    bool preempted_now = ran.preempted;
    // Then waiting requests, first come first served (none after a preemption: vLLM), passing
    // over those whose adapter would exceed max_loras (LoraSlots::admits).
    for (std::size_t w = 0; !preempted_now && w < waiting.size() && budget > 0 && static_cast<int64_t>(running.size()) < pol.max_sequences;) {
      const int32_t i = waiting[w];
      if (!lora.admits(requests[i].adapter) && ++w) continue;
      auto& L = live[i];
      const auto place = static_cast<int32_t>(running.size());  // where it joins the running list
      // reserve_to_completion: admission takes the blocks of the request's whole life.
      const int64_t life = blocks_for(phase == Phase::prefill ? requests[i].input_tokens
                                                              : requests[i].input_tokens + requests[i].output_tokens - 1);
      if (L.upstream_prefilled) {
        const int64_t need = pol.reserve_to_completion ? std::max(life, blocks_for(requests[i].input_tokens + verify))
                                                       : blocks_for(requests[i].input_tokens + verify);
        if (need > pool.available()) break;
        L.kv_tokens = requests[i].input_tokens;
        L.upstream_prefilled = false;
        // The user sees the first token now: the decode instance streams it once it holds the
        // request's KV (SGLang PD, Dynamo, vLLM's P/D proxy take the stream from the decode
        // side), so the transfer and this pool's queue count in TTFT, not in a token gap.
        run.requests[i].first_token_s = t;
        L.last_token_s = t;
        pool.take(need);
        L.kv.blocks = need;
        budget -= verify;
        lora.use(requests[i].adapter, verify);
        live[i].rank = ranks.take();
        ranks.spend(L.rank, verify);
        decode_ctx.push_back(L.kv_tokens);
        decode_owner.push_back(place);
        if (dp) decode_rank.push_back(L.rank);
        context_sum += L.kv_tokens;
      } else {
        // Prefix caching: the longest run of its first blocks in the cache, whole blocks within
        // all its tokens but the last (which must be computed for the logits: vLLM's
        // get_computed_blocks looks up at most num_tokens - 1 tokens).
        std::vector<int32_t> hits;
        uint64_t hit_hash = 0;
        int64_t pinned = 0;  // hits that no running request references: admission takes them off the LRU list
        if (caching) {
          hits = detail::longest_cached_prefix(pool.cache(), requests[i], own(i), (L.prefill_target - 1) / block, block, &hit_hash);
          for (const int32_t h : hits) pinned += pool.cache().refs(h) == 0 ? 1 : 0;
          pool.lower_run(requests[i], own(i), static_cast<int64_t>(hits.size()), hit_hash, (L.prefill_target - 1) / block, block, fetch);
          if (!L.started) run.requests[i].cached_tokens = (static_cast<int64_t>(hits.size()) + fetch.size()) * block;
        }
        const int64_t start = caching ? (static_cast<int64_t>(hits.size()) + fetch.size()) * block : run.requests[i].cached_tokens;
        const int64_t left = L.prefill_target - start;
        int64_t want = std::min({left, budget, ranks.budget(ranks.next())});
        if (want <= 0) break;  // its rank's share is spent this step (first come, first served)
        if (!pol.chunked_prefill && want < left) {
          // Whole prompts only: one longer than the budget runs alone in an empty step.
          if (!(decode_ctx.empty() && chunks.empty())) break;
          want = left;
        }
        const int64_t need = (pol.reserve_to_completion ? std::max(life, blocks_for(start + want)) : blocks_for(start + want)) -
                             static_cast<int64_t>(hits.size());
        if (need > pool.available() - pinned) break;
        for (const int32_t h : hits) pool.cache().ref(h);
        L.kv.cached = std::move(hits);
        L.kv.chain = hit_hash;
        L.kv_tokens = start;
        if (offload) {
          step_fetch_s += detail::admit_fetch(pool, L.kv, need, fetch, !L.started, run);
        } else {
          pool.take(need);
          L.kv.blocks = need;
        }
        budget -= want;
        lora.use(requests[i].adapter, want);
        live[i].rank = ranks.take();
        ranks.spend(L.rank, want);
        chunks.push_back({want, start});
        chunk_owner.push_back(place);
        if (dp) chunk_rank.push_back(L.rank);
        prefill_tokens += want;
      }
      if (!L.started) {
        L.started = true;
        run.requests[i].scheduled_s = t;
      }
      waiting.erase(waiting.begin() + static_cast<std::ptrdiff_t>(w));
      running.push_back({L.kv_tokens, L.kv.held(), L.prefill_target, L.generated, L.output, L.last_token_s, i, L.rank});
    }
    // Something always runs: the first running request, or (none running, all blocks free)
    // the first waiting one, whose prompt fits since larger requests were rejected.
    if (decode_ctx.empty() && chunks.empty()) throw std::logic_error("simulate: a step with nothing to run");

    StepMix mix;
    mix.memo = &memo;
    mix.decode_contexts = decode_ctx;
    mix.decode_context_sum = context_sum;
    mix.chunks = chunks;
    mix.tokens_per_sequence = static_cast<double>(verify);
    if (verify > 1) mix.drafting = &drafting;
    if (dp_ranks > 1) {
      mix.decode_ranks = decode_rank;
      mix.chunk_ranks = chunk_rank;
    }
    const MixedStepWork work = pp > 1 ? detail::pipeline_step_work(d, mix, pp) : mixed_step_work(d, mix);
    const auto adapters = lora.end_step(d, run);  // adapter loads, then the multi-adapter GEMM
    const double dt = adapters.seconds + (offload ? layerwise_step_seconds(work.t_step.value(), std::exchange(step_fetch_s, 0.0), n_layers(d.model))
                                                  : work.t_step.value());
    const double end = t + dt;
    run.requests_in_system_s += static_cast<double>(running.size() + waiting.size()) * dt;
    StepSample sample;
    sample.start_s = t;
    sample.duration_s = dt;
    sample.decodes = static_cast<int32_t>(decode_ctx.size());
    sample.prefill_tokens = static_cast<int32_t>(prefill_tokens);
    sample.running = static_cast<int32_t>(running.size());
    sample.waiting = static_cast<int32_t>(waiting.size());
    sample.kv_blocks_used = pool.used();  // held by running requests
    sample.compute_s = work.t_compute.value();
    sample.memory_s = work.t_memory.value() + adapters.memory_s;
    run.kv_blocks_peak = std::max(run.kv_blocks_peak, sample.kv_blocks_used);

    const int64_t finished_before = finished;
    sample.steady_tokens = emit_tokens(t, end);
    if (finished > finished_before) {  // only a finish (emit) leaves a request done in the list
      // Out of the list, the others kept in order: the runs between the finished places move
      // down (a step finishes a few of its ~100 requests: copying the whole list each time was
      // a fifth of bench_sim's simulate_requests).
      int32_t* const gone = &done[0];
      std::sort(gone, gone + done.size());
      Running* const rs = &running[0];
      std::size_t kept = static_cast<std::size_t>(gone[0]);
      for (std::size_t j = 0; j < done.size(); ++j) {
        const std::size_t from = static_cast<std::size_t>(gone[j]) + 1, to = j + 1 < done.size() ? static_cast<std::size_t>(gone[j + 1]) : running.size();
        std::copy(rs + from, rs + to, rs + kept);
        kept += to - from;
      }
      running.truncate(kept);
      done.clear();
    }

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
  run.kv_blocks_leaked = pool.leaked();  // cached blocks are unreferenced at the end
  run.prefix_caching = caching;
  run.kv_blocks_evicted = pool.cache().evictions();
  if (offload) run.kv_blocks_offloaded = pool.tiers()->offloaded();
  return run;
}

}  // namespace detail

}  // namespace chalk::sim
