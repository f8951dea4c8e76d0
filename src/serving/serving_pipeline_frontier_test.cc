// The latency-cost frontier and the fast/slow modes of pipelined replicas
// (FrontierOptions::pipeline_stages, ModesOptions::pipeline_stages): what `serving frontier`,
// `modes` and `plot` price by default for a model no scale-up domain holds (review 5 M1).
//
// Hand numbers: Llama 3.1 405B in bf16 on H100 SXM ($2.35 per chip-hour). One 8-chip domain
// holds 8 x 80 GB x 0.9 = 576 GB against 811.7 GB of weights, so no replica within the domain
// holds it; cut into 2 stages each stage holds 63 of 126 layers (about 406 GB, plus the
// embedding and LM head each stage keeps, pipeline_stage_model), which 8 chips hold (576 GB)
// and 4 do not (288 GB). Every replica is then 2 stages x 8 chips = 16 chips, and its HBM-full
// point is the one `chalk layouts` and `prices forward` rank first (tests/cli/pipeline_default.sh):
// batch 156 at 168.4 tok/s per chip, 2.35 / 3600 / 168.4 x 1e6 = $3.877 per Mtok.
#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/serving/serving.h"

namespace chalk {
namespace {

TEST(ServingPipelineFrontier, PricesTwoStagesOfEightH100For405B) {
  const ModelSpec m = load_model("llama-3.1-405b");
  const SystemSpec s = load_system("h100-sxm");
  DeploymentOptions base;
  base.mechanisms.enabled = true;
  // Without stages no size within the domain holds it: the error the CLI used to exit 2 on.
  EXPECT_THROW((void)latency_cost_frontier(m, s, base, {}), InputError);
  FrontierOptions o;
  o.pipeline_stages = 2;
  const Frontier f = latency_cost_frontier(m, s, base, o);
  ASSERT_FALSE(f.frontier.empty());
  bool saw_full = false;
  for (const auto& p : f.points) {
    SCOPED_TRACE("batch " + std::to_string(p.batch));
    EXPECT_EQ(p.pp, 2);
    EXPECT_EQ(p.n_chips, 16);  // 2 stages x 8 chips: 4 chips hold no stage (288 < 406 GB)
    EXPECT_EQ(p.microbatches, std::min<int64_t>(2, p.batch));
    // A user waits for a token to pass both stages and the sends between them
    // (PipelineDecode::cycle): at least 2 stage steps.
    EXPECT_GE(p.t_step.value(), 2 * p.t_stage.value());
    EXPECT_NEAR(p.tokens_per_s_per_user.value() * p.t_step.value(), 1.0, 1e-9);
    EXPECT_NEAR(p.tokens_per_s_per_chip.value() * p.t_step.value() * 16, static_cast<double>(p.batch), 1e-6 * p.batch);
    // cost = 16 chips x $2.35/h x cycle / batch
    EXPECT_NEAR(to_usd_per_mtok(*p.cost_per_token), 16 * 2.35 / 3600 * p.t_step.value() / p.batch * 1e6, 1e-9);
    if (p.memory_full) {
      saw_full = true;
      EXPECT_EQ(p.batch, 156);
      EXPECT_NEAR(to_usd_per_mtok(*p.cost_per_token), 3.877, 0.005);
    }
  }
  EXPECT_TRUE(saw_full);
  EXPECT_EQ(f.frontier.front().batch, 156);  // the cost floor is the HBM-full batch
  // Levers are priced without a pipeline: refused, naming --pp.
  o.levers.draft_tokens = 1;
  o.levers.acceptance = 0.8;
  o.levers.drafter = Drafter::none;
  EXPECT_THROW((void)latency_cost_frontier(m, s, base, o), InputError);
}

TEST(ServingPipelineFrontier, ModesReadThePipelinesCostFloor) {
  const ModelSpec m = load_model("llama-3.1-405b");
  const SystemSpec s = load_system("h100-sxm");
  DeploymentOptions base;
  base.mechanisms.enabled = true;
  ModesOptions o;
  o.pipeline_stages = 2;
  const ModesReport r = fast_and_slow_modes(m, s, base, o);
  // The floor: 16 chips at the batch both stages' HBM holds, $3.877/Mtok (header).
  EXPECT_EQ(r.cheapest.pp, 2);
  EXPECT_EQ(r.cheapest.n_chips, 16);
  EXPECT_EQ(r.cheapest.batch, 156);
  EXPECT_NEAR(to_usd_per_mtok(*r.cheapest.cost_per_token), 3.877, 0.005);
  // The fastest point is batch 2: one sequence per stage rides the same pass as one alone
  // (cycle = max(pass, 2 stage steps) = the pass) at twice the tokens per chip. The frontier
  // finds the same point by enumeration.
  EXPECT_EQ(r.fastest.batch, 2);
  EXPECT_EQ(r.fastest.n_chips, 16);
  FrontierOptions fo;
  fo.pipeline_stages = 2;
  const Frontier f = latency_cost_frontier(m, s, base, fo);
  EXPECT_EQ(f.frontier.back().batch, 2);
  EXPECT_NEAR(r.fastest.tokens_per_s_per_user.value(), f.frontier.back().tokens_per_s_per_user.value(), 1e-9);
  EXPECT_NE(r.what_stops_it.find("Each of 2 pipeline stages"), std::string::npos) << r.what_stops_it;
  // The hyperbola's floor is below the HBM-full cost (floor_gap >= 1).
  EXPECT_GE(r.floor_gap, 1.0);
  EXPECT_LE(r.slow_price_multiple, 1.0 + 1e-9);
}

}  // namespace
}  // namespace chalk
