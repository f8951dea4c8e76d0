// Layout search: candidates, memory limits, ranking and errors.
#include "chalk/engine/layout_search.h"

#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/io/io.h"

namespace chalk {
namespace {

const LayoutCandidate& named(const std::vector<LayoutCandidate>& all, const std::string& name) {
  for (const auto& c : all) {
    if (c.name == name) return c;
  }
  throw std::runtime_error("no candidate " + name);
}

// Llama 2 70B with FP8 weights and KV on one DGX H100, served offline (MLPerf v4.1's
// setting, row MLPERF41-L70B-H100x8): mean context 512 + 290 / 2 = 657.
struct Llama70bOnDgx : ::testing::Test {
  ModelSpec m = load_model("llama-2-70b");
  SystemSpec s = load_system("h100-sxm");
  DeploymentOptions base;
  LayoutQuery q;
  void SetUp() override {
    m.weights.attention = m.weights.dense_ffn = DType::fp8;
    base.kv = DType::fp8;
    q.n_chips = 8;
    q.context = 657;
    q.prompt = 512;
    q.output = 290;
  }
};

TEST_F(Llama70bOnDgx, DenseCandidatesAreTensorParallelReplicas) {
  const auto all = search_layouts(m, s, base, q);
  ASSERT_EQ(all.size(), 4u);  // TP1, TP2, TP4, TP8: the divisors of 8
  for (const auto& c : all) {
    EXPECT_TRUE(c.fits) << c.name;
    EXPECT_EQ(c.replica_chips * c.replicas, 8);
    EXPECT_EQ(c.layout.tp_attention, c.replica_chips);
    EXPECT_EQ(c.layout.tp_ffn, c.replica_chips);
  }
}

TEST_F(Llama70bOnDgx, OneChipHoldsWhatItsHbmLeaves) {
  const auto all = search_layouts(m, s, base, q);
  // TP1: 0.9 x 80 GB usable - 69.50 GB of weights (FP8 body, bf16 embeddings and head)
  // = 2.498 GB; a sequence at 657 tokens holds 80 layers x 2 x 8 KV heads x 128 x 1 B
  // x 657 = 107.6 MB of KV: 23 sequences.
  EXPECT_EQ(named(all, "TP1 x 8 replicas").batch, 23);
  // TP8: the weights once over 8 chips leave (576 - 69.5) GB: 4705 sequences.
  EXPECT_EQ(named(all, "TP8").batch, 4705);
}

TEST_F(Llama70bOnDgx, ThroughputRanksSmallTensorParallelGroupsFirst) {
  // At the batch memory allows, TP8's per-layer all-reduces of every token's activations
  // cost more than two-chip replicas lose in KV room; one chip holds only 23 sequences.
  const auto all = search_layouts(m, s, base, q);
  EXPECT_EQ(all.front().name, "TP2 x 4 replicas");
  EXPECT_EQ(all.back().name, "TP1 x 8 replicas");
  for (std::size_t i = 1; i < all.size(); ++i) EXPECT_GE(all[i - 1].tokens_per_s_per_chip, all[i].tokens_per_s_per_chip);
  const auto& tp8 = named(all, "TP8");
  EXPECT_GT(tp8.step.t_comm, named(all, "TP2 x 4 replicas").step.t_comm);
}

TEST_F(Llama70bOnDgx, LatencySplitsAFixedBatchOverReplicas) {
  q.objective = LayoutObjective::latency;
  q.batch = 256;
  q.prompt = q.output = 0;
  const auto all = search_layouts(m, s, base, q);
  EXPECT_EQ(named(all, "TP2 x 4 replicas").batch, 64);  // 256 / 4
  EXPECT_EQ(named(all, "TP8").batch, 256);
  EXPECT_FALSE(named(all, "TP1 x 8 replicas").fits);  // 32 each; one chip holds 23 at 657
  EXPECT_TRUE(all.front().fits);
  for (std::size_t i = 1; i < all.size() && all[i].fits; ++i) EXPECT_LE(all[i - 1].step.t_step, all[i].step.t_step);
}

TEST(LayoutSearch, MlaThroughputPrefersDataParallelAttention) {
  // DeepSeek-V3 on GB200 NVL72 at 4k: attention TP8 keeps the MLA latent on all 8 ranks
  // of each group and holds 288 sequences per 8-chip replica; data-parallel attention
  // stores each sequence once. TP72 is refused: engines split whole heads, and 72 does
  // not divide 128.
  const ModelSpec m = load_model("deepseek-v3");
  const SystemSpec s = load_system("gb200-nvl72");
  LayoutQuery q;
  q.n_chips = 72;
  q.context = 4096;
  const auto all = search_layouts(m, s, DeploymentOptions{}, q);
  EXPECT_FALSE(named(all, "attention TP72, EP72").fits);
  EXPECT_EQ(named(all, "attention TP72, EP72").reason, "TP72 does not divide the 128 attention heads");
  EXPECT_EQ(named(all, "attention TP8, EP8 x 9 replicas").batch, 288);
  EXPECT_EQ(all.front().layout.tp_attention, 1);
  EXPECT_GT(all.front().batch, 100 * 288);
  // 673.2 GB on one chip: FP8 weights with their 128 x 128 block scales (hf_quant.cc).
  EXPECT_FALSE(named(all, "attention TP1, EP1 x 72 replicas").fits);
  EXPECT_NE(named(all, "attention TP1, EP1 x 72 replicas").reason.find("673.2 GB"), std::string::npos);
}

TEST_F(Llama70bOnDgx, AFixedBatchCountsItsOwnSequencesOverEveryChip) {
  // One sequence on 8 chips: TP2 x 4 runs it on one replica while three idle, so its
  // tokens/s per chip is 1 / step / 8, not 1 / step / 2.
  q.objective = LayoutObjective::latency;
  q.batch = 1;
  q.prompt = q.output = 0;
  for (const auto& c : search_layouts(m, s, base, q)) {
    ASSERT_TRUE(c.fits) << c.name;
    EXPECT_EQ(c.batch, 1);
    EXPECT_NEAR(c.tokens_per_s_per_chip, c.tokens_per_s_per_user / 8, 1e-9) << c.name;
  }
}

TEST(LayoutSearch, HeadsThatDoNotSplitKeepTheFfnWide) {
  // PaLM 540B's 48 heads on 64 TPU v4: TP64 is refused; attention TP16 in 4 groups with
  // the FFN over all 64 is a layout that fits (bf16 weights 1.08 TB over 64 x 34 GB).
  LayoutQuery q;
  q.n_chips = 64;
  q.context = 2048;
  const auto all = search_layouts(load_model("palm-540b"), load_system("tpu-v4"), {}, q);
  EXPECT_FALSE(named(all, "TP64").fits);
  const auto& mixed = named(all, "attention TP16 x 4, FFN TP64");
  EXPECT_TRUE(mixed.fits);
  EXPECT_EQ(mixed.layout.tp_attention, 16);
  EXPECT_EQ(mixed.layout.tp_ffn, 64);
  EXPECT_EQ(all.front().name, mixed.name);
}

TEST(LayoutSearch, RejectsBadQueries) {
  const ModelSpec m = load_model("llama-3.1-8b");
  const SystemSpec s = load_system("h100-sxm");
  LayoutQuery q;
  q.n_chips = 0;
  EXPECT_THROW(search_layouts(m, s, {}, q), InputError);
  q.n_chips = 8;
  q.context = -1;
  EXPECT_THROW(search_layouts(m, s, {}, q), InputError);
  q.context = 10;
  q.batch = -2;
  EXPECT_THROW(search_layouts(m, s, {}, q), InputError);
  q.batch = 0.5;  // sequences are whole
  EXPECT_THROW(search_layouts(m, s, {}, q), InputError);
  q.batch = 0;
  q.objective = LayoutObjective::latency;  // needs a batch to compare at
  EXPECT_THROW(search_layouts(m, s, {}, q), InputError);
  q.objective = LayoutObjective::throughput;
  q.n_chips = (int64_t{1} << 20) + 1;
  EXPECT_THROW(search_layouts(m, s, {}, q), InputError);
  q.n_chips = 8;
  // Options wrong for every layout are errors of the query, not reasons a layout fails.
  DeploymentOptions bad;
  bad.matmul_efficiency = 1.5;
  EXPECT_THROW(search_layouts(m, s, bad, q), InputError);
  DeploymentOptions fp4;
  fp4.compute = MatmulPrecision::fp4;  // H100 has no FP4 rate
  EXPECT_THROW(search_layouts(m, s, fp4, q), InputError);
}

}  // namespace
}  // namespace chalk

namespace chalk {
namespace {

TEST(LayoutSearch, SteadyStateReadsTheMeanContext) {
  // Requests of 1,024 prompt and 1,024 output tokens: the running sequences are spread
  // evenly over their outputs, so a decode step reads 1,024 + 1,024 / 2 = 1,536 tokens of
  // KV each, not the single-request default of 4,096 (2.7x the KV read).
  EXPECT_EQ(steady_state_context(1024, 1024), 1536);
  EXPECT_EQ(steady_state_context(512, 290), 657);  // MLPerf v4.1 Llama 2 70B offline
  EXPECT_EQ(steady_state_context(0, 0), 0);
  EXPECT_THROW(steady_state_context(-1, 10), InputError);
  EXPECT_THROW(steady_state_context(10, -1), InputError);
}

}  // namespace
}  // namespace chalk
