// A mixed step (StepMix) of equal sequences prices exactly as the uniform step shapes do,
// under the engine step and under the roofline.
#include <cstdint>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/engine/overhead.h"
#include "chalk/engine/step_mix.h"
#include "ep_kernels.h"
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

// The engine step with a StepMemo (step_mix.h) gives bit for bit the step without one: the
// parts it keeps depend only on the token counts, the attention core is priced every step.
Deployment memo_test_deployment(const char* model, int64_t chips) {
  DeploymentOptions o;
  o.n_chips = chips;
  o.mechanisms.enabled = true;
  return make_deployment(load_model(model), load_system("h200"), o);
}

StepMix memo_test_mix(const std::vector<int64_t>& contexts, const std::vector<PrefillChunk>& chunks, StepMemo* memo) {
  StepMix m;
  m.decode_contexts = contexts;
  for (const int64_t c : contexts) m.decode_context_sum += c;
  m.chunks = chunks;
  m.memo = memo;
  return m;
}

// Every figure of the breakdown, compared exactly (EXPECT_EQ on doubles: the same bits).
void expect_same_step(const StepBreakdown& a, const StepBreakdown& b, const char* what) {
  EXPECT_EQ(a.t_step.value(), b.t_step.value()) << what;
  EXPECT_EQ(a.t_compute.value(), b.t_compute.value()) << what;
  EXPECT_EQ(a.t_weights.value(), b.t_weights.value()) << what;
  EXPECT_EQ(a.t_kv.value(), b.t_kv.value()) << what;
  EXPECT_EQ(a.t_operations.value(), b.t_operations.value()) << what;
  EXPECT_EQ(a.t_overhead.value(), b.t_overhead.value()) << what;
  EXPECT_EQ(a.t_comm.value(), b.t_comm.value()) << what;
  EXPECT_EQ(a.t_comm_total.value(), b.t_comm_total.value()) << what;
  EXPECT_EQ(a.t_host.value(), b.t_host.value()) << what;
  EXPECT_EQ(a.flops_per_chip.value(), b.flops_per_chip.value()) << what;
  EXPECT_EQ(a.weight_bytes_per_chip.value(), b.weight_bytes_per_chip.value()) << what;
  EXPECT_EQ(a.kv_bytes_per_chip.value(), b.kv_bytes_per_chip.value()) << what;
  EXPECT_EQ(a.kernels, b.kernels) << what;
  EXPECT_EQ(a.graph_batch, b.graph_batch) << what;
  EXPECT_EQ(a.overlapped, b.overlapped) << what;
  EXPECT_EQ(a.governs, b.governs) << what;
}

TEST(StepMemo, SameCountsOtherContextsGiveTheStepWithoutTheMemo) {
  // Dense full attention (llama 70B, TP 8), sliding-window layers that walk each context
  // (gpt-oss-20b), MoE with expert parallelism (Mixtral on 8 chips, TP attention over all).
  for (const auto& [model, chips] : {std::pair{"llama-3.1-70b", 8}, std::pair{"gpt-oss-20b", 1}, std::pair{"mixtral-8x7b", 8}}) {
    const Deployment d = memo_test_deployment(model, chips);
    StepMemo memo;
    // Three steps of 3 decodes and one 512-token chunk: the second and third hit the memo
    // with contexts of another sum (and, for the window, of another spread).
    const std::vector<std::vector<int64_t>> contexts = {{100, 200, 300}, {4000, 50, 9000}, {101, 201, 301}};
    const std::vector<PrefillChunk> chunk = {{512, 0}};
    double first_kv = 0;
    for (std::size_t k = 0; k < contexts.size(); ++k) {
      const StepBreakdown with = engine_step(d, memo_test_mix(contexts[k], chunk, &memo));
      const StepBreakdown without = engine_step(d, memo_test_mix(contexts[k], chunk, nullptr));
      expect_same_step(with, without, model);
      if (k == 0) first_kv = with.kv_bytes_per_chip.value();
      // The core is priced again: the second step's 13,050 context tokens read more KV than
      // the first's 600.
      if (k == 1) {
        EXPECT_GT(with.kv_bytes_per_chip.value(), first_kv) << model;
      }
    }
    // Decodes only, then a chunk split in two of the same sum (another key: 2 chunks).
    const std::vector<PrefillChunk> halves = {{256, 0}, {256, 64}};
    for (const auto& chunks : {std::vector<PrefillChunk>{}, halves}) {
      expect_same_step(engine_step(d, memo_test_mix(contexts[1], chunks, &memo)), engine_step(d, memo_test_mix(contexts[1], chunks, nullptr)), model);
    }
  }
}

TEST(StepMemo, AnotherDeploymentClearsIt) {
  // The same counts on a second deployment through the same memo: that deployment's step,
  // not the first one's (llama 70B's weights take longer than 8B's on one chip).
  const Deployment big = memo_test_deployment("llama-3.1-70b", 8), small = memo_test_deployment("llama-3.1-8b", 8);
  StepMemo memo;
  const std::vector<int64_t> ctx = {1000, 2000};
  const std::vector<PrefillChunk> none;
  const StepBreakdown a = engine_step(big, memo_test_mix(ctx, none, &memo));
  const StepBreakdown b = engine_step(small, memo_test_mix(ctx, none, &memo));
  expect_same_step(b, engine_step(small, memo_test_mix(ctx, none, nullptr)), "8b after 70b");
  EXPECT_GT(a.t_weights.value(), b.t_weights.value());
}

TEST(StepMemo, AKeptPartStillChecksItsChunks) {
  // Two chunks of 512 tokens in all are priced and kept; two chunks of -1 and 513 tokens
  // (the same count and sum) are still refused, as without the memo.
  const Deployment d = memo_test_deployment("llama-3.1-8b", 1);
  StepMemo memo;
  const std::vector<int64_t> ctx = {1000};
  const std::vector<PrefillChunk> good = {{256, 0}, {256, 0}}, bad = {{-1, 0}, {513, 0}};
  EXPECT_GT(engine_step(d, memo_test_mix(ctx, good, &memo)).t_step.value(), 0);
  EXPECT_THROW(engine_step(d, memo_test_mix(ctx, bad, &memo)), InputError);
  StepMix negative = memo_test_mix(ctx, good, &memo);
  negative.decode_context_sum = -1;
  EXPECT_THROW(engine_step(d, negative), InputError);
}

TEST(StepMemo, DataParallelRanksKeyTheKeptPartByTheirShares) {
  // DeepSeek-V3 on 16 H200, attention data parallel (16 / tp_attention ranks): the parts kept
  // depend on the busiest rank's shares too. Four decodes, three on rank 0 and one on rank 1,
  // and a 512-token chunk on rank 0 (busiest: 515 query tokens), then on the last rank
  // (busiest: 513 or 512): the same counts, other shares, so another part (the projections'
  // FLOPs follow the busiest rank's tokens). Then the first placement at other contexts: the
  // same key, a kept part, with that step's own attention-core shares (its KV bytes differ).
  const Deployment d = memo_test_deployment("deepseek-v3", 16);
  const auto ranks = static_cast<int32_t>(16 / d.mechanisms.layout.tp_attention);
  ASSERT_GE(ranks, 2);
  StepMemo memo;
  const std::vector<PrefillChunk> chunk = {{512, 0}};
  const std::vector<int32_t> decode_ranks = {0, 0, 0, 1}, on0 = {0}, on_last = {ranks - 1};
  auto placed = [&](const std::vector<int64_t>& ctx, const std::vector<int32_t>& chunk_rank, StepMemo* m) {
    StepMix mix = memo_test_mix(ctx, chunk, m);
    mix.decode_ranks = decode_ranks;
    mix.chunk_ranks = chunk_rank;
    return engine_step(d, mix);
  };
  const std::vector<int64_t> first = {1000, 2000, 3000, 4000}, other = {9000, 200, 3000, 4000};
  const StepBreakdown a = placed(first, on0, &memo), b = placed(first, on_last, &memo), c = placed(other, on0, &memo);
  expect_same_step(a, placed(first, on0, nullptr), "chunk on rank 0");
  expect_same_step(b, placed(first, on_last, nullptr), "chunk on the last rank");
  expect_same_step(c, placed(other, on0, nullptr), "rank 0, other contexts");
  EXPECT_NE(a.flops_per_chip.value(), b.flops_per_chip.value());
  EXPECT_NE(a.kv_bytes_per_chip.value(), c.kv_bytes_per_chip.value());
}

// The all-to-all kernels of a step (ep_low_latency_step): low-latency only for a pure
// decode step; any prompt chunk runs the normal kernels for every token (SGLang's
// DeepEPMode.AUTO.resolve: NORMAL when any rank extends).
TEST(StepMix, PromptStepsRunTheNormalAllToAllKernels) {
  EXPECT_TRUE(ep_low_latency_step(16, 0));
  EXPECT_FALSE(ep_low_latency_step(16, 1));
  EXPECT_FALSE(ep_low_latency_step(0, 1));
  EXPECT_FALSE(ep_low_latency_step(0, 0));
  // Review 7 H2: DeepSeek-V3 on 16 H100 (two 8-GPU hosts), attention TP1, EP16. A lone
  // 2048-token prompt vs the same prompt + one decode at context 2100. The prompt sits on one
  // rank: its sender skew is 16, so both steps' busiest rank sends 2048 tokens' copies
  // (2048 / 16 x 16 and 2049 / 16 x 16 x 2048 / 2049). Normal kernels send one copy per
  // remote host: (2 - 1) x (1 - (1 - 1/2)^8) = 255/256 per token over RDMA in both steps. Before this rule the decode made the step
  // low-latency: 8 x 1/2 = 4 copies per token over RDMA, 4.016x the scale-out bytes
  // (`chalk step`: 182.6 ms -> 485.6 ms). Now the decode adds only its own work: one token
  // through the model and 2100 tokens of MLA KV on its rank, well under 5% of the step.
  DeploymentOptions o;
  o.n_chips = 16;
  o.mechanisms.enabled = true;
  o.mechanisms.layout.tp_attention = 1;
  const Deployment d = make_deployment(load_model("deepseek-v3"), load_system("h100-sxm"), o);
  const std::vector<PrefillChunk> chunk = {{2048, 0}};
  const std::vector<int64_t> ctx = {2100};
  StepMix alone;
  alone.chunks = chunk;
  StepMix mixed = alone;
  mixed.decode_contexts = ctx;
  mixed.decode_context_sum = 2100;
  const StepBreakdown a = engine_step(d, alone), m = engine_step(d, mixed);
  // The mixed step runs under a CUDA graph: each rank's 1 + 2048 / 16 = 129 tokens pad to the
  // capture size 136, 7 more per rank, 2049 + 112 = 2161 tokens through the exchange: its
  // bytes grow by at most 2161 / 2049 (the fixed latency not at all), never the 4.016x of
  // low-latency kernels.
  for (const auto& [mixed_t, alone_t] : {std::pair{m.t_dispatch, a.t_dispatch}, std::pair{m.t_combine, a.t_combine}}) {
    EXPECT_GT(mixed_t.value(), alone_t.value());
    EXPECT_LE(mixed_t.value(), alone_t.value() * 2161.0 / 2049.0);
  }
  EXPECT_GT(m.t_step.value(), a.t_step.value());
  EXPECT_LT(m.t_step.value(), 1.05 * a.t_step.value());
  EXPECT_NEAR(ep_scale_out_copies(2, 8, false), 255.0 / 256.0, 1e-12);
  EXPECT_NEAR(ep_scale_out_copies(2, 8, true), 4.0, 1e-12);
}

}  // namespace
}  // namespace chalk
