// `chalk plan -H A,B,...`: the planner choosing chip types as well as counts
// (plan_chips_cli.h; src/sim/plan_chips.h; docs/simulator.md, "Planning over chip types").
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "chalk/base/error.h"
#include "chalk/hardware/price_sources.h"
#include "chalk/io/io.h"
#include "chalk/sim/plan_chips.h"
#include "commands.h"
#include "envelope.h"
#include "plan_chips_cli.h"
#include "plan_outputs.h"
#include "request_budget.h"
#include "table.h"

namespace chalk::cli {
namespace {

/// The flag a library field stands for (sim::plan_chip_types, plan_pools).
std::string flag_of(const std::string& field) {
  if (field == "hardware") return "--hardware";
  if (field == "chips") return "--budget-chips";
  if (field == "usd_budget") return "--budget-usd-per-hour";
  if (field == "price_per_chip") return "--price-usd-per-chip-hour";
  if (field == "replica_chips") return "--replica-chips";
  if (field == "modes") return "--modes";
  return field;
}

const sim::PlanCandidate& best_of(const sim::ChipPairPlan& p) { return p.report.evaluated[*p.report.best]; }

std::string pair_name(const sim::ChipPairPlan& p) { return p.prefill_hardware + " prefill, " + p.decode_hardware + " decode"; }

/// One line per pair: its cheapest deployment meeting the SLO, or why it has none.
std::string pair_outcome(const sim::ChipPairPlan& p) {
  if (!p.refused.empty()) return "refused: " + p.refused;
  if (!p.report.best) return p.report.why_none;
  const auto& c = best_of(p);
  return fmt::format("{} chip{} ({}), ${}/hour", c.chips, c.chips == 1 ? "" : "s", c.disaggregated ? "disaggregated" : "aggregated", format_number(*c.usd_per_hour, 4));
}

}  // namespace

void run_plan_chips(const PlanChipsInputs& in) {
  if (in.energy.chip_power_w) {
    throw InputError("--chip-power-w", "states one chip's power; with several chip types in --hardware each takes its catalog power");
  }
  std::vector<SystemSpec> systems;
  std::vector<std::optional<ChipPower>> powers;
  for (const auto& h : in.hardware) {
    systems.push_back(load_system(h));
    powers.push_back(chip_power_from(in.energy, systems.back()));
  }
  sim::ChipChoicePlan p;
  try {
    // Review 9 L4: several chip types run a plan per pair (559 s for three, nothing shown).
    // On a terminal, stderr says how many pairs up front and each pair as it ends; never
    // under chalk web (a request budget) or into a file.
    sim::PairProgress progress;
    if (isatty(STDERR_FILENO) && current_budget() == nullptr) {
      const auto start = std::chrono::steady_clock::now();
      progress = [start](const sim::ChipPairPlan& x, std::size_t done, std::size_t total) {
        if (done == 1) std::cerr << fmt::format("plan: {} pairs of prefill and decode chips to plan, one after another\n", total);
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::cerr << fmt::format("plan: pair {} of {} ({} prefill, {} decode): {}, {} s so far\n", done, total, x.prefill_hardware,
                                 x.decode_hardware, x.refused.empty() ? counted(static_cast<double>(x.report.evaluated.size()), "deployment") : "refused",
                                 format_number(s, 3));
      };
    }
    p = sim::plan_chip_types(in.model, systems, in.base, in.requests, in.options, powers, progress);
  } catch (const InputError& e) {
    throw InputError(flag_of(e.field()), std::string(e.what()).substr(e.field().size() + 2));
  }
  const auto system = [&](const std::string& name) -> const SystemSpec& {
    return *std::find_if(systems.begin(), systems.end(), [&](const SystemSpec& s) { return s.name == name; });
  };
  // Whether the offload tiers pay, pair by pair: the same pair planned without them, at the
  // max-loras it chose (plan's own verdict, offload_verdict, on each pair).
  std::vector<nlohmann::json> verdicts(p.pairs.size());
  if (in.options.kv_offload.enabled()) {
    for (std::size_t k = 0; k < p.pairs.size(); ++k) {
      const sim::ChipPairPlan& x = p.pairs[k];
      if (!x.refused.empty()) continue;
      sim::PlanOptions none = in.options;
      none.kv_offload = {};
      if (x.max_loras > 0) {
        none.lora.max_loras = x.max_loras;
        none.lora.max_loras_stated = true;
      }
      verdicts[k] = offload_verdict(x.report, sim::plan_pools(in.model, system(x.prefill_hardware), system(x.decode_hardware), in.base, in.requests, none),
                                    in.options.kv_offload);
    }
  }
  if (!p.best) {
    command_outcome() = {kExitNoDeployment, "plan: no pair of chip types has a deployment that meets the SLO (exit status " +
                                                std::to_string(kExitNoDeployment) + ")"};
  }
  // Each pair's best, by cost: the choice first, then the runner-up, then the rest.
  std::vector<sim::PlanCandidate> bests;
  std::vector<std::size_t> order;
  for (std::size_t k = 0; k < p.pairs.size(); ++k) {
    if (p.pairs[k].refused.empty() && p.pairs[k].report.best) order.push_back(k);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const auto key = [&](std::size_t k) { return k == p.best ? 0 : k == p.runner_up ? 1 : 2; };
    if (key(a) != key(b)) return key(a) < key(b);
    return *best_of(p.pairs[a]).usd_per_hour < *best_of(p.pairs[b]).usd_per_hour;
  });
  std::vector<std::size_t> all;
  for (const std::size_t k : order) {
    bests.push_back(best_of(p.pairs[k]));
    all.push_back(all.size());
  }
  const Table rows = plan_candidates_table(bests, all, true);
  const Table chosen = plan_candidates_table(bests, p.best ? std::vector<std::size_t>{0} : std::vector<std::size_t>{}, true);
  const Table second = plan_candidates_table(bests, p.runner_up ? std::vector<std::size_t>{1} : std::vector<std::size_t>{}, true);
  std::vector<std::string> warnings, searched;
  int64_t evaluated = 0;
  for (const auto& x : p.pairs) {
    for (const auto& w : x.report.warnings) {
      if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
    }
    for (const auto& line : x.report.searched) searched.push_back(pair_name(x) + ": " + line);
    if (!x.refused.empty()) searched.push_back(pair_name(x) + ": refused: " + x.refused);
    evaluated += static_cast<int64_t>(x.report.evaluated.size());
  }
  if (const auto w = context_warning(in.model, in.requests)) warnings.push_back(*w);
  for (const auto& w : trace_warnings(in.traffic)) warnings.push_back(w);
  // Chips whose prices come from different sources (review 5 M3: H100 $2.35 SemiAnalysis's
  // index beside H200 $4.54 Spheron's list): the choice carries the sources' spread too.
  if (std::string mixed = mixed_price_sources_warning(systems); !mixed.empty()) warnings.push_back(std::move(mixed));
  // A dollar budget alone: each pair's chips are what it buys (sim::plan_pools); the most of them.
  int64_t chip_budget = in.options.chip_budget;
  for (const auto& x : p.pairs) chip_budget = std::max(chip_budget, x.report.chip_budget);
  const std::string dollars = in.options.usd_per_hour_budget ? " and $" + format_number(*in.options.usd_per_hour_budget, 4) + " per hour" : "";
  const std::string why_none = p.best ? "" : "no pair of " + fmt::format("{}", fmt::join(in.hardware, ", ")) + " meets the SLO within " +
                                                 std::to_string(chip_budget) + " chips" + dollars;
  // The choice's launch files: each pool on its own chip (sim::mixed_launch_files).
  std::vector<sim::EngineLaunch> launches;
  const sim::PlanCandidate* chosen_c = p.best ? &best_of(p.pairs[*p.best]) : nullptr;
  if (chosen_c != nullptr) {
    const auto target = [&](const std::string& name) { return launch_target(in.model_arg, in.model, system(name), in.base, in.policy, in.requests, in.options.lora, in.options.speculation); };
    const auto& pair = p.pairs[*p.best];
    launches = pair.prefill_hardware == pair.decode_hardware
                   ? sim::launch_files(*chosen_c, target(pair.decode_hardware))
                   : sim::mixed_launch_files(*chosen_c, target(pair.prefill_hardware), target(pair.decode_hardware));
  }
  const int64_t written = in.launch_dir.empty() ? 0 : write_launch_files(in.launch_dir, launches);
  // The chosen pair's max-loras search (sim::plan_chip_types runs one per pair).
  std::optional<sim::LoraPlan> search;
  sim::LoraSpec lora_spec = in.options.lora;
  if (p.best && p.pairs[*p.best].max_loras > 0) {
    search.emplace();
    search->max_loras = lora_spec.max_loras = p.pairs[*p.best].max_loras;
    search->searched = true;
    search->tried = p.pairs[*p.best].max_loras_tried;
  }
  const nlohmann::json lora = plan_lora_json(lora_spec, search, chosen_c);
  const nlohmann::json offload = p.best ? verdicts[*p.best] : nlohmann::json(nullptr);
  if (in.output.csv) {
    print_csv(std::cout, rows, warnings);
    return;
  }
  const sim::Slo& slo = in.options.slo;
  if (in.output.json) {
    nlohmann::json j;
    j["model"] = describe_json(make_deployment(in.model, systems.front(), in.base))["model"];
    j["hardware"] = nullptr;  // several systems: each row names its pools'
    j["hardware_choices"] = in.hardware;
    j["traffic"] = describe_traffic(in.traffic, in.requests);
    j["engine"] = sim::release_name(in.policy);
    j["slo"] = {{"ttft_slo_ms", slo.ttft_s ? nlohmann::json(*slo.ttft_s * 1e3) : nlohmann::json(nullptr)},
                {"tpot_slo_ms", slo.tpot_s ? nlohmann::json(*slo.tpot_s * 1e3) : nlohmann::json(nullptr)},
                {"percentile", slo.percentile}};
    j["chip_budget"] = chip_budget;
    j["simulations"] = p.simulations;
    j["evaluated"] = evaluated;
    j["best"] = p.best ? to_json(chosen)[0] : nlohmann::json(nullptr);
    j["next_best"] = p.runner_up ? to_json(second)[0] : nlohmann::json(nullptr);
    j["rows"] = to_json(rows);  // each pair's cheapest deployment meeting the SLO
    j["chip_pairs"] = nlohmann::json::array();
    for (std::size_t k = 0; k < p.pairs.size(); ++k) {
      const sim::ChipPairPlan& x = p.pairs[k];
      const bool met = x.refused.empty() && x.report.best;
      j["chip_pairs"].push_back({{"prefill_hardware", x.prefill_hardware},
                                 {"decode_hardware", x.decode_hardware},
                                 {"meets_slo", met},
                                 {"chips", met ? nlohmann::json(best_of(x).chips) : nlohmann::json(nullptr)},
                                 {"cost_usd_per_hour", met ? nlohmann::json(*best_of(x).usd_per_hour) : nlohmann::json(nullptr)},
                                 {"why_none", met ? std::string() : x.refused.empty() ? x.report.why_none : x.refused},
                                 {"max_loras", x.max_loras > 0 ? nlohmann::json(x.max_loras) : nlohmann::json(nullptr)},
                                 {"kv_offload_verdict", verdicts[k]}});
    }
    j["why_none"] = why_none;
    j["warnings"] = warnings;
    j["searched"] = searched;
    j["lora"] = lora;
    j["kv_offload_verdict"] = offload;
    j["launch"] = launch_json(launches);
    print_json(std::cout, envelope("plan", std::move(j), column_keys(rows)));
    return;
  }
  std::cout << fmt::format("chalk plan: the cheapest deployment of {} within {} chips{} on any prefill and decode chips of {} that meets",
                           in.model.name, chip_budget, dollars, fmt::join(in.hardware, ", "))
            << (slo.ttft_s ? fmt::format(" TTFT p{} <= {} ms", format_number(slo.percentile, 3), format_number(*slo.ttft_s * 1e3, 4)) : "")
            << (slo.tpot_s ? fmt::format(" TPOT p{} <= {} ms", format_number(slo.percentile, 3), format_number(*slo.tpot_s * 1e3, 4)) : "")
            << " in its own simulation, each chip at its catalog price (docs/simulator.md, \"Planning over chip types\")\n"
            << "traffic     " << describe_traffic(in.traffic, in.requests) << '\n'
            << fmt::format("searched    {} deployments ({} replica runs) over {} pairs of prefill and decode chips, engine {}\n", evaluated,
                           p.simulations, p.pairs.size(), sim::release_name(in.policy));
  for (std::size_t k = 0; k < p.pairs.size(); ++k) {
    const sim::ChipPairPlan& x = p.pairs[k];
    std::cout << "            " << pair_name(x) << ": " << pair_outcome(x) << (x.max_loras > 0 ? fmt::format(", max-loras {}", x.max_loras) : "")
              << (verdicts[k].is_null() ? "" : verdicts[k]["tier_pays"].get<bool>() ? "; the offload tiers pay" : "; the offload tiers do not pay")
              << '\n';
  }
  if (!offload.is_null()) std::cout << offload_verdict_text(offload);
  if (!lora.is_null()) std::cout << "lora        " << plan_lora_text(lora) << '\n';
  for (const auto& w : warnings) std::cout << "warning     " << w << '\n';
  std::cout << '\n';
  if (!p.best) {
    std::cout << "no deployment: " << why_none << "\n";
    if (!in.launch_dir.empty()) std::cout << "launch files: none written to " << in.launch_dir << " (no deployment to launch)\n";
    return;
  }
  std::cout << "chosen: " << pair_name(p.pairs[*p.best]) << '\n';
  print_table(std::cout, chosen);
  if (p.runner_up) {
    std::cout << "\nrunner-up: " << pair_name(p.pairs[*p.runner_up]) << '\n';
    print_table(std::cout, second);
  }
  print_plan_launches(launches, in.launch_dir, written);
  std::cout << "each pair's cheapest deployment meeting the SLO, by cost\n";
  print_table(std::cout, rows);
}

}  // namespace chalk::cli
