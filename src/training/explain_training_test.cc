// Training explanations: the step's bubble, time, throughput and MFU and the memory's
// parts are training_step's and training_memory's (what `chalk train step|memory --json`
// prints), and the inputs reproduce them by hand.
#include <gtest/gtest.h>

#include <map>

#include "chalk/io/io.h"
#include "chalk_testing/explanations.h"
#include "chalk/training/explain.h"

namespace chalk {
namespace {

using testing::explained_input;
using testing::explanations_by_key;

struct ExplainedPlan {
  TrainingCosts costs;
  TrainingSystem rates;
  TrainingPlan plan;
  Placement placement;
};

// Llama 3.1 70B on 256 H100s: DP8 TP8 PP4 (1F1B), 512 sequences of 4096 tokens, ZeRO-1.
ExplainedPlan llama70b_on_256_h100() {
  const ModelSpec m = load_model("llama-3.1-70b");
  const SystemSpec s = load_system("h100-sxm");
  ExplainedPlan e;
  e.plan.dp = 8;
  e.plan.tp = 8;
  e.plan.pp = 4;
  e.plan.sequence_parallel = true;
  e.plan.zero_stage = 1;
  e.plan.global_batch = 512;
  e.plan.seq_len = 4096;
  e.costs = make_training_costs(m, e.plan.seq_len);
  e.rates = make_training_system(s, e.plan.compute);
  e.placement = check_plan(m, s, plan_chips(e.plan), e.plan);
  return e;
}

TEST(ExplainTraining, OneFOneBBubbleIsPMinusOneOverMAndMfuIsModelFlopsOverPeak) {
  const ExplainedPlan e = llama70b_on_256_h100();
  const TrainingStep st = training_step(e.costs, e.rates, e.plan, e.placement);
  const auto x = explanations_by_key(explain_training_step(e.rates, e.plan, e.placement, st));
  // 1F1B: bubble / (m (t_f + t_b)) = (p - 1) / m = 3 / 64 (512 / (DP 8 x microbatch 1)).
  EXPECT_NEAR(x.at("bubble_fraction").result, 3.0 / 64, 1e-12);
  EXPECT_DOUBLE_EQ(x.at("bubble_fraction").result, st.bubble_fraction);
  // MFU = FLOPs/token x tokens / (T_step x 256 x 989.4e12); FLOPs/token ~ 6 x 70e9 + attention.
  const auto& mfu = x.at("mfu");
  EXPECT_DOUBLE_EQ(explained_input(mfu, "F_bf16"), 989.4);
  EXPECT_DOUBLE_EQ(explained_input(mfu, "tokens"), 512.0 * 4096);
  EXPECT_GT(explained_input(mfu, "FLOPs/token"), 6 * 70.0);  // GFLOP: 6 N_active plus attention
  EXPECT_NEAR(explained_input(mfu, "FLOPs/token") * 1e9 * 512 * 4096 / (st.t_step.value() * 256 * 989.4e12), st.mfu, 1e-9);
  EXPECT_DOUBLE_EQ(mfu.result, st.mfu);
  EXPECT_DOUBLE_EQ(x.at("t_step_s").result, st.t_step.value());
  EXPECT_NEAR(x.at("tok_per_s").result, 512.0 * 4096 / st.t_step.value(), 1e-6);
}

TEST(ExplainTraining, ActivationsArePerLayerTimesLayersTimesMicrobatchesInFlight) {
  const ExplainedPlan e = llama70b_on_256_h100();
  const TrainingMemory m = training_memory(e.costs, e.rates, e.plan, e.placement);
  const auto x = explanations_by_key(explain_training_memory(e.plan, e.placement, m));
  // 80 layers over PP4: 20 per stage; 1F1B holds min(p, m) = 4 microbatches.
  const auto& a = x.at("activations_gb");
  EXPECT_DOUBLE_EQ(explained_input(a, "L_stage"), 20.0);
  EXPECT_DOUBLE_EQ(explained_input(a, "in_flight"), 4.0);
  EXPECT_NEAR(a.result, explained_input(a, "a_layer") * 20 * 4, 1e-9);
  EXPECT_DOUBLE_EQ(a.result, to_gb(m.activations));
  // ZeRO-1 shards the optimizer states over DP 8: P_chip x 12 B / 8.
  const auto& o = x.at("optimizer_gb");
  EXPECT_NEAR(explained_input(o, "shard"), 8.0, 1e-9);
  EXPECT_NEAR(o.result, m.params_per_chip * 12 / 8 / 1e9, 1e-9);
  EXPECT_DOUBLE_EQ(x.at("total_gb").result, to_gb(m.total));
}

}  // namespace
}  // namespace chalk
