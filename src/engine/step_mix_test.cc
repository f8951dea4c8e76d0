// A mixed step (StepMix) of equal sequences prices exactly as the uniform step shapes do,
// under the engine step and under the roofline.
#include <vector>

#include <gtest/gtest.h>

#include "chalk/engine/step_mix.h"
#include "chalk/io/io.h"

namespace chalk {
namespace {

Deployment step_mix_deployment(const char* model, const char* system, int64_t chips, bool mechanisms) {
  DeploymentOptions o;
  o.n_chips = chips;
  o.mechanisms.enabled = mechanisms;
  return make_deployment(load_model(model), load_system(system), o);
}

TEST(StepMix, OneDecodeOrOneChunkEqualsTheUniformSteps) {
  for (const bool mech : {false, true}) {
    for (const char* m : {"llama-3.1-8b", "deepseek-v3", "gpt-oss-20b"}) {
      const Deployment d = step_mix_deployment(m, "h200", m[0] == 'd' ? 8 : 1, mech);
      const std::vector<int64_t> ctx = {3000};
      StepMix one;
      one.decode_contexts = ctx;
      one.decode_context_sum = 3000;
      EXPECT_NEAR(mixed_step_time(d, one).value(), decode_step(d, 1, 3000).t_step.value(), 1e-12) << m << mech;
      const std::vector<PrefillChunk> chunk = {{512, 1024}};
      StepMix pre;
      pre.chunks = chunk;
      EXPECT_NEAR(mixed_step_time(d, pre).value(), prefill_step(d, 1, 512, 1024).t_step.value(), 1e-12) << m << mech;
      // 64 decodes at 4096 equal decode_step(64, 4096).
      const std::vector<int64_t> many(64, 4096);
      StepMix batch;
      batch.decode_contexts = many;
      batch.decode_context_sum = 64 * 4096;
      EXPECT_NEAR(mixed_step_time(d, batch).value(), decode_step(d, 64, 4096).t_step.value(), 1e-12) << m << mech;
    }
  }
}

TEST(StepMix, MixedStepCostsMoreThanEitherPartAndLessThanBoth) {
  // Decodes and a chunk share one pass over the weights: the mixed step is slower than
  // either part alone and faster than running them one after the other.
  const Deployment d = step_mix_deployment("llama-3.1-70b", "h200", 8, true);
  const std::vector<int64_t> ctx(32, 2048);
  const std::vector<PrefillChunk> chunk = {{1024, 0}};
  StepMix mix;
  mix.decode_contexts = ctx;
  mix.decode_context_sum = 32 * 2048;
  mix.chunks = chunk;
  const double both = mixed_step_time(d, mix).value();
  const double dec = decode_step(d, 32, 2048).t_step.value(), pre = prefill_step(d, 1, 1024).t_step.value();
  EXPECT_GT(both, std::max(dec, pre));
  EXPECT_LT(both, dec + pre);
  EXPECT_EQ(mixed_step_time(d, StepMix{}).value(), 0.0);
}

}  // namespace
}  // namespace chalk
