// A deployment: a model's weights, KV cache and layout on n chips of a system, the inputs
// every step of roofline.cc prices (docs/formulas.md section 4). make_deployment checks the
// options and resolves the formats, the matmul precision and the parallel layout; split from
// roofline.cc by concept.
#include "chalk/engine/roofline.h"
#include "chalk/base/count_cast.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "chalk/base/error.h"
#include "chalk/engine/collective.h"
#include "chalk/model/context_math.h"
#include "draft_cost.h"

namespace chalk {
namespace {

using counts::d;

/// The matmul precision a deployment computes in when its options name none: the format of
/// the weights that dominate the step (the experts of an MoE, else the dense FFN), where the
/// chip supports it; bf16 for fp32 and int4 weights and on chips without that precision.
MatmulPrecision default_compute(const ModelSpec& m, const WeightFormats& w, const ChipSpec& chip) {
  bool has_moe = false;
  for (const auto& g : m.groups) has_moe = has_moe || g.ffn.kind == FfnKind::moe;
  const DType main = has_moe ? w.experts : w.dense_ffn;
  if (main == DType::fp32 || main == DType::int4) return MatmulPrecision::bf16;
  const MatmulPrecision p = matmul_precision(main, "weights");
  return chip.supports(p) ? p : MatmulPrecision::bf16;
}

}  // namespace

Deployment make_deployment(const ModelSpec& m, const SystemSpec& s, const DeploymentOptions& o) {
  if (o.n_chips < 1) throw InputError("--chips", "must be >= 1, got " + std::to_string(o.n_chips));
  if (o.n_chips > max_chips) throw InputError("--chips", "must be <= " + std::to_string(max_chips) + ", got " + std::to_string(o.n_chips));
  if (!(o.memory_reserve_fraction >= 0 && o.memory_reserve_fraction < 1)) {
    throw InputError("--memory-reserve", "must be a fraction in [0, 1), got " + fmt::format("{:g}", o.memory_reserve_fraction));
  }
  check_expert_balance(m, o.mechanisms.expert_balance, "--eplb");  // placing experts a dense model lacks: refused
  Deployment dep;
  dep.model = m;
  dep.system = s;
  dep.n_chips = o.n_chips;
  dep.weights = m.weights;
  if (o.weights) {
    dep.weights.attention = dep.weights.dense_ffn = dep.weights.experts = *o.weights;
    dep.weights.attention_bits = dep.weights.dense_ffn_bits = dep.weights.experts_bits = 0;  // the override's own bits
  }
  dep.kv = o.kv;
  if (o.compute) {
    if (!s.chip.supports(*o.compute)) {
      throw InputError("--compute", s.chip.name + " has no dense " + std::string(to_string(*o.compute)) +
                                        " matmul rate; expected one the chip supports");
    }
    dep.compute = *o.compute;
  } else {
    dep.compute = default_compute(m, dep.weights, s.chip);
  }
  dep.matmul_efficiency = s.efficiency.matmul_for(dep.compute);
  dep.matmul_efficiency_source = s.efficiency.matmul_source;
  if (s.efficiency.sustained_clock < 1) {
    // The fraction is the measured one times the clock the system sustains (matmul_for):
    // say so, or the line contradicts its own source (review 8 L3: B200 "66.2% of peak (...
    // 1745/2250 = 77.6%)", 0.776 x 0.853).
    dep.matmul_efficiency_source = fmt::format("{:.1f}% measured x sustained clock {:g} (efficiency.sustained_clock: the SM clock under "
                                               "sustained load); {}",
                                               100 * dep.matmul_efficiency / s.efficiency.sustained_clock, s.efficiency.sustained_clock,
                                               s.efficiency.matmul_source);
  }
  dep.hbm_efficiency = s.efficiency.hbm;
  dep.hbm_efficiency_source = s.efficiency.hbm_source;
  if (o.matmul_efficiency) {
    if (!(*o.matmul_efficiency > 0 && *o.matmul_efficiency <= 1)) {
      throw InputError("--matmul-efficiency", "must be a fraction in (0, 1], got " + fmt::format("{:g}", *o.matmul_efficiency));
    }
    dep.matmul_efficiency = *o.matmul_efficiency;
    dep.matmul_efficiency_source = "user override";
  }
  if (o.hbm_efficiency) {
    if (!(*o.hbm_efficiency > 0 && *o.hbm_efficiency <= 1)) {
      throw InputError("--hbm-efficiency", "must be a fraction in (0, 1], got " + fmt::format("{:g}", *o.hbm_efficiency));
    }
    dep.hbm_efficiency = *o.hbm_efficiency;
    dep.hbm_efficiency_source = "user override";
  }
  dep.price_per_chip = s.price_per_chip;
  dep.price_source = s.price_source;
  if (o.price_per_chip) {
    if (!(o.price_per_chip->value() > 0)) throw InputError("--price", "must be positive");
    dep.price_per_chip = o.price_per_chip;
    dep.price_source = "user override";
  }
  dep.memory_reserve_fraction = o.memory_reserve_fraction;

  dep.params = count_params(m);
  // Linear layers' recurrences cost FLOPs per token like the matmuls (no context term).
  dep.matmul_flops_per_token = 2 * dep.params.active_matmul() + model_recurrent_flops_per_token(m);
  dep.weight_bytes_total = weight_bytes(m, dep.weights);
  // A step reads every weight but the routed experts it does not touch and the input
  // embedding table, of which it gathers only one row per token (negligible). A tied
  // table is read whole anyway, as the LM head.
  dep.weight_bytes_always = dep.weight_bytes_total;
  if (!m.tie_embeddings) dep.weight_bytes_always -= Bytes(dep.params.embedding * weight_bytes_per_element(dep.weights.embedding, dep.weights.embedding_bits));
  const double kv_bytes = bytes_per_element(dep.kv);
  for (const auto& g : m.groups) {
    const auto& a = g.attention;
    Deployment::AttentionGroup ag;
    ag.layers = d(g.count);
    ag.window = a.sliding_window;
    ag.prefill_flops_per_attended = attention_flops_per_attended(a, false);
    ag.decode_flops_per_attended = attention_flops_per_attended(a, true);
    ag.kv_bytes_per_token = (kv_elements_per_token(a) - indexer_elements_per_token(a)) * kv_bytes;
    ag.reach = attention_reach(a);
    ag.index_flops_per_attended = indexer_flops_per_attended(a);
    ag.index_bytes_per_token = indexer_elements_per_token(a) * kv_bytes;
    ag.state_bytes = state_bytes_per_layer(a).value();
    dep.attention.push_back(ag);
    if (g.ffn.kind == FfnKind::moe) {
      Deployment::MoeGroup mg{d(g.count), d(g.ffn.n_experts), d(g.ffn.top_k), expert_bytes(m, g, dep.weights.experts, dep.weights.experts_bits),
                              ExpertRouting{g.ffn.n_experts, g.ffn.top_k, g.ffn.n_group, g.ffn.topk_group}, d(m.d_model), d(g.ffn.d_ff), g.ffn.gated};
      dep.weight_bytes_always -= mg.bytes_per_expert * (mg.layers * mg.n_experts);
      dep.moe.push_back(mg);
    }
  }
  dep.mtp = detail::mtp_module(m, dep.weights, dep.moe);
  const double n = d(dep.n_chips);
  dep.flops_effective = s.chip.peak_for(dep.compute) * (n * dep.matmul_efficiency);
  dep.hbm_effective = s.chip.hbm_bandwidth * (n * dep.hbm_efficiency);
  dep.mechanisms = o.mechanisms;
  if (o.mechanisms.enabled) {
    dep.mechanisms.layout = resolve_layout(o.mechanisms.layout, m, dep.n_chips, s.scale_up_domain);
  }
  return dep;
}

}  // namespace chalk
