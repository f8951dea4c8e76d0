// A held-out check of `chalk calibrate` (issue 29's goal: "after calibrate on half of a user's
// runs, at most 5% on the other half"): fit on one half of the runs, predict the other half with
// the engine's defaults and with the fitted constants (docs/simulator.md 6.1, "Held out").
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "chalk/calibrate/fit.h"

namespace chalk::calibrate {

/// How `--holdout` splits the runs; `half` is the only split.
enum class Holdout { none, half };
/// The split named `name` ("half"), or nullopt.
std::optional<Holdout> holdout_named(const std::string& name);

/// The deployment a run ran on, the key the split groups runs by: "MODEL on HARDWARE, N chips,
/// TP T, ENGINE" (the resolved model and system names, the replica's chips, tp_of and the
/// policy's name, which carries the release: "vllm-0.15.1").
std::string deployment_of(const RunModel& m);

/// Indices into the runs: those the constants are fitted on and those held out.
struct HoldoutSplit {
  std::vector<std::size_t> fit, held_out;
};

/// The deterministic half split: the runs of each deployment (deployment_of) ordered by request
/// rate (ties by source), then alternately to the fit and to the held-out half, the first to
/// the fit: runs at rates 5, 6, 8, 10, 20 fit on 5, 8, 20 and hold out 6 and 10 (a deployment of
/// n runs fits ceil(n / 2)). Every deployment lands in both halves when it has 2 runs or more.
/// Both lists are in the runs' order.
HoldoutSplit split_half(const std::vector<RunModel>& runs);

/// One metric's errors over the held-out runs: |predicted / measured - 1| of each held-out run
/// that measured it, with the defaults and with the constants fitted on the other half.
struct MetricHoldout {
  /// The measurement files' metric names: "ttft_ms", "tpot_ms", "itl_ms", "e2e_s"; "all" for
  /// every (run, metric) pair together.
  std::string metric;
  int64_t count = 0;               ///< (run, metric) pairs
  double median_before = 0;        ///< median |error|, the engine's defaults (fraction)
  double median_after = 0;         ///< median |error|, the constants fitted on the fit half (fraction)
};

/// A run left out of the fit and of the held-out medians: saturated at the engine's defaults.
struct SaturatedRun {
  std::string source;
  double arrival_req_per_s = 0;   ///< sim::Overload::arrival_req_per_s of the run's simulated requests
  double capacity_req_per_s = 0;  ///< sim::Overload::capacity_req_per_s (saturated_capacity when measured)
  std::string note;               ///< "saturated at the defaults: arrivals X req/s > capacity Y req/s; ..."
};

/// The run `m` when `chalk simulate` would call it OVERLOADED at the engine's defaults
/// (sim::overload_of with the replica's sim::saturated_capacity, as cmd_simulate does:
/// TTFT growing by more than sim::kOverloadGrowth over the later half of a busy run, or
/// arrivals above the measured capacity by more than its uncertainty); nullopt otherwise.
/// Such a run's queue grows for the whole measured run: a simulation cut at --max-requests
/// cannot match its latencies, and fitting it drags every constant to lengthen that queue.
std::optional<SaturatedRun> saturated_at_defaults(const RunModel& m);

struct HoldoutReport {
  /// Indices into the runs given (saturated runs in neither list).
  HoldoutSplit split;
  /// The runs left out as saturated at the defaults (saturated_at_defaults), in the runs' order;
  /// empty with keep_saturated.
  std::vector<SaturatedRun> saturated;
  /// The fit over the fit half alone (its constants, its runs' errors and leave-one-out).
  FitReport fit;
  /// Each held-out run's mean |error| over its metrics: `before` with the defaults, `after`
  /// with the fit's constants (leave_one_out unset).
  std::vector<RunError> held_out;
  /// Per metric in the order TTFT, TPOT, ITL, E2E (the metrics some held-out run measured),
  /// then "all".
  std::vector<MetricHoldout> metrics;
};

/// Leaves out the runs saturated at the defaults (saturated_at_defaults; kept with
/// `keep_saturated`), splits the rest by `split_half`, fits `o.constants` on the fit half (fit(), with its refusals)
/// and predicts the held-out half: each run with its own defaults, then with the fitted
/// constants in place of those the fit determined. Throws InputError("--holdout") when fewer
/// than 2 runs are given, when no run is held out (every deployment has a single run), and for
/// fit()'s refusals of too few runs, naming the half ("half fits on 1 of the 2 runs: 1 run
/// cannot determine 1 constant ..."), and when every run is saturated.
HoldoutReport fit_holdout(const std::vector<RunModel>& runs, const FitOptions& o, bool keep_saturated = false);

}  // namespace chalk::calibrate
