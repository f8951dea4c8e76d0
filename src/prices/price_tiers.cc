// (d) of include/chalk/prices.h: memory tiers with their cost per byte-hour, storage prices
// implied by cache writes, and which tier a storage price fits (docs/formulas.md, "prices").
#include <algorithm>
#include <cctype>

#include "chalk/base/error.h"
#include "chalk/prices/prices.h"

namespace chalk {
namespace {

std::string tier_lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool contains(const std::string& s, const char* w) { return s.find(w) != std::string::npos; }

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
    const std::string n = tier_lower(t.name);
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

}  // namespace chalk
