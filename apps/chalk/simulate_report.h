// `chalk simulate`'s results and how they are reported (cmd_simulate_report.cc): the JSON
// envelope and plot page, the CSV, and the text lines above the table. Split from
// cmd_simulate.cc by concept: cmd_simulate.cc resolves the deployment and runs the modes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chalk/sim/keep_up.h"
#include "deployment_options.h"
#include "energy_cli.h"
#include "layout_choice.h"
#include "sim_cli.h"
#include "simulate_args.h"
#include "simulate_keep_up.h"
#include "simulate_rate.h"
#include "table.h"

namespace chalk::cli {

/// One mode simulate ran: aggregated, disaggregated, or (--compare) aggregated on the same chips.
struct SimulateResult {
  std::string name;
  std::string layout;
  int64_t replicas = 0, decode_replicas = 0;  ///< aggregated: the replicas; disaggregated: each pool's
  int64_t chips_per_replica = 0, prefill_chips_per_replica = 0;  ///< decode (or aggregated) replica; prefill pool's
  std::string prefill_hardware, hardware;  ///< disaggregated: each pool's system (empty when aggregated)
  std::optional<double> usd_per_hour;      ///< sum over pools of chips x price; unset when a pool's chip is unpriced
  sim::ClusterRun run;
  nlohmann::json prefix_cache;  ///< prefix_cache_json(run)
  nlohmann::json kv_offload;    ///< kv_offload_json(run)
  nlohmann::json lora;          ///< lora_json(run)
  sim::SimSummary summary;
  sim::Overload overload;
  sim::KeepUp keep_up;  ///< whether the run kept up with its traffic (sim::keep_up_of)
  std::optional<sim::Capacity> capacity;  ///< aggregated: the pool's saturated capacity (sim::saturated_capacity)
  std::optional<sim::ServingEnergy> energy;
  std::optional<ChipPower> power, prefill_power;  ///< mixed chips: each pool's own (else the --hardware chip's)
};

/// Everything simulate reports, by reference into run_simulate's flow: the arguments, the
/// (busiest stage's) deployment and its pipeline, the notes on what was chosen (replica, layout,
/// the size x count for a rate), the traffic and options run, the energy assumptions, and the
/// modes' results with their summary table (`t`, its SLO column already blank without an SLO)
/// and warnings.
struct SimulateReport {
  const SimulateArgs& a;
  const Deployment& agg;
  const std::optional<SimPipeline>& pipe;
  int64_t stages;
  const std::optional<ReplicaNote>& note;
  const std::optional<LayoutNote>& layout_note;
  const std::optional<RateChoice>& rate_choice;  ///< aggregated: the replicas; disaggregated: the prefill pool
  const std::optional<RateChoice>& decode_rate_choice;  ///< disaggregated: the decode pool
  const std::string& replicas_line;
  const std::string& asked;  ///< the rate as given ("--rate 5 req/s"), "" without one
  /// --lora without max-loras and a rate to size for: each value's sizing (empty otherwise),
  /// and the index of the one run.
  const std::vector<MaxLorasSizing>& lora_tried;
  std::size_t lora_chosen;
  const std::vector<sim::Request>& reqs;
  const sim::SimOptions& so;
  const sim::Slo& slo;
  double utilization;
  const std::optional<ChipPower>& power;
  const Facility& facility;
  bool mixed;
  const std::vector<SimulateResult>& results;
  const Table& t;
  const std::vector<std::string>& warnings;
};

/// Prints the report as --json, --csv or text asks (and writes --plot's page).
void print_simulate(const SimulateReport& rep);

/// `chalk simulate --plot FILE` (cmd_simulate_plot.cc): writes the HTML page of `data`.
void write_simulate_plot(const std::string& path, const nlohmann::json& data);

}  // namespace chalk::cli
