// KV offload tiers: the --kv-offload spec, each tier's fetch rate, the fetch time and its
// layer-wise overlap with a step (kv_offload.h; docs/simulator.md 1.8).
#include "chalk/sim/kv_offload.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "chalk/base/error.h"

namespace chalk::sim {
namespace {

constexpr const char* kKvOffloadForm = "host:GB[,ssd:GB][,host-bw:GB/s][,ssd-bw:GB/s]";

bool is_flash_tier(const std::string& name) {
  std::string n;
  for (const char ch : name) n += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return n.find("flash") != std::string::npos || n.find("nvme") != std::string::npos || n.find("ssd") != std::string::npos;
}

}  // namespace

KvOffload parse_kv_offload(std::string_view spec, const std::string& field) {
  KvOffload o;
  bool seen[4] = {false, false, false, false};
  const auto bad = [&](std::string_view what) { return InputError(field, fmt::format("got '{}'; {}", excerpt(spec), what)); };
  if (spec.empty()) throw bad(fmt::format("expected {}", kKvOffloadForm));
  for (std::size_t start = 0; start <= spec.size();) {
    const std::size_t comma = std::min(spec.find(',', start), spec.size());
    const std::string_view item = spec.substr(start, comma - start);
    start = comma + 1;
    const std::size_t colon = item.find(':');
    if (colon == std::string_view::npos) throw bad(fmt::format("'{}' has no ':'; expected {}", excerpt(item, 24), kKvOffloadForm));
    const std::string_view name = item.substr(0, colon), num = item.substr(colon + 1);
    static constexpr std::string_view names[4] = {"host", "ssd", "host-bw", "ssd-bw"};
    const auto k = std::find(std::begin(names), std::end(names), name) - std::begin(names);
    if (k == 4) throw bad(fmt::format("unknown tier '{}'; expected host, ssd, host-bw or ssd-bw ({})", excerpt(name, 24), kKvOffloadForm));
    if (seen[k]) throw bad(fmt::format("'{}' is given twice", name));
    seen[k] = true;
    double v = 0;
    const auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
    const bool rate = k >= 2;
    const double hi = rate ? hardware_limits::link_gb_per_s_max : hardware_limits::host_gb_max;
    if (ec != std::errc() || p != num.data() + num.size() || num.empty() || !std::isfinite(v) || v < 0 || (rate && v == 0) || v > hi) {
      throw bad(fmt::format("{} must be a number in {}{:g}, {:g}], got '{}'", name, rate ? "(" : "[", 0.0, hi, excerpt(num, 24)));
    }
    (k == 0 ? o.host_gb : k == 1 ? o.ssd_gb : k == 2 ? o.host_gb_per_s : o.ssd_gb_per_s) = v;
    if (comma == spec.size()) break;
  }
  return o;
}

std::string describe_kv_offload(const KvOffload& o) {
  std::string s = fmt::format("host:{:g}", o.host_gb);
  if (o.ssd_gb > 0) s += fmt::format(",ssd:{:g}", o.ssd_gb);
  if (o.host_gb_per_s > 0) s += fmt::format(",host-bw:{:g}", o.host_gb_per_s);
  if (o.ssd_gb_per_s > 0) s += fmt::format(",ssd-bw:{:g}", o.ssd_gb_per_s);
  return s;
}

KvOffloadRates kv_offload_rates(const SystemSpec& s, const KvOffload& o) {
  KvOffloadRates r;
  const MemoryTier* dram = nullptr;
  const MemoryTier* flash = nullptr;
  for (const auto& t : s.host_tiers) {
    if (is_flash_tier(t.name)) {
      if (flash == nullptr) flash = &t;
    } else if (dram == nullptr) {
      dram = &t;
    }
  }
  if (o.host_gb_per_s > 0) {
    r.host_bytes_per_s = o.host_gb_per_s * 1e9;
    r.host_source = "--kv-offload host-bw";
  } else if (dram != nullptr) {
    const double mem = dram->bandwidth_per_chip.value(), link = dram->link_per_chip.value();
    r.host_bytes_per_s = link > 0 ? std::min(mem, link) : mem;
    r.host_source = s.name + " " + dram->name + (link > 0 && link < mem ? " over its link: " + dram->link_source : ": " + dram->source);
  } else {
    r.host_bytes_per_s = kDefaultHostLinkGbPerS * 1e9;
    r.host_source = "default: PCIe Gen4 x16, 32 GB/s per direction (PCI-SIG PCIe 4.0; " + s.name + " states no host tier)";
  }
  if (o.ssd_gb_per_s > 0) {
    r.ssd_bytes_per_s = o.ssd_gb_per_s * 1e9;
    r.ssd_source = "--kv-offload ssd-bw";
  } else if (flash != nullptr) {
    r.ssd_bytes_per_s = flash->bandwidth_per_chip.value();
    r.ssd_source = s.name + " " + flash->name + ": " + flash->source;
  } else {
    r.ssd_bytes_per_s = kDefaultSsdGbPerS * 1e9;
    r.ssd_source = "default: one PCIe Gen4 x4 NVMe drive per chip, 7.0 GB/s sequential read (Intel D7-P5500 datasheet; " + s.name +
                   " states no flash tier)";
  }
  return r;
}

double kv_fetch_seconds(int64_t blocks, double bytes_per_block, int64_t chips, double bytes_per_s_per_chip) {
  if (blocks <= 0) return 0;
  return static_cast<double>(blocks) * bytes_per_block / (static_cast<double>(std::max<int64_t>(1, chips)) * bytes_per_s_per_chip);
}

double layerwise_step_seconds(double compute_s, double fetch_s, int64_t layers) {
  if (fetch_s <= 0) return compute_s;
  const double l = static_cast<double>(std::max<int64_t>(1, layers));
  return std::max(compute_s, fetch_s) * (l - 1) / l + (compute_s + fetch_s) / l;
}

}  // namespace chalk::sim
