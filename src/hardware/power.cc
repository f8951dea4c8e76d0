// A chip's power at a step's utilisation and the facility around it (power.h;
// docs/formulas.md, "Energy").
#include "chalk/hardware/power.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "chalk/base/error.h"

namespace chalk {
namespace {

std::string watts_text(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

double clamp01(double x) { return std::isfinite(x) ? std::clamp(x, 0.0, 1.0) : 0.0; }

}  // namespace

std::optional<ChipPower> chip_power(const SystemSpec& s, std::optional<double> tdp_w) {
  if (tdp_w && !(*tdp_w >= 0 && *tdp_w <= hardware_limits::power_w_max)) {
    throw InputError("chip_power_w", "must be in [0, 1e+06] W per chip (0 = no energy figures), got " + watts_text(*tdp_w));
  }
  const std::optional<double> tdp = tdp_w ? tdp_w : s.power_w_per_chip;
  if (!tdp || !(*tdp > 0)) return std::nullopt;
  ChipPower p;
  p.compute_busy_w = *tdp;
  p.idle_w = idle_fraction_of_tdp * *tdp;
  p.memory_busy_w = memory_busy_fraction_of_tdp * *tdp;
  p.memory_type = s.chip.memory_type.empty() ? "HBM" : s.chip.memory_type;
  p.source = (tdp_w ? "given TDP " : "TDP ") + watts_text(*tdp) + " W" + (tdp_w || s.power_source.empty() ? "" : " (" + s.power_source + ")") +
             "; idle 115/700 of TDP (SGLang H200 idle with weights, sglang issue 3196); " + p.memory_type + "-bound 0.6 of TDP (assumed)";
  return p;
}

double step_power_w(const ChipPower& p, Seconds t_step, Seconds t_compute, Seconds t_memory) {
  if (!(t_step.value() > 0)) return p.idle_w;
  const double fc = clamp01(t_compute.value() / t_step.value());
  const double fm = clamp01(t_memory.value() / t_step.value());
  const double w = p.idle_w + (p.compute_busy_w - p.idle_w) * fc + (p.memory_busy_w - p.idle_w) * fm;
  return std::min(w, std::max(p.compute_busy_w, p.idle_w));
}

double step_energy_j(const ChipPower& p, Seconds t_step, Seconds t_compute, Seconds t_memory) {
  return t_step.value() > 0 ? step_power_w(p, t_step, t_compute, t_memory) * t_step.value() : 0.0;
}

void validate_pue(double pue) {
  if (!(pue >= 1) || !std::isfinite(pue)) {
    throw InputError("pue", "must be >= 1 (facility energy / IT energy), got " + watts_text(pue));
  }
  if (pue > max_pue) {
    throw InputError("pue", "must be in [1, 3] (facility energy / IT energy; industry average 1.56), got " + watts_text(pue));
  }
}

void validate(const Facility& f) {
  validate_pue(f.pue);
  if (!(f.host_w_per_chip >= 0 && f.host_w_per_chip <= hardware_limits::power_w_max)) {
    throw InputError("host_w_per_chip", "must be in [0, 1e+06] W per chip (0 = chips only), got " + watts_text(f.host_w_per_chip));
  }
}

double facility_energy_j(double chip_energy_j, const Facility& f, double chips, double seconds) {
  return (chip_energy_j + f.host_w_per_chip * chips * seconds) * f.pue;
}

double energy_j_per_token(const ChipPower& p, const Facility& f, double chips, Seconds t_step, Seconds t_compute, Seconds t_memory,
                          double tokens) {
  if (!(tokens > 0)) return 0;
  return facility_energy_j(chips * step_energy_j(p, t_step, t_compute, t_memory), f, chips, t_step.value()) / tokens;
}

}  // namespace chalk
