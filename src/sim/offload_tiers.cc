// Host DRAM and SSD tiers behind the HBM prefix cache (offload_tiers.h).
#include "offload_tiers.h"

namespace chalk::sim::detail {

OffloadTiers::OffloadTiers(int64_t host_blocks, int64_t ssd_blocks) {
  tiers_[0].capacity = host_blocks;
  tiers_[1].capacity = ssd_blocks;
}

void OffloadTiers::push(int k, uint64_t hash) {
  if (k > 1) {
    ++dropped_;
    return;
  }
  Lru& t = tiers_[k];
  if (t.capacity <= 0) {
    push(k + 1, hash);
    return;
  }
  t.lru.push_back(hash);
  t.at[hash] = std::prev(t.lru.end());
  if (static_cast<int64_t>(t.lru.size()) > t.capacity) {
    const uint64_t old = t.lru.front();
    t.lru.pop_front();
    t.at.erase(old);
    push(k + 1, old);
  }
}

void OffloadTiers::demote(uint64_t hash) {
  remove(hash);
  ++offloaded_;
  push(0, hash);
}

Tier OffloadTiers::find(uint64_t hash) const {
  for (int k = 0; k < 2; ++k) {
    if (tiers_[k].at.count(hash) != 0) return static_cast<Tier>(k);
  }
  return Tier::none;
}

void OffloadTiers::remove(uint64_t hash) {
  for (auto& t : tiers_) {
    const auto it = t.at.find(hash);
    if (it == t.at.end()) continue;
    t.lru.erase(it->second);
    t.at.erase(it);
    return;
  }
}

}  // namespace chalk::sim::detail
