// The plan's steady-state bound (plan_steady.cc, review 9 H1): a deployment whose run ends
// before its queue forms still cannot keep up when rate x service time exceeds its slots.
#include "chalk/sim/plan.h"

#include <gtest/gtest.h>

#include <string>

#include "chalk/io/io.h"
#include "plan_internal.h"

namespace chalk::sim {
namespace {

TEST(Plan, ARunTooShortForItsQueueStillCannotKeepUp) {
  // Review 9 H1, shrunk: Llama 3.1 8B on one H100, 200 requests at 100 req/s (2 s of
  // arrivals) of 200-token prompts and 1,000-token outputs, batch cap 256. Every request is
  // admitted at once (200 <= 256), so no queue forms in the run and TPOT meets 50 ms: a step
  // at batch 200 reads 16.1 GB of weights + 200 x 700 x 131,072 B = 18.4 GB of KV over
  // 3.35 TB/s x 0.87 = 2.9 TB/s, about 12 ms; each request lives about 1,000 steps, 12 s.
  // In a steady state 100 req/s x 12 s = 1,200 sequences would run, over the cap of 256
  // (and over the KV: 80 GB x 0.9 - 16.1 GB = 56 GB / 131,072 B = 427k tokens / 700 = 610),
  // so it serves at most 256 / 12 s = 21 req/s of the 100: it meets nothing.
  const ModelSpec m = load_model("llama-3.1-8b");
  const SystemSpec s = load_system("h100-sxm");
  DeploymentOptions base;
  base.mechanisms.enabled = true;
  TrafficSpec t;
  t.rate_per_s = 100;
  t.requests = 200;
  t.input = {LengthDist::Kind::fixed, 200};
  t.output = {LengthDist::Kind::fixed, 1000};
  const auto reqs = generate_traffic(t);
  PlanOptions o;
  o.chip_budget = 1;
  o.max_sequences = {256};
  o.slo.tpot_s = 0.05;
  o.aggregated = true;
  o.disaggregated = false;
  const PlanReport r = plan_deployment(m, s, base, reqs, o);
  ASSERT_EQ(r.evaluated.size(), 1u);
  const PlanCandidate& c = r.evaluated[0];
  EXPECT_LE(c.summary.tpot_at_slo_percentile_s, 0.05);  // the run alone met the target
  EXPECT_FALSE(c.meets_slo);
  EXPECT_FALSE(r.best.has_value());
  bool said = false;
  for (const auto& line : r.searched) said = said || line.find("Little's law") != std::string::npos;
  EXPECT_TRUE(said);
  // Review 10 L5: the row says so, the cap of 256 and the 800 to 2,000 sequences derived below.
  ASSERT_EQ(c.why_not.rfind("steady state needs ", 0), 0u) << c.why_not;
  EXPECT_NE(c.why_not.find(" running sequences (Little's law), the pool holds 256"), std::string::npos) << c.why_not;
  const int64_t needed = std::stoll(c.why_not.substr(19));  // after "steady state needs "
  EXPECT_TRUE(needed >= 800 && needed <= 2000) << needed;

  // The bound by hand on the run: its service time is 8 to 20 s (1,000 steps of 8 to 20 ms),
  // so the sequences needed are 100 x that, 800 to 2,000; the slots are the cap, 256.
  ClusterRun run = simulate_aggregated(Pool{make_deployment(m, s, base), 1, [&] {
                                              SimOptions so;
                                              so.policy = engine_policy("vllm");
                                              so.policy.max_sequences = 256;
                                              return so;
                                            }()},
                                       reqs);
  const plan_detail::SteadyState st = plan_detail::steady_state_of(run.runs, 256, 16, arrival_rate(reqs));
  EXPECT_DOUBLE_EQ(st.slots, 256.0);
  EXPECT_GT(st.service_s, 8.0);
  EXPECT_LT(st.service_s, 20.0);
  EXPECT_NEAR(st.needed_sequences, arrival_rate(reqs) * st.service_s, 1e-9);
  EXPECT_TRUE(st.overloaded());

  // A rate the cap holds: 10 req/s x at most 20 s = 200 <= 256 sequences.
  plan_detail::SteadyState slow = plan_detail::steady_state_of(run.runs, 256, 16, 10.0);
  EXPECT_FALSE(slow.overloaded());
}

}  // namespace
}  // namespace chalk::sim
