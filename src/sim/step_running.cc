// A step's pass over the running requests, in admission order (step_loop.h).
#include <algorithm>

#include "step_loop.h"

namespace chalk::sim::detail {

void StepLoop::preempt(const Running& r) {
  const int32_t i = r.id;
  auto& L = live[i];
  pool.release(L.kv);
  L.kv_tokens = 0;
  L.generated = r.generated;
  L.last_token_s = r.last_token_s;
  ranks.drop(live[i].rank);
  L.upstream_prefilled = false;  // its KV is gone: recompute prompt and generated tokens here
  L.prefill_target = requests[i].input_tokens + L.generated;
  ++run.requests[i].preemptions;
  ++run.preemptions;
}

// Out of line (step_loop.h): inlined in the event loop, its counters lived on the stack (too
// few registers) and each iteration waited on its own stores (perf annotate).
StepLoop::Scheduled StepLoop::schedule_running(int64_t budget) {
  int64_t context_sum = 0, prefill_tokens = 0;
  bool preempted = false;
  // The loop's invariants and the decodes' lists as locals (each running request adds at
  // most one decode): through `this`, each was loaded again after every store.
  const int64_t q = verify, tokens_per_block = block;
  const bool ranked = dp, adapters = lora.on();
  const auto blocks = [tokens_per_block, p2 = pow2, sh = shift](int64_t tokens) {
    return p2 ? (tokens + tokens_per_block - 1) >> sh : (tokens + tokens_per_block - 1) / tokens_per_block;  // blocks_for
  };
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
}

}  // namespace chalk::sim::detail
