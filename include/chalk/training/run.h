// Whole training runs: a token (or FLOP) budget on a cluster -> wall-clock days, chip-hours,
// dollars and energy, summed over phases (pre-training, long-context extension, RL).
// Formulas and sources in docs/training-runs.md; docs/sources/training-and-systems.md 1.1-1.3.
//
// The step's speed is an input: a model FLOP utilization (MFU, PaLM App. B) or a measured or
// modelled step time (the training-step analysis, issue 13, can supply the latter). Energy
// counts each chip at its rated power (TDP) times a power usage effectiveness (PUE).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "chalk/base/dtype.h"
#include "chalk/base/units.h"
#include "chalk/hardware/hardware.h"
#include "chalk/model/model.h"
#include "chalk/training/goodput.h"
#include "chalk/training/plan.h"

namespace chalk {

/// Training FLOPs per token at sequence length `sequence_length`: 3 x forward, forward =
/// 2 x active_matmul + attention. By default (`causal`) attention covers the tokens before
/// each one (prefill_flops(m, T, 0) / T), the model FLOPs of `chalk train step`'s MFU and of
/// DeepSeek's 38.94% "causal" MFU (ISCA'25 Table 4); `causal = false` counts the whole
/// sequence for every token (PaLM App. B's 12 L H Q T for multi-head attention, the
/// convention of PaLM's 46.2%, Megatron's and DeepSeek's 43.73% "non-causal" MFU). For an
/// MoE, active_matmul counts the top-k experts (reference 1.3). Throws InputError unless
/// sequence_length >= 1 (field "sequence_length").
FlopsPerToken training_flops_per_token(const ModelSpec& m, int64_t sequence_length, bool causal = true);

/// One phase of a run. Give exactly one of `tokens` or `flops`, and exactly one of `mfu`
/// or (`step_time`, `tokens_per_step`).
struct RunPhase {
  std::string name = "pre-training";
  double tokens = 0;        ///< D, training tokens (0 = use flops)
  double flops = 0;         ///< C, training FLOPs (0 = use tokens): D = C / training_flops_per_token
  int64_t sequence_length = 4096;
  int64_t n_chips = 0;      ///< chips training concurrently
  /// Model FLOP utilization against the chip's dense peak at `peak_precision`.
  std::optional<double> mfu;
  /// Alternatively, one optimizer step's time and the tokens it consumes (global batch x
  /// sequence length): tokens/s = tokens_per_step / step_time.
  std::optional<Seconds> step_time;
  double tokens_per_step = 0;
  /// Fraction of wall-clock time spent on steps that count (1 = no restarts, rollbacks,
  /// checkpoint stalls, evaluation or hardware failures). Wall clock = ideal / goodput.
  /// Unset: interruption_goodput (goodput.h) of the phase's chips under RunInputs'
  /// `interruptions`, checkpointing the model's weights and optimizer states.
  std::optional<double> goodput;
};

/// The cluster and the run's phases.
struct RunInputs {
  ModelSpec model;
  SystemSpec system;
  /// The peak an MFU is measured against: bf16 by default, the convention of PaLM and of
  /// DeepSeek's reported MFU even for FP8 training (reference 1.3, pitfalls).
  MatmulPrecision peak_precision = MatmulPrecision::bf16;
  /// Attention FLOPs behind the MFU (training_flops_per_token): causal by default, as in
  /// `chalk train step`; false for PaLM's non-causal convention.
  bool causal_attention_flops = true;
  std::optional<UsdPerSecond> price_per_chip;  ///< default: the system's catalog price
  double chip_power_w = 0;  ///< rated power per chip, W; 0 = unknown (no energy figure)
  double pue = 1.0;         ///< power usage effectiveness: facility / IT energy (1 = chips only)
  /// The interruption model behind a phase's default goodput (goodput.h's constants).
  InterruptionModel interruptions;
  /// Bytes per parameter a checkpoint saves: weights + optimizer (default 2 + 12, Adam).
  StateBytes checkpoint_state;
  std::vector<RunPhase> phases;
};

/// What one phase costs.
struct PhaseReport {
  std::string name;
  int64_t n_chips = 0;
  int64_t sequence_length = 0;
  double tokens = 0;                    ///< D
  double flops = 0;                     ///< D x training_flops_per_token
  FlopsPerToken flops_per_token;
  double mfu = 0;                       ///< given, or implied by the step time
  std::string speed_from;               ///< "mfu" or "step_time"
  TokensPerSecond tokens_per_s;         ///< cluster throughput while stepping
  double goodput = 1;                   ///< given, or goodput_parts->goodput
  std::optional<InterruptionGoodput> goodput_parts;  ///< set when the goodput is modelled, not given
  Seconds wall_clock;                   ///< D / tokens_per_s / goodput
  double chip_hours = 0;                ///< n_chips x wall_clock in hours
  std::optional<Usd> cost;              ///< chip_hours x price per chip-hour
  std::optional<double> energy_mwh;     ///< chip_hours x chip_power_w x PUE / 1e6
};

/// The run: each phase and the sums.
struct RunReport {
  std::vector<PhaseReport> phases;
  double tokens = 0, flops = 0, chip_hours = 0;
  Seconds wall_clock;  ///< phases run one after another
  std::optional<Usd> cost;
  std::optional<double> energy_mwh;
  std::optional<UsdPerSecond> price_per_chip;
  std::string price_source;
  double chip_power_w = 0, pue = 1;
  FlopsPerSecond peak_per_chip;
};

/// Prices a run: per phase tokens/s = mfu x n x peak / flops_per_token (or tokens_per_step /
/// step_time), wall clock = D / tokens/s / goodput (given, or interruption_goodput's), chip-hours = n x wall clock, dollars =
/// chip-hours x price, energy = chip-hours x power x PUE. Throws InputError naming
/// "phases[i].<field>" for a phase without chips, with both or neither of tokens and flops
/// or of mfu and step_time, an mfu outside (0, 1], a goodput outside (0, 1], a sequence
/// length < 1; "phases[i].goodput" when interruptions take a phase's whole wall clock;
/// interruption_goodput's field for a bad `interruptions` (negative rate or restart); "pue" below 1; "chip_power_w" negative; "phases" when empty; and
/// "peak_precision" when the chip has no such peak.
RunReport plan_run(const RunInputs& in);

}  // namespace chalk
