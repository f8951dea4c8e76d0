// Layout search with pipelines across scale-up domains (layout_search.h; lecture
// 47:12-1:18:33): a model that does not fit one domain gets a pipelined layout ranked, and
// one that fits gains capacity from a pipeline, never speed.
#include <gtest/gtest.h>

#include "chalk/engine/layout_search.h"
#include "chalk/engine/pipeline.h"
#include "chalk/io/io.h"

namespace chalk {
namespace {

const LayoutCandidate* first_pipelined(const std::vector<LayoutCandidate>& all, int64_t pp) {
  for (const auto& c : all) {
    if (c.pp == pp) return &c;
  }
  return nullptr;
}

TEST(LayoutSearchPipeline, ModelTooBigForOneDomainGetsAPipelineRanked) {
  // Llama 3.1 405B in bf16: 811 GB of weights against one 8 x 80 GB H100 domain (576 GB
  // usable at the 10% reserve), so no 8-chip replica fits; on 16 chips two stages of one
  // domain each hold 63 layers (about 406 GB) and the KV of the sequences in flight.
  const ModelSpec m = load_model("llama-3.1-405b");
  const SystemSpec s = load_system("h100-sxm");
  LayoutQuery q;
  q.n_chips = 16;
  q.context = 4096;
  const auto all = search_layouts(m, s, DeploymentOptions{}, q);
  for (const auto& c : all) {
    if (c.replica_chips <= 8) {
      EXPECT_FALSE(c.fits) << c.name;
    }
  }
  const LayoutCandidate* pp = first_pipelined(all, 2);
  ASSERT_NE(pp, nullptr);
  EXPECT_TRUE(pp->fits) << pp->reason;
  EXPECT_EQ(pp->name, "PP2 x (TP8)");
  EXPECT_EQ(pp->replica_chips, 16);
  EXPECT_EQ(pp->layout.tp_attention, 8);
  EXPECT_GE(pp->batch, 1);
  // Its figures are pipeline_decode's for the stage deployment, at 2 microbatches.
  DeploymentOptions o;
  o.n_chips = 8;
  o.mechanisms.enabled = true;
  o.mechanisms.layout = pp->layout;
  const Deployment stage = make_deployment(pipeline_stage_model(m, 2), s, o);
  PipelineShape shape;
  shape.stages = 2;
  shape.microbatches = 2;
  const PipelineDecode pd = pipeline_decode(stage, shape, static_cast<int64_t>(pp->batch), q.context);
  EXPECT_NEAR(pp->step.t_step.value(), pd.cycle.value(), 1e-12);
  EXPECT_NEAR(pp->tokens_per_s_per_chip, pd.tokens_per_s_per_chip.value(), 1e-9 * pd.tokens_per_s_per_chip.value());
}

TEST(LayoutSearchPipeline, PipeliningAddsCapacityNotSpeed) {
  // Llama 3.1 70B fits one domain: at one fixed batch over 16 chips, two pipelined domains
  // serve each user slower than two independent TP8 replicas (a token passes both stages
  // and the hop between them), however much more KV the pipeline could hold.
  const ModelSpec m = load_model("llama-3.1-70b");
  const SystemSpec s = load_system("h100-sxm");
  LayoutQuery q;
  q.n_chips = 16;
  q.context = 4096;
  q.batch = 64;
  const auto all = search_layouts(m, s, DeploymentOptions{}, q);
  const LayoutCandidate* pp = first_pipelined(all, 2);
  ASSERT_NE(pp, nullptr);
  ASSERT_TRUE(pp->fits) << pp->reason;
  const LayoutCandidate* tp8 = nullptr;
  for (const auto& c : all) {
    if (c.name == "TP8 x 2 replicas") tp8 = &c;
  }
  ASSERT_NE(tp8, nullptr);
  ASSERT_TRUE(tp8->fits);
  EXPECT_LT(pp->tokens_per_s_per_user, tp8->tokens_per_s_per_user);
  // Steady-state serving (a prompt share per step) is not priced through a pipeline.
  q.prompt = 1000;
  q.output = 200;
  EXPECT_EQ(first_pipelined(search_layouts(m, s, DeploymentOptions{}, q), 2), nullptr);
}

}  // namespace
}  // namespace chalk
