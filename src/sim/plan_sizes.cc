// The replica shapes a plan tries on one system (plan_internal.h; docs/simulator.md,
// "Planning"): the sizes an engine runs and every fitting layout of each.
#include <algorithm>
#include <set>

#include "chalk/base/error.h"
#include "chalk/engine/default_layout.h"
#include "chalk/engine/layout_search.h"
#include "chalk/engine/pipeline.h"
#include "plan_internal.h"

namespace chalk::sim::plan_detail {
namespace {

bool is_moe(const ModelSpec& m) {
  for (const auto& g : m.groups) {
    if (g.ffn.kind == FfnKind::moe) return true;
  }
  return false;
}

/// Every fitting layout of one replica of exactly n chips (the plain roofline: one).
std::vector<Shape> shapes_for(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base, int64_t n, int64_t context,
                              bool pipelines) {
  std::vector<Shape> out;
  DeploymentOptions o = base;
  o.n_chips = n;
  if (!base.mechanisms.enabled) {
    Deployment d = make_deployment(m, s, o);
    if (memory_plan(d, 1, context).fits) out.push_back({std::move(d), "roofline, even sharding"});
    return out;
  }
  LayoutQuery q;
  q.n_chips = n;
  q.context = context;
  std::set<std::string> seen;
  for (const auto& c : search_layouts(m, s, base, q)) {
    if (!c.fits || c.replica_chips != n || (c.pp > 1 && !pipelines)) continue;
    // The simulator runs a pipeline's stages tensor-parallel (SimOptions::pipeline_stages).
    if (c.pp > 1 && n / c.pp / std::max<int64_t>(1, c.layout.tp_attention) > 1) continue;
    // A pipeline deploys its busiest stage on one stage's chips (the search's own pricing of
    // it, layout_search.cc); its name is the search's ("PP2 x (TP8)").
    const std::string name = c.pp > 1 ? c.name : describe_layout(c.layout, is_moe(m));
    if (!seen.insert(name).second) continue;
    o.mechanisms.layout = c.layout;
    o.mechanisms.layout.dispatch_bytes_per_element = base.mechanisms.layout.dispatch_bytes_per_element;
    try {
      if (c.pp > 1) {
        DeploymentOptions stage = o;
        stage.n_chips = n / c.pp;
        out.push_back({make_deployment(pipeline_stage_model(m, c.pp), s, stage), name, c.pp});
      } else {
        out.push_back({make_deployment(m, s, o), name});
      }
    } catch (const InputError&) {
      continue;  // a layout the search priced but make_deployment refuses: not a candidate
    }
  }
  return out;
}

}  // namespace

ReplicaSizes replica_sizes(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base, const PlanOptions& o, int64_t budget,
                           int64_t context, std::vector<std::string>& warnings) {
  // Replica sizes: the stated ones, or the divisors of the scale-up domain and 2, 4, ...
  // whole domains from the smallest that holds the model. Either way only sizes with a
  // layout engines run (replica_size_problem: the layout search's rule, which the default
  // search shares with memory added: whole heads and FFN columns); the plain roofline's
  // even sharding has no engine layout to check.
  ReplicaSizes r;
  r.stated = !o.replica_chips.empty();
  std::vector<int64_t>& sizes = r.sizes;
  sizes = o.replica_chips;
  if (!r.stated) {
    int64_t smallest = 0;
    try {
      DeploymentOptions engine = base;
      engine.mechanisms.enabled = true;
      smallest = smallest_replica_chips(m, s, engine, std::max<int64_t>(context, 1));
    } catch (const InputError&) {
      smallest = 0;
    }
    if (smallest == 0) {
      throw InputError("chips", "no replica of up to 64 scale-up domains of " + s.name + " holds " + m.name +
                                    "'s weights and one sequence of " + std::to_string(context) + " tokens");
    }
    if (smallest > budget) {
      throw InputError("chips", "the smallest replica of " + m.name + " that an engine can run and that holds its weights and one sequence of " +
                                    std::to_string(context) + " tokens needs " + std::to_string(smallest) + " chips of " + s.name +
                                    "; the budget allows " + std::to_string(budget));
    }
    const int64_t domain = std::max<int64_t>(s.scale_up_domain, 1);
    std::set<int64_t> set;
    for (int64_t k = 1; k <= domain; ++k) {
      if (domain % k == 0) set.insert(k);
    }
    for (int64_t k = 2 * domain; k <= budget; k *= 2) set.insert(k);
    for (const int64_t k : set) {
      if (k >= smallest && k <= budget) sizes.push_back(k);
    }
  }
  for (const int64_t k : sizes) {
    if (k < 1) throw InputError("replica_chips", "must be >= 1, got " + std::to_string(k));
  }
  std::string refused;  // why each stated size was dropped
  if (base.mechanisms.enabled) {
    std::vector<int64_t> runnable;
    for (const int64_t k : sizes) {
      const std::string why = replica_size_problem(m, k);
      if (why.empty()) {
        runnable.push_back(k);
      } else {
        refused += (refused.empty() ? "" : "; ") + std::to_string(k) + ": " + why;
        warnings.push_back("replica size " + std::to_string(k) + " left out: " + why + " (no engine runs it)");
      }
    }
    sizes = std::move(runnable);
  }
  if (r.stated) {
    const auto within = std::count_if(sizes.begin(), sizes.end(), [&](int64_t k) { return k <= budget; });
    if (sizes.empty()) throw InputError("replica_chips", "no engine runs " + m.name + " on a replica of " + refused);
    if (within == 0) {
      throw InputError("replica_chips", "every replica size an engine can run among those stated exceeds the budget of " +
                                            std::to_string(budget) + " chips" + (refused.empty() ? "" : " (refused: " + refused + ")"));
    }
  }
  return r;
}

std::vector<Shape> shapes_within(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base, const std::vector<int64_t>& sizes,
                                 int64_t budget, int64_t context) {
  // Pipelines where no replica within one scale-up domain is tried (none holds the model, or
  // the stated sizes all cross a domain): there TP alone would run over the scale-out network.
  const int64_t domain = std::max<int64_t>(s.scale_up_domain, 1);
  const bool pipelines = !sizes.empty() && *std::min_element(sizes.begin(), sizes.end()) > domain;
  std::vector<Shape> shapes;
  for (const int64_t n : sizes) {
    if (n > budget) continue;
    for (auto& sh : shapes_for(m, s, base, n, context, pipelines)) shapes.push_back(std::move(sh));
  }
  return shapes;
}

}  // namespace chalk::sim::plan_detail
