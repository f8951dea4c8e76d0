// The time of a mixed step of unequal sequences (roofline.h, mixed_step_time): the
// request simulator's step (docs/simulator.md).
#include <algorithm>

#include "chalk/base/error.h"
#include "chalk/engine/step_mix.h"
#include "chalk/model/context_math.h"
#include "chalk/model/moe.h"

namespace chalk {

Seconds mixed_step_time(const Deployment& dep, const StepMix& mix) {
  if (mix.decode_contexts.empty() && mix.chunks.empty()) return Seconds(0);
  if (dep.mechanisms.enabled) return engine_step(dep, mix).t_step;
  using detail::attended;
  using detail::causal_attended_sum;
  if (mix.tokens_per_sequence < 1 || mix.decode_context_sum < 0) {
    throw InputError("step", "decode contexts must be >= 0 and tokens per sequence >= 1");
  }
  const double q = mix.tokens_per_sequence;
  double tokens = static_cast<double>(mix.decode_contexts.size()) * q;
  for (const auto& c : mix.chunks) {
    if (c.tokens < 0 || c.prefix < 0) throw InputError("step", "prefill chunks and prefixes must be >= 0");
    tokens += static_cast<double>(c.tokens);
  }
  double attn = 0, kv = 0;
  for (std::size_t i = 0; i < dep.attention.size(); ++i) {
    const auto& g = dep.attention[i];
    const auto& spec = dep.model.groups[i].attention;
    // As decode_step and prefill_step price one sequence (roofline.cc): the main attention
    // over its reach, a sparse layer's indexer keys over all it holds, a linear layer's
    // state read and written once per sequence.
    if (g.window > 0 || g.reach > 0) {
      for (const int64_t c : mix.decode_contexts) {
        const double main = attended(c, g.reach), held = attended(c, g.window);
        attn += g.layers * q * (g.decode_flops_per_attended * main + g.index_flops_per_attended * held);
        kv += g.layers * (g.kv_bytes_per_token * main + g.index_bytes_per_token * held);
      }
    } else {  // full attention: linear in the context, so the sum of contexts will do
      const double sum = static_cast<double>(mix.decode_context_sum);
      attn += g.layers * q * (g.decode_flops_per_attended + g.index_flops_per_attended) * sum;
      kv += g.layers * (g.kv_bytes_per_token + g.index_bytes_per_token) * sum;
    }
    kv += g.layers * 2 * g.state_bytes * static_cast<double>(mix.decode_contexts.size() + mix.chunks.size());
    for (const auto& c : mix.chunks) {
      attn += g.layers * (g.prefill_flops_per_attended * causal_attended_sum(c.prefix, c.tokens, g.reach) +
                          g.index_flops_per_attended * causal_attended_sum(c.prefix, c.tokens, g.window) +
                          mla_prefix_flops(spec, c.tokens, attended(c.prefix, g.reach)));
      // The prefix is read; the chunk's new KV is written (prefill_step's t_kv).
      kv += g.layers * (g.kv_bytes_per_token + g.index_bytes_per_token) * attended(c.prefix + c.tokens, g.window);
    }
  }
  const double n = static_cast<double>(dep.n_chips);
  Bytes busiest = dep.weight_bytes_always / n;
  for (const auto& g : dep.moe) busiest += g.bytes_per_expert * (g.layers * busiest_chip_experts(g.routing, tokens, dep.n_chips));
  const Seconds t_compute = Flops(tokens * dep.matmul_flops_per_token + attn) / dep.flops_effective;
  const Seconds t_memory = busiest * n / dep.hbm_effective + Bytes(kv) / dep.hbm_effective;
  return max(t_compute, t_memory);
}

}  // namespace chalk
