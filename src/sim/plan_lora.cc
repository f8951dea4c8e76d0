// The planner's LoRA figures and its search over vLLM's --max-loras (plan_lora.h; plan.h
// PlanLora; docs/simulator.md 1.9).
#include "chalk/sim/plan_lora.h"

#include <algorithm>
#include <tuple>

#include "chalk/base/error.h"

namespace chalk::sim {

std::optional<PlanLora> plan_lora_use(const ClusterRun& c, const LoraSpec& s, int64_t replica_chips, double duration_s) {
  if (!s.enabled() || c.runs.empty() || !c.runs.front().lora) return std::nullopt;
  PlanLora p;
  p.max_loras = s.max_loras;
  // SimRun::lora_hbm_bytes is the slots on all of one replica's chips (lora_slots.cc).
  p.adapter_hbm_bytes_per_chip = c.runs.front().lora_hbm_bytes / static_cast<double>(std::max<int64_t>(1, replica_chips));
  for (const auto* runs : {&c.runs, &c.prefill_runs}) {
    for (const auto& r : *runs) {
      p.adapter_loads += r.lora_loads;
      p.load_s += r.lora_load_s;
      p.gemm_s += r.lora_gemm_s;
    }
  }
  p.misses_per_s = duration_s > 0 ? static_cast<double>(p.adapter_loads) / duration_s : 0.0;
  return p;
}

std::vector<int64_t> max_loras_candidates(int64_t adapters, int64_t max_sequences) {
  std::vector<int64_t> out;
  const int64_t top = std::min(adapters, std::max<int64_t>(1, max_sequences));
  for (int64_t v = 1; v < top; v *= 2) out.push_back(v);
  if (top >= 1) out.push_back(top);
  return out;
}

int64_t lora_search_cap(const PlanOptions& o) {
  return o.max_sequences.empty() ? std::max<int64_t>(o.policy.max_sequences, 256) : std::ranges::max(o.max_sequences);
}

LoraPlan plan_lora(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base, std::span<const Request> traffic,
                   const PlanOptions& o, int64_t max_sequences) {
  return plan_lora_with(o, max_sequences, [&](const PlanOptions& po) { return plan_deployment(m, s, base, traffic, po); });
}

LoraPlan plan_lora_with(const PlanOptions& o, int64_t max_sequences, const std::function<PlanReport(const PlanOptions&)>& plan) {
  if (!o.lora.enabled()) throw InputError("lora", "no adapters to plan for; expected N:RANK with N >= 1");
  LoraPlan out;
  out.searched = !o.lora.max_loras_stated;
  const std::vector<int64_t> values = out.searched ? max_loras_candidates(o.lora.adapters, max_sequences) : std::vector<int64_t>{o.lora.max_loras};
  std::optional<std::size_t> chosen;
  std::vector<PlanReport> reports;
  const auto key = [&](std::size_t k) {
    const PlanCandidate& c = reports[k].evaluated[*reports[k].best];
    return std::tuple(c.usd_per_hour.value_or(static_cast<double>(c.chips)), c.chips, c.summary.ttft_at_slo_percentile_s,
                      c.summary.tpot_at_slo_percentile_s);
  };
  for (const int64_t v : values) {
    PlanOptions po = o;
    po.lora.max_loras = v;
    MaxLorasTry t;
    t.max_loras = v;
    try {
      reports.push_back(plan(po));
    } catch (const InputError& e) {
      if (reports.empty()) throw;
      t.refused = e.field() + ": " + std::string(e.what()).substr(e.field().size() + 2);
      out.tried.push_back(t);
      break;  // more slots take more HBM: a larger value fits no better
    }
    const PlanReport& r = reports.back();
    out.simulations += r.simulations;
    if (r.best) {
      const PlanCandidate& c = r.evaluated[*r.best];
      t.met = true;
      t.usd_per_hour = c.usd_per_hour;
      t.chips = c.chips;
      t.ttft_at_percentile_s = c.summary.ttft_at_slo_percentile_s;
      t.tpot_at_percentile_s = c.summary.tpot_at_slo_percentile_s;
      // Ascending values: a later one replaces the choice only when strictly cheaper or faster.
      if (!chosen || key(reports.size() - 1) < key(*chosen)) chosen = reports.size() - 1;
    }
    out.tried.push_back(t);
  }
  const std::size_t k = chosen.value_or(0);
  out.max_loras = out.tried[k].max_loras;
  out.report = std::move(reports[k]);
  return out;
}

}  // namespace chalk::sim
