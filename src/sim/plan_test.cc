// The plan: the deployment it returns meets the SLO in its own simulation, and it is the
// cheapest of those that do.
#include "chalk/sim/plan.h"

#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/io/io.h"

namespace chalk::sim {
namespace {

std::vector<Request> plan_traffic(double rate, int64_t n) {
  TrafficSpec t;
  t.rate_per_s = rate;
  t.requests = n;
  t.input = {LengthDist::Kind::lognormal, 2000, 1, 0, 0.6};
  t.output = {LengthDist::Kind::lognormal, 200, 1, 0, 0.6};
  return generate_traffic(t);
}

TEST(Plan, TheChoiceMeetsItsSloInItsOwnSimulationAndIsTheCheapest) {
  const ModelSpec m = load_model("llama-3.1-8b");
  const SystemSpec s = load_system("h100-sxm");
  DeploymentOptions base;
  base.mechanisms.enabled = true;
  const auto reqs = plan_traffic(20, 600);
  PlanOptions o;
  o.chip_budget = 8;
  o.slo.ttft_s = 0.5;
  o.slo.tpot_s = 0.03;
  const PlanReport r = plan_deployment(m, s, base, reqs, o);
  ASSERT_TRUE(r.best.has_value()) << r.why_none;
  const PlanCandidate& b = r.evaluated[*r.best];
  EXPECT_TRUE(b.meets_slo);
  EXPECT_LE(b.summary.ttft_at_slo_percentile_s, 0.5);
  EXPECT_LE(b.summary.tpot_at_slo_percentile_s, 0.03);
  EXPECT_LE(b.chips, 8);
  for (const auto& c : r.evaluated) {
    if (c.meets_slo) {
      EXPECT_GE(c.chips, b.chips);
    }
  }
  // Simulated again from scratch, the chosen deployment still meets the SLO.
  DeploymentOptions again = base;
  again.n_chips = b.replica_chips;
  again.mechanisms.layout = b.parallel;
  SimOptions so;
  so.policy = engine_policy("vllm");
  so.policy.max_sequences = b.max_sequences;
  SimSummary s2;
  if (!b.disaggregated) {
    const ClusterRun c = simulate_aggregated(Pool{make_deployment(m, s, again), b.replicas, so}, reqs);
    s2 = summarize(c, o.slo);
  } else {
    DeploymentOptions dec = base;
    dec.n_chips = b.decode_replica_chips;
    dec.mechanisms.layout = b.decode_parallel;
    SimOptions pre = so;
    pre.policy.max_sequences = engine_policy("vllm").max_sequences;
    const ClusterRun c = simulate_disaggregated(Pool{make_deployment(m, s, again), b.replicas, pre},
                                                Pool{make_deployment(m, s, dec), b.decode_replicas, so}, reqs);
    s2 = summarize(c, o.slo);
  }
  EXPECT_TRUE(s2.meets_slo);
  EXPECT_EQ(s2.ttft_at_slo_percentile_s, b.summary.ttft_at_slo_percentile_s);
  ASSERT_TRUE(r.launch.has_value());
  EXPECT_NE(r.launch->vllm.find("--max-num-seqs " + std::to_string(b.max_sequences)), std::string::npos);
  EXPECT_NE(r.launch->sglang.find("--max-running-requests"), std::string::npos);
  EXPECT_NE(r.launch->trtllm.find("--max_batch_size"), std::string::npos);
  EXPECT_FALSE(r.pareto.empty());
}

TEST(Plan, AnImpossibleSloReturnsNoDeploymentAndSaysWhy) {
  const ModelSpec m = load_model("llama-3.1-8b");
  const SystemSpec s = load_system("h100-sxm");
  DeploymentOptions base;
  base.mechanisms.enabled = true;
  PlanOptions o;
  o.chip_budget = 2;
  o.slo.tpot_s = 0.0001;  // 0.1 ms per token: below any decode step
  const PlanReport r = plan_deployment(m, s, base, plan_traffic(5, 100), o);
  EXPECT_FALSE(r.best.has_value());
  EXPECT_NE(r.why_none.find("TPOT p90 <= 0.1 ms"), std::string::npos) << r.why_none;
  for (const auto& c : r.evaluated) EXPECT_FALSE(c.meets_slo);
}

TEST(Plan, BadInputsNameTheField) {
  const ModelSpec m = load_model("llama-3.1-8b");
  const SystemSpec s = load_system("h100-sxm");
  const auto reqs = plan_traffic(5, 10);
  PlanOptions o;
  o.chip_budget = 2;
  EXPECT_THROW(plan_deployment(m, s, {}, reqs, o), InputError);  // no SLO
  o.slo.ttft_s = 1;
  o.policy.block_size = 0;
  EXPECT_THROW(plan_deployment(m, s, {}, reqs, o), InputError);
  o.policy = engine_policy("vllm");
  o.chip_budget = 0;
  EXPECT_THROW(plan_deployment(m, s, {}, reqs, o), InputError);
}

}  // namespace
}  // namespace chalk::sim
