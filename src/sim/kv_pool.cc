// A replica's KV blocks and the prefix cache over them (kv_pool.h).
#include "kv_pool.h"

#include <fmt/format.h>

#include <cmath>

#include "chalk/base/error.h"

namespace chalk::sim::detail {

void KvPool::take(int64_t k) {
  while (free_ < k && cache_.evict_lru()) {
    ++free_;
    if (tiers_) tiers_->demote(cache_.last_evicted());
  }
  free_ -= k;
}

void KvPool::enable_offload(int64_t host_blocks, int64_t ssd_blocks, double host_s_per_block, double ssd_s_per_block, double bytes_per_block,
                            int64_t block_tokens) {
  tiers_ = std::make_unique<OffloadTiers>(host_blocks, ssd_blocks);
  host_s_ = host_s_per_block;
  ssd_s_ = ssd_s_per_block;
  bytes_per_block_ = bytes_per_block;
  block_tokens_ = block_tokens;
}

void KvPool::lower_run(const Request& q, uint64_t own, int64_t from, uint64_t parent, int64_t max_blocks, int64_t block, TierFetch& out) const {
  out.hashes.clear();
  out.host = out.ssd = 0;
  out.last = 0;
  if (!tiers_) return;
  BlockHasher hasher(q, own, block);
  for (int64_t j = from; j < max_blocks; ++j) {
    const uint64_t h = hasher.hash(parent, j);
    const Tier t = tiers_->find(h);
    if (t == Tier::none || cache_.find(h) >= 0) break;
    out.hashes.push_back(h);
    ++(t == Tier::host ? out.host : out.ssd);
    out.last = parent = h;
  }
}

double KvPool::admit(KvHolding& h, int64_t need, const TierFetch& f) {
  for (const uint64_t x : f.hashes) tiers_->remove(x);
  take(need);
  h.blocks = need;
  for (const uint64_t x : f.hashes) {
    h.cached.push_back(cache_.insert(x));
    --h.blocks;
  }
  if (!f.hashes.empty()) h.chain = f.last;
  return static_cast<double>(f.host) * host_s_ + static_cast<double>(f.ssd) * ssd_s_;
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

bool enable_offload(KvPool& pool, const Deployment& d, const KvOffload& o, int64_t block, SimRun& run) {
  for (const auto& [name, v] : {std::pair{"host", o.host_gb}, {"ssd", o.ssd_gb}, {"host-bw", o.host_gb_per_s}, {"ssd-bw", o.ssd_gb_per_s}}) {
    if (!(std::isfinite(v) && v >= 0)) throw InputError("kv_offload", fmt::format("{} must be a number >= 0, got {:g}", name, v));
  }
  if (!o.enabled()) return false;
  const double per_block = memory_plan(d, 1, block).kv_cache.value();
  if (!(per_block > 0)) return false;
  const KvOffloadRates r = kv_offload_rates(d.system, o);
  run.kv_offload = true;
  run.offload_rates = r;
  run.offload_host_blocks = static_cast<int64_t>(std::floor(o.host_gb * 1e9 / per_block));
  run.offload_ssd_blocks = static_cast<int64_t>(std::floor(o.ssd_gb * 1e9 / per_block));
  pool.enable_offload(run.offload_host_blocks, run.offload_ssd_blocks, kv_fetch_seconds(1, per_block, d.n_chips, r.host_bytes_per_s),
                      kv_fetch_seconds(1, per_block, d.n_chips, r.ssd_bytes_per_s), per_block, block);
  return true;
}

double admit_fetch(KvPool& pool, KvHolding& h, int64_t need, const TierFetch& f, bool first, SimRun& run) {
  const double s = pool.admit(h, need, f);
  run.kv_fetched_bytes += static_cast<double>(f.size()) * pool.bytes_per_block_;
  run.kv_fetch_s += s;
  if (first) {
    run.offload_host_tokens += f.host * pool.block_tokens_;
    run.offload_ssd_tokens += f.ssd * pool.block_tokens_;
  }
  return s;
}

}  // namespace chalk::sim::detail
