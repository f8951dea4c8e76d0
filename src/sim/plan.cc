// The search for the cheapest deployment that meets an SLO (plan.h; docs/simulator.md,
// "Planning"): replica sizes and layouts, aggregated and disaggregated pools. The choice
// among what it simulated: plan_select.cc.
#include "chalk/sim/plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "chalk/base/error.h"
#include "chalk/engine/layout_search.h"
#include "cluster_internal.h"
#include "plan_internal.h"

namespace chalk::sim {
namespace {

using plan_detail::Shape;

double cost_of(const SystemSpec& s, const DeploymentOptions& base, int64_t chips) {
  const auto price = base.price_per_chip ? base.price_per_chip : s.price_per_chip;
  return price ? price->value() * 3600.0 * static_cast<double>(chips) : static_cast<double>(chips);
}

/// The smallest x in [1, hi] with ok(x), or 0 when ok(hi) fails (ok is taken as monotone).
int64_t fewest(int64_t hi, const std::function<bool(int64_t)>& ok) {
  if (hi < 1 || !ok(hi)) return 0;
  int64_t lo = 1;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (ok(mid)) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return hi;
}

std::string num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", x);
  return buf;
}

std::string ms(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g ms", s * 1e3);
  return buf;
}

}  // namespace

PlanReport plan_deployment(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base, std::span<const Request> traffic,
                           const PlanOptions& o) {
  return plan_pools(m, s, s, base, traffic, o);
}

PlanReport plan_pools(const ModelSpec& m, const SystemSpec& s, const SystemSpec& ds, const DeploymentOptions& base,
                      std::span<const Request> traffic, const PlanOptions& o) {
  // Mixed chips (docs/simulator.md 1.5): the prefill pool on `s`, the decode pool on `ds`,
  // each at its own catalog price; only disaggregated deployments span both.
  const bool mixed = ds.name != s.name;
  if (mixed && base.price_per_chip) {
    throw InputError("price_per_chip", "prices one chip type; mixed chips take each system's own price (" + s.name + ", " + ds.name + ")");
  }
  if (mixed && !o.disaggregated) throw InputError("modes", "mixed chips (" + s.name + ", " + ds.name + ") need disaggregated serving");
  validate(o.slo);
  validate(o.facility);
  if (!o.slo.ttft_s && !o.slo.tpot_s) throw InputError("slo", "state a TTFT or a TPOT target (or both)");
  if (traffic.empty()) throw InputError("traffic", "no requests to plan for");
  const EnginePolicy& policy = o.policy;
  validate(policy);
  PlanReport r;
  const auto price = base.price_per_chip ? base.price_per_chip : s.price_per_chip;
  r.has_price = price.has_value() && (!mixed || ds.price_per_chip.has_value());
  int64_t budget = o.chip_budget;
  if (o.usd_per_hour_budget) {
    if (!r.has_price) throw InputError("usd_budget", s.name + " has no price; state a chip budget or a price per chip-hour");
    if (!(*o.usd_per_hour_budget > 0)) throw InputError("usd_budget", "must be positive dollars per hour");
    // Mixed chips: the budget buys the most chips of the cheaper system; each candidate is
    // then held to the dollars themselves (PlanCandidate::over_budget).
    const double per_chip_hour = (mixed ? std::min(price->value(), ds.price_per_chip->value()) : price->value()) * 3600.0;
    // Clamped before the cast: $1e300 an hour is more chips than int64_t holds (the cast was
    // undefined and came out negative: "buys no chip").
    const double chips_bought = std::floor(*o.usd_per_hour_budget / per_chip_hour + 1e-9);
    const int64_t by_cost = chips_bought >= static_cast<double>(kMaxPlanChips) ? kMaxPlanChips : static_cast<int64_t>(chips_bought);
    if (by_cost < 1) {
      throw InputError("usd_budget", "$" + num(*o.usd_per_hour_budget) + " per hour buys no chip of " + (mixed ? s.name + " or " + ds.name : s.name) + " at $" +
                                         num(per_chip_hour) + " per chip-hour; expected at least " + num(per_chip_hour));
    }
    // A dollar budget beyond the largest search buys the largest search.
    budget = std::min(budget > 0 ? std::min(budget, by_cost) : by_cost, kMaxPlanChips);
  }
  if (o.chip_budget < 0 || (budget < 1 && !o.usd_per_hour_budget)) {
    throw InputError("chips", "must be >= 1 (or state a dollar budget), got " + std::to_string(o.chip_budget));
  }
  if (o.chip_budget > kMaxPlanChips) {
    throw InputError("chips", "must be at most " + std::to_string(kMaxPlanChips) + " chips (one deployment of one model; plan a share of the traffic per " +
                                  std::to_string(kMaxPlanChips) + "), got " + std::to_string(o.chip_budget));
  }
  r.chip_budget = budget;

  double in_sum = 0, out_sum = 0;
  for (const auto& q : traffic) {
    in_sum += static_cast<double>(q.input_tokens);
    out_sum += static_cast<double>(q.output_tokens);
  }
  const double count = static_cast<double>(traffic.size());
  const int64_t context = steady_state_context(static_cast<int64_t>(in_sum / count), static_cast<int64_t>(out_sum / count));

  const plan_detail::ReplicaSizes pre_sizes = plan_detail::replica_sizes(m, s, base, o, budget, context, r.warnings);
  const bool stated = pre_sizes.stated;
  const std::vector<int64_t>& sizes = pre_sizes.sizes;
  // Mixed chips: the decode pool's sizes on its own system (its warnings repeat none: the
  // engine rule is the model's).
  std::vector<std::string> decode_warnings;
  const plan_detail::ReplicaSizes dec_sizes =
      mixed ? plan_detail::replica_sizes(m, ds, base, o, budget, context, decode_warnings) : plan_detail::ReplicaSizes{};
  std::vector<int64_t> caps = o.max_sequences;
  if (caps.empty()) caps = {policy.max_sequences, 256, 64};
  std::sort(caps.begin(), caps.end());
  caps.erase(std::unique(caps.begin(), caps.end()), caps.end());

  const std::vector<Shape> shapes = plan_detail::shapes_within(m, s, base, sizes, budget, context);
  const std::vector<Shape> mixed_shapes = mixed ? plan_detail::shapes_within(m, ds, base, dec_sizes.sizes, budget, context) : std::vector<Shape>{};
  const std::vector<Shape>& dec_shapes = mixed ? mixed_shapes : shapes;  // the decode pool's
  auto options_for = [&](int64_t cap, int64_t pp = 1) {
    SimOptions so;
    so.pipeline_stages = pp;
    so.policy = policy;
    so.policy.max_sequences = cap;
    so.prefix_hit_rate = o.prefix_hit_rate;
    so.kv_offload = o.kv_offload;
    so.lora = o.lora;
    so.speculation = o.speculation;
    so.speculation_seed = o.speculation_seed;
    so.progress = o.progress;
    return so;
  };
  const double rate = arrival_rate(traffic);
  int64_t beyond_steady_state = 0;  // deployments whose run met the SLO but Little's law refutes
  // A simulated deployment of `k` replicas of `sh` (aggregated; disaggregated: the prefill
  // pool, the caller adds the decode pool) at batch cap `cap`.
  auto candidate = [&](const Shape& sh, int64_t k, int64_t cap, const ClusterRun& c) {
    PlanCandidate p;
    p.replica_chips = sh.chips();
    p.pp = sh.pp;
    p.replicas = k;
    p.layout = sh.name;
    p.prefill_hardware = p.decode_hardware = s.name;  // disaggregated: the caller names the decode pool's
    p.parallel = sh.dep.mechanisms.layout;
    p.max_sequences = cap;
    p.max_batched_tokens = policy.max_batched_tokens;
    p.reserve_to_completion = policy.reserve_to_completion;
    p.chips = c.chips;
    p.weight_bytes_per_chip = memory_plan(sh.dep, 0, 0).weights.value() / static_cast<double>(sh.dep.n_chips);  // a stage's chip
    p.summary = summarize(c, o.slo);
    if (!c.fits) p.summary.meets_slo = false;
    p.why_not = plan_detail::slo_miss_of(c, p.summary, o.slo);
    // An overloaded deployment meets no SLO, whatever targets were given: its queue grows for
    // the whole run, so its percentiles only say how long the run was (review 4 H3: with a TPOT
    // target alone, 1 H100 at 3.3x its capacity "met" it with TTFT p90 187 s).
    if (p.summary.meets_slo && overload_of(c, traffic).overloaded) {
      p.summary.meets_slo = false;
      p.why_not = "overloaded: the queue grows for the whole run";
    }
    // Nor does one whose run ended before its queue formed (review 9 H1: 1,000 requests in
    // 6.2 s, each living 26 s, all admitted at once under a cap of 1,024 that the steady
    // state, 150 req/s x 26 s = 3,900 sequences, overruns): Little's law on the pool that
    // holds the sequences (aggregated: the replicas; disaggregated: the decode pool).
    if (p.summary.meets_slo && c.fits) {
      if (const auto st = plan_detail::steady_state_of(c.runs, cap * sh.pp, policy.block_size, rate); st.overloaded()) {
        p.summary.meets_slo = false;
        p.why_not = plan_detail::steady_state_miss(st);
        ++beyond_steady_state;
      }
    }
    p.lora = plan_lora_use(c, o.lora, sh.chips(), p.summary.duration_s);
    if (o.power && c.fits && !c.disaggregated) p.energy = serving_energy(c, p.summary, sh.chips(), 0, *o.power, o.facility);
    return p;
  };
  auto record = [&](PlanCandidate c) {
    // Mixed chips: each pool's chips at its own system's price per chip-hour.
    const double usd = mixed ? cost_of(s, base, c.replica_chips * c.replicas) + cost_of(ds, base, c.decode_replica_chips * c.decode_replicas)
                             : cost_of(s, base, c.chips);
    c.usd_per_hour = r.has_price ? std::optional<double>(usd) : std::nullopt;
    c.meets_slo = c.summary.meets_slo;
    // The fewest replicas meeting the SLO cost least for their shape: over the budget, more cost more.
    c.over_budget = o.usd_per_hour_budget && c.usd_per_hour && *c.usd_per_hour > *o.usd_per_hour_budget * (1 + 1e-12);
    r.evaluated.push_back(std::move(c));
    return r.evaluated.back().meets_slo;
  };

  std::string size_list;
  for (const int64_t k : sizes) {
    if (k <= budget) size_list += (size_list.empty() ? "" : ", ") + std::to_string(k);
  }
  // Aggregated: for each shape and cap, the fewest replicas that meet the SLO.
  if (o.aggregated && !mixed) {
    for (const auto& sh : shapes) {
      for (const int64_t cap : caps) {
        const int64_t n = sh.chips();
        fewest(budget / n, [&](int64_t k) {
          const ClusterRun c = simulate_aggregated(Pool{sh.dep, k, options_for(cap, sh.pp)}, traffic);
          r.simulations += k;
          return record(candidate(sh, k, cap, c));
        });
      }
    }
    r.searched.push_back("aggregated: " + std::to_string(r.evaluated.size()) + " deployments (replicas of " + size_list +
                         " chips, every fitting layout and batch cap, the fewest replicas meeting the SLO)");
  }

  // Disaggregated: the cheapest prefill pool meeting TTFT alone (without a TTFT target: the
  // smallest that keeps up with the arrivals), then the decode pools.
  double first_arrival = INFINITY, last_arrival = 0;
  for (const auto& q : traffic) {
    first_arrival = std::min(first_arrival, q.arrival_s);
    last_arrival = std::max(last_arrival, q.arrival_s);
  }
  // A pool keeps up when its replicas are busy less than the arrival span: utilization
  // = busy time / (replicas x (last - first arrival)) < 1 (all at once: any pool does).
  auto utilization = [&](const ClusterRun& c, int64_t k) {
    double busy = 0;
    for (const auto& run : c.runs) busy += run.busy_s;
    const double span = last_arrival - first_arrival;
    return span > 0 ? busy / (static_cast<double>(k) * span) : 0.0;
  };
  const std::size_t before_disaggregated = r.evaluated.size();
  if (o.disaggregated && (shapes.empty() || dec_shapes.empty())) {
    r.searched.push_back("disaggregated: no replica size within the budget holds the model" + (mixed ? " on " + (shapes.empty() ? s.name : ds.name) : ""));
  }
  if (o.disaggregated && !shapes.empty() && !dec_shapes.empty()) {
    Slo ttft_only = o.slo;
    ttft_only.tpot_s.reset();
    int64_t smallest_shape = budget;
    // Disaggregated pools are searched without pipeline stages (a pool's KV transfer is priced
    // for one stage-less replica: cluster.h kv_transfer).
    for (const auto& sh : dec_shapes) {
      if (sh.pp == 1) smallest_shape = std::min(smallest_shape, sh.dep.n_chips);  // room for a decode replica
    }
    const Shape* pre = nullptr;
    int64_t pre_replicas = 0;
    double pre_ttft = 0, pre_busy = 0;
    // The chosen prefill pool's runs, kept: the decode pools tried with it reuse them
    // (disaggregated_after), as its runs do not depend on the decode pool.
    detail::PoolRun pre_run;
    for (const auto& sh : shapes) {
      const int64_t n = sh.dep.n_chips;
      if (sh.pp > 1 || n + smallest_shape > budget) continue;
      double ttft = 0, busy = 0;
      detail::PoolRun last_ok;  // the run of the last k that met the target: fewest's answer
      const int64_t k = fewest((budget - smallest_shape) / n, [&](int64_t k) {
        // simulate_aggregated(pool, traffic, Phase::prefill), with the records gathered.
        const Pool pool{sh.dep, k, options_for(policy.max_sequences)};
        detail::PoolRun p = detail::run_pool(pool, traffic, Phase::prefill, true);
        ClusterRun c;
        c.chips = k * n;
        c.fits = p.fits;
        c.reason = p.reason;
        c.runs = std::move(p.runs);
        r.simulations += k;
        const SimSummary sum = summarize(c, ttft_only);
        const double u = c.fits ? utilization(c, k) : INFINITY;
        const bool ok = c.fits && sum.finished > 0 && (o.slo.ttft_s ? sum.meets_slo : u < 1);
        if (ok) {
          ttft = sum.ttft_at_slo_percentile_s;
          busy = u;
          p.runs = std::move(c.runs);
          last_ok = std::move(p);
        }
        return ok;
      });
      if (k == 0) continue;
      if (pre == nullptr || n * k < pre->dep.n_chips * pre_replicas || (n * k == pre->dep.n_chips * pre_replicas && ttft < pre_ttft)) {
        pre = &sh;
        pre_replicas = k;
        pre_ttft = ttft;
        pre_busy = busy;
        pre_run = std::move(last_ok);
      }
    }
    const std::string rule = o.slo.ttft_s ? "the smallest meeting TTFT p" + num(o.slo.percentile) + " <= " + ms(*o.slo.ttft_s) + " alone"
                                          : "no TTFT target: the smallest that keeps up with the arrivals (prefill utilization < 1)";
    if (pre == nullptr) {
      // Review 8 L1: "no prefill pool within 0 chips" where the smallest decode replica took
      // the whole budget.
      r.searched.push_back(budget > smallest_shape
                               ? "disaggregated: no prefill pool within " + std::to_string(budget - smallest_shape) + " chips (" + rule +
                                     "), so no decode pool was simulated"
                               : "disaggregated: the smallest decode replica, " + std::to_string(smallest_shape) + (smallest_shape == 1 ? " chip" : " chips") + ", takes the whole " +
                                     std::to_string(budget) + "-chip budget, leaving none for a prefill pool; nothing was simulated");
    }
    if (pre != nullptr) {
      // End to end, TTFT adds the KV transfer and the decode pool's queue to the prefill
      // pool's own TTFT, so a prefill pool that met the target with no room to spare may find
      // no decode pool: then one more prefill replica, up to kMorePrefill more, while the
      // budget leaves room for the smallest decode replica.
      constexpr int64_t kMorePrefill = 2;
      const int64_t first_replicas = pre_replicas;
      bool met = false;
      for (int64_t extra = 0; extra <= kMorePrefill && !met; ++extra) {
        const int64_t k_pre = first_replicas + extra;
        if (extra > 0 && pre->dep.n_chips * k_pre + smallest_shape > budget) break;
        pre_replicas = k_pre;
        const Pool pre_pool{pre->dep, pre_replicas, options_for(policy.max_sequences)};
        if (extra > 0) pre_run = detail::run_pool(pre_pool, traffic, Phase::prefill, true);  // one more replica: run once
        const int64_t left = budget - pre->dep.n_chips * pre_replicas;
        for (const auto& sh : dec_shapes) {
          const int64_t n = sh.dep.n_chips;
          if (sh.pp > 1) continue;
          for (const int64_t cap : caps) {
            const int64_t k = fewest(left / n, [&](int64_t k) {
              // simulate_disaggregated(pre_pool, decode pool, traffic), the prefill pool's runs reused.
              const ClusterRun c = detail::disaggregated_after(pre_pool, pre_run, Pool{sh.dep, k, options_for(cap)}, traffic);
              r.simulations += pre_replicas + k;  // the replica runs this deployment takes, reused or not
              PlanCandidate p = candidate(*pre, pre_replicas, cap, c);
              p.disaggregated = true;
              p.prefill_hardware = s.name;
              p.decode_hardware = ds.name;
              p.decode_replica_chips = n;
              p.decode_replicas = k;
              p.decode_layout = sh.name;
              p.decode_weight_bytes_per_chip = memory_plan(sh.dep, 0, 0).weights.value() / static_cast<double>(sh.dep.n_chips);
              p.decode_parallel = sh.dep.mechanisms.layout;
              p.lora = plan_lora_use(c, o.lora, n, p.summary.duration_s);  // the slots per chip of the decode pool
              // Mixed chips: each pool at its own chip's power (PlanOptions::prefill_power).
              if (o.power && c.fits && (!mixed || o.prefill_power)) {
                p.energy = serving_energy(c, p.summary, n, pre->dep.n_chips, *o.power, o.facility, mixed ? &*o.prefill_power : nullptr);
              }
              return record(std::move(p));
            });
            met = met || k > 0;
          }
        }
      }
      const std::string grown = pre_replicas > first_replicas
                                    ? " (grown from " + std::to_string(first_replicas) + (first_replicas == 1 ? " replica" : " replicas") +
                                          ": with the KV transfer and the decode queue in TTFT, no decode pool met the SLO)"
                                    : "";
      r.searched.push_back("disaggregated: " + std::to_string(r.evaluated.size() - before_disaggregated) + " deployments: prefill pool " +
                           std::to_string(pre_replicas) + " x " + std::to_string(pre->dep.n_chips) + " chips" + (mixed ? " of " + s.name : "") + " (" + pre->name + "), " + rule +
                           grown + (o.slo.ttft_s ? "" : " (" + num(100 * pre_busy) + "% busy)") +
                           "; then every decode layout" + (mixed ? " on " + ds.name : "") + " and cap, the fewest decode replicas meeting the SLO end to end");
    }
  }

  if (beyond_steady_state > 0) {
    r.searched.push_back(std::to_string(beyond_steady_state) + (beyond_steady_state == 1 ? " deployment" : " deployments") +
                         " met the SLO in a run too short for its queue to form, but in a steady state needs more running sequences "
                         "(arrival rate x mean service time, Little's law) than its batch cap and KV cache allow: counted as not meeting it");
  }
  r.best = cheapest_meeting_slo(r.evaluated);
  r.pareto = pareto_front(r.evaluated);
  if (!r.best) {
    const std::string p = std::to_string(static_cast<int64_t>(o.slo.percentile));
    r.why_none = "no deployment within " + std::to_string(budget) + " chips meets" +
                 (o.slo.ttft_s ? " TTFT p" + p + " <= " + ms(*o.slo.ttft_s) : std::string()) +
                 (o.slo.tpot_s ? std::string(o.slo.ttft_s ? " and" : "") + " TPOT p" + p + " <= " + ms(*o.slo.tpot_s) : std::string()) +
                 (mixed && o.usd_per_hour_budget ? " within $" + num(*o.usd_per_hour_budget) + " per hour" : std::string());
    if (shapes.empty() || dec_shapes.empty()) {
      // Every size tried is within the budget (checked above): none holds the model.
      const bool on_pre = shapes.empty();
      std::string tried;
      for (const int64_t k : on_pre ? sizes : dec_sizes.sizes) tried += (tried.empty() ? "" : ", ") + std::to_string(k);
      throw InputError(stated ? "replica_chips" : "chips", "no replica of the sizes tried (" + tried + " chips of " + (on_pre ? s.name : ds.name) +
                                                               ") holds " + m.name + "'s weights and one sequence of " + std::to_string(context) + " tokens");
    }
  }
  return r;
}

}  // namespace chalk::sim
