// The data-parallel attention ranks of one replica in the simulator's event loop
// (simulator.cc): where an admitted request lives, and each rank's share of a step's
// token budget. Private to src/sim.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace chalk::sim::detail {

/// The ranks of a replica whose attention runs data-parallel (n_chips / tp_attention of
/// them; 1 without mechanisms). A request admitted goes to the rank holding the fewest
/// admitted requests (ties: the lowest), as SGLang's and vLLM's DP coordinators balance
/// load, and stays there (its KV is there) until it finishes or is preempted. Each rank
/// schedules its prefill chunks with its share of the step's budget, ceil(max_batched_tokens
/// / ranks) tokens (docs/simulator.md 1.2: SGLang's server_args.py divides
/// chunked_prefill_size by dp_size; vLLM runs a Scheduler per rank). Whole prompts
/// (chunked prefill off) take the replica's budget: SGLang divides only the chunk size.
class RankBudgets {
 public:
  /// `ranks` >= 1, `max_batched_tokens` the replica's step budget (tokens).
  RankBudgets(int64_t ranks, int64_t max_batched_tokens, bool chunked_prefill)
      : max_batched_tokens_(max_batched_tokens),
        share_((max_batched_tokens + ranks - 1) / ranks),
        per_rank_(ranks > 1 && chunked_prefill),
        on_rank_(static_cast<std::size_t>(ranks), 0),
        left_(static_cast<std::size_t>(ranks), share_) {}

  /// The rank the next admitted request goes to: the fewest admitted, the lowest on ties.
  int32_t next() const { return static_cast<int32_t>(std::min_element(on_rank_.begin(), on_rank_.end()) - on_rank_.begin()); }
  /// Admits one request to next(), returning its rank.
  int32_t take() {
    const int32_t r = next();
    ++on_rank_[static_cast<std::size_t>(r)];
    return r;
  }
  /// A request leaves rank `rank` (finished or preempted); `rank` becomes -1 (none).
  void drop(int32_t& rank) {
    if (rank >= 0) --on_rank_[static_cast<std::size_t>(rank)];
    rank = -1;
  }
  /// A new step: every rank has its whole share again.
  void begin_step() { std::fill(left_.begin(), left_.end(), share_); }
  /// Tokens rank `r` may still schedule this step (the replica's budget when the budget
  /// is not split, or for r < 0: not yet admitted).
  int64_t budget(int32_t r) const { return per_rank_ && r >= 0 ? left_[static_cast<std::size_t>(r)] : max_batched_tokens_; }
  /// Rank `r` schedules `tokens` tokens this step (its budget floors at 0).
  void spend(int32_t r, int64_t tokens) {
    if (per_rank_ && r >= 0) left_[static_cast<std::size_t>(r)] = std::max<int64_t>(0, left_[static_cast<std::size_t>(r)] - tokens);
  }

 private:
  int64_t max_batched_tokens_;
  int64_t share_;
  bool per_rank_;
  std::vector<int64_t> on_rank_;  ///< admitted requests per rank
  std::vector<int64_t> left_;     ///< budget left per rank this step
};

}  // namespace chalk::sim::detail
