// Default chips and layout: the smallest replica that holds the model, the best layout on it.
#include "chalk/engine/default_layout.h"

#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/io/io.h"

namespace chalk {
namespace {

DeploymentOptions engine() {
  DeploymentOptions o;
  o.mechanisms.enabled = true;
  return o;
}

// Usable HBM = chips x capacity x (1 - 0.10 reserve); one sequence of 4096 tokens must fit too.
TEST(DefaultLayout, SmallestReplicaHoldsTheWeightsAndOneSequence) {
  // Llama 3.1 8B bf16: 16.1 GB of weights in 72 GB of one H100.
  EXPECT_EQ(smallest_replica_chips(load_model("llama-3.1-8b"), load_system("h100-sxm"), engine(), 4096), 1);
  // Llama 3.1 70B bf16: 141.1 GB of weights; 1 H100 holds 72 GB, 2 hold 144 GB, room for one
  // sequence's 4096 x 327,680 B = 1.34 GB of KV (80 layers x 8 KV heads x 128 x 2 x 2 B).
  EXPECT_EQ(smallest_replica_chips(load_model("llama-3.1-70b"), load_system("h100-sxm"), engine(), 4096), 2);
  // DeepSeek-V3 (673 GB): 8 H200 (5 x 126.9 GB would do, but replicas divide the 8-GPU node);
  // GB200 NVL72 at 167.4 GB usable each: 4 chips hold 669.6 GB, too few; 6 is the next divisor
  // of 72 and would hold it, but no engine runs 6: TP6 splits neither the 128 heads nor the
  // shared expert, and 256 experts do not spread evenly over 6 chips (replica_size_problem);
  // so 8;
  // H100 (72 GB usable): one 8-GPU node holds 576 GB, so two nodes.
  const ModelSpec ds = load_model("deepseek-v3");
  EXPECT_EQ(smallest_replica_chips(ds, load_system("h200"), engine(), 4096), 8);
  EXPECT_EQ(smallest_replica_chips(ds, load_system("gb200-nvl72"), engine(), 4096), 8);
  EXPECT_NE(replica_size_problem(ds, 6), "");
  EXPECT_EQ(smallest_replica_chips(ds, load_system("h100-sxm"), engine(), 4096), 16);
}

TEST(DefaultLayout, OneReplicaLayoutIsNeverAPipeline) {
  // Llama 3.1 405B bf16 (811.8 GB) on H100 SXM: 16 chips (two nodes) are the smallest
  // replica. The search ranks PP2 x (TP8) first there, but the default deployment runs one
  // step of a layout on all 16 chips: before, it took the pipeline's TP8 and priced 16
  // chips as if each held 1/8 of the model ("weights do not fit"). Now the best layout
  // without a pipeline, and the pipeline beside it for the hint (--pp 2).
  const ModelSpec m = load_model("llama-3.1-405b");
  const SystemSpec s = load_system("h100-sxm");
  EXPECT_EQ(smallest_replica_chips(m, s, engine(), 4096), 16);
  const ReplicaLayouts r = replica_layouts(m, s, engine(), 16, 4096);
  ASSERT_TRUE(r.single.has_value());
  EXPECT_EQ(r.single->pp, 1);
  EXPECT_EQ(r.single->layout.tp_attention * (16 / r.single->layout.tp_attention), 16);
  ASSERT_TRUE(r.pipeline.has_value());
  EXPECT_EQ(r.pipeline->pp, 2);
  EXPECT_GT(r.pipeline->tokens_per_s_per_chip, r.single->tokens_per_s_per_chip);
  DeploymentOptions o = engine();
  o.n_chips = 16;
  o.mechanisms.layout = r.single->layout;
  EXPECT_TRUE(memory_plan(make_deployment(m, s, o), 1, 4096).weights_fit);
}

TEST(DefaultLayout, SaysWhenTheSplitNotHbmRulesASizeOut) {
  // phi-4 on TPU v5e (16 GB a chip): 4 chips hold its 29 GB, but TP4 splits neither its 10 KV
  // heads nor is a multiple of them, so no engine runs one replica of 4; the error said the
  // model "does not fit in HBM" on up to 64 pods.
  try {
    smallest_replica_chips(load_model("phi-4"), load_system("tpu-v5e"), engine(), 4096);
    ADD_FAILURE() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "chips");
    EXPECT_NE(std::string(e.what()).find("4 chips would hold it"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("10 KV heads"), std::string::npos) << e.what();
  }
}

TEST(DefaultLayout, StatedLayoutOnlyOnSizesItsDegreesDivide) {
  DeploymentOptions o = engine();
  o.mechanisms.layout.tp_attention = 8;
  // TP8 needs a multiple of 8 chips: 8 H100 hold Llama 3.1 70B though 2 would.
  EXPECT_EQ(smallest_replica_chips(load_model("llama-3.1-70b"), load_system("h100-sxm"), o, 4096), 8);
  // TP7 splits neither 64 heads nor any replica of whole domains: an error naming the chips.
  o.mechanisms.layout.tp_attention = 7;
  EXPECT_THROW(smallest_replica_chips(load_model("llama-3.1-70b"), load_system("h100-sxm"), o, 4096), InputError);
}

TEST(DefaultLayout, BestSingleReplicaLayoutSpansAllChips) {
  const auto best = best_single_replica_layout(load_model("llama-3.1-70b"), load_system("h100-sxm"), engine(), 8, 4096);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->replica_chips, 8);
  EXPECT_EQ(best->replicas, 1);
  EXPECT_TRUE(best->fits);
  // One H100 cannot hold 70B: nothing fits.
  EXPECT_FALSE(best_single_replica_layout(load_model("llama-3.1-70b"), load_system("h100-sxm"), engine(), 1, 4096).has_value());
}

}  // namespace
}  // namespace chalk
