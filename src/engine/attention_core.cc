// The attention core of an engine step (each sequence's KV reads and score FLOPs) and the
// step's total after it: how the counted part's collectives overlap (two micro-batches, DeepSeek's
// decode pipeline) and which share governs. The counted part before it: overhead.cc.
#include "chalk/engine/overhead.h"
#include "chalk/base/count_cast.h"
#include "chalk/engine/step_mix.h"

#include <algorithm>

#include "chalk/model/model.h"
#include "attention_work.h"
#include "overlap_windows.h"
#include "step_ledger.h"
#include "step_with.h"

namespace chalk {

namespace {
using counts::d;
}  // namespace

/// The attention core of a step (its KV reads: each sequence's context) and the step's total
/// after it, on the counted part `f` of the same step.
StepBreakdown detail::with_attention_core(const Deployment& dep, const StepShape& s, const StepMix* mix, const CountedStepPart& f) {
  const auto& L = dep.mechanisms.layout;
  const double n = d(dep.n_chips);
  StepBreakdown r = f.r;
  detail::Ledger led = f.led;
  const double dp_attention = f.dp_attention, kv_share = f.kv_share, core_flops_share = f.core_flops_share, q_attention = f.q_attention, tokens = f.tokens;
  const bool overlap = f.overlap, low_latency_kernels = f.low_latency_kernels;
  const Seconds tp_comm = f.tp_comm, ep_dispatch = f.ep_dispatch, ep_combine = f.ep_combine, ep_comm = ep_dispatch + ep_combine;
  // Attention core: scores and value mixing over the KV cache (heads or batch split over
  // all chips); the KV cache of a chip is its sequences' share, replicated across the
  // tensor-parallel ranks that cannot split its heads (MLA latent, MQA).
  double core_flops = 0, kv_total = 0;
  for (std::size_t i = 0; i < dep.attention.size(); ++i) {
    const auto& a = dep.attention[i];
    const auto& spec = dep.model.groups[i].attention;
    const double heads_split = (spec.kind == AttentionKind::mla) ? 1.0 : std::min(d(L.tp_attention), d(std::max<int64_t>(spec.n_kv_heads, 1)));
    const double split = L.kv_sharded_by_batch ? n : dp_attention * heads_split;
    // Main attention over its reach, indexer keys, linear state (attention_work.h).
    const detail::AttentionWork w = detail::attention_work(a, spec, s, mix);
    const double state = w.sequences * 2 * a.state_bytes;
    kv_total += a.layers * (a.kv_bytes_per_token * w.kv_tokens + a.index_bytes_per_token * w.index_tokens + state) / split * kv_share;
    // A linear layer's recurrence costs FLOPs per token through it (model.h), as in the roofline.
    core_flops += a.layers * (q_attention * w.decode_flops + w.prefill_flops + recurrent_flops_per_token(spec) * tokens);
  }
  // The core as counted_step_part's op() prices an operation on the KV cache (read once).
  const double core_op_flops = core_flops / n * core_flops_share;
  const Seconds core_c = Seconds(core_op_flops / f.attention_rate.value()) * f.slow, core_m = Bytes(kv_total) / f.kv_rate;
  led.add(core_c, core_m, true);
  const Seconds t_core = max(core_c, core_m);
  r.flops_per_chip = Flops(f.flops + core_op_flops);
  r.weight_bytes_per_chip = f.weight_bytes;
  r.kv_bytes_per_chip = Bytes(kv_total);
  r.t_compute = led.compute;
  r.t_weights = led.weights;
  r.t_kv = led.kv;
  r.t_operations = led.ops;
  const Seconds compute_path = r.t_operations + r.t_overhead + tp_comm;
  if (overlap && low_latency_kernels) {
    // DeepSeek's decode pipeline (inference-system overview, day 6: attention split in
    // two, five stages; SGLang operations_strategy.py, delta 2 stages): one micro-batch's
    // dispatch travels while it runs its shared expert and the other runs attention up to
    // the core (ATTN-0); its combine travels while the other runs the core, the output
    // projection and the router (ATTN-1). Routed experts hide no traffic: the other
    // micro-batch's exchanges are done by then. What outlasts its window is exposed.
    const detail::DecodeWindows w = detail::decode_windows(dep, f.t_projections, f.t_shared, t_core, f.t_router, f.floor);
    r.t_dispatch_window = w.dispatch;
    r.t_combine_window = w.combine;
    const Seconds exposed = max(Seconds(0), ep_dispatch - w.dispatch) + max(Seconds(0), ep_combine - w.combine);
    r.t_step = compute_path + exposed;
    r.t_comm = tp_comm + exposed;
  } else if (overlap) {
    r.t_step = max(compute_path, ep_comm);
    r.t_comm = tp_comm + max(Seconds(0), ep_comm - compute_path);
  } else {
    r.t_step = compute_path + ep_comm;
    r.t_comm = r.t_comm_total;
  }
  struct Share { const char* name; Seconds t; };  // which share is largest
  const Share shares[] = {{"compute", led.share_compute}, {"weights", led.share_weights}, {"kv-cache", led.share_kv},
                          {"communication", r.t_comm}, {"overhead", r.t_overhead}};
  const Share* top = &shares[0];
  for (const auto& sh : shares) {
    if (sh.t > top->t) top = &sh;
  }
  r.governs = (overlap && !low_latency_kernels && ep_comm > compute_path) ? "communication" : top->name;
  return r;
}

}  // namespace chalk
