// `chalk calibrate`: fits a few named constants of an engine profile to a user's own
// benchmark runs (docs/simulator.md, "Calibration"). Pure functions over plain structs:
// runs (bench.h) -> RunModel (a deployment, a policy and the requests) -> predictions
// through the request simulator -> residuals log(predicted / measured) -> a bounded,
// robust Levenberg-Marquardt fit with a finite-difference Jacobian.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "chalk/calibrate/bench.h"
#include "chalk/engine/roofline.h"
#include "chalk/sim/simulator.h"

namespace chalk::calibrate {

/// The constants calibrate can fit, each one named physical quantity of the engine.
enum class Constant {
  request_overhead,   ///< sim::EnginePolicy::request_overhead_s: fixed time per request outside the GPU (s)
  host_per_sequence,  ///< HostTime::s_per_sequence: host time per running sequence per step (s)
  kernel_floor,       ///< Calibration::kernel_floor: fixed time of one dependent GPU kernel (s)
  /// Calibration::allreduce_latency: one barrier stage of the engine's custom tensor-parallel
  /// all-reduce (s; collective.h tp_all_reduce). Fitted only from runs at TP > 1.
  allreduce_latency,
};
inline constexpr int kConstants = 4;

/// A constant's name in files and output, its box bounds and its scale (the step the fit
/// measures it in), all seconds. request_overhead_s in [0, 2] (scale 10 ms),
/// host_s_per_sequence in [0, 1 ms] (scale 20 us, near vLLM's 21.5 us), kernel_floor_s in
/// [0, 100 us] (scale 5 us, near the 6.3 us of overhead.h), allreduce_latency_s in [0, 100 us]
/// (scale 5 us, near the 6.45 us of collective.h kCustomAllReduceStageLatencyUs).
struct ConstantInfo {
  Constant id;
  const char* name;
  double lower, upper, scale;
};
/// The bounds and scale of constant `c` (the table above).
const ConstantInfo& info(Constant c);
/// The constant named `name` ("request_overhead_s", "host_s_per_sequence", "kernel_floor_s",
/// "allreduce_latency_s"), or nullopt.
std::optional<Constant> constant_named(const std::string& name);

/// Values of the constants, seconds, indexed by Constant.
using Values = std::array<double, kConstants>;

/// One run ready to simulate: the replica, the engine's policy (the constants' defaults in
/// `d` and `o`), the requests and what was measured.
struct RunModel {
  BenchRun run;
  Deployment d;
  sim::SimOptions o;
  std::vector<sim::Request> requests;
};

/// The largest number of requests simulated per run (the first ones of the run; documented
/// in docs/simulator.md): a fit simulates every run some 50 times.
inline constexpr int64_t kDefaultMaxRequests = 400;

/// Builds a run's requests: min(completed, max_requests) of them, arrivals Poisson at the
/// run's rate (gamma with CV 1/sqrt(burstiness) when it is not 1; seed 1), one every 1 /
/// rate seconds for a constant-rate CSV row, or all at time 0 ("inf"), lengths from
/// input_lens/output_lens when the file kept them, else the means (totals / completed, at
/// least 1). A CSV row's cached tokens become the prefix hit rate (cached / mean prompt).
/// A client cap (max_concurrency) caps the policy's running sequences, as validate does. Throws InputError("--max-requests") below 1.
RunModel make_run_model(const BenchRun& run, const Deployment& d, const sim::SimOptions& o, int64_t max_requests);

/// The engine's own values of the constants in `m` (policy and deployment).
Values defaults_of(const RunModel& m);

/// The run's tensor-parallel degree: the largest of its resolved layout's attention, FFN
/// and expert TP (1 without the engine mechanisms, where no all-reduce is priced).
int64_t tp_of(const RunModel& m);

/// The simulated means, ms, for the metrics the run measured (unset where it measured none):
/// TTFT, TPOT, ITL, E2E (sim/metrics.h summarize).
struct Predicted {
  std::optional<double> ttft_ms, tpot_ms, itl_ms, e2el_ms;
};
/// Simulates run `m` with the constants `v` (seconds, in Constant order) in place of the
/// engine's own: the means chalk predicts for it.
Predicted predict(const RunModel& m, const Values& v);

/// log(predicted / measured) for each metric the run measured, in the order TTFT, TPOT,
/// ITL, E2E. A measured 0 or a predicted 0 is skipped.
std::vector<double> residuals(const RunModel& m, const Values& v);

struct FitOptions {
  std::vector<Constant> constants;  ///< to fit; the others keep their defaults
  /// Soft-L1 loss scale on log residuals: rho(r) = 2 f^2 (sqrt(1 + (r/f)^2) - 1); residuals
  /// beyond f (10 %) count less than squared.
  double loss_scale = 0.1;
  int max_iterations = 30;
  bool leave_one_out = true;
};

struct FittedConstant {
  Constant id = Constant::request_overhead;
  std::string name;
  double initial = 0;  ///< the engine's default, seconds
  double value = 0;    ///< fitted (or the default when not fitted), seconds
  /// One standard error, seconds: sqrt of the diagonal of s^2 (J^T W J)^-1 at the optimum,
  /// s^2 = sum w r^2 / (residuals - fitted constants); unset when not fitted or no degree of
  /// freedom is left.
  std::optional<double> sigma;
  bool fitted = false;
  bool at_bound = false;
  std::string note;  ///< why not fitted ("no run is sensitive to it")
};

/// One run's error, mean |predicted / measured - 1| over its metrics.
struct RunError {
  std::string source;
  double before = 0;  ///< with the defaults
  double after = 0;   ///< with the fit over all runs
  std::optional<double> leave_one_out;  ///< with a fit over the other runs
};

struct FitReport {
  std::vector<FittedConstant> constants;  ///< all of them, in Constant order
  std::vector<RunError> runs;
  int64_t residual_count = 0;
  int64_t iterations = 0;
  double rms_log_before = 0, rms_log_after = 0;  ///< sqrt(mean r^2)
  /// Median over runs of the error before and after (the fit over all runs), and
  /// left out (each run predicted by a fit over the others); unset when too few runs.
  double median_error_before = 0, median_error_after = 0;
  std::optional<double> median_error_loo;
  std::vector<std::string> notes;
};

/// Fits `o.constants` to `runs` from the engine's defaults (those of the first run). A constant
/// that moves no prediction by 0.1 % when changed by its scale is not fitted (kept at its
/// default, with a note); so is allreduce_latency_s when no run is tensor-parallel (TP > 1:
/// tp_of). Runs of several models, chip counts or layouts of one system are fitted together (the
/// engine's constants are theirs in common); runs of two systems are refused with
/// InputError("hardware"). Throws InputError("runs") when fewer runs than the constants to fit
/// + 1 remain, or no constant is left to fit; InputError("--fit") for an empty list.
FitReport fit(const std::vector<RunModel>& runs, const FitOptions& o);

}  // namespace chalk::calibrate
