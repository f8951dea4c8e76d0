// One engine step for a batch another simulator formed (step_batch.h): the request
// simulator's own step function, mixed_step_work (step_mix.cc), on owned storage.
#include "chalk/engine/step_batch.h"

#include <fmt/format.h>

#include "chalk/base/error.h"

namespace chalk {

void check_step_batch(const StepBatch& b, int64_t max_context, const std::string& at) {
  for (std::size_t i = 0; i < b.prefill.size(); ++i) {
    const PrefillChunk& c = b.prefill[i];
    if (c.tokens < 1) throw InputError(fmt::format("{}prefill[{}].tokens", at, i), fmt::format("must be >= 1 new prompt tokens, got {}", c.tokens));
    if (c.prefix < 0) throw InputError(fmt::format("{}prefill[{}].cached", at, i), fmt::format("must be >= 0 cached tokens, got {}", c.prefix));
    if (max_context > 0 && c.prefix > max_context - c.tokens) {
      throw InputError(fmt::format("{}prefill[{}]", at, i), fmt::format("{} cached + {} new tokens exceed the model's max_position_embeddings {}",
                                                                        c.prefix, c.tokens, max_context));
    }
  }
  for (std::size_t i = 0; i < b.decode.size(); ++i) {
    const int64_t c = b.decode[i];
    if (c < 1) throw InputError(fmt::format("{}decode[{}]", at, i), fmt::format("must be a context of >= 1 tokens, got {}", c));
    if (max_context > 0 && c >= max_context) {
      throw InputError(fmt::format("{}decode[{}]", at, i),
                       fmt::format("context {} leaves no position for the new token within the model's max_position_embeddings {}; "
                                   "expected <= {}",
                                   c, max_context, max_context - 1));
    }
  }
}

MixedStepWork batch_step_work(const Deployment& d, const StepBatch& b) {
  check_step_batch(b, d.model.max_context, "batch.");
  // As the simulator builds its step (src/sim/simulator.cc): contexts, their sum, chunks.
  int64_t sum = 0;
  for (const int64_t c : b.decode) sum += c;
  StepMix mix;
  mix.decode_contexts = b.decode;
  mix.decode_context_sum = sum;
  mix.chunks = b.prefill;
  mix.tokens_per_sequence = 1;
  return mixed_step_work(d, mix);
}

}  // namespace chalk
