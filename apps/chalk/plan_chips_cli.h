// `chalk plan -H A,B,...`: the planner choosing chip types as well as counts
// (src/sim/plan_chips.h; docs/simulator.md, "Planning over chip types").
#pragma once

#include <string>
#include <vector>

#include "chalk/sim/plan.h"
#include "deployment_options.h"
#include "energy_cli.h"
#include "sim_cli.h"
#include "table.h"

namespace chalk::cli {

/// The plan's table of candidates `which` of `evaluated` (cmd_plan.cc): one row each, the
/// columns of docs/output-schema.md's plan rows; `with_hardware` adds `prefill_hardware`
/// and `decode_hardware` (the pools' systems) after `mode`.
Table plan_candidates_table(const std::vector<sim::PlanCandidate>& evaluated, const std::vector<std::size_t>& which, bool with_hardware = false);

/// What `plan` has resolved from its flags before it plans one chip type.
struct PlanChipsInputs {
  const ModelSpec& model;
  const std::vector<std::string>& hardware;  ///< -H's comma list (hardware_list), two or more
  const DeploymentOptions& base;
  const sim::PlanOptions& options;
  const sim::EnginePolicy& policy;
  const TrafficArgs& traffic;
  const EnergyArgs& energy;
  const OutputArgs& output;
  const std::vector<sim::Request>& requests;
  const std::string& model_arg;   ///< -m as typed: the launch files' model (plan_outputs.h launch_target)
  const std::string& launch_dir;  ///< --launch-dir ("": print the launch files only)
};

/// Plans every (prefill chip, decode chip) pair of the systems listed (sim::plan_chip_types)
/// and prints the choice, the runner-up and each pair's cheapest deployment (text, --csv or
/// --json: `best`, `next_best`, `rows` one per pair that met the SLO by cost, `chip_pairs` with
/// every pair's outcome, `hardware_choices`, `lora`), and the chosen deployment's launch files
/// (sim::launch_files on one chip type, sim::mixed_launch_files on a mixed pair; JSON
/// `launch`), written under `launch_dir` when given. Throws InputError naming the flag
/// (--hardware, --budget-chips, --budget-usd-per-hour, --price-usd-per-chip-hour,
/// --chip-power-w, --replica-chips, --launch-dir); sets the exit status kExitNoDeployment when no pair
/// meets the SLO.
void run_plan_chips(const PlanChipsInputs& in);

}  // namespace chalk::cli
