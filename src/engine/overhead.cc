// The GPU side of the engine step with mechanisms beyond the roofline, for one choice of
// two micro-batches or one (docs/formulas.md, fidelity); the step itself: engine_step.cc; the
// attention core and the step's total after it: attention_core.cc.
#include "chalk/engine/overhead.h"
#include "chalk/base/count_cast.h"
#include "chalk/engine/step_mix.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "chalk/engine/collective.h"
#include "chalk/engine/gemm_shape.h"
#include "chalk/base/error.h"
#include "chalk/model/moe.h"
#include "chalk/engine/roofline.h"
#include "attention_work.h"
#include "dense_gemm.h"
#include "dp_ranks.h"
#include "ep_kernels.h"
#include "expert_activations.h"
#include "graph_step.h"
#include "host_step.h"
#include "overlap_windows.h"
#include "matmul_rate.h"
#include "memory_kernels.h"
#include "step_ledger.h"
#include "step_with.h"
#include "system_links.h"

namespace chalk {

namespace {

using detail::decode_windows;
using detail::DecodeWindows;
using detail::rate_for;
using detail::Ledger;
using detail::busiest_load;
using detail::link_for;
using counts::d;

/// Expert-parallel traffic of normal (prefill) all-to-all kernels while two micro-batches
/// overlap it with compute runs this many times as long as at the unit tests' rates
/// (DEEPEP-NORMAL; the traffic model below). SGLang's large-scale EP blog (2025-05-05,
/// "Profile Results"): DeepSeek's profile and SGLang both measure communication under
/// two-batch overlap slower than the unit test, which SGLang reaches only without overlap.
/// Size, from DeepSeek's prefill profile (deepseek-ai/profile-data: EP32 TP1, 4K prompts,
/// 16,384 tokens per H800, balanced routing), 62,713 tok/s per node as tabulated there: a
/// step of 16,384 / 7,839.1 = 2.0900 s, against 1.5207 s of traffic in this model of that
/// step (communication-bound): 2.0900 / 1.5207 = 1.374. Not a microbenchmark: an
/// end-to-end profile of another engine and chip, to re-derive when the traffic model
/// changes (Overhead.ReproducesDeepSeekPrefillProfile pins it). Listed by
/// validate_summary.cc's calibration table with the same value.
constexpr double kOverlappedAllToAllSlowdown = 2.0900 / 1.5207;

}  // namespace

/// The busiest unit's shares of the step (step_with.h), after the checks of engine_step.
detail::StepShares detail::step_shares(const Deployment& dep, const StepShape& s, const StepMix* mix) {
  if (s.decode_sequences < 0 || s.prefill_sequences < 0 || s.context < 0 || s.prompt < 0 || s.prefix < 0 ||
      s.tokens_per_sequence < 1 || s.attention_tokens_per_sequence < 0) {
    throw InputError("step", "sequences, context, prompt and prefix must be >= 0 and tokens per sequence >= 1");
  }
  if (mix != nullptr) {
    if (mix->tokens_per_sequence < 1 || mix->decode_context_sum < 0) {
      throw InputError("step", "decode contexts must be >= 0 and tokens per sequence >= 1");
    }
    for (const auto& c : mix->chunks) {
      if (c.tokens < 0 || c.prefix < 0) throw InputError("step", "prefill chunks and prefixes must be >= 0");
    }
  }
  const double n_decode = mix != nullptr ? d(mix->decodes()) : s.decode_sequences;
  const double n_prefill = mix != nullptr ? d(static_cast<int64_t>(mix->chunks.size())) : s.prefill_sequences;
  const auto& L = dep.mechanisms.layout;
  const double n = d(dep.n_chips);
  const double dp_attention = n / d(L.tp_attention);
  // Sequences are whole: over g data-parallel groups the busiest holds ceil(S / g) of the
  // step's S sequences, so its share of the work is that over the mean S / g (1 when S is
  // a multiple of g; g at batch 1).
  const double sequences = n_decode > 0 ? n_decode : n_prefill;
  auto busiest_share = [&](double groups) {
    if (groups <= 1 || sequences <= 0) return 1.0;
    const double mean = sequences / groups;
    return std::ceil(mean - 1e-9) / mean;
  };
  StepShares sh;
  sh.attention = busiest_share(dp_attention);
  sh.head = sh.attention;
  sh.ffn = busiest_share(n / d(L.tp_ffn));
  sh.core_flops = L.kv_sharded_by_batch ? busiest_share(n) : sh.attention;
  sh.kv = sh.core_flops;
  if (mix != nullptr && (dp_attention > 1 || L.kv_sharded_by_batch)) {
    // A mix of unequal sequences: each lives on one data-parallel rank (the mix's ranks or
    // the least-loaded one), the busiest rank's tokens and attention set the attention
    // part; a dense FFN group gathers its ranks' tokens; the experts see every token
    // (dp_ranks.h). Equal sequences give the shares above.
    thread_local std::vector<detail::RankLoad> ranks, by_chip;  // storage reused: the simulator asks every step
    detail::rank_loads_into(dep, *mix, dep.n_chips / L.tp_attention, true, ranks);
    sh.attention = detail::busiest_over_mean(ranks, &detail::RankLoad::tokens);
    sh.head = detail::busiest_over_mean(ranks, &detail::RankLoad::head_tokens);
    if (L.tp_ffn >= L.tp_attention) sh.ffn = detail::busiest_group_share(ranks, dep.n_chips / L.tp_ffn);
    if (L.kv_sharded_by_batch) detail::rank_loads_into(dep, *mix, dep.n_chips, false, by_chip);  // the core's units: the chips
    const std::vector<detail::RankLoad>& core = L.kv_sharded_by_batch ? by_chip : ranks;
    sh.core_flops = detail::busiest_over_mean(core, &detail::RankLoad::core_flops);
    sh.kv = detail::busiest_over_mean(core, &detail::RankLoad::kv_bytes);
  }
  return sh;
}

/// step_with up to the attention core, with the collectives and kernels after it (none of
/// them depends on the core). `mix`, when set, replaces the uniform decode and prefill
/// shape of `s` (StepMix); `shares` are step_shares(dep, s, mix).
detail::CountedStepPart detail::counted_step_part(const Deployment& dep, const StepShape& s, const StepMix* mix, bool allow_overlap,
                                                  const StepShares& shares) {
  double chunk_tokens = 0;
  if (mix != nullptr) {
    for (const auto& c : mix->chunks) chunk_tokens += d(c.tokens);
  }
  // The decode and prefill sequences of the step (a mix's, else the uniform shape's).
  const double n_decode = mix != nullptr ? d(mix->decodes()) : s.decode_sequences;
  const double n_prefill = mix != nullptr ? d(static_cast<int64_t>(mix->chunks.size())) : s.prefill_sequences;
  const auto& L = dep.mechanisms.layout;
  const auto& cal = dep.mechanisms.calibration;
  const auto& sys = dep.system;
  const double n = d(dep.n_chips);
  const double dp_attention = n / d(L.tp_attention);
  const double q = mix != nullptr ? mix->tokens_per_sequence : s.tokens_per_sequence;
  const double q_attention = mix == nullptr && s.attention_tokens_per_sequence > 0 ? s.attention_tokens_per_sequence : q;
  // Through the matmuls: the step's tokens and the padding up to its CUDA graph on each rank (graph_step.h).
  const double real_tokens = n_decode * q + (mix != nullptr ? chunk_tokens : s.prefill_sequences * d(s.prompt));
  const double rank_decodes = std::ceil(n_decode / dp_attention - 1e-9);  // the busiest rank's whole sequences
  const detail::GraphChoice graph = detail::choose_graph(dep, n_decode, n_prefill, q, rank_decodes * q + (real_tokens - n_decode * q) / dp_attention, rank_decodes);
  const double tokens = real_tokens + graph.extra_tokens_per_rank * dp_attention;
  const double head_tokens = n_decode * q + n_prefill;  // logits: last position of a prefill
  const auto& p = dep.params;
  const auto& w = dep.weights;

  const BytesPerSecond hbm = sys.chip.hbm_bandwidth;
  // Weights stream at their format's rate (matmul_rate.h, weight_stream_fraction).
  auto weight_rate = [&](DType f) { return hbm * detail::weight_stream_fraction(dep, f); };
  // The KV cache streams at the deployment's HBM fraction (the chip's own STREAM figure,
  // data/hardware efficiency.hbm), the rate the roofline prices it at. FLASHMLA-1's 3000 of
  // 3350 GB/s is an H800 kernel's, not applied to other chips (docs/formulas.md section 3).
  const BytesPerSecond kv_rate = hbm * dep.hbm_efficiency;
  // Attention math at FLASHMLA-1's fraction of the bf16 peak (an H800 figure), never above
  // this chip's own bf16 matmul fraction nor the deployment's compute rate, so that no
  // FLOP runs faster here than in the roofline; both at the system's sustained clock
  // (Efficiency::sustained_clock).
  const double bf16_eff = dep.compute == MatmulPrecision::bf16 ? dep.matmul_efficiency : sys.efficiency.matmul_for(MatmulPrecision::bf16);
  const FlopsPerSecond attention_rate = min(sys.chip.peak_for(MatmulPrecision::bf16) * std::min(cal.attention_compute_fraction * sys.efficiency.sustained_clock, bf16_eff),
                                            sys.chip.peak_for(dep.compute) * dep.matmul_efficiency);

  const bool ep_traffic = !dep.moe.empty() && dp_attention > 1 && L.ep > 1 && !L.weight_gathered;
  // Two micro-batches need something to split: a decode step needs two sequences on every
  // data-parallel rank (a prefill splits its tokens, prompts included: profile-data README).
  const bool splittable = n_decode == 0 || n_decode >= 2 * dp_attention;
  const bool overlap = allow_overlap && L.overlap_micro_batches && ep_traffic && splittable;
  // Pure decode steps use low-latency all-to-all kernels that free every SM once their
  // RDMA writes are issued (deepseek-ai/profile-data README, Decoding; DeepEP low-latency
  // hooks); a step with any prompt chunk runs the normal kernels for all its tokens
  // (ep_low_latency_step: the engines' rule), which hold communication_sm_fraction of the
  // SMs while they overlap compute.
  const bool low_latency_kernels = ep_low_latency_step(n_decode, n_prefill);
  const double slow = (overlap && !low_latency_kernels) ? 1.0 / (1.0 - cal.communication_sm_fraction) : 1.0;

  StepBreakdown r;
  r.graph_batch = graph.batch;
  r.eager = graph.eager;
  Ledger led;
  double flops = 0;
  Bytes weight_bytes;
  // Adds one operation to the ledger and returns its time, max(compute, memory).
  auto op = [&](double op_flops, FlopsPerSecond rate, Bytes bytes, BytesPerSecond bw, bool is_kv) {
    flops += op_flops;
    if (!is_kv) weight_bytes += bytes;
    // Two micro-batches run each layer twice: its weights stream once per micro-batch.
    const double passes = (overlap && !is_kv) ? 2.0 : 1.0;
    if (!is_kv) weight_bytes += bytes * (passes - 1);
    const Seconds c = Seconds(op_flops / rate.value()) * slow, m = bytes * passes / bw;
    led.add(c, m, is_kv);
    return max(c, m);
  };

  const double attention_share = shares.attention, head_share = shares.head, ffn_share = shares.ffn;
  const double core_flops_share = shares.core_flops, kv_share = shares.kv;  // the attention core's (attention_core.cc)

  // Attention projections, dense FFNs and shared experts, LM head: FLOPs split evenly over
  // the chips (the busiest data-parallel group's share); weights replicated over the
  // data-parallel groups of their layout.
  const double head_params = p.lm_head > 0 ? p.lm_head : p.embedding;
  // The dense GEMMs' rate at their per-rank shape: tile and wave quantization (dense_gemm.h).
  const auto shape = detail::dense_gemm_efficiency(dep, tokens / dp_attention * attention_share, tokens * d(L.tp_ffn) / n * ffn_share, head_tokens / dp_attention * head_share);
  const Seconds t_projections = op(2 * p.attention * tokens / n * attention_share, rate_for(dep, w.attention) * shape.projections,
                                   Bytes(p.attention * weight_bytes_per_element(w.attention, w.attention_bits) / d(L.tp_attention)), weight_rate(w.attention), false);
  auto ffn_op = [&](double params, double eff) {
    return op(2 * params * tokens / n * ffn_share, rate_for(dep, w.dense_ffn) * eff, Bytes(params * weight_bytes_per_element(w.dense_ffn, w.dense_ffn_bits) / d(L.tp_ffn)),
              weight_rate(w.dense_ffn), false);
  };
  if (p.dense_ffn > 0) ffn_op(p.dense_ffn, shape.ffn);
  const Seconds t_shared = p.shared_experts > 0 ? ffn_op(p.shared_experts, 1.0) : Seconds(0);
  op(2 * head_params * head_tokens / n * head_share, rate_for(dep, w.embedding) * shape.head,
     Bytes(head_params * weight_bytes_per_element(w.embedding, w.embedding_bits) / d(L.tp_attention)), weight_rate(w.embedding), false);
  // The router GEMM (d x E per MoE layer) on the step's tokens, split as the projections.
  const Seconds t_router = op(2 * p.router * tokens / n * attention_share, rate_for(dep, w.router), Bytes((p.router + p.norms) * weight_bytes_per_element(w.router, w.router_bits)), weight_rate(w.router), false);

  // Routed experts: the busiest EP rank's share of the touched experts (uniform top-k) and of the
  // token-expert assignments (ExpertBalance: expert_skew.h). Their grouped GEMMs pay a fixed cost per output tile over its
  // reduction (routed_expert_grouped_efficiency): FLOPs counted at that rate, as training does
  // (training/gemm_shapes.cc), so the compute side of the max() grows, not the FLOPs.
  const MatmulPrecision expert_precision = detail::class_of(w.experts, dep.system.chip);
  double expert_flops = 0, expert_time_flops = 0, expert_activation_bytes = 0;
  const detail::MoeTokenPath path = detail::moe_token_path(dep.mechanisms.tp_all_reduce.name, ep_traffic);
  const double in_bytes = detail::expert_input_bytes_per_element(expert_precision);
  Bytes expert_bytes;
  // Each group's routed experts' activation pass on the busiest rank: (layers, bytes a layer).
  std::vector<std::pair<double, double>> expert_activation_passes;
  const double expert_act_out = detail::memory_kernel_output_bytes(dep.mechanisms.tp_all_reduce.name, expert_precision);
  for (const auto& g : dep.moe) {
    const double on_busiest = busiest_chip_experts(g.routing, tokens, L.ep);
    expert_bytes += g.bytes_per_expert * (g.layers * on_busiest / d(L.tp_expert));
    const double assignments = tokens * g.top_k;
    const double bins = std::min(d(L.ep), g.n_experts);
    const double busiest = busiest_load(assignments, bins, g.n_experts, dep.mechanisms.expert_balance);
    const double expert_params = g.bytes_per_expert.value() / weight_bytes_per_element(w.experts, w.experts_bits);
    const double group_flops = g.layers * 2 * expert_params * busiest / d(L.tp_expert);
    expert_flops += group_flops;
    const double eff = g.d_model > 0 ? routed_expert_grouped_efficiency(g.d_model, g.d_ff / d(L.tp_expert), g.gated, expert_precision) : 1.0;
    expert_time_flops += group_flops / eff;
    if (g.d_model > 0) expert_activation_bytes += g.layers * busiest * detail::moe_token_path_bytes_per_pair(path, g.d_model, g.top_k, in_bytes);
    // The activation between the experts' two GEMMs, a kernel of its own over every pair
    // (memory_kernels.h routed_expert_activation_bytes_per_pair).
    if (g.d_ff > 0) expert_activation_passes.emplace_back(g.layers, busiest * detail::routed_expert_activation_bytes_per_pair(g.d_ff / d(L.tp_expert), g.gated, expert_act_out));
  }
  if (!dep.moe.empty()) {
    // op() counts FLOPs at the rate; the fixed cost lowers the rate, not the work done.
    const double rate = rate_for(dep, w.experts).value() * (expert_time_flops > 0 ? expert_flops / expert_time_flops : 1.0);
    op(expert_flops, FlopsPerSecond(rate), expert_bytes, weight_rate(w.experts), false);
    // The engine's token copies into expert order and back (expert_activations.h), memory-bound.
    led.add(Seconds(0), Bytes(expert_activation_bytes) / kv_rate, false);
  }

  // Fixed time per dependent operation: a GPU's kernel floor, or the chip's own (op_floor).
  double kernels = d(cal.kernels_per_step);
  for (const auto& g : dep.model.groups) kernels += d(g.count) * d(kernels_per_layer(g));
  if (overlap) kernels *= 2;
  r.kernels = kernels;
  r.overlapped = overlap;
  const Seconds floor = op_floor(sys, cal);
  r.t_overhead = floor * r.kernels;
  // Collectives of the layout.
  const detail::SystemLinks& links = detail::system_links(sys);
  const LinkModel& up = links.up;
  const LinkModel* out = links.has_out ? &links.out : nullptr;
  const int64_t domain = std::max<int64_t>(sys.scale_up_domain, 1);
  auto activations = [&](double toks) { return Bytes(toks * d(dep.model.d_model) * 2.0); };  // bf16
  Seconds tp_comm, ep_dispatch, ep_combine;
  const int64_t layers = n_layers(dep.model);
  std::vector<double> fused_norms;  // per group: norms a fused all-reduce replaces (memory_kernels.h)
  if (L.weight_gathered) {
    const Bytes per_layer = (dep.weight_bytes_total - Bytes(head_params * weight_bytes_per_element(w.embedding, w.embedding_bits))) / d(layers);
    tp_comm = all_gather(per_layer, dep.n_chips, link_for(dep.n_chips, domain, up, out)).time * d(layers);
  } else {
    // The busiest data-parallel group's tokens (whole sequences) set the all-reduce.
    const double tokens_per_group = tokens / dp_attention * attention_share;
    // Activation all-reduces by the engine's algorithm (one-shot / two-shot custom kernels
    // for small messages on NVLink, NCCL otherwise: tp_all_reduce). Where the engine fuses
    // the residual add and RMSNorm into its custom kernel (TpAllReduce::fused_norm), each
    // one that runs replaces the norm kernel after it; after NCCL the norm still runs.
    const TpAllReduce& ar = dep.mechanisms.tp_all_reduce;
    const Seconds ar_latency = dep.mechanisms.calibration.allreduce_latency;  // a profile's allreduce_latency_s
    auto fuses = [&](const CollectiveTime& c) { return ar.fused_norm && (c.protocol == "one-shot" || c.protocol == "two-shot"); };
    const CollectiveTime attn =
        tp_all_reduce(activations(tokens_per_group), tokens_per_group, L.tp_attention, link_for(L.tp_attention, domain, up, out), ar, ar_latency);
    const Seconds attn_ar = attn.time;
    double fused_kernels = 0;
    for (const auto& g : dep.model.groups) {
      Seconds per_layer = attn_ar;
      double fused = fuses(attn) ? 1.0 : 0.0;
      if (g.ffn.kind == FfnKind::dense) {
        const double ffn_tokens = tokens * d(L.tp_ffn) / n * ffn_share;
        const CollectiveTime ffn = tp_all_reduce(activations(ffn_tokens), ffn_tokens, L.tp_ffn, link_for(L.tp_ffn, domain, up, out), ar, ar_latency);
        per_layer += ffn.time;
        if (fuses(ffn)) fused += 1.0;
      } else if (!ep_traffic) {
        // Without an expert-parallel exchange every chip of an expert's tensor-parallel group
        // needs the group's tokens: an all-gather before the experts and a reduce-scatter
        // after (the volume of an all-reduce) over the larger of the attention and expert
        // TP groups (all n chips when attention is TP over all of them or EP is 1).
        const int64_t group = std::max(L.tp_attention, L.tp_expert);
        per_layer += tp_all_reduce(activations(tokens * d(group) / n), tokens * d(group) / n, group, link_for(group, domain, up, out), ar, ar_latency).time;
      }
      tp_comm += per_layer * d(g.count);
      fused_kernels += fused * d(g.count);
      fused_norms.push_back(fused);
    }
    if (fused_kernels > 0 && !is_tpu(sys)) {
      r.kernels -= fused_kernels * (overlap ? 2.0 : 1.0);  // each micro-batch runs every layer
      r.t_overhead = floor * r.kernels;
    }
    if (ep_traffic) {
      // Dispatch and combine among the EP ranks: a chip's tokens x top_k x d_model.
      const double chip_tokens = tokens / dp_attention;
      const double ep = d(L.ep);
      // EP ranks per scale-up domain: each is a group of tp_expert chips.
      const double local = std::min(ep, std::max(1.0, d(domain) / d(L.tp_expert)));
      const double nodes = ep / local;
      // Each micro-batch runs its own dispatch and combine: the fixed latency is paid per
      // micro-batch, the bytes are shared between them.
      const double exchanges = overlap ? 2.0 : 1.0;
      for (const auto& g : dep.moe) {
        const double per_token = g.top_k * d(dep.model.d_model);
        // The exchange ends when the busiest rank has sent and received its share: the
        // sender with the most tokens (whole sequences: ceil of the mean) and the receiver
        // of the most token-expert pairs (the busiest of ep ranks, ExpertBalance); normal kernels
        // send one copy per domain, so their scale-out bytes go to the busiest domain (its skew,
        // never below the uniform per-rank one). The skew scales the bytes, not the fixed latency.
        const double pairs = tokens * g.top_k;
        auto skew_over = [&](double bins, ExpertBalance b) { return pairs > 0 && bins > 1 ? busiest_load(pairs, bins, g.n_experts, b) / (pairs / bins) : 1.0; };
        const double receive_skew = skew_over(ep, dep.mechanisms.expert_balance);
        const double skew = std::max({1.0, receive_skew, attention_share});  // sender: whole sequences
        const double remote_skew = low_latency_kernels ? skew : std::max({1.0, skew_over(ep, ExpertBalance::uniform), skew_over(nodes, dep.mechanisms.expert_balance), attention_share});
        for (const bool is_dispatch : {true, false}) {
          const double b = is_dispatch ? L.dispatch_bytes_per_element : L.combine_bytes_per_element;
          const Bytes all = Bytes(chip_tokens * per_token * b);
          // Only copies bound for another domain cross scale-out (ep_scale_out_copies);
          // low-latency kernels send the rest over NVLink, normal kernels forward every
          // copy over NVLink.
          const double remote_share = nodes > 1 ? (nodes - 1) / nodes : 0.0;
          const double remote_copies = ep_scale_out_copies(nodes, g.top_k, low_latency_kernels);
          const Bytes remote = Bytes(chip_tokens * d(dep.model.d_model) * b * remote_copies);
          const Bytes over_nvlink = low_latency_kernels ? all * (1 - remote_share) : all;
          // The busiest rank's bytes set the time (and, on NVLink, the protocol).
          Seconds latency, wire;
          if (remote.value() > 0 && out != nullptr) {
            latency = out->protocols.front().base_latency + out->protocols.front().step_latency;
            wire = max(remote / out->bandwidth * remote_skew, over_nvlink / up.bandwidth * skew);
          } else {
            latency = all_to_all(Bytes(0), L.ep, up).time;
            wire = max(Seconds(0), all_to_all(all * skew, L.ep, up).time - latency);
          }
          (is_dispatch ? ep_dispatch : ep_combine) += (latency * exchanges + wire) * g.layers;
        }
        if (L.tp_expert > 1) {
          // The pairs an EP group receives are shared by its tp_expert chips: an all-gather
          // before the experts, a reduce-scatter after (Megatron's expert tensor parallelism).
          const Bytes received = activations(pairs / ep * std::max(1.0, receive_skew));
          tp_comm += all_reduce(received, L.tp_expert, link_for(L.tp_expert, domain, up, out)).time * g.layers;
        }
      }
    }
  }
  // Norms, activations and rotary at their HBM traffic where it outlasts the floor (memory_kernels.h).
  if (!is_tpu(sys)) r.t_overhead += Seconds(detail::memory_kernels_excess_s(dep, tokens / dp_attention * attention_share, tokens * d(L.tp_ffn) / n * ffn_share,
                                                                           fused_norms, kv_rate.value(), cal.kernel_floor.value(), overlap ? 2.0 : 1.0));
  if (!is_tpu(sys)) {
    for (const auto& [layers, bytes] : expert_activation_passes) {
      r.t_overhead += Seconds(layers * detail::memory_kernel_excess_s(bytes, kv_rate.value(), cal.kernel_floor.value(), overlap ? 2.0 : 1.0));
    }
  }
  if (overlap && !low_latency_kernels) {
    // Normal kernels sharing the GPU with the other micro-batch's compute run slower than
    // their unit test (kOverlappedAllToAllSlowdown); without overlap they reach it.
    ep_dispatch = ep_dispatch * kOverlappedAllToAllSlowdown;
    ep_combine = ep_combine * kOverlappedAllToAllSlowdown;
  }
  const Seconds ep_comm = ep_dispatch + ep_combine;
  r.t_comm_total = tp_comm + ep_comm;
  r.t_dispatch = ep_dispatch;
  r.t_combine = ep_combine;
  return {r, led, flops, weight_bytes, overlap, low_latency_kernels, slow, tokens, q_attention, dp_attention, kv_share, core_flops_share,
          attention_rate, kv_rate, t_projections, t_shared, t_router, floor, tp_comm, ep_dispatch, ep_combine};
}

}  // namespace chalk
