// Whole-run goodput from interruptions and checkpoints: the fraction of a run's wall clock
// spent on steps that count. Interruptions (failures and planned restarts) arrive at a rate
// proportional to the chips; each costs a restart plus the work since the last checkpoint
// (half an interval on average); each checkpoint stalls the run for its save. With the
// Young/Daly interval the lost fraction is sqrt(2 x stall x rate) + rate x restart.
// Derivation and the constants' sources: docs/formulas.md, "Run goodput".
#pragma once

#include <cstdint>

#include "chalk/base/units.h"
#include "chalk/model/model.h"
#include "chalk/training/plan.h"

namespace chalk {

/// Interruptions per chip-hour: Llama 3 405B's 466 (419 unexpected + 47 planned) in 54 days
/// on 16,384 H100 (Llama 3 paper, arXiv 2407.21783, 3.3.4) = 466 / (54 x 24 x 16,384) =
/// 2.19e-5. Range the sources allow: 1.22e-5 to 3.39e-5 (Kokolis et al. 2024, arXiv
/// 2410.21680: 2.34 and 6.50 failures per 1,000 8-GPU node-days on Meta's RSC-2 and RSC-1).
inline constexpr double kInterruptionsPerChipHour = 466.0 / (54.0 * 24 * 16384);
/// Restart time per interruption, s (detection, rescheduling, reloading the checkpoint):
/// fitted so that Llama 3 405B's run loses 10% (its ">90% effective training time") with its
/// own rate and checkpoint stall: (0.10 - sqrt(2 x 2.84 s x 9.99e-5/s)) / 9.99e-5/s = 763 s
/// (12.7 min). ">90%" is a floor on goodput, so this is the upper end: 95% would give 262 s.
inline constexpr double kRestartSeconds = 763;
/// Checkpoint write bandwidth, bytes/s: the sustained throughput of Llama 3's Tectonic
/// storage fabric, 2 TB/s (peak 7 TB/s; Llama 3 paper 3.3.1). The save is taken as a
/// synchronous stall at that rate (an asynchronous checkpoint stalls less: an upper bound).
inline constexpr double kCheckpointWriteBytesPerS = 2e12;

/// The mechanism's inputs (defaults: the constants above).
struct InterruptionModel {
  double interruptions_per_chip_hour = kInterruptionsPerChipHour;  ///< >= 0
  Seconds restart_time{kRestartSeconds};                           ///< >= 0
  double checkpoint_write_bytes_per_s = kCheckpointWriteBytesPerS; ///< > 0
};

/// The goodput and its parts for one phase.
struct InterruptionGoodput {
  double goodput = 1;                ///< 1 - checkpoint_fraction - interruption_fraction
  double interruptions_per_hour = 0; ///< lambda = rate per chip-hour x chips
  double checkpoint_bytes = 0;       ///< weights + optimizer states saved per checkpoint
  Seconds save_stall;                ///< delta = checkpoint_bytes / write bandwidth
  Seconds checkpoint_interval;       ///< tau = young_daly_interval(delta, 1 / lambda); 0 with no interruptions
  Seconds restart_time;              ///< R
  Seconds lost_per_interruption;     ///< R + tau / 2
  double checkpoint_fraction = 0;    ///< delta / tau
  double interruption_fraction = 0;  ///< lambda x (R + tau / 2)
};

/// Young's optimal checkpoint interval sqrt(2 x save_stall x mtbf) (Young 1974, CACM 17(9);
/// Daly 2006, FGCS 22(3), whose higher-order form subtracts the stall, negligible while
/// stall << MTBF). Seconds in, seconds out. Throws InputError("save_stall" / "mtbf") unless
/// both are finite and > 0.
Seconds young_daly_interval(Seconds save_stall, Seconds mtbf);

/// Bytes one checkpoint writes: total parameters x (working weights + optimizer states)
/// bytes per parameter (gradients are not saved): 2 + 12 = 14 for mixed-precision Adam.
double checkpoint_bytes(const ModelSpec& m, const StateBytes& state);

/// The goodput of `n_chips` training under `model`, checkpointing `checkpoint_bytes` at the
/// Young/Daly interval: lambda = rate x chips; lost fraction = delta / tau + lambda (R +
/// tau / 2) = sqrt(2 delta lambda) + lambda R at tau = sqrt(2 delta / lambda). A first-order
/// model (at most one interruption per interval); a zero rate gives goodput 1. Throws
/// InputError naming "n_chips" (< 1), "interruptions_per_chip_hour" (negative),
/// "restart_s" (negative), "checkpoint_write_bytes_per_s" (not > 0), "checkpoint_bytes"
/// (negative) or "goodput" (the lost fraction reaches 1: interruptions take the whole run).
InterruptionGoodput interruption_goodput(int64_t n_chips, double checkpoint_bytes, const InterruptionModel& model = {});

}  // namespace chalk
