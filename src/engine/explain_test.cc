// Explanations: each figure's result is the figure the step reports, and the inputs are
// the values a hand derivation uses.
#include "chalk/engine/explain.h"

#include <gtest/gtest.h>

#include <map>

#include "chalk/io/io.h"
#include "chalk_testing/explanations.h"

namespace chalk {
namespace {

using testing::explained_input;
using testing::explanations_by_key;

Deployment llama70b_on_8_h100(bool mechanisms) {
  DeploymentOptions o;
  o.n_chips = 8;
  o.mechanisms.enabled = mechanisms;
  return make_deployment(load_model("llama-3.1-70b"), load_system("h100-sxm"), o);
}

TEST(ExplainDecode, RooflineValuesAreTheHandDerivation) {
  const Deployment d = llama70b_on_8_h100(false);
  const auto x = explanations_by_key(explain_decode(d, 64, 4096));
  // KV bytes per token, llama-3.1-70b in bf16: 2 (K, V) x 80 layers x 8 KV heads x 128 x 2 bytes = 327,680.
  EXPECT_DOUBLE_EQ(x.at("kv_bytes_per_token").result, 327680.0);
  // T_kv = B S KV/token / (n W eff) = 64 x 4096 x 327,680 / (8 x 3.35e12 x eff_hbm).
  const double eff_hbm = explained_input(x.at("t_kv_ms"), "eff_hbm");
  EXPECT_NEAR(x.at("t_kv_ms").result, 64.0 * 4096 * 327680 / (8 * 3.35e12 * eff_hbm) * 1e3, 1e-9);
  EXPECT_DOUBLE_EQ(explained_input(x.at("t_kv_ms"), "W"), 3.35);  // H100 SXM datasheet, TB/s
  EXPECT_DOUBLE_EQ(explained_input(x.at("t_compute_ms"), "F"), 989.4);  // dense bf16 TFLOP/s
  // The roofline step is max(T_compute, T_weights + T_kv): at batch 64 memory-bound.
  const DecodeStep r = decode_step(d, 64, 4096);
  EXPECT_DOUBLE_EQ(x.at("t_step_roofline_ms").result, to_ms(r.t_step));
  EXPECT_DOUBLE_EQ(x.at("t_step_roofline_ms").result, to_ms(r.t_weights) + to_ms(r.t_kv));
  EXPECT_DOUBLE_EQ(x.at("t_step_ms").result, to_ms(r.t_step));
  EXPECT_DOUBLE_EQ(x.at("tok_per_s").result, 64.0 / r.t_step.value());
  // Cost: n price T_step / B, price per chip-hour / 3600.
  const double price_h = explained_input(x.at("cost_usd_per_mtok"), "price");
  EXPECT_NEAR(x.at("cost_usd_per_mtok").result, 8 * price_h / 3600 * r.t_step.value() / 64 * 1e6, 1e-9);
  EXPECT_TRUE(x.at("t_compute_ms").note.empty());
}

TEST(ExplainDecode, EngineStepFiguresAreTheReportedOnesWithTheRooflineBeside) {
  const Deployment d = llama70b_on_8_h100(true);
  const auto x = explanations_by_key(explain_decode(d, 64, 4096));
  const DecodeStep r = decode_step(d, 64, 4096);
  EXPECT_DOUBLE_EQ(x.at("t_compute_ms").result, to_ms(r.t_compute));
  EXPECT_DOUBLE_EQ(x.at("t_step_ms").result, to_ms(r.t_step));
  EXPECT_NEAR(x.at("t_step_ms").result, to_ms(r.t_operations) + to_ms(r.t_comm) + to_ms(r.t_overhead), 1e-9);
  EXPECT_FALSE(x.at("t_compute_ms").note.empty());  // says the engine step's figure differs from the formula's
  EXPECT_NE(x.at("t_step_ms").substituted.find("governed by"), std::string::npos);
}

TEST(ExplainDecode, MoeWeightFetchAlgebraGivesTheBusiestChipsFigure) {
  // DeepSeek-V3 at batch 1 on 8 GB200 (README's first command): 8 experts touched per layer
  // do not split evenly over 8 chips, so the chip holding the most sets T_weights and the
  // algebra is in its bytes: bytes_chip / (W eff_hbm) = the figure (review 4 M9: it showed
  // 37.67 GB / (8 x 8 TB/s x 0.92) = 0.640 ms beside 1.503 ms).
  DeploymentOptions o;
  o.n_chips = 8;
  const Deployment d = make_deployment(load_model("deepseek-v3"), load_system("gb200-nvl72"), o);
  const auto x = explanations_by_key(explain_decode(d, 1, 4096));
  const auto& w = x.at("t_weights_ms");
  const double chip_gb = explained_input(w, "bytes_chip"), W = explained_input(w, "W"), eff = explained_input(w, "eff_hbm");
  EXPECT_NEAR(chip_gb / (W * eff), w.result, 1e-9);  // GB / (TB/s) = ms
  EXPECT_GT(chip_gb, explained_input(w, "bytes_w") / 8 * 2);  // well above the even split
  EXPECT_NE(w.substituted.find(" GB / (8 TB/s x 0.92) = 1.503 ms"), std::string::npos) << w.substituted;
  // A dense model splits evenly: no busiest-chip inputs, the n W form.
  const auto dense = explanations_by_key(explain_decode(llama70b_on_8_h100(false), 64, 4096));
  for (const auto& in : dense.at("t_weights_ms").inputs) EXPECT_NE(in.symbol, "bytes_chip");
}

TEST(ExplainPrefill, ComputeIsTwoNActivePerTokenPlusAttention) {
  const Deployment d = llama70b_on_8_h100(false);
  const auto x = explanations_by_key(explain_prefill(d, 1, 8192));
  const PrefillStep r = prefill_step(d, 1, 8192);
  const double n_active = explained_input(x.at("t_compute_ms"), "N_active") * 1e9;
  const double attention = explained_input(x.at("t_compute_ms"), "attention") * 1e12;
  const double n_head = explained_input(x.at("t_compute_ms"), "N_head") * 1e9;
  EXPECT_NEAR(n_head, 128256.0 * 8192, 1e-3);  // Llama 3.1 70B's untied head, on the last token only
  EXPECT_NEAR(2 * n_active * 8192 - 2 * n_head * 8191 + attention, r.flops.value(), 1e-6 * r.flops.value());
  EXPECT_GT(attention, 0);
  EXPECT_DOUBLE_EQ(x.at("ttft_ms").result, to_ms(r.ttft));
  EXPECT_DOUBLE_EQ(x.at("tok_per_s").result, 8192 / r.ttft.value());
}

}  // namespace
}  // namespace chalk
