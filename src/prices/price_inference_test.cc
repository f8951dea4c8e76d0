// Reading prices backwards, (a)-(f): the lecture's figures from its own assumptions, hand
// derivations on built-in sheets, and properties every built-in sheet must satisfy.
#include <cmath>

#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/prices/prices.h"

namespace chalk {
namespace {

Deployment infer_deploy(const std::string& model, const std::string& system, int64_t chips) {
  DeploymentOptions o;
  o.n_chips = chips;
  return make_deployment(load_model(model), load_system(system), o);
}

std::string error_field(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.field();
  }
  return "";
}

TEST(PriceInference, LectureKvBytesPerTokenFromItsOwnAssumptions) {
  // Lecture 1:35:47-1:38:18: 50e9 active parameters, 300 FLOPs per byte, step at 200,000
  // tokens: kv = 2 x 50e9 / (300 x 200,000) = 1e11 / 6e7 = 1,666.7 bytes ("1667").
  const BytesPerToken kv = kv_bytes_at_price_step(50e9, FlopsPerByte(300), 200000);
  EXPECT_NEAR(kv.value(), 1666.6667, 1666.6667 * 1e-6);
}

TEST(PriceInference, KvRangeSpansTheAssumptions) {
  // Default ranges N 25e9..100e9, F/W 200..600, a 0..16 at S* = 200,000:
  // low 2 x 25e9 / (600 x 2e5) = 416.7, high 2 x 100e9 / ((200 - 16) x 2e5) = 5,434.8.
  const auto kv = kv_bytes_at_price_step(InferenceAssumptions{}, 200000);
  EXPECT_NEAR(kv.value.value(), 1666.6667, 1e-3);
  EXPECT_NEAR(kv.low.value(), 416.6667, 1e-3);
  EXPECT_NEAR(kv.high.value(), 5434.7826, 1e-3);
  EXPECT_EQ(error_field([] { kv_bytes_at_price_step(50e9, FlopsPerByte(300), 0); }), "threshold_tokens");
  EXPECT_EQ(error_field([] { kv_bytes_at_price_step(-1, FlopsPerByte(300), 200000); }), "--active-params");
}

TEST(PriceInference, GeminiOnePointFiveProPhases) {
  // Step at 128,000: kv = 1e11 / (300 x 128,000) = 2,604.2 bytes per token.
  // r = 5.00 / 1.25 = 4: decode runs at 1/4 of the compute roofline and fetches
  // 4 x 1e11 / 300 = 1.3333e9 bytes per output token; with S = 4,096 the KV takes
  // 4,096 x 2,604.2 = 1.0667e7 of them, so B = 500e9 / (1.3333e9 - 1.0667e7) = 378.02.
  const PriceSheet s = load_price_sheet("gemini-1.5-pro");
  const Deployment d = infer_deploy("llama-3.1-70b", "h100-sxm", 8);
  const PriceInference p = infer_prices(s, InferenceAssumptions{}, d);
  ASSERT_TRUE(p.kv_from_step);
  EXPECT_NEAR(p.kv_bytes_per_token.value.value(), 2604.1667, 1e-3);
  EXPECT_DOUBLE_EQ(p.phases.output_to_input_ratio, 4.0);
  EXPECT_TRUE(p.phases.output_costs_more);
  EXPECT_DOUBLE_EQ(p.phases.decode_fraction_of_compute_roofline.value, 0.25);  // a = 0: 1 / r
  EXPECT_NEAR(p.phases.decode_bytes_per_output_token.value.value(), 1.3333333e9, 1.3333333e9 * 1e-6);
  ASSERT_TRUE(p.phases.implied_decode_batch);
  EXPECT_NEAR(p.phases.implied_decode_batch->value, 378.024, 378.024 * 1e-5);
  EXPECT_LE(p.phases.implied_decode_batch->low, 378.024);
  EXPECT_GE(p.phases.implied_decode_batch->high, 378.024);
}

TEST(PriceInference, OutputTokensCostMoreThanInputTokens) {
  // The lecture (1:41:38, 1:45:00): output is "three or five times more expensive" than
  // input, because decode is memory-bound and prefill compute-bound. A summary of the
  // lecture in the seeds says the opposite ("Pre-fill is 5x more expensive than decode");
  // every sheet refutes it: input / output < 1, nowhere near 5.
  const double summary_prefill_over_decode = 5.0;
  for (const auto& n : builtin_price_sheet_names()) {
    const PriceSheet s = load_price_sheet(n);
    const PhaseInference ph = infer_phases(s.input, s.output, InferenceAssumptions{}, std::nullopt);
    EXPECT_TRUE(ph.output_costs_more) << n;
    EXPECT_GE(ph.output_to_input_ratio, 3.0) << n;  // 3x (Gemini 1.5 launch) to 8.3x (2.5 Flash)
    const double observed_prefill_over_decode = s.input / s.output;  // <= 1/3
    EXPECT_LT(observed_prefill_over_decode, 1.0) << n;
    // The summary's 5x is off by more than 10x on every sheet (5 / (1/3) = 15).
    EXPECT_GT(summary_prefill_over_decode / observed_prefill_over_decode, 10.0) << n;
  }
  // The verdict flips when the prices do: a sheet with input dearer than output is flagged.
  const PhaseInference flipped = infer_phases(usd_per_million_tokens(5), usd_per_million_tokens(1), InferenceAssumptions{}, std::nullopt);
  EXPECT_FALSE(flipped.output_costs_more);
  EXPECT_DOUBLE_EQ(flipped.decode_fraction_of_compute_roofline.value, 5.0);
}

TEST(PriceInference, CacheReadIsAFetchNotARecompute) {
  // Gemini 1.5 Pro: q = 0.3125 / 1.25 = 0.25. With kv from the 128K step and attention
  // FLOPs dropped (a = 0), the HBM fetch costs kv (F/W) / (2 N) = 1 / S* = 1 / 128,000 =
  // 7.8125e-6 of a recompute, whatever N and F/W; the read price matches a fetch at
  // 7.8125e-6 / 0.25 = 3.125e-5 of HBM bandwidth: 3.35e12 x 3.125e-5 = 104.7 MB/s per H100.
  const PriceSheet s = load_price_sheet("gemini-1.5-pro");
  InferenceAssumptions a;
  a.attention_flops_per_kv_byte = {FlopsPerByte(0), FlopsPerByte(0), FlopsPerByte(0)};
  const CacheReadInference c = infer_cache_read(s.input, *s.cache.read, a, 128000, terabytes_per_second(3.35));
  EXPECT_DOUBLE_EQ(c.read_to_input_ratio, 0.25);
  EXPECT_NEAR(c.hbm_fetch_to_recompute_cost.value, 7.8125e-6, 1e-15);
  EXPECT_NEAR(c.hbm_fetch_to_recompute_cost.low, 7.8125e-6, 1e-15);
  EXPECT_NEAR(c.hbm_fetch_to_recompute_cost.high, 7.8125e-6, 1e-15);
  EXPECT_NEAR(c.implied_fetch_fraction_of_hbm.value, 3.125e-5, 1e-14);
  EXPECT_NEAR(to_gb_per_s(c.implied_fetch_bandwidth_per_chip.value), 0.1046875, 1e-9);
  // Without a step, kv comes from the assumption: Opus 4.6, q = 0.1, kv 1,667:
  // 1,667 x 300 / (1e11 x 0.1) = 5.001e-5 of HBM bandwidth (a = 0 at the central value).
  const PriceSheet o = load_price_sheet("claude-opus-4.6");
  const CacheReadInference co = infer_cache_read(o.input, *o.cache.read, InferenceAssumptions{}, std::nullopt, terabytes_per_second(3.35));
  EXPECT_NEAR(co.implied_fetch_fraction_of_hbm.value, 5.001e-5, 5.001e-5 * 1e-9);
}

TEST(PriceInference, StoragePriceFromAWritePremium) {
  // Opus 4.6: 5-minute write $6.25 vs input $5.00: $1.25 per 1M tokens for 300 s =
  // $15 per 1M tokens per hour; 1-hour write $10: $5 per 1M tokens per hour.
  const PriceSheet s = load_price_sheet("claude-opus-4.6");
  EXPECT_NEAR(to_usd_per_mtok_per_hour(*storage_price_from_write(s.input, s.cache.writes[0])), 15.0, 1e-9);
  EXPECT_NEAR(to_usd_per_mtok_per_hour(*storage_price_from_write(s.input, s.cache.writes[1])), 5.0, 1e-9);
  EXPECT_FALSE(storage_price_from_write(s.input, CacheWrite{seconds(300), s.input}));
}

TEST(PriceInference, MemoryTiersOfAnH100Node) {
  // h100-sxm's catalog entry: HBM 80 GB at 3.35 TB/s (sweep 23.9 ms), host DDR5 250 GB at
  // 76.8 GB/s per GPU (3.26 s), NVMe 3,840 GB at 7 GB/s (548.6 s); chalk adds an assumed
  // 20 TB HDD at 0.27 GB/s (74,074 s). HBM costs $2.35 / 80 GB = $0.029375 per GB-hour.
  const SystemSpec h100 = load_system("h100-sxm");
  const auto tiers = memory_tiers(h100, h100.price_per_chip, TierCostAssumptions{});
  ASSERT_EQ(tiers.size(), 4u);
  EXPECT_EQ(tiers[0].kind, TierKind::hbm);
  EXPECT_NEAR(to_ms(tiers[0].sweep_time), 23.881, 1e-3);
  EXPECT_EQ(tiers[1].kind, TierKind::dram);
  EXPECT_NEAR(tiers[1].sweep_time.value(), 3.2552, 1e-4);
  EXPECT_EQ(tiers[2].kind, TierKind::flash);
  EXPECT_NEAR(tiers[2].sweep_time.value(), 548.571, 1e-3);
  EXPECT_EQ(tiers[3].kind, TierKind::disk);
  EXPECT_TRUE(tiers[3].assumed);
  EXPECT_NEAR(to_usd_per_gb_hour(tiers[0].cost->value), 0.029375, 1e-12);
}

TEST(PriceInference, FiveMinuteCacheIsHbmOneHourIsDdrOrFlash) {
  // Lecture 1:59:40: "the five minutes is HBM and the hour is DDR"; 2:03:30: flash.
  // Opus 4.6 on an H100 node, kv 1,667 (no step): the 5-minute premium, $15 / 1M tokens
  // per hour, is $15 / 1.667 GB = $9.00 per GB-hour, above HBM's $0.029: HBM fits by
  // cost. By duration, 300 s reads the DDR (3.3 s) but not the flash (549 s) once; 3,600 s
  // reads the flash: 5 min -> host DDR5, 1 h -> NVMe flash. HBM breaks even at
  // 15e-6 / 2.9375e-11 = 510,638 bytes per token.
  const PriceSheet s = load_price_sheet("claude-opus-4.6");
  const PriceInference p = infer_prices(s, InferenceAssumptions{}, infer_deploy("llama-3.1-70b", "h100-sxm", 8));
  ASSERT_EQ(p.storage.size(), 2u);
  const auto& five = p.storage[0];
  const auto& hour = p.storage[1];
  EXPECT_EQ(five.basis, "5-min cache write premium");
  EXPECT_EQ(five.tier_by_cost, "HBM");
  EXPECT_EQ(five.tier_by_duration, "host DDR5");
  EXPECT_EQ(hour.tier_by_duration, "local NVMe flash");
  EXPECT_EQ(hour.tier_by_cost, "HBM");
  EXPECT_NEAR(to_usd_per_gb_hour(five.price_per_byte.value), 8.9982, 1e-4);
  EXPECT_NEAR(five.tiers[0].breakeven_kv->value.value(), 510638.3, 0.1);
  // A price below every tier's cost places it nowhere by cost.
  const auto tiers = memory_tiers(load_system("h100-sxm"), usd_per_hour(2.35), TierCostAssumptions{});
  const auto cheap = infer_storage_tier("x", usd_per_mtok_per_hour(1e-9), hours(1), InferenceAssumptions{}.kv_bytes_per_token, tiers);
  EXPECT_EQ(cheap.tier_by_cost, "");
}

TEST(PriceInference, ContextCeilingFromBandwidth) {
  // Gemini 1.5 Pro (kv 2,604.2) on 8 H100: W = 8 x 3.35e12 x 0.87 = 2.3316e13 B/s; in a
  // 20 ms step one sequence may read 4.6632e11 bytes: 4.6632e11 / 2,604.2 = 1.7907e8
  // tokens. Capacity: (8 x 80e9 x 0.9 - 500e9) / 2,604.2 = 2.9184e7 tokens.
  const PriceInference p = infer_prices(load_price_sheet("gemini-1.5-pro"), InferenceAssumptions{}, infer_deploy("llama-3.1-70b", "h100-sxm", 8));
  EXPECT_NEAR(p.ceiling.bandwidth_ceiling_tokens.value, 1.7906688e8, 1.79e8 * 1e-6);
  ASSERT_TRUE(p.ceiling.capacity_ceiling_tokens);
  EXPECT_NEAR(p.ceiling.capacity_ceiling_tokens->value, 2.9184e7, 2.9184e7 * 1e-6);
}

TEST(PriceInference, MultipleAsABatchInTheWeightBoundRegion) {
  // Llama 3.1 8B on one H100 at context 0: t_step(B) = max(B c, w) with c = 2 N / F_eff
  // per sequence and w = weight bytes / W_eff. From a compute-bound base B0 = 1024 the
  // cost per token is c; a 2x multiple needs w / B = 2 c, so B = floor(w / (2c)) (about
  // 5.2 ms / (2 x 20 us) = 127), and the step shrinks from 1024 c to w: a speedup of
  // 1024 c / w (about 3.9).
  const Deployment d = infer_deploy("llama-3.1-8b", "h100-sxm", 1);
  const double c = d.matmul_flops_per_token / d.flops_effective.value();
  const double w = d.weight_bytes_always.value() / d.hbm_effective.value();
  const MultipleInference m = infer_multiple(d, "priority", 2.0, 1024, 0);
  EXPECT_TRUE(m.reachable);
  EXPECT_DOUBLE_EQ(m.batch.value, std::floor(w / (2 * c)));
  EXPECT_NEAR(m.speedup.value, 1024 * c / w, 1024 * c / w * 1e-9);
  // A multiple batching cannot reach: batch 1 costs only w / c ~ 255x the base.
  const MultipleInference huge = infer_multiple(d, "fast", 1e6, 1024, 0);
  EXPECT_FALSE(huge.reachable);
  EXPECT_DOUBLE_EQ(huge.batch.value, 1.0);
  EXPECT_NEAR(huge.achieved_multiple, w / c, w / c * 1e-9);  // cost(1) / cost(1024) = w / c
}

TEST(PriceInference, MultipleIsTheLargestBatchAtThatCost) {
  // Property, for the Opus fast mode (6x) on DeepSeek-V3 / GB200 NVL72 at context 4,096:
  // cost(B) / cost(B0) >= 6 and cost(B + 1) / cost(B0) < 6, with cost = t_step / B.
  const Deployment d = infer_deploy("deepseek-v3", "gb200-nvl72", 72);
  const int64_t b0 = cost_optimal_decode_batch(d, 4096);
  const MultipleInference m = infer_multiple(d, "fast", 6.0, b0, 4096, 2.5);
  ASSERT_TRUE(m.reachable);
  auto cost = [&](int64_t b) { return decode_step(d, b, 4096).t_step.value() / static_cast<double>(b); };
  const auto b = static_cast<int64_t>(m.batch.value);
  EXPECT_GE(cost(b) / cost(b0), 6.0);
  EXPECT_LT(cost(b + 1) / cost(b0), 6.0);
  EXPECT_GT(m.speedup.value, 1.0);
  EXPECT_LE(m.batch.low, m.batch.value);
  EXPECT_GE(m.batch.high, m.batch.value);
  ASSERT_TRUE(m.cost_multiple_for_stated_speedup);
  EXPECT_GT(*m.cost_multiple_for_stated_speedup, 1.0);
}

TEST(PriceInference, EveryBuiltInSheetYieldsFiniteNonNegativeFigures) {
  const std::vector<Deployment> deployments = {infer_deploy("deepseek-v3", "gb200-nvl72", 72), infer_deploy("llama-3.1-70b", "h100-sxm", 8)};
  for (const auto& d : deployments) {
    for (const auto& n : builtin_price_sheet_names()) {
      const PriceInference p = infer_prices(load_price_sheet(n), InferenceAssumptions{}, d);
      const auto figures = inference_figures(p);
      EXPECT_GE(figures.size(), 8u) << n;
      for (const auto& f : figures) {
        const std::string what = n + " on " + d.system.name + ": (" + f.inference + ") " + f.subject + " " + f.quantity;
        for (double v : {f.figure.value, f.figure.low, f.figure.high}) {
          EXPECT_TRUE(std::isfinite(v)) << what;
          EXPECT_GE(v, 0.0) << what;
        }
        EXPECT_LE(f.figure.low, f.figure.value * (1 + 1e-12)) << what;
        EXPECT_GE(f.figure.high, f.figure.value * (1 - 1e-12)) << what;
      }
      EXPECT_TRUE(p.phases.implied_decode_batch) << n;
    }
  }
}

TEST(PriceInference, EveryFigureHasWordsForPeople) {
  // The text table prints quantity_words; a key without words would print snake_case.
  // Every built-in sheet on one deployment reaches every branch of inference_figures that
  // its sheets exercise (price steps, cache tiers, service tiers).
  const Deployment d = infer_deploy("llama-3.1-70b", "h100-sxm", 8);
  for (const auto& n : builtin_price_sheet_names()) {
    for (const auto& f : inference_figures(infer_prices(load_price_sheet(n), InferenceAssumptions{}, d))) {
      const std::string w = quantity_words(f.quantity);
      EXPECT_NE(w, f.quantity) << n << ": " << f.quantity << " has no words";
      EXPECT_EQ(w.find('_'), std::string::npos) << w;
    }
  }
  EXPECT_EQ(quantity_words("kv_bytes_per_token"), "KV bytes per token");
  EXPECT_EQ(quantity_words("output_to_input_price_ratio"), "output / input price");
  EXPECT_EQ(quantity_words("not_a_figure"), "not_a_figure");  // unknown: the key itself
}

TEST(PriceInference, BadAssumptionsNameTheirFlag) {
  const PriceSheet s = load_price_sheet("gemini-1.5-pro");
  const Deployment d = infer_deploy("llama-3.1-70b", "h100-sxm", 8);
  InferenceAssumptions a;
  a.active_params = {50e9, 60e9, 100e9};  // low above value
  EXPECT_EQ(error_field([&] { infer_prices(s, a, d); }), "--active-params");
  a = InferenceAssumptions{};
  a.flops_per_byte = {FlopsPerByte(0), FlopsPerByte(0), FlopsPerByte(0)};
  EXPECT_EQ(error_field([&] { infer_prices(s, a, d); }), "--flops-per-byte");
  a = InferenceAssumptions{};
  a.step_budget = seconds(-1);
  EXPECT_EQ(error_field([&] { infer_prices(s, a, d); }), "--step-budget-ms");
  a = InferenceAssumptions{};
  a.tier_costs.hbm_share_of_chip_price = {1.5, 1.5, 1.5};
  EXPECT_EQ(error_field([&] { infer_prices(s, a, d); }), "--hbm-share-of-chip-price");
}

// --active-params 1e308 made 2 N_active = inf and printed nan; --base-batch 2^63-1
// overflowed 2 x B0 and was reported as "--batch ... got -2". Each estimate now has a
// ceiling and the error names the flag the user wrote.
TEST(PriceInferenceErrors, HugeAssumptionsNameTheirFlag) {
  InferenceAssumptions a;
  a.active_params = {1e308, 1e308, 1e308};
  EXPECT_EQ(error_field([&] { validate(a); }), "--active-params");
  a = InferenceAssumptions{};
  a.active_params = {1e15, 1e15, 1e15};  // the ceiling itself is accepted
  EXPECT_EQ(error_field([&] { validate(a); }), "");
  a.base_batch = INT64_MAX;
  EXPECT_EQ(error_field([&] { validate(a); }), "--base-batch");
  a.base_batch = kMaxBaseBatch;
  EXPECT_EQ(error_field([&] { validate(a); }), "");
  const Deployment d = infer_deploy("llama-3.1-8b", "h100-sxm", 1);
  EXPECT_EQ(error_field([&] { infer_multiple(d, "fast", 2.0, INT64_MAX, 4096, std::nullopt); }), "--base-batch");
}

}  // namespace
}  // namespace chalk
