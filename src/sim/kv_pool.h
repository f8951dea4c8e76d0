// A replica's paged KV blocks with the prefix cache over them (docs/simulator.md 1.2 and
// 1.6): blocks held by running requests, cached blocks that finished or running requests
// computed (shared by reference count), and free ones. Private to src/sim (simulator.cc).
#pragma once

#include <cstdint>
#include <vector>

#include "chalk/sim/traffic.h"
#include "prefix_cache.h"

namespace chalk::sim::detail {

/// The KV blocks one request holds: its own (`blocks`), and the prefix-cache slots of its
/// first whole blocks (`cached`), which it references, the last of them hashed as `chain`.
struct KvHolding {
  int64_t blocks = 0;
  std::vector<int32_t> cached;
  uint64_t chain = 0;
  int64_t held() const { return blocks + static_cast<int64_t>(cached.size()); }
};

/// `total` blocks of `block` tokens each. A block is free, held by one request, or cached
/// (named by its token chain, referenced by the requests whose prefix it is). A request short
/// of blocks first evicts unreferenced cached blocks, least recently used first (vLLM's
/// block pool: freed blocks join the free queue's tail, its head is evicted first).
class KvPool {
 public:
  explicit KvPool(int64_t total) : total_(total), free_(total) {}
  /// Blocks a request may take now: the free ones and the unreferenced cached ones.
  int64_t available() const { return free_ + cache_.evictable(); }
  /// Takes `k` blocks (k <= available()), evicting cached blocks as needed.
  void take(int64_t k);
  /// The whole blocks among the request's first `kv_tokens` tokens join the cache as they
  /// fill (vLLM caches a block once its tokens are computed: KVCacheManager.cache_blocks); a
  /// block another request already computed is shared and the request's copy freed.
  void commit(KvHolding& h, const Request& q, uint64_t own, int64_t kv_tokens, int64_t block);
  /// Frees the request's own blocks and drops its references, tail blocks first so that they
  /// are evicted before the shared head (vLLM's free order).
  void release(KvHolding& h);
  /// Blocks held by requests (neither free nor cached and unreferenced).
  int64_t used() const { return total_ - free_ - cache_.evictable(); }
  /// Blocks neither free nor in the cache: held by a request (0 once every request finished).
  int64_t leaked() const { return total_ - free_ - cache_.size(); }
  const PrefixCache& cache() const { return cache_; }
  PrefixCache& cache() { return cache_; }

 private:
  int64_t total_, free_;
  PrefixCache cache_;
};

}  // namespace chalk::sim::detail
