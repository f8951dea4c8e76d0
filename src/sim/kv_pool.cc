// A replica's KV blocks and the prefix cache over them (kv_pool.h).
#include "kv_pool.h"

namespace chalk::sim::detail {

void KvPool::take(int64_t k) {
  while (free_ < k && cache_.evict_lru()) ++free_;
  free_ -= k;
}

void KvPool::commit(KvHolding& h, const Request& q, uint64_t own, int64_t kv_tokens, int64_t block) {
  const auto full = static_cast<std::size_t>(kv_tokens / block);
  if (h.cached.size() >= full) return;
  BlockHasher hasher(q, own, block);
  while (h.cached.size() < full) {
    const uint64_t hash = hasher.hash(h.chain, static_cast<int64_t>(h.cached.size()));
    int32_t slot = cache_.find(hash);
    if (slot >= 0) {
      cache_.ref(slot);
      ++free_;
    } else {
      slot = cache_.insert(hash);
    }
    --h.blocks;
    h.cached.push_back(slot);
    h.chain = hash;
  }
}

void KvPool::release(KvHolding& h) {
  free_ += h.blocks;
  h.blocks = 0;
  for (auto it = h.cached.rbegin(); it != h.cached.rend(); ++it) cache_.unref(*it);
  h.cached.clear();
  h.chain = 0;
}

}  // namespace chalk::sim::detail
