// The forward direction (a deployment's prices) and the round trip through the inverse.
#include <cmath>

#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/prices/prices.h"

namespace chalk {
namespace {

Deployment deploy(const std::string& model, const std::string& system, int64_t chips) {
  DeploymentOptions o;
  o.n_chips = chips;
  return make_deployment(load_model(model), load_system(system), o);
}

double mtok(UsdPerToken p) { return to_usd_per_mtok(p); }

TEST(PriceForward, PrefillFillsTheDataParallelLayout) {
  // DeepSeek-V3 on 32 H800 with attention data parallel (TP1: 32 groups), $2 per chip-hour.
  // Pricing input by one prompt left 31 of the 32 attention ranks idle while all 32 chips
  // were billed: input came out 7x dearer than output. A full layout prefills 32 prompts.
  DeploymentOptions o;
  o.n_chips = 32;
  o.price_per_chip = usd_per_hour(2.0);
  o.mechanisms.enabled = true;
  o.mechanisms.layout.tp_attention = 1;
  const Deployment d = make_deployment(load_model("deepseek-v3"), load_system("h800-sxm"), o);
  ForwardAssumptions a;
  const ForwardPrices full = forward_prices(d, a);
  EXPECT_EQ(full.prefill_batch, 32);
  EXPECT_EQ(full.prefill.batch, 32);
  a.prefill_batch = 1;
  const ForwardPrices one = forward_prices(d, a);
  EXPECT_EQ(one.prefill_batch, 1);
  // One prompt: the busiest of 32 ranks does all the attention work of the step.
  EXPECT_GT(one.input / full.input, 5.0);
  // Input now costs less than output (DeepSeek's own prices: $0.27 in, $1.10 out).
  EXPECT_LT(full.input / full.output, 1.0);
  // And no cheaper than the compute floor at peak: 32 x $2/h x (2 N_active + attention over
  // 2,048.5 tokens on average) / (32 x 1,978.9e12 FLOP/s fp8), x markup 4.
  const double per_token_flops = full.prefill.flops.value() / (32.0 * 4096);
  const double floor_usd = 2.0 / 3600 * per_token_flops / 1978.9e12 * 4;
  EXPECT_GT(full.input.value(), floor_usd);
  // Input is the step's cost over its 32 x 4,096 tokens: 32 x $2/h x t_step / 131,072 x 4.
  EXPECT_NEAR(full.input.value(), 32 * 2.0 / 3600 * full.prefill.t_step.value() / (32 * 4096.0) * 4, full.input.value() * 1e-12);
  // Without mechanisms the roofline shares any work evenly: one prompt fills it.
  EXPECT_EQ(forward_prices(deploy("llama-3.1-70b", "h100-sxm", 8), ForwardAssumptions{}).prefill_batch, 1);
  // The flag's range.
  a.prefill_batch = -1;
  EXPECT_THROW(forward_prices(d, a), InputError);
}

TEST(PriceForward, WeightsThatDoNotFitHaveNoPrice) {
  // DeepSeek-V3's 673 GB of weights on one 80 GB H100 cannot run: no price, an InputError
  // naming --chips, rather than prices of a machine that does not exist.
  EXPECT_THROW(forward_prices(deploy("deepseek-v3", "h100-sxm", 1), ForwardAssumptions{}), InputError);
  // 9 H100 hold 720 GB, less the 10% reserve 648 GB < 673 GB: still none; 10 hold 800 - 80 = 720 GB.
  EXPECT_THROW(forward_prices(deploy("deepseek-v3", "h100-sxm", 9), ForwardAssumptions{}), InputError);
  EXPECT_NO_THROW(forward_prices(deploy("deepseek-v3", "h100-sxm", 10), ForwardAssumptions{}));
}

TEST(PriceForward, LlamaSeventyBOnEightH100) {
  // 8 x H100 at $2.35 per chip-hour = $5.222e-3 per second; F_eff = 8 x 989.4e12 x 0.803 =
  // 6.356e15 FLOP/s; W_eff = 8 x 3.35e12 x 0.87 = 2.3316e13 B/s; markup 1 / (0.5 x 0.5) = 4.
  // Input (prefill, compute-bound): ~ 2 N / F_eff per token = 139.0e9 / 6.356e15 s, so
  // $5.222e-3 x 2.187e-5 = $0.1142 per 1M tokens at cost, $0.457 priced; causal attention
  // over 4,096 tokens adds 3.9% (2.62e6 FLOP per attended token x 2,048.5 / 139.0e9), and
  // the LM head runs on the last token only: 2 x 1.0507e9 x 4,095 / 4,096 = 2.10e9 fewer
  // FLOPs per token, -1.5%: $0.457 x (139.0 + 5.37 - 2.10) / 139.0 = $0.4678.
  // Output (decode at the largest batch that fits, 324, context 4,096, KV-bound): t_step =
  // (141.1e9 + 324 x 4,096 x 327,680 B) / 2.3316e13 = 24.6 ms; $5.222e-3 x 24.6 ms / 324
  // = $0.397 per 1M tokens at cost, $1.59 priced.
  const Deployment d = deploy("llama-3.1-70b", "h100-sxm", 8);
  const ForwardPrices f = forward_prices(d, ForwardAssumptions{});
  EXPECT_DOUBLE_EQ(f.markup, 4.0);
  EXPECT_EQ(f.decode_batch, 324);
  EXPECT_EQ(f.prefill.bound, Bound::compute);
  EXPECT_EQ(f.decode.bound, Bound::kv_cache);
  EXPECT_NEAR(mtok(f.input), 0.4678, 0.4678 * 0.002);
  EXPECT_NEAR(mtok(f.output), 1.587, 1.587 * 0.01);
  EXPECT_GT(f.output / f.input, 1.0);
  // Holding a token's KV in HBM: $2.35 / 80 GB per hour x 327,680 B x 4 = $38.5 per 1M
  // tokens per hour (0.029375 x 327.68 x 4 = 38.50).
  EXPECT_NEAR(to_usd_per_mtok_per_hour(f.storage_hbm), 38.50, 0.01);
}

TEST(PriceForward, KvComputeCrossoverMatchesTheClosedForm) {
  // Per decode token: compute (2N + a S) / F, KV fetch S kv / W; equal at
  // S* = 2N / (kv (F/W - a)), a per KV byte; here a per token = a x kv = 2.62e6 FLOPs.
  // Llama 3.1 70B on 8 H100: 139.0e9 / (327,680 x 272.6 - 2.62e6) = 1,603.
  const Deployment d = deploy("llama-3.1-70b", "h100-sxm", 8);
  double kv = 0, a = 0;
  for (const auto& g : d.attention) {
    kv += g.layers * g.kv_bytes_per_token;
    a += g.layers * g.decode_flops_per_attended;
  }
  const double fw = d.flops_effective.value() / d.hbm_effective.value();
  const double closed = d.matmul_flops_per_token / (kv * fw - a);
  const auto s = kv_compute_crossover_context(d);
  ASSERT_TRUE(s);
  EXPECT_NEAR(static_cast<double>(*s), closed, 1.0);
  EXPECT_NEAR(closed, 1603, 2);
}

TEST(PriceForward, OutputCostsMoreThanInputOnRealDeployments) {
  // Decode is the memory-bound (or, at S = 4,096, attention-heavier) phase: whatever the
  // model and chip, an output token costs more than an input token.
  struct Case {
    const char *model, *system;
    int64_t chips;
  };
  for (const Case c : {Case{"llama-3.1-70b", "h100-sxm", 8}, Case{"llama-3.1-8b", "h100-sxm", 1}, Case{"deepseek-v3", "gb200-nvl72", 72},
                       Case{"qwen3-235b-a22b", "b200", 8}, Case{"mixtral-8x22b", "h200", 8}, Case{"gpt-oss-120b", "h100-sxm", 8}}) {
    const ForwardPrices f = forward_prices(deploy(c.model, c.system, c.chips), ForwardAssumptions{});
    EXPECT_GT(f.output / f.input, 1.0) << c.model << " on " << c.system;
  }
}

struct RoundTripCase {
  const char* model;
  const char* system;
  int64_t chips;
};

class PriceRoundTrip : public ::testing::TestWithParam<RoundTripCase> {};

TEST_P(PriceRoundTrip, InverseRecoversKvAndBounds) {
  // Forward prices of a known deployment, read back with the deployment's own N, F/W and
  // attention FLOPs per KV byte a (so the inverse's model is the forward's, bar rounding):
  // - KV bytes per token within 0.5%: S* is the first whole token where the KV fetch
  //   catches compute, so kv is off by at most ~1/S* (S* = 427 for Llama 3.1 8B: 0.23%).
  // - bytes per output token (weights/B + S kv) within 0.5%: the inverse's prefill
  //   attends S/2 tokens per query on average, the forward's (S+1)/2.
  // - the decode batch within 2%: weights over the difference of the two above.
  // - the bounds: prefill compute-bound, decode memory-bound or at its balance point
  //   (output dearer), and decode's fraction of the compute roofline within 0.5%.
  // - the tier: forward storage is priced at HBM's cost x markup, so HBM fits by cost and
  //   HBM's break-even KV is markup x kv exactly.
  // Measured: Llama 3.1 70B / 8 H100: kv -0.05%, bytes -0.003%, batch -0.14% (324);
  // 8B / 1 H100: -0.16%, -0.01%, -0.52% (104); Qwen3 32B / 8 H200: -0.02%, -0.003%, -0.22%
  // (884); Llama 3.1 405B / 72 GB200: -0.01%, +0.06%, -0.17% (630).
  const auto& c = GetParam();
  const Deployment d = deploy(c.model, c.system, c.chips);
  const ForwardPrices f = forward_prices(d, ForwardAssumptions{});
  ASSERT_TRUE(f.long_context_threshold_tokens);
  const PriceSheet sheet = to_price_sheet(f, d);

  InferenceAssumptions a;
  const double n = d.params.active_matmul();
  const double fw = d.flops_effective.value() / d.hbm_effective.value();
  const Bytes w = f.decode.weight_bytes_read;
  const double s = static_cast<double>(f.assumptions.decode_context_tokens);
  double kv_sum = 0, attention = 0;
  for (const auto& g : d.attention) {
    kv_sum += g.layers * g.kv_bytes_per_token;
    attention += g.layers * g.decode_flops_per_attended;
  }
  const double att = attention / kv_sum;
  // GQA in bf16: a = 4 h d_h FLOPs / (2 g d_h x 2 bytes) = h / g, query heads per KV head
  // (Llama 3.1 8B 32/8, 70B 64/8, Qwen3 32B 64/8, 405B 128/8), not twice that.
  const auto& a0 = d.model.groups.front().attention;
  EXPECT_DOUBLE_EQ(att, static_cast<double>(a0.n_heads) / static_cast<double>(a0.n_kv_heads));
  a.attention_flops_per_kv_byte = {FlopsPerByte(att), FlopsPerByte(att), FlopsPerByte(att)};
  a.active_params = {n, n, n};
  // The forward prefill runs the LM head on the last prompt token only (roofline.h).
  a.head_params = d.params.lm_head > 0 ? d.params.lm_head : d.params.embedding;
  a.flops_per_byte = {FlopsPerByte(fw), FlopsPerByte(fw), FlopsPerByte(fw)};
  a.weight_bytes = {w, w, w};
  a.decode_context_tokens = {s, s, s};
  const PriceInference p = infer_prices(sheet, a, d);

  const double kv = f.kv_bytes_per_token.value();
  ASSERT_TRUE(p.kv_from_step);
  EXPECT_NEAR(p.kv_bytes_per_token.value.value(), kv, kv * 0.005);

  const double bytes_per_token = w.value() / static_cast<double>(f.decode_batch) + s * kv;
  EXPECT_NEAR(p.phases.decode_bytes_per_output_token.value.value(), bytes_per_token, bytes_per_token * 0.005);
  ASSERT_TRUE(p.phases.implied_decode_batch);
  EXPECT_NEAR(p.phases.implied_decode_batch->value, static_cast<double>(f.decode_batch), f.decode_batch * 0.02);

  EXPECT_EQ(f.prefill.bound, Bound::compute);
  // Decode at or below its balance point: the cost-optimal batch is the smallest that is
  // compute-bound, so memory time is within one sequence's share of compute time.
  EXPECT_GE(f.decode.t_memory / f.decode.t_compute, 1.0 - 2.0 / static_cast<double>(f.decode_batch));
  EXPECT_TRUE(p.phases.output_costs_more);
  const double forward_fraction = f.decode.t_compute / f.decode.t_step;
  EXPECT_NEAR(p.phases.decode_fraction_of_compute_roofline.value, forward_fraction, forward_fraction * 0.005);

  ASSERT_EQ(p.storage.size(), 1u);
  EXPECT_EQ(p.storage[0].tier_by_cost, "HBM");
  EXPECT_NEAR(p.storage[0].tiers[0].breakeven_kv->value.value() / f.markup, kv, kv * 1e-9);
}

TEST(PriceRoundTripLecture, DroppingAttentionFlopsUnderstatesKvByAOverFw) {
  // With the lecture's a = 0 (1:51:23), the step gives kv' = 2N / (S* F/W) where the truth
  // is 2N / (S* (F/W - a)): kv' / kv = 1 - a / (F/W). Llama 3.1 70B on 8 H100: a = 32,768
  // FLOPs / 4,096 bytes = 8 per byte; F/W = 6.356e15 / 2.3316e13 = 272.6; 1 - 8 / 272.6 =
  // 0.9707, a 2.9% understatement.
  const Deployment d = deploy("llama-3.1-70b", "h100-sxm", 8);
  const ForwardPrices f = forward_prices(d, ForwardAssumptions{});
  const double fw = d.flops_effective.value() / d.hbm_effective.value();
  const double n = d.params.active_matmul();
  const BytesPerToken kv = kv_bytes_at_price_step(n, FlopsPerByte(fw), *f.long_context_threshold_tokens);
  EXPECT_NEAR(kv.value() / f.kv_bytes_per_token.value(), 1 - 8 / fw, 0.003);
  EXPECT_NEAR(1 - 8 / fw, 0.9707, 1e-3);
}

INSTANTIATE_TEST_SUITE_P(Deployments, PriceRoundTrip,
                         ::testing::Values(RoundTripCase{"llama-3.1-70b", "h100-sxm", 8}, RoundTripCase{"llama-3.1-8b", "h100-sxm", 1},
                                           RoundTripCase{"qwen3-32b", "h200", 8}, RoundTripCase{"llama-3.1-405b", "gb200-nvl72", 72}));

TEST(PriceForward, ErrorsNameTheFlag) {
  auto field = [](const std::function<void()>& fn) -> std::string {
    try {
      fn();
    } catch (const InputError& e) {
      return e.field();
    }
    return "";
  };
  const Deployment d = deploy("llama-3.1-70b", "h100-sxm", 8);
  ForwardAssumptions a;
  a.utilization = 0;
  EXPECT_EQ(field([&] { forward_prices(d, a); }), "--utilization");
  a = ForwardAssumptions{};
  a.gross_margin = 1.0;
  EXPECT_EQ(field([&] { forward_prices(d, a); }), "--margin");
  a = ForwardAssumptions{};
  a.prompt_tokens = 0;
  EXPECT_EQ(field([&] { forward_prices(d, a); }), "--prompt");
  const Deployment unpriced = deploy("llama-3.1-70b", "gb300-nvl72", 8);
  EXPECT_EQ(field([&] { forward_prices(unpriced, ForwardAssumptions{}); }), "--price-usd-per-chip-hour");
}

}  // namespace
}  // namespace chalk
