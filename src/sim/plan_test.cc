// The plan: the deployment it returns meets the SLO in its own simulation, and it is the
// cheapest of those that do.
#include "chalk/sim/plan.h"

#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "plan_internal.h"

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
  // The weights each chip of the chosen replica stores (launch files size TensorRT-LLM's KV
  // fraction with them): memory_plan's over the replica's chips, at least llama-3.1-8b's
  // 8.03e9 bf16 parameters (16.06 GB) over them.
  EXPECT_DOUBLE_EQ(b.weight_bytes_per_chip,
                   memory_plan(make_deployment(m, s, again), 0, 0).weights.value() / static_cast<double>(b.replica_chips));
  EXPECT_GE(b.weight_bytes_per_chip * static_cast<double>(b.replica_chips), 16.0e9);
  EXPECT_FALSE(r.pareto.empty());
}

TEST(Plan, ABudgetTheSmallestDecodeReplicaFillsSaysSo) {
  // Review 8 L1: a 1-chip budget for Llama 3.1 8B on H100 (its smallest replica, 1 chip)
  // leaves 1 - 1 = 0 chips for a prefill pool; the search said "no prefill pool within 0 chips".
  const ModelSpec m = load_model("llama-3.1-8b");
  const SystemSpec s = load_system("h100-sxm");
  DeploymentOptions base;
  base.mechanisms.enabled = true;
  PlanOptions o;
  o.chip_budget = 1;
  o.slo.tpot_s = 0.02;
  o.aggregated = false;
  const PlanReport r = plan_deployment(m, s, base, plan_traffic(5, 20), o);
  EXPECT_TRUE(r.evaluated.empty());
  ASSERT_EQ(r.searched.size(), 1U);
  EXPECT_EQ(r.searched[0], "disaggregated: the smallest decode replica, 1 chip, takes the whole 1-chip budget, leaving none for a "
                           "prefill pool; nothing was simulated");
}

TEST(Plan, DisaggregatedWithoutATtftTargetSizesThePrefillPoolToKeepUp) {
  // Only a TPOT target: the prefill pool is the smallest whose replicas are busy less than
  // the arrival span (utilization < 1), and the output says so. It searched nothing before.
  const ModelSpec m = load_model("llama-3.1-8b");
  const SystemSpec s = load_system("h100-sxm");
  DeploymentOptions base;
  base.mechanisms.enabled = true;
  const auto reqs = plan_traffic(20, 300);
  PlanOptions o;
  o.chip_budget = 8;
  o.slo.tpot_s = 0.02;
  o.aggregated = false;
  const PlanReport r = plan_deployment(m, s, base, reqs, o);
  ASSERT_FALSE(r.evaluated.empty());
  ASSERT_EQ(r.searched.size(), 1U);
  EXPECT_NE(r.searched[0].find("no TTFT target: the smallest that keeps up with the arrivals (prefill utilization < 1)"), std::string::npos)
      << r.searched[0];  // one spelling, as every key (review 8 L1)
  const PlanCandidate& c = r.evaluated.front();
  EXPECT_TRUE(c.disaggregated);
  // The pool's own run: busy time over replicas x arrival span below 1.
  DeploymentOptions pre = base;
  pre.n_chips = c.replica_chips;
  pre.mechanisms.layout = c.parallel;
  const ClusterRun run = simulate_aggregated(Pool{make_deployment(m, s, pre), c.replicas, SimOptions{}}, reqs, Phase::prefill);
  double busy = 0;
  for (const auto& x : run.runs) busy += x.busy_s;
  EXPECT_LT(busy / (static_cast<double>(c.replicas) * (reqs.back().arrival_s - reqs.front().arrival_s)), 1.0);
  // Both modes search both: the aggregated line and the disaggregated one.
  o.aggregated = true;
  EXPECT_EQ(plan_deployment(m, s, base, reqs, o).searched.size(), 2U);
}

TEST(Plan, APrefillPoolWithNoRoomForTheTransferGrows) {
  // Llama 3.1 8B on H100, 10 req/s of 2,048 in and 200 out, TTFT p90 <= 115 ms: one prefill
  // replica meets it alone, but end to end TTFT adds the KV transfer and the decode queue
  // and no decode pool within 8 chips meets it. Two prefill replicas do.
  // Before the plan grew the prefill pool it answered no deployment. (The SLO was 93 ms
  // before each request paid the engine's 6.9 ms of fixed work, kEngineRequestOverheadS,
  // and 100 ms before the norm, rotary and SwiGLU kernels paid their HBM traffic
  // (engine/memory_kernels.h), which adds 3.06 ms to the 2,048-token prefill: per layer, 2 norms
  // of 2048 x 8 x 4096 B at 3.35 TB/s x 0.87 = 23.0 us (16.7 over the 6.3 us floor), rotary
  // 2048 x 4 x 40 x 128 B = 14.4 us (8.1), SwiGLU 2048 x 6 x 14336 B = 60.4 us (54.1): 95.6 us x
  // 32 layers. At 10 req/s one replica's queue amplifies that: up to 110 ms two replicas are
  // the smallest pool alone, and the growth this test is about starts at 115 ms, as `chalk
  // plan` with the same traffic shows.)
  const ModelSpec m = load_model("llama-3.1-8b");
  SystemSpec s = load_system("h100-sxm");
  s.chip.sm_count = 0;  // the GEMMs' tiles apart (engine/dense_gemm.h: with them 2 prefill replicas are the smallest pool, no growth)
  DeploymentOptions base;
  base.mechanisms.enabled = true;
  TrafficSpec t;
  t.rate_per_s = 10;
  t.requests = 300;
  t.input = {LengthDist::Kind::fixed, 2048};
  t.output = {LengthDist::Kind::fixed, 200};
  PlanOptions o;
  o.chip_budget = 8;
  o.slo.ttft_s = 0.115;
  o.slo.tpot_s = 0.03;
  o.aggregated = false;
  const PlanReport r = plan_deployment(m, s, base, generate_traffic(t), o);
  ASSERT_TRUE(r.best.has_value()) << r.why_none;
  const PlanCandidate& b = r.evaluated[*r.best];
  EXPECT_TRUE(b.disaggregated);
  EXPECT_EQ(b.replicas, 2);
  EXPECT_LE(b.summary.ttft_at_slo_percentile_s, 0.115);
  ASSERT_EQ(r.searched.size(), 1U);
  EXPECT_NE(r.searched[0].find("(grown from 1 replica: with the KV transfer and the decode queue in TTFT"), std::string::npos) << r.searched[0];
}

TEST(Plan, TheCheapestAndTheParetoFrontByHand) {
  // (chips, TTFT ms, TPOT ms, met): A (8, 300, 40, no), B (16, 200, 30, yes), C (16, 200, 30,
  // yes, B's twin), D (24, 100, 30, yes), E (32, 150, 35, yes). Cheapest meeting: B (C ties
  // it, the first stays). Front: A (fewest chips), B (fastest at 16), D (fastest TTFT); C is
  // B's later twin, E is beaten by D in all three. F rejected a request: off the front.
  auto cand = [](int64_t chips, double ttft_ms, double tpot_ms, bool met, int64_t rejected = 0) {
    PlanCandidate c;
    c.chips = chips;
    c.summary.ttft_at_slo_percentile_s = ttft_ms / 1e3;
    c.summary.tpot_at_slo_percentile_s = tpot_ms / 1e3;
    c.summary.finished = 10;
    c.summary.rejected = rejected;
    c.meets_slo = met;
    return c;
  };
  const std::vector<PlanCandidate> e = {cand(8, 300, 40, false), cand(16, 200, 30, true), cand(16, 200, 30, true),
                                        cand(24, 100, 30, true), cand(32, 150, 35, true), cand(4, 50, 10, false, 1)};
  EXPECT_EQ(cheapest_meeting_slo(e), std::optional<std::size_t>(1));
  EXPECT_EQ(pareto_front(e), (std::vector<std::size_t>{0, 1, 3}));
  EXPECT_FALSE(cheapest_meeting_slo({cand(8, 300, 40, false)}).has_value());
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
  for (const auto& c : r.evaluated) {  // each row says why (review 10 L5): TPOT@p over 0.1 ms
    EXPECT_FALSE(c.meets_slo);
    EXPECT_TRUE(c.why_not.rfind("TPOT@p ", 0) == 0 && c.why_not.find(" ms > SLO 0.1 ms") != std::string::npos) << c.why_not;
  }
}

TEST(Plan, AnOverloadedDeploymentMeetsNoSloWhateverTheTargets) {
  // Llama 3.1 8B on one H100 at 60 req/s of 2,000-token prompts: prefill alone takes about
  // 2,000 x 16 GFLOP / (989 TFLOP/s x 0.8) = 40 ms a request, at most 25 req/s, so the queue
  // grows for the whole run. A TPOT target of 500 ms alone is met by every step, yet the
  // deployment serves less than half the arrivals (review 4 H3: it was chosen, "meets yes").
  const ModelSpec m = load_model("llama-3.1-8b");
  const SystemSpec s = load_system("h100-sxm");
  DeploymentOptions base;
  base.mechanisms.enabled = true;
  PlanOptions o;
  o.chip_budget = 1;
  o.slo.tpot_s = 0.5;
  const PlanReport r = plan_deployment(m, s, base, plan_traffic(60, 300), o);
  EXPECT_FALSE(r.best.has_value());
  ASSERT_FALSE(r.evaluated.empty());
  for (const auto& c : r.evaluated) {
    EXPECT_FALSE(c.meets_slo);
    EXPECT_LE(c.summary.tpot_at_slo_percentile_s, 0.5);  // the TPOT target alone was met
    EXPECT_EQ(c.why_not, "overloaded: the queue grows for the whole run");  // review 10 L5: the row says why
  }
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



/// The field and message of the InputError `f` throws ("" when it throws none).
template <class F>
std::pair<std::string, std::string> plan_refusal(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return {e.field(), e.what()};
  }
  return {"", ""};
}

TEST(Plan, NothingToPlanIsRefusedWithTheTrueReason) {
  const ModelSpec m = load_model("llama-3.1-8b");
  const SystemSpec s = load_system("h100-sxm");  // $2.35 per chip-hour
  DeploymentOptions base;
  base.mechanisms.enabled = true;
  const auto reqs = plan_traffic(5, 20);
  PlanOptions o;
  o.slo.ttft_s = 1;
  // $1 per hour < $2.35: floor(1 / 2.35) = 0 chips. Not "no replica holds the weights".
  o.usd_per_hour_budget = 1.0;
  auto [field, what] = plan_refusal([&] { plan_deployment(m, s, base, reqs, o); });
  EXPECT_EQ(field, "usd_budget");
  EXPECT_NE(what.find("$1 per hour buys no chip of h100-sxm at $2.35 per chip-hour"), std::string::npos) << what;
  // An absurd dollar budget buys the largest search, not a negative chip count: 1e300 /
  // 2.35 chips overflow int64_t, and the cast once gave "buys no chip". With a chip budget
  // of 2 beside it, the plan searches 2 chips.
  o.usd_per_hour_budget = 1e300;
  o.chip_budget = 2;
  EXPECT_EQ(plan_deployment(m, s, base, reqs, o).chip_budget, 2);
  o.chip_budget = 0;
  // 16-chip replicas in an 8-chip budget: the sizes, not the weights, are the reason.
  o.usd_per_hour_budget.reset();
  o.chip_budget = 8;
  o.replica_chips = {16};
  std::tie(field, what) = plan_refusal([&] { plan_deployment(m, s, base, reqs, o); });
  EXPECT_EQ(field, "replica_chips");
  EXPECT_NE(what.find("exceeds the budget of 8 chips"), std::string::npos) << what;
  // A budget of 0 chips (or below) is refused as such.
  o.replica_chips.clear();
  o.chip_budget = -1;
  std::tie(field, what) = plan_refusal([&] { plan_deployment(m, s, base, reqs, o); });
  EXPECT_EQ(field, "chips");
  EXPECT_NE(what.find("must be >= 1"), std::string::npos) << what;
  // DeepSeek-V3 (about 690 GB of weights) needs 16 H100s of 80 GB; a budget of 8 holds none.
  o.chip_budget = 8;
  std::tie(field, what) = plan_refusal([&] { plan_deployment(load_model("deepseek-v3"), s, base, reqs, o); });
  EXPECT_EQ(field, "chips");
  EXPECT_NE(what.find("needs 16 chips of h100-sxm; the budget allows 8"), std::string::npos) << what;
}

TEST(Plan, ReplicaSizesAreThoseAnEngineCanRun) {
  // Llama 3.1 8B: 32 heads, FFN 14336 = 2^11 x 7. TP3 splits neither (32 / 3, 14336 / 3 are
  // not whole): no engine runs a 3-chip replica, so plan refuses it rather than simulating
  // attention TP1 x 3 under FFN TP3 (which vLLM's --data-parallel-size 3 would run as three
  // independent replicas).
  const ModelSpec m = load_model("llama-3.1-8b");
  const SystemSpec s = load_system("h100-sxm");
  DeploymentOptions base;
  base.mechanisms.enabled = true;
  const auto reqs = plan_traffic(5, 20);
  PlanOptions o;
  o.slo.ttft_s = 1;
  o.chip_budget = 8;
  o.replica_chips = {3};
  auto [field, what] = plan_refusal([&] { plan_deployment(m, s, base, reqs, o); });
  EXPECT_EQ(field, "replica_chips");
  EXPECT_NE(what.find("3: TP3 does not divide the 32 attention heads"), std::string::npos) << what;
  // Among several, the runnable ones are simulated and the others dropped.
  o.replica_chips = {1, 3};
  const PlanReport r = plan_deployment(m, s, base, reqs, o);
  ASSERT_FALSE(r.evaluated.empty());
  for (const auto& c : r.evaluated) EXPECT_EQ(c.replica_chips, 1);
  EXPECT_EQ(r.warnings, std::vector<std::string>{"replica size 3 left out: TP3 does not divide the 32 attention heads (no engine runs it)"});
}

TEST(Plan, EngineLayoutProblemIsTheLaunchFilesRule) {
  // The same rules as the launch files (launch_test.cc), by the engine names of the measurement format.
  ParallelLayout tbo;
  tbo.tp_attention = 1;
  tbo.tp_ffn = 1;
  tbo.ep = 8;
  tbo.overlap_micro_batches = true;
  EXPECT_EQ(engine_layout_problem("trtllm", 8, tbo, true).rfind("TensorRT-LLM cannot run this layout: two micro-batches", 0), 0u);
  EXPECT_EQ(engine_layout_problem("sglang", 8, tbo, true), "");
  EXPECT_EQ(engine_layout_problem("vllm", 8, tbo, true), "");
  EXPECT_EQ(engine_layout_problem("other", 8, tbo, true), "");  // an engine chalk has no launch rules for
  tbo.overlap_micro_batches = false;
  EXPECT_EQ(engine_layout_problem("trtllm", 8, tbo, true), "");
  ParallelLayout ep4;
  ep4.tp_attention = 8;
  ep4.tp_ffn = 8;
  ep4.ep = 4;
  ep4.tp_expert = 2;
  EXPECT_EQ(engine_layout_problem("vllm", 8, ep4, true), "vLLM cannot run this layout: EP4 over 8 chips (--enable-expert-parallel spreads experts over all TP x DP ranks)");
}

}  // namespace
}  // namespace chalk::sim
