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

TEST(StepMix, DataParallelAttentionPricesTheBusiestRank) {
  // Llama 3.1 8B on 2 H100 with attention TP1 (FFN TP1): two data-parallel ranks, each a
  // whole copy of the model, stepping together. A 1,024-token chunk on rank 0 and one
  // decode at context 1000 on rank 1: every per-rank quantity's busiest rank is rank 0
  // (tokens 1024 against 1; LM-head rows 1 and 1; the chunk's causal attention and 1,024
  // KV tokens written against 1,000 read), so the step is rank 0's alone, the prompt's
  // own prefill_step(d, 1, 1024): the decode hides under it. Spread over both ranks, as
  // the step priced a mix before, the 1,025 tokens would take about half of that.
  DeploymentOptions o;
  o.n_chips = 2;
  o.mechanisms.enabled = true;
  o.mechanisms.layout.tp_attention = 1;
  const Deployment d = make_deployment(load_model("llama-3.1-8b"), load_system("h100-sxm"), o);
  ASSERT_EQ(d.mechanisms.layout.tp_ffn, 1);
  const std::vector<int64_t> ctx = {1000};
  const std::vector<PrefillChunk> chunk = {{1024, 0}};
  const std::vector<int32_t> on1 = {1}, on0 = {0};
  StepMix mix;
  mix.decode_contexts = ctx;
  mix.decode_context_sum = 1000;
  mix.chunks = chunk;
  mix.decode_ranks = on1;
  mix.chunk_ranks = on0;
  const double lone = prefill_step(d, 1, 1024).t_step.value();
  EXPECT_NEAR(mixed_step_time(d, mix).value(), lone, 1e-12 * lone);
  // Without ranks the engine step places them itself, the same way (least tokens first).
  StepMix placed = mix;
  placed.decode_ranks = {};
  placed.chunk_ranks = {};
  EXPECT_NEAR(mixed_step_time(d, placed).value(), lone, 1e-12 * lone);
  // Three decodes at 4096 all on rank 0: the busiest rank holds 3, as in a uniform batch of
  // 6 over the 2 ranks (decode_step(d, 6, 4096): 3 a rank); placed 2 + 1 they are
  // decode_step(d, 3, 4096) (ceil(3 / 2) = 2 on the busiest).
  const std::vector<int64_t> three(3, 4096);
  const std::vector<int32_t> all0 = {0, 0, 0};
  StepMix dec;
  dec.decode_contexts = three;
  dec.decode_context_sum = 3 * 4096;
  dec.decode_ranks = all0;
  EXPECT_NEAR(mixed_step_time(d, dec).value(), decode_step(d, 6, 4096).t_step.value(), 1e-12);
  dec.decode_ranks = {};
  EXPECT_NEAR(mixed_step_time(d, dec).value(), decode_step(d, 3, 4096).t_step.value(), 1e-12);
}

TEST(StepMix, DataParallelAttentionMoePromptCostsAtLeastItsOwnPrefill) {
  // DeepSeek-V3 on 8 H200, attention TP1, EP8: a 2,048-token chunk on rank 0 beside seven
  // decodes at 2048 on ranks 1-7. Rank 0's attention is the prompt's own (159 ms step for
  // the prompt alone, `chalk prefill -n 8 --tp 1 -p 2048 -b 1`); the experts see 2,055
  // tokens instead of 2,048: the step is no shorter than the lone prompt's. It was 156 ms
  // before the norm and activation kernels paid their HBM traffic (engine/memory_kernels.h):
  // 2 norms a layer of 2048 x 8 x 7168 B at 4.8 TB/s x 0.84 = 29.1 us (22.8 over the 6.3 us
  // floor) x 61 layers = 2.78 ms, and the 3 dense layers' SwiGLU, 2048 x 6 x 18432 B = 56.2 us
  // (49.9 over) = 0.15 ms; the shared expert's (2048 x 6 x 2048 B, 6.2 us) stays under its floor.
  DeploymentOptions o;
  o.n_chips = 8;
  o.mechanisms.enabled = true;
  o.mechanisms.layout.tp_attention = 1;
  const Deployment d = make_deployment(load_model("deepseek-v3"), load_system("h200"), o);
  const std::vector<int64_t> ctx(7, 2048);
  const std::vector<int32_t> ranks = {1, 2, 3, 4, 5, 6, 7}, zero = {0};
  const std::vector<PrefillChunk> chunk = {{2048, 0}};
  StepMix mix;
  mix.decode_contexts = ctx;
  mix.decode_context_sum = 7 * 2048;
  mix.decode_ranks = ranks;
  mix.chunks = chunk;
  mix.chunk_ranks = zero;
  const double lone = prefill_step(d, 1, 2048).t_step.value();
  EXPECT_NEAR(lone, 0.159, 0.0005);
  EXPECT_GE(mixed_step_time(d, mix).value(), lone);
}

TEST(StepMix, SteadyStepRunsWholePromptsWithoutChunkedPrefill) {
  // Llama 3.1 70B on one H200 in FP8, 165 decodes at 1,500 tokens while 0.165 prompts of
  // 1,000 tokens per step replace finished requests (1,000 in / 1,000 out).
  DeploymentOptions o;
  o.n_chips = 1;
  o.mechanisms.enabled = true;
  o.weights = DType::fp8;
  o.kv = DType::fp8;
  const Deployment d = make_deployment(load_model("llama-3.1-70b"), load_system("h200"), o);
  StepShape s;
  s.decode_sequences = 165;
  s.context = 1500;
  s.prefill_sequences = 0.165;
  s.prompt = 1000;
  // Chunked prefill: the engine step of the averaged shape, 165 prompt tokens per step.
  const double chunked = steady_state_step(d, s, false).t_step.value();
  EXPECT_DOUBLE_EQ(chunked, engine_step(d, s).t_step.value());
  // Whole prompts: 83.5% of the steps decode alone and 16.5% also run one whole prompt,
  // each priced as a StepMix of equal decodes (= the uniform shapes).
  StepShape none = s, one = s;
  none.prefill_sequences = 0;
  one.prefill_sequences = 1;
  const double alone = engine_step(d, none).t_step.value(), with_one = engine_step(d, one).t_step.value();
  const double whole = steady_state_step(d, s, true).t_step.value();
  EXPECT_NEAR(whole, 0.835 * alone + 0.165 * with_one, 1e-12);
  // Spread over every step the prompt tokens fill compute the memory-bound operations leave
  // idle; whole, one step in six is the prompt's compute: 48.2 ms against 46.8 ms here
  // (a 20,000-token prompt at batch 15 makes it 0.64x the throughput:
  // Validate.ChunkedPrefillSetsHowPromptsShareTheSteps). The chunked step's 165 + 165 = 330
  // tokens replay vLLM's CUDA graph of 336 (46.3 ms before the padding): 6 more tokens
  // through compute-bound FP8 matmuls, about 6 x 2 x 70e9 / (1979 TF x 0.709) = 0.6 ms.
  // Those were 46.8 and 48.2 ms before the dense GEMMs paid their per-rank shape
  // (engine/dense_gemm.h): 165 decode rows pad to 192 in 64-row tiles and the q/k/v's 240
  // tiles run in 2 waves of 132 (165 / 192 x 240 / 264 = 0.78), so the decode-alone step is
  // compute-bound too, and whole prompts cost what chunked ones do: 52.7 ms both. Then the
  // SwiGLU kernel paid its HBM traffic (engine/memory_kernels.h; 6 x 28672 B a token in bf16
  // at 4.8 TB/s x 0.84): the chunked step's 336 tokens take 14.3 us a layer, 8.0 over the
  // 6.3 us floor, x 80 = +0.64 ms (53.4 ms); whole, the decode-alone steps' 168 tokens add
  // 0.07 ms and a step with a whole prompt (1,165 tokens: norms 12.6 us over the floor
  // each, rotary 4.4, SwiGLU 43.4) 5.85 ms: 0.835 x 0.07 + 0.165 x 5.85 = +1.02 ms (53.7 ms).
  EXPECT_NEAR(chunked, 0.0534, 0.0005);
  EXPECT_NEAR(whole, 0.0537, 0.0005);
  // An integer number of prompts per step needs no blend.
  StepShape two = s;
  two.prefill_sequences = 2;
  EXPECT_NEAR(steady_state_step(d, two, true).t_step.value(), engine_step(d, two).t_step.value(), 1e-12);
}

}  // namespace
}  // namespace chalk
