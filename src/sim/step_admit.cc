// A step's admission of waiting requests, first come first served (step_loop.h).
#include <algorithm>
#include <utility>

#include "prefix_cache.h"
#include "step_loop.h"

namespace chalk::sim::detail {

void StepLoop::admit_waiting(Scheduled& s) {
  int64_t& budget = s.budget;
  for (std::size_t w = 0; !s.preempted && w < waiting.size() && budget > 0 && static_cast<int64_t>(running.size()) < pol.max_sequences;) {
    const int32_t i = waiting[w];
    if (!lora.admits(requests[i].adapter) && ++w) continue;
    auto& L = live[i];
    const auto place = static_cast<int32_t>(running.size());  // where it joins the running list
    // reserve_to_completion: admission takes the blocks of the request's whole life.
    const int64_t life = blocks_for(phase == Phase::prefill ? requests[i].input_tokens : requests[i].input_tokens + requests[i].output_tokens - 1);
    if (L.upstream_prefilled) {
      const int64_t need = pol.reserve_to_completion ? std::max(life, blocks_for(requests[i].input_tokens + verify)) : blocks_for(requests[i].input_tokens + verify);
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
      if (!bulk) decode_ctx.push_back(L.kv_tokens);
      ++s.decodes;
      decode_owner.push_back(place);
      if (dp) decode_rank.push_back(L.rank);
      s.context_sum += L.kv_tokens;
    } else {
      // Prefix caching: the longest run of its first blocks in the cache, whole blocks within
      // all its tokens but the last (which must be computed for the logits: vLLM's
      // get_computed_blocks looks up at most num_tokens - 1 tokens).
      std::vector<int32_t> hits;
      uint64_t hit_hash = 0;
      int64_t pinned = 0;  // hits that no running request references: admission takes them off the LRU list
      if (caching) {
        hits = longest_cached_prefix(pool.cache(), requests[i], own(i), (L.prefill_target - 1) / block, block, &hit_hash);
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
        if (!(s.decodes == 0 && chunks.empty())) break;
        want = left;
      }
      const int64_t need =
          (pol.reserve_to_completion ? std::max(life, blocks_for(start + want)) : blocks_for(start + want)) - static_cast<int64_t>(hits.size());
      if (need > pool.available() - pinned) break;
      for (const int32_t h : hits) pool.cache().ref(h);
      L.kv.cached = std::move(hits);
      L.kv.chain = hit_hash;
      L.kv_tokens = start;
      if (offload) {
        step_fetch_s += admit_fetch(pool, L.kv, need, fetch, !L.started, run);
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
      s.prefill_tokens += want;
    }
    if (!L.started) {
      L.started = true;
      run.requests[i].scheduled_s = t;
    }
    waiting.erase(waiting.begin() + static_cast<std::ptrdiff_t>(w));
    running.push_back({L.kv_tokens, L.kv.held(), L.prefill_target, L.generated, L.output, L.last_token_s, i, L.rank, 0});
  }
}

}  // namespace chalk::sim::detail
