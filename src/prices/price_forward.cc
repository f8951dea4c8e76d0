// Prices from a deployment (the forward direction), and the decode-batch searches that
// both directions share: the cost-optimal batch and (e), a price multiple as a batch.
// docs/formulas.md, section "prices".
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "chalk/base/error.h"
#include "chalk/prices/prices.h"
#include "chalk/serving/serving.h"
#include "chalk/serving/cheapest_batch.h"

namespace chalk {
namespace {

constexpr int64_t kMaxBatch = kMaxBaseBatch;
constexpr int64_t kMaxContext = int64_t{1} << 34;

std::string forward_num(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

/// The largest batch a step may use: what fits in HBM at `context`, or kMaxBatch when the
/// weights alone do not fit (an infeasible setup is reported, not refused).
int64_t batch_cap(const Deployment& d, int64_t context) {
  const MemoryPlan m = memory_plan(d, 1, context);
  if (!m.weights_fit || m.max_batch < 1) return kMaxBatch;
  return std::min(m.max_batch, kMaxBatch);
}

/// Smallest integer in (lo, hi] where `pred` holds, given pred(hi) and !pred(lo).
template <class P>
int64_t forward_first_true(int64_t lo, int64_t hi, P pred) {
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (pred(mid) ? hi : lo) = mid;
  }
  return hi;
}

/// Prompts that fill a layout's prefill: one per data-parallel attention group (each chip
/// when KV is split by batch) with mechanisms, else 1 (the plain roofline shares any work
/// evenly over the chips).
int64_t layout_prefill_batch(const Deployment& d) {
  if (!d.mechanisms.enabled) return 1;
  const auto& L = d.mechanisms.layout;
  return L.kv_sharded_by_batch ? d.n_chips : std::max<int64_t>(1, d.n_chips / std::max<int64_t>(1, L.tp_attention));
}

}  // namespace

int64_t cost_optimal_decode_batch(const Deployment& d, int64_t context) {
  if (context < 0) throw InputError("--context", "must be >= 0, got " + std::to_string(context));
  const int64_t cap = batch_cap(d, context);
  auto compute_bound = [&](int64_t b) { return decode_step(d, b, context).bound == Bound::compute; };
  // Below the compute bound cost per token falls with batch, except where the engine pads the
  // batch up to its next CUDA graph: the cheapest batch up to the cap (cheapest_decode_point,
  // the replica rule's choice; review L7).
  if (!compute_bound(cap)) return cheapest_decode_point(d, cap, context).batch;
  if (compute_bound(1)) return 1;
  return forward_first_true(1, cap, compute_bound);
}

MultipleInference infer_multiple(const Deployment& d, const std::string& tier, double multiple, int64_t base_batch,
                                 int64_t context, std::optional<double> stated_speedup) {
  if (!(multiple > 0) || !std::isfinite(multiple)) throw InputError(tier, "price multiple must be positive, got " + forward_num(multiple));
  if (base_batch < 1 || base_batch > kMaxBaseBatch) {
    throw InputError("--base-batch", "must be in 1.." + std::to_string(kMaxBaseBatch) + ", got " + std::to_string(base_batch));
  }
  if (context < 0) throw InputError("--decode-context", "must be >= 0, got " + std::to_string(context));
  const int64_t cap = std::max(batch_cap(d, context), base_batch);
  auto step = [&](int64_t b) { return decode_step(d, b, context).t_step.value(); };
  auto cost = [&](int64_t b) { return step(b) / static_cast<double>(b); };  // ~ cost per token (lecture 0:00)
  struct Solved {
    int64_t batch;
    double speedup, achieved;
    bool reachable;
  };
  auto solve = [&](int64_t b0) -> Solved {
    const double c0 = cost(b0), target = multiple * c0;
    int64_t b = b0;
    bool ok = true;
    if (multiple > 1) {
      // Largest b <= b0 with cost(b) >= target; cost(b) falls as b grows.
      if (cost(1) < target) {
        b = 1;
        ok = false;
      } else {
        b = forward_first_true(1, b0, [&](int64_t x) { return cost(x) < target; }) - 1;
      }
    } else if (multiple < 1) {
      // Smallest b >= b0 with cost(b) <= target.
      if (cost(cap) > target) {
        // Out of reach: report the smallest batch that gets within 0.1% of the floor.
        const double floor = cost(cap) * 1.001;
        b = cost(b0) <= floor ? b0 : forward_first_true(b0, cap, [&](int64_t x) { return cost(x) <= floor; });
        ok = false;
      } else {
        b = forward_first_true(b0, cap, [&](int64_t x) { return cost(x) <= target; });
      }
    }
    return {b, step(b0) / step(b), cost(b) / c0, ok};
  };
  MultipleInference r;
  r.tier = tier;
  r.multiple = multiple;
  r.base_batch = base_batch;
  r.context = context;
  r.stated_speedup = stated_speedup;
  const Solved centre = solve(base_batch);
  r.achieved_multiple = centre.achieved;
  r.reachable = centre.reachable;
  r.batch = {static_cast<double>(centre.batch), static_cast<double>(centre.batch), static_cast<double>(centre.batch)};
  r.speedup = {centre.speedup, centre.speedup, centre.speedup};
  for (int64_t b0 : {std::max<int64_t>(1, base_batch / 2), std::min(cap, 2 * base_batch)}) {
    const Solved s = solve(b0);
    r.batch.low = std::min(r.batch.low, static_cast<double>(s.batch));
    r.batch.high = std::max(r.batch.high, static_cast<double>(s.batch));
    r.speedup.low = std::min(r.speedup.low, s.speedup);
    r.speedup.high = std::max(r.speedup.high, s.speedup);
  }
  if (stated_speedup && *stated_speedup >= 1) {
    // Largest b <= B0 whose step is `stated` times shorter; t_step grows with b.
    const double target = step(base_batch) / *stated_speedup;
    if (step(base_batch) <= target) {
      r.cost_multiple_for_stated_speedup = 1.0;
    } else if (step(1) <= target) {
      const int64_t b = forward_first_true(1, base_batch, [&](int64_t x) { return step(x) > target; }) - 1;
      r.cost_multiple_for_stated_speedup = cost(b) / cost(base_batch);
    }
  }
  return r;
}

std::optional<int64_t> kv_compute_crossover_context(const Deployment& d) {
  auto kv_caught_up = [&](int64_t s) {
    const DecodeStep st = per_sequence_terms(d, s);
    return st.t_kv >= st.t_compute;
  };
  if (!kv_caught_up(kMaxContext)) return std::nullopt;
  return forward_first_true(0, kMaxContext, kv_caught_up);
}

ForwardPrices forward_prices(const Deployment& d, const ForwardAssumptions& a) {
  if (!(a.utilization > 0 && a.utilization <= 1)) throw InputError("--utilization", "must be a fraction in (0, 1], got " + forward_num(a.utilization));
  if (!(a.gross_margin >= 0 && a.gross_margin < 1)) throw InputError("--margin", "must be a fraction in [0, 1), got " + forward_num(a.gross_margin));
  if (a.decode_batch < 0) throw InputError("--batch", "must be >= 0 (0 = cost-optimal), got " + std::to_string(a.decode_batch));
  if (a.decode_context_tokens < 1) throw InputError("--context", "must be >= 1, got " + std::to_string(a.decode_context_tokens));
  if (a.prompt_tokens < 1) throw InputError("--prompt", "must be >= 1, got " + std::to_string(a.prompt_tokens));
  if (a.prefill_batch < 0) throw InputError("--prefill-batch", "must be >= 0 (0 = fill the layout), got " + std::to_string(a.prefill_batch));
  if (!d.price_per_chip) {
    throw InputError("--price-usd-per-chip-hour", d.system.name + " has no public price per chip-hour; pass one");
  }
  const MemoryPlan room = memory_plan(d, 0, a.decode_context_tokens);
  if (!room.weights_fit) {
    throw InputError("--chips", "the weights (" + forward_num(room.weights.value() / 1e9) + " GB) and the reserve do not fit in " +
                                    std::to_string(d.n_chips) + " x " + forward_num(d.system.chip.hbm_capacity.value() / 1e9) +
                                    " GB of HBM; a deployment that cannot run has no price: add chips");
  }
  ForwardPrices f;
  f.model = d.model.name;
  f.system = d.system.name;
  f.n_chips = d.n_chips;
  f.assumptions = a;
  f.markup = 1 / (a.utilization * (1 - a.gross_margin));
  f.decode_batch = a.decode_batch > 0 ? a.decode_batch : cost_optimal_decode_batch(d, a.decode_context_tokens);
  f.decode = decode_step(d, f.decode_batch, a.decode_context_tokens);
  f.prefill_batch = a.prefill_batch > 0 ? a.prefill_batch : layout_prefill_batch(d);
  f.prefill = prefill_step(d, f.prefill_batch, a.prompt_tokens);
  f.kv_bytes_per_token = kv_bytes_per_token(d.model, a.decode_context_tokens, d.kv);
  f.output_cost = *f.decode.cost_per_token;
  f.input_cost = *f.prefill.cost_per_token;
  f.output = f.output_cost * f.markup;
  f.input = f.input_cost * f.markup;
  const UsdPerSecond replica = *d.price_per_chip * static_cast<double>(d.n_chips);
  f.cache_read = replica * (f.kv_bytes_per_token / d.hbm_effective) * f.markup;
  f.storage_hbm = (*d.price_per_chip / d.system.chip.hbm_capacity) * f.kv_bytes_per_token * f.markup;
  f.long_context_threshold_tokens = kv_compute_crossover_context(d);
  f.memory_fits = memory_plan(d, f.decode_batch, a.decode_context_tokens).fits;
  return f;
}

PriceSheet to_price_sheet(const ForwardPrices& f, const Deployment& d) {
  PriceSheet s;
  s.name = "forward-" + f.model + "-" + f.system;
  s.provider = "chalk (forward)";
  s.model = f.model + " on " + std::to_string(f.n_chips) + " x " + f.system;
  s.date = "computed";
  s.source = "chalk prices forward: decode batch " + std::to_string(f.decode_batch) + " at context " +
             std::to_string(f.assumptions.decode_context_tokens) + ", prefill of " + std::to_string(f.assumptions.prompt_tokens) +
             " tokens, utilization " + forward_num(f.assumptions.utilization) + ", gross margin " + forward_num(f.assumptions.gross_margin);
  s.input = f.input;
  s.output = f.output;
  s.cache.read = f.cache_read;
  s.cache.storage = f.storage_hbm;
  if (f.long_context_threshold_tokens) {
    const int64_t s2 = 2 * *f.long_context_threshold_tokens;
    LongContextTier t;
    t.threshold_tokens = *f.long_context_threshold_tokens;
    const DecodeStep dec = decode_step(d, cost_optimal_decode_batch(d, s2), s2);
    const PrefillStep pre = prefill_step(d, f.prefill_batch, s2);
    t.output = *dec.cost_per_token * f.markup;
    t.input = *pre.cost_per_token * f.markup;
    t.cache_read = f.cache_read;
    s.long_context.push_back(t);
  }
  validate(s, s.name);
  return s;
}

}  // namespace chalk
