// The prefix cache's block hashes and LRU (prefix_cache.h).
#include "prefix_cache.h"

#include <algorithm>

namespace chalk::sim::detail {
namespace {

/// splitmix64's finalizer (Steele, Lea and Flood 2014) over h and v: one 64-bit word per
/// fact. Collisions: 2^-64 a pair of blocks.
uint64_t mix(uint64_t h, uint64_t v) {
  uint64_t z = h ^ (v + 0x9E37'79B9'7F4A'7C15ull + (h << 6) + (h >> 2));
  z = (z ^ (z >> 30)) * 0xBF58'476D'1CE4'E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D0'49BB'1331'11EBull;
  return z ^ (z >> 31);
}

constexpr uint64_t own_salt = 0x0A11'CE00'0000'0000ull;

}  // namespace

namespace {
/// Block j's hash from segment `first` on (which starts at token `start`, every earlier
/// segment ending at or before the block's first token).
uint64_t hash_from(uint64_t parent, const Request& q, uint64_t own, int64_t j, int64_t b, std::size_t first, int64_t start) {
  const int64_t lo = j * b, hi = lo + b;
  uint64_t h = mix(parent, static_cast<uint64_t>(j));
  for (std::size_t k = first; k < q.prefix.size(); ++k) {
    const auto& s = q.prefix[k];
    const int64_t end = start + s.tokens;
    if (end > lo && start < hi) {
      h = mix(mix(mix(h, s.id), static_cast<uint64_t>(std::max(lo, start) - start)), static_cast<uint64_t>(std::min(hi, end) - start));
    }
    start = end;
    if (start >= hi) return h;
  }
  return mix(h, own_salt ^ own);  // the request's own tokens fill the rest of the block
}
}  // namespace

uint64_t block_hash(uint64_t parent, const Request& q, uint64_t own, int64_t j, int64_t b) { return hash_from(parent, q, own, j, b, 0, 0); }

uint64_t BlockHasher::hash(uint64_t parent, int64_t j) {
  // Segments that end at or before this block's first token cover none of it, nor of any
  // later block: skip them for good.
  while (seg_ < q_.prefix.size() && seg_start_ + q_.prefix[seg_].tokens <= j * b_) seg_start_ += q_.prefix[seg_++].tokens;
  return hash_from(parent, q_, own_, j, b_, seg_, seg_start_);
}

std::size_t PrefixCache::probe(uint64_t hash) const {
  const std::size_t mask = keys_.size() - 1;
  std::size_t i = static_cast<std::size_t>(hash) & mask;
  while (vals_[i] != -1 && !(vals_[i] >= 0 && keys_[i] == hash)) i = (i + 1) & mask;
  return i;
}

void PrefixCache::grow() {
  std::vector<uint64_t> keys = std::move(keys_);
  std::vector<int32_t> vals = std::move(vals_);
  const std::size_t n = std::max<std::size_t>(64, 4 * static_cast<std::size_t>(live_ + 1));
  std::size_t cap = 64;
  while (cap < n) cap *= 2;
  keys_.assign(cap, 0);
  vals_.assign(cap, -1);
  used_ = live_;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (vals[i] < 0) continue;
    const std::size_t j = probe(keys[i]);
    keys_[j] = keys[i];
    vals_[j] = vals[i];
  }
}

int32_t PrefixCache::find(uint64_t hash) const {
  if (keys_.empty()) return -1;
  const std::size_t i = probe(hash);
  return vals_[i] >= 0 ? vals_[i] : -1;
}

int32_t PrefixCache::insert(uint64_t hash) {
  int32_t s;
  if (!free_slots_.empty()) {
    s = free_slots_.back();
    free_slots_.pop_back();
  } else {
    s = static_cast<int32_t>(slots_.size());
    slots_.emplace_back();
  }
  slots_[static_cast<std::size_t>(s)] = Slot{hash, 1, -1, -1};
  if (2 * (used_ + 1) > static_cast<int64_t>(keys_.size())) grow();
  const std::size_t i = probe(hash);
  keys_[i] = hash;
  vals_[i] = s;
  ++live_;
  ++used_;
  return s;
}

void PrefixCache::unlink(int32_t s) {
  Slot& x = slots_[static_cast<std::size_t>(s)];
  (x.prev >= 0 ? slots_[static_cast<std::size_t>(x.prev)].next : head_) = x.next;
  (x.next >= 0 ? slots_[static_cast<std::size_t>(x.next)].prev : tail_) = x.prev;
  x.prev = x.next = -1;
  --evictable_;
}

void PrefixCache::ref(int32_t s) {
  if (slots_[static_cast<std::size_t>(s)].refs++ == 0) unlink(s);
}

void PrefixCache::unref(int32_t s) {
  Slot& x = slots_[static_cast<std::size_t>(s)];
  if (--x.refs > 0) return;
  x.prev = tail_;
  x.next = -1;
  (tail_ >= 0 ? slots_[static_cast<std::size_t>(tail_)].next : head_) = s;
  tail_ = s;
  ++evictable_;
}

bool PrefixCache::evict_lru() {
  if (head_ < 0) return false;
  const int32_t s = head_;
  unlink(s);
  last_evicted_ = slots_[static_cast<std::size_t>(s)].hash;
  vals_[probe(last_evicted_)] = -2;  // a tombstone keeps later cells of its run reachable
  --live_;
  free_slots_.push_back(s);
  ++evictions_;
  return true;
}

std::vector<int32_t> longest_cached_prefix(const PrefixCache& cache, const Request& q, uint64_t own, int64_t max_blocks, int64_t b,
                                           uint64_t* last_hash) {
  std::vector<int32_t> hits;
  uint64_t h = 0;
  BlockHasher hasher(q, own, b);
  for (int64_t j = 0; j < max_blocks; ++j) {
    const uint64_t next = hasher.hash(h, j);
    const int32_t s = cache.find(next);
    if (s < 0) break;
    hits.push_back(s);
    h = next;
  }
  if (last_hash != nullptr) *last_hash = h;
  return hits;
}

}  // namespace chalk::sim::detail
