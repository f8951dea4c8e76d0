// A step's pass over the running requests, in admission order (step_loop.h).
#include <algorithm>

#include "step_loop.h"

namespace chalk::sim::detail {

void StepLoop::preempt(const Running& r) {
  const int32_t i = r.id;
  auto& L = live[i];
  if (!caching) L.kv.blocks = r.held;  // kept in the running list only (schedule_running)
  pool.release(L.kv);
  L.kv_tokens = 0;
  L.generated = r.generated;
  L.last_token_s = r.last_token_s == kTokenAtStepStart ? t : r.last_token_s;
  ranks.drop(live[i].rank);
  L.upstream_prefilled = false;  // its KV is gone: recompute prompt and generated tokens here
  L.prefill_target = requests[i].input_tokens + L.generated;
  ++run.requests[i].preemptions;
  ++run.preemptions;
}

namespace {

/// The running pass's counters while it takes a run of decodes within their blocks.
struct DecodeRun {
  int64_t budget, context_sum;
  std::size_t decodes, owned;
  int32_t steady;
};

/// What that run writes: the running list, the step's decode contexts and owners, the
/// ranks' shares; the step's start and the block size.
struct DecodeLists {
  Running* rs;
  int64_t* ctx;
  int32_t* owner;
  RankBudgets& ranks;
  StepList<int32_t>& decode_rank;
  double start;
  int64_t tokens_per_block;
};

/// From place k of `size`, the decodes whose `q` tokens fit the blocks they hold, in order,
/// while the budget lasts; returns the first place not taken (step_loop.h,
/// schedule_running). kRanked: data-parallel ranks keep shares; kFold (q = 1, no prefix
/// cache): a decode's common token is taken here (Running::last_token_s). One copy per
/// case, so that the loop tests neither per request: the two flags tested in the loop
/// cost about as much as the emit pass the fold removes (cachegrind, bench_sim).
template <bool kRanked, bool kFold>
[[gnu::always_inline]] inline std::size_t decodes_within_blocks(const DecodeLists& l, std::size_t k, std::size_t size, int64_t q, DecodeRun& a) {
  int64_t budget = a.budget, context_sum = a.context_sum;
  std::size_t decodes = a.decodes, owned = a.owned;
  int32_t steady = a.steady;
  const double start = l.start;
  for (; k < size && budget > 0; ++k) {
    Running& R = l.rs[k];
    const int64_t kv = R.kv_tokens;
    if (R.prefill_target > 0 || kv + q > R.held * l.tokens_per_block) break;
    budget -= q;
    if constexpr (kRanked) {
      l.ranks.spend(R.rank, q);
      l.decode_rank.push_back(R.rank);
    }
    l.ctx[decodes++] = kv;
    context_sum += kv;
    if constexpr (kFold) {
      // emit_tokens' common token (not a first one, not the last, one step after the
      // previous token) taken now: nothing this step reads it again.
      const int64_t generated = R.generated + 1;
      const double last = R.last_token_s;
      if (generated != 1 && generated < R.output && (last == kTokenAtStepStart || last == start)) [[likely]] {
        R.kv_tokens = kv + 1;
        R.generated = generated;
        R.last_token_s = kTokenAtStepStart;
        ++steady;
        continue;
      }
      if (last == kTokenAtStepStart) R.last_token_s = start;
    }
    l.owner[owned++] = static_cast<int32_t>(k);
  }
  a = DecodeRun{budget, context_sum, decodes, owned, steady};
  return k;
}

}  // namespace

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
  std::size_t decodes = 0, owned = 0;
  // Plain decodes (one token, no prefix cache): the common token's outcome is known here
  // (folded: see Running::last_token_s), so emit_tokens passes over the others only.
  const bool fold = q == 1 && !caching;
  const double start = t;
  int32_t steady = 0;
  std::size_t k = 0;
  for (; k < running.size() && budget > 0; ++k) {
    if (!adapters && pool.available() >= 0) {
      // The common case first: a run of decodes whose tokens fit the blocks they hold
      // (need 0: kv_tokens + q <= held x block), which the general path below would take
      // with no preemption, no block and no adapter to count. Same order, same budget,
      // same rank shares; a request that needs more (a chunk, a new block) goes the
      // general way.
      const std::size_t size = running.size();
      DecodeRun run_state{budget, context_sum, decodes, owned, steady};
      const DecodeLists lists{&running[0], ctx, owner, ranks, decode_rank, start, tokens_per_block};
      if (fold) {
        k = ranked ? decodes_within_blocks<true, true>(lists, k, size, 1, run_state)
                   : decodes_within_blocks<false, true>(lists, k, size, 1, run_state);
      } else {
        k = ranked ? decodes_within_blocks<true, false>(lists, k, size, q, run_state)
                   : decodes_within_blocks<false, false>(lists, k, size, q, run_state);
      }
      budget = run_state.budget;
      context_sum = run_state.context_sum;
      decodes = run_state.decodes;
      owned = run_state.owned;
      steady = run_state.steady;
      if (k >= size || budget <= 0) break;
    }
    Running& R = running[k];
    const int32_t i = R.id;
    if (R.last_token_s == kTokenAtStepStart) R.last_token_s = start;
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
      // Without the prefix cache a running request's own blocks are R.held, written back to
      // its Live when it leaves the list (finish, preempt): the Live record's load here,
      // one per request per block of tokens, missed the cache.
      if (caching) live[i].kv.blocks += need;
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
      ctx[decodes++] = R.kv_tokens;
      owner[owned++] = static_cast<int32_t>(k);
      if (ranked) decode_rank.push_back(R.rank);
      context_sum += R.kv_tokens;
    }
  }
  // Those this step did not reach keep their token's time: the previous step's end.
  for (std::size_t j = k; j < running.size(); ++j) {
    if (running[j].last_token_s == kTokenAtStepStart) running[j].last_token_s = start;
  }
  decode_ctx.added(decodes);
  decode_owner.added(owned);
  folded_steady = steady;
  return Scheduled{budget, context_sum, prefill_tokens, preempted, static_cast<int64_t>(decodes)};
}

}  // namespace chalk::sim::detail
