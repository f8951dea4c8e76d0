// What drafting costs inside a decode step (draft_cost.h; docs/formulas.md, "Speculative
// decoding and MTP").
#include "draft_cost.h"

#include "chalk/base/count_cast.h"
#include "chalk/base/error.h"
#include "chalk/engine/collective.h"
#include "chalk/engine/overhead.h"
#include "chalk/model/context_math.h"
#include "chalk/model/moe.h"

namespace chalk {
namespace {
using counts::d;
}  // namespace

namespace detail {

Deployment::MtpModule mtp_module(const ModelSpec& m, const WeightFormats& f, const std::vector<Deployment::MoeGroup>& moe) {
  Deployment::MtpModule mtp;
  // One block like the model's last layer (DeepSeek-V3's MTP block is an MoE layer with MLA).
  ModelSpec one = m;
  one.groups = {m.groups.back()};
  one.groups[0].count = 1;
  one.tie_embeddings = false;
  const ParamCounts pc = count_params(one);
  const double projection = 2.0 * d(m.d_model) * d(m.d_model);  // M_k: [h; emb] (2d) -> d
  // active_matmul: the block's attention, FFN or shared and top-k experts, router, and the
  // LM head (the output head is shared with the main model but runs on every draft).
  mtp.matmul_flops_per_token = 2 * (pc.active_matmul() + projection);
  // DeepSeek-V3 counts its MTP module with its own embedding and head: 14B (report 2.2).
  mtp.params_total = pc.total() + projection;
  const Bytes all = weight_bytes(one, f);
  Bytes always = all - Bytes(pc.embedding * bytes_per_element(f.embedding)) + Bytes(projection * bytes_per_element(f.attention));
  mtp.weight_bytes_attention = Bytes((pc.attention + projection) * bytes_per_element(f.attention));
  mtp.weight_bytes_head = Bytes(pc.lm_head * bytes_per_element(f.embedding));
  mtp.weight_bytes_replicated = Bytes((pc.router + pc.norms) * bytes_per_element(f.router));
  mtp.attention_group = static_cast<int>(m.groups.size()) - 1;
  if (m.groups.back().ffn.kind == FfnKind::moe && !moe.empty()) {
    mtp.moe_group = static_cast<int>(moe.size()) - 1;
    always -= moe.back().bytes_per_expert * moe.back().n_experts;
  }
  mtp.weight_bytes_always = always;
  // The block's kernels, the projection's GEMM (with its two norms fused), LM head, sampling.
  mtp.kernels = kernels_per_layer(m.groups.back()) + 3;
  return mtp;
}

DraftPass draft_pass(const Deployment& dep, const DecodeLevers& l, double batch, int64_t context, bool by_layout) {
  DraftPass p;
  const double n = d(dep.n_chips);
  if (l.drafter == Drafter::mtp) {
    const Deployment::MtpModule& m = dep.mtp;
    const auto& a = dep.attention[static_cast<std::size_t>(m.attention_group)];
    const double s = attended(context, a.window);
    p.flops = batch * (m.matmul_flops_per_token + a.decode_flops_per_attended * s);
    p.kv_bytes = batch * a.kv_bytes_per_token * s;
    p.weight_bytes_total = m.weight_bytes_always.value();
    // The plain roofline spreads every weight over the chips. Under a layout the module is
    // sharded as the main model's layers are (overhead.cc): with data-parallel attention
    // (tp_attention 1) every chip reads the module's whole attention and LM head.
    const bool laid_out = by_layout && dep.mechanisms.enabled;
    const ParallelLayout& L = dep.mechanisms.layout;
    if (laid_out) {
      const Bytes ffn = m.weight_bytes_always - m.weight_bytes_attention - m.weight_bytes_head - m.weight_bytes_replicated;
      p.weight_bytes_busiest = ((m.weight_bytes_attention + m.weight_bytes_head) / d(L.tp_attention) + ffn / d(L.tp_ffn) + m.weight_bytes_replicated).value();
    } else {
      p.weight_bytes_busiest = m.weight_bytes_always.value() / n;
    }
    if (m.moe_group >= 0) {
      const auto& g = dep.moe[static_cast<std::size_t>(m.moe_group)];
      p.weight_bytes_total += g.bytes_per_expert.value() * expected_experts_touched(g.n_experts, g.top_k, batch);
      const int64_t ranks = laid_out ? L.ep : dep.n_chips;
      const double split = laid_out ? d(L.tp_expert) : 1.0;
      p.weight_bytes_busiest += g.bytes_per_expert.value() * busiest_chip_experts(g.routing, batch, ranks) / split;
    }
    p.kernels = d(m.kernels);
  } else if (l.drafter == Drafter::model) {
    const DraftModelCost& c = l.draft_model;
    const double s = d(context);
    p.flops = batch * (c.matmul_flops_per_token + c.attention_flops_per_context * s);
    p.kv_bytes = batch * c.kv_bytes_per_context * s;
    p.weight_bytes_total = c.weight_bytes.value();
    p.weight_bytes_busiest = c.weight_bytes.value() / n;
    p.kernels = d(c.kernels);
  }
  return p;
}

Seconds draft_pass_time(const Deployment& dep, const DraftPass& p) {
  const double n = d(dep.n_chips);
  return max(Flops(p.flops) / dep.flops_effective, (Bytes(p.weight_bytes_busiest * n) + Bytes(p.kv_bytes)) / dep.hbm_effective);
}

Seconds engine_draft_time(const Deployment& dep, const DecodeLevers& l, double batch, int64_t context) {
  const double passes = l.drafter == Drafter::none ? 0 : d(l.tokens_per_sequence) - 1;
  if (!(passes > 0) || !(batch > 0)) return Seconds(0);
  // The engine runs each draft pass as its own kernels after the verify step; the
  // drafter's collectives are not modelled. Its weights sharded as the layout shards the
  // main model's (draft_pass's by_layout).
  const Seconds floor = op_floor(dep.system, dep.mechanisms.calibration);
  const DraftPass laid = draft_pass(dep, l, batch, context, true);
  return (draft_pass_time(dep, laid) + floor * laid.kernels) * passes;
}

}  // namespace detail

DraftModelCost draft_model_cost(const ModelSpec& draft, DType weights, DType kv) {
  validate(draft, draft.name);
  DraftModelCost c;
  const ParamCounts pc = count_params(draft);
  c.matmul_flops_per_token = 2 * pc.active_matmul();
  WeightFormats f = draft.weights;
  f.attention = f.dense_ffn = f.experts = weights;
  c.weight_bytes = weight_bytes(draft, f);
  int64_t kernels = 4;  // embedding, final norm, LM head, sampling (Calibration::kernels_per_step)
  for (const auto& g : draft.groups) {
    c.attention_flops_per_context += d(g.count) * attention_flops_per_attended(g.attention, true);
    c.kv_bytes_per_context += d(g.count) * kv_elements_per_token(g.attention) * bytes_per_element(kv);
    kernels += g.count * kernels_per_layer(g);
  }
  c.kernels = kernels;
  return c;
}

}  // namespace chalk
