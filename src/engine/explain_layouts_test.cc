// Layout explanation: the winner's tok/s per chip is the ranking's first figure, and its
// inputs reproduce it: B / ((T_ops + T_comm + T_overhead) x n).
#include <gtest/gtest.h>

#include "chalk/engine/explain.h"
#include "chalk/io/io.h"

namespace chalk {
namespace {

double layout_input(const Explanation& x, const std::string& symbol) {
  for (const auto& i : x.inputs) {
    if (i.symbol == symbol) return i.value;
  }
  ADD_FAILURE() << x.key << " has no input " << symbol;
  return 0;
}

TEST(ExplainLayouts, TheWinnersTokPerSecPerChipFromItsStepTerms) {
  LayoutQuery q;
  q.n_chips = 8;
  q.context = 4096;
  const auto ranked = search_layouts(load_model("deepseek-v3"), load_system("gb200-nvl72"), DeploymentOptions{}, q);
  const auto xs = explain_layout_winner(ranked, q.n_chips, 0);
  ASSERT_EQ(xs.size(), 1u);
  const Explanation& x = xs[0];
  EXPECT_DOUBLE_EQ(x.result, ranked.front().tokens_per_s_per_chip);
  const double t_step_ms = layout_input(x, "T_ops") + layout_input(x, "T_comm") + layout_input(x, "T_overhead");
  EXPECT_NEAR(t_step_ms, to_ms(ranked.front().step.t_step), 1e-9);
  EXPECT_NEAR(layout_input(x, "B") / (t_step_ms / 1e3 * layout_input(x, "n")), x.result, 1e-6 * x.result);
  // The runner-up is slower per chip, and named.
  EXPECT_LT(layout_input(x, "runner-up"), x.result);
  EXPECT_NE(x.substituted.find("runner-up"), std::string::npos);
}

TEST(ExplainLayouts, NothingToExplainWhenNothingFits) {
  EXPECT_TRUE(explain_layout_winner({}, 8, 0).empty());
}

}  // namespace
}  // namespace chalk
