// StepMix's aggregate form (decode_count with no contexts listed, step_mix.h): the same
// doubles as the listed contexts wherever the step reads only their count and sum, and a
// logic_error where a term walks each context.
#include <bit>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "chalk/engine/step_mix.h"
#include "chalk/io/io.h"

namespace chalk {
namespace {

Deployment aggregate_mix_deployment(const char* model, int64_t chips, bool mechanisms) {
  DeploymentOptions o;
  o.n_chips = chips;
  o.mechanisms.enabled = mechanisms;
  return make_deployment(load_model(model), load_system("h200"), o);
}

TEST(StepMixAggregate, CountAndSumGiveTheListedContextsBitForBit) {
  // Llama 3.1 70B (full attention) on 8 H200, one replica: 37 decodes at unequal contexts
  // (1,000 + 97 k for k = 0..36: sum 37,000 + 97 x 666 = 101,602) with a chunk of 700 after
  // 300, then the decodes alone; under the engine step and under the roofline.
  std::vector<int64_t> contexts;
  int64_t sum = 0;
  for (int64_t k = 0; k < 37; ++k) contexts.push_back(1000 + 97 * k), sum += contexts.back();
  ASSERT_EQ(sum, 101602);
  const std::vector<PrefillChunk> chunk = {{700, 300}};
  for (const bool mech : {true, false}) {
    const Deployment d = aggregate_mix_deployment("llama-3.1-70b", 8, mech);
    for (const bool with_chunk : {true, false}) {
      StepMix listed;
      listed.decode_contexts = contexts;
      listed.decode_context_sum = sum;
      if (with_chunk) listed.chunks = chunk;
      StepMix counted = listed;
      counted.decode_contexts = {};
      counted.decode_count = 37;
      EXPECT_EQ(counted.decodes(), 37);
      const MixedStepWork a = mixed_step_work(d, listed), b = mixed_step_work(d, counted);
      EXPECT_EQ(std::bit_cast<uint64_t>(a.t_step.value()), std::bit_cast<uint64_t>(b.t_step.value())) << mech << with_chunk;
      EXPECT_EQ(std::bit_cast<uint64_t>(a.t_compute.value()), std::bit_cast<uint64_t>(b.t_compute.value())) << mech << with_chunk;
      EXPECT_EQ(std::bit_cast<uint64_t>(a.t_memory.value()), std::bit_cast<uint64_t>(b.t_memory.value())) << mech << with_chunk;
      EXPECT_GT(b.t_step.value(), 0);
    }
  }
  // decode_count is ignored when the contexts are listed.
  StepMix both;
  both.decode_contexts = contexts;
  both.decode_count = 5;
  EXPECT_EQ(both.decodes(), 37);
  EXPECT_TRUE(both.contexts_listed());
}

TEST(StepMixAggregate, TermsThatWalkEachContextRefuseTheAggregateForm) {
  StepMix counted;
  counted.decode_count = 4;
  counted.decode_context_sum = 4000;
  EXPECT_FALSE(counted.contexts_listed());
  // gpt-oss-20b alternates sliding-window layers: their KV reads take each context.
  EXPECT_THROW(mixed_step_work(aggregate_mix_deployment("gpt-oss-20b", 1, true), counted), std::logic_error);
  EXPECT_THROW(mixed_step_work(aggregate_mix_deployment("gpt-oss-20b", 1, false), counted), std::logic_error);
  // DeepSeek-V3 on 16 H200: data-parallel attention ranks, whose loads take each context.
  EXPECT_THROW(mixed_step_work(aggregate_mix_deployment("deepseek-v3", 16, true), counted), std::logic_error);
}

}  // namespace
}  // namespace chalk
