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

uint64_t block_hash(uint64_t parent, const Request& q, uint64_t own, int64_t j, int64_t b) {
  const int64_t lo = j * b, hi = lo + b;
  uint64_t h = mix(parent, static_cast<uint64_t>(j));
  int64_t start = 0;
  for (const auto& s : q.prefix) {
    const int64_t end = start + s.tokens;
    if (end > lo && start < hi) {
      h = mix(mix(mix(h, s.id), static_cast<uint64_t>(std::max(lo, start) - start)), static_cast<uint64_t>(std::min(hi, end) - start));
    }
    start = end;
    if (start >= hi) return h;
  }
  return mix(h, own_salt ^ own);  // the request's own tokens fill the rest of the block
}

int32_t PrefixCache::find(uint64_t hash) const {
  const auto it = map_.find(hash);
  return it == map_.end() ? -1 : it->second;
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
  map_.emplace(hash, s);
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
  map_.erase(slots_[static_cast<std::size_t>(s)].hash);
  free_slots_.push_back(s);
  ++evictions_;
  return true;
}

std::vector<int32_t> longest_cached_prefix(const PrefixCache& cache, const Request& q, uint64_t own, int64_t max_blocks, int64_t b,
                                           uint64_t* last_hash) {
  std::vector<int32_t> hits;
  uint64_t h = 0;
  for (int64_t j = 0; j < max_blocks; ++j) {
    const uint64_t next = block_hash(h, q, own, j, b);
    const int32_t s = cache.find(next);
    if (s < 0) break;
    hits.push_back(s);
    h = next;
  }
  if (last_hash != nullptr) *last_hash = h;
  return hits;
}

}  // namespace chalk::sim::detail
