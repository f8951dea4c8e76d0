// A plan with speculative decoding (PlanOptions::speculation): every candidate's decodes
// verify the drafts, so the plan's latencies carry the drafter's speed-up.
#include "chalk/sim/plan.h"

#include <gtest/gtest.h>

#include "chalk/io/io.h"

namespace chalk::sim {
namespace {

/// One H100 replica of Llama 3.1 8B, aggregated, at most 64 running: one candidate a plan.
PlanReport spec_plan(const ServingLevers& speculation) {
  const ModelSpec m = load_model("llama-3.1-8b");
  const SystemSpec s = load_system("h100-sxm");
  DeploymentOptions base;
  base.mechanisms.enabled = true;
  TrafficSpec ts;
  ts.rate_per_s = 0.05;  // one request every 20 s: each runs alone, batch 1
  ts.requests = 12;
  ts.input = {LengthDist::Kind::fixed, 1000, 1, 0, 0};
  ts.output = {LengthDist::Kind::fixed, 200, 1, 0, 0};
  PlanOptions o;
  o.chip_budget = 1;
  o.replica_chips = {1};
  o.max_sequences = {64};
  o.disaggregated = false;
  o.slo.tpot_s = 1.0;
  o.speculation = speculation;
  return plan_deployment(m, s, base, generate_traffic(ts), o);
}

TEST(PlanSpeculation, TheChosenDeploymentDecodesWithTheDrafts) {
  // K = 3 drafts by a one-layer head with the LM head (Drafter::mtp on a model without an MTP
  // module: an EAGLE-style head), each kept with a = 0.8: E[kept] = (1 - 0.8^4) / 0.2 = 2.952
  // tokens a verify step. At batch 1 a verify step of 4 tokens plus 3 head passes costs about
  // 2.952 / 2.37 = 1.25 plain steps (decode's batch-1 gain for this setup is 2.37,
  // docs/simulator.md 1.7; simulate's at 0.05 requests/s 2.34), so the plan's TPOT falls by
  // about 2.3x. Without the plumbing the two plans would be the same run (gain 1).
  ServingLevers drafts;
  drafts.draft_tokens = 3;
  drafts.acceptance = 0.8;
  drafts.drafter = Drafter::mtp;
  const PlanReport with = spec_plan(drafts), without = spec_plan({});
  ASSERT_TRUE(with.best.has_value()) << with.why_none;
  ASSERT_TRUE(without.best.has_value()) << without.why_none;
  const SimSummary& w = with.evaluated[*with.best].summary;
  const SimSummary& wo = without.evaluated[*without.best].summary;
  EXPECT_NEAR(w.accepted_tokens_per_step, 2.952, 0.15);  // 12 x 200 tokens: ~800 verify steps
  const double gain = wo.tpot.p50 / w.tpot.p50;
  EXPECT_GT(gain, 2.15) << wo.tpot.p50 << " / " << w.tpot.p50;
  EXPECT_LT(gain, 2.55) << wo.tpot.p50 << " / " << w.tpot.p50;
}

}  // namespace
}  // namespace chalk::sim
