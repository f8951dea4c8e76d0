// Bulk decodes (step_loop.h, StepLoop::bulk; docs/simulator.md 5): the running pass of a
// replica whose plain decodes the engine step prices through their count and context sum,
// with the quiet ones counted rather than visited.
//
// A quiet request takes its common token every step (schedule_running's fold: not its
// first, not its last, one step after the previous, within the blocks it holds), so its
// state at step T is its state when it was parked plus the steps since: it is parked with
// kv_tokens and generated minus that step (Running::due), and `quiet` and
// `quiet_context_sum` count it. Its next visit is at the step it is due (a new block, or
// its last token), earlier only when the step's budget runs out before it or a preemption
// takes it. Everything the pass decides in order (the budget at each place, the blocks, the
// victims from the back) is decided at the same places as schedule_running's: the quiet
// requests between two visited ones take one budget token each, counted at the next visit.
#include <algorithm>

#include "chalk/engine/roofline.h"
#include "step_loop.h"

namespace chalk::sim::detail {

bool bulk_decodes(const Deployment& d, int64_t verify, bool caching, int64_t dp_ranks, int64_t pp, bool adapters) {
  if (verify != 1 || caching || dp_ranks != 1 || pp != 1 || adapters) return false;
  if (d.mechanisms.enabled && d.mechanisms.layout.kv_sharded_by_batch) return false;
  return std::all_of(d.attention.begin(), d.attention.end(), [](const Deployment::AttentionGroup& g) { return g.window == 0 && g.reach == 0; });
}

void StepLoop::wake(Running& R, double last_token_s) {
  R.kv_tokens += tick;
  R.generated += tick;
  R.last_token_s = last_token_s;
  R.due = 0;
  --quiet;
  quiet_context_sum -= R.kv_tokens;
}

StepLoop::Scheduled StepLoop::schedule_bulk(int64_t budget) {
  int64_t context_sum = 0, prefill_tokens = 0, decodes = 0;
  bool preempted = false;
  const int64_t now = tick;
  const double start = t;
  int32_t* const owner = decode_owner.room(running.size());
  std::size_t owned = 0;
  std::size_t from = 0;       // the first quiet place not yet counted against the budget
  std::size_t reached = 0;    // the first place the pass did not reach
  bool stopped = false;
  for (std::size_t k = 0;; ++k) {
    {
      // The quiet requests up to the next one to visit, counted at that visit: a loop with no
      // store, its bounds in registers (the list moves only at a preemption, below).
      const Running* const rs = running.empty() ? nullptr : &running[0];
      const std::size_t size = running.size();
      while (k < size && rs[k].due > now) ++k;
      if (k >= size) break;
    }
    // The quiet requests in [from, k) took one token each while the budget lasted.
    const auto skipped = static_cast<int64_t>(k - from);
    if (budget <= skipped) {
      reached = from + static_cast<std::size_t>(budget);
      budget = 0;
      stopped = true;
      break;
    }
    budget -= skipped;
    Running& R = running[k];
    if (R.due > 0) wake(R, kTokenAtStepStart);  // due this step
    const int32_t i = R.id;
    if (R.last_token_s == kTokenAtStepStart) R.last_token_s = start;
    const bool prefilling = R.prefill_target > 0;
    // One rank: a chunk's rank budget is the replica's (RankBudgets), never spent out.
    const int64_t want = prefilling ? std::min({R.prefill_target - R.kv_tokens, budget, ranks.budget(R.rank)}) : 1;
    const int64_t need = std::max<int64_t>(0, blocks_for(R.kv_tokens + want) - R.held);
    bool self = false;
    while (need > pool.available()) {
      Running& back = running.back();
      if (back.due > 0) wake(back, kTokenAtStepStart);
      const Running victim = back;
      running.pop_back();
      preempt(victim);
      waiting.push_front(victim.id);
      preempted = true;
      if (victim.id == i) {
        self = true;
        break;
      }
    }
    if (self) {
      reached = from = k;  // nothing at or after k is left
      stopped = true;
      break;
    }
    if (need > 0) {  // without the prefix cache a running request's blocks are R.held (step_running.cc)
      pool.take(need);
      R.held += need;
    }
    budget -= want;
    if (prefilling) {
      chunks.push_back({want, R.kv_tokens});
      chunk_owner.push_back(static_cast<int32_t>(k));
      prefill_tokens += want;
    } else {
      owner[owned++] = static_cast<int32_t>(k);
      ++decodes;
      context_sum += R.kv_tokens;
    }
    from = k + 1;
    if (budget <= 0) {
      reached = from;
      stopped = true;
      break;
    }
  }
  if (!stopped) {
    // The quiet requests after the last visit, while the budget lasts.
    const auto skipped = static_cast<int64_t>(running.size() - from);
    reached = budget < skipped ? from + static_cast<std::size_t>(std::max<int64_t>(budget, 0)) : running.size();
    budget -= std::min(budget, skipped);
  }
  // Those the pass did not reach keep their token's time: the previous step's end (a quiet
  // one is woken: it took no token).
  for (std::size_t j = reached; j < running.size(); ++j) {
    Running& R = running[j];
    if (R.due > 0) {
      wake(R, start);
    } else if (R.last_token_s == kTokenAtStepStart) {
      R.last_token_s = start;
    }
  }
  decode_owner.added(owned);
  // The quiet requests all took their common token (schedule_running's fold).
  folded_steady = static_cast<int32_t>(quiet);
  return Scheduled{budget, context_sum + quiet_context_sum, prefill_tokens, preempted, decodes + quiet};
}

void StepLoop::park(double end) {
  quiet_context_sum += quiet;  // each quiet request's token
  const int64_t now = ++tick;
  const int64_t tokens_per_block = block;
  const auto join = [&](int32_t place) {
    Running& R = running[static_cast<std::size_t>(place)];
    // Its next token a common one (schedule_running's fold) within its blocks.
    if (R.prefill_target > 0 || R.generated < 1 || R.generated + 1 >= R.output || R.last_token_s != end || R.kv_tokens + 1 > R.held * tokens_per_block) return;
    R.due = now + std::min(R.held * tokens_per_block - R.kv_tokens, R.output - 1 - R.generated);
    ++quiet;
    quiet_context_sum += R.kv_tokens;
    R.kv_tokens -= now;
    R.generated -= now;
  };
  for (const int32_t p : decode_owner) join(p);
  for (const int32_t p : chunk_owner) join(p);
}

}  // namespace chalk::sim::detail
