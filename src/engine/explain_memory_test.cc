// Memory explanations: each figure is memory_plan's (what `chalk decode --json` reports),
// and the inputs reproduce it by hand.
#include <gtest/gtest.h>

#include <map>

#include "chalk/engine/explain.h"
#include "chalk/io/io.h"

namespace chalk {
namespace {

std::map<std::string, Explanation> memory_by_key(const std::vector<Explanation>& xs) {
  std::map<std::string, Explanation> m;
  for (const auto& x : xs) m[x.key] = x;
  return m;
}

TEST(ExplainMemory, Llama70bOnTwoH100sHoldsTwoSequencesOf4096Tokens) {
  DeploymentOptions o;
  o.n_chips = 2;
  o.mechanisms.enabled = false;
  const Deployment d = make_deployment(load_model("llama-3.1-70b"), load_system("h100-sxm"), o);
  const auto x = memory_by_key(explain_memory(d, 64, 4096));
  const MemoryPlan m = memory_plan(d, 64, 4096);
  // HBM: 2 x 80 GB (H100 SXM datasheet) = 160 GB; reserve 10% = 16 GB.
  EXPECT_DOUBLE_EQ(x.at("hbm_total_gb").result, 160.0);
  EXPECT_DOUBLE_EQ(x.at("reserve_gb").result, 16.0);
  // Weights: 70.55e9 parameters x 2 bytes (bf16) = 141.1 GB.
  EXPECT_NEAR(x.at("weights_gb").result, 141.1, 0.05);
  EXPECT_DOUBLE_EQ(x.at("weights_gb").result, to_gb(m.weights));
  // KV: 64 sequences x 4096 tokens x 327,680 bytes (80 layers x 2 x 8 heads x 128 x 2 B) = 85.90 GB.
  EXPECT_NEAR(x.at("kv_cache_gb").result, 64.0 * 4096 * 327680 / 1e9, 1e-9);
  EXPECT_DOUBLE_EQ(x.at("kv_cache_gb").result, to_gb(m.kv_cache));
  // Room for KV: 160 - 141.1 - 16 = 2.89 GB; one sequence 1.342 GB: 2 fit.
  EXPECT_DOUBLE_EQ(x.at("max_batch_at_context").result, 2.0);
  EXPECT_DOUBLE_EQ(x.at("max_batch_at_context").result, static_cast<double>(memory_plan(d, 1, 4096).max_batch));
  EXPECT_NE(x.at("max_batch_at_context").substituted.find("= 2"), std::string::npos);
}

TEST(ExplainMemory, ThrowsAsMemoryPlanOnANegativeBatch) {
  const Deployment d = make_deployment(load_model("llama-3.1-8b"), load_system("h100-sxm"), {});
  EXPECT_THROW(explain_memory(d, -1, 4096), InputError);
}

}  // namespace
}  // namespace chalk
