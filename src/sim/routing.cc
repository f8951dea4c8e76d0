// Routing requests over a pool's replicas: round robin, or SGLang's cache-aware policy
// (cluster.h, Routing; docs/simulator.md, "Routing").
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "chalk/base/error.h"
#include "chalk/sim/cluster.h"
#include "prefix_cache.h"
#include "scheduler.h"

namespace chalk::sim {

std::vector<int64_t> route(const Pool& pool, std::span<const Request> requests) {
  const std::vector<int32_t> order = detail::arrival_order(requests);
  std::vector<int64_t> to(requests.size(), 0);
  const auto n = static_cast<std::size_t>(pool.replicas);
  if (pool.routing == Routing::round_robin || pool.replicas == 1) {
    for (std::size_t j = 0; j < order.size(); ++j) to[static_cast<std::size_t>(order[j])] = static_cast<int64_t>(j % n);
    return to;
  }
  const CacheAwareRouting& c = pool.cache_aware;
  if (!(c.cache_threshold >= 0 && c.cache_threshold <= 1)) {
    throw InputError("cache_threshold", fmt::format("expected a prefix match ratio in [0, 1], got {:.6g}", c.cache_threshold));
  }
  if (c.balance_abs_threshold < 0) {
    throw InputError("balance_abs_threshold", fmt::format("expected requests >= 0, got {}", c.balance_abs_threshold));
  }
  if (!(c.balance_rel_threshold >= 1) || !std::isfinite(c.balance_rel_threshold)) {
    throw InputError("balance_rel_threshold", fmt::format("expected a ratio >= 1, got {:.6g}", c.balance_rel_threshold));
  }
  const int64_t block = pool.options.policy.block_size;
  // The router's view of each replica's cache: the prompts' blocks it sent there, bounded
  // by the replica's KV blocks (least recently sent evicted first).
  const int64_t capacity = pool.options.kv_blocks > 0 ? pool.options.kv_blocks : kv_blocks_available(pool.replica, block);
  std::vector<detail::PrefixCache> tree(n);
  std::vector<int64_t> load(n, 0);
  for (const int32_t i : order) {
    const Request& q = requests[static_cast<std::size_t>(i)];
    const uint64_t own = static_cast<uint64_t>(i) + 1;
    const int64_t blocks = q.input_tokens / block;  // the prompt's whole blocks
    const auto [lo, hi] = std::minmax_element(load.begin(), load.end());
    std::size_t pick = 0;
    if (*hi - *lo > c.balance_abs_threshold && static_cast<double>(*hi) > static_cast<double>(*lo) * c.balance_rel_threshold) {
      pick = static_cast<std::size_t>(lo - load.begin());  // unbalanced: the least loaded
    } else {
      int64_t best = -1;
      for (std::size_t k = 0; k < n; ++k) {
        const auto m = static_cast<int64_t>(detail::longest_cached_prefix(tree[k], q, own, blocks, block).size());
        if (m > best || (m == best && load[k] < load[pick])) best = m, pick = k;
      }
      const double ratio = static_cast<double>(best * block) / static_cast<double>(q.input_tokens);
      if (!(ratio > c.cache_threshold)) {  // no replica holds enough of it: the one with the most room
        pick = 0;
        for (std::size_t k = 1; k < n; ++k) {
          if (tree[k].size() < tree[pick].size()) pick = k;
        }
      }
    }
    to[static_cast<std::size_t>(i)] = static_cast<int64_t>(pick);
    ++load[pick];
    // The prompt's blocks join the chosen replica's tree, most recently used.
    detail::PrefixCache& t = tree[pick];
    uint64_t h = 0;
    std::vector<int32_t> held;
    detail::BlockHasher hasher(q, own, block);
    for (int64_t j = 0; j < blocks; ++j) {
      h = hasher.hash(h, j);
      int32_t s = t.find(h);
      if (s < 0) {
        s = t.insert(h);
      } else {
        t.ref(s);
      }
      held.push_back(s);
    }
    for (auto it = held.rbegin(); it != held.rend(); ++it) t.unref(*it);  // the tail least recent, as the engine frees
    while (t.size() > capacity && t.evict_lru()) {
    }
  }
  return to;
}

}  // namespace chalk::sim
