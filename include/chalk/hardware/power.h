// A chip's electrical power at a step's utilisation, and the facility around it (issue 31,
// item 7; docs/formulas.md, "Energy"). Hardware only: no models (DESIGN.md section 2).
//
// A chip draws its idle power whenever it is powered, and more while its tensor cores or its
// HBM are busy: P = P_idle + (P_compute - P_idle) f_compute + (P_memory - P_idle) f_memory,
// at most P_compute, where f_compute and f_memory are the fractions of the step its matmul
// units and its HBM stream at their achieved rates (the engine step's t_compute / t_step and
// (t_weights + t_kv) / t_step). Host (CPUs, NICs, switches, fans) adds host_w_per_chip for
// the whole run, and the facility multiplies everything by its PUE.
#pragma once

#include <optional>
#include <string>

#include "chalk/base/units.h"
#include "chalk/hardware/hardware.h"

namespace chalk {

/// Idle power as a fraction of the board power (TDP): 115 W of 700 W = 0.164, an H200
/// holding DeepSeek-V3's weights under SGLang between requests, nvidia-smi in P0
/// (github.com/sgl-project/sglang issue 3196, 2025-01-30). An engine's idle GPU keeps its
/// weights, its clocks and its NVLink up, so this, not a parked GPU's 60-70 W, is the floor
/// a serving chip pays. Applied to every chip whose catalog states only a TDP.
inline constexpr double idle_fraction_of_tdp = 115.0 / 700.0;

/// Power of a chip whose HBM streams at its achieved bandwidth with the tensor cores idle,
/// as a fraction of TDP: 0.6, an assumption (no vendor publishes it): the low end of the
/// 400-550 W (57-79% of 700 W) that H100s draw in sustained LLM inference
/// (theneuralbase.com, "H100 TDP 700W", 2026), inference being mostly memory-bound decode.
/// A compute-bound kernel at the achieved matmul rate draws the TDP (the power limit).
inline constexpr double memory_busy_fraction_of_tdp = 0.6;

/// One chip's power figures, watts.
struct ChipPower {
  double idle_w = 0;           ///< powered, weights resident, nothing running
  double compute_busy_w = 0;   ///< tensor cores at their achieved rate for the whole step (= TDP)
  double memory_busy_w = 0;    ///< HBM streaming at its achieved bandwidth, tensor cores idle
  std::string source;          ///< where the figures come from, in words
  /// The chip's main memory, ChipSpec::memory_type ("HBM", "GDDR6"): what "memory-bound"
  /// streams, named in the figures' text ("GDDR6-bound 43 W" for an L4).
  std::string memory_type = "HBM";
};

/// The power figures of `s`'s chip from its catalog TDP (SystemSpec::power_w_per_chip),
/// or from `tdp_w` when given: idle = idle_fraction_of_tdp x TDP, compute-busy = TDP,
/// memory-busy = memory_busy_fraction_of_tdp x TDP. nullopt when neither states a TDP, or
/// tdp_w is 0 (as `train run`'s --chip-power-w 0: no energy figures). Throws
/// InputError("chip_power_w") for a tdp_w outside [0, hardware_limits::power_w_max].
std::optional<ChipPower> chip_power(const SystemSpec& s, std::optional<double> tdp_w = std::nullopt);

/// Mean power of one chip over a step, W: P_idle + (P_compute - P_idle) f_c + (P_memory -
/// P_idle) f_m, at most P_compute, with f_c = t_compute / t_step and f_m = t_memory /
/// t_step each clamped to [0, 1]. P_idle for a step of 0 s.
double step_power_w(const ChipPower& p, Seconds t_step, Seconds t_compute, Seconds t_memory);

/// Energy of one chip over a step, J: step_power_w x t_step.
double step_energy_j(const ChipPower& p, Seconds t_step, Seconds t_compute, Seconds t_memory);

/// What surrounds the chips: host power per chip (CPUs, NICs, NVSwitch trays, fans,
/// drives: the node's power beyond its accelerators, per accelerator) and the facility's
/// power usage effectiveness (facility energy / IT energy; 1 = IT only, as
/// nvidia-smi-based measurements such as InferenceX and ML.ENERGY count).
struct Facility {
  /// Default 0: chips only, as the published per-token measurements count. An HGX H100
  /// node peaks at 8.4 kW measured (Latif et al. 2025, IEEE Access 13:61740) of which
  /// 8 x 700 W are GPUs: about 350 W per GPU for the rest of the node.
  double host_w_per_chip = 0;
  /// Default 1 (IT energy only), as `train run`. Google's fleet: 1.09 (2024 environmental
  /// report); the industry average: 1.56 (Uptime Institute 2024 survey).
  double pue = 1.0;
};

/// Checks the power usage effectiveness: finite and in [1, max_pue]. Throws
/// InputError("pue") naming the value. Shared by serving energy and `train run` (training/run.h).
void validate_pue(double pue);

/// The largest PUE accepted: 3. The Uptime Institute's surveys put the industry average
/// at 1.56 (2024) and its worst years' average near 2.5 (2007); a larger figure is a typo.
inline constexpr double max_pue = 3.0;

/// Checks a Facility: validate_pue, and host_w_per_chip finite and in [0, 1e6 W].
/// Throws InputError("pue") or InputError("host_w_per_chip").
void validate(const Facility& f);

/// Facility energy, J: (chip energy + host_w_per_chip x chips x seconds) x PUE.
double facility_energy_j(double chip_energy_j, const Facility& f, double chips, double seconds);

/// Facility energy per token of a step on `chips` chips that yields `tokens` tokens, J:
/// facility_energy_j(chips x step_energy_j(p, t_step, t_compute, t_memory), f, chips,
/// t_step) / tokens. The chips are taken busy with this step back to back (no idle gaps).
/// 0 when tokens <= 0.
double energy_j_per_token(const ChipPower& p, const Facility& f, double chips, Seconds t_step, Seconds t_compute, Seconds t_memory,
                          double tokens);

}  // namespace chalk
