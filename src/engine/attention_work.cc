// The attention core's work of one step for one attention group (attention_work.h).
#include "attention_work.h"

#include <stdexcept>

#include "chalk/model/context_math.h"
#include "chalk/model/model.h"

namespace chalk::detail {

namespace {

/// The work of one decode at `context` and of one chunk of `prompt` tokens after `prefix`,
/// added to `w` `count` times (attention_work.h).
struct WorkAdder {
  const Deployment::AttentionGroup& a;
  const AttentionSpec& spec;
  AttentionWork& w;
  void decode_at(int64_t context, double count) const {
    const double main = attended(context, a.reach), held = attended(context, a.window);
    w.kv_tokens += count * main;
    w.index_tokens += count * held;
    w.decode_flops += count * (a.decode_flops_per_attended * main + a.index_flops_per_attended * held);
    w.sequences += count;
  }
  void prefill_at(int64_t prefix, int64_t prompt, double count) const {
    const double held = attended(prefix + prompt, a.window);
    w.kv_tokens += count * held;
    w.index_tokens += count * held;
    w.prefill_flops += count * (a.prefill_flops_per_attended * causal_attended_sum(prefix, prompt, a.reach) +
                                a.index_flops_per_attended * causal_attended_sum(prefix, prompt, a.window) +
                                mla_prefix_flops(spec, prompt, attended(prefix, a.reach)));
    w.sequences += count;
  }
};

}  // namespace

AttentionWork attention_work(const Deployment::AttentionGroup& a, const AttentionSpec& spec, const StepShape& s, const StepMix* mix) {
  if (mix != nullptr) return attention_work(a, spec, mix->decodes(), mix->decode_context_sum, mix->decode_contexts, mix->chunks);
  AttentionWork w;
  const WorkAdder add{a, spec, w};
  add.decode_at(s.context, s.decode_sequences);
  add.prefill_at(s.prefix, s.prompt, s.prefill_sequences);
  return w;
}

AttentionWork attention_work(const Deployment::AttentionGroup& a, const AttentionSpec& spec, int64_t decodes, int64_t context_sum,
                             std::span<const int64_t> contexts, std::span<const PrefillChunk> chunks) {
  AttentionWork w;
  const WorkAdder add{a, spec, w};
  if (a.window > 0 || a.reach > 0) {
    if (static_cast<int64_t>(contexts.size()) != decodes) throw std::logic_error("attention_work: a window or a reach walks each decode's context");
    for (const int64_t c : contexts) add.decode_at(c, 1);
  } else {  // full attention: linear in the context, so the sum of contexts will do
    const double sum = static_cast<double>(context_sum);
    w.kv_tokens += sum;
    w.index_tokens += sum;
    w.decode_flops += (a.decode_flops_per_attended + a.index_flops_per_attended) * sum;
    w.sequences += static_cast<double>(decodes);
  }
  for (const auto& c : chunks) add.prefill_at(c.prefix, c.tokens, 1);
  return w;
}

}  // namespace chalk::detail
