// `chalk fleet`: several models on one cluster (issue 31 item 5): each model's traffic and SLOs
// from a fleet file, planned as `chalk plan` plans one model, on every system listed, and the
// cheapest system per model (src/sim/fleet.h; docs/simulator.md, "Fleets").
#include <iostream>

#include <fmt/format.h>

#include "arg_parse.h"
#include "chalk/hardware/price_sources.h"
#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/sim/fleet.h"
#include "commands.h"
#include "envelope.h"
#include "deployment_options.h"
#include "sim_cli.h"
#include "table.h"

namespace chalk::cli {
namespace {

struct FleetArgs {
  std::string file;
  std::string hardware = "h100-sxm,h200";
  std::optional<int64_t> budget_chips;
  std::optional<double> budget_usd_per_hour;
  std::string engine = "vllm";
  double percentile = 90;
  std::string modes = "both";
  uint64_t seed = 1;
  OutputArgs output;
};

Table fleet_table(const sim::FleetReport& f, const std::vector<SystemSpec>& systems) {
  Table t;
  t.columns = {{"model_name", "model"},
               {"system", "system"},
               {"mode", "mode"},
               {"chips", "chips"},
               {"replica_chips", "replica"},
               {"replicas", "replicas"},
               {"decode_replica_chips", "decode replica"},
               {"decode_replicas", "decode replicas"},
               {"cost_usd_per_hour", "$/hour"},
               {"ttft_at_percentile_ms", "TTFT@p ms"},
               {"tpot_at_percentile_ms", "TPOT@p ms"},
               {"meets_slo", "meets"},
               {"layout", "layout"}};
  t.set_priority({"model_name", "system", "chips", "meets_slo"}, 0);
  t.set_priority({"decode_replica_chips", "decode_replicas", "layout"}, 2);
  for (const auto& c : f.models) {
    if (!c.system) {
      t.add({c.name, Cell{}, Cell{}, Cell{}, Cell{}, Cell{}, Cell{}, Cell{}, Cell{}, Cell{}, Cell{}, std::string("no"), Cell{}});
      continue;
    }
    const auto& r = c.plans[*c.system];
    const auto& b = r.evaluated[*r.best];
    t.add({c.name, systems[*c.system].name, std::string(b.disaggregated ? "disaggregated" : "aggregated"), b.chips, b.replica_chips,
           b.replicas, b.disaggregated ? Cell(b.decode_replica_chips) : Cell{}, b.disaggregated ? Cell(b.decode_replicas) : Cell{},
           b.usd_per_hour ? Cell(*b.usd_per_hour) : Cell{},
           b.summary.ttft.count > 0 ? Cell(b.summary.ttft_at_slo_percentile_s * 1e3) : Cell{},
           b.summary.tpot.count > 0 ? Cell(b.summary.tpot_at_slo_percentile_s * 1e3) : Cell{}, std::string("yes"), b.layout});
  }
  return t;
}

void run_fleet(const FleetArgs& a) {
  if (a.file.empty()) throw InputError("file", "give a fleet file (docs/file-formats.md, \"Fleets\")");
  const auto rows = sim::parse_fleet_csv(read_file(a.file), a.file);
  if (!a.budget_chips && !a.budget_usd_per_hour) throw InputError("--budget-chips", "state a chip budget per model or --budget-usd-per-hour");
  if (a.budget_chips && (*a.budget_chips < 1 || *a.budget_chips > sim::kMaxPlanChips)) {
    throw InputError("--budget-chips", fmt::format("must be in 1..{}, got {}", sim::kMaxPlanChips, *a.budget_chips));
  }
  if (a.budget_usd_per_hour && !(*a.budget_usd_per_hour > 0)) {
    throw InputError("--budget-usd-per-hour", fmt::format("must be a positive number, got {:g}", *a.budget_usd_per_hour));
  }
  if (!(a.percentile >= 50 && a.percentile <= 99.9)) {
    throw InputError("--slo-percentile", "must be in [50, 99.9], got " + format_number(a.percentile, 4));
  }
  std::vector<SystemSpec> systems;
  for (const auto& h : hardware_list(a.hardware)) systems.push_back(load_system(h));
  sim::PlanOptions o;
  o.chip_budget = a.budget_chips.value_or(0);
  o.usd_per_hour_budget = a.budget_usd_per_hour;
  o.policy = sim::engine_policy(a.engine);
  apply_modes(a.modes, o.aggregated, o.disaggregated);
  std::vector<sim::FleetModel> models;
  uint64_t seed = a.seed;
  for (const auto& r : rows) {
    sim::FleetModel m;
    m.name = r.model;
    m.model = load_model(r.model);
    sim::TrafficSpec t;
    t.rate_per_s = r.rate_per_s;
    t.requests = r.requests;
    t.input = r.input;
    t.output = r.output;
    t.seed = seed++;  // each model's arrivals drawn on their own
    m.traffic = sim::generate_traffic(t);
    m.slo = sim::Slo{r.ttft_slo_s, r.tpot_slo_s, a.percentile};
    models.push_back(std::move(m));
  }
  const DeploymentOptions base = options_from(DeploymentArgs{});
  const sim::FleetReport f = sim::plan_fleet(models, systems, base, o);
  if (!f.all_met) {
    command_outcome() = {kExitNoDeployment, "fleet: " + f.why_none + " (exit status " + std::to_string(kExitNoDeployment) + ")"};
  }
  const Table t = fleet_table(f, systems);
  std::vector<std::string> warnings;
  // The cheapest system per model is a choice between chips whose prices may come from
  // different sources (review 5 M3).
  if (std::string mixed = mixed_price_sources_warning(systems); !mixed.empty()) warnings.push_back(std::move(mixed));
  for (std::size_t i = 0; i < f.models.size(); ++i) {
    for (std::size_t k = 0; k < systems.size(); ++k) {
      if (!f.models[i].problems[k].empty()) warnings.push_back(f.models[i].name + " on " + systems[k].name + ": " + f.models[i].problems[k]);
    }
  }
  if (a.output.csv) {
    print_csv(std::cout, t, warnings);
    return;
  }
  if (a.output.json) {
    nlohmann::json j;
    j["engine"] = sim::release_name(o.policy);
    j["percentile"] = a.percentile;
    j["chip_budget"] = o.chip_budget;
    j["usd_per_hour_budget"] = a.budget_usd_per_hour ? nlohmann::json(*a.budget_usd_per_hour) : nlohmann::json(nullptr);
    j["all_met"] = f.all_met;
    j["chips"] = f.chips;
    j["cost_usd_per_hour"] = f.usd_per_hour ? nlohmann::json(*f.usd_per_hour) : nlohmann::json(nullptr);
    j["why_none"] = f.why_none;
    j["rows"] = to_json(t);
    j["warnings"] = warnings;
    print_json(std::cout, envelope("fleet", std::move(j), column_keys(t)));
    return;
  }
  std::cout << fmt::format("chalk fleet: {} models, each on the cheapest of {} that meets its own SLO at p{} in its own simulation; "
                           "models do not share chips (docs/simulator.md, Fleets)\n",
                           f.models.size(), a.hardware, fmt::format("{:g}", a.percentile));
  for (const auto& w : warnings) std::cout << "warning     " << w << '\n';
  std::cout << '\n';
  print_table(std::cout, t);
  if (f.all_met) {
    std::cout << fmt::format("\nfleet       {}{}\n", counted(f.chips, "chip"),
                             f.usd_per_hour ? fmt::format(", ${}/hour", format_number(*f.usd_per_hour, 4)) : std::string(" (a system has no price)"));
  } else {
    std::cout << "\nno fleet: " << f.why_none << '\n';
  }
}

}  // namespace

void register_fleet(CLI::App& app, Action& run) {
  static thread_local FleetArgs a;
  a = FleetArgs{};
  auto* cmd = app.add_subcommand("fleet", "Several models on one cluster: each model's cheapest deployment within its own TTFT/TPOT SLOs, "
                                          "planned as `chalk plan` does, on the cheapest of the systems listed");
  cmd->add_option("file", a.file,
                  "Fleet CSV: header model,rate_per_s,requests,input,output,ttft_slo_ms,tpot_slo_ms, one model per line "
                  "(docs/file-formats.md, \"Fleets\")");
  cmd->add_option("-H,--hardware", a.hardware, "Systems to plan each model on: comma list (catalog names or hardware files)")
      ->capture_default_str();
  cmd->add_option("--budget-chips", a.budget_chips, "Chips at most for each model's deployment");
  cmd->add_option("--budget-usd-per-hour", a.budget_usd_per_hour, "Dollars per hour at most for the whole fleet");
  cmd->add_option("--engine", a.engine, "Serving engine simulated: vllm, sglang, trtllm (optionally with a release, vllm-0.10)")
      ->capture_default_str();
  cmd->add_option("--slo-percentile", a.percentile, "Percentile at which every model's TTFT and TPOT are checked")->capture_default_str();
  cmd->add_option("--modes", a.modes, "both, aggregated or disaggregated")->capture_default_str();
  cmd->add_option("--seed", a.seed, "Seed of the first model's arrivals (the next model takes the next seed)")->capture_default_str();
  cmd->footer(fmt::format("Exit status: 0 when every model has a deployment that meets its SLO (and the fleet is within the dollar "
                          "budget); {} when not (the report is printed all the same); 2 for bad input.",
                          kExitNoDeployment));
  add_output_options(*cmd, a.output);
  cmd->callback([&run] { run = [] { run_fleet(a); }; });
}

}  // namespace chalk::cli
