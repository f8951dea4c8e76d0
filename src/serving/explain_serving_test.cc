// Serving explanations: a sweep row's speed and cost, and the balance points, are the
// figures serving_sweep and balance_points report (what `chalk serving sweep|balance
// --json` prints), and their inputs reproduce them by hand.
#include <gtest/gtest.h>

#include <map>

#include "chalk/io/io.h"
#include "chalk_testing/explanations.h"
#include "chalk/serving/explain.h"

namespace chalk {
namespace {

using testing::explained_input;
using testing::explanations_by_key;

TEST(ExplainServing, CostPerMtokIsChipHourPriceTimesChipsOverTokensPerHour) {
  DeploymentOptions o;
  o.n_chips = 8;
  const Deployment d = make_deployment(load_model("llama-3.1-70b"), load_system("h100-sxm"), o);
  ASSERT_TRUE(d.price_per_chip.has_value());
  const auto pts = serving_sweep(d, {64}, {4096});
  const auto x = explanations_by_key(explain_serving_point(d, pts[0]));
  const DecodeStep& s = pts[0].step;
  // $/Mtok = price x n / (tok/s x 3600 / 1e6); the H100 rental price is the system's.
  const double price = explained_input(x.at("cost_usd_per_mtok"), "price");
  EXPECT_DOUBLE_EQ(price, to_usd_per_hour(*d.price_per_chip));
  EXPECT_NEAR(x.at("cost_usd_per_mtok").result, price * 8 / (s.tokens_per_s.value() * 3600) * 1e6, 1e-9);
  EXPECT_DOUBLE_EQ(x.at("cost_usd_per_mtok").result, to_usd_per_mtok(pts[0].cost->total));
  EXPECT_DOUBLE_EQ(explained_input(x.at("cost_usd_per_mtok"), "tok/h"), s.tokens_per_s.value() * 3600);
  // Per user: 1 / T_step; per chip: 64 / (8 T_step).
  EXPECT_DOUBLE_EQ(x.at("tok_per_s_per_user").result, 1.0 / s.t_step.value());
  EXPECT_NEAR(x.at("tok_per_s_per_chip").result, 64.0 / (8 * s.t_step.value()), 1e-9);
  // The terms' shares: n price T_term / B; compute + weights + KV + comm + overhead >= total
  // (the engine step's operations are each max(compute, memory), so terms overlap).
  EXPECT_NEAR(x.at("cost_kv_usd_per_mtok").result, 8 * price / 3600 * s.t_kv.value() / 64 * 1e6, 1e-9);
  EXPECT_DOUBLE_EQ(x.at("cost_weights_usd_per_mtok").result, to_usd_per_mtok(pts[0].cost->weights));
}

TEST(ExplainServing, WithoutAPriceOnlySpeedsAreExplained) {
  DeploymentOptions o;
  o.n_chips = 8;
  Deployment d = make_deployment(load_model("llama-3.1-70b"), load_system("h100-sxm"), o);
  d.price_per_chip.reset();
  const auto x = explanations_by_key(explain_serving_point(d, serving_sweep(d, {8}, {1024})[0]));
  EXPECT_EQ(x.count("cost_usd_per_mtok"), 0u);
  EXPECT_EQ(x.count("tok_per_s_per_user"), 1u);
}

TEST(ExplainServing, BalanceBatchIs295ForLlama8bBf16OnH100) {
  const Deployment d = make_deployment(load_model("llama-3.1-8b"), load_system("h100-sxm"), {});
  // At context 128 (below the 427 tokens beyond which one sequence's KV read outlasts its
  // compute) some batch is compute-bound; at 1024 none is, and nothing claims one.
  const BalancePoints b = balance_points(d, 128, 256);
  const auto x = explanations_by_key(explain_balance(d, b));
  // Lecture 15:53: B* = b_w F / (2 W) x N_read / N_active = 2 x 989.4 / (2 x 3.35) x 1.00003 = 295.4.
  EXPECT_NEAR(x.at("lecture_batch_peak").result, 295.4, 0.05);
  const auto& e = x.at("lecture_batch_peak");
  EXPECT_NEAR(explained_input(e, "N_read") * explained_input(e, "b_w") * explained_input(e, "F") / (2 * explained_input(e, "N_active") * explained_input(e, "W")),
              b.lecture_batch_peak, 1e-9 * b.lecture_batch_peak);
  EXPECT_DOUBLE_EQ(x.at("lecture_batch_effective").result, b.lecture_batch_effective);
  // Solved on the step: at the reported batch compute has caught up with weights + KV.
  ASSERT_TRUE(b.batch_with_kv.has_value());
  const auto& k = x.at("batch_with_kv");
  EXPECT_DOUBLE_EQ(k.result, static_cast<double>(*b.batch_with_kv));
  EXPECT_GE(explained_input(k, "T_compute"), explained_input(k, "T_weights") + explained_input(k, "T_kv") - 1e-12);
  EXPECT_NE(k.substituted.find("at B - 1"), std::string::npos);
  EXPECT_GT(k.result, 295.4);  // the KV read adds memory time the batch must outgrow
  // At 1024 tokens no batch is compute-bound, and the context past which none is gets explained
  // instead (review 6 M10). It lies between the two contexts above: some batch is compute-bound
  // at 128 tokens, none at 1024 (427 tokens; this comment once said 441).
  // At S one sequence's KV read takes at least its compute; at S - 1 less (the explanation says).
  const BalancePoints far = balance_points(d, 1024, 256);
  const auto y = explanations_by_key(explain_balance(d, far));
  EXPECT_EQ(y.count("batch_with_kv"), 0u);
  ASSERT_TRUE(far.context_never_compute_bound.has_value());
  const int64_t S = *far.context_never_compute_bound;
  const auto& never = y.at("context_never_compute_bound_tokens");
  EXPECT_DOUBLE_EQ(never.result, static_cast<double>(S));
  EXPECT_GT(S, 128);
  EXPECT_LT(S, 1024);
  EXPECT_GE(explained_input(never, "T_kv"), explained_input(never, "T_compute"));
  EXPECT_NE(never.substituted.find("at S - 1 = " + std::to_string(S - 1) + ": "), std::string::npos) << never.substituted;
}

}  // namespace
}  // namespace chalk
