// Reading API prices backwards: (a)-(c), (f) and all of it together (infer_prices) of
// include/chalk/prices.h (docs/formulas.md, section "prices"). (d): price_tiers.cc;
// (e) and the forward direction: price_forward.cc; the flat figures: price_figures.cc.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "chalk/base/error.h"
#include "chalk/prices/prices.h"

namespace chalk {
namespace {

/// An assumption's central value and range as plain doubles (SI units).
struct Range {
  double value, low, high;
};
Range range(const Estimate<double>& e) { return {e.value, e.low, e.high}; }
template <class Q>
Range range(const Estimate<Q>& e) {
  return {e.value.value(), e.low.value(), e.high.value()};
}
template <class Q>
Estimate<Q> typed(const Estimate<double>& e) {
  return {Q(e.value), Q(e.low), Q(e.high)};
}
template <class Q>
Estimate<double> untyped(const Estimate<Q>& e) {
  return {e.value.value(), e.low.value(), e.high.value()};
}

/// f at the central values, and its range over every corner of the inputs' ranges (exact
/// for the monotone formulas here). A corner where f is undefined (nullopt) is skipped and
/// marks the span partial; an undefined centre gives no estimate.
struct Span {
  std::optional<Estimate<double>> estimate;
  bool partial = false;
};
Span span(const std::vector<Range>& in, const std::function<std::optional<double>(const std::vector<double>&)>& f) {
  std::vector<double> x(in.size());
  for (size_t i = 0; i < in.size(); ++i) x[i] = in[i].value;
  const auto centre = f(x);
  if (!centre) return {std::nullopt, true};
  Span s{Estimate<double>{*centre, *centre, *centre}, false};
  for (size_t mask = 0; mask < (size_t{1} << in.size()); ++mask) {
    for (size_t i = 0; i < in.size(); ++i) x[i] = (mask >> i) & 1 ? in[i].high : in[i].low;
    const auto v = f(x);
    if (!v) {
      s.partial = true;
      continue;
    }
    s.estimate->low = std::min(s.estimate->low, *v);
    s.estimate->high = std::max(s.estimate->high, *v);
  }
  return s;
}

std::string inference_num(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", x);
  return buf;
}

std::string duration_label(Seconds d) {
  const double s = d.value();
  if (s >= 3600 && std::fmod(s, 3600) == 0) return inference_num(s / 3600) + "-h";
  if (s >= 60 && std::fmod(s, 60) == 0) return inference_num(s / 60) + "-min";
  return inference_num(s) + "-s";
}

}  // namespace

// (a) ------------------------------------------------------------------------------------

BytesPerToken kv_bytes_at_price_step(double active_params, FlopsPerByte flops_per_byte, int64_t threshold_tokens,
                                     FlopsPerByte attention_flops_per_kv_byte) {
  if (!(active_params > 0) || !std::isfinite(active_params)) {
    throw InputError("--active-params", "must be a positive parameter count, got " + inference_num(active_params));
  }
  if (!(flops_per_byte.value() > 0) || !std::isfinite(flops_per_byte.value())) {
    throw InputError("--flops-per-byte", "must be positive, got " + inference_num(flops_per_byte.value()));
  }
  if (!(attention_flops_per_kv_byte.value() >= 0) || !(attention_flops_per_kv_byte < flops_per_byte)) {
    throw InputError("--attention-flops-per-kv-byte", "must be >= 0 and below --flops-per-byte (" + inference_num(flops_per_byte.value()) +
                                                          "), got " + inference_num(attention_flops_per_kv_byte.value()));
  }
  if (threshold_tokens <= 0) {
    throw InputError("threshold_tokens", "must be a positive number of tokens, got " + std::to_string(threshold_tokens));
  }
  // S* kv / W = (2 N + a S* kv) / F  =>  kv = 2 N / (S* (F/W - a)).
  return BytesPerToken(2.0 * active_params /
                       (static_cast<double>(threshold_tokens) * (flops_per_byte - attention_flops_per_kv_byte).value()));
}

namespace {

/// The corners every inference shares: N, F/W, a, weight bytes, S, assumed kv.
enum Corner { kN, kFw, kA, kWeights, kS, kKv };

std::vector<Range> corners(const InferenceAssumptions& a) {
  return {range(a.active_params),        range(a.flops_per_byte),        range(a.attention_flops_per_kv_byte),
          range(a.weight_bytes),         range(a.decode_context_tokens), range(a.kv_bytes_per_token)};
}

/// kv at a corner: from the price step (a) when there is one, else the assumption.
double kv_at(const std::vector<double>& x, std::optional<int64_t> step) {
  return step ? 2 * x[kN] / (static_cast<double>(*step) * (x[kFw] - x[kA])) : x[kKv];
}

/// FLOPs per input token of a prefill of S tokens: 2 N + a kv S/2, less the LM head on all
/// but the last position, 2 head (S - 1) / S.
double prefill_flops_per_token(const std::vector<double>& x, double kv, double head) {
  return 2 * x[kN] - 2 * head * (x[kS] - 1) / x[kS] + x[kA] * kv * x[kS] / 2;
}

}  // namespace

Estimate<BytesPerToken> kv_bytes_at_price_step(const InferenceAssumptions& a, int64_t threshold_tokens) {
  kv_bytes_at_price_step(a.active_params.value, a.flops_per_byte.value, threshold_tokens, a.attention_flops_per_kv_byte.value);
  kv_bytes_at_price_step(a.active_params.low, a.flops_per_byte.low, threshold_tokens, a.attention_flops_per_kv_byte.high);  // checks
  const auto s = span(corners(a), [&](const std::vector<double>& x) -> std::optional<double> { return kv_at(x, threshold_tokens); });
  return typed<BytesPerToken>(*s.estimate);
}

// (b) ------------------------------------------------------------------------------------

PhaseInference infer_phases(UsdPerToken input, UsdPerToken output, const InferenceAssumptions& a,
                            std::optional<int64_t> step_threshold_tokens) {
  if (!(input.value() > 0)) throw InputError("input_usd_per_mtok", "must be positive to compare phases");
  if (!(output.value() > 0)) throw InputError("output_usd_per_mtok", "must be positive to compare phases");
  if (step_threshold_tokens) kv_bytes_at_price_step(a, *step_threshold_tokens);  // checks
  PhaseInference p;
  const double r = output / input;
  p.output_to_input_ratio = r;
  p.output_costs_more = r > 1;
  const auto in = corners(a);
  const auto step = step_threshold_tokens;
  // Chip time per output token = r x chip time per input token = r f_p / F; in bytes of
  // HBM traffic at W: r f_p / (F/W).
  auto bytes_per_token = [&](const std::vector<double>& x) { return r * prefill_flops_per_token(x, kv_at(x, step), a.head_params) / x[kFw]; };
  p.decode_bytes_per_output_token = typed<BytesPerToken>(*span(in, [&](const std::vector<double>& x) -> std::optional<double> {
                                                            return bytes_per_token(x);
                                                          }).estimate);
  p.decode_fraction_of_compute_roofline = *span(in, [&](const std::vector<double>& x) -> std::optional<double> {
                                             const double kv = kv_at(x, step);
                                             return (2 * x[kN] + x[kA] * kv * x[kS]) / (r * prefill_flops_per_token(x, kv, a.head_params));
                                           }).estimate;
  const auto batch = span(in, [&](const std::vector<double>& x) -> std::optional<double> {
    const double room = bytes_per_token(x) - x[kS] * kv_at(x, step);  // bytes per token left for weights / B
    if (!(room > 0)) return std::nullopt;
    return x[kWeights] / room;
  });
  p.implied_decode_batch = batch.estimate;
  p.implied_batch_partial = batch.partial;
  return p;
}

// (c) ------------------------------------------------------------------------------------

CacheReadInference infer_cache_read(UsdPerToken input, UsdPerToken read, const InferenceAssumptions& a,
                                    std::optional<int64_t> step_threshold_tokens, BytesPerSecond hbm_per_chip) {
  if (!(input.value() > 0)) throw InputError("input_usd_per_mtok", "must be positive to compare a cache read with it");
  if (!(read.value() > 0)) throw InputError("cache.read_usd_per_mtok", "must be positive to infer a fetch bandwidth");
  if (step_threshold_tokens) kv_bytes_at_price_step(a, *step_threshold_tokens);  // checks
  CacheReadInference c;
  const double q = read / input;
  c.read_to_input_ratio = q;
  const auto in = corners(a);
  auto fetch_to_recompute = [&](const std::vector<double>& x) -> std::optional<double> {
    const double kv = kv_at(x, step_threshold_tokens);
    return kv * x[kFw] / prefill_flops_per_token(x, kv, a.head_params);  // (kv / W) / (f_p / F)
  };
  c.hbm_fetch_to_recompute_cost = *span(in, fetch_to_recompute).estimate;
  c.implied_fetch_fraction_of_hbm = *span(in, [&](const std::vector<double>& x) -> std::optional<double> {
                                       return *fetch_to_recompute(x) / q;
                                     }).estimate;
  const auto& f = c.implied_fetch_fraction_of_hbm;
  c.implied_fetch_bandwidth_per_chip = {hbm_per_chip * f.value, hbm_per_chip * f.low, hbm_per_chip * f.high};
  return c;
}

// (f) ------------------------------------------------------------------------------------

ContextCeiling context_ceiling(const Estimate<BytesPerToken>& kv, const Deployment& d, const InferenceAssumptions& a) {
  ContextCeiling c;
  c.step_budget = a.step_budget;
  c.replica_bandwidth = d.hbm_effective;
  const Bytes per_budget = d.hbm_effective * a.step_budget;
  c.bandwidth_ceiling_tokens = {(per_budget / kv.value).value(), (per_budget / kv.high).value(), (per_budget / kv.low).value()};
  const double hbm = (d.system.chip.hbm_capacity * static_cast<double>(d.n_chips)).value() * (1 - d.memory_reserve_fraction);
  const auto cap = span({range(kv), range(a.weight_bytes)}, [&](const std::vector<double>& x) -> std::optional<double> {
    const double room = hbm - x[1];
    if (!(room > 0)) return std::nullopt;
    return room / x[0];
  });
  c.capacity_ceiling_tokens = cap.estimate;
  return c;
}

// All of it ----------------------------------------------------------------------------

void validate(const InferenceAssumptions& a) {
  // Each estimate positive, ordered, and at most `max` (in the flag's units, `scale` SI units
  // each): bounds far beyond any real chip or model that keep every product the inverse
  // forms (2 N_active, kv x S x F/W, ...) finite, so no figure prints inf or nan.
  auto check = [](double v, double lo, double hi, const std::string& flag, double max, double scale) {
    v /= scale, lo /= scale, hi /= scale;
    if (!(lo > 0) || !(hi <= max)) {
      throw InputError(flag, "must be positive and at most " + inference_num(max) + ", got range " + inference_num(lo) + ":" + inference_num(hi));
    }
    if (!(lo <= v && v <= hi)) {
      throw InputError(flag, "needs low <= value <= high, got value " + inference_num(v) + " with range " + inference_num(lo) + ":" + inference_num(hi));
    }
  };
  auto chk = [&](const auto& e, const std::string& flag, double max, double scale = 1) {
    const Range r = range(e);
    check(r.value, r.low, r.high, flag, max, scale);
  };
  chk(a.active_params, "--active-params", 1e15);         // 1,000x the largest model built
  chk(a.flops_per_byte, "--flops-per-byte", 1e6);        // H100 bf16: 295
  {
    const Range att = range(a.attention_flops_per_kv_byte);
    if (!(att.low >= 0 && att.low <= att.value && att.value <= att.high)) {
      throw InputError("--attention-flops-per-kv-byte", "needs 0 <= low <= value <= high, got " + inference_num(att.low) + ":" + inference_num(att.value) +
                                                            ":" + inference_num(att.high));
    }
    if (!(att.high < a.flops_per_byte.low.value())) {
      throw InputError("--attention-flops-per-kv-byte", "must stay below the low end of --flops-per-byte (" +
                                                            inference_num(a.flops_per_byte.low.value()) + "), got " + inference_num(att.high));
    }
  }
  chk(a.weight_bytes, "--weights-gb", 1e9, 1e9);        // 1 EB
  chk(a.decode_context_tokens, "--decode-context", static_cast<double>(int64_t{1} << 30));
  chk(a.kv_bytes_per_token, "--kv-bytes-per-token", 1e9);
  chk(a.tier_costs.hbm_share_of_chip_price, "--hbm-share-of-chip-price", 1);
  chk(a.tier_costs.dram, "--dram-usd-per-gb-hour", 1e6);
  chk(a.tier_costs.flash, "--flash-usd-per-gb-hour", 1e6);
  chk(a.tier_costs.disk, "--disk-usd-per-gb-hour", 1e6);
  const double budget_ms = to_ms(a.step_budget);
  if (!(budget_ms > 0 && budget_ms <= 1e9)) throw InputError("--step-budget-ms", "must be in (0, 1e9], got " + inference_num(budget_ms));
  const double hold_s = a.storage_duration.value();
  if (!(hold_s > 0 && hold_s <= 1e12)) throw InputError("--storage-duration-s", "must be in (0, 1e12], got " + inference_num(hold_s));
  if (a.base_batch < 0 || a.base_batch > kMaxBaseBatch) {
    throw InputError("--base-batch", "must be in 0.." + std::to_string(kMaxBaseBatch) + " (0 = cost-optimal), got " + std::to_string(a.base_batch));
  }
}

PriceInference infer_prices(const PriceSheet& s, const InferenceAssumptions& a, const Deployment& d) {
  validate(s, s.name.empty() ? "sheet" : s.name);
  validate(a);
  PriceInference p;
  p.sheet = s.name;
  std::optional<int64_t> threshold;
  if (!s.long_context.empty()) {
    p.step = s.long_context.front();
    threshold = p.step->threshold_tokens;
    p.kv_bytes_per_token = kv_bytes_at_price_step(a, *threshold);
    p.kv_from_step = true;
  } else {
    p.kv_bytes_per_token = a.kv_bytes_per_token;
  }
  p.phases = infer_phases(s.input, s.output, a, threshold);
  if (s.cache.read && s.cache.read->value() > 0) {
    p.cache_read = infer_cache_read(s.input, *s.cache.read, a, threshold, d.system.chip.hbm_bandwidth);
  }
  const auto tiers = memory_tiers(d.system, d.price_per_chip, a.tier_costs);
  if (s.cache.storage && s.cache.storage->value() > 0) {
    p.storage.push_back(infer_storage_tier("storage price", *s.cache.storage, a.storage_duration, p.kv_bytes_per_token, tiers));
  }
  for (const auto& w : s.cache.writes) {
    if (auto price = storage_price_from_write(s.input, w)) {
      p.storage.push_back(infer_storage_tier(duration_label(w.duration) + " cache write premium", *price, w.duration,
                                             p.kv_bytes_per_token, tiers));
    }
  }
  const int64_t context = static_cast<int64_t>(std::llround(a.decode_context_tokens.value));
  const int64_t base = a.base_batch > 0 ? a.base_batch : cost_optimal_decode_batch(d, context);
  for (const auto& t : s.service_tiers) {
    p.multiples.push_back(infer_multiple(d, std::string(to_string(t.kind)), t.output / s.output, base, context, t.stated_speedup));
  }
  if (s.batch) p.multiples.push_back(infer_multiple(d, "batch", s.batch->multiplier, base, context));
  if (s.off_peak) p.multiples.push_back(infer_multiple(d, "off-peak", s.off_peak->output / s.output, base, context));
  p.ceiling = context_ceiling(p.kv_bytes_per_token, d, a);
  return p;
}

}  // namespace chalk
