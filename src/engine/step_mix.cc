// The time of a mixed step of unequal sequences (roofline.h, mixed_step_time): the
// request simulator's step (docs/simulator.md).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "chalk/base/error.h"
#include "chalk/engine/step_mix.h"
#include "chalk/model/context_math.h"
#include "chalk/model/moe.h"
#include "attention_work.h"
#include "draft_cost.h"
#include "step_with.h"

namespace chalk {

Seconds mixed_step_time(const Deployment& dep, const StepMix& mix) { return mixed_step_work(dep, mix).t_step; }

MixedStepWork mixed_step_work(const Deployment& dep, const StepMix& mix) {
  if (mix.decodes() == 0 && mix.chunks.empty()) return {};
  // The drafter's passes over the decodes at their mean context (StepMix::drafting).
  const double decodes = static_cast<double>(mix.decodes());
  DecodeLevers drafting;
  if (mix.drafting != nullptr && decodes > 0) {
    drafting = *mix.drafting;
    drafting.tokens_per_sequence = static_cast<int64_t>(std::llround(mix.tokens_per_sequence));
  }
  const int64_t mean_context = decodes > 0 ? static_cast<int64_t>(std::llround(static_cast<double>(mix.decode_context_sum) / decodes)) : 0;
  if (dep.mechanisms.enabled) {
    const StepBreakdown b = engine_step(dep, mix);
    const Seconds t_draft = detail::engine_draft_time(dep, drafting, decodes, mean_context);
    if (t_draft > Seconds(0)) {
      const detail::DraftPass laid = detail::draft_pass(dep, drafting, decodes, mean_context, true);
      const double passes = static_cast<double>(drafting.tokens_per_sequence - 1), n = static_cast<double>(dep.n_chips);
      return {b.t_step + t_draft, b.t_compute + Flops(passes * laid.flops) / dep.flops_effective,
              b.t_weights + b.t_kv + Bytes(passes * (laid.weight_bytes_busiest * n + laid.kv_bytes)) / dep.hbm_effective};
    }
    return {b.t_step, b.t_compute, b.t_weights + b.t_kv};
  }
  if (mix.tokens_per_sequence < 1 || mix.decode_context_sum < 0) {
    throw InputError("step", "decode contexts must be >= 0 and tokens per sequence >= 1");
  }
  const double q = mix.tokens_per_sequence;
  // decode_step's roofline: the drafter's FLOPs and bytes join the step's (draft_cost.h).
  const double passes = drafting.drafter == Drafter::none ? 0 : static_cast<double>(drafting.tokens_per_sequence) - 1;
  const detail::DraftPass dp = passes > 0 ? detail::draft_pass(dep, drafting, decodes, mean_context) : detail::DraftPass{};
  double tokens = static_cast<double>(mix.decodes()) * q;
  double headless = 0;  // chunk positions before each chunk's last: no LM head (as prefill_step)
  for (const auto& c : mix.chunks) {
    if (c.tokens < 0 || c.prefix < 0) throw InputError("step", "prefill chunks and prefixes must be >= 0");
    tokens += static_cast<double>(c.tokens);
    headless += static_cast<double>(std::max<int64_t>(c.tokens - 1, 0));
  }
  double attn = 0, kv = 0;
  for (std::size_t i = 0; i < dep.attention.size(); ++i) {
    const auto& g = dep.attention[i];
    const auto& spec = dep.model.groups[i].attention;
    // As decode_step and prefill_step price one sequence (attention_work.h).
    const detail::AttentionWork w = detail::attention_work(g, spec, StepShape{}, &mix);
    attn += g.layers * (q * w.decode_flops + w.prefill_flops);
    kv += g.layers * (g.kv_bytes_per_token * w.kv_tokens + g.index_bytes_per_token * w.index_tokens + 2 * g.state_bytes * w.sequences);
  }
  const double n = static_cast<double>(dep.n_chips);
  Bytes busiest = dep.weight_bytes_always / n;
  for (const auto& g : dep.moe) busiest += g.bytes_per_expert * (g.layers * busiest_chip_experts(g.routing, tokens, dep.n_chips));
  const double head_flops = 2 * (dep.params.lm_head > 0 ? dep.params.lm_head : dep.params.embedding);
  busiest += Bytes(passes * dp.weight_bytes_busiest);
  kv += passes * dp.kv_bytes;
  const Seconds t_compute = Flops(tokens * dep.matmul_flops_per_token - headless * head_flops + attn + passes * dp.flops) / dep.flops_effective;
  const Seconds t_memory = busiest * n / dep.hbm_effective + Bytes(kv) / dep.hbm_effective;
  return {max(t_compute, t_memory), t_compute, t_memory};
}

namespace detail {

/// StepMemo's slots (step_mix.h): direct-mapped on the step's counts and shares, a slot
/// keeping the last counted part that hashed to it.
struct StepMemoTable {
  static constexpr std::size_t kSlots = 1024;
  struct Slot {
    int64_t decodes = -1, chunks = 0, chunk_tokens = 0;
    double tokens_per_sequence = 0;
    double attention_share = 0, head_share = 0, ffn_share = 0;
    bool allow_overlap = false;
    CountedStepPart part;
  };
  const Deployment* dep = nullptr;  ///< whose parts the slots hold
  std::vector<Slot> slots = std::vector<Slot>(kSlots);
};

}  // namespace detail

StepMemo::StepMemo() = default;
StepMemo::~StepMemo() = default;
detail::StepMemoTable& StepMemo::table() {
  if (!table_) table_ = std::make_unique<detail::StepMemoTable>();
  return *table_;
}

namespace detail {

StepBreakdown step_with(const Deployment& dep, const StepShape& s, const StepMix* mix, bool allow_overlap, const StepShares& shares) {
  if (mix == nullptr || mix->memo == nullptr) return with_attention_core(dep, s, mix, counted_step_part(dep, s, mix, allow_overlap, shares));
  // The key: what counted_step_part reads (with a mix, `s` only passed step_shares' checks).
  // The rank loads enter through the shares: their attention, head and FFN parts are in the
  // key; the core's two only pass through the part, so a kept part takes the step's own.
  int64_t chunk_tokens = 0;
  for (const auto& c : mix->chunks) chunk_tokens += c.tokens;
  const auto decodes = mix->decodes(), chunks = static_cast<int64_t>(mix->chunks.size());
  StepMemoTable& table = mix->memo->table();
  if (table.dep != &dep) {
    for (auto& slot : table.slots) slot.decodes = -1;
    table.dep = &dep;
  }
  uint64_t h = static_cast<uint64_t>(decodes) * 2 + (allow_overlap ? 1 : 0) + static_cast<uint64_t>(chunk_tokens + 31 * chunks) * 977;
  h ^= (std::bit_cast<uint64_t>(shares.attention) ^ (std::bit_cast<uint64_t>(shares.head) >> 7) ^ (std::bit_cast<uint64_t>(shares.ffn) >> 13)) >> 29;
  StepMemoTable::Slot& slot = table.slots[h % StepMemoTable::kSlots];
  if (slot.decodes != decodes || slot.chunks != chunks || slot.chunk_tokens != chunk_tokens || slot.tokens_per_sequence != mix->tokens_per_sequence ||
      slot.allow_overlap != allow_overlap || slot.attention_share != shares.attention || slot.head_share != shares.head || slot.ffn_share != shares.ffn) {
    slot.part = counted_step_part(dep, s, mix, allow_overlap, shares);
    slot.decodes = decodes;
    slot.chunks = chunks;
    slot.chunk_tokens = chunk_tokens;
    slot.tokens_per_sequence = mix->tokens_per_sequence;
    slot.attention_share = shares.attention;
    slot.head_share = shares.head;
    slot.ffn_share = shares.ffn;
    slot.allow_overlap = allow_overlap;
  }
  slot.part.core_flops_share = shares.core_flops;
  slot.part.kv_share = shares.kv;
  return with_attention_core(dep, s, mix, slot.part);
}

}  // namespace detail

StepBreakdown steady_state_step(const Deployment& d, const StepShape& s, bool whole_prompts) {
  if (!whole_prompts || !(s.prefill_sequences > 0) || s.prompt <= 0) return engine_step(d, s);
  const double k = std::floor(s.prefill_sequences), frac = s.prefill_sequences - k;
  const auto decodes = static_cast<int64_t>(std::llround(std::max(0.0, s.decode_sequences)));
  const bool attention_apart = s.attention_tokens_per_sequence > 0 && s.attention_tokens_per_sequence != s.tokens_per_sequence;
  const std::vector<int64_t> contexts(static_cast<std::size_t>(decodes), s.context);
  auto with = [&](double prompts) {
    if (attention_apart) {  // StepMix has no attention-only tokens: the averaged shape
      StepShape whole = s;
      whole.prefill_sequences = prompts;
      return engine_step(d, whole);
    }
    const std::vector<PrefillChunk> chunks(static_cast<std::size_t>(prompts), PrefillChunk{s.prompt, s.prefix});
    StepMix mix;
    mix.decode_contexts = contexts;
    mix.decode_context_sum = decodes * s.context;
    mix.chunks = chunks;
    mix.tokens_per_sequence = s.tokens_per_sequence;
    return engine_step(d, mix);
  };
  const StepBreakdown fewer = with(k);
  if (frac <= 0) return fewer;
  const StepBreakdown more = with(k + 1);
  StepBreakdown out = frac >= 0.5 ? more : fewer;
  out.t_step = Seconds((1 - frac) * fewer.t_step.value() + frac * more.t_step.value());
  return out;
}

}  // namespace chalk
