#include "chalk/hardware/hardware.h"
#include "chalk/hardware/overhead_label.h"

#include <cmath>
#include <cstdio>

#include "chalk/base/error.h"

namespace chalk {

std::string_view to_string(SystemStatus s) { return s == SystemStatus::announced ? "announced" : "shipping"; }

std::string_view to_string(ScaleUpTopology t) {
  switch (t) {
    case ScaleUpTopology::switched: return "switch";
    case ScaleUpTopology::full_mesh: return "full-mesh";
    case ScaleUpTopology::torus_2d: return "2d-torus";
    case ScaleUpTopology::torus_3d: return "3d-torus";
    case ScaleUpTopology::pcie: return "pcie";
  }
  return "?";
}

SystemStatus parse_system_status(std::string_view text, const std::string& field) {
  if (text == "shipping") return SystemStatus::shipping;
  if (text == "announced") return SystemStatus::announced;
  throw InputError(field, "unknown status '" + std::string(text) + "'; expected shipping or announced");
}

ScaleUpTopology parse_scale_up_topology(std::string_view text, const std::string& field) {
  for (auto t : {ScaleUpTopology::switched, ScaleUpTopology::full_mesh, ScaleUpTopology::torus_2d, ScaleUpTopology::torus_3d,
                 ScaleUpTopology::pcie}) {
    if (text == to_string(t)) return t;
  }
  throw InputError(field, "unknown topology '" + std::string(text) + "'; expected switch, full-mesh, 2d-torus, 3d-torus or pcie");
}

double Efficiency::matmul_for(MatmulPrecision p) const {
  const double e = matmul[static_cast<int>(p)];
  return (e > 0 ? e : matmul[static_cast<int>(MatmulPrecision::bf16)]) * sustained_clock;
}

FlopsPerByte flops_per_byte(const ChipSpec& c, MatmulPrecision p) { return c.peak_for(p) / c.hbm_bandwidth; }

std::string overhead_label(const SystemSpec& s) {
  if (!s.op_floor) return "kernel launch floor";
  return "per-op floor (" + (s.op_floor_kind.empty() ? std::string("one compiled op") : s.op_floor_kind) + ")";
}

Seconds hbm_sweep_time(Bytes capacity, BytesPerSecond bandwidth) { return capacity / bandwidth; }

namespace {

std::string hardware_num(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

}  // namespace

void validate(const SystemSpec& s, const std::string& where) {
  using namespace hardware_limits;
  // `si` in SI units, `unit` the file's unit in SI (1e12 for TFLOP/s): the value the file
  // gave is si / unit, checked finite and in [lo, hi] (or 0 when zero_ok).
  auto in = [&](double si, double unit, double lo, double hi, const std::string& field, bool zero_ok = false) {
    const double v = si / unit;
    if (std::isfinite(si) && std::isfinite(v) && ((zero_ok && v == 0) || (v >= lo && v <= hi))) return;
    throw InputError(where + ": " + field, "must be " + std::string(zero_ok ? "0 or " : "") + "in [" + hardware_num(lo) + ", " + hardware_num(hi) +
                                               "], got " + hardware_num(v));
  };
  auto fraction = [&](double v, const std::string& field, bool zero_ok = false) {
    if ((zero_ok && v == 0) || (v > 0 && v <= 1)) return;
    throw InputError(where + ": " + field, "must be a fraction in (0, 1], got " + hardware_num(v));
  };
  constexpr const char* kPrecisions[] = {"bf16", "fp8", "int8", "fp4"};
  for (int p = 0; p < 4; ++p) {
    // 0 = the chip has no such rate; bf16 is required.
    in(s.chip.peak[p].value(), 1e12, min_positive, peak_tflop_per_s_max, std::string("chip.peak_tflop_per_s.") + kPrecisions[p], p != 0);
    fraction(s.efficiency.matmul[p], std::string("efficiency.matmul.") + kPrecisions[p], p != 0);
  }
  in(s.chip.hbm_capacity.value(), 1e9, min_positive, hbm_gb_max, "chip.hbm_gb");
  in(s.chip.hbm_bandwidth.value(), 1e12, min_positive, hbm_tb_per_s_max, "chip.hbm_tb_per_s");
  fraction(s.efficiency.hbm, "efficiency.hbm");
  fraction(s.efficiency.sustained_clock, "efficiency.sustained_clock");
  if (s.chip.sm_count < 0 || s.chip.sm_count > sm_count_max) {
    throw InputError(where + ": chip.sm_count", "must be 0 (not stated) or in 1.." + std::to_string(sm_count_max) + ", got " + std::to_string(s.chip.sm_count));
  }
  if (s.scale_up_domain < 1 || s.scale_up_domain > max_chips) {
    throw InputError(where + ": scale_up.domain_chips", "must be in 1.." + std::to_string(max_chips) + ", got " + std::to_string(s.scale_up_domain));
  }
  in(s.scale_up_bandwidth_per_direction.value(), 1e9, min_positive, link_gb_per_s_max, "scale_up.gb_per_s_per_direction");
  in(s.scale_out_bandwidth_per_direction.value(), 1e9, min_positive, link_gb_per_s_max, "scale_out.gb_per_s_per_direction", true);
  fraction(s.collective_efficiency, "scale_up.collective_efficiency", true);  // 0 = not stated
  if (s.collective_latency && !(s.collective_latency->value() > 0 && s.collective_latency->value() <= collective_latency_s_max)) {
    throw InputError(where + ": scale_up.collective_latency_s",
                     "must be a time in (0, " + hardware_num(collective_latency_s_max) + "] s, got " + hardware_num(s.collective_latency->value()));
  }
  if (s.small_all_reduce && !(s.small_all_reduce->value() > 0 && s.small_all_reduce->value() <= small_all_reduce_s_max)) {
    throw InputError(where + ": scale_up.small_all_reduce_s",
                     "must be a time in (0, " + hardware_num(small_all_reduce_s_max) + "] s, got " + hardware_num(s.small_all_reduce->value()));
  }
  if (!s.scale_up_torus_dims.empty()) {
    const std::string field = where + ": scale_up.torus_dims";
    const bool torus = s.scale_up_topology == ScaleUpTopology::torus_2d || s.scale_up_topology == ScaleUpTopology::torus_3d;
    if (!torus) throw InputError(field, "only a 2d-torus or 3d-torus topology has torus dimensions");
    const size_t want = s.scale_up_topology == ScaleUpTopology::torus_2d ? 2 : 3;
    if (s.scale_up_torus_dims.size() != want) {
      throw InputError(field, "a " + std::string(to_string(*s.scale_up_topology)) + " has " + std::to_string(want) + " dimensions, got " +
                                  std::to_string(s.scale_up_torus_dims.size()));
    }
    int64_t product = 1;
    for (int64_t d : s.scale_up_torus_dims) {
      if (d < 1 || d > max_chips) throw InputError(field, "each dimension must be in 1.." + std::to_string(max_chips) + ", got " + std::to_string(d));
      product *= d;
    }
    if (product != s.scale_up_domain) {
      throw InputError(field, "dimensions multiply to " + std::to_string(product) + ", expected domain_chips " + std::to_string(s.scale_up_domain));
    }
  }
  // A fixed time per operation above 1 ms would be a step's, not an op's.
  if (s.op_floor) in(s.op_floor->value(), 1e-6, min_positive, 1000.0, "op_floor.us");
  if (s.power_w_per_chip) in(*s.power_w_per_chip, 1.0, min_positive, power_w_max, "power.watts_per_chip");
  if (s.price_per_chip) {
    in(s.price_per_chip->value(), 1.0 / 3600.0, min_positive, usd_per_chip_hour_max, "price.usd_per_chip_hour");
  }
  for (size_t i = 0; i < s.host_tiers.size(); ++i) {
    const std::string p = "host_tiers[" + std::to_string(i) + "].";
    in(s.host_tiers[i].capacity_per_chip.value(), 1e9, min_positive, host_gb_max, p + "gb_per_chip");
    in(s.host_tiers[i].bandwidth_per_chip.value(), 1e9, min_positive, link_gb_per_s_max, p + "gb_per_s_per_chip");
    if (s.host_tiers[i].link_per_chip.value() != 0) {
      in(s.host_tiers[i].link_per_chip.value(), 1e9, min_positive, link_gb_per_s_max, p + "link_gb_per_s_per_chip");
    }
  }
}

}  // namespace chalk
