// Energy options and output shared by `simulate`, `plan` and `prices forward` (issue 31,
// item 7; hardware/power.h, sim/energy.h; docs/formulas.md, "Energy").
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "chalk/hardware/power.h"

namespace chalk::cli {

/// --chip-power-w, --pue, --host-w-per-chip.
struct EnergyArgs {
  std::optional<double> chip_power_w;  ///< TDP per chip; default the catalog's
  double pue = 1.0;
  double host_w_per_chip = 0;
};

void add_energy_options(CLI::App& app, EnergyArgs& a);

/// The facility of the flags. Throws InputError naming --pue or --host-w-per-chip with the
/// value and the range.
Facility facility_from(const EnergyArgs& a);

/// The chip's power figures: chip_power(s, --chip-power-w); nullopt when neither the
/// catalog nor the flag states a TDP. Throws InputError("--chip-power-w").
std::optional<ChipPower> chip_power_from(const EnergyArgs& a, const SystemSpec& s);

/// The assumptions behind the energy figures, for --json: {chip_idle_w,
/// chip_compute_busy_w, chip_memory_busy_w, host_w_per_chip, pue, source}; null without a
/// chip power.
nlohmann::json energy_assumptions_json(const std::optional<ChipPower>& p, const Facility& f);

/// One line for people: "energy      per chip idle 115 W, HBM-bound 420 W, compute-bound
/// 700 W; chips only, PUE 1" (--pue and --host-w-per-chip add the rest).
std::string energy_assumptions_text(const std::optional<ChipPower>& p, const Facility& f);

}  // namespace chalk::cli
