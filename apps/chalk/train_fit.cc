// Training plans that fit (issue 30 item 1): the smallest cluster on which some plan of a
// model fits, for `train step` (its default, and the fix its error names) and `train layouts`.
#include <fmt/format.h>

#include "chalk/base/error.h"
#include "chalk/training/default_batch.h"
#include "train_cli.h"

namespace chalk::cli {

std::vector<int64_t> cluster_sizes(int64_t domain) {
  std::vector<int64_t> out;
  for (int64_t n = 1; n < domain; n *= 2) out.push_back(n);
  for (int64_t n = std::max<int64_t>(domain, 1); n <= kLargestClusterSearched; n *= 2) out.push_back(n);
  return out;
}

std::optional<FittingCluster> smallest_fitting_cluster(const ModelSpec& m, const SystemSpec& sys, const TrainingQuery& base, int64_t first) {
  std::vector<int64_t> sizes = cluster_sizes(sys.scale_up_domain);
  if (first > 0) sizes.insert(sizes.begin(), first);
  for (int64_t n : sizes) {
    TrainingQuery q = base;
    q.chips = n;
    if (q.global_batch <= 0) q.global_batch = default_global_batch(n, q.seq_len);  // the rule every train command uses
    q.limit = 1;
    TrainingLayouts r;
    try {
      r = search_training_layouts(m, sys, q);
    } catch (const InputError& e) {
      // No scale-out network: no larger cluster can be priced either. Any other refusal
      // (no valid plan on this count, a global batch it does not split) tries the next size.
      if (e.field() == "hardware") return std::nullopt;
      continue;
    }
    if (!r.fitting.empty()) return FittingCluster{n, plan_of(r.fitting.front(), q), r.fitting.front().t_step_s, r.fitting.front().memory_bytes};
  }
  return std::nullopt;
}

std::string step_flags_text(const TrainingPlan& p) {
  std::string s = fmt::format("-n {} --dp {} --tp {} --pp {}", plan_chips(p), p.dp, p.tp, p.pp);
  if (p.cp > 1) s += fmt::format(" --cp {}", p.cp);
  if (p.ep > 1) s += fmt::format(" --ep {}", p.ep);
  if (p.etp > 1) s += fmt::format(" --etp {}", p.etp);
  if (p.pp > 1) s += fmt::format(" --schedule {}", to_string(p.schedule));
  if (p.virtual_stages > 1) s += fmt::format(" --virtual-stages {}", p.virtual_stages);
  s += fmt::format(" --zero {} --microbatch {} --recompute {} -B {}", p.zero_stage, p.microbatch, to_string(p.recompute), p.global_batch);
  return s;
}

std::string fitting_cluster_text(const std::optional<FittingCluster>& c, const SystemSpec& sys, int64_t first) {
  if (!c) {
    return fmt::format("no cluster of up to {} x {} holds a plan of it", kLargestClusterSearched, sys.chip.name);
  }
  const std::string what = c->chips == first ? fmt::format("the fastest plan of these {} chips that fits is", first)
                                             : fmt::format("the smallest cluster with a plan that fits is {} x {}:", c->chips, sys.chip.name);
  return fmt::format("{} {} ({:.4g} s a step, {:.4g} GB per chip; train step {})", what, describe_plan(c->plan), c->t_step_s, c->memory_bytes / 1e9,
                     step_flags_text(c->plan));
}

unsigned searched_schedules(const TrainArgs& a) {
  return a.schedule_stated ? schedule_bit(parse_schedule(a.schedule, "--schedule")) : kMegatronSchedules;
}

std::string schedules_assumed_text(unsigned schedules, bool layouts) {
  if (schedules == kMegatronSchedules) {
    return std::string("engine Megatron-LM: pipeline schedules 1f1b and interleaved searched, the only ones it ships (") +
           (layouts ? "--schedules all adds gpipe, zb-h1, zb-v and dualpipe)" : "--schedule zb-v, zb-h1, gpipe or dualpipe prices another)");
  }
  return "pipeline schedules searched: " + schedule_set_string(schedules);
}

void set_plan(TrainArgs& a, const TrainingPlan& p) {
  a.chips = plan_chips(p);
  a.dp = p.dp;
  a.tp = p.tp;
  a.pp = p.pp;
  a.cp = p.cp;
  a.ep = p.ep;
  a.etp = p.etp;
  a.virtual_stages = p.virtual_stages;
  a.schedule = std::string(to_string(p.schedule));
  a.zero = p.zero_stage;
  a.microbatch = p.microbatch;
  a.recompute = std::string(to_string(p.recompute));
  a.recompute_modules = recompute_modules_string(p.recompute_modules);
  a.no_sp = p.tp > 1 && !p.sequence_parallel;
  a.reversible = p.reversible;
  a.global_batch = p.global_batch;
}

}  // namespace chalk::cli
