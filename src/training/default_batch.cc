// The default global batch (default_batch.h; docs/training.md, "The default global batch").
#include "chalk/training/default_batch.h"

#include <algorithm>

#include <fmt/format.h>

#include "chalk/base/error.h"

namespace chalk {

int64_t default_global_batch(int64_t chips, int64_t seq_len, int64_t multiple) {
  if (chips < 1) throw InputError("chips", fmt::format("expected 1 or more chips, got {}", chips));
  if (seq_len < 1) throw InputError("seq_len", fmt::format("expected 1 or more tokens per sequence, got {}", seq_len));
  if (multiple < 1) throw InputError("global_batch", fmt::format("expected a multiple of 1 or more sequences, got {}", multiple));
  const int64_t cap = std::max<int64_t>(1, kDefaultBatchTokens / seq_len);
  const int64_t sequences = std::min(chips, cap);
  return std::max(multiple, sequences / multiple * multiple);
}

int64_t default_global_batch(const TrainingPlan& p) {
  int64_t multiple = p.dp * p.microbatch;
  if (p.pp > 1 && p.schedule == PipelineSchedule::interleaved) multiple *= p.pp;
  if (p.schedule == PipelineSchedule::dualpipe) multiple *= 2;
  return default_global_batch(p.dp * p.tp * p.pp * p.cp, p.seq_len, multiple);
}

std::string default_batch_text(int64_t sequences, int64_t seq_len) {
  // 16.78M, 262.1K, 4096: four figures with the unit a reader counts batches in.
  const auto millions = [](double tokens) {
    return tokens >= 1e6 ? fmt::format("{:.4g}M", tokens / 1e6) : tokens >= 1e4 ? fmt::format("{:.4g}K", tokens / 1e3) : fmt::format("{:.0f}", tokens);
  };
  return fmt::format("default: {} sequences = {} tokens (one sequence a chip, at most {} tokens, Llama 3 405B's batch); -B sets it",
                     sequences, millions(static_cast<double>(sequences) * static_cast<double>(seq_len)),
                     millions(static_cast<double>(kDefaultBatchTokens)));
}

}  // namespace chalk
