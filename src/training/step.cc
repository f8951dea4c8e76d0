// One training step (docs/training.md, "Step").
#include "chalk/training/step.h"
#include "chalk/base/count_cast.h"

#include <algorithm>
#include <cmath>

#include "chalk/base/error.h"
#include "chalk/training/eager_kernels.h"
#include "chalk/training/kernel_fixed_time.h"
#include "chalk/training/kernels.h"
#include "chalk/training/memory.h"
#include "chalk/training/ring_attention.h"
#include "chalk/training/step_split.h"
#include "step_collectives.h"

namespace chalk {
namespace {

using counts::d;

}  // namespace

TrainingStep training_step(const TrainingCosts& c, const TrainingSystem& s, const TrainingPlan& p, const Placement& pl) {
  return training_step(c, s, p, pl, training_memory(c, s, p, pl));
}

TrainingStep training_step(const TrainingCosts& c, const TrainingSystem& s, const TrainingPlan& p, const Placement& pl,
                           const TrainingMemory& mem) {
  return training_step(c, s, p, pl, mem, prepare_training_step(c, s, p));
}

TrainingStep training_step(const TrainingCosts& c, const TrainingSystem& s, const TrainingPlan& p, const Placement& pl,
                           const TrainingMemory& mem, const TrainingStepSplit& split) {
  // Every figure is a local, and the result is built once at the end (no zeroing of the
  // whole struct first): the layout search evaluates tens of thousands of plans.
  using step_collectives::Links, step_collectives::p2p, step_collectives::inner_ranks, step_collectives::group_all_reduce, step_collectives::group_all_gather;
  const Links links{s.up, s.has_scale_out ? &s.out : nullptr};
  const double L = d(c.layers);
  const double h = d(c.d_model), b = d(p.microbatch), S = d(c.seq_len);
  const double shard = d(p.tp * p.cp);
  const double tok = b * S;  // tokens per microbatch per replica
  const int64_t m = pl.microbatches;
  const double mm_rate = s.matmul_rate.value(), hbm = s.hbm_rate.value();

  // Compute per microbatch of one average layer, forward.
  // ... at the MAMF rate; each pass's GEMMs at their shapes' fraction of it (step.h,
  // gemm_shape_factors: wave and tile quantization).
  const GemmShapeFactors gs = gemm_shape_factors(c, s, p);
  const double layer_mm = tok * split.layer_matmul_s;
  const double layer_mm_f = layer_mm * gs.inv_forward, layer_mm_d = layer_mm * gs.inv_dgrad, layer_mm_w = layer_mm * gs.inv_wgrad;
  // The attention core: the causal count under FlashAttention, the whole s x s square when
  // the scores are materialised (kernels.h, attention_core_flops_per_token).
  const double at_flops = attention_core_flops_per_token(c, p.flash_attention);
  // ... at the engine's kernel's rates (prepare_training_step).
  const double layer_at = tok * split.layer_attention_s;
  // The memory-bound kernels between the GEMMs, on this rank's b s / cp tokens, their bytes
  // per token prepared (prepare_training_step: kernels.h, eager_kernels.h).
  const double inv_hbm = split.inv_hbm, rank_tok_per_hbm = tok * split.rank_hbm_s;  // seconds per byte per token of this rank
  // Each kernel's fixed time besides its work (kernel_fixed_time.h): the memory-bound
  // kernels' here, the GEMMs' and the attention core's with the GEMMs below.
  const LayerFixedTime& fx = split.fixed;
  const double layer_el_f = rank_tok_per_hbm * split.memory_bound.forward + fx.forward_other;
  const double layer_el_b = rank_tok_per_hbm * split.memory_bound.backward + fx.backward_other;
  // Context parallelism's ring around the attention kernel (ring_attention.h).
  const RingStepTerms ring = ring_step_terms(c, p, tok, hbm);
  const double layer_ring_f = ring.merge_forward_s, layer_ring_b = ring.merge_backward_s;
  // Materialised attention scores (no FlashAttention): each of the s x s score elements per
  // head crosses HBM kScoreBytesForward times in forward and kScoreBytesBackward in backward
  // (scores_hbm_bytes; Dao et al. 2022 section 2.2, Algorithm 0).
  double layer_sc_f = 0, layer_sc_b = 0;
  if (!p.flash_attention) {
    const double elements = tok * S * (c.act_scores_per_token_per_ctx / 5.0) / shard;  // heads x s x s per sequence
    layer_sc_f = scores_hbm_bytes(elements, p.activation_bytes, false, p.dropout) * inv_hbm;
    layer_sc_b = scores_hbm_bytes(elements, p.activation_bytes, true, p.dropout) * inv_hbm;
  }
  const double at_bwd = p.flash_attention ? 2.5 : 2.0;  // FlashAttention's backward recomputes the scores (Dao 2022 3.1)
  // ... and runs below the forward's rate (kernels.h, attention_backward_rate_ratio; the
  // kernel sees s / cp tokens per call): at_bwd_time is the backward's time over the forward's.
  const double at_bwd_time = split.attention_backward_time;
  // One output layer: the LM head GEMM (vocabulary split over tp) and the loss over its
  // logits (loss_hbm_bytes).
  const double head_mm = tok * split.head_matmul_s;
  const double head_mm_f = head_mm * gs.inv_head_forward, head_mm_d = head_mm * gs.inv_head_dgrad, head_mm_w = head_mm * gs.inv_head_wgrad;
  const double logits = tok * split.logits_per_token;
  // The GEMMs' epilogues (kernels.h, gemm_output_bytes): forward outputs, backward input
  // gradients, and the weight gradients accumulated per microbatch into the gradient buffer
  // (weight_grad_bytes_per_param) for the parameters this rank holds per layer. The head
  // writes its logits (V / tp per token) and its input gradient (h), and accumulates V h / tp
  // weight gradients.
  const KernelBytes& go = split.gemm_outputs;
  const double wg = weight_grad_bytes_per_param(p);
  const double layer_params = split.layer_params;
  const double layer_out_f = rank_tok_per_hbm * go.forward, layer_out_b = rank_tok_per_hbm * go.backward;
  const double layer_wg = layer_params * wg * inv_hbm;
  // FSDP2 copies each gathered layer out into its parameters on the compute stream, once
  // forward and once backward (eager_kernels.h, fsdp2_copy_out_bytes).
  const double layer_copy = fsdp2_copy_out_bytes(p, layer_params) * inv_hbm / 2;
  const double head_out_f = logits * p.activation_bytes * inv_hbm, head_out_b = rank_tok_per_hbm * h * p.activation_bytes;
  const double head_wg = split.head_params * wg * inv_hbm;
  // GEMM time per layer and per output layer: forward, backward (input and weight
  // gradients), and the weight-gradient part of the backward.
  const double layer_gf = layer_mm_f + layer_out_f + fx.forward_gemm, layer_gb = layer_mm_d + layer_mm_w + layer_out_b + layer_wg + fx.backward_gemm;
  const double layer_gw = layer_mm_w + layer_wg + fx.wgrad;
  const double head_gf = head_mm_f + head_out_f, head_gb = head_mm_d + head_mm_w + head_out_b + head_wg, head_gw = head_mm_w + head_wg;
  // ... as the engine runs it: the fused loss, or PyTorch's eager fp32 cross-entropy
  // (eager_kernels.h, torch_loss_bytes).
  const double head_loss_f = torch_loss_bytes(p, logits, false) * inv_hbm, head_loss_b = torch_loss_bytes(p, logits, true) * inv_hbm;
  // The busiest stage sets the pipeline's pace: its layers and output layers.
  const bool rerun = p.recompute == Recompute::full || p.reversible;
  const bool rerun_scores = p.recompute == Recompute::selective && !p.flash_attention;
  // Recompute modules rerun their part of the forward in backward (plan.h RecomputeModule):
  // the norms (their forward kernels), the experts' activation function, MLA's q_b and kv_b
  // GEMMs (with their per-head Q, K, V outputs written again).
  double layer_modules = 0;
  if (!rerun) {
    const double rank_tok = tok / d(p.cp), e = p.activation_bytes;
    const double rep = p.sequence_parallel ? d(p.tp) : 1.0;
    if (p.recompute_modules & kRecomputeLayernorm) layer_modules += rank_tok * 2 * e * c.norm_width / rep / hbm;
    if (p.recompute_modules & kRecomputeMoeAct) layer_modules += rank_tok * e * c.moe_act_fn_forward_elements / d(p.tp) / hbm;
    if (p.recompute_modules & kRecomputeMlaUpProj) {
      layer_modules += rank_tok * c.mla_up_proj_flops_per_token / d(p.tp) / mm_rate / gs.forward + rank_tok * c.act_mla_qkv / 2 * e / d(p.tp) / hbm;
    }
  }
  // torchtitan's op-level selective policy (attention_kernels.h): the block's memory-bound
  // forward kernels rerun, the attention core does not, and of its linears the
  // even-numbered ones (bf16 and Float8 alike).
  const bool op_sac = !rerun && p.recompute == Recompute::selective && p.selective_recompute == SelectiveRecompute::every_second_matmul;
  const double op_sac_share = op_sac ? c.every_second_matmul_flops_per_token / (c.matmul_flops_per_token - c.lm_head_flops_per_token) : 0.0;
  const double layer_op_sac = op_sac ? op_sac_share * layer_gf + layer_el_f : 0.0;
  const double layer_rec = (rerun ? layer_gf + layer_at + layer_el_f + layer_ring_f + layer_sc_f : rerun_scores ? layer_at + layer_sc_f : 0.0) + layer_modules + layer_op_sac;
  const BusiestStage busy = busiest_stage(c, p, pl, layer_gf + layer_gb + (1 + at_bwd_time) * layer_at + layer_el_f + layer_el_b + layer_ring_f + layer_ring_b + layer_sc_f + layer_sc_b + layer_rec + 2 * layer_copy,
                                          head_gf + head_gb + head_loss_f + head_loss_b);
  const double nl = busy.layers;
  const double t_mm_f = nl * layer_gf + busy.heads * head_gf, t_mm_b = nl * layer_gb + busy.heads * head_gb;
  const double t_mm_w = nl * layer_gw + busy.heads * head_gw, t_at = nl * layer_at;
  const double t_el_f = nl * (layer_el_f + layer_ring_f + layer_copy), t_el_b = nl * (layer_el_b + layer_ring_b + layer_copy), t_sc_f = nl * layer_sc_f, t_sc_b = nl * layer_sc_b;
  const double t_loss_f = busy.heads * head_loss_f, t_loss_b = busy.heads * head_loss_b;
  const double t_rec = nl * layer_rec;  // the layers' forward again (the output layer is not checkpointed)

  // Tensor parallel: 2 all-reduces (or SP's all-gather + reduce-scatter pairs) per layer
  // forward, 2 backward, on the TP link (Narayanan 2.3; Korthikanti 4.2.2).
  // Under sequence parallelism the backward gathers the two column-parallel GEMM inputs
  // again for their weight gradients (plan.h, sp_regather_exposed), where it is not hidden.
  // Without sequence parallelism a pipeline's receiver gathers the scattered activation over
  // the same link (pp_gather, below).
  double tp_ar = 0, tp_regather = 0, pp_gather = 0;
  if (p.tp > 1) {
    const LinkModel& link = pl.tp_in_domain ? s.up : links.outward("tensor parallelism");
    const Bytes activations(tok / d(p.cp) * h * p.activation_bytes);
    tp_ar = all_reduce_time(activations, p.tp, link).value();
    if (p.sequence_parallel) {
      if (p.sp_regather_exposed) tp_regather = 2 * all_gather_time(activations, p.tp, link).value();
    } else if (p.pp > 1) {
      pp_gather = all_gather_time(activations, p.tp, link).value();
    }
  }
  const double tp_f = 2 * nl * tp_ar, tp_b = 2 * nl * tp_ar + nl * tp_regather + (rerun ? tp_f : 0.0);

  // Context parallel: ring exchange of K/V chunks, cp - 1 sends per layer forward, twice
  // that backward (K/V and their gradients), hidden behind the attention core; what moves
  // depends on the ring (ring_attention.h, RingStepTerms).
  double cp_f = 0;
  if (p.cp > 1) {
    const LinkModel& link = pl.cp_in_domain ? s.up : links.outward("context parallelism");
    cp_f = nl * d(p.cp - 1) * p2p(tok / d(p.cp) * ring.exchange_elements_per_token * p.activation_bytes / d(p.tp), link);
  }
  const double cp_total = cp_f * ((rerun ? 3.0 : 2.0) + ring.gradient_exchange_factor);
  const double cp_exposed = std::max(0.0, cp_total - t_at * (1 + at_bwd_time + (rerun ? 1 : 0)));

  // Expert parallel: dispatch and combine all-to-alls per MoE layer forward, again backward
  // (training-and-systems.md 6.1). Across domains, under DeepEP/HybridEP, the NIC carries
  // one copy per distinct remote domain a token's experts lie on (node-limited routing caps
  // it), then the scale-up link fans out (DeepSeek-V3 3.2.2); under NCCL's all-to-all
  // (EpDispatcher::all_to_all) every copy bound for another domain crosses the NIC on its
  // own, k (G - 1) / G per token, and the scale-up link carries the k / G that stay.
  double ep_f = 0;
  if (c.moe && p.ep > 1) {
    const double tokens_rank = tok / shard;
    const double layers = nl * c.moe_layer_fraction;
    const double k = d(c.top_k);
    auto exchange = [&](double bytes_per_element) {
      const double up_bytes = tokens_rank * k * h * bytes_per_element;
      if (pl.ep_in_domain) return all_to_all_time(Bytes(up_bytes), p.ep, s.up).value();
      const double G = d(p.ep / pl.ep_ranks_per_domain);
      if (p.ep_dispatcher == EpDispatcher::all_to_all) {
        const double nic = p2p(tokens_rank * k * (G - 1) / G * h * bytes_per_element, links.outward("expert parallelism"));
        const double local = pl.ep_ranks_per_domain > 1 ? all_to_all_time(Bytes(up_bytes / G), pl.ep_ranks_per_domain, s.up).value() : 0.0;
        return std::max(nic, local);
      }
      double domains = G * (1 - std::pow(1 - 1 / G, k));
      if (p.route_domain_limit > 0) domains = std::min(domains, d(p.route_domain_limit));
      const double remote = domains * (G - 1) / G;
      const double nic = p2p(tokens_rank * remote * h * bytes_per_element, links.outward("expert parallelism"));
      const double fan = pl.ep_ranks_per_domain > 1 ? all_to_all_time(Bytes(up_bytes), pl.ep_ranks_per_domain, s.up).value() : 0.0;
      return std::max(nic, fan);
    };
    ep_f = layers * (exchange(p.dispatch_bytes) + exchange(p.combine_bytes));
  }
  const double ep_total = ep_f * (rerun ? 3.0 : 2.0);

  // Pipeline sends: one activation (forward) and one gradient (backward) per chunk per
  // microbatch, scattered over the TP ranks (Narayanan 4.1). Without sequence parallelism
  // each rank holds the whole tensor: it sends its 1/tp and the receiver all-gathers the
  // pieces over the TP link before it computes (Megatron-LM p2p_communication.py,
  // gather_split_1d_tensor after the receive), exposed.
  double pp_send = 0;
  if (p.pp > 1) {
    const LinkModel& link = pl.pp_in_domain ? s.up : links.outward("pipeline");
    pp_send = d(pl.chunks) * (p2p(tok / shard * h * p.activation_bytes, link) + pp_gather);
  }

  const bool dual = p.schedule == PipelineSchedule::dualpipe && p.pp > 1;
  // Megatron-Core's EP overlap pairs a forward with an earlier microbatch's backward within
  // the stage (plan.h, ep_overlap): EP hides as under DualPipe, the PP sends do not.
  const bool ep_paired = !dual && p.ep_overlap && ep_total > 0;
  const bool paired_ep = dual || ep_paired;
  // Under either overlap the communication kernels hold SMs while compute runs.
  const double slow = paired_ep && ep_total > 0 ? 1 / (1 - s.communication_sm_fraction) : 1.0;
  const double compute_f = (t_mm_f + t_at + t_el_f + t_sc_f + t_loss_f) * slow;
  const double compute_b = (t_mm_b + at_bwd_time * t_at + t_el_b + t_sc_b + t_loss_b + t_rec) * slow;
  // DualPipe overlaps a forward chunk of one microbatch with a backward chunk of another,
  // hiding EP and PP traffic behind compute (DeepSeek-V3 3.2.1).
  const double ep_exposed = paired_ep ? std::max(0.0, ep_total - (compute_f + compute_b)) : ep_total;
  const double pp_exposed = dual ? 0.0 : 2 * pp_send;
  const double ep_share = ep_total > 0 ? ep_exposed / ep_total : 0.0;
  const double cp_share = cp_total > 0 ? cp_exposed / cp_total : 0.0;
  // While a collective runs hidden behind compute, its kernels hold SMs the compute then
  // lacks (sm_contention); DualPipe's slowdown above already covers its own overlap.
  const double sm = slow > 1 ? 0.0 : s.communication_sm_fraction;
  const double cp_hidden = cp_total - cp_exposed;
  const double cp_lost_f = cp_total > 0 ? sm_contention(cp_hidden * cp_f / cp_total, sm) : 0.0;
  const double cp_lost_b = cp_total > 0 ? sm_contention(cp_hidden * (cp_total - cp_f) / cp_total, sm) : 0.0;
  const double t_f = compute_f + cp_lost_f + tp_f + ep_f * ep_share + cp_f * cp_share + pp_exposed / 2;
  const double t_b = compute_b + cp_lost_b + tp_b + (ep_total - ep_f) * ep_share + (cp_total - cp_f) * cp_share + pp_exposed / 2;
  const double t_w = t_mm_w * slow;
  Seconds bubble = pipeline_bubble(p.schedule, p.pp, m, p.virtual_stages, Seconds(t_f), Seconds(t_b), Seconds(t_w));
  int64_t unpaired = 0;
  double alone_f = 0, alone_b = 0, t_unpaired = 0;
  if (dual) {
    // DualPipe's warm-up and cool-down (deepseek-ai/DualPipe dualpipe.py, DualPipe.step
    // steps 1-3 and 5-8): on rank 0, the busiest (busiest_stage), 3p/2 - 1 forward chunks and
    // as many backward chunks have no chunk of the other direction to pair with. Each runs on
    // every SM with its EP and PP traffic exposed; the rest pair as t_f + t_b. The bubble's
    // B and W are such lone chunks: (p/2 - 1)(F&B + B - 3W) (DualPipe README; DeepSeek-V3
    // Table 2). Zhao et al. 2025 (ISCA) Table 4 measures the phases apart: 1F 1.13 s, 1B
    // 1.99 s, 1W 0.48 s, bubble 2.06 s around 13.95 s of paired 1F1B.
    unpaired = dualpipe_unpaired_chunks(p.pp, m);
    alone_f = t_f - compute_f * (1 - 1 / slow) + ep_f * (1 - ep_share) + pp_send;
    alone_b = t_b - compute_b * (1 - 1 / slow) + (ep_total - ep_f) * (1 - ep_share) + pp_send;
    t_unpaired = d(unpaired) * (alone_f + alone_b - t_f - t_b);
    bubble = dualpipe_bubble(p.pp, Seconds(t_f + t_b), Seconds(alone_b), Seconds(t_mm_w));
  } else if (ep_paired) {
    // The forwards before the first backward and the backwards after the last forward have
    // nothing to pair with: with pp = 1 the first forward and the last backward; on the
    // interleaved schedule's first stage its warm-up chunks, (pp - 1) 2 + (v - 1) pp
    // (Megatron-Core's get_pipeline_parallel_order / num_warmup_microbatches), each 1/v of a
    // microbatch, and as many cool-down chunks. They run with their EP exposed.
    const double v = d(pl.chunks);
    const double alone = p.pp <= 1 ? 1.0 : std::min(d(m) * v, d(p.pp - 1) * 2 + (v - 1) * d(p.pp)) / v;
    alone_f = t_f - compute_f * (1 - 1 / slow) + ep_f * (1 - ep_share);
    alone_b = t_b - compute_b * (1 - 1 / slow) + (ep_total - ep_f) * (1 - ep_share);
    t_unpaired = alone * (alone_f + alone_b - t_f - t_b);
    unpaired = static_cast<int64_t>(std::ceil(alone * v));
  }
  const double work = d(m) * (t_f + t_b) + t_unpaired;
  const Seconds t_pipeline = Seconds(work) + bubble;
  const double paired = d(m) * (t_f + t_b);

  // Data parallel: gradients reduced over dp x cp ranks (dense) and the expert
  // data-parallel ranks (experts); ZeRO-1/2 reduce-scatter the gradients and all-gather
  // the updated weights; ZeRO-3 all-gathers the weights in forward and backward and
  // reduce-scatters the gradients per microbatch (ZeRO 7.2). The parameters are those the
  // chip's stage holds (training_memory: its two DualPipe stages, the tables).
  const double dense = mem.dense_params_per_chip, experts = mem.expert_params_per_chip;
  const int64_t n_dense = p.dp * p.cp, in_dense = inner_ranks(n_dense, s.domain / p.tp);
  // A dense model has no expert group: its collectives are 0 (group_all_*'s M <= 0).
  const int64_t n_exp = experts > 0 ? p.tp * p.cp * p.dp / (p.ep * p.etp) : 1;
  const int64_t in_exp = experts > 0 ? inner_ranks(n_exp, s.domain / (p.ep * p.etp)) : 1;
  const double g = p.state.gradients, w = p.state.weights;
  const char* what = "data-parallel gradient reduce";
  double dp_time = 0, exposed = 0, lost = 0;
  const double window = t_f + t_b;
  // The gradients are final only during the step's last backward: the reduce (ZeRO-0's
  // all-reduce, ZeRO-1/2's reduce-scatter) hides behind that one backward, bucket by bucket
  // (PyTorch DDP, Li et al. 2020 section 3.2.3). ZeRO-1/2 gather the updated parameters
  // after the optimizer step, so that gather hides at best behind the next step's first
  // forward (Megatron-Core's overlap_param_gather; ZeRO, Rajbhandari et al. 2020 section 7).
  if (p.zero_stage == 0) {
    dp_time = group_all_reduce(dense * g, n_dense, in_dense, links, what) + group_all_reduce(experts * g, n_exp, in_exp, links, what);
    const double hidden = p.overlap_grad_reduce ? std::min(dp_time, t_b) : 0.0;
    exposed = dp_time - hidden;
    lost = sm_contention(hidden, s.communication_sm_fraction);
  } else if (p.zero_stage < 3) {
    const double rs = group_all_gather(dense * g, n_dense, in_dense, links, what) + group_all_gather(experts * g, n_exp, in_exp, links, what);
    const double ag = group_all_gather(dense * w, n_dense, in_dense, links, what) + group_all_gather(experts * w, n_exp, in_exp, links, what);
    dp_time = rs + ag;
    const double rs_hidden = p.overlap_grad_reduce ? std::min(rs, t_b) : 0.0, ag_hidden = std::min(ag, t_f);
    exposed = (rs - rs_hidden) + (ag - ag_hidden);
    lost = sm_contention(rs_hidden + ag_hidden, s.communication_sm_fraction);
  } else {
    const double per_mb = 2 * group_all_gather(dense * w, n_dense, in_dense, links, what) +
                          group_all_gather(dense * g, n_dense, in_dense, links, what) +
                          2 * group_all_gather(experts * w, n_exp, in_exp, links, what) +
                          group_all_gather(experts * g, n_exp, in_exp, links, what);
    dp_time = per_mb * d(m);
    exposed = std::max(0.0, per_mb - window) * d(m);
    lost = sm_contention(std::min(per_mb, window), s.communication_sm_fraction) * d(m);
  }
  // Optimizer: the grad-norm pass and AdamW over the parameters whose optimizer states this
  // chip keeps (all it holds under ZeRO-0; its 1/DP shard from ZeRO-1 on), at the HBM rate.
  const double owned = p.state.optimizer > 0 ? mem.optimizer.value() / p.state.optimizer : 0.0;
  // ... and the mixed-precision housekeeping around it: the working weights' copy, the
  // gradient buffer's zeroing, fp16's unscale (optimizer_housekeeping_bytes); or PyTorch's
  // foreach clipping and AdamW (eager_kernels.h, torch_optimizer_bytes).
  const Seconds t_optimizer = Seconds(torch_optimizer_bytes(p, owned, mem.params_per_chip) * inv_hbm);
  const Seconds t_step = t_pipeline + Seconds(exposed) + Seconds(lost) + t_optimizer;

  const double chips = d(plan_chips(p));
  const double tokens_per_step = d(p.global_batch) * S;
  const double inv_t = 1 / t_step.value(), inv_chips = 1 / chips;
  const TokensPerSecond tokens_per_s = TokensPerSecond(tokens_per_step * inv_t);
  const double fwd_per_token = c.matmul_flops_per_token + c.attention_flops_per_token;
  const Flops model_flops = Flops(3 * fwd_per_token * tokens_per_step);
  double extra = (at_bwd - 2.0) * c.attention_flops_per_token;
  // Full recomputation (and reversible layers) rerun the layers' forward, not the output
  // layer's (Narayanan et al. 2021 Eq. 3 counts the head 3x, not 4x; Megatron-LM PR #995).
  if (rerun) extra += fwd_per_token - c.lm_head_flops_per_token;
  else if (p.recompute == Recompute::selective && !p.flash_attention) extra += c.attention_flops_per_token;
  if (!rerun && (p.recompute_modules & kRecomputeMlaUpProj)) extra += c.mla_up_proj_flops_per_token * L;
  extra += op_sac_share * (c.matmul_flops_per_token - c.lm_head_flops_per_token);
  // Materialised scores also multiply the masked half of the square in every pass they run:
  // forward, backward (2x) and the recomputed forward (attention_core_flops_per_token).
  if (!p.flash_attention) extra += (3.0 + (rerun || rerun_scores ? 1.0 : 0.0)) * (at_flops - c.attention_flops_per_token);
  const Flops hardware_flops = model_flops + Flops(extra * tokens_per_step);
  const double per_peak = inv_t * inv_chips * split.inv_peak;  // 1 / (step time x chips x peak)
  return TrainingStep{
      .microbatches = m,
      .busy_layers = busy.layers,
      .busy_output_layers = busy.heads,
      .t_forward = Seconds(t_f),
      .t_backward = Seconds(t_b),
      .t_weight_grad = Seconds(t_w),
      .t_matmul = Seconds(t_mm_f + t_mm_b),
      .t_attention = Seconds((1 + at_bwd_time) * t_at),
      .t_recompute = Seconds(t_rec),
      .t_elementwise = Seconds(t_el_f + t_el_b + t_sc_f + t_sc_b + t_loss_f + t_loss_b),
      .t_tp = Seconds(tp_f + tp_b),
      .t_cp = Seconds(cp_total),
      .t_ep = Seconds(ep_total),
      .t_pp = Seconds(2 * pp_send),
      .t_cp_exposed = Seconds(cp_exposed),
      .t_ep_exposed = Seconds(ep_exposed),
      .t_pp_exposed = Seconds(pp_exposed),
      .unpaired_chunks = unpaired,
      .t_forward_alone = Seconds(alone_f),
      .t_backward_alone = Seconds(alone_b),
      .t_unpaired = Seconds(t_unpaired),
      .t_pipeline = t_pipeline,
      .t_bubble = bubble,
      .bubble_fraction = paired > 0 ? bubble.value() / paired : 0.0,
      .t_dp = Seconds(dp_time),
      .t_dp_exposed = Seconds(exposed),
      .t_optimizer = t_optimizer,
      .t_dp_sm_contention = Seconds(lost),
      .t_cp_sm_contention = Seconds(d(m) * (cp_lost_f + cp_lost_b)),
      .t_step = t_step,
      .tokens_per_step = tokens_per_step,
      .tokens_per_s = tokens_per_s,
      .tokens_per_s_per_chip = tokens_per_s * inv_chips,
      .model_flops = model_flops,
      .hardware_flops = hardware_flops,
      .mfu = model_flops.value() * per_peak,
      .hfu = hardware_flops.value() * per_peak,
      .model_flops_per_s_per_chip = FlopsPerSecond(model_flops.value() * inv_t * inv_chips),
  };
}

}  // namespace chalk
