// Internal to overhead.cc: the per-operation accounting of an engine step and two small
// helpers it prices with (the busiest of several loads, the link a group of ranks talks over).
#pragma once

#include <cstdint>

#include "chalk/base/units.h"
#include "chalk/engine/collective.h"
#include "chalk/model/expert_skew.h"
#include "chalk/model/moe.h"

namespace chalk::detail {

/// Per-operation accounting: each adds max(compute, memory) and its share by winner.
struct Ledger {
  Seconds compute, weights, kv, ops;
  Seconds share_compute, share_weights, share_kv;
  void add(Seconds c, Seconds m, bool is_kv) {
    compute += c;
    (is_kv ? kv : weights) += m;
    ops += max(c, m);
    if (c >= m) {
      share_compute += c;
    } else {
      (is_kv ? share_kv : share_weights) += m;
    }
  }
};

/// Expected largest of `bins` EP ranks' loads when `balls` token-expert pairs are routed
/// over `n_experts` experts: uniformly (moe.h, uncapped, over all `bins`), or under a learned
/// router's skew with or without EPLB (expert_skew.h, over min(bins, n_experts) ranks).
inline double busiest_load(double balls, double bins, double n_experts, ExpertBalance balance) {
  if (bins <= 1) return balls;
  if (balance == ExpertBalance::uniform) return expected_max_load(balls, bins, balls);
  return busiest_rank_assignments(balls, static_cast<int64_t>(n_experts), static_cast<int64_t>(bins), balance);
}

inline const LinkModel& link_for(int64_t ranks, int64_t domain, const LinkModel& up, const LinkModel* out) {
  return (ranks <= domain || out == nullptr) ? up : *out;
}

}  // namespace chalk::detail
