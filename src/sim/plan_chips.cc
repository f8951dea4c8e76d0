// The planner choosing chip types as well as counts (plan_chips.h; docs/simulator.md,
// "Planning over chip types").
#include "chalk/sim/plan_chips.h"

#include <tuple>

#include "chalk/base/error.h"

namespace chalk::sim {

ChipChoicePlan plan_chip_types(const ModelSpec& m, std::span<const SystemSpec> systems, const DeploymentOptions& base,
                               std::span<const Request> traffic, const PlanOptions& o, std::span<const std::optional<ChipPower>> powers,
                               const PairProgress& on_pair) {
  if (systems.size() < 2) throw InputError("hardware", "expected two or more systems to choose among, got " + std::to_string(systems.size()));
  if (!powers.empty() && powers.size() != systems.size()) {
    throw InputError("powers", "expected one chip power per system (" + std::to_string(systems.size()) + "), got " + std::to_string(powers.size()));
  }
  if (base.price_per_chip) throw InputError("price_per_chip", "prices one chip type; choosing among chip types takes each system's catalog price");
  for (std::size_t i = 0; i < systems.size(); ++i) {
    const SystemSpec& s = systems[i];
    for (std::size_t j = 0; j < i; ++j) {
      if (systems[j].name == s.name) throw InputError("hardware", "'" + s.name + "' is listed twice");
    }
    if (!s.price_per_chip) {
      throw InputError("hardware", "'" + s.name + "' has no price per chip-hour in the catalog; the choice among chip types is by dollars: "
                                                   "drop it or give a hardware file with usd_per_chip_hour");
    }
    if (o.disaggregated && !(s.scale_out_bandwidth_per_direction.value() > 0)) {
      throw InputError("hardware", "'" + s.name + "' states no scale-out network, so its pools cannot exchange KV with another system's; "
                                                   "drop it or plan it alone");
    }
  }
  ChipChoicePlan out;
  std::optional<InputError> first_error;
  const std::size_t total = o.disaggregated ? systems.size() * systems.size() : systems.size();
  for (std::size_t i = 0; i < systems.size(); ++i) {
    for (std::size_t j = 0; j < systems.size(); ++j) {
      ChipPairPlan p;
      p.prefill_hardware = systems[i].name;
      p.decode_hardware = systems[j].name;
      if (i != j && !o.disaggregated) continue;  // aggregated only: one chip type per deployment
      PlanOptions po = o;
      if (!powers.empty()) {
        po.power = powers[j];
        po.prefill_power = i == j ? std::nullopt : powers[i];
      }
      try {
        const auto plan = [&](const PlanOptions& x) { return plan_pools(m, systems[i], systems[j], base, traffic, x); };
        if (po.lora.enabled() && !po.lora.max_loras_stated) {  // each pair its own --max-loras (plan_lora.h)
          LoraPlan l = plan_lora_with(po, lora_search_cap(po), plan);
          p.report = std::move(l.report);
          p.report.simulations = l.simulations;
          p.max_loras_tried = std::move(l.tried);
          p.max_loras = l.max_loras;
        } else {
          p.report = plan(po);
        }
        out.simulations += p.report.simulations;
      } catch (const InputError& e) {
        if (!first_error) first_error = e;
        p.refused = e.field() + ": " + std::string(e.what()).substr(e.field().size() + 2);
      }
      out.pairs.push_back(std::move(p));
      if (on_pair) on_pair(out.pairs.back(), out.pairs.size(), total);
    }
  }
  bool any = false;
  for (const auto& p : out.pairs) any = any || p.refused.empty();
  if (!any) throw *first_error;
  // Pairs by their best's cost: $/hour, then chips, TTFT and TPOT at the percentile.
  const auto key = [&](std::size_t k) {
    const PlanCandidate& c = out.pairs[k].report.evaluated[*out.pairs[k].report.best];
    return std::tuple(c.usd_per_hour.value_or(0), c.chips, c.summary.ttft_at_slo_percentile_s, c.summary.tpot_at_slo_percentile_s);
  };
  for (std::size_t k = 0; k < out.pairs.size(); ++k) {
    if (!out.pairs[k].refused.empty() || !out.pairs[k].report.best) continue;
    if (!out.best || key(k) < key(*out.best)) {
      out.runner_up = out.best;
      out.best = k;
    } else if (!out.runner_up || key(k) < key(*out.runner_up)) {
      out.runner_up = k;
    }
  }
  return out;
}

}  // namespace chalk::sim
