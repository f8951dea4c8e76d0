// The prefix cache of KV blocks (docs/simulator.md, "Prefix caching"): blocks named by
// the hash of their token chain, as vLLM's automatic prefix caching names them
// (vllm/v1/core/kv_cache_utils.py, hash_block_tokens: a block's hash covers its parent's
// hash and its own tokens); reference counts; LRU eviction of unreferenced blocks
// (vllm/v1/core/block_pool.py: freed blocks join the free queue's tail, the head is
// evicted first, a request's blocks freed tail first). Private to src/sim.
#pragma once

#include <cstdint>
#include <vector>

#include "chalk/sim/traffic.h"

namespace chalk::sim::detail {

/// Hash of block j (tokens [j b, (j+1) b)) of request `q`'s token sequence (prompt, then
/// answer), given the hash of block j-1 (`parent`; 0 for block 0). The block's tokens are
/// named by the pieces of q.prefix's segments they cover (segment id, first and last
/// offset) and, past the segments, by `own` (unique to the request in its run). The same
/// segments at the same positions after the same parent give the same hash.
uint64_t block_hash(uint64_t parent, const Request& q, uint64_t own, int64_t j, int64_t b);

/// block_hash over one request's blocks in increasing order, each in O(1) amortised: it
/// keeps the first segment that can still overlap the next block, where block_hash walks
/// q.prefix from its start for every block (a multi-turn session's history holds a segment
/// per turn, so that walk cost O(blocks x turns) per request). hash(parent, j) equals
/// block_hash(parent, q, own, j, b) for j not below the previous call's j.
class BlockHasher {
 public:
  BlockHasher(const Request& q, uint64_t own, int64_t b) : q_(q), own_(own), b_(b) {}
  uint64_t hash(uint64_t parent, int64_t j);

 private:
  const Request& q_;
  uint64_t own_;
  int64_t b_;
  std::size_t seg_ = 0;    ///< the first segment whose end is past the last block's start
  int64_t seg_start_ = 0;  ///< its first token
};

/// Cached blocks: a hash map from block hash to slot, a reference count per slot, and an
/// intrusive LRU list of the unreferenced ones (front: evicted first). O(1) per operation.
class PrefixCache {
 public:
  /// The slot holding `hash`, or -1.
  int32_t find(uint64_t hash) const;
  /// A new slot for `hash` (absent), referenced once.
  int32_t insert(uint64_t hash);
  /// One more reference; an unreferenced slot leaves the LRU list.
  void ref(int32_t slot);
  /// One reference less; at none the slot joins the LRU list's back (most recent).
  void unref(int32_t slot);
  int32_t refs(int32_t slot) const { return slots_[static_cast<std::size_t>(slot)].refs; }
  /// Drops the least recently used unreferenced block; false when there is none.
  bool evict_lru();
  /// The hash of the block evict_lru last dropped (for the offload tiers, kv_pool.h).
  uint64_t last_evicted() const { return last_evicted_; }
  int64_t size() const { return live_; }
  int64_t evictable() const { return evictable_; }
  int64_t evictions() const { return evictions_; }

 private:
  struct Slot {
    uint64_t hash = 0;
    int32_t refs = 0, prev = -1, next = -1;
  };
  void unlink(int32_t s);
  /// The hash -> slot index: open addressing with linear probing over a power-of-two table
  /// at most half full (live entries and tombstones), the hashes already mixed (splitmix64)
  /// so their low bits index it. std::unordered_map's node per entry cost about 450 ns a
  /// block in a 100,000-request run (bench/bench_sim.cc).
  std::size_t probe(uint64_t hash) const;  ///< the cell holding `hash`, or the empty cell that ends its run
  void grow();
  std::vector<uint64_t> keys_;
  std::vector<int32_t> vals_;    ///< slot per cell; -1 empty, -2 tombstone
  int64_t live_ = 0, used_ = 0;  ///< cells holding a hash; holding a hash or a tombstone
  std::vector<Slot> slots_;
  std::vector<int32_t> free_slots_;
  int32_t head_ = -1, tail_ = -1;
  int64_t evictable_ = 0, evictions_ = 0;
  uint64_t last_evicted_ = 0;
};

/// The longest run of `q`'s first blocks found in `cache`, at most `max_blocks`: their
/// slots in order, and the hash of the last (0 when none).
std::vector<int32_t> longest_cached_prefix(const PrefixCache& cache, const Request& q, uint64_t own, int64_t max_blocks, int64_t b,
                                           uint64_t* last_hash = nullptr);

}  // namespace chalk::sim::detail
