// The held-out check of `chalk calibrate --holdout half` (holdout.h).
#include "chalk/calibrate/holdout.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "chalk/base/error.h"
#include "chalk/sim/cluster.h"
#include "chalk/sim/policy.h"

namespace chalk::calibrate {
namespace {

double holdout_median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// |predicted / measured - 1| of each metric run `m` measured, in the order TTFT, TPOT, ITL,
/// E2E; a metric it did not measure (or measured as 0) is unset.
std::array<std::optional<double>, 4> holdout_errors(const RunModel& m, const Values& v) {
  const Predicted p = predict(m, v);
  const auto one = [](const std::optional<double>& measured, const std::optional<double>& predicted) -> std::optional<double> {
    if (!measured || *measured <= 0 || !predicted) return std::nullopt;
    return std::abs(*predicted / *measured - 1);
  };
  return {one(m.run.ttft_ms, p.ttft_ms), one(m.run.tpot_ms, p.tpot_ms), one(m.run.itl_ms, p.itl_ms), one(m.run.e2el_ms, p.e2el_ms)};
}

double holdout_run_mean(const std::array<std::optional<double>, 4>& e) {
  double s = 0;
  int n = 0;
  for (const auto& x : e) {
    if (x) s += *x, ++n;
  }
  return n ? s / n : 0;
}

}  // namespace

std::optional<Holdout> holdout_named(const std::string& name) {
  if (name == "half") return Holdout::half;
  return std::nullopt;
}

std::string deployment_of(const RunModel& m) {
  return fmt::format("{} on {}, {} chip{}, TP {}, {}", m.d.model.name, m.d.system.name, m.d.n_chips, m.d.n_chips == 1 ? "" : "s", tp_of(m),
                     sim::release_name(m.o.policy));
}

std::optional<SaturatedRun> saturated_at_defaults(const RunModel& m) {
  // chalk simulate's own check (cmd_simulate.cc: overload_of with the pool's saturated_capacity),
  // on the run as predict() simulates it at the defaults: one replica, the run's requests.
  // The measured run's own word: a queue growing at g s/s from its first arrival over the
  // arrivals' span T = completed / rate averages a wait of g T / 2, so its mean TTFT implies
  // g >= 2 TTFT / T; above kOverloadGrowth it is saturated as simulate's check would say.
  const BenchRun& b = m.run;
  if (b.ttft_ms && b.request_rate_per_s > 0 && std::isfinite(b.request_rate_per_s) && b.completed > 1) {
    const double span_s = static_cast<double>(b.completed) / b.request_rate_per_s;
    const double growth = 2 * *b.ttft_ms / 1e3 / span_s;
    if (growth > sim::kOverloadGrowth) {
      SaturatedRun s;
      s.source = b.source;
      s.arrival_req_per_s = b.request_rate_per_s;
      s.capacity_req_per_s = b.request_rate_per_s / (1 + growth);  // overload_of's lambda / (1 + g)
      s.note = fmt::format("saturated as measured: arrivals {:.3g} req/s > capacity {:.3g} req/s (mean TTFT {:.3g} s over {:.3g} s of "
                           "arrivals); a cut simulation cannot match its queue",
                           s.arrival_req_per_s, s.capacity_req_per_s, *b.ttft_ms / 1e3, span_s);
      return s;
    }
  }
  const sim::Pool pool{m.d, 1, m.o};
  const sim::ClusterRun run = sim::simulate_aggregated(pool, m.requests);
  if (!run.fits) return std::nullopt;  // predict() says why
  const sim::Capacity cap = sim::saturated_capacity(pool, m.requests);
  const sim::Overload o = sim::overload_of(run, m.requests, cap.measured() ? &cap : nullptr);
  if (!o.overloaded) return std::nullopt;
  SaturatedRun s;
  s.source = m.run.source;
  s.arrival_req_per_s = o.arrival_req_per_s;
  s.capacity_req_per_s = o.capacity_req_per_s;
  s.note = fmt::format("saturated at the defaults: arrivals {:.3g} req/s > capacity {:.3g} req/s; a cut simulation cannot match its queue",
                       o.arrival_req_per_s, o.capacity_req_per_s);
  return s;
}

HoldoutSplit split_half(const std::vector<RunModel>& runs) {
  std::map<std::string, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < runs.size(); ++i) groups[deployment_of(runs[i])].push_back(i);
  std::vector<bool> to_fit(runs.size(), false);
  for (auto& [key, idx] : groups) {
    std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
      const BenchRun &ra = runs[a].run, &rb = runs[b].run;
      if (ra.request_rate_per_s != rb.request_rate_per_s) return ra.request_rate_per_s < rb.request_rate_per_s;
      return ra.source < rb.source;
    });
    for (std::size_t k = 0; k < idx.size(); k += 2) to_fit[idx[k]] = true;
  }
  HoldoutSplit s;
  for (std::size_t i = 0; i < runs.size(); ++i) (to_fit[i] ? s.fit : s.held_out).push_back(i);
  return s;
}

HoldoutReport fit_holdout(const std::vector<RunModel>& all_runs, const FitOptions& o, bool keep_saturated) {
  if (all_runs.size() < 2) throw InputError("--holdout", fmt::format("half needs at least 2 runs, got {}", all_runs.size()));
  HoldoutReport rep;
  // A run whose queue grows through the whole measured run cannot be compared with a
  // simulation cut at --max-requests: it neither drives the fit nor counts in the medians.
  std::vector<RunModel> runs;
  std::vector<std::size_t> index;  // runs[k] is all_runs[index[k]]
  for (std::size_t i = 0; i < all_runs.size(); ++i) {
    if (!keep_saturated) {
      if (auto s = saturated_at_defaults(all_runs[i])) {
        rep.saturated.push_back(std::move(*s));
        continue;
      }
    }
    runs.push_back(all_runs[i]);
    index.push_back(i);
  }
  if (runs.empty()) {
    throw InputError("--holdout", fmt::format("all {} runs are saturated at the defaults (chalk simulate calls them OVERLOADED): nothing to fit; "
                                              "--fit-saturated keeps them",
                                              all_runs.size()));
  }
  if (runs.size() < 2) {
    throw InputError("--holdout", fmt::format("half needs at least 2 runs, got {} ({} saturated at the defaults)", runs.size(), rep.saturated.size()));
  }
  rep.split = split_half(runs);
  if (rep.split.held_out.empty()) {
    throw InputError("--holdout", fmt::format("half holds out no run: each of the {} deployments has one run; expected 2 runs or more of a deployment",
                                              rep.split.fit.size()));
  }
  std::vector<RunModel> fit_runs;
  for (std::size_t i : rep.split.fit) fit_runs.push_back(runs[i]);
  try {
    rep.fit = fit(fit_runs, o);
  } catch (const InputError& e) {
    if (e.field() != "runs") throw;
    // The half is what is too small: say so, with fit()'s reason (its message after "runs: ").
    const std::string why = std::string(e.what()).substr(e.field().size() + 2);
    throw InputError("--holdout", fmt::format("half fits on {} of the {} runs: {}", fit_runs.size(), runs.size(), why));
  }
  static const char* const kMetricNames[4] = {"ttft_ms", "tpot_ms", "itl_ms", "e2e_s"};
  std::array<std::vector<double>, 4> before, after;
  std::vector<double> all_before, all_after;
  for (std::size_t i : rep.split.held_out) {
    // The run's own defaults, the fitted constants in place of those the fit determined.
    const Values defaults = defaults_of(runs[i]);
    Values fitted = defaults;
    for (const FittedConstant& c : rep.fit.constants) {
      if (c.fitted) fitted[static_cast<int>(c.id)] = c.value;
    }
    const auto b = holdout_errors(runs[i], defaults);
    const auto a = holdout_errors(runs[i], fitted);
    for (int k = 0; k < 4; ++k) {
      if (!b[k] || !a[k]) continue;
      before[k].push_back(*b[k]);
      after[k].push_back(*a[k]);
      all_before.push_back(*b[k]);
      all_after.push_back(*a[k]);
    }
    RunError e;
    e.source = runs[i].run.source;
    e.before = holdout_run_mean(b);
    e.after = holdout_run_mean(a);
    rep.held_out.push_back(e);
  }
  for (int k = 0; k < 4; ++k) {
    if (before[k].empty()) continue;
    rep.metrics.push_back({kMetricNames[k], static_cast<int64_t>(before[k].size()), holdout_median(before[k]), holdout_median(after[k])});
  }
  rep.metrics.push_back({"all", static_cast<int64_t>(all_before.size()), holdout_median(all_before), holdout_median(all_after)});
  for (auto& i : rep.split.fit) i = index[i];
  for (auto& i : rep.split.held_out) i = index[i];
  return rep;
}

}  // namespace chalk::calibrate
