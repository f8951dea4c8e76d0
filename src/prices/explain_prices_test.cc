// Price inferences explained: each result is the figure `chalk prices infer` reports, and
// the inputs reproduce it by hand.
#include "chalk/prices/explain.h"

#include <gtest/gtest.h>

#include <cmath>

#include "chalk/io/io.h"
#include "chalk/prices/price_sheet.h"
#include "chalk_testing/explanations.h"

namespace chalk {
namespace {

using testing::explained_input;
using testing::explanations_by_key;

PriceInference gemini_inference(const InferenceAssumptions& a) {
  DeploymentOptions o;
  o.n_chips = 8;
  const Deployment d = make_deployment(load_model("llama-3.1-70b"), load_system("h100-sxm"), o);
  return infer_prices(load_price_sheet("gemini-1.5-pro"), a, d);
}

TEST(ExplainPrices, GeminiStepAndRatioByHand) {
  const InferenceAssumptions a;  // the lecture's: N_active 50e9, F/W 300, a = 0, S 4096
  const PriceInference p = gemini_inference(a);
  const auto x = explanations_by_key(explain_price_inference(p, a));
  // Gemini 1.5 Pro's price steps at 128,000 tokens: kv = 2 x 50e9 / (128,000 x 300) = 2,604.17 B.
  EXPECT_NEAR(x.at("kv_bytes_per_token").result, 2 * 50e9 / (128000.0 * 300), 1e-9);
  EXPECT_EQ(explained_input(x.at("kv_bytes_per_token"), "S*"), 128000);
  // Output $5 against input $1.25 per Mtok below the step: r = 4; with a = 0 a decoded token
  // may fetch r x 2 N / (F/W) = 4 x 1e11 / 300 = 1.333e9 B, and decode reaches 1/r = 25% of
  // the compute roofline.
  EXPECT_DOUBLE_EQ(x.at("output_to_input_price_ratio").result, 4.0);
  EXPECT_NEAR(x.at("decode_bytes_per_output_token").result, 4 * 1e11 / 300, 1e-3);
  EXPECT_NEAR(x.at("decode_fraction_of_compute_roofline").result, 0.25, 1e-12);
}

TEST(ExplainPrices, ResultsAreTheReportedFigures) {
  InferenceAssumptions a;
  a.attention_flops_per_kv_byte = {FlopsPerByte(8), FlopsPerByte(0), FlopsPerByte(16)};  // attention counted
  const PriceInference p = gemini_inference(a);
  const auto x = explanations_by_key(explain_price_inference(p, a));
  int checked = 0;
  for (const auto& f : inference_figures(p)) {
    if (!f.subject.empty() || !x.count(f.quantity)) continue;
    EXPECT_NEAR(x.at(f.quantity).result, f.figure.value, 1e-9 * std::abs(f.figure.value)) << f.quantity;
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

}  // namespace
}  // namespace chalk
