// Choosing among simulated deployments (plan.h; docs/simulator.md, "Planning"): the
// cheapest that met its SLO, and the Pareto front of cost against latency.
#include <algorithm>
#include <tuple>

#include "chalk/sim/plan.h"

namespace chalk::sim {
namespace {

/// Dollars per hour, or chips when unpriced (plan.h: one system's candidates are all priced
/// or all not, and its dollars rise with its chips).
double cost(const PlanCandidate& x) { return x.usd_per_hour ? *x.usd_per_hour : static_cast<double>(x.chips); }

}  // namespace

std::optional<std::size_t> cheapest_meeting_slo(const std::vector<PlanCandidate>& evaluated) {
  std::optional<std::size_t> best;
  const auto key = [](const PlanCandidate& x) {
    return std::tuple(cost(x), x.chips, x.summary.ttft_at_slo_percentile_s, x.summary.tpot_at_slo_percentile_s);
  };
  for (std::size_t i = 0; i < evaluated.size(); ++i) {
    if (!evaluated[i].meets_slo || evaluated[i].over_budget) continue;
    if (!best || key(evaluated[i]) < key(evaluated[*best])) best = i;
  }
  return best;
}

std::vector<std::size_t> pareto_front(const std::vector<PlanCandidate>& evaluated) {
  std::vector<std::size_t> front;
  const auto complete = [](const PlanCandidate& x) { return x.summary.finished > 0 && x.summary.rejected == 0; };
  for (std::size_t i = 0; i < evaluated.size(); ++i) {
    const auto& a = evaluated[i];
    if (!complete(a)) continue;
    bool dominated = false;
    for (std::size_t j = 0; j < evaluated.size() && !dominated; ++j) {
      const auto& b = evaluated[j];
      if (j == i || !complete(b)) continue;
      const bool no_worse = cost(b) <= cost(a) && b.summary.ttft_at_slo_percentile_s <= a.summary.ttft_at_slo_percentile_s &&
                            b.summary.tpot_at_slo_percentile_s <= a.summary.tpot_at_slo_percentile_s;
      const bool better = cost(b) < cost(a) || b.summary.ttft_at_slo_percentile_s < a.summary.ttft_at_slo_percentile_s ||
                          b.summary.tpot_at_slo_percentile_s < a.summary.tpot_at_slo_percentile_s;
      // A later twin (same chips and latencies: another cap that changed nothing) is dropped.
      dominated = (no_worse && better) || (no_worse && j < i);
    }
    if (!dominated) front.push_back(i);
  }
  std::sort(front.begin(), front.end(), [&](std::size_t a, std::size_t b) {
    return std::tuple(cost(evaluated[a]), evaluated[a].summary.ttft_at_slo_percentile_s) <
           std::tuple(cost(evaluated[b]), evaluated[b].summary.ttft_at_slo_percentile_s);
  });
  return front;
}

}  // namespace chalk::sim
