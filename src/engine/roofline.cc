// Decode and prefill rooflines (docs/formulas.md section 4).
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

using detail::attended;
using detail::causal_attended_sum;

using counts::d;

/// Weight bytes a step reads in all (`total`) and on the busiest chip (`busiest`).
struct WeightRead {
  Bytes total, busiest;
  double touched = 0, on_busiest = 0;  // first MoE group
};

WeightRead weights_touched(const Deployment& dep, double tokens) {
  WeightRead w;
  const double n = d(dep.n_chips);
  w.total = dep.weight_bytes_always;
  w.busiest = dep.weight_bytes_always / n;
  bool first = true;
  for (const auto& g : dep.moe) {
    const double touched = expected_experts_touched(g.n_experts, g.top_k, tokens);
    const double busiest = busiest_chip_experts(g.routing, tokens, dep.n_chips);
    if (first) {
      w.touched = touched;
      w.on_busiest = busiest;
      first = false;
    }
    w.total += g.bytes_per_expert * (g.layers * touched);
    w.busiest += g.bytes_per_expert * (g.layers * busiest);
  }
  return w;
}

/// The LM head's FLOPs per token, 2 x its parameters (a tied head is the embedding table).
double head_flops_per_token(const Deployment& dep) {
  return 2 * (dep.params.lm_head > 0 ? dep.params.lm_head : dep.params.embedding);
}

Bound bound_of(Seconds compute, Seconds weights, Seconds kv) {
  if (compute >= weights + kv) return Bound::compute;
  return weights >= kv ? Bound::weights : Bound::kv_cache;
}

/// Replaces a step's roofline times by the engine's (overhead.h) on the busiest chip.
template <class Step>
void take_engine_times(Step& r, const StepBreakdown& e) {
  r.t_compute = e.t_compute;
  r.t_weights = e.t_weights;
  r.t_kv = e.t_kv;
  r.t_memory = e.t_weights + e.t_kv;
  r.t_operations = e.t_operations;
  r.t_comm = e.t_comm;
  r.t_overhead = e.t_overhead;
  r.t_host = e.t_host;
  r.graph_batch = e.graph_batch;
  r.t_launch = e.t_launch;
  r.t_step = e.t_step;
  r.bound = bound_of(r.t_compute, r.t_weights, r.t_kv);
  r.governs = e.governs;
}

/// Copies of a sequence's KV that a layout stores: 1 under even sharding; with
/// mechanisms, tensor-parallel ranks that cannot split the KV heads each hold a copy
/// (tp / min(tp, KV heads); an MLA latent is one head), unless KV is split by batch.
double kv_replicas(const Deployment& dep, const AttentionSpec& a) {
  if (!dep.mechanisms.enabled || dep.mechanisms.layout.kv_sharded_by_batch) return 1;
  const double tp = d(dep.mechanisms.layout.tp_attention);
  const double heads = a.kind == AttentionKind::mla ? 1.0 : d(std::max<int64_t>(a.n_kv_heads, 1));
  return tp / std::min(tp, heads);
}

/// Weight bytes stored over all chips under a mechanisms layout, replicas included:
/// attention, embedding and head split tp_attention ways, dense FFNs and shared experts
/// tp_ffn ways (copies in every data-parallel group), routed experts once over all
/// chips (ep x tp_expert = n), routers and norms on every chip.
Bytes stored_weights(const Deployment& dep) {
  const auto& L = dep.mechanisms.layout;
  const auto& p = dep.params;
  const auto& w = dep.weights;
  const double n = d(dep.n_chips);
  const double per_chip = p.attention * weight_bytes_per_element(w.attention, w.attention_bits) / d(L.tp_attention) +
                          (p.dense_ffn + p.shared_experts) * weight_bytes_per_element(w.dense_ffn, w.dense_ffn_bits) / d(L.tp_ffn) +
                          (p.embedding + p.lm_head) * weight_bytes_per_element(w.embedding, w.embedding_bits) / d(L.tp_attention) +
                          p.routed_experts_total * weight_bytes_per_element(w.experts, w.experts_bits) / n +
                          (p.router + p.norms) * weight_bytes_per_element(w.router, w.router_bits);
  return Bytes(per_chip * n);
}

}  // namespace

std::string_view to_string(Bound b) {
  switch (b) {
    case Bound::compute: return "compute";
    case Bound::weights: return "weights";
    case Bound::kv_cache: return "kv-cache";
  }
  return "?";
}

double expected_accepted_tokens(int64_t draft, double acceptance) {
  if (draft < 0) throw InputError("--draft", "must be >= 0, got " + std::to_string(draft));
  if (!(acceptance >= 0 && acceptance <= 1)) {
    throw InputError("--acceptance", "must be a probability in [0, 1], got " + fmt::format("{:g}", acceptance));
  }
  if (acceptance == 1) return d(draft + 1);
  return (1 - std::pow(acceptance, d(draft + 1))) / (1 - acceptance);
}

DecodeStep decode_step(const Deployment& dep, int64_t batch, int64_t context, const DecodeLevers& levers) {
  if (batch < 1) throw InputError("--batch", "must be >= 1, got " + std::to_string(batch));
  if (context < 0) throw InputError("--context", "must be >= 0, got " + std::to_string(context));
  if (levers.tokens_per_sequence < 1) {
    throw InputError("--draft", "tokens per sequence must be >= 1, got " + std::to_string(levers.tokens_per_sequence));
  }
  if (!(levers.accepted_tokens_per_step >= 1 && levers.accepted_tokens_per_step <= d(levers.tokens_per_sequence))) {
    throw InputError("--acceptance", "accepted tokens per step must be in [1, " + std::to_string(levers.tokens_per_sequence) +
                                         "], got " + std::to_string(levers.accepted_tokens_per_step));
  }
  if (levers.sparse_attention_top_k < 0) {
    throw InputError("--sparse-top-k", "must be >= 0, got " + std::to_string(levers.sparse_attention_top_k));
  }
  DecodeStep r;
  r.batch = batch;
  r.context = context;
  const double b = d(batch), q = d(levers.tokens_per_sequence);
  const int64_t read = levers.sparse_attention_top_k > 0 ? std::min(context, levers.sparse_attention_top_k) : context;
  double attn = 0, kv = 0;
  for (const auto& g : dep.attention) {
    const double held = attended(read, g.window), s = attended(read, g.reach);
    attn += g.layers * (g.decode_flops_per_attended * s + g.index_flops_per_attended * held);
    kv += g.layers * (g.kv_bytes_per_token * s + g.index_bytes_per_token * held + 2 * g.state_bytes);
  }
  // Drafting: tokens_per_sequence - 1 sequential passes of the drafter, each over the
  // whole batch (draft_cost.h); none when the drafts are free.
  const double passes = levers.drafter == Drafter::none ? 0 : q - 1;
  const detail::DraftPass dp = passes > 0 ? detail::draft_pass(dep, levers, b, read) : detail::DraftPass{};
  const double n = d(dep.n_chips);
  r.flops = Flops(b * q * (dep.matmul_flops_per_token + attn) + passes * dp.flops);
  const WeightRead w = weights_touched(dep, b * q);
  r.weight_bytes_read = w.total + Bytes(passes * dp.weight_bytes_total);
  r.experts_touched = w.touched;
  r.experts_on_busiest_chip = w.on_busiest;
  r.kv_bytes_read = Bytes(b * kv + passes * dp.kv_bytes);
  r.t_compute = r.flops / dep.flops_effective;
  r.t_weights = (w.busiest + Bytes(passes * dp.weight_bytes_busiest)) * n / dep.hbm_effective;
  r.t_kv = r.kv_bytes_read / dep.hbm_effective;
  r.t_memory = r.t_weights + r.t_kv;
  r.t_operations = max(r.t_compute, r.t_memory);
  // The drafter's own share at the same rates: its FLOPs or its bytes, whichever is longer.
  r.t_draft = detail::draft_pass_time(dep, dp) * passes;
  r.t_step = r.t_operations + r.t_comm + r.t_overhead;
  r.t_step_roofline = r.t_step;
  r.bound = bound_of(r.t_compute, r.t_weights, r.t_kv);
  r.governs = std::string(to_string(r.bound));
  if (dep.mechanisms.enabled) {
    StepShape shape;
    shape.decode_sequences = b;
    shape.context = read;
    shape.tokens_per_sequence = q;
    take_engine_times(r, engine_step(dep, shape));
    // The engine runs each draft pass as its own kernels after the verify step: the pass at
    // the roofline's rates plus its kernels x the kernel floor (draft_cost.h; the mixed
    // step of the simulator adds the same).
    r.t_draft = detail::engine_draft_time(dep, levers, b, read);
    r.t_step = r.t_step + r.t_draft;
  }
  r.tokens_per_sequence = levers.accepted_tokens_per_step;
  const double kept = b * levers.accepted_tokens_per_step;
  r.tokens_per_s = tokens(kept) / r.t_step;
  r.tokens_per_s_per_user = tokens(levers.accepted_tokens_per_step) / r.t_step;
  r.tokens_per_s_per_chip = r.tokens_per_s / d(dep.n_chips);
  if (dep.price_per_chip) r.cost_per_token = (*dep.price_per_chip * d(dep.n_chips)) * r.t_step / tokens(kept);
  return r;
}

DecodeStep per_sequence_terms(const Deployment& dep, int64_t context, const DecodeLevers& levers) {
  const int64_t far = dep.n_chips << 16;
  DecodeStep r = decode_step(dep, far, context, levers);
  r.t_compute = r.t_compute / d(far);
  r.t_kv = r.t_kv / d(far);
  r.t_step = r.t_step / d(far);
  return r;
}

PrefillStep prefill_step(const Deployment& dep, int64_t batch, int64_t prompt, int64_t prefix) {
  if (batch < 1) throw InputError("--batch", "must be >= 1, got " + std::to_string(batch));
  if (prompt < 1) throw InputError("--prompt", "must be >= 1, got " + std::to_string(prompt));
  if (prefix < 0) throw InputError("--prefix", "must be >= 0, got " + std::to_string(prefix));
  PrefillStep r;
  r.batch = batch;
  r.prompt = prompt;
  r.prefix = prefix;
  const double b = d(batch);
  double attn = 0, kv_read = 0, kv_written = 0;
  for (const auto& g : dep.attention) {
    attn += g.layers * g.prefill_flops_per_attended * causal_attended_sum(prefix, prompt, g.reach);
    attn += g.layers * g.index_flops_per_attended * causal_attended_sum(prefix, prompt, g.window);
    attn += g.layers * mla_prefix_flops(dep.model.groups[&g - dep.attention.data()].attention, prompt, attended(prefix, g.reach));
    const double per_token = g.kv_bytes_per_token + g.index_bytes_per_token;
    kv_read += g.layers * (per_token * attended(prefix, g.window) + g.state_bytes);
    kv_written += g.layers * (per_token * (attended(prefix + prompt, g.window) - attended(prefix, g.window)) + g.state_bytes);
  }
  // The LM head runs on each prompt's last position only (its logits pick the first output
  // token), as the engine step counts it (overhead.cc head_tokens).
  r.flops = Flops(b * (dep.matmul_flops_per_token * d(prompt) - head_flops_per_token(dep) * d(prompt - 1) + attn));
  const WeightRead w = weights_touched(dep, b * d(prompt));
  r.weight_bytes_read = w.total;
  r.kv_bytes_read = Bytes(b * kv_read);
  r.kv_bytes_written = Bytes(b * kv_written);
  r.t_compute = r.flops / dep.flops_effective;
  r.t_weights = w.busiest * d(dep.n_chips) / dep.hbm_effective;
  r.t_kv = (r.kv_bytes_read + r.kv_bytes_written) / dep.hbm_effective;
  r.t_memory = r.t_weights + r.t_kv;
  r.t_operations = max(r.t_compute, r.t_memory);
  r.t_step = r.t_operations;
  r.t_step_roofline = r.t_step;
  r.bound = bound_of(r.t_compute, r.t_weights, r.t_kv);
  r.governs = std::string(to_string(r.bound));
  if (dep.mechanisms.enabled) {
    StepShape shape;
    shape.prefill_sequences = b;
    shape.prompt = prompt;
    shape.prefix = prefix;
    take_engine_times(r, engine_step(dep, shape));
  }
  r.ttft = r.t_step;
  r.tokens_per_s = tokens(b * d(prompt)) / r.t_step;
  if (dep.price_per_chip) r.cost_per_token = (*dep.price_per_chip * d(dep.n_chips)) * r.t_step / tokens(b * d(prompt));
  return r;
}

MemoryPlan memory_plan(const Deployment& dep, int64_t batch, int64_t context) {
  if (batch < 0) throw InputError("--batch", "must be >= 0, got " + std::to_string(batch));
  if (context < 0) throw InputError("--context", "must be >= 0, got " + std::to_string(context));
  MemoryPlan p;
  const double n = d(dep.n_chips);
  p.hbm_total = dep.system.chip.hbm_capacity * n;
  p.weights = dep.weight_bytes_total;
  double kv_seq = 0;
  for (std::size_t i = 0; i < dep.attention.size(); ++i) {
    const auto& g = dep.attention[i];
    kv_seq += g.layers * ((g.kv_bytes_per_token + g.index_bytes_per_token) * attended(context, g.window) + g.state_bytes) *
              kv_replicas(dep, dep.model.groups[i].attention);
  }
  if (dep.mechanisms.enabled) p.weights = stored_weights(dep);
  p.kv_cache = Bytes(kv_seq * d(batch));
  p.reserve = p.hbm_total * dep.memory_reserve_fraction;
  const Bytes room = p.hbm_total - p.weights - p.reserve;
  // Sequences are whole: with mechanisms each data-parallel group (or, KV split by batch,
  // each chip) holds its own, the busiest ceil(B / units) of them in room / units.
  double units = 1;
  if (dep.mechanisms.enabled) {
    const auto& L = dep.mechanisms.layout;
    units = L.kv_sharded_by_batch ? n : n / d(L.tp_attention);
  }
  const double busiest = std::ceil(d(batch) / units - 1e-9);
  p.free = room - Bytes(kv_seq * busiest * units);
  p.fits = p.free.value() >= 0;
  p.weights_fit = room.value() >= 0;
  if (!p.weights_fit) {
    p.max_batch = 0;
  } else if (kv_seq <= 0) {
    p.max_batch = INT64_MAX;
  } else {
    p.max_batch = static_cast<int64_t>(std::min(9.0e18, std::floor(room.value() / units / kv_seq) * units));
  }
  return p;
}

double lecture_balance_batch(double n_total, double n_active, double bytes_per_weight, FlopsPerSecond peak,
                             BytesPerSecond hbm_bandwidth) {
  return n_total * bytes_per_weight * peak.value() / (2.0 * n_active * hbm_bandwidth.value());
}

}  // namespace chalk
