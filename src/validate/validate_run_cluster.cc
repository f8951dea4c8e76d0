// The cluster of a training or whole-run row that leaves `chips` empty (issue 32;
// docs/file-formats.md, "Defaults"): the product of the stated degrees, else, for a model
// card's GPU-hours, the middle of the clusters its plan runs on, printed with the
// GPU-hours of both ends. Split from validate_training.cc, which plans a row on its chips.
#include <cstdio>
#include <optional>

#include "chalk/base/error.h"
#include "validate_internal.h"

namespace chalk::detail {

TrainRowPlan plan_training_row(const Measurement& r) {
  if (r.chips) return plan_training_row_on_chips(r);
  if (r.dp) {
    // dp stated: the cluster is the product of the degrees, as the run's own plan says; a
    // degree left empty is 1 (no tensor, pipeline or context parallelism), and said so.
    Measurement c = r;
    c.chips = *r.dp * r.tp.value_or(1) * r.pp.value_or(1) * r.cp.value_or(1);
    const bool all = r.tp && r.pp;
    TrainRowPlan t = plan_training_row_on_chips(c);
    t.assumptions.insert(t.assumptions.begin(), "chips: empty, dp x tp x pp x cp = " + std::to_string(*c.chips) +
                                                    (all ? " (the stated degrees)" : " (the stated degrees, an unstated tp or pp taken as 1)"));
    return t;
  }
  // A whole run that states no cluster (a model card's GPU-hours). The clusters its plan
  // can run on go from the smallest on which it fits in HBM (1, 2, 4, ... chips, whole
  // scale-up domains past one) to that plan's model-parallel group replicated until every
  // data-parallel rank holds one sequence (dp = the global batch). GPU-hours grow across
  // that range (fewer microbatches per rank: more bubble; more exposed communication), so
  // neither end is a likely fleet: chalk takes the middle in powers of two and prints the
  // GPU-hours of both ends beside it (docs/file-formats.md, "Defaults").
  const SystemSpec sys = load_row_system(resolve_system(r));
  const int64_t domain = std::max<int64_t>(1, sys.scale_up_domain);
  auto at_chips = [&](int64_t n) {
    Measurement c = r;
    c.chips = n;
    return plan_training_row_on_chips(c);
  };
  // The ladder of cluster sizes: powers of two within one scale-up domain, the domain, then
  // the domain times powers of two (a TP12 plan on a 3072-chip pod runs on 3072 x 2^j).
  std::vector<int64_t> ladder;
  for (int64_t n = 1; n < domain; n *= 2) ladder.push_back(n);
  for (int64_t n = domain; n <= (int64_t{1} << 20); n *= 2) ladder.push_back(n);
  std::optional<TrainRowPlan> smallest;
  std::size_t i_min = 0;
  std::string last_error;
  for (std::size_t i = 0; i < ladder.size() && !smallest; ++i) {
    try {
      TrainRowPlan t = at_chips(ladder[i]);
      if (t.fits) smallest = std::move(t), i_min = i;
    } catch (const InputError& e) {
      last_error = e.what();
    }
  }
  if (!smallest) {
    throw InputError(r.id + ": chips", "missing, and no cluster of up to 2^20 chips fits the run's plan" + (last_error.empty() ? std::string() : " (" + last_error + ")"));
  }
  const int64_t n_min = ladder[i_min];
  const int64_t group = n_min / smallest->plan.dp;  // tp x pp x cp of the smallest plan
  std::size_t i_max = i_min;
  while (i_max + 1 < ladder.size() && ladder[i_max + 1] <= group * smallest->plan.global_batch) ++i_max;
  const int64_t n_max = ladder[i_max], n_mid = ladder[(i_min + i_max) / 2];
  auto gpu_hours = [&](const TrainRowPlan& t) {
    Prediction p;
    predict_training(t, p);
    return p.predicted;
  };
  TrainRowPlan t = *smallest;
  int64_t n = n_min;
  std::string range;
  try {
    TrainRowPlan mid = at_chips(n_mid);
    if (mid.fits) t = std::move(mid), n = n_mid;
    if (t.metric == "gpu_hours") {
      char buf[160];
      std::snprintf(buf, sizeof buf, "; %.4g chip-hours on %lld chips, %.4g on %lld", gpu_hours(*smallest), static_cast<long long>(n_min),
                    gpu_hours(at_chips(n_max)), static_cast<long long>(n_max));
      range = buf;
    }
  } catch (const InputError&) {
    // The larger clusters' plans are refused (a division the batch does not allow): the smallest stands.
  }
  t.assumptions.insert(t.assumptions.begin(),
                       "chips: empty, " + std::to_string(n) + ": the middle, in powers of two, of the clusters the run's plan runs on, from " +
                           std::to_string(n_min) + " " + sys.name + " (the smallest it fits in HBM) to " + std::to_string(n_max) +
                           " (every data-parallel rank one sequence)" + range);
  return t;
}

}  // namespace chalk::detail
