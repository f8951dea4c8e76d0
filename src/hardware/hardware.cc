#include "chalk/hardware/hardware.h"

#include "chalk/base/error.h"

namespace chalk {

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
  if (s.scale_out_bandwidth_per_direction.value() < 0) throw InputError(where + ": scale_out.gb_per_s_per_direction", "must be >= 0");
  if (s.price_per_chip && !(s.price_per_chip->value() > 0)) {
    throw InputError(where + ": price.usd_per_chip_hour", "must be positive, got " + std::to_string(to_usd_per_hour(*s.price_per_chip)));
  }
}

}  // namespace chalk
