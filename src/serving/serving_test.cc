// Serving economics: levers, sweeps, balance points, the batching window, end to end.
// Hand derivations use Llama 3.1 70B (bf16) on 8 H200 unless stated:
//   params 70.553e9 = 80 x 855.65e6 (attention 150.99e6, FFN 704.64e6, norms 16,384)
//                     + 2 x 128,256 x 8,192 (embedding, LM head) + 8,192;
//   weights read per step = all but the input embedding = 69.503e9 x 2 B = 139.006 GB;
//   W_eff = 8 x 4.8e12 x 0.84 = 32.256e12 B/s -> T_weights = 4.3095 ms;
//   KV = 80 x 2 x 8 x 128 x 2 B = 327,680 B/token -> 1.3422 GB per sequence at 4,096,
//        T_kv per sequence = 41.612 us;
//   F_eff = 8 x 989.4e12 x 0.803 = 6.3559e15 FLOP/s; 2 N_active = 139.006e9 FLOP/token;
//   price 8 x $4.54/h = $0.0100889/s.
#include "chalk/serving/serving.h"
#include "chalk/serving/cheapest_batch.h"

#include <cmath>
#include <cstdio>

#include <gtest/gtest.h>

#include "chalk_testing/engine_deploy.h"
#include "chalk_testing/expect.h"

#include "chalk/base/error.h"
#include "chalk/io/io.h"

namespace chalk {
namespace {

Deployment llama70_h200(int64_t chips = 8) {
  DeploymentOptions o;
  o.n_chips = chips;
  return make_deployment(load_model("llama-3.1-70b"), load_system("h200"), o);
}

using chalk::testing::expect_rel;

TEST(ServingLevers, ResolveDraftAndSparseRules) {
  ServingLevers l;
  l.draft_tokens = 3;
  l.acceptance = 0.5;
  l.sparse = SparseAttention::sqrt_context;
  l.sparse_sqrt_factor = 2;
  const DecodeLevers r = resolve_levers(l, 65536);
  EXPECT_EQ(r.tokens_per_sequence, 4);
  // (1 - 0.5^4) / (1 - 0.5) = 1.875 tokens kept per step.
  EXPECT_DOUBLE_EQ(r.accepted_tokens_per_step, 1.875);
  // ceil(2 sqrt(65,536)) = 512.
  EXPECT_EQ(r.sparse_attention_top_k, 512);
  l.sparse = SparseAttention::top_k;
  l.sparse_top_k = 2048;
  EXPECT_EQ(resolve_levers(l, 100000).sparse_attention_top_k, 2048);
  l.sparse = SparseAttention::sqrt_context;
  EXPECT_EQ(resolve_levers(l, 0).sparse_attention_top_k, 1);  // at least one token
}

TEST(ServingLevers, BadLeversNameTheOption) {
  auto field = [](ServingLevers l) {
    try {
      validate(l);
    } catch (const InputError& e) {
      return e.field();
    }
    return std::string("no error");
  };
  ServingLevers l;
  l.draft_tokens = -1;
  EXPECT_EQ(field(l), "--draft");
  l = {};
  l.draft_tokens = 65;
  EXPECT_EQ(field(l), "--draft");
  l = {};
  l.acceptance = 1.5;
  EXPECT_EQ(field(l), "--acceptance");
  l = {};
  l.acceptance = std::nan("");
  EXPECT_EQ(field(l), "--acceptance");
  l = {};
  l.sparse = SparseAttention::top_k;
  EXPECT_EQ(field(l), "--sparse-top-k");
  l = {};
  l.sparse = SparseAttention::sqrt_context;
  l.sparse_sqrt_factor = -1;
  EXPECT_EQ(field(l), "--sparse-sqrt");
  EXPECT_THROW(powers_of_two(0, 8), InputError);
  EXPECT_THROW(every_integer(5, 4), InputError);
  EXPECT_THROW(every_integer(1, (int64_t{1} << 20) + 1), InputError);
  EXPECT_EQ(every_integer(1, int64_t{1} << 20).size(), size_t{1} << 20);
}

TEST(ServingLevers, OnlyDeepSeekV3sOwnMtpModuleHasAPublishedAcceptance) {
  // DeepSeek-V3 report 5.4.3: the second token accepted 85-90% of the time, midpoint 0.875;
  // R1 shares the architecture (model_type deepseek_v3, one MTP module). GLM-4.5 ships MTP
  // layers but publishes no acceptance; Llama 3.1 8B has no module.
  EXPECT_EQ(published_mtp_acceptance(load_model("deepseek-v3")), 0.875);
  EXPECT_EQ(published_mtp_acceptance(load_model("deepseek-r1")), 0.875);
  EXPECT_FALSE(published_mtp_acceptance(load_model("glm-4.5")).has_value());
  EXPECT_FALSE(published_mtp_acceptance(load_model("llama-3.1-8b")).has_value());
}

TEST(ServingSweep, PowersOfTwoAndEveryInteger) {
  EXPECT_EQ(powers_of_two(1, 65536).size(), 17u);
  EXPECT_EQ(powers_of_two(3, 20), (std::vector<int64_t>{4, 8, 16, 20}));
  EXPECT_EQ(every_integer(1, 1000).size(), 1000u);
}

TEST(ServingSweep, CostIsAHyperbolaPlusAFloor) {
  // Lecture 13:30-15:30: divide each latency term by B. Memory-bound at every batch here
  // (compute 23.6 us per sequence < KV 41.6 us), so
  //   cost(B) = price (T_weights + B T_kv1) / B = A / B + C with
  //   A = 0.0100889 $/s x 4.3095 ms = 4.3478e-5 $ per step = 43.478 $/Mtok x sequences,
  //   C = 0.0100889 x 41.612e-6 = 0.41982 $/Mtok (the KV floor: "Claude Code lives on this line").
  const Deployment d = llama70_h200();
  const auto pts = serving_sweep(d, powers_of_two(1, 512), {4096});
  ASSERT_EQ(pts.size(), 10u);
  for (const auto& p : pts) {
    ASSERT_TRUE(p.cost);
    const double b = static_cast<double>(p.batch);
    expect_rel(to_usd_per_mtok(p.cost->total), 43.478 / b + 0.41982, 2e-3, "B=" + std::to_string(p.batch));
    expect_rel(to_usd_per_mtok(p.cost->weights), 43.478 / b, 2e-3);  // the hyperbola
    expect_rel(to_usd_per_mtok(p.cost->kv), 0.41982, 2e-3);          // the floor
    EXPECT_TRUE(p.fits);
  }
  // Latency never falls as batch grows (docs/formulas.md 3).
  for (size_t i = 1; i < pts.size(); ++i) EXPECT_GE(pts[i].step.t_step, pts[i - 1].step.t_step);
  // At batch 1024 the KV of 1024 x 1.342 GB no longer fits beside 139 GB of weights in
  // 0.9 x 1,128 GB: max batch (1015.2 - 141.1) / 1.3422 = 651.
  const auto big = serving_sweep(d, {1024}, {4096});
  EXPECT_FALSE(big.front().fits);
  EXPECT_EQ(big.front().max_batch, 651);
}

TEST(ServingSweep, SparseAttentionCutsTheKvFetch) {
  // At 131,072 tokens a top-2048 read is 64x smaller: T_kv = B x 2048 x 327,680 / W_eff.
  const Deployment d = llama70_h200();
  ServingLevers l;
  l.sparse = SparseAttention::top_k;
  l.sparse_top_k = 2048;
  const auto dense = serving_sweep(d, {64}, {131072});
  const auto sparse = serving_sweep(d, {64}, {131072}, l);
  expect_rel(to_ms(sparse.front().step.t_kv), 64 * 2048 * 327680.0 / 32.256e12 * 1e3, 1e-6);
  expect_rel(dense.front().step.t_kv / sparse.front().step.t_kv, 64.0, 1e-9);
  EXPECT_EQ(sparse.front().tokens_read, 2048);
}

TEST(ServingBalance, Llama70bOnH200) {
  const BalancePoints b = balance_points(llama70_h200(), 4096, 256);
  // Lecture 15:53: N_read b_w F / (2 N_active W). The step reads every weight but the untied
  // input embedding (128,256 x 8,192 = 1.0508e9): N_read = 70.553e9 - 1.0508e9 = 69.503e9 =
  // N_active (the LM head is read and multiplied), so B* = F / W = 989.4 / 4.8 = 206.125; with
  // achievable rates F/W = 794.49 / 4.032 = 197.05. (Counting the table gave 209.24.)
  expect_rel(b.lecture_batch_peak, 206.125, 1e-3);
  expect_rel(b.lecture_batch_effective, 197.05, 1e-3);
  // On the step (no KV): B x 139.006e9 / 6.3559e15 >= 4.3095 ms -> B >= 197.04 -> 198.
  ASSERT_TRUE(b.batch_without_kv);
  EXPECT_EQ(*b.batch_without_kv, 198);
  // With KV at 4096 the per-sequence KV read (41.6 us) outlasts the compute (23.6 us):
  // never compute-bound (lecture 11:00).
  EXPECT_FALSE(b.batch_with_kv);
  // Per token of context: KV 327,680 / 32.256e12 = 10.159 ns; attention 80 x 4 x 64 x 128 =
  // 2.621 MFLOP / 6.3559e15 = 0.412 ns. S x (10.159 - 0.412) ns = 139.006e9 / 6.3559e15 =
  // 21.871 us -> S = 2,244.
  ASSERT_TRUE(b.context_never_compute_bound);
  EXPECT_NEAR(static_cast<double>(*b.context_never_compute_bound), 2244, 2);
  // KV overtakes weights at B = 256: 256 x S x 10.159 ns >= 4.3095 ms -> S = 1,657.1 -> 1,658.
  ASSERT_TRUE(b.kv_overtakes_weights_context);
  EXPECT_NEAR(static_cast<double>(*b.kv_overtakes_weights_context), 1658, 2);
}

TEST(ServingBalance, LectureBatchExcludesTheUntiedEmbedding) {
  // Llama 3.1 8B bf16 on one H100: 8.030e9 weights, of which the untied input embedding
  // 128,256 x 4,096 = 0.5253e9 is never read whole by a step. N_read = 7.505e9 = N_active
  // (LM head included), so B* = 7.505e9 x 2 x 989.4e12 / (2 x 7.505e9 x 3.35e12) = 295.34;
  // counting the table gave 8.030 / 7.505 x 295.34 = 316.
  const Deployment d = make_deployment(load_model("llama-3.1-8b"), load_system("h100-sxm"), {});
  const BalancePoints b = balance_points(d, 0, 1);
  expect_rel(b.lecture_batch_peak, 989.4 / 3.35, 1e-3);
  // And it agrees with the step's own balance at peak rates: T_compute = T_weights at
  // B x 2 x 7.505e9 / F = 7.505e9 x 2 / W.
  EXPECT_NEAR(b.lecture_batch_peak, 295.3, 0.1);
}

TEST(ServingBalance, MoeIsSolvedOnTheStep) {
  // DeepSeek-V3 on 8 H200: few experts are touched at small batch, so the weight term grows
  // with B and the balance must be solved on the step. Both solutions are real balance points.
  DeploymentOptions o;
  o.n_chips = 8;
  const Deployment d = make_deployment(load_model("deepseek-v3"), load_system("h200"), o);
  const BalancePoints b = balance_points(d, 4096, 256);
  ASSERT_TRUE(b.batch_without_kv);
  ASSERT_TRUE(b.batch_with_kv);
  const DecodeStep at = decode_step(d, *b.batch_without_kv, 0);
  const DecodeStep before = decode_step(d, *b.batch_without_kv - 1, 0);
  EXPECT_GE(at.t_compute, at.t_weights);
  EXPECT_LT(before.t_compute, before.t_weights);
  const DecodeStep kv = decode_step(d, *b.batch_with_kv, 4096);
  EXPECT_GE(kv.t_compute, kv.t_memory);
  EXPECT_GT(*b.batch_with_kv, *b.batch_without_kv);  // the KV term pushes B* up (lecture 19:52)
  // The lecture's closed form over the weights a step reads: 673.0e9 bytes less the untied
  // input embedding (129,280 x 7,168 x 2 B = 1.853e9) = 671.2e9 bytes, x (1978.9 / 4.8) /
  // (2 x 37.6e9) ~ 3,780.
  EXPECT_NEAR(b.lecture_batch_peak, 3778, 40);
  // At B ~ 3,300 every expert is touched (1 - (1 - 8/256)^3300 ~ 1 - e^-105) and each of the 8
  // chips holds 32 whole experts, so the step reads exactly the closed form's weights and the
  // step's balance is the first integer at or above the closed form at achievable rates.
  EXPECT_EQ(*b.batch_without_kv, static_cast<int64_t>(std::ceil(b.lecture_batch_effective)));
}

TEST(ServingWindow, TheTrainDepartsEveryHbmSweep) {
  // Lecture 27:00: 2,000 sequences x 64 steps/s = 128,000 tok/s.
  EXPECT_DOUBLE_EQ(deployment_tokens_per_s(2000, seconds(1.0 / 64)).value(), 128000.0);
  const Deployment d = llama70_h200();
  const BatchingWindow w = batching_window(d, 4096);
  // Lecture 22:44: 141 GB / 4.8 TB/s = 29.375 ms; at 84% of peak 34.970 ms.
  expect_rel(to_ms(w.hbm_sweep_peak), 29.375, 1e-9);
  expect_rel(to_ms(w.hbm_sweep_effective), 34.970, 1e-4);
  EXPECT_EQ(w.max_batch_at_context, 651);
  ASSERT_TRUE(w.step);
  // 4.3095 + 651 x 0.041612 = 31.399 ms: the full train reads (almost) all of the 90% of HBM
  // not held back, 0.9 x 34.970 = 31.47 ms.
  expect_rel(to_ms(w.step->t_step), 31.399, 2e-3);
  expect_rel(to_ms(w.step->t_step), 0.9 * to_ms(w.hbm_sweep_effective), 0.01);
  expect_rel(w.replica_tokens_per_s.value(), 651 / 31.399e-3, 2e-3);
  EXPECT_THROW(deployment_tokens_per_s(10, seconds(0)), InputError);
}

TEST(ServingEndToEnd, PrefillPlusDecode) {
  // Batch 1, 1,000 in, 200 out: TTFT + 200 steps at context 1,100.
  const Deployment d = llama70_h200();
  const EndToEnd e = end_to_end(d, 1, 1000, 200);
  const double want = to_ms(prefill_step(d, 1, 1000).t_step) + 200 * to_ms(decode_step(d, 1, 1100).t_step);
  expect_rel(to_ms(e.t_total), want, 1e-12);
  expect_rel(e.output_tokens_per_s.value(), 200 / (want * 1e-3), 1e-12);
  EXPECT_THROW(end_to_end(d, 1, 0, 10), InputError);
  EXPECT_THROW(end_to_end(d, 1, 10, 0), InputError);
}

TEST(ServingSpeed, LargestBatchAtSpeed) {
  // 84.55 tok/s per user -> T_step <= 11.827 ms -> B <= (11.827 - 4.3095) / 0.041612 = 180.6.
  const Deployment d = llama70_h200();
  EXPECT_EQ(largest_batch_at_speed(d, 4096, {}, TokensPerSecond(84.55), 651), 180);
  EXPECT_EQ(largest_batch_at_speed(d, 4096, {}, TokensPerSecond(1e6), 651), 0);
  EXPECT_EQ(largest_batch_at_speed(d, 4096, {}, TokensPerSecond(1), 651), 651);
}

TEST(ServingCheapestBatch, TheRooflineFillsHbmTheEngineSkipsAPaddedGraph) {
  // The roofline: cost per token n price (T_w + B T_kv) / B falls as B grows, so the batch
  // that fills HBM is the cheapest (70B on 8 H200 at 4,096: T_w 4.3095 ms, T_kv 41.6 us).
  const Deployment roof = llama70_h200();
  const ModePoint r = cheapest_decode_point(roof, 300, 4096);
  EXPECT_EQ(r.batch, 300);
  EXPECT_EQ(r.memory_full_batch, 300);
  // The engine step (vLLM's graphs: 8, 16, ..., 512 tokens) of Llama 3.1 8B on one H100 at
  // context 128 is compute-bound near 480: 2 x 8.03e9 x 480 = 7.7 TFLOP at 989.4 x 0.803
  // TFLOP/s = 9.7 ms against 16 GB of weights at 3.35 TB/s x 0.87 = 5.5 ms. Batch 481
  // replays the 496 graph (vLLM's sizes step by 16 above 256), 15 padded tokens' matmuls
  // (+3.1%) for one more sequence (+0.2%): 480, a captured size, is cheaper per token
  // (review L7: 273 padded cost more than 256).
  // The GEMMs' tiles apart (engine/dense_gemm.h: 64-row tiles pad 481 and 496 rows alike
  // to 512, so with them the padded graph costs no more matmul time).
  Deployment eng = chalk::testing::engine_deploy("llama-3.1-8b", "h100-sxm", 1);
  eng.system.chip.sm_count = 0;
  EXPECT_EQ(decode_step(eng, 481, 128).graph_batch, 496);
  const ModePoint e = cheapest_decode_point(eng, 481, 128);
  EXPECT_EQ(e.batch, 480);
  EXPECT_EQ(e.memory_full_batch, 481);
  EXPECT_GT(e.tokens_per_s_per_chip.value(), decode_step(eng, 481, 128).tokens_per_s_per_chip.value());
  // At a captured size nothing below is cheaper: the memory-full batch stays.
  EXPECT_EQ(cheapest_decode_point(eng, 480, 128).batch, 480);
  EXPECT_THROW(cheapest_decode_point(eng, 0, 128), InputError);
}

}  // namespace
}  // namespace chalk
