// Reading API prices backwards: (a)-(d) and (f) of include/chalk/prices.h
// (docs/formulas.md, section "prices"). (e) and the forward direction: price_forward.cc.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>

#include "chalk/error.h"
#include "chalk/prices.h"

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

std::string num(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", x);
  return buf;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool contains(const std::string& s, const char* w) { return s.find(w) != std::string::npos; }

std::string duration_label(Seconds d) {
  const double s = d.value();
  if (s >= 3600 && std::fmod(s, 3600) == 0) return num(s / 3600) + "-h";
  if (s >= 60 && std::fmod(s, 60) == 0) return num(s / 60) + "-min";
  return num(s) + "-s";
}

}  // namespace

std::string_view to_string(TierKind k) {
  switch (k) {
    case TierKind::hbm: return "HBM";
    case TierKind::dram: return "DRAM";
    case TierKind::flash: return "flash";
    case TierKind::disk: return "disk";
  }
  return "?";
}

// (a) ------------------------------------------------------------------------------------

BytesPerToken kv_bytes_at_price_step(double active_params, FlopsPerByte flops_per_byte, int64_t threshold_tokens,
                                     FlopsPerByte attention_flops_per_kv_byte) {
  if (!(active_params > 0) || !std::isfinite(active_params)) {
    throw InputError("--active-params", "must be a positive parameter count, got " + num(active_params));
  }
  if (!(flops_per_byte.value() > 0) || !std::isfinite(flops_per_byte.value())) {
    throw InputError("--flops-per-byte", "must be positive, got " + num(flops_per_byte.value()));
  }
  if (!(attention_flops_per_kv_byte.value() >= 0) || !(attention_flops_per_kv_byte < flops_per_byte)) {
    throw InputError("--attention-flops-per-kv-byte", "must be >= 0 and below --flops-per-byte (" + num(flops_per_byte.value()) +
                                                          "), got " + num(attention_flops_per_kv_byte.value()));
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

/// FLOPs per input token of a prefill of S tokens: 2 N + a kv S/2.
double prefill_flops_per_token(const std::vector<double>& x, double kv) { return 2 * x[kN] + x[kA] * kv * x[kS] / 2; }

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
  auto bytes_per_token = [&](const std::vector<double>& x) { return r * prefill_flops_per_token(x, kv_at(x, step)) / x[kFw]; };
  p.decode_bytes_per_output_token = typed<BytesPerToken>(*span(in, [&](const std::vector<double>& x) -> std::optional<double> {
                                                            return bytes_per_token(x);
                                                          }).estimate);
  p.decode_fraction_of_compute_roofline = *span(in, [&](const std::vector<double>& x) -> std::optional<double> {
                                             const double kv = kv_at(x, step);
                                             return (2 * x[kN] + x[kA] * kv * x[kS]) / (r * prefill_flops_per_token(x, kv));
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
    return kv * x[kFw] / prefill_flops_per_token(x, kv);  // (kv / W) / (f_p / F)
  };
  c.hbm_fetch_to_recompute_cost = *span(in, fetch_to_recompute).estimate;
  c.implied_fetch_fraction_of_hbm = *span(in, [&](const std::vector<double>& x) -> std::optional<double> {
                                       return *fetch_to_recompute(x) / q;
                                     }).estimate;
  const auto& f = c.implied_fetch_fraction_of_hbm;
  c.implied_fetch_bandwidth_per_chip = {hbm_per_chip * f.value, hbm_per_chip * f.low, hbm_per_chip * f.high};
  return c;
}

// (d) ------------------------------------------------------------------------------------

std::vector<TierSpec> memory_tiers(const SystemSpec& s, std::optional<UsdPerSecond> price_per_chip, const TierCostAssumptions& a) {
  std::vector<TierSpec> out;
  TierSpec hbm;
  hbm.name = "HBM";
  hbm.kind = TierKind::hbm;
  hbm.capacity_per_chip = s.chip.hbm_capacity;
  hbm.bandwidth_per_chip = s.chip.hbm_bandwidth;
  hbm.source = s.name + " catalog entry (" + s.chip.name + ")";
  if (price_per_chip) {
    const UsdPerByteSecond full = *price_per_chip / s.chip.hbm_capacity;
    hbm.cost = Estimate<UsdPerByteSecond>{full * a.hbm_share_of_chip_price.value, full * a.hbm_share_of_chip_price.low,
                                          full * a.hbm_share_of_chip_price.high};
    hbm.source += "; cost = chip price x share / HBM capacity";
  }
  out.push_back(hbm);
  bool has_flash = false, has_disk = false;
  for (const auto& t : s.host_tiers) {
    TierSpec x;
    x.name = t.name;
    const std::string n = lower(t.name);
    if (contains(n, "flash") || contains(n, "nvme") || contains(n, "ssd")) x.kind = TierKind::flash;
    else if (contains(n, "disk") || contains(n, "hdd")) x.kind = TierKind::disk;
    else x.kind = TierKind::dram;
    has_flash = has_flash || x.kind == TierKind::flash;
    has_disk = has_disk || x.kind == TierKind::disk;
    x.capacity_per_chip = t.capacity_per_chip;
    x.bandwidth_per_chip = t.bandwidth_per_chip;
    x.source = t.source;
    out.push_back(x);
  }
  auto assumed = [&](const MemoryTier& t, TierKind k) {
    TierSpec x;
    x.name = t.name;
    x.kind = k;
    x.capacity_per_chip = t.capacity_per_chip;
    x.bandwidth_per_chip = t.bandwidth_per_chip;
    x.source = t.source;
    x.assumed = true;
    out.push_back(x);
  };
  if (!has_flash) assumed(a.assumed_flash, TierKind::flash);
  if (!has_disk) assumed(a.assumed_disk, TierKind::disk);
  for (auto& t : out) {
    t.sweep_time = hbm_sweep_time(t.capacity_per_chip, t.bandwidth_per_chip);
    if (t.kind == TierKind::dram) t.cost = a.dram;
    if (t.kind == TierKind::flash) t.cost = a.flash;
    if (t.kind == TierKind::disk) t.cost = a.disk;
  }
  std::stable_sort(out.begin() + 1, out.end(), [](const TierSpec& x, const TierSpec& y) { return x.sweep_time < y.sweep_time; });
  return out;
}

std::optional<UsdPerTokenSecond> storage_price_from_write(UsdPerToken input, const CacheWrite& w) {
  const UsdPerToken premium = w.price - input;
  if (!(premium.value() > 0) || !(w.duration.value() > 0)) return std::nullopt;
  return premium / w.duration;
}

StorageInference infer_storage_tier(const std::string& basis, UsdPerTokenSecond price, Seconds duration,
                                    const Estimate<BytesPerToken>& kv, const std::vector<TierSpec>& tiers) {
  if (!(price.value() > 0)) throw InputError("cache.storage_usd_per_mtok_per_hour", "must be positive to place it in a memory tier");
  if (!(duration.value() > 0)) throw InputError("--storage-duration-s", "must be positive");
  if (!(kv.low.value() > 0)) throw InputError("--kv-bytes-per-token", "must be positive");
  StorageInference r;
  r.basis = basis;
  r.price = price;
  r.duration = duration;
  r.price_per_byte = {price / kv.value, price / kv.high, price / kv.low};
  double best_cost = -1, best_sweep = -1;
  for (const auto& t : tiers) {
    TierFit f;
    f.tier = t;
    f.readable_within_duration = t.sweep_time <= duration;
    if (f.readable_within_duration && t.sweep_time.value() > best_sweep) {
      best_sweep = t.sweep_time.value();
      r.tier_by_duration = t.name;
    }
    if (t.cost) {
      const auto& c = *t.cost;
      f.price_to_cost = Estimate<double>{r.price_per_byte.value / c.value, r.price_per_byte.low / c.high, r.price_per_byte.high / c.low};
      f.breakeven_kv = Estimate<BytesPerToken>{price / c.value, price / c.high, price / c.low};
      f.covers_cost = r.price_per_byte.value >= c.value;
      if (f.covers_cost && c.value.value() > best_cost) {
        best_cost = c.value.value();
        r.tier_by_cost = t.name;
      }
    }
    r.tiers.push_back(f);
  }
  return r;
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
  auto check = [](double v, double lo, double hi, const std::string& flag) {
    if (!(lo > 0) || !std::isfinite(hi)) throw InputError(flag, "must be positive and finite, got range " + num(lo) + ":" + num(hi));
    if (!(lo <= v && v <= hi)) {
      throw InputError(flag, "needs low <= value <= high, got value " + num(v) + " with range " + num(lo) + ":" + num(hi));
    }
  };
  auto chk = [&](const auto& e, const std::string& flag) {
    const Range r = range(e);
    check(r.value, r.low, r.high, flag);
  };
  chk(a.active_params, "--active-params");
  chk(a.flops_per_byte, "--flops-per-byte");
  {
    const Range att = range(a.attention_flops_per_kv_byte);
    if (!(att.low >= 0 && att.low <= att.value && att.value <= att.high)) {
      throw InputError("--attention-flops-per-kv-byte", "needs 0 <= low <= value <= high, got " + num(att.low) + ":" + num(att.value) +
                                                            ":" + num(att.high));
    }
    if (!(att.high < a.flops_per_byte.low.value())) {
      throw InputError("--attention-flops-per-kv-byte", "must stay below the low end of --flops-per-byte (" +
                                                            num(a.flops_per_byte.low.value()) + "), got " + num(att.high));
    }
  }
  chk(a.weight_bytes, "--weights-gb");
  chk(a.decode_context_tokens, "--decode-context");
  chk(a.kv_bytes_per_token, "--kv-bytes-per-token");
  chk(a.tier_costs.hbm_share_of_chip_price, "--hbm-share-of-chip-price");
  if (a.tier_costs.hbm_share_of_chip_price.high > 1) throw InputError("--hbm-share-of-chip-price", "must be a share in (0, 1]");
  chk(a.tier_costs.dram, "--dram-usd-per-gb-hour");
  chk(a.tier_costs.flash, "--flash-usd-per-gb-hour");
  chk(a.tier_costs.disk, "--disk-usd-per-gb-hour");
  if (!(a.step_budget.value() > 0)) throw InputError("--step-budget-ms", "must be positive, got " + num(to_ms(a.step_budget)));
  if (!(a.storage_duration.value() > 0)) throw InputError("--storage-duration-s", "must be positive, got " + num(a.storage_duration.value()));
  if (a.base_batch < 0) throw InputError("--base-batch", "must be >= 0 (0 = cost-optimal), got " + std::to_string(a.base_batch));
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

std::vector<InferenceFigure> inference_figures(const PriceInference& p) {
  std::vector<InferenceFigure> out;
  auto point = [](double v) { return Estimate<double>{v, v, v}; };
  auto add = [&](const char* inference, std::string subject, std::string quantity, Estimate<double> e, std::string note = "") {
    out.push_back({inference, std::move(subject), std::move(quantity), e, std::move(note)});
  };
  if (p.step) {
    add("a", "", "price_step_threshold_tokens", point(static_cast<double>(p.step->threshold_tokens)));
    add("a", "", "kv_bytes_per_token", untyped(p.kv_bytes_per_token),
        "where the KV fetch catches compute: 2 N_active / (S* (F/W - a)) (lecture 1:35:47)");
  } else {
    add("a", "", "kv_bytes_per_token", untyped(p.kv_bytes_per_token), "assumed: the sheet has no long-context price step");
  }
  const auto& ph = p.phases;
  add("b", "", "output_to_input_price_ratio", point(ph.output_to_input_ratio),
      ph.output_costs_more ? "output dearer than input: decode is the memory-bound phase, prefill the compute-bound one"
                           : "output NOT dearer than input: contradicts a memory-bound decode");
  add("b", "", "decode_fraction_of_compute_roofline", ph.decode_fraction_of_compute_roofline, "f_d / (ratio f_p); 1 / ratio without attention");
  add("b", "", "decode_bytes_per_output_token", untyped(ph.decode_bytes_per_output_token), "ratio x f_p / (F/W), f_p = 2 N_active + a kv S/2");
  if (ph.implied_decode_batch) {
    add("b", "", "implied_decode_batch", *ph.implied_decode_batch,
        std::string("weights / (bytes per output token - S kv)") + (ph.implied_batch_partial ? "; unbounded at some corners" : ""));
  }
  if (p.cache_read) {
    const auto& c = *p.cache_read;
    add("c", "", "cache_read_to_input_price_ratio", point(c.read_to_input_ratio), "a hit fetches stored KV instead of recomputing it");
    add("c", "", "hbm_fetch_to_recompute_cost_ratio", c.hbm_fetch_to_recompute_cost, "kv (F/W) / f_p");
    add("c", "", "implied_fetch_fraction_of_hbm_bandwidth", c.implied_fetch_fraction_of_hbm, "kv (F/W) / (f_p q)");
    const auto& b = c.implied_fetch_bandwidth_per_chip;
    add("c", "", "implied_fetch_gb_per_s_per_chip", {to_gb_per_s(b.value), to_gb_per_s(b.low), to_gb_per_s(b.high)},
        "the bandwidth per chip at which streaming the KV costs the read price");
  }
  for (const auto& st : p.storage) {
    add("d", st.basis, "storage_usd_per_mtok_per_hour", point(to_usd_per_mtok_per_hour(st.price)));
    add("d", st.basis, "hold_s", point(st.duration.value()));
    const auto& pb = st.price_per_byte;
    add("d", st.basis, "storage_usd_per_gb_hour", {to_usd_per_gb_hour(pb.value), to_usd_per_gb_hour(pb.low), to_usd_per_gb_hour(pb.high)},
        "by cost: " + (st.tier_by_cost.empty() ? std::string("below every tier's cost") : st.tier_by_cost) +
            "; by duration: " + (st.tier_by_duration.empty() ? std::string("no tier") : st.tier_by_duration));
    for (const auto& f : st.tiers) {
      const std::string subject = st.basis + " / " + f.tier.name;
      add("d", subject, "sweep_s", point(f.tier.sweep_time.value()),
          f.readable_within_duration ? "readable within the hold time" : "slower to read once than the hold time");
      if (f.tier.cost) {
        const auto& c = *f.tier.cost;
        add("d", subject, "tier_cost_usd_per_gb_hour", {to_usd_per_gb_hour(c.value), to_usd_per_gb_hour(c.low), to_usd_per_gb_hour(c.high)});
        add("d", subject, "price_to_cost_ratio", *f.price_to_cost, f.covers_cost ? "price covers the tier's cost" : "price below the tier's cost");
        add("d", subject, "breakeven_kv_bytes_per_token", untyped(*f.breakeven_kv), "the KV per token at which price = cost");
      }
    }
  }
  for (const auto& m : p.multiples) {
    add("e", m.tier, "price_multiple", point(m.multiple));
    add("e", m.tier, "implied_decode_batch", m.batch,
        "from base batch " + std::to_string(m.base_batch) + " at context " + std::to_string(m.context) +
            (m.reachable ? "" : "; batching alone cannot reach the multiple (achieves " + num(m.achieved_multiple) + "x)"));
    add("e", m.tier, "speedup", m.speedup, "tokens/s per user vs the base batch");
    if (m.stated_speedup) {
      add("e", m.tier, "stated_speedup", point(*m.stated_speedup));
      if (m.cost_multiple_for_stated_speedup) {
        add("e", m.tier, "cost_multiple_for_stated_speedup", point(*m.cost_multiple_for_stated_speedup));
      }
    }
  }
  add("f", "", "step_budget_ms", point(to_ms(p.ceiling.step_budget)));
  add("f", "", "bandwidth_ceiling_tokens", p.ceiling.bandwidth_ceiling_tokens,
      "one sequence's KV fetch fills the step budget: budget x W / kv");
  if (p.ceiling.capacity_ceiling_tokens) {
    add("f", "", "capacity_ceiling_tokens", *p.ceiling.capacity_ceiling_tokens, "one sequence's KV fills HBM beside the weights");
  }
  return out;
}

}  // namespace chalk
