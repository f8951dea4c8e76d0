// The collectives of a training step's data-parallel and pipeline traffic, priced on the
// system's links: one point-to-point send, and the hierarchical all-reduce and all-gather over
// ranks spread across scale-up domains (training-and-systems.md 5.1). Private to
// src/training (step.cc); inline, so the step's evaluation keeps them inlined (issue 13's
// plan evaluation within 100 ns, bench/bench_training.cc).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "chalk/base/count_cast.h"
#include "chalk/base/error.h"
#include "chalk/engine/collective.h"

namespace chalk::step_collectives {

using counts::d;

/// One point-to-point send of `bytes` on `link`: the fastest protocol's base latency, one
/// step and the bytes at its bandwidth.
inline double p2p(double bytes, const LinkModel& link) {
  double best = INFINITY;
  for (const auto& pr : link.protocols) {
    best = std::min(best, pr.base_latency.value() + pr.step_latency.value() + bytes / (link.bandwidth.value() * pr.bandwidth_fraction));
  }
  return best;
}

/// The largest divisor of n that is at most cap (>= 1).
inline int64_t inner_ranks(int64_t n, int64_t cap) {
  if (cap <= 1) return 1;  // no integer division: 1 divides every n
  int64_t g = std::clamp<int64_t>(cap, 1, n);
  while (n % g != 0) --g;
  return g;
}

struct Links {
  const LinkModel& up;
  const LinkModel* out;
  const LinkModel& outward(const char* what) const {
    if (!out) throw InputError("hardware", std::string("the plan's ") + what + " crosses scale-up domains, but the system states no scale-out bandwidth");
    return *out;
  }
};

/// Hierarchical all-reduce over n ranks, `inner` of them in each domain
/// (training-and-systems.md 5.1): reduce-scatter in the domain, all-reduce of the 1/inner
/// shard across domains, all-gather in the domain.
inline double group_all_reduce(double M, int64_t n, int64_t inner, const Links& l, const char* what) {
  if (n <= 1 || M <= 0) return 0;
  if (inner >= n) return all_reduce_time(Bytes(M), n, l.up).value();
  // One rank per domain: M / 1 and n / 1 are M and n (a division and an integer division
  // saved per collective; the same double).
  if (inner <= 1) return all_reduce_time(Bytes(M), n, l.outward(what)).value();
  const double in = inner > 1 ? 2 * all_gather_time(Bytes(M), inner, l.up).value() : 0.0;
  return in + all_reduce_time(Bytes(M / d(inner)), n / inner, l.outward(what)).value();
}

/// Hierarchical all-gather (or reduce-scatter) of an M-byte array over n ranks.
inline double group_all_gather(double M, int64_t n, int64_t inner, const Links& l, const char* what) {
  if (n <= 1 || M <= 0) return 0;
  if (inner >= n) return all_gather_time(Bytes(M), n, l.up).value();
  if (inner <= 1) return all_gather_time(Bytes(M), n, l.outward(what)).value();  // as group_all_reduce
  const double in = inner > 1 ? all_gather_time(Bytes(M), inner, l.up).value() : 0.0;
  return in + all_gather_time(Bytes(M / d(inner)), n / inner, l.outward(what)).value();
}

}  // namespace chalk::step_collectives
