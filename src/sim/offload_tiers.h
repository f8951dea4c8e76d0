// The host DRAM and SSD tiers behind a replica's HBM prefix cache (kv_offload.h;
// docs/simulator.md 1.8): blocks named by their chain hash, LRU in each tier, each block in
// one tier at a time (exclusive: a block fetched back to HBM leaves its tier, and returns
// to host DRAM when HBM evicts it again, as KVBM's G1 -> G2 -> G3 offload on eviction).
// Private to src/sim (kv_pool.h).
#pragma once

#include <cstdint>
#include <list>
#include <unordered_map>

namespace chalk::sim::detail {

/// Which tier holds a block.
enum class Tier : int8_t { none = -1, host = 0, ssd = 1 };

class OffloadTiers {
 public:
  /// Capacities in blocks (0: the tier is absent; blocks go past it).
  OffloadTiers(int64_t host_blocks, int64_t ssd_blocks);
  /// A block HBM evicted: to host DRAM's most recent end; host DRAM's least recent block,
  /// when over capacity, to SSD's; SSD's least recent, when over capacity, dropped. A block
  /// already in a tier (a copy recomputed in HBM while the old one sat below) moves to the
  /// host's most recent end.
  void demote(uint64_t hash);
  Tier find(uint64_t hash) const;
  /// Takes the block out of its tier (fetched back to HBM). Absent: nothing.
  void remove(uint64_t hash);
  int64_t size(Tier t) const { return static_cast<int64_t>(tiers_[static_cast<int>(t)].lru.size()); }
  int64_t offloaded() const { return offloaded_; }  ///< blocks HBM evicted into the tiers
  int64_t dropped() const { return dropped_; }      ///< blocks the last tier evicted

 private:
  struct Lru {
    int64_t capacity = 0;
    std::list<uint64_t> lru;  ///< front: least recent
    std::unordered_map<uint64_t, std::list<uint64_t>::iterator> at;
  };
  void push(int k, uint64_t hash);
  Lru tiers_[2];
  int64_t offloaded_ = 0, dropped_ = 0;
};

}  // namespace chalk::sim::detail
