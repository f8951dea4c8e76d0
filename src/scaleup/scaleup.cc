// The scale-up story (docs/scaleup.md): the largest model a domain holds, a model's fastest
// and cheapest tokens on one domain, and the pipeline across domains when it does not fit.
#include "chalk/scaleup/scaleup.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "chalk/base/error.h"
#include "chalk/engine/roofline.h"

namespace chalk {
namespace {

std::string scaleup_num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string scaleup_gb(Bytes b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", to_gb(b));
  return buf;
}

DeploymentOptions options_for(const SystemSpec& s, const ScaleupQuery& q) {
  DeploymentOptions o;
  o.n_chips = s.scale_up_domain;
  o.weights = q.weights;
  o.kv = q.kv;
  o.memory_reserve_fraction = q.memory_reserve_fraction;
  return o;
}

/// The fastest fitting layout of `m` on one domain at batch 1, if any.
std::optional<LayoutCandidate> fastest_layout(const ModelSpec& m, const SystemSpec& s, const ScaleupQuery& q) {
  LayoutQuery lq;
  lq.n_chips = s.scale_up_domain;
  lq.context = q.context;
  lq.batch = 1;
  lq.objective = LayoutObjective::latency;
  const auto ranked = search_layouts(m, s, options_for(s, q), lq);
  if (ranked.empty() || !ranked.front().fits) return std::nullopt;
  return ranked.front();
}

/// One token's activations (d_model x 2 bytes, bf16) from one stage to the next
/// (pipeline.h stage_send_time); unset when the system states no scale-out bandwidth.
std::optional<Seconds> stage_hop(const ModelSpec& m, const SystemSpec& s) {
  if (!(s.scale_out_bandwidth_per_direction.value() > 0)) return std::nullopt;
  return stage_send_time(s, bytes(static_cast<double>(m.d_model) * 2.0));
}

/// The deployment a layout search candidate describes: its replica's chips, its layout,
/// mechanisms on (as search_layouts priced it).
Deployment candidate_deployment(const ModelSpec& m, const SystemSpec& s, const ScaleupQuery& q, const LayoutCandidate& c) {
  DeploymentOptions o = options_for(s, q);
  o.n_chips = c.replica_chips;
  o.mechanisms.enabled = true;
  o.mechanisms.layout = c.layout;
  return make_deployment(m, s, o);
}

/// The cheapest pipeline of `stages` domains whose busiest stage is `stage`: over every
/// fitting throughput layout of the stage on one domain, `stages` microbatches of the
/// stage replica's HBM-filling batch in flight (pipeline_decode); the most tokens/s per chip.
void price_pipeline(const ModelSpec& stage, const SystemSpec& s, const ScaleupQuery& q, PipelinePlan& plan) {
  LayoutQuery tq;
  tq.n_chips = s.scale_up_domain;
  tq.context = q.context;
  tq.objective = LayoutObjective::throughput;
  PipelineShape shape;
  shape.stages = plan.stages;
  shape.microbatches = plan.stages;
  for (const auto& c : search_layouts(stage, s, options_for(s, q), tq)) {
    if (!c.fits || c.batch < 1) continue;
    const auto batch = static_cast<int64_t>(c.batch);
    const PipelineDecode r = pipeline_decode(candidate_deployment(stage, s, q, c), shape, batch, q.context);
    if (!r.stage_memory.fits) continue;
    if (!plan.cheapest || r.tokens_per_s_per_chip.value() > plan.cheapest->tokens_per_s_per_chip.value()) {
      plan.cheapest = r;
      plan.cheapest_stage = c;
      plan.cheapest_batch = batch;
    }
  }
}

bool memory_fits(const ModelSpec& m, const SystemSpec& s, const ScaleupQuery& q, MemoryPlan* plan) {
  const Deployment d = make_deployment(m, s, options_for(s, q));
  const MemoryPlan mem = memory_plan(d, std::max<int64_t>(q.batch, 1), q.context);
  if (plan) *plan = mem;
  return q.batch == 0 ? mem.weights_fit : mem.fits;
}

}  // namespace

void validate(const ScaleupQuery& q) {
  if (q.batch < 0) throw InputError("batch", "must be >= 0 sequences, got " + std::to_string(q.batch));
  if (q.context < 1) throw InputError("context", "must be >= 1 token, got " + std::to_string(q.context));
  if (!(q.moe_sparsity >= 1) || !std::isfinite(q.moe_sparsity)) {
    throw InputError("moe_sparsity", "must be total / active parameters >= 1 (1 = dense), got " + scaleup_num(q.moe_sparsity));
  }
  if (!(q.memory_reserve_fraction >= 0 && q.memory_reserve_fraction < 1)) {
    throw InputError("memory_reserve_fraction", "must be a fraction in [0, 1), got " + scaleup_num(q.memory_reserve_fraction));
  }
}

LargestModel largest_model(const SystemSpec& s, const ScaleupQuery& q, Bytes kv_bytes_per_sequence) {
  validate(q);
  if (!(kv_bytes_per_sequence.value() >= 0)) {
    throw InputError("kv_bytes_per_sequence", "must be >= 0 bytes, got " + scaleup_num(kv_bytes_per_sequence.value()));
  }
  const double n = static_cast<double>(s.scale_up_domain);
  const double b_w = bytes_per_element(q.weights.value_or(DType::fp8));
  LargestModel r;
  r.domain_hbm = s.chip.hbm_capacity * n;
  r.domain_hbm_bandwidth = s.chip.hbm_bandwidth * n;
  r.usable = r.domain_hbm * (1.0 - q.memory_reserve_fraction);
  r.kv_room = kv_bytes_per_sequence * static_cast<double>(q.batch);
  r.params_total = std::max(0.0, (r.usable - r.kv_room).value()) / b_w;
  r.moe_params_active = r.params_total / q.moe_sparsity;
  const BytesPerSecond effective = r.domain_hbm_bandwidth * s.efficiency.hbm;
  r.dense_tpot_floor = (bytes(r.params_total * b_w) + kv_bytes_per_sequence) / effective;
  r.moe_tpot_floor = (bytes(r.moe_params_active * b_w) + kv_bytes_per_sequence) / effective;
  return r;
}

int64_t pipeline_stages_needed(Bytes weights, Bytes kv_room, Bytes usable) {
  if (!(usable.value() > 0)) throw InputError("memory_reserve_fraction", "leaves no usable HBM in the domain");
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil((weights + kv_room) / usable - 1e-12)));
}

ModelOnDomain place_on_domain(const ModelSpec& m, const SystemSpec& s, const ScaleupQuery& q) {
  validate(q);
  ModelOnDomain r;
  const Deployment d = make_deployment(m, s, options_for(s, q));
  r.weights = d.weight_bytes_total;
  r.kv_per_sequence = sequence_bytes(m, q.context, q.kv);  // KV plus linear layers' state
  MemoryPlan mem;
  const bool memory_ok = memory_fits(m, s, q, &mem);
  // max_batch is set from the cheapest layout below: the plain roofline's pool of HBM
  // (mem.max_batch) spreads KV evenly, which a layout that replicates it (MLA's latent under
  // attention TP) does not; decode and layouts count the layout's replication.
  r.max_batch = 0;
  r.tpot_floor = decode_step(d, 1, q.context).t_step;
  r.pipeline.hop = stage_hop(m, s);

  if (memory_ok) {
    r.fastest = fastest_layout(m, s, q);
    if (r.fastest) {
      r.fits = true;
      LayoutQuery tq;
      tq.n_chips = s.scale_up_domain;
      tq.context = q.context;
      tq.objective = LayoutObjective::throughput;
      const auto ranked = search_layouts(m, s, options_for(s, q), tq);
      if (!ranked.empty() && ranked.front().fits) r.cheapest = ranked.front();
      if (r.cheapest) {
        r.max_batch = static_cast<int64_t>(r.cheapest->batch) * r.cheapest->replicas;
        r.cheapest_tokens_per_s_per_chip = r.cheapest->tokens_per_s_per_chip;
        if (s.price_per_chip) r.cheapest_cost_per_token = UsdPerToken(s.price_per_chip->value() / r.cheapest->tokens_per_s_per_chip);
      }
      // The sequences asked for must fit as a layout stores their KV, not only in the even
      // pool memory_fits checks (DeepSeek-V3 on 8 H20 at 8192 tokens: the pool holds 31, its
      // one fitting layout, attention TP8, 3; the row said "fits" at --batch 10).
      const LayoutCandidate* holds_most = nullptr;
      for (const auto& c : ranked) {
        if (c.fits && c.pp == 1 && (!holds_most || c.batch * c.replicas > holds_most->batch * holds_most->replicas)) holds_most = &c;
      }
      const int64_t most = holds_most ? static_cast<int64_t>(holds_most->batch) * holds_most->replicas : 0;
      if (q.batch > most) {
        r.fits = false;
        r.fastest.reset();
        r.cheapest.reset();
        r.max_batch = most;
        r.cheapest_tokens_per_s_per_chip.reset();
        r.cheapest_cost_per_token.reset();
        r.reason = "no layout of the domain holds " + std::to_string(q.batch) + " sequences of " + std::to_string(q.context) +
                   " tokens: at most " + std::to_string(most) +
                   (holds_most ? " (" + holds_most->name + ", KV stored as that layout stores it)" : std::string());
      } else {
        r.pipeline.stages = 1;
        r.pipeline.layers_per_stage = n_layers(m);
        r.pipeline.hop_latency = seconds(0);
        r.pipeline.stage = r.fastest;
        r.pipeline.tpot = r.fastest->step.t_step;
        return r;
      }
    } else {
      r.reason = "the weights fit, but no layout of the domain holds them with one sequence's KV (replicated KV, or heads no "
                 "tensor-parallel degree splits)";
    }
  } else {
    r.reason = "weights " + scaleup_gb(r.weights) + " GB + KV of " + std::to_string(q.batch) + " x " + std::to_string(q.context) +
               " tokens " + scaleup_gb(r.kv_per_sequence * static_cast<double>(q.batch)) + " GB exceed " +
               scaleup_gb(mem.hbm_total - mem.reserve) + " GB usable HBM of one domain";
  }

  // A pipeline across domains: the fewest stages whose busiest stage fits one domain.
  const int64_t layers = n_layers(m);
  const int64_t first = std::max<int64_t>(
      2, pipeline_stages_needed(r.weights, r.kv_per_sequence * static_cast<double>(q.batch), mem.hbm_total - mem.reserve));
  for (int64_t p = first; p <= layers; ++p) {
    const ModelSpec stage = pipeline_stage_model(m, p);
    if (!memory_fits(stage, s, q, nullptr)) continue;
    auto best = fastest_layout(stage, s, q);
    if (!best) continue;
    r.pipeline.stages = p;
    r.pipeline.layers_per_stage = n_layers(stage);
    r.pipeline.stage = best;
    if (!r.pipeline.hop) {
      r.pipeline.reason = s.name + " states no scale-out bandwidth: the stage-to-stage hop is unknown";
      return r;
    }
    // Latency: one sequence, one microbatch, through every stage in turn.
    PipelineShape one;
    one.stages = p;
    const PipelineDecode lone = pipeline_decode(candidate_deployment(stage, s, q, *best), one, 1, q.context);
    r.pipeline.tpot = lone.cycle;  // one microbatch: the pass itself
    r.pipeline.hop_latency = lone.t_hop * static_cast<double>(p - 1) + lone.t_return;
    // Cost: every domain of the pipeline busy, its chips all counted.
    price_pipeline(stage, s, q, r.pipeline);
    if (r.pipeline.cheapest) {
      r.cheapest_tokens_per_s_per_chip = r.pipeline.cheapest->tokens_per_s_per_chip.value();
      r.cheapest_cost_per_token = r.pipeline.cheapest->cost_per_token;
    } else {
      r.pipeline.reason = "no layout of a " + std::to_string(p) + "-stage pipeline's stage holds a batch on one domain";
    }
    return r;
  }
  r.pipeline.stages = 0;
  r.pipeline.reason = "no pipeline of up to " + std::to_string(layers) + " stages (one layer each) fits one domain per stage";
  return r;
}

std::vector<ScaleupRow> scaleup_table(const ModelSpec& m, const std::vector<SystemSpec>& systems, const ScaleupQuery& q) {
  validate(q);
  std::vector<ScaleupRow> rows;
  rows.reserve(systems.size());
  for (const auto& s : systems) {
    ScaleupRow row;
    row.system = s;
    row.largest = largest_model(s, q, sequence_bytes(m, q.context, q.kv));
    row.model = place_on_domain(m, s, q);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace chalk
