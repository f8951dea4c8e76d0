// A replica's paged KV blocks with the prefix cache over them (docs/simulator.md 1.2 and
// 1.6): blocks held by running requests, cached blocks that finished or running requests
// computed (shared by reference count), and free ones. Private to src/sim (simulator.cc).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "chalk/sim/simulator.h"
#include "chalk/sim/traffic.h"
#include "offload_tiers.h"
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

/// The blocks after a request's HBM hits that the offload tiers hold, in order (KvPool::
/// lower_run), with the tier of each counted.
struct TierFetch {
  std::vector<uint64_t> hashes;
  int64_t host = 0, ssd = 0;
  uint64_t last = 0;  ///< hash of the last (0 when none)
  int64_t size() const { return static_cast<int64_t>(hashes.size()); }
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

  /// Offload tiers behind the cache (kv_offload.h): capacities in blocks, each block's fetch
  /// time in seconds from host DRAM and from SSD. From then on every block the cache evicts
  /// goes to them (OffloadTiers::demote). Without this call the pool runs as before.
  void enable_offload(int64_t host_blocks, int64_t ssd_blocks, double host_s_per_block, double ssd_s_per_block, double bytes_per_block,
                      int64_t block_tokens);
  const OffloadTiers* tiers() const { return tiers_.get(); }
  /// After the request's first `from` blocks (in HBM, the last hashed `parent`), the run of
  /// blocks the tiers hold, stopping at the first they do not (or that HBM holds), at most
  /// `max_blocks` blocks in all. Reads only. Empty without tiers.
  void lower_run(const Request& q, uint64_t own, int64_t from, uint64_t parent, int64_t max_blocks, int64_t block, TierFetch& out) const;
  /// Admission with a fetch: the fetched blocks leave their tiers, `need` blocks are taken
  /// (evicting, which may demote others), `h.blocks` = need, and each fetched block becomes a
  /// cached slot the request references, appended to h.cached (h.chain their last hash).
  /// Returns the fetch's seconds: host blocks x host_s_per_block + SSD blocks x
  /// ssd_s_per_block (the two share the chip's host link: serial).
  double admit(KvHolding& h, int64_t need, const TierFetch& f);

 private:
  int64_t total_, free_;
  PrefixCache cache_;
  std::unique_ptr<OffloadTiers> tiers_;
  double host_s_ = 0, ssd_s_ = 0;
  friend double admit_fetch(KvPool&, KvHolding&, int64_t, const TierFetch&, bool, SimRun&);
  double bytes_per_block_ = 0;
  int64_t block_tokens_ = 0;
};

/// Sets up the pool's offload tiers for a run on `d` (blocks of `block` tokens): each tier's
/// capacity floor(GB x 1e9 / bytes per block), bytes per block as memory_plan stores a
/// block on the replica's chips, each block's fetch time kv_fetch_seconds(1, ...) at
/// kv_offload_rates(d.system, o); records them in `run`. False (nothing set) when `o` has no
/// tier or the model stores no KV. Throws InputError("kv_offload") for a capacity or rate
/// that is negative or not finite (a caller that fills KvOffload itself).
bool enable_offload(KvPool& pool, const Deployment& d, const KvOffload& o, int64_t block, SimRun& run);
/// KvPool::admit, counting the fetch in `run`: bytes and seconds always, the tiers' tokens
/// when `first` (a request's first admission, as RequestRecord::cached_tokens). Returns the
/// fetch's seconds.
double admit_fetch(KvPool& pool, KvHolding& h, int64_t need, const TierFetch& f, bool first, SimRun& run);

}  // namespace chalk::sim::detail
