// Energy options and output (energy_cli.h).
#include "energy_cli.h"

#include <fmt/format.h>

#include "chalk/base/error.h"
#include "table.h"

namespace chalk::cli {

void add_energy_options(CLI::App& app, EnergyArgs& a) {
  app.add_option("--chip-power-w", a.chip_power_w, "Chip TDP in W for the energy figures (default: the catalog's)");
  app.add_option("--pue", a.pue, "Power usage effectiveness, facility / IT energy (1 = IT only; Google 2024: 1.09, industry: 1.56)")
      ->capture_default_str();
  app.add_option("--host-w-per-chip", a.host_w_per_chip, "Host power per chip in W: CPUs, NICs, switches, fans (HGX H100: about 350)")
      ->capture_default_str();
}

Facility facility_from(const EnergyArgs& a) {
  const Facility f{a.host_w_per_chip, a.pue};
  try {
    validate(f);
  } catch (const InputError& e) {
    throw InputError(e.field() == "pue" ? "--pue" : "--host-w-per-chip", std::string(e.what()).substr(e.field().size() + 2));
  }
  return f;
}

std::optional<ChipPower> chip_power_from(const EnergyArgs& a, const SystemSpec& s) {
  // 0 W would silently drop the energy figures and then blame the catalog; a stated power
  // is a chip's draw, so it must be positive (leave the option out for the catalog's TDP).
  if (a.chip_power_w && !(*a.chip_power_w > 0)) {
    throw InputError("--chip-power-w", "expected a positive power in W per chip (leave it out for the catalog's TDP), got " +
                                           format_number(*a.chip_power_w, 6));
  }
  try {
    return chip_power(s, a.chip_power_w);
  } catch (const InputError& e) {
    throw InputError("--chip-power-w", std::string(e.what()).substr(e.field().size() + 2));
  }
}

nlohmann::json energy_assumptions_json(const std::optional<ChipPower>& p, const Facility& f) {
  if (!p) return nullptr;
  return {{"chip_idle_w", p->idle_w},       {"chip_compute_busy_w", p->compute_busy_w}, {"chip_memory_busy_w", p->memory_busy_w},
          {"host_w_per_chip", f.host_w_per_chip}, {"pue", f.pue},                        {"source", p->source}};
}

std::string energy_assumptions_text(const std::optional<ChipPower>& p, const Facility& f) {
  if (!p) return "energy      no chip power in the catalog for this system: pass --chip-power-w\n";
  const bool chips_only = f.pue == 1 && f.host_w_per_chip == 0;
  return fmt::format("energy      per chip idle {} W, {}-bound {} W, compute-bound {} W{}{}\n", format_number(p->idle_w, 3), p->memory_type,
                     format_number(p->memory_busy_w, 3), format_number(p->compute_busy_w, 3),
                     f.host_w_per_chip > 0 ? fmt::format(", host {} W per chip", format_number(f.host_w_per_chip, 3)) : "",
                     chips_only ? "; chips only, PUE 1"
                                : fmt::format(", PUE {}", format_number(f.pue, 3)));
}

}  // namespace chalk::cli
