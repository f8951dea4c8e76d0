// The global batch chalk assumes when none is stated (`train step`, `train memory`,
// `train layouts`, `train plot` without -B; the page's training view through the API):
// docs/training.md, "The default global batch".
#pragma once

#include <cstdint>
#include <string>

#include "chalk/training/plan.h"

namespace chalk {

/// The most tokens a default step holds: 2^24 = 16,777,216 (16M) tokens, the batch of Llama 3
/// 405B's pre-training on 8,192 and 16,384 H100s (2,048 sequences of 8,192 tokens; Llama 3
/// paper, arXiv:2407.21783, Table 4). Other published large runs sit at or below it in
/// sequences a chip: GPT-3 175B 3.2M tokens (Brown et al. 2020, Table 2.1), Llama 2 4M
/// (Touvron et al. 2023, section 2.2). DeepSeek-V3's 63M (15,360 x 4,096, its report section
/// 4.2) is an MoE run's; chalk does not default to it.
inline constexpr int64_t kDefaultBatchTokens = int64_t{1} << 24;

/// Sequences per step when -B is not given: one sequence per chip, as data parallelism grows
/// the batch with the cluster, capped at kDefaultBatchTokens / seq_len sequences (at least 1),
/// then rounded down to a multiple of `multiple` and never below it. `multiple` is what the
/// plan needs the batch to divide by: dp x microbatch, times pp for the interleaved schedule
/// (microbatches a multiple of pp), times 2 for DualPipe; 1 for the layout search, which
/// skips the degrees the batch does not split. Examples: 16,384 chips at 8,192 tokens ->
/// 2,048 sequences (Llama 3's 16M); 16,384 chips at 4,096 -> 4,096 (16.78M); 8 chips -> 8.
/// Throws InputError naming "chips", "seq_len" or "global_batch" (the multiple) when below 1.
int64_t default_global_batch(int64_t chips, int64_t seq_len, int64_t multiple = 1);

/// default_global_batch for a stated plan: its chips (dp x tp x pp x cp), p.seq_len, and the
/// multiple its degrees need (dp x microbatch; x pp when interleaved over pp > 1; x 2 for
/// DualPipe). Reads no other field (p.global_batch is what it sets).
int64_t default_global_batch(const TrainingPlan& p);

/// The line commands print for the default: "default: 4096 sequences = 16.78M tokens (one
/// sequence a chip, at most 16.78M tokens, Llama 3 405B's batch); -B sets it".
std::string default_batch_text(int64_t sequences, int64_t seq_len);

}  // namespace chalk
