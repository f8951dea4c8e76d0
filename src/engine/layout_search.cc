// Ranking parallel layouts by the mechanisms step (docs/formulas.md, "Layout search").
#include "chalk/engine/layout_search.h"
#include "chalk/engine/step_mix.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "chalk/base/error.h"
#include "chalk/engine/pipeline.h"

namespace chalk {
namespace {

std::string gb(Bytes b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", to_gb(b));
  return buf;
}

bool is_moe(const ModelSpec& m) {
  return std::any_of(m.groups.begin(), m.groups.end(), [](const LayerGroup& g) { return g.ffn.kind == FfnKind::moe; });
}

/// The layouts tried for one replica of r chips, with their names.
std::vector<std::pair<ParallelLayout, std::string>> layouts_for(const ModelSpec& m, int64_t r, int64_t domain) {
  const std::string R = std::to_string(r);
  std::vector<std::pair<ParallelLayout, std::string>> out;
  ParallelLayout tp;
  tp.tp_attention = r;
  tp.tp_ffn = r;
  if (!is_moe(m)) {
    out.push_back({tp, "TP" + R});
    // Heads that TP r cannot split: attention over the largest degree that splits them,
    // in r / t data-parallel groups, the FFN still over all r (PaLM's 48 heads on 64
    // chips: attention TP16 x 4, FFN TP64).
    if (!attention_split_problem(m, r).empty()) {
      for (int64_t t = r - 1; t >= 1; --t) {
        if (r % t == 0 && attention_split_problem(m, t).empty()) {
          ParallelLayout mixed = tp;
          mixed.tp_attention = t;
          out.push_back({mixed, "attention TP" + std::to_string(t) + " x " + std::to_string(r / t) + ", FFN TP" + R});
          break;
        }
      }
    }
    return out;
  }
  // Experts over all r chips; with fewer experts than chips each is split (EP e x TP r/e).
  tp.ep = expert_parallel_degree(m, r);
  tp.tp_expert = r / tp.ep;
  const std::string experts = "EP" + std::to_string(tp.ep) + (tp.tp_expert > 1 ? " x TP" + std::to_string(tp.tp_expert) : "");
  out.push_back({tp, "attention TP" + R + ", " + experts});
  // The derived layout (resolve_layout: attention TP within the scale-up domain over whole
  // heads, data-parallel groups of it, experts over all r): DeepSeek-V3 on 72 chips is
  // attention TP8 x 9 with EP72, what `decode --mechanisms` runs by default.
  const int64_t t = resolve_layout({}, m, r, domain).tp_attention;
  if (t > 1 && t < r) {
    ParallelLayout hybrid = tp;
    hybrid.tp_attention = t;
    hybrid.tp_ffn = t;
    out.push_back({hybrid, "attention TP" + std::to_string(t) + " x " + std::to_string(r / t) + ", " + experts});
  }
  if (r > 1) {
    ParallelLayout dp = tp;
    dp.tp_attention = 1;
    dp.tp_ffn = 1;
    out.push_back({dp, "DP-attention, " + experts});
    dp.overlap_micro_batches = true;
    out.push_back({dp, "DP-attention, " + experts + ", two micro-batches"});
  }
  return out;
}

}  // namespace

std::string replica_size_problem(const ModelSpec& m, int64_t n) {
  std::string first;
  for (const auto& [layout, name] : layouts_for(m, n, n)) {
    const std::string problem = layout_split_problem(m, layout);
    if (problem.empty()) return "";
    if (first.empty()) first = problem;
  }
  return first;
}

int64_t steady_state_context(int64_t prompt, int64_t output) {
  if (prompt < 0) throw InputError("--prompt", "must be >= 0, got " + std::to_string(prompt));
  if (output < 0) throw InputError("--output", "must be >= 0, got " + std::to_string(output));
  return prompt + output / 2;
}

std::string_view to_string(LayoutObjective o) { return o == LayoutObjective::throughput ? "throughput" : "latency"; }

std::vector<LayoutCandidate> search_layouts(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& base,
                                            const LayoutQuery& q) {
  if (q.n_chips < 1) throw InputError("chips", "must be >= 1, got " + std::to_string(q.n_chips));
  if (q.context < 0) throw InputError("context", "must be >= 0 tokens, got " + std::to_string(q.context));
  if (q.prompt < 0 || q.output < 0) throw InputError("prompt/output", "must be >= 0 tokens");
  if (q.admitted_context < 0) throw InputError("admitted_context", "must be >= 0 tokens, got " + std::to_string(q.admitted_context));
  // KV tokens each sequence holds for the batch a replica admits (LayoutQuery::admitted_context).
  const int64_t held = q.batch > 0 || q.admitted_context == 0 ? q.context : q.admitted_context;
  if (!(q.batch >= 0) || q.batch != std::floor(q.batch) || q.batch > 1e9) {
    throw InputError("batch", "must be a whole number of sequences in 0..1e9 (0 = what memory holds), got " + std::to_string(q.batch));
  }
  if (!(q.max_batch >= 1)) throw InputError("max_batch", "must be >= 1 sequence, got " + std::to_string(q.max_batch));
  if (q.objective == LayoutObjective::latency && q.batch == 0) {
    throw InputError("batch", "the latency objective compares layouts at one batch: give it (1 = one user)");
  }
  if (q.n_chips > max_chips) throw InputError("chips", "must be at most " + std::to_string(max_chips) + ", got " + std::to_string(q.n_chips));
  {
    // Options wrong for every layout (efficiencies, compute class, reserve) are errors of
    // the query, not reasons a layout does not fit.
    DeploymentOptions o = base;
    o.n_chips = 1;
    o.mechanisms = Mechanisms{};
    (void)make_deployment(m, s, o);
  }

  std::vector<int64_t> sizes;
  for (int64_t r = 1; r * r <= q.n_chips; ++r) {
    if (q.n_chips % r != 0) continue;
    sizes.push_back(r);
    if (r * r != q.n_chips) sizes.push_back(q.n_chips / r);
  }
  std::sort(sizes.begin(), sizes.end());
  const double total_chips = static_cast<double>(q.n_chips);

  std::vector<LayoutCandidate> all;
  for (const int64_t r : sizes) {
    for (const auto& [layout, name] : layouts_for(m, r, s.scale_up_domain)) {
      DeploymentOptions o = base;
      o.n_chips = r;
      o.mechanisms.enabled = true;
      o.mechanisms.layout = layout;
      LayoutCandidate c;
      c.replica_chips = r;
      c.replicas = q.n_chips / r;
      c.name = name + (c.replicas > 1 ? " x " + std::to_string(c.replicas) + " replicas" : "");
      if (const std::string problem = layout_split_problem(m, layout); !problem.empty()) {
        c.layout = layout;
        c.reason = problem;
        all.push_back(c);
        continue;
      }
      Deployment dep;
      try {
        dep = make_deployment(m, s, o);
      } catch (const InputError& e) {
        c.reason = e.what();
        all.push_back(c);
        continue;
      }
      c.layout = dep.mechanisms.layout;
      const MemoryPlan mem = memory_plan(dep, 1, held);
      const double holds = std::min(static_cast<double>(mem.max_batch), q.max_batch);
      if (!mem.weights_fit || holds < 1) {
        c.reason = "weights " + gb(mem.weights) + " GB leave no room for one sequence's KV in " + gb(mem.hbm_total - mem.reserve) +
                   " GB usable HBM";
      } else if (q.batch > 0 && std::ceil(q.batch / static_cast<double>(c.replicas)) > holds) {
        c.reason = "batch " + std::to_string(static_cast<int64_t>(std::ceil(q.batch / static_cast<double>(c.replicas)))) +
                   " per replica needs more KV than the " +
                   std::to_string(static_cast<int64_t>(holds)) + " sequences the replica holds at context " + std::to_string(q.context);
      } else {
        c.fits = true;
        c.batch = q.batch > 0 ? std::ceil(q.batch / static_cast<double>(c.replicas)) : std::floor(holds);
        StepShape shape;
        shape.decode_sequences = c.batch;
        shape.context = q.context;
        if (q.output > 0 && q.prompt > 0) {
          shape.prefill_sequences = c.batch / static_cast<double>(q.output);
          shape.prompt = q.prompt;
        }
        c.step = steady_state_step(dep, shape, q.whole_prompts);
        c.tokens_per_s_per_user = 1.0 / c.step.t_step.value();
        // A fixed batch counts its own sequences over every chip (replicas short of a
        // full share, or idle, still hold their chips); a memory-filled one, every replica's.
        c.tokens_per_s_per_chip = q.batch > 0 ? q.batch * c.tokens_per_s_per_user / total_chips
                                              : c.batch * c.tokens_per_s_per_user / static_cast<double>(r);
        // Two micro-batches that do not pay at this batch run as one: the same candidate as
        // the one-batch layout listed beside it.
        if (layout.overlap_micro_batches && !c.step.overlapped) continue;
      }
      all.push_back(c);
    }
  }
  // Pipelines across scale-up domains: one domain per stage (pure decode only: the
  // steady-state prefill share is not priced through a pipeline).
  const int64_t domain = std::max<int64_t>(1, s.scale_up_domain);
  for (const int64_t r : sizes) {
    const int64_t pp = r / domain;
    if (q.prompt > 0 || r % domain != 0 || pp < 2 || pp > n_layers(m) || s.scale_out_bandwidth_per_direction.value() <= 0) continue;
    const ModelSpec stage_model = pipeline_stage_model(m, pp);
    const auto stage_layouts = layouts_for(stage_model, domain, domain);
    LayoutCandidate c;
    c.replica_chips = r;
    c.replicas = q.n_chips / r;
    c.pp = pp;
    c.layout = stage_layouts.front().first;
    c.name = "PP" + std::to_string(pp) + " x (" + stage_layouts.front().second + ")" +
             (c.replicas > 1 ? " x " + std::to_string(c.replicas) + " replicas" : "");
    if (const std::string problem = layout_split_problem(stage_model, c.layout); !problem.empty()) {
      c.reason = problem;
      all.push_back(c);
      continue;
    }
    DeploymentOptions o = base;
    o.n_chips = domain;
    o.mechanisms.enabled = true;
    o.mechanisms.layout = c.layout;
    Deployment dep;
    try {
      dep = make_deployment(stage_model, s, o);
    } catch (const InputError& e) {
      c.reason = e.what();
      all.push_back(c);
      continue;
    }
    c.layout = dep.mechanisms.layout;
    const MemoryPlan mem = memory_plan(dep, 1, held);
    const double holds = std::min(static_cast<double>(mem.max_batch), q.max_batch);
    const double per_replica = q.batch > 0 ? std::ceil(q.batch / static_cast<double>(c.replicas)) : std::floor(holds);
    if (!mem.weights_fit || holds < 1) {
      c.reason = "a stage's weights " + gb(mem.weights) + " GB leave no room for one sequence's KV in " + gb(mem.hbm_total - mem.reserve) +
                 " GB usable HBM";
    } else if (per_replica > holds) {
      c.reason = "batch " + std::to_string(static_cast<int64_t>(per_replica)) + " per replica needs more KV than the " +
                 std::to_string(static_cast<int64_t>(holds)) + " sequences a stage holds at context " + std::to_string(q.context);
    } else {
      c.fits = true;
      c.batch = per_replica;
      PipelineShape shape;
      shape.stages = pp;
      shape.microbatches = pp;
      const PipelineDecode pd = pipeline_decode(dep, shape, static_cast<int64_t>(c.batch), q.context);
      StepShape one;
      one.decode_sequences = static_cast<double>(pd.microbatch);
      one.context = q.context;
      c.step = engine_step(dep, one);
      c.step.t_step = pd.cycle;
      c.tokens_per_s_per_user = 1.0 / pd.cycle.value();
      c.tokens_per_s_per_chip = q.batch > 0 ? q.batch * c.tokens_per_s_per_user / total_chips
                                            : c.batch * c.tokens_per_s_per_user / static_cast<double>(r);
    }
    all.push_back(c);
  }
  const bool by_throughput = q.objective == LayoutObjective::throughput;
  std::stable_sort(all.begin(), all.end(), [&](const LayoutCandidate& a, const LayoutCandidate& b) {
    if (a.fits != b.fits) return a.fits;
    if (!a.fits) return false;
    if (by_throughput) return a.tokens_per_s_per_chip > b.tokens_per_s_per_chip;
    return a.step.t_step < b.step.t_step;
  });
  return all;
}

}  // namespace chalk
