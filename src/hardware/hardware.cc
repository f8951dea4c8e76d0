#include "chalk/hardware/hardware.h"

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
  return e > 0 ? e : matmul[static_cast<int>(MatmulPrecision::bf16)];
}

FlopsPerByte flops_per_byte(const ChipSpec& c, MatmulPrecision p) { return c.peak_for(p) / c.hbm_bandwidth; }

Seconds hbm_sweep_time(Bytes capacity, BytesPerSecond bandwidth) { return capacity / bandwidth; }

void validate(const SystemSpec& s, const std::string& where) {
  auto positive = [&](double v, const std::string& field) {
    if (!(v > 0)) throw InputError(where + ": " + field, "must be positive, got " + std::to_string(v));
  };
  auto fraction = [&](double v, const std::string& field) {
    if (!(v > 0 && v <= 1)) throw InputError(where + ": " + field, "must be a fraction in (0, 1], got " + std::to_string(v));
  };
  positive(s.chip.hbm_capacity.value(), "chip.hbm_gb");
  positive(s.chip.hbm_bandwidth.value(), "chip.hbm_tb_per_s");
  positive(s.chip.peak_for(MatmulPrecision::bf16).value(), "chip.peak_tflop_per_s.bf16");
  fraction(s.efficiency.hbm, "efficiency.hbm");
  fraction(s.efficiency.matmul_for(MatmulPrecision::bf16), "efficiency.matmul.bf16");
  if (s.scale_up_domain < 1) throw InputError(where + ": scale_up.domain_chips", "must be >= 1, got " + std::to_string(s.scale_up_domain));
  positive(s.scale_up_bandwidth_per_direction.value(), "scale_up.gb_per_s_per_direction");
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
      if (d < 1 || d > (1 << 20)) throw InputError(field, "each dimension must be in 1..1048576, got " + std::to_string(d));
      product *= d;
    }
    if (product != s.scale_up_domain) {
      throw InputError(field, "dimensions multiply to " + std::to_string(product) + ", expected domain_chips " + std::to_string(s.scale_up_domain));
    }
  }
  if (s.power_w_per_chip && !(*s.power_w_per_chip > 0)) {
    throw InputError(where + ": power.watts_per_chip", "must be positive, got " + std::to_string(*s.power_w_per_chip));
  }
  if (s.scale_out_bandwidth_per_direction.value() < 0) throw InputError(where + ": scale_out.gb_per_s_per_direction", "must be >= 0");
  if (s.price_per_chip && !(s.price_per_chip->value() > 0)) {
    throw InputError(where + ": price.usd_per_chip_hour", "must be positive, got " + std::to_string(to_usd_per_hour(*s.price_per_chip)));
  }
}

}  // namespace chalk
