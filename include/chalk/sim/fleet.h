// Several models on one cluster (issue 31 item 5; docs/simulator.md, "Fleets"): each model
// with its own traffic and SLOs, planned by plan_deployment on each candidate system, and the
// cheapest system that meets that model's SLO chosen per model. Models do not share chips:
// vLLM, SGLang and TensorRT-LLM serve one model per engine process, and two processes on one
// GPU time-share it (CUDA MPS or not) in a way chalk does not simulate, so a fleet's cost is
// the sum of its models' own deployments.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chalk/sim/plan.h"
#include "chalk/sim/traffic.h"

namespace chalk::sim {

/// One line of a fleet file: a model, its traffic and its SLO.
struct FleetRow {
  std::string model;          ///< a catalog name, an HF repo id or a config path (the CLI resolves it)
  double rate_per_s = 1;      ///< Poisson arrivals per second of this model's traffic (> 0)
  int64_t requests = 1000;    ///< requests simulated (1..10,000,000)
  LengthDist input, output;   ///< prompt and answer lengths (traffic.h's syntax: "2048", "uniform:A:B", "lognormal:M:S")
  std::optional<double> ttft_slo_s, tpot_slo_s;  ///< at least one
};

/// Reads a fleet CSV: the header `model,rate_per_s,requests,input,output,ttft_slo_ms,tpot_slo_ms`,
/// then one model per line; `requests` may be empty (1,000), and one of the two SLO columns
/// (milliseconds, > 0). Lines starting with '#' are skipped. `source` names the file in
/// errors. Throws InputError naming the line, the column, the text and what was expected
/// ("fleet.csv: line 3: rate_per_s: expected a number > 0, got 'fast'"), for a model listed
/// twice, and for a file with no model.
std::vector<FleetRow> parse_fleet_csv(std::string_view text, const std::string& source);

/// A model of a fleet, ready to plan: its spec and its traffic (generate_traffic of its row).
struct FleetModel {
  std::string name;            ///< as the fleet file names it
  ModelSpec model;
  std::vector<Request> traffic;
  Slo slo;
};

/// One model's outcome.
struct FleetChoice {
  std::string name;
  /// Per candidate system (in the order given): its plan, or the reason it could not be
  /// planned there (plan_deployment's InputError: the model does not fit the budget...).
  std::vector<PlanReport> plans;
  std::vector<std::string> problems;  ///< parallel to plans: "" when planned
  /// The chosen system (index into the systems and plans) and its deployment
  /// (plans[system].best); nullopt when no system met the SLO.
  std::optional<std::size_t> system;
  std::optional<double> usd_per_hour;  ///< the chosen deployment's cost (nullopt without a price)
  int64_t chips = 0;
};

struct FleetReport {
  std::vector<FleetChoice> models;
  bool all_met = false;                 ///< every model has a deployment meeting its SLO
  int64_t chips = 0;                    ///< summed over the models' chosen deployments
  std::optional<double> usd_per_hour;   ///< summed; nullopt when one chosen system has no price
  std::string why_none;                 ///< when not all_met or over the dollar budget: which model and why
};

/// Plans every model on every system with `o` (its slo replaced by each model's own; its
/// chip budget, or without one its dollar budget, caps each model's deployment) and chooses, per model, the system whose best
/// deployment costs the least per hour (systems without a price: the fewest chips, after
/// every priced one). Each model's choice is independent of the others', so the fleet's
/// cheapest deployment is the sum of the models' own cheapest; `o.usd_per_hour_budget`, when
/// set, bounds the fleet's sum (all_met false and why_none naming the total when it is
/// exceeded), not each model. plan_deployment's InputErrors for one model on one system (a
/// budget below the smallest replica that holds it, a dollar budget on an unpriced chip) are
/// kept in that choice's problems. Throws InputError("models") for no model or a model with
/// no SLO target, and ("hardware") for no system.
FleetReport plan_fleet(const std::vector<FleetModel>& models, const std::vector<SystemSpec>& systems, const DeploymentOptions& base,
                       const PlanOptions& o);

}  // namespace chalk::sim
