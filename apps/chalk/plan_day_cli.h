// `chalk plan --rate-curve FILE`: a day planned hour by hour (src/sim/day_plan.h;
// docs/simulator.md, "Planning a day"): replicas by hour and the cost of the day.
#pragma once

#include <string>

#include "chalk/sim/day_plan.h"
#include "chalk/sim/policy.h"
#include "deployment_options.h"
#include "sim_cli.h"

namespace chalk::cli {

/// What `plan` has resolved from its flags before it plans.
struct DayPlanInputs {
  const ModelSpec& model;
  const SystemSpec& system;
  const DeploymentOptions& base;
  const sim::PlanOptions& options;
  const sim::EnginePolicy& policy;
  const PolicyArgs& policy_args;
  const TrafficArgs& traffic;
  const OutputArgs& output;
  double gpu_memory_utilization = 0;
  std::string curve_file;  ///< --rate-curve
};

/// Checks that no flag that states one traffic (--rate, --rate-per-min, --trace, --shared-
/// prefix, --sessions) or one deployment's files (--launch-dir) comes with --rate-curve
/// (InputError naming it), reads the curve (InputError naming the file and line; a trace with
/// a time of day, Azure or BurstGPT, gives it by hour: sim::rate_curve_from_trace), plans each
/// of its rates and prints the hours (text, --csv or --json: rows of `hour`,
/// `request_rate_per_s` and the chosen deployment; `cost_usd_per_day`, `chip_hours`). Sets
/// the exit status kExitNoDeployment when some rate has no deployment meeting the SLO.
void check_day_flags(const TrafficArgs& t, bool launch_dir);
void run_plan_day(const DayPlanInputs& in);

}  // namespace chalk::cli
